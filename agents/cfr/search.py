"""Play-time search for the ``cfr`` agent (``cfr:PATH,search=MS``): at each decision of a hand, re-solve the rest of
the hand from the current public state with a safe-subgame-solving gadget, then act from the re-solved strategy
for the seat's actual cards (Burch, Johanson and Bowling 2014; Moravčík et al. 2017; Brown and Sandholm 2017).

The game re-solved: the rest of the hand from the decision now (a hand is short: to the end, no depth limit), with
the hand's public history fixed (calls, answers, cards played face up, points shown). Its root is a chance node
over the deals the public history allows, a pair (searcher's unseen cards, opponent's unseen cards):

* Beliefs. Each deal is weighted by the probability that the searcher, holding those cards, would have taken its
  public actions of this hand with the strategy it actually played: the blueprint's average strategy, replaced
  from its first search on by that search's strategy, and so on (the *chain*; played as the agent plays, see
  :func:`agents.cfr.walk.purify`). Deals come from replaying the hand on a kernel state with the candidate cards
  substituted: a deal whose replay makes an action illegal, or shows other points or another public state than
  the real one, is impossible. Every deal is enumerated; a public state with more than :data:`ENUMERATE` deals
  (the first tricks of a full preset) is not searched, because its check (below) would not fit a decision.
  The opponent's hands are not weighted by chance alone in the solved game: the resolve gadget (below) lets
  each of them decide whether to play on, which is what makes the result safe against an opponent that does not
  play the blueprint; weighting them by the opponent's blueprint reach in the chance node would drop the
  guarantee for the hands the blueprint would not have reached this state with (Brown and Sandholm's "unsafe"
  subgame solving). The opponent's beliefs enter where they cost no safety: the gadget's starting strategy.
* Gadget (resolve, Burch et al.). Before the subgame, the opponent, knowing its cards, chooses to *enter* (the
  subgame is played) or to *take* its best-response value against what the searcher played without this
  search. That value is computed in the same solve: *take* leads into a copy of the subgame in which the
  searcher plays the chain's strategy (fixed) and the opponent learns a best response. At a solution no
  opponent hand does better than it did against the chain (its counterfactual best-response value), so the
  new strategy is no more exploitable than the one it replaces. Until its regrets say otherwise (while no
  regret is positive regret matching may play anything) an opponent hand enters with probability its
  blueprint reach this hand over the likeliest hand's: a short search starts from the blueprint's beliefs about
  both hands, as an unsafe search would, and the gadget's safety takes over as its regrets grow.
* Check. A search cut short is not a solved gadget: its strategy can leave an opponent hand more than the chain
  did (measured on argentine-mini: the noise floor of a 10,000-node search is above a good blueprint). So before
  it is played, each search is checked exactly: over every deal of the public state, full width, each opponent
  hand's counterfactual best-response value against the new strategy (this search, the chain below it) and
  against the chain alone. If any hand gains (beyond :data:`CHECK_TOLERANCE`), or the check would walk more nodes
  than the search's budget, the search is forgotten and the chain plays on. A played search therefore never
  raises any opponent hand's value, which is the condition of the safety theorem, met exactly rather than in
  the limit.
* Continual re-solving. The next search of the hand starts from the strategy the last played search played (its
  beliefs and its gadget values come from the chain, which now ends with that search), as in DeepStack: each
  played search lowers no opponent hand's best-response value below the previous strategy's, so by induction the
  searched policy is no more exploitable than the blueprint (the exact check of :mod:`training.learn.cfr.resolve`).
  Re-solving every decision from the blueprint's beliefs alone would not carry this guarantee (the beliefs would
  no longer be those of the strategy played). A decision with one legal action is not searched; the chain plays
  on.
* Solver. The trainer's external-sampling MCCFR walk (:func:`agents.cfr.walk.walk`, search mode), keyed by the
  ``lossless`` key (perfect recall inside the hand: the observation, the mask and the public history) salted per
  search and per branch, in one table per hand; where a row has no positive regret the searcher plays the
  chain and the opponent the blueprint, so a short search starts from the blueprint. The utility is the
  checkpoint's (``points`` or ``match_equity``, from ``meta["solver"]["utility"]``).
* Budget. ``search=MS`` buys ``MS * NODES_PER_MS`` walked nodes for the solve (deal replays included) and as
  many again at most for its check: a seeded agent plays the same on any machine, and on one core of the
  project's machine that is at most about 2 MS milliseconds (the last trick's short subgames walk faster: 76-90
  ms at ``search=200``, docs/cfr.md). The search's draws come from the agent's seeded generator.

On the research presets the very same search, with its deals enumerated, is checked against the exact game:
:mod:`training.learn.cfr.resolve` assembles the searched policy on the exact tree and compares exact NashConv.
Not searched (played from the chain, i.e. the blueprint or the last search): a blind mão de ferro (no one sees
their own cards), a decision after a card played face down (a rule no preset uses), and a decision where no
deal is consistent with the history (cannot happen with the engine's own histories).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from truco_env import _kernel, actions
from truco_env.cards import deck, parse_card
from truco_env.config import TrucoConfig
from truco_env.fast import config_array

from .abstraction import KINDS, LOSSLESS, MAX_LEGAL, codes_and_ids, key_lossless
from .walk import (
    I_BP_KIND,
    I_FIXED,
    I_MODE,
    I_SALT,
    I_SEARCHER,
    I_TOP,
    MAX_DEPTH,
    N_INF,
    N_SLOTS,
    NODES,
    WalkTables,
    blueprint_probs,
    chain_policy,
    copy_into,
    hand_utility,
    node_key,
    probs_of,
    rebuild,
    row,
    salted,
    search_context,
    view_key,
    walk,
    walk_buffers,
)

#: Walked nodes per millisecond of ``search=MS`` (one core of the project's machine; docs/cfr.md).
NODES_PER_MS = 400
#: A public state with more deals than this is not searched (its check would not fit a decision's budget).
ENUMERATE = 2048
#: A search is played when no opponent hand gains more than this (relative to the largest value) against it.
CHECK_TOLERANCE = 1e-9
#: Room kept for one search iteration's new rows (two walks: the subgame and its copy).
SEARCH_MARGIN = 1 << 14


class SearchError(ValueError):
    """A checkpoint or rules the search cannot work with."""


def _public_positions() -> np.ndarray:
    """The positions of the observation's hand part that everyone sees alike (own cards and points left out)."""
    private = set(range(_kernel.O_HAND, _kernel.O_HAND + 40)) | set(range(_kernel.O_SLOTS, _kernel.O_SLOTS + 3))
    private |= set(range(_kernel.O_PARTNER, _kernel.O_PARTNER + 40)) | set(range(_kernel.O_OWN_POINTS, _kernel.O_OWN_POINTS + 2))
    private.add(_kernel.O_FHOLDERS)  # own flor: known to oneself before anyone declares
    return np.array([i for i in range(_kernel.O_FAMILY) if i not in private], dtype=np.int64)


