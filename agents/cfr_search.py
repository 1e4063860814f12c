"""Play-time search for the ``cfr`` agent (``cfr:PATH,search=MS``): at each decision of a hand, re-solve the rest of
the hand from the current public state with a safe-subgame-solving gadget, then act from the re-solved strategy
for the seat's actual cards (Burch, Johanson and Bowling 2014; Moravčík et al. 2017; Brown and Sandholm 2017).

The game re-solved: the rest of the hand from the decision now (a hand is short: to the end, no depth limit), with
the hand's public history fixed (calls, answers, cards played face up, points shown). Its root is a chance node
over the deals the public history allows, a pair (searcher's unseen cards, opponent's unseen cards):

* Beliefs. Each deal is weighted by the probability that the searcher, holding those cards, would have taken its
  public actions of this hand with the strategy it actually played: the blueprint's average strategy, replaced
  from its first search on by that search's strategy, and so on (the *chain*; played as the agent plays, see
  :func:`agents.cfr_walk.purify`). Deals come from replaying the hand on a kernel state with the candidate cards
  substituted: a deal whose replay makes an action illegal, or shows other points or another public state than
  the real one, is impossible. Up to :data:`ENUMERATE` deals are enumerated; beyond that (the first tricks of a
  full preset) :data:`SAMPLES` deals are drawn uniformly, plus :data:`SAMPLES_OWN` with the searcher's real
  cards, which importance weights put back in proportion (they are drawn more so that the decision being made
  gets most of the samples; every information set of one hand of the searcher is weighted alike, so its
  strategy is unchanged in expectation).
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
* Continual re-solving. The next search of the hand starts from the strategy this one played (its beliefs and
  its gadget values come from the chain, which now ends with this search), as in DeepStack: each search may
  only lower every opponent hand's best-response value below the previous strategy's, so by induction the
  searched policy is no more exploitable than the blueprint. Re-solving every decision from the blueprint's
  beliefs alone would not carry this guarantee (the beliefs would no longer be those of the strategy played).
  A decision with one legal action is not searched; the chain plays on.
* Solver. The trainer's external-sampling MCCFR walk (:func:`agents.cfr_walk.walk`, search mode), keyed by the
  ``lossless`` key (perfect recall inside the hand: the observation, the mask and the public history) salted per
  search and per branch, in one table per hand; where a row has no positive regret the searcher plays the
  chain and the opponent the blueprint, so a short search starts from the blueprint. The utility is the
  checkpoint's (``points`` or ``match_equity``, from ``meta["solver"]["utility"]``).
* Budget. ``search=MS`` buys ``MS * NODES_PER_MS`` walked nodes (deal replays included): a seeded agent plays the
  same on any machine, and on one core of the project's machine that is about MS milliseconds (docs/cfr.md has
  the measured times). The search's draws come from the agent's seeded generator.

On the research presets the very same search, with its deals enumerated, is checked against the exact game:
:mod:`training.cfr.resolve` assembles the searched policy on the exact tree and compares exact NashConv.
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

from truco_env import _kernel as K
from truco_env import actions as A
from truco_env import cards as C
from truco_env.config import TrucoConfig
from truco_env.fast import config_array

from .cfr_abstraction_v3 import KINDS, LOSSLESS, MAX_LEGAL, codes_and_ids, key_lossless
from .cfr_walk import (
    I_BP_KIND,
    I_FIXED,
    I_MODE,
    I_SALT,
    I_SEARCHER,
    I_TOP,
    N_INF,
    N_SLOTS,
    NODES,
    WalkTables,
    blueprint_probs,
    chain_policy,
    copy_into,
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
#: At most this many deals are enumerated; more are sampled.
ENUMERATE = 2048
#: Deals drawn when sampling: uniformly, and with the searcher's real cards.
SAMPLES, SAMPLES_OWN = 1024, 512
#: Room kept for one search iteration's new rows (two walks: the subgame and its copy).
SEARCH_MARGIN = 1 << 14


class SearchError(ValueError):
    """A checkpoint or rules the search cannot work with."""


def _public_positions() -> np.ndarray:
    """The positions of the observation's hand part that everyone sees alike (own cards and points left out)."""
    private = set(range(K.O_HAND, K.O_HAND + 40)) | set(range(K.O_SLOTS, K.O_SLOTS + 3))
    private |= set(range(K.O_PARTNER, K.O_PARTNER + 40)) | set(range(K.O_OWN_POINTS, K.O_OWN_POINTS + 2))
    private.add(K.O_FHOLDERS)  # own flor: known to oneself before anyone declares
    return np.array([i for i in range(K.O_FAMILY) if i not in private], dtype=np.int64)


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
        return bool(self.obs[K.O_SPECIAL + 2] > 0.5)


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
    dealt = tuple(C.parse_card(c, family) for c in own.split(",")) if own != "?" else ()
    history = []
    for move in moves.split():
        rel, name = int(move[0]), move[1:].split("=")[0]
        history.append(((seat + rel) % config.num_players, A.action_id(name, family) if name != "cover" else -1))
    s0, s1 = (int(x) for x in score.split("-"))
    return HandRoot(seat=seat, dealer=(seat + int(dealer[1:])) % config.num_players, score=(s0, s1), dealt=dealt,
                    vira=-1 if vira == "None" else C.parse_card(vira, family), history=tuple(history),
                    obs=np.ascontiguousarray(obs, dtype=np.float32), mask=np.ascontiguousarray(mask, dtype=np.int8))


