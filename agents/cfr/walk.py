"""The compiled external-sampling MCCFR walk over one hand on the kernel, shared by training
(:mod:`training.learn.cfr.mccfr_kernel`, self-play from a random deal) and play-time search (:mod:`agents.cfr.search`,
re-solving the rest of a hand from its current public state).

Why here, in ``agents``: a ``cfr`` agent that searches at play time runs this very walk, and agents must not
import training; the trainer imports it from here. One walk serves both, so the search is the trainer's MCCFR,
not a second one.

The walk: every action at the traverser's nodes, one action sampled from the current strategy at the others',
where the average strategy is accumulated with linear (iteration) weights; regret matching floors negative
regrets at 0 (as CFR+). It recurses over preallocated per-depth buffers (a state copy, the observation, the legal
mask, the codes and values of each depth), so nothing is allocated per node. At each node the kernel encodes the
actor's observation and legal mask and the key is computed from them, the function an agent uses at play time
(:func:`node_key`). Tables: an open-addressing hash map (int64 key -> information set) and flat arrays; an
information set's row (its legal codes, regrets and average weights) is allocated on first visit behind the
previous one (:class:`WalkTables`). Callers check, before each iteration, that there is room for any one
iteration's new rows and grow the arrays between iterations, so growing never changes a result.

Search mode (``ctx``, :func:`search_context`) adds, without changing the training walk: a start depth (the walk
begins at the root of a subgame, the hand's earlier actions already in the history), a weight on the utility (an
importance weight of the sampled deal), a salt mixed into every key (one table holds several searches and both
branches of the re-solving gadget), a seat whose nodes play a fixed policy instead of a table row (the gadget's
copy of the subgame where the searcher plays what it played before this search), and, where a row has no
positive regret, that fixed policy (the searcher) or the blueprint (the opponent) instead of the uniform
strategy. Regret matching may play anything when no regret is positive, so the choice keeps CFR's guarantees
and makes a short search start from the blueprint rather than from uniform play.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from truco_env import _kernel

from .abstraction import LOSSLESS, MAX_LEGAL, _mix, abstract_key, key_lossless, legal_codes

MAX_DEPTH = 64  # actions in one hand, with room: three tricks, the whole ladder, an envido and a flor chain
#: Room checked before each training iteration: more new information sets (and legal actions each) than one
#: iteration visits nodes (the most measured was about 4,600, in argentine-flor with uniform strategies).
MARGIN = 1 << 15
# counters
N_INF, N_SLOTS, NODES = 0, 1, 2
# search context: integer parameters
I_MODE, I_SALT, I_FIXED, I_SEARCHER, I_BP_KIND, I_TOP, I_GREEDY = range(7)
I_SIZE = 8


@njit(cache=True, inline="always")
def _slot_of(key, mask):
    z = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((z ^ (z >> np.uint64(31))) & np.uint64(mask))


@njit(cache=True)
def insert_key(hkeys, hidx, key, index):
    """Put ``key`` -> ``index`` into the hash map; returns False when the key is there already."""
    m = hkeys.shape[0] - 1
    i = _slot_of(key, m)
    while hidx[i] >= 0:
        if hkeys[i] == key:
            return False
        i = (i + 1) & m
    hkeys[i] = key
    hidx[i] = index
    return True


@njit(cache=True)
def rebuild(hkeys, hidx, inf_key, n):
    """The hash map of the first ``n`` keys; returns the index of a duplicate key, or -1."""
    hidx[:] = -1
    for j in range(n):
        if not insert_key(hkeys, hidx, inf_key[j], j):
            return j
    return -1


@njit(cache=True)
def find(key, hkeys, hidx):
    """The row of ``key``, or -1."""
    m = hkeys.shape[0] - 1
    i = _slot_of(key, m)
    while True:
        j = hidx[i]
        if j < 0:
            return -1
        if hkeys[i] == key:
            return j
        i = (i + 1) & m


@njit(cache=True)
def row(key, n, codes, hkeys, hidx, inf_key, inf_start, slot_code, counters):
    """The information set of ``key`` (created with the ``n`` legal ``codes`` on first visit)."""
    m = hkeys.shape[0] - 1
    i = _slot_of(key, m)
    while True:
        j = hidx[i]
        if j < 0:
            break
        if hkeys[i] == key:
            lo = inf_start[j]
            if inf_start[j + 1] - lo != n:
                raise RuntimeError("mccfr kernel: one key with two different legal action sets")
            for k in range(n):
                if slot_code[lo + k] != codes[k]:
                    raise RuntimeError("mccfr kernel: one key with two different legal action sets")
            return j
        i = (i + 1) & m
    j = counters[N_INF]
    lo = counters[N_SLOTS]
    if j + 1 >= inf_key.shape[0] or lo + n > slot_code.shape[0] or 2 * (j + 1) > hkeys.shape[0]:
        raise RuntimeError("mccfr kernel: table full inside an iteration (raise MARGIN)")
    hkeys[i] = key
    hidx[i] = j
    inf_key[j] = key
    for k in range(n):
        slot_code[lo + k] = codes[k]
    inf_start[j + 1] = lo + n
    counters[N_INF] = j + 1
    counters[N_SLOTS] = lo + n
    return j


@njit(cache=True, inline="always")
def copy_into(src, dst):
    """``dst[:] = src`` (an element loop: numba's slice assignment took eight times as long here)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True)
def win_prob(a, b, target, equity):
    if a >= target or b >= target:
        return 1.0 if a > b else (0.0 if b > a else 0.5)
    return equity[a, b]


@njit(cache=True, inline="always")
def hand_utility(st, target, use_equity, equity, start0, start1):
    """Seat 0's utility of the finished hand in ``st``: its points over seat 1's since the hand's start
    (``start0``, ``start1``), or 100 times its gain in match-win probability (``use_equity``)."""
    s0 = st[_kernel.S_SCORE]
    s1 = st[_kernel.S_SCORE + 1]
    if use_equity:
        return 100.0 * (win_prob(s0, s1, target, equity) - win_prob(start0, start1, target, equity))
    return float((s0 - start0) - (s1 - start1))


@njit(cache=True)
def node_key(st, cfg, kind, obs, mask, codes, ids, hist_seat, hist_act, n_hist, hist_rel, hist_pub):
    """The key of the actor's decision in ``st`` and its legal codes and engine ids (into ``codes``, ``ids``):
    the actor's observation and mask from the kernel, then the very functions an agent calls at play time.
    ``kind``: the abstraction's (:data:`agents.cfr.abstraction.KINDS`). ``hist_seat``/``hist_act``: the
    hand's actions so far (``lossless`` only). Returns (key, count)."""
    seat = st[_kernel.S_ACTOR]
    _kernel.encode_obs(st, cfg, seat, obs)
    _kernel.legal_mask(st, cfg, mask)
    n = legal_codes(obs, mask, cfg, codes, ids)
    if kind != LOSSLESS:
        return abstract_key(obs, mask, cfg, kind), n
    _relative_history(seat, cfg, hist_seat, hist_act, n_hist, hist_rel, hist_pub)
    return key_lossless(obs, mask, hist_rel, hist_pub, n_hist), n


@njit(cache=True)
def _relative_history(seat, cfg, hist_seat, hist_act, n_hist, hist_rel, hist_pub):
    """The hand's history as ``seat`` sees it: relative seats, another seat's face-down card hidden (-1)."""
    players = cfg[_kernel.C_N]
    for i in range(n_hist):
        hist_rel[i] = (hist_seat[i] - seat) % players
        act = hist_act[i]
        hidden = act >= _kernel.A_COVER and act < _kernel.A_SLOT and hist_seat[i] != seat
        hist_pub[i] = -1 if hidden else act


@njit(cache=True)
def view_key(st, cfg, seat, obs, no_mask, hist_seat, hist_act, n_hist, hist_rel, hist_pub):
    """A ``lossless`` key of what ``seat`` knows in ``st`` when it is not to act (its observation and the public
    history; ``no_mask`` all zero: the actor's legal actions are the actor's private information)."""
    _kernel.encode_obs(st, cfg, seat, obs)
    _relative_history(seat, cfg, hist_seat, hist_act, n_hist, hist_rel, hist_pub)
    return key_lossless(obs, no_mask, hist_rel, hist_pub, n_hist)


@njit(cache=True, inline="always")
def salted(key, salt):
    """``key`` mixed with ``salt`` (non-negative, as the keys are): one table, several independent key spaces."""
    return np.int64(_mix(np.uint64(key), np.uint64(salt)) >> np.uint64(1))


@njit(cache=True)
def probs_of(key, codes, n, hkeys, hidx, start, slot_code, weights, out):
    """The normalised ``weights`` of ``key``'s row in the order of ``codes`` (0 for a code the row lacks) into
    ``out``; False (``out`` undefined) when the key is absent or has no weight on these codes."""
    j = find(key, hkeys, hidx)
    if j < 0:
        return False
    for k in range(n):
        out[k] = 0.0
    total = 0.0
    for s in range(start[j], start[j + 1]):
        for k in range(n):
            if slot_code[s] == codes[k]:
                out[k] = weights[s]
                total += weights[s]
    if not total > 0.0:
        return False
    for k in range(n):
        out[k] /= total
    return True


@njit(cache=True)
def purify(out, n, threshold, greedy):
    """How the ``cfr`` agent plays a row (:class:`agents.cfr.CFRAgent`): its most likely action (``greedy``), or
    the actions of probability at least ``threshold`` renormalised (the most likely kept if none is)."""
    best = 0
    for k in range(1, n):
        if out[k] > out[best]:
            best = k
    if greedy:
        for k in range(n):
            out[k] = 1.0 if k == best else 0.0
        return
    if threshold <= 0.0:
        return
    cut = min(threshold, out[best])
    total = 0.0
    for k in range(n):
        if out[k] < cut:
            out[k] = 0.0
        total += out[k]
    for k in range(n):
        out[k] /= total


@njit(cache=True)
def blueprint_probs(key, obs, mask, cfg, codes, n, ctx, out):
    """The blueprint's average strategy at a decision (``key``: its lossless key; the blueprint's own key is
    computed from the observation when it is ``v4`` or ``v5``), uniform where the blueprint has no row."""
    bkind = ctx[0][I_BP_KIND]
    bkey = key if bkind == LOSSLESS else abstract_key(obs, mask, cfg, bkind)
    if not probs_of(bkey, codes, n, ctx[2], ctx[3], ctx[4], ctx[5], ctx[6], out):
        for k in range(n):
            out[k] = 1.0 / n


@njit(cache=True)
def blueprint_policy(key, obs, mask, cfg, codes, n, ctx, out):
    """The blueprint as the agent plays it (:func:`blueprint_probs`, then :func:`purify`)."""
    blueprint_probs(key, obs, mask, cfg, codes, n, ctx, out)
    purify(out, n, ctx[1][0], ctx[0][I_GREEDY])


@njit(cache=True)
def chain_policy(key, obs, mask, cfg, codes, n, depth, top, ctx, hkeys, hidx, inf_start, slot_code, avg, out):
    """What the searcher plays at a decision at hand depth ``depth`` (``key``: lossless) when no search after
    the first ``top`` of the hand changes it: the average strategy of the latest of those searches rooted at or
    above that depth that has weight there, else the blueprint (:func:`blueprint_policy`), played as the agent
    plays (:func:`purify`)."""
    salts = ctx[7]
    roots = ctx[8]
    for j in range(top - 1, -1, -1):
        if roots[j] > depth:
            continue
        if probs_of(salted(key, salts[j]), codes, n, hkeys, hidx, inf_start, slot_code, avg, out):
            purify(out, n, ctx[1][0], ctx[0][I_GREEDY])
            return
    blueprint_policy(key, obs, mask, cfg, codes, n, ctx, out)


@njit(cache=True, inline="always")
def _draw(sig, n, rng):
    pick = float(_kernel._splitmix(rng, 0) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
    acc = 0.0
    for k in range(n):
        acc += sig[k]
        if pick < acc:
            return k
    return n - 1


@njit(cache=True, inline="always")
def _enter(d, traverser, iteration, cfg, kind, states, obs, masks, codes, ids, sigma, frame,
           hist_seat, hist_act, hist_rel, hist_pub, hkeys, hidx, inf_key, inf_start, inf_touch, slot_code, regret,
           avg, counters, rng, ctx):
    """Arrive at ``states[d]``, a decision: find its row, set its strategy into ``sigma[d]`` and its frame, and
    start its first child (the traverser's) or its sampled one (the others') in ``states[d + 1]``."""
    if d + 1 >= MAX_DEPTH:
        raise RuntimeError("mccfr kernel: a hand deeper than MAX_DEPTH")
    st = states[d]
    seat = st[_kernel.S_ACTOR]
    c = codes[d]
    a = ids[d]
    ip = ctx[0]
    search = ip[I_MODE] == 1
    key, n = node_key(st, cfg, kind, obs[d], masks[d], c, a, hist_seat, hist_act, d, hist_rel, hist_pub)
    sig = sigma[d]
    frame[d, 0] = n
    frame[d, 2] = 0  # the child being walked
    hist_seat[d] = seat
    if search and seat == ip[I_FIXED]:  # the searcher's fixed policy: no row, never the traverser here
        chain_policy(key, obs[d], masks[d], cfg, c, n, d, ip[I_TOP], ctx, hkeys, hidx, inf_start, slot_code, avg,
                     sig)
        frame[d, 1] = -1
        frame[d, 3] = 0
        choice = _draw(sig, n, rng)
    else:
        j = row(salted(key, ip[I_SALT]) if search else key, n, c, hkeys, hidx, inf_key, inf_start, slot_code,
                counters)
        inf_touch[j] = iteration
        lo = inf_start[j]
        total = 0.0
        for k in range(n):
            r = regret[lo + k]
            sig[k] = max(0.0, r)
            total += sig[k]
        if total > 0.0:
            for k in range(n):
                sig[k] = sig[k] / total
        elif not search:
            for k in range(n):
                sig[k] = 1.0 / n
        elif seat == ip[I_SEARCHER]:
            chain_policy(key, obs[d], masks[d], cfg, c, n, d, ip[I_TOP], ctx, hkeys, hidx, inf_start, slot_code,
                         avg, sig)
        else:
            blueprint_policy(key, obs[d], masks[d], cfg, c, n, ctx, sig)
        frame[d, 1] = lo
        frame[d, 3] = 1 if seat == traverser else 0
        choice = 0
        if seat != traverser:
            w = float(iteration)
            for k in range(n):
                avg[lo + k] += w * sig[k]
            choice = _draw(sig, n, rng)
    child = states[d + 1]
    copy_into(st, child)
    _kernel.apply(child, cfg, a[choice])
    hist_act[d] = a[choice]


@njit(cache=True)
def walk(d0, weight, traverser, iteration, cfg, kind, use_equity, equity, start0, start1,
         states, obs, masks, codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub,
         hkeys, hidx, inf_key, inf_start, inf_touch, slot_code, regret, avg, counters, rng, ctx):
    """The traverser's expected utility (times ``weight``) of the hand from ``states[d0]`` (the hand's first
    ``d0`` actions already in ``hist_seat``/``hist_act``): every action at its nodes, one sampled action at the
    others'; the tables are updated on the way back. A depth-first walk over an explicit stack of frames
    (numba's recursion does not survive its on-disk cache)."""
    target = cfg[_kernel.C_TARGET]
    d = d0
    while True:
        # descend until a terminal
        while states[d][_kernel.S_PHASE] != _kernel.OVER:
            counters[NODES] += 1
            _enter(d, traverser, iteration, cfg, kind, states, obs, masks, codes, ids, sigma, frame,
                   hist_seat, hist_act, hist_rel, hist_pub, hkeys, hidx, inf_key, inf_start, inf_touch, slot_code,
                   regret, avg, counters, rng, ctx)
            d += 1
        counters[NODES] += 1
        u = hand_utility(states[d], target, use_equity, equity, start0, start1)
        if traverser % 2 == 1:  # team 1's seats (in team play every seat of a team shares its utility)
            u = -u
        u *= weight
        # climb: hand the value to the parents until a traverser node has a child left to walk
        while True:
            if d == d0:
                return u
            d -= 1
            if frame[d, 3] == 0:
                continue
            n = frame[d, 0]
            k = frame[d, 2]
            values[d, k] = u
            k += 1
            if k < n:
                frame[d, 2] = k
                child = states[d + 1]
                copy_into(states[d], child)
                _kernel.apply(child, cfg, ids[d, k])
                hist_act[d] = ids[d, k]
                d += 1
                break
            lo = frame[d, 1]
            sig = sigma[d]
            vals = values[d]
            v = 0.0
            for i in range(n):
                v += sig[i] * vals[i]
            for i in range(n):
                r = regret[lo + i] + (vals[i] - v)
                regret[lo + i] = max(0.0, r)
            u = v


def search_context(mode: int = 0, blueprint=None, threshold: float = 0.0, greedy: bool = False,
                   chain: int = 16) -> tuple:
    """The ``ctx`` argument of :func:`walk`: (integer parameters, [threshold], the blueprint's hash map and rows
    (keys, indices, row starts, codes, probabilities), the chain's salts and root depths). ``mode`` 0 is the
    training walk (the rest is ignored); ``blueprint``: the tuple of five arrays of :class:`Blueprint`."""
    ip = np.zeros(I_SIZE, np.int64)
    ip[I_MODE] = mode
    ip[I_FIXED] = -1
    ip[I_GREEDY] = int(bool(greedy))
    if blueprint is None:
        blueprint = (np.zeros(2, np.int64), np.full(2, -1, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int16),
                     np.zeros(0, np.float64))
    return (ip, np.array([float(threshold)]), *blueprint, np.zeros(chain, np.int64), np.zeros(chain, np.int64))


def walk_buffers() -> tuple:
    """The per-depth buffers of :func:`walk`: states, observations, masks, codes, ids, strategies, values,
    frames, and the history arrays (seat, action, relative seat, public action)."""
    d, w = MAX_DEPTH, MAX_LEGAL
    return (np.zeros((d, _kernel.STATE_SIZE), np.int32), np.zeros((d, _kernel.OBS_SIZE_MAX), np.float32),
            np.zeros((d, _kernel.NUM_ACTIONS), np.int8), np.zeros((d, w), np.int32), np.zeros((d, w), np.int32),
            np.zeros((d, w), np.float64), np.zeros((d, w), np.float64), np.zeros((d, 4), np.int64),
            np.zeros(d, np.int32), np.zeros(d, np.int32), np.zeros(d, np.int32), np.zeros(d, np.int32))


def _pow2(n: int) -> int:
    return 1 << max(int(n) - 1, 1).bit_length()


class WalkTables:
    """The walk's tables: rows ``inf_key``/``inf_start``/``inf_touch`` per information set, ``slot_code``/
    ``regret``/``avg`` per legal action, the hash map ``_hkeys``/``_hidx`` and ``_counters`` (information sets,
    slots, nodes walked)."""

    def __init__(self, capacity: int, margin: int):
        self._counters = np.zeros(3, dtype=np.int64)
        self.alloc(max(int(capacity), 4 * margin), 0, margin)

    def alloc(self, infosets: int, slots: int, margin: int, keep: int = 0) -> None:
        """Room for ``infosets`` information sets and ``slots`` legal actions (plus one iteration's ``margin``),
        keeping the first ``keep`` rows."""
        size = _pow2(infosets)
        slots = max(int(slots), 4 * size) + MAX_LEGAL * margin
        inf_key, inf_start = np.zeros(size, np.int64), np.zeros(size + 1, np.int64)
        inf_touch = np.zeros(size, np.int64)
        slot_code, regret, avg = np.zeros(slots, np.int16), np.zeros(slots), np.zeros(slots)
        if keep:
            used = int(self.inf_start[keep])
            inf_key[:keep] = self.inf_key[:keep]
            inf_start[:keep + 1] = self.inf_start[:keep + 1]
            inf_touch[:keep] = self.inf_touch[:keep]
            slot_code[:used] = self.slot_code[:used]
            regret[:used] = self.regret[:used]
            avg[:used] = self.avg[:used]
        self.inf_key, self.inf_start, self.inf_touch = inf_key, inf_start, inf_touch
        self.slot_code, self.regret, self.avg = slot_code, regret, avg
        self._hkeys = np.zeros(2 * size, np.int64)
        self._hidx = np.full(2 * size, -1, np.int64)
        rebuild(self._hkeys, self._hidx, self.inf_key, keep)

    def grow(self, margin: int) -> None:
        """Double the tables (between iterations: the results do not depend on the sizes)."""
        self.alloc(2 * len(self.inf_key), 2 * len(self.slot_code), margin, keep=self.num_infosets)

    def has_room(self, margin: int) -> bool:
        j = self.num_infosets
        return (j + margin < len(self.inf_key) and self.num_slots + MAX_LEGAL * margin <= len(self.slot_code)
                and 2 * (j + margin) <= len(self._hkeys))

    def truncate(self, infosets: int) -> None:
        """Forget every row after the first ``infosets`` (their regrets and weights cleared)."""
        slots = int(self.inf_start[infosets])
        self.regret[slots:self.num_slots] = 0.0
        self.avg[slots:self.num_slots] = 0.0
        self._counters[N_INF], self._counters[N_SLOTS] = infosets, slots
        rebuild(self._hkeys, self._hidx, self.inf_key, infosets)

    @property
    def arrays(self) -> tuple:
        """The table arguments of :func:`walk`, in order (hash map, rows, slots, counters)."""
        return (self._hkeys, self._hidx, self.inf_key, self.inf_start, self.inf_touch, self.slot_code, self.regret,
                self.avg, self._counters)

    @property
    def num_infosets(self) -> int:
        return int(self._counters[N_INF])

    @property
    def num_slots(self) -> int:
        return int(self._counters[N_SLOTS])

    @property
    def nodes(self) -> int:
        return int(self._counters[NODES])