PUBLIC = _public_positions()


@dataclass
class HandRoot:
    """What the searching seat knows at its decision: the hand's start (dealer, score before it, its own dealt
    cards in dealt order, the vira or -1), the hand's actions so far (seat, engine action id), and its
    observation and legal mask now."""

    seat: int
    dealer: int
    score: tuple[int, int]
    dealt: tuple[int, ...]
    vira: int
    history: tuple[tuple[int, int], ...]
    obs: np.ndarray
    mask: np.ndarray

    @property
    def blind(self) -> bool:
        return bool(self.obs[_kernel.O_SPECIAL + 2] > 0.5)


def root_from_info_string(info: str, obs: np.ndarray, mask: np.ndarray, config: TrucoConfig) -> HandRoot:
    """The :class:`HandRoot` of a decision from the seat's information-state string
    (:func:`truco_env.encoding.information_state_string`: its last hand is the current one)."""
    head, _, rest = info.partition("|")
    seat = int(head[1:])
    hands, _, _shown = rest.rpartition("|")
    last = hands.split(";")[-1]
    start, _, moves = last.partition(":")
    own, vira, score, dealer = start.split("/")
    family = config.family
    dealt = tuple(parse_card(c, family) for c in own.split(",")) if own != "?" else ()
    history = []
    for move in moves.split():
        rel, name = int(move[0]), move[1:].split("=")[0].split("^")[0]  # "^": who caught the seat's own signal
        history.append(((seat + rel) % config.num_players, actions.action_id(name, family) if name != "cover" else -1))
    s0, s1 = (int(x) for x in score.split("-"))
    return HandRoot(seat=seat, dealer=(seat + int(dealer[1:])) % config.num_players, score=(s0, s1), dealt=dealt,
                    vira=-1 if vira == "None" else parse_card(vira, family), history=tuple(history),
                    obs=np.ascontiguousarray(obs, dtype=np.float32), mask=np.ascontiguousarray(mask, dtype=np.int8))


