"""Play-time search (:mod:`agents.cfr.search`) checked against the exact game of a research preset: the policy the
search plays at every decision of one seat, assembled onto the exact tree, and its exact NashConv beside the
blueprint's.

Why: the search promises to be safe (a re-solved strategy is never more exploitable than the one it replaces),
which only the exact best response of :mod:`training.learn.cfr.solver` can show. The assembly runs the agent's own
search, unchanged: at each public state where the seat acts (with more than one legal action) one search, whose
chain is the searches at that seat's earlier decisions on the path to it (a depth-first walk over the public
states, forgetting a search's rows when the walk leaves its subtree); each information set of the seat there is
given the strategy the search plays for those cards. On these games every deal is enumerated, so one search at a
public state serves every hand the seat may hold there, exactly as it would at play time.

``python -m benchmarks.search_exact --preset argentine-mini`` prints the numbers of docs/cfr.md.
"""

from __future__ import annotations

import time

import numpy as np

from agents.cfr.search import PUBLIC, Blueprint, HandRoot, HandSearch, _key
from agents.cfr.table import Checkpoint
from training.learn.cfr.solver import best_response_value, expected_value, nash_conv, uniform_policy
from training.learn.cfr.tree import GameTree, representative_histories
from truco_env import cards
from truco_env.config import TrucoConfig
from truco_env.fast import FastState


def infoset_roots(tree: GameTree) -> list[HandRoot]:
    """Each information set's decision as its actor sees it (a :class:`HandRoot`, from its representative history
    replayed on the fast engine)."""
    family = tree.config.family
    out = []
    for deal, path in representative_histories(tree):
        st = FastState.new(tree.config, seed=0, deal=deal)
        history = []
        for action in path:
            history.append((st.actor, action))
            st.apply_id(action)
        seat = st.actor
        vira = deal["vira"]
        out.append(HandRoot(seat=seat, dealer=deal["dealer"], score=(0, 0),
                            dealt=tuple(cards.parse_card(c, family) for c in deal["hands"][seat]),
                            vira=-1 if vira is None else cards.parse_card(vira, family), history=tuple(history),
                            obs=st.encode_observation(seat, st.observation_buffer()), mask=st.legal_mask().copy()))
    return out


def _put(tree: GameTree, policy: np.ndarray, info: int, ids: np.ndarray, probs: np.ndarray) -> None:
    by_id = dict(zip(ids.tolist(), probs.tolist()))
    s0, s1 = tree.slot_start[info], tree.slot_start[info + 1]
    policy[s0:s1] = [by_id[int(a)] for a in tree.slot_action[s0:s1]]


def blueprint_policy(tree: GameTree, ckpt: Checkpoint, roots: list[HandRoot]) -> np.ndarray:
    """The average strategy of a ``lossless`` checkpoint on the tree (uniform where it has no row): what
    :func:`training.learn.cfr.mccfr_kernel.tree_policy` gives, from the roots' keys."""
    from agents.cfr.abstraction import codes_and_ids
    from truco_env.fast import config_array

    index = {key: i for i, key in enumerate(ckpt.keys)}
    probs = ckpt.average_policy()
    cfg = config_array(tree.config)
    policy = uniform_policy(tree)
    for info, root in enumerate(roots):
        row = index.get(str(_key(root.obs, root.mask, root.history, root.seat)))
        if row is None:
            continue
        codes, ids = codes_and_ids(root.obs, root.mask, cfg)
        lo, hi = ckpt.slot_start[row], ckpt.slot_start[row + 1]
        by_code = dict(zip(ckpt.slot_action[lo:hi].tolist(), probs[lo:hi].tolist()))
        _put(tree, policy, info, ids, np.array([by_code.get(int(c), 0.0) for c in codes.tolist()]))
    return policy