class Blueprint:
    """A checkpoint's average strategy as the compiled lookup the search reads (hash map and rows)."""

    def __init__(self, keys: list[str], start: np.ndarray, codes: np.ndarray, probs: np.ndarray, abstraction: str):
        try:
            inf_key = np.fromiter((int(k) for k in keys), dtype=np.int64, count=len(keys))
        except (ValueError, OverflowError):
            raise SearchError("search needs a checkpoint keyed by the compiled engine (abstraction v3, v4 or "
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
        K.new_match(st, cfg, dealer, s0, s1)
        K.deal(st, cfg, cards[i], vira)
        r = 1.0
        ro = 1.0
        ok = True
        for t in range(n_hist):
            nodes += 1
            a = hist_act[t]
            if st[K.S_PHASE] == K.OVER or st[K.S_ACTOR] != hist_seat[t]:
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
            K.apply(st, cfg, a)
        if ok and (st[K.S_PHASE] == K.OVER or st[K.S_ACTOR] != searcher):
            ok = False
        if ok:
            K.encode_obs(st, cfg, searcher, obs)
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
                 roots, cdf, iw, gkeys, enter0, states, obs, masks, codes, ids, sigma, values, frame, hist_seat, hist_act,
                 hist_rel, hist_pub, hkeys, hidx, inf_key, inf_start, inf_touch, slot_code, regret, avg, counters,
                 rng, ctx, margin, real_salt, copy_salt, gadget_salt):
    """Gadget iterations until ``counters[NODES]`` reaches ``node_limit``; returns how many ran (it stops early
    when the tables need room). Each draws a deal (``cdf``: cumulative pick weights, ``iw``: importance
    weights), then the opponent's enter/take choice (row ``gadget_salt``; with no positive regret it enters with
    probability ``enter0``, its hand's blueprint reach over the likeliest hand's): for the opponent as
    traverser both branches are walked (take: the copy, where the searcher plays the chain; enter: the
    subgame), for the searcher only the subgame, weighted by the probability of entering."""
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
        pick = float(K._splitmix(rng, 0) >> np.uint64(11)) * (1.0 / 9007199254740992.0) * total
        i = min(np.searchsorted(cdf, pick, side="right"), cdf.shape[0] - 1)
        copy_into(roots[i], states[d0])
        w = iw[i]
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
            vt = walk(d0, w, opp, iteration, cfg, LOSSLESS, use_equity, equity, start0, start1, states, obs, masks,
                      codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub, hkeys, hidx, inf_key,
                      inf_start, inf_touch, slot_code, regret, avg, counters, rng, ctx)
            ip[I_SALT] = real_salt
            ip[I_FIXED] = -1
            vf = walk(d0, w, opp, iteration, cfg, LOSSLESS, use_equity, equity, start0, start1, states, obs, masks,
                      codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub, hkeys, hidx, inf_key,
                      inf_start, inf_touch, slot_code, regret, avg, counters, rng, ctx)
            v = take * vt + enter * vf
            regret[lo] = max(0.0, rt + vt - v)
            regret[lo + 1] = max(0.0, rf + vf - v)
        elif enter > 0.0:
            ip[I_SALT] = real_salt
            ip[I_FIXED] = -1
            walk(d0, w * enter, searcher, iteration, cfg, LOSSLESS, use_equity, equity, start0, start1, states, obs,
                 masks, codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub, hkeys, hidx,
                 inf_key, inf_start, inf_touch, slot_code, regret, avg, counters, rng, ctx)
        done += 1
    return done


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
    sampled: bool
    iterations: int
    nodes: int
    reached: bool  # the search's table has the real decision (else its strategy is the chain's)


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
        self._deck = C.deck(config.family, config.deck, config.deck_ranks)
        self._hs = config.hand_size
        self._equity = np.zeros((1, 1))
        if utility == "match_equity":
            from .heuristic import match_equity_table

            self._equity = np.asarray(match_equity_table(config.target_score, config.family), dtype=np.float64)
        self.utility = utility
        self.tables = WalkTables(4 * SEARCH_MARGIN, SEARCH_MARGIN)
        self._work = walk_buffers()
        self._ctx = search_context(1, blueprint.arrays, threshold, greedy, chain=64)
        self._ctx[0][I_BP_KIND] = KINDS[blueprint.abstraction]
        self._scratch = (np.zeros(K.OBS_SIZE, np.float32), np.zeros(K.NUM_ACTIONS, np.int8),
                         np.zeros(MAX_LEGAL, np.int32), np.zeros(MAX_LEGAL, np.int32), np.zeros(MAX_LEGAL),
                         np.zeros(K.NUM_ACTIONS, np.int8))
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
    def _deals(self, root: HandRoot, rng: np.random.Generator, nodes: int):
        """The deals the search draws from: a card matrix (one row of seat-major dealt cards per deal), each
        deal's representation weight, whether it holds the searcher's real cards, and whether it was sampled.
        None when the history holds an action the search cannot follow (a face-down card, a blind play)."""
        hs, me = self._hs, root.seat
        mine_played, theirs_played = [], []
        for seat, action in root.history:
            if action < 0 or action >= K.A_COVER and action < K.A_TRUCO:
                return None
            if action < K.A_COVER:
                (mine_played if seat == me else theirs_played).append(action)
        known = set(mine_played) | set(theirs_played) | ({root.vira} if root.vira >= 0 else set())
        pool = [c for c in self._deck if c not in known]
        mine_rest = tuple(sorted(c for c in root.dealt if c not in mine_played))
        kp, ko = len(mine_rest), hs - len(theirs_played)
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

        n_mine = math.comb(len(pool), kp)
        count = n_mine * math.comb(len(pool) - kp, ko)
        if count <= ENUMERATE:
            rows, star = [], []
            for p_rest in itertools.combinations(pool, kp):
                left = [c for c in pool if c not in p_rest]
                for o_rest in itertools.combinations(left, ko):
                    rows.append(row_of(p_rest, o_rest))
                    star.append(p_rest == mine_rest)
            return np.array(rows), np.ones(len(rows)), np.array(star), False
        # at most a quarter of the budget on replaying deals (each replays the hand's actions so far)
        share = min(1.0, nodes / (4.0 * (len(root.history) + 1) * (SAMPLES + SAMPLES_OWN)))
        samples, samples_own = max(32, int(SAMPLES * share)), max(16, int(SAMPLES_OWN * share))
        rows, rep, star = [], [], []
        pool_arr = np.array(pool)
        for _ in range(samples):
            perm = rng.permutation(pool_arr)
            p_rest = tuple(sorted(perm[:kp].tolist()))
            if p_rest == mine_rest:
                continue  # the real cards' deals are the second set's
            rows.append(row_of(p_rest, sorted(perm[kp:kp + ko].tolist())))
            rep.append(1.0)
            star.append(False)
        left = np.array([c for c in pool if c not in mine_rest])
        for _ in range(samples_own):
            perm = rng.permutation(left)
            rows.append(row_of(mine_rest, sorted(perm[:ko].tolist())))
            rep.append(samples / n_mine / samples_own)  # the real cards' share of uniform draws, spread over these
            star.append(True)
        return np.array(rows), np.array(rep), np.array(star), True

    # --- the search ---------------------------------------------------------------------------------------
    def _prepare(self, root: HandRoot, rng: np.random.Generator, nodes: int):
        """The deals of ``root`` replayed with the chain so far (see :meth:`beliefs`), with the gadget keys and the
        states to start from; None when the decision cannot be searched."""
        deals = self._deals(root, rng, nodes)
        k = len(self._roots)
        if deals is None or k >= len(self._ctx[7]):
            return None
        cards, rep, star, sampled = deals
        ip = self._ctx[0]
        ip[I_MODE], ip[I_SEARCHER], ip[I_TOP] = 1, root.seat, k
        hist_seat, hist_act, hist_rel, hist_pub = self._work[8:12]
        for t, (seat, action) in enumerate(root.history):
            hist_seat[t], hist_act[t] = seat, action
        obs, mask, codes, ids, probs, no_mask = self._scratch
        t = self.tables
        m = len(cards)
        roots = np.zeros((m, K.STATE_SIZE), np.int32)
        reach, oreach = np.zeros(m), np.zeros(m)
        gkeys = np.zeros(m, np.int64)
        start = t.nodes
        t._counters[NODES] += _replay_all(cards, root.vira, root.dealer, root.score[0], root.score[1], root.seat,
                                          len(root.history), self._cfg, PUBLIC, root.obs, roots, reach, oreach,
                                          gkeys, obs,
                                          mask, codes, ids, probs, hist_seat, hist_act, hist_rel, hist_pub, no_mask,
                                          t._hkeys, t._hidx, t.inf_start, t.slot_code, t.avg, self._ctx)
        return cards, rep, star, sampled, roots, reach, oreach, gkeys, start

    def beliefs(self, root: HandRoot, seed: int = 0, follow: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
        """The deals a search at ``root`` starts from: a matrix of seat-major dealt cards, one row per deal, and
        each deal's weight, the chain's probability of the searcher's actions this hand with those cards (-1: the
        deal cannot have produced this public history). Enumerated, or sampled (then not in proportion: see the
        module docstring)."""
        if follow:
            self._follow(root)
        every = 4 * (len(root.history) + 1) * (SAMPLES + SAMPLES_OWN)  # a budget that samples the most deals
        prepared = self._prepare(root, np.random.default_rng(seed), every)
        return None if prepared is None else (prepared[0], prepared[5])

    def search(self, root: HandRoot, nodes: int, seed: int, follow: bool = True) -> SearchResult | None:
        """Re-solve the rest of the hand from ``root`` with a budget of ``nodes`` walked nodes, draws seeded by
        ``seed``; None when the decision is not searched (see the module docstring). ``follow=False``: the caller
        keeps the chain itself (:meth:`mark`, :meth:`restore`) and ``root`` may hold any cards of the seat."""
        if follow:
            self._follow(root)
        if root.blind:
            return None
        rng = np.random.default_rng(seed)
        prepared = self._prepare(root, rng, nodes)
        if prepared is None:
            return None
        cards, rep, star, sampled, roots, reach, oreach, gkeys, start = prepared
        k = len(self._roots)
        ctx = self._ctx
        real, copy, gadget = _salts(k)
        d0 = len(root.history)
        work = self._work
        t = self.tables
        m = len(cards)
        weight = np.maximum(reach, 0.0) * rep
        keep = weight > 0
        if not keep.any():
            return None
        boost = np.ones(m)
        if sampled:
            own, other = weight[star].sum(), weight[~star].sum()
            if own > 0 and other > 0:
                boost[star] = other / own  # half the draws on the real cards
        pick = weight * boost
        cdf = np.cumsum(pick[keep])
        iw = (1.0 / boost[keep]) * (pick.sum() / weight.sum())
        roots, gkeys, oreach = roots[keep], gkeys[keep], oreach[keep]
        enter0 = oreach / oreach.max() if oreach.max() > 0 else np.ones(len(oreach))
        rng_state = np.array([rng.integers(0, 2**63)], dtype=np.uint64)
        limit = start + int(nodes)
        iterations = 0
        while t.nodes < limit:
            iterations += _search_loop(limit, iterations + 1, root.seat, d0, self._cfg, self.utility == "match_equity",
                                       self._equity, root.score[0], root.score[1], roots, cdf, iw, gkeys, enter0,
                                       *work,
                                       *t.arrays, rng_state, ctx, SEARCH_MARGIN, real, copy, gadget)
            if t.nodes < limit:
                t.grow(SEARCH_MARGIN)
        ctx[7][k], ctx[8][k] = real, d0
        self._roots.append(d0)
        ctx[0][I_TOP] = k + 1
        c, i, p = self.policy(root.obs, root.mask, root.history, root.seat)
        key = _key(root.obs, root.mask, root.history, root.seat)
        reached = bool(probs_of(salted(key, real), c, len(c), t._hkeys, t._hidx, t.inf_start, t.slot_code, t.avg,
                                np.zeros(len(c))))
        return SearchResult(codes=c, ids=i, probs=p, deals=int(keep.sum()), sampled=sampled,
                            iterations=iterations, nodes=t.nodes - start, reached=reached)

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