class Blueprint:
    """A checkpoint's average strategy as the compiled lookup the search reads (hash map and rows)."""

    def __init__(self, keys: list[str], start: np.ndarray, codes: np.ndarray, probs: np.ndarray, abstraction: str):
        try:
            inf_key = np.fromiter((int(k) for k in keys), dtype=np.int64, count=len(keys))
        except (ValueError, OverflowError):
            raise SearchError("search needs a checkpoint keyed by the compiled engine (abstraction v4, v5 or "
                              "lossless)") from None
        size = 1 << max(2 * len(keys), 2).bit_length()
        hkeys, hidx = np.zeros(size, np.int64), np.full(size, -1, np.int64)
        if rebuild(hkeys, hidx, inf_key, len(keys)) >= 0:
            raise SearchError("the checkpoint holds one key twice")
        self.abstraction = abstraction
        self.arrays = (hkeys, hidx, np.asarray(start, np.int64), np.asarray(codes, np.int16),
                       np.asarray(probs, np.float64))


@njit(cache=True)
def _replay_all(cards, vira, dealer, s0, s1, searcher, n_hist, cfg, pub_pos, actual, roots, reach, oreach, gkeys,
                obs, mask, codes, ids, probs, hist_seat, hist_act, hist_rel, hist_pub, no_mask,
                hkeys, hidx, inf_start, slot_code, avg, ctx):
    """Replay the hand's history on each deal of ``cards``: ``reach[i]`` the chain's probability of the
    searcher's actions with those cards (-1: the deal cannot have this history), ``oreach[i]`` the blueprint's
    probability of the opponent's, ``roots[i]`` the state now, ``gkeys[i]`` the opponent's key there. Returns
    the actions replayed."""
    nodes = 0
    top = ctx[0][I_TOP]
    for i in range(cards.shape[0]):
        st = roots[i]
        _kernel.new_match(st, cfg, dealer, s0, s1)
        _kernel.deal(st, cfg, cards[i], vira)
        r = 1.0
        ro = 1.0
        ok = True
        for t in range(n_hist):
            nodes += 1
            a = hist_act[t]
            if st[_kernel.S_PHASE] == _kernel.OVER or st[_kernel.S_ACTOR] != hist_seat[t]:
                ok = False
                break
            key, n = node_key(st, cfg, LOSSLESS, obs, mask, codes, ids, hist_seat, hist_act, t, hist_rel, hist_pub)
            k = -1
            for m in range(n):
                if ids[m] == a:
                    k = m
            if k < 0:
                ok = False
                break
            if hist_seat[t] == searcher:
                chain_policy(key, obs, mask, cfg, codes, n, t, top, ctx, hkeys, hidx, inf_start, slot_code, avg,
                             probs)
                r *= probs[k]
            else:
                blueprint_probs(key, obs, mask, cfg, codes, n, ctx, probs)
                ro *= probs[k]
            _kernel.apply(st, cfg, a)
        if ok and (st[_kernel.S_PHASE] == _kernel.OVER or st[_kernel.S_ACTOR] != searcher):
            ok = False
        if ok:
            _kernel.encode_obs(st, cfg, searcher, obs)
            for p in pub_pos:
                if obs[p] != actual[p]:
                    ok = False
                    break
        if not ok:
            reach[i] = -1.0
            continue
        reach[i] = r
        oreach[i] = ro
        gkeys[i] = view_key(st, cfg, 1 - searcher, obs, no_mask, hist_seat, hist_act, n_hist, hist_rel, hist_pub)
    return nodes