def searched_policy(tree: GameTree, ckpt: Checkpoint, seat: int, nodes: int, roots: list[HandRoot],
                    blueprint: np.ndarray, seed: int = 0, continual: bool = True) -> tuple[np.ndarray, dict]:
    """``blueprint`` with ``seat``'s information sets replaced by what the search plays there (``nodes`` walked
    nodes per search); also returns counts (searches, iterations, nodes, seconds). ``continual=False``: every
    search starts from the blueprint (its beliefs and gadget values), not from the searches before it (the
    variant the agent does not play, for comparison)."""
    if ckpt.meta.get("abstraction") != "lossless":
        raise ValueError(f"the exact check needs a lossless checkpoint, got {ckpt.meta.get('abstraction')!r}")
    solver = ckpt.meta.get("solver") or {}
    search = HandSearch(Blueprint(ckpt.keys, ckpt.slot_start, ckpt.slot_action, ckpt.average_policy(), "lossless"),
                        tree.config, utility=solver.get("utility", "points"))
    mine = [i for i in range(tree.num_infosets) if tree.infoset_player[i] == seat]
    # public states: the same history, hand start and public observation
    group_of: dict[tuple, int] = {}
    members: list[list[int]] = []
    for info in mine:
        r = roots[info]
        key = (r.dealer, r.vira, r.score, r.history, r.obs[PUBLIC].tobytes())
        g = group_of.setdefault(key, len(members))
        if g == len(members):
            members.append([])
        members[g].append(info)
    group_info = {info: g for g, infos in enumerate(members) for info in infos}
    parent = np.full(len(members), -1)
    for g, infos in enumerate(members):  # the nearest earlier decision of the seat on the path
        node = int(tree.infoset_rep[infos[0]])
        while tree.parent[node] >= 0:
            node = int(tree.parent[node])
            if tree.actor[node] == seat:
                parent[g] = group_info[int(tree.infoset[node])]
                break
    children: list[list[int]] = [[] for _ in members]
    for g, p in enumerate(parent):
        if p >= 0:
            children[p].append(g)
    policy = blueprint.copy()
    stats = {"searches": 0, "played": 0, "iterations": 0, "nodes": 0, "check_nodes": 0, "public_states": len(members)}
    start = time.perf_counter()
    stack = [(g, False) for g in reversed(range(len(members))) if parent[g] < 0]
    marks: dict[int, tuple] = {}
    while stack:
        g, leaving = stack.pop()
        if leaving:
            search.restore(marks.pop(g))
            continue
        first = roots[members[g][0]]
        if int(first.mask.sum()) > 1:
            marks[g] = search.mark()
            result = search.search(first, nodes, seed * 1_000_003 + g, follow=False)
            if result is not None:
                stats["searches"] += 1
                stats["played"] += int(result.safe)
                stats["iterations"] += result.iterations
                stats["nodes"] += result.nodes
                stats["check_nodes"] += result.check_nodes
            stack.append((g, True))
        for info in members[g]:
            r = roots[info]
            _, ids, probs = search.policy(r.obs, r.mask, r.history, seat)
            _put(tree, policy, info, ids, probs)
        if not continual and g in marks:
            search.restore(marks.pop(g))
            stack.pop()
        stack.extend((c, False) for c in reversed(children[g]))
    stats["seconds"] = time.perf_counter() - start
    return policy, stats


def compare(config: TrucoConfig, ckpt: Checkpoint, nodes: int, seed: int = 0, tree: GameTree | None = None,
            continual: bool = True) -> dict:
    """Exact numbers of the blueprint and of the searched policy (each seat searching, then both): NashConv and
    each seat's exploitability (the other seat's best-response value against it)."""
    from training.learn.cfr.tree import build_tree

    tree = tree if tree is not None else build_tree(config)
    roots = infoset_roots(tree)
    blue = blueprint_policy(tree, ckpt, roots)
    out = {"uniform": nash_conv(tree, uniform_policy(tree)), "range": tree.utility_range,
           "blueprint": {"nash_conv": nash_conv(tree, blue), "value": expected_value(tree, blue),
                         "exploitability": [best_response_value(tree, blue, 1), best_response_value(tree, blue, 0)]}}
    both = blue.copy()
    for seat in (0, 1):
        searched, stats = searched_policy(tree, ckpt, seat, nodes, roots, blue, seed, continual)
        mine = tree.infoset_player[tree.slot_infoset] == seat
        both[mine] = searched[mine]
        out[f"seat{seat}"] = {"exploitability": best_response_value(tree, searched, 1 - seat),
                              "nash_conv": nash_conv(tree, searched), **stats}
    out["searched"] = {"nash_conv": nash_conv(tree, both), "value": expected_value(tree, both)}
    return out

