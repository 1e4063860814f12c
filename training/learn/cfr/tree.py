"""The whole game tree of a research preset, walked once with the rules engine and stored as flat arrays.

Why flat arrays: a CFR iteration then is a handful of numpy passes over every history of one depth at once (all
deals, i.e. all private hands of both players, together) instead of a Python walk; the engine is only run once,
to build the tree. The tree is exact: every deal of the preset (dealer, both hands, the vira) is a root with its
chance probability, and below it every legal action sequence the engine allows until the single hand ends.

Information sets are keyed by :func:`truco_env.encoding.information_state_string` (the project's perfect-recall
key; built incrementally here for speed, and a test checks it equals the engine's), so a solved strategy can be
looked up from any environment or from the OpenSpiel adapter. The utility is player 0's hand point difference
``hand_points[0] - hand_points[1]`` (the game is zero-sum).

Layout (``n`` nodes, sorted by depth; depth 0 holds the deal roots):

* ``parent[i]`` (-1 for roots), ``slot_in[i]``: the slot (infoset, action) of the edge into ``i`` (-1 for roots);
* ``actor[i]``: 0 or 1 at decision nodes, -1 at terminals; ``infoset[i]`` (-1 at terminals);
* ``utility[i]``: player 0's utility at terminals (0 elsewhere); ``chance[i]``: the deal's probability;
* ``level_start``: node ``i`` has depth ``d`` iff ``level_start[d] <= i < level_start[d + 1]``;
* slots: infoset ``I`` owns slots ``slot_start[I] .. slot_start[I + 1] - 1``, one per legal action, with
  ``slot_action`` (unified action id) and ``slot_infoset``; ``infoset_player[I]``; ``infoset_keys[I]``.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from truco_env import TrucoState, actions, cards
from truco_env.config import TrucoConfig


def check_solvable(config: TrucoConfig) -> None:
    """The exact solvers walk one-hand 1v1 games only; ValueError naming what is wrong otherwise."""
    problems = []
    if config.num_players != 2:
        problems.append(f"num_players={config.num_players} (needs 2)")
    if not config.single_hand:
        problems.append("single_hand=False (needs a one-hand game)")
    if config.covered_card:
        problems.append("covered_card=True (face-down cards are not supported by the exact tree)")
    if problems:
        raise ValueError("exact CFR needs a research variant (1v1, one hand, e.g. preset argentine-mini); "
                         "this config has " + ", ".join(problems))


def deal_list(config: TrucoConfig) -> list[tuple[int, tuple[str, ...], tuple[str, ...], str | None]]:
    """Every deal ``(dealer, hand0, hand1, vira)`` of the config, hands in deck order; all equally likely."""
    deck = [cards.card_text(c, config.family) for c in cards.deck(config.family, config.deck, config.deck_ranks)]
    k = config.hand_size
    paulista = config.family == cards.PAULISTA
    deals = []
    for dealer in (0, 1):
        for hand0 in itertools.combinations(deck, k):
            rest0 = [c for c in deck if c not in hand0]
            for hand1 in itertools.combinations(rest0, k):
                rest1 = [c for c in rest0 if c not in hand1]
                for vira in (rest1 if paulista else [None]):
                    deals.append((dealer, hand0, hand1, vira))
    return deals


@dataclass
class GameTree:
    config: TrucoConfig
    parent: np.ndarray
    slot_in: np.ndarray
    actor: np.ndarray
    infoset: np.ndarray
    utility: np.ndarray
    chance: np.ndarray
    level_start: np.ndarray
    slot_start: np.ndarray
    slot_action: np.ndarray
    slot_infoset: np.ndarray
    infoset_player: np.ndarray
    infoset_keys: list[str]
    infoset_rep: np.ndarray  # one node of each infoset (own reach is equal on all of them: perfect recall)

    @property
    def num_nodes(self) -> int:
        return len(self.parent)

    @property
    def num_terminals(self) -> int:
        return int((self.actor < 0).sum())

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_keys)

    @property
    def num_slots(self) -> int:
        return len(self.slot_action)

    @property
    def num_deals(self) -> int:
        return int(self.level_start[1])

    @property
    def utility_range(self) -> float:
        term = self.actor < 0
        return float(self.utility[term].max() - self.utility[term].min())

    def infosets_of(self, player: int) -> int:
        return int((self.infoset_player == player).sum())

    def fingerprint(self) -> str:
        """A hash of the rules, the infoset keys and their actions: a checkpoint of another game will not match."""
        h = hashlib.sha256()
        h.update(repr(sorted(self.config.to_dict().items())).encode())
        h.update("\n".join(self.infoset_keys).encode())
        h.update(self.slot_start.astype(np.int64).tobytes())
        h.update(self.slot_action.astype(np.int64).tobytes())
        return h.hexdigest()[:32]

    def summary(self) -> dict:
        return {"deals": self.num_deals, "histories": self.num_nodes - self.num_deals,
                "decision_nodes": self.num_nodes - self.num_terminals, "terminals": self.num_terminals,
                "infosets": [self.infosets_of(0), self.infosets_of(1)], "slots": self.num_slots,
                "depth": len(self.level_start) - 2, "utility_range": self.utility_range}


def build_tree(config: TrucoConfig) -> GameTree:
    """Walk every deal of ``config`` with the engine and return the flat tree (see the module docstring)."""
    check_solvable(config)
    deals = deal_list(config)
    walk = _Walk(config.family)
    for deal in deals:
        walk.deal(config, *deal)
    return walk.tree(config, 1.0 / len(deals))


@dataclass
class _Walk:
    """The tree as the depth-first walk creates it: per node in creation order, per information set in order of
    first visit."""

    family: str
    depth: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    slot: list[int] = field(default_factory=list)
    actor: list[int] = field(default_factory=list)
    infoset: list[int] = field(default_factory=list)
    utility: list[float] = field(default_factory=list)
    keys: dict[str, int] = field(default_factory=dict)
    key_list: list[str] = field(default_factory=list)
    slot_start: list[int] = field(default_factory=lambda: [0])
    slot_action: list[int] = field(default_factory=list)
    infoset_player: list[int] = field(default_factory=list)
    action_ids: dict[str, int] = field(default_factory=dict)

    def aid(self, name: str) -> int:
        v = self.action_ids.get(name)
        if v is None:
            v = self.action_ids[name] = actions.action_id(name, self.family)
        return v

    def deal(self, config: TrucoConfig, dealer: int, hand0: tuple, hand1: tuple, vira: str | None) -> None:
        """Every history of one deal, depth first."""
        state = TrucoState.new(config, seed=0, deal={"hands": [list(hand0), list(hand1)], "vira": vira,
                                                     "dealer": dealer})
        before = state.score
        prefixes = [f"p{viewer}|{','.join(hand)}/{vira}/{before[0]}-{before[1]}/d{(dealer - viewer) % 2}:"
                    for viewer, hand in ((0, hand0), (1, hand1))]
        # stack of (state, depth, parent index, slot in, moves so far as (seat, name))
        stack = [(state, 0, -1, -1, ())]
        while stack:
            st, depth, par, slot, moves = stack.pop()
            index = len(self.parent)
            self.depth.append(depth)
            self.parent.append(par)
            self.slot.append(slot)
            if st.is_over:
                hp = st.hand_points
                self.actor.append(-1)
                self.infoset.append(-1)
                self.utility.append(float(hp[0] - hp[1]))
                continue
            seat = st.actor
            legal = st.legal_actions()
            shown = ",".join(f"{kind}{(s - seat) % 2}={'-' if v is None else v}"
                             for kind, announced in (("e", st.envido_announcements), ("f", st.flor_announcements))
                             for s, v in announced)
            key = (prefixes[seat] + " ".join(f"{(s - seat) % 2}{name}" for s, name in moves) + "|" + shown)
            info = self.infoset_of(key, seat, legal)
            self.actor.append(seat)
            self.infoset.append(info)
            self.utility.append(0.0)
            first = self.slot_start[info]
            for j, action in enumerate(legal):
                child = st.clone()
                child.apply(action)
                stack.append((child, depth + 1, index, first + j, moves + ((seat, action),)))

    def infoset_of(self, key: str, seat: int, legal: list[str]) -> int:
        """The information set of ``key``, made on first visit; the same legal actions at every visit."""
        info = self.keys.get(key)
        if info is None:
            info = self.keys[key] = len(self.key_list)
            self.key_list.append(key)
            self.infoset_player.append(seat)
            self.slot_action.extend(self.aid(a) for a in legal)
            self.slot_start.append(len(self.slot_action))
        else:
            ids = self.slot_action[self.slot_start[info]:self.slot_start[info + 1]]
            if ids != [self.aid(a) for a in legal]:  # perfect recall and the key must fix the legal actions
                raise RuntimeError(f"infoset {key!r} has different legal actions in two histories")
        return info

    def tree(self, config: TrucoConfig, p_deal: float) -> GameTree:
        """The flat tree: nodes ordered by depth (stable), parents renumbered."""
        depth = np.asarray(self.depth, dtype=np.int32)
        order = np.argsort(depth, kind="stable")
        new_index = np.empty_like(order)
        new_index[order] = np.arange(len(order))
        parent = np.asarray(self.parent, dtype=np.int64)[order]
        parent = np.where(parent >= 0, new_index[np.maximum(parent, 0)], -1)
        max_depth = int(depth.max())
        level_start = np.searchsorted(depth[order], np.arange(max_depth + 2)).astype(np.int64)
        infoset = np.asarray(self.infoset, dtype=np.int64)[order]
        rep = np.full(len(self.key_list), -1, dtype=np.int64)
        decision = np.flatnonzero(infoset >= 0)
        rep[infoset[decision][::-1]] = decision[::-1]  # first node of each infoset
        slot_start = np.asarray(self.slot_start, dtype=np.int64)
        counts = np.diff(slot_start)
        return GameTree(
            config=config,
            parent=parent,
            slot_in=np.asarray(self.slot, dtype=np.int64)[order],
            actor=np.asarray(self.actor, dtype=np.int8)[order],
            infoset=infoset,
            utility=np.asarray(self.utility, dtype=np.float64)[order],
            chance=np.full(len(order), p_deal),
            level_start=level_start,
            slot_start=slot_start,
            slot_action=np.asarray(self.slot_action, dtype=np.int16),
            slot_infoset=np.repeat(np.arange(len(self.key_list), dtype=np.int64), counts),
            infoset_player=np.asarray(self.infoset_player, dtype=np.int8),
            infoset_keys=self.key_list,
            infoset_rep=rep,
        )


def representative_histories(tree: GameTree) -> list[tuple[dict, list[int]]]:
    """Per infoset, its representative history: the deal (as ``TrucoState.new`` takes it) and the action ids
    from the deal to the decision, in order."""
    deals = deal_list(tree.config)
    out = []
    for node in tree.infoset_rep:
        node, path = int(node), []
        while tree.parent[node] >= 0:
            path.append(int(tree.slot_action[tree.slot_in[node]]))
            node = int(tree.parent[node])
        dealer, hand0, hand1, vira = deals[node]  # roots are the deals, in deal_list order
        out.append(({"hands": [list(hand0), list(hand1)], "vira": vira, "dealer": dealer}, path[::-1]))
    return out


def infoset_states(tree: GameTree) -> list[TrucoState]:
    """One engine state per infoset (its representative history, replayed from the deal), for a policy that
    reads observations rather than keys: what it plays there is what it plays in the whole infoset."""
    family = tree.config.family
    states = []
    for deal, path in representative_histories(tree):
        state = TrucoState.new(tree.config, seed=0, deal=deal)
        for action in path:
            state.apply(actions.action_name(action, family))
        states.append(state)
    return states


_CACHE: dict[str, GameTree] = {}


def tree_for(config: TrucoConfig) -> GameTree:
    """``build_tree`` memoised per config (the tree is read-only once built)."""
    key = repr(sorted(config.to_dict().items()))
    if key not in _CACHE:
        _CACHE[key] = build_tree(config)
    return _CACHE[key]


def num_deals(config: TrucoConfig) -> int:
    n = len(cards.deck(config.family, config.deck, config.deck_ranks))
    k = config.hand_size
    deals = 2 * math.comb(n, k) * math.comb(n - k, k)
    return deals * (n - 2 * k) if config.family == cards.PAULISTA else deals