@njit(cache=True)
def _search_loop(node_limit, first_iteration, searcher, d0, cfg, use_equity, equity, start0, start1,
                 roots, cdf, gkeys, enter0, states, obs, masks, codes, ids, sigma, values, frame, hist_seat, hist_act,
                 hist_rel, hist_pub, hkeys, hidx, inf_key, inf_start, inf_touch, slot_code, regret, avg, counters,
                 rng, ctx, margin, real_salt, copy_salt, gadget_salt):
    """Gadget iterations until ``counters[NODES]`` reaches ``node_limit``; returns how many ran (it stops early
    when the tables need room). Each draws a deal (``cdf``: cumulative pick weights, the deals' reach), then the
    opponent's enter/take choice (row ``gadget_salt``; with no positive regret it enters with probability
    ``enter0``, its hand's blueprint reach over the likeliest hand's): for the opponent as traverser both branches
    are walked (take: the copy, where the searcher plays the chain; enter: the subgame), for the searcher only the
    subgame, weighted by the probability of entering."""
    opp = 1 - searcher
    ip = ctx[0]
    gcodes = np.zeros(2, np.int32)
    gcodes[1] = 1
    total = cdf[cdf.shape[0] - 1]
    done = 0
    while counters[NODES] < node_limit:
        j = counters[N_INF]
        if (j + margin >= inf_key.shape[0] or counters[N_SLOTS] + MAX_LEGAL * margin > slot_code.shape[0]
                or 2 * (j + margin) > hkeys.shape[0]):
            return done
        iteration = first_iteration + done
        pick = float(_kernel._splitmix(rng, 0) >> np.uint64(11)) * (1.0 / 9007199254740992.0) * total
        i = min(np.searchsorted(cdf, pick, side="right"), cdf.shape[0] - 1)
        copy_into(roots[i], states[d0])
        g = row(salted(gkeys[i], gadget_salt), 2, gcodes, hkeys, hidx, inf_key, inf_start, slot_code, counters)
        lo = inf_start[g]
        rt = regret[lo]
        rf = regret[lo + 1]
        take = rt / (rt + rf) if rt + rf > 0.0 else 1.0 - enter0[i]  # no regret: the blueprint's beliefs
        enter = 1.0 - take
        counters[NODES] += 1
        if iteration % 2 == 0:
            ip[I_SALT] = copy_salt
            ip[I_FIXED] = searcher
            vt = walk(d0, 1.0, opp, iteration, cfg, LOSSLESS, use_equity, equity, start0, start1, states, obs, masks,
                      codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub, hkeys, hidx, inf_key,
                      inf_start, inf_touch, slot_code, regret, avg, counters, rng, ctx)
            ip[I_SALT] = real_salt
            ip[I_FIXED] = -1
            vf = walk(d0, 1.0, opp, iteration, cfg, LOSSLESS, use_equity, equity, start0, start1, states, obs, masks,
                      codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub, hkeys, hidx, inf_key,
                      inf_start, inf_touch, slot_code, regret, avg, counters, rng, ctx)
            v = take * vt + enter * vf
            regret[lo] = max(0.0, rt + vt - v)
            regret[lo + 1] = max(0.0, rf + vf - v)
        elif enter > 0.0:
            ip[I_SALT] = real_salt
            ip[I_FIXED] = -1
            walk(d0, enter, searcher, iteration, cfg, LOSSLESS, use_equity, equity, start0, start1, states, obs,
                 masks, codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub, hkeys, hidx,
                 inf_key, inf_start, inf_touch, slot_code, regret, avg, counters, rng, ctx)
        done += 1
    return done


@njit(cache=True, inline="always")
def _next_reached(d, k, n, rn, ro, sig_new, sig_old):
    """The first child index from ``k`` at depth ``d`` that the new or the old strategy reaches (``n``: none)."""
    while k < n and rn[d] * sig_new[d, k] == 0.0 and ro[d] * sig_old[d, k] == 0.0:
        k += 1
    return k


@njit(cache=True)
def _subgame_tree(roots, weight, searcher, d0, top, cfg, use_equity, equity, start0, start1, cap,
                  states, obs, masks, codes, ids, sig_new, sig_old, hist_seat, hist_act, hist_rel, hist_pub,
                  hkeys, hidx, inf_start, slot_code, avg, ctx,
                  parent, child, depth, kind, key, width, r_new, r_old, u_opp):
    """The subgame full width over every deal of ``roots`` (``weight``: the searcher's reach with the chain times
    the deal's representation), as flat node arrays in depth-first order for :func:`_best_response_values`:
    each node's parent, its action's index there, depth, kind (0 the searcher acts, 1 the opponent, 2 a
    terminal), the opponent's lossless key at its decisions, the legal count, the searcher's reach with the new
    strategy (the chain's first ``top + 1`` searches) and with the old one (the first ``top``), and the
    opponent's utility at terminals. A child neither strategy reaches is left out (it adds nothing to any
    value). Returns the node count, or -1 past ``cap`` nodes."""
    opp = 1 - searcher
    target = cfg[_kernel.C_TARGET]
    rn = np.zeros(MAX_DEPTH + 1)
    ro = np.zeros(MAX_DEPTH + 1)
    node_at = np.zeros(MAX_DEPTH, np.int64)
    walking = np.zeros(MAX_DEPTH, np.int64)  # the child being walked at each depth
    n_nodes = 0
    for i in range(roots.shape[0]):
        copy_into(roots[i], states[d0])
        d = d0
        rn[d] = weight[i]
        ro[d] = weight[i]
        up = -1
        k_in = -1
        while True:
            if n_nodes >= cap:
                return -1
            node = n_nodes
            n_nodes += 1
            parent[node] = up
            child[node] = k_in
            depth[node] = d
            st = states[d]
            k = 0
            if st[_kernel.S_PHASE] == _kernel.OVER:
                u = hand_utility(st, target, use_equity, equity, start0, start1)
                kind[node] = 2
                r_new[node] = rn[d]
                r_old[node] = ro[d]
                u_opp[node] = u if opp == 0 else -u
                done = True
                while d > d0:  # climb to the nearest node with a reached child left
                    d -= 1
                    k = _next_reached(d, walking[d] + 1, width[node_at[d]], rn, ro, sig_new, sig_old)
                    if k < width[node_at[d]]:
                        done = False
                        break
                if done:
                    break  # the deal's tree is walked
                up = node_at[d]
            else:
                if d + 1 >= MAX_DEPTH:
                    raise RuntimeError("search check: a hand deeper than MAX_DEPTH")
                seat = st[_kernel.S_ACTOR]
                kk, n = node_key(st, cfg, LOSSLESS, obs[d], masks[d], codes[d], ids[d], hist_seat, hist_act, d,
                                 hist_rel, hist_pub)
                hist_seat[d] = seat
                width[node] = n
                node_at[d] = node
                kind[node] = 0 if seat == searcher else 1
                key[node] = kk
                if seat == searcher:
                    chain_policy(kk, obs[d], masks[d], cfg, codes[d], n, d, top + 1, ctx, hkeys, hidx, inf_start,
                                 slot_code, avg, sig_new[d])
                    chain_policy(kk, obs[d], masks[d], cfg, codes[d], n, d, top, ctx, hkeys, hidx, inf_start,
                                 slot_code, avg, sig_old[d])
                else:
                    for j in range(n):
                        sig_new[d, j] = 1.0
                        sig_old[d, j] = 1.0
                k = _next_reached(d, 0, n, rn, ro, sig_new, sig_old)
                up = node
            walking[d] = k
            copy_into(states[d], states[d + 1])
            _kernel.apply(states[d + 1], cfg, ids[d, k])
            hist_act[d] = ids[d, k]
            rn[d + 1] = rn[d] * sig_new[d, k]
            ro[d + 1] = ro[d] * sig_old[d, k]
            k_in = k
            d += 1
    return n_nodes


def _best_response_values(n, parent, child, depth, kind, key, width, r_new, r_old, u_opp, roots_of):
    """The opponent's counterfactual best-response value against the new and the old strategy for each of its
    hands at the subgame's root: ``roots_of[i]`` the hand (0..H-1) of the i-th root node. Bottom up, one depth at
    a time: a searcher node sums its children (its reach is in them), an opponent node takes the child of the
    action that is best summed over its information set (every node with its key)."""
    parent, child, depth, kind = parent[:n], child[:n], depth[:n], kind[:n]
    out = []
    for reach in (r_new[:n], r_old[:n]):
        v = np.where(kind == 2, reach * u_opp[:n], 0.0)
        for d in range(int(depth.max()), int(depth.min()), -1):
            ch = np.flatnonzero(depth == d)
            up = parent[ch]
            mine = kind[up] == 0
            np.add.at(v, up[mine], v[ch[mine]])
            ch, up = ch[~mine], up[~mine]
            if not len(ch):
                continue
            _, info = np.unique(key[up], return_inverse=True)
            total = np.zeros((info.max() + 1, MAX_LEGAL))
            np.add.at(total, (info, child[ch]), v[ch])
            legal = np.zeros(len(total), np.int64)
            legal[info] = width[up]  # one information set, one legal count
            total[np.arange(MAX_LEGAL)[None, :] >= legal[:, None]] = -np.inf
            best = total.argmax(axis=1)
            take = child[ch] == best[info]
            v[up[take]] = v[ch[take]]
        rows = np.flatnonzero(parent == -1)
        out.append(np.bincount(roots_of, v[rows], minlength=roots_of.max() + 1))
    return out[0], out[1]


def _salts(k: int) -> tuple[int, int, int]:
    """The key salts of the hand's search number ``k``: its subgame, its copy, its gadget rows."""
    return 4 * (k + 1) + 1, 4 * (k + 1) + 2, 4 * (k + 1) + 3


@dataclass
class SearchResult:
    """A search's outcome: the strategy at the searcher's real decision (abstract codes, engine ids,
    probabilities, played as the agent plays), and what it cost."""

    codes: np.ndarray
    ids: np.ndarray
    probs: np.ndarray
    deals: int
    iterations: int
    nodes: int  # walked by the solve
    safe: bool  # the check passed: the search is played (else the chain plays on)
    check_nodes: int  # walked by the check
    reached: bool  # played, and its table has the real decision (else the strategy is the chain's)


class HandSearch:
    """The searches of one seat through a hand (the chain) over one table: :meth:`search` at each decision;
    a decision of another hand starts a new chain."""

    def __init__(self, blueprint: Blueprint, config: TrucoConfig, utility: str = "points", threshold: float = 0.0,
                 greedy: bool = False):
        if config.num_players != 2:
            raise SearchError(f"search plays 1v1 rules, not {config.num_players} players")
        if config.covered_card:
            raise SearchError("search cannot follow cards played face down (rules with covered_card)")
        if utility not in ("points", "match_equity"):
            raise SearchError(f"unknown utility {utility!r}; known: points, match_equity")
        self.config = config
        self._cfg = config_array(dataclasses.replace(config, single_hand=True))
        self._deck = deck(config.family, config.deck, config.deck_ranks)
        self._hs = config.hand_size
        self._equity = np.zeros((1, 1))
        if utility == "match_equity":
            from ..heuristic import match_equity_table

            self._equity = np.asarray(match_equity_table(config.target_score, config.family), dtype=np.float64)
        self.utility = utility
        self.tables = WalkTables(4 * SEARCH_MARGIN, SEARCH_MARGIN)
        self._work = walk_buffers()
        self._ctx = search_context(1, blueprint.arrays, threshold, greedy, chain=64)
        self._ctx[0][I_BP_KIND] = KINDS[blueprint.abstraction]
        self._scratch = (np.zeros(_kernel.OBS_SIZE_MAX, np.float32), np.zeros(_kernel.NUM_ACTIONS, np.int8),
                         np.zeros(MAX_LEGAL, np.int32), np.zeros(MAX_LEGAL, np.int32), np.zeros(MAX_LEGAL),
                         np.zeros(_kernel.NUM_ACTIONS, np.int8))
        self._hand = None
        self._roots: list[int] = []  # root depth of each search of the hand (the chain)

    # --- the chain ------------------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget the hand's searches."""
        self.tables.truncate(0)
        self._hand = None
        self._roots = []

    def mark(self) -> tuple[int, int]:
        """Where the chain stands (for :meth:`restore`)."""
        return self.tables.num_infosets, len(self._roots)

    def restore(self, mark: tuple[int, int]) -> None:
        """Back to ``mark``: forget the searches made since (a walk over the searches of a whole tree)."""
        self.tables.truncate(mark[0])
        del self._roots[mark[1]:]

    def _follow(self, root: HandRoot) -> None:
        """Start a new chain unless ``root`` continues the hand of the chain's searches."""
        hand = (root.seat, root.dealer, root.score, root.dealt, root.vira)
        depth = self._roots[-1] if self._roots else 0
        if self._hand is None or self._hand[0] != hand or root.history[:depth] != self._hand[1][:depth] or \
                len(root.history) < depth:
            self.reset()
        self._hand = (hand, root.history)

    # --- deals ----------------------------------------------------------------------------------------------
    def _deals(self, root: HandRoot):
        """Every deal the public history allows: a card matrix, one row of seat-major dealt cards per deal. None
        when the history holds an action the search cannot follow (a face-down card, a blind play) or when there
        are more than :data:`ENUMERATE` deals (too many to check a search against)."""
        hs, me = self._hs, root.seat
        mine_played, theirs_played = [], []
        for seat, action in root.history:
            if action < 0 or action >= _kernel.A_COVER and action < _kernel.A_TRUCO:
                return None
            if action < _kernel.A_COVER:
                (mine_played if seat == me else theirs_played).append(action)
        known = set(mine_played) | set(theirs_played) | ({root.vira} if root.vira >= 0 else set())
        pool = [c for c in self._deck if c not in known]
        kp, ko = sum(c not in mine_played for c in root.dealt), hs - len(theirs_played)
        slots = [i for i, c in enumerate(root.dealt) if c not in mine_played]

        def row_of(p_rest, o_rest):
            out = np.empty(2 * hs, np.int32)
            mine = list(root.dealt)
            for i, c in zip(slots, p_rest):
                mine[i] = c
            theirs = theirs_played + list(o_rest)
            out[me * hs:(me + 1) * hs] = mine
            out[(1 - me) * hs:(2 - me) * hs] = theirs
            return out

        count = math.comb(len(pool), kp) * math.comb(len(pool) - kp, ko)
        if count > ENUMERATE:
            return None  # too many to check the search against (the first tricks of a full preset)
        return np.array([row_of(p_rest, o_rest) for p_rest in itertools.combinations(pool, kp)
                         for o_rest in itertools.combinations([c for c in pool if c not in p_rest], ko)])

    # --- the search ---------------------------------------------------------------------------------------
    def _prepare(self, root: HandRoot):
        """The deals of ``root`` replayed with the chain so far (see :meth:`beliefs`), with the gadget keys and the
        states to start from; None when the decision cannot be searched."""
        cards = self._deals(root)
        if cards is None or len(self._roots) >= len(self._ctx[7]):
            return None
        k = len(self._roots)
        ip = self._ctx[0]
        ip[I_MODE], ip[I_SEARCHER], ip[I_TOP] = 1, root.seat, k
        hist_seat, hist_act, hist_rel, hist_pub = self._work[8:12]
        for t, (seat, action) in enumerate(root.history):
            hist_seat[t], hist_act[t] = seat, action
        obs, mask, codes, ids, probs, no_mask = self._scratch
        t = self.tables
        m = len(cards)
        roots = np.zeros((m, _kernel.STATE_SIZE), np.int32)
        reach, oreach = np.zeros(m), np.zeros(m)
        gkeys = np.zeros(m, np.int64)
        start = t.nodes
        t._counters[NODES] += _replay_all(cards, root.vira, root.dealer, root.score[0], root.score[1], root.seat,
                                          len(root.history), self._cfg, PUBLIC, root.obs, roots, reach, oreach,
                                          gkeys, obs,
                                          mask, codes, ids, probs, hist_seat, hist_act, hist_rel, hist_pub, no_mask,
                                          t._hkeys, t._hidx, t.inf_start, t.slot_code, t.avg, self._ctx)
        return cards, roots, reach, oreach, gkeys, start

    def beliefs(self, root: HandRoot, follow: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
        """The deals a search at ``root`` starts from: a matrix of seat-major dealt cards, one row per deal, and
        each deal's weight, the chain's probability of the searcher's actions this hand with those cards (-1: the
        deal cannot have produced this public history); None where the decision is not searched."""
        if follow:
            self._follow(root)
        prepared = self._prepare(root)
        return None if prepared is None else (prepared[0], prepared[2])

    def search(self, root: HandRoot, nodes: int, seed: int, follow: bool = True) -> SearchResult | None:
        """Re-solve the rest of the hand from ``root`` with a budget of ``nodes`` walked nodes, draws seeded by
        ``seed``; None when the decision is not searched (see the module docstring). ``follow=False``: the caller
        keeps the chain itself (:meth:`mark`, :meth:`restore`) and ``root`` may hold any cards of the seat."""
        if follow:
            self._follow(root)
        if root.blind:
            return None
        rng = np.random.default_rng(seed)
        prepared = self._prepare(root)
        if prepared is None:
            return None
        _, roots, reach, oreach, gkeys, start = prepared
        keep = reach > 0
        if not keep.any():
            return None
        k = len(self._roots)
        ctx = self._ctx
        real, copy, gadget = _salts(k)
        d0 = len(root.history)
        t = self.tables
        before = t.num_infosets
        weight, roots, gkeys, oreach = reach[keep], roots[keep], gkeys[keep], oreach[keep]
        cdf = np.cumsum(weight)
        enter0 = oreach / oreach.max() if oreach.max() > 0 else np.ones(len(oreach))
        rng_state = np.array([rng.integers(0, 2**63)], dtype=np.uint64)
        limit = start + int(nodes)
        iterations = 0
        while t.nodes < limit:
            iterations += _search_loop(limit, iterations + 1, root.seat, d0, self._cfg, self.utility == "match_equity",
                                       self._equity, root.score[0], root.score[1], roots, cdf, gkeys, enter0,
                                       *self._work, *t.arrays, rng_state, ctx, SEARCH_MARGIN, real, copy, gadget)
            if t.nodes < limit:
                t.grow(SEARCH_MARGIN)
        ctx[7][k], ctx[8][k] = real, d0
        solved = t.nodes - start
        safe, checked = self._check(root, roots, weight, gkeys, k, int(nodes))
        t._counters[NODES] += checked
        if safe:
            self._roots.append(d0)
            ctx[0][I_TOP] = k + 1
        else:
            t.truncate(before)  # forget the search: the chain plays on
        c, i, p = self.policy(root.obs, root.mask, root.history, root.seat)
        key = _key(root.obs, root.mask, root.history, root.seat)
        reached = safe and bool(probs_of(salted(key, real), c, len(c), t._hkeys, t._hidx, t.inf_start, t.slot_code,
                                         t.avg, np.zeros(len(c))))
        return SearchResult(codes=c, ids=i, probs=p, deals=len(weight), iterations=iterations, nodes=solved,
                            safe=safe, check_nodes=checked, reached=reached)

    def _check(self, root: HandRoot, roots: np.ndarray, weight: np.ndarray, gkeys: np.ndarray, k: int,
               cap: int) -> tuple[bool, int]:
        """Whether search number ``k`` of the hand may be played: over every deal of the public state, no
        opponent hand's counterfactual best-response value against the new strategy (this search, then the
        chain) is above its value against the chain alone; and the nodes the check walked. A check that would
        walk more than ``cap`` nodes fails."""
        cap = max(cap, 1)
        arrays = (np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap, np.int8),
                  np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap), np.zeros(cap), np.zeros(cap))
        states, obs, masks, codes, ids, sig_new, sig_old, _, hist_seat, hist_act, hist_rel, hist_pub = self._work
        t = self.tables
        n = _subgame_tree(roots, weight, root.seat, len(root.history), k, self._cfg, self.utility == "match_equity",
                          self._equity, root.score[0], root.score[1], cap, states, obs, masks, codes, ids, sig_new,
                          sig_old, hist_seat, hist_act, hist_rel, hist_pub, t._hkeys, t._hidx, t.inf_start,
                          t.slot_code, t.avg, self._ctx, *arrays)
        if n < 0:
            return False, cap
        _, hand = np.unique(gkeys, return_inverse=True)
        new, old = _best_response_values(n, *arrays, hand)
        return bool(np.all(new <= old + CHECK_TOLERANCE * max(1.0, float(np.abs(old).max())))), n

    def policy(self, obs: np.ndarray, mask: np.ndarray, history, seat: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(codes, engine ids, probabilities) the chain plays at a decision of ``seat`` in this hand: its
        observation and mask there, and the hand's history before it."""
        obs = np.ascontiguousarray(obs, np.float32)
        mask = np.ascontiguousarray(mask, np.int8)
        codes, ids = codes_and_ids(obs, mask, self._cfg)
        out = np.zeros(len(codes))
        t = self.tables
        chain_policy(_key(obs, mask, history, seat), obs, mask, self._cfg, codes, len(codes), len(history),
                     len(self._roots), self._ctx, t._hkeys, t._hidx, t.inf_start, t.slot_code, t.avg, out)
        return codes, ids, out


def _key(obs: np.ndarray, mask: np.ndarray, history, seat: int) -> int:
    """The ``lossless`` key of ``seat``'s decision (its observation and mask, the hand's history before it)."""
    rel = np.array([(s - seat) % 2 for s, _ in history], np.int32)
    act = np.array([a for _, a in history], np.int32)
    return int(key_lossless(np.ascontiguousarray(obs, np.float32), np.ascontiguousarray(mask, np.int8), rel, act,
                            len(history)))
