"""External-sampling MCCFR compiled end to end on the fast engine's kernel, with the ``v3`` (or ``lossless``) key
of :mod:`agents.cfr_abstraction_v3`.

Why: the Python walk of :mod:`training.cfr.mccfr` spends its time in the reference engine and in building string
keys (100-600 iterations/s); here a whole batch of iterations is one compiled call. The game, the sampling and
the update are the Python walk's: each iteration draws a starting score (uniform below the target for each team;
0-0 on a one-hand research preset, whose game starts there), a dealer and a deal, then walks that hand on a
``single_hand`` copy of the rules for the traverser (alternating by iteration): every action at the traverser's
nodes, one action sampled from the current strategy at the opponent's, where the average strategy is
accumulated with linear (iteration) weights. Regret matching floors negative regrets at 0 (as CFR+). The utility
is the hand's point difference or the change in match-winning probability (:data:`training.cfr.mccfr.UTILITIES`).
Both seats share one table. External rather than outcome sampling: it is the Python walk's scheme, so the two
engines learn the same thing, and its variance is far lower on this shallow game.

The draws differ from the Python walk (a splitmix64 counter here, Python's Mersenne Twister there), so the two do
not give the same tables bit for bit; ``tests/test_mccfr_kernel.py`` instead checks that both, with a lossless key,
reach the same exact NashConv on the research presets.

How it runs: the walk recurses over preallocated per-depth buffers (a state copy, the observation, the legal
mask, the codes and values of each depth), so nothing is allocated per node. At each node the kernel encodes the
actor's observation (``encode_obs``) and legal mask and computes the key from them, the function an agent uses at
play time. Tables: an open-addressing hash map (int64 key -> information set) and flat arrays; an information
set's row (its legal codes, regrets and average weights) is allocated on first visit behind the previous one.
Before each iteration the kernel checks there is room for any one iteration's new rows; when there is not it
returns, and Python doubles the arrays and carries on, so growing never changes a result. The generator's state
is one uint64: a checkpoint (plain arrays of :mod:`training.cfr.checkpoint`, ``kind: mccfr``, keys as decimal
text) resumes bit for bit.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit

from agents.cfr_abstraction_v3 import (
    CALL_BASE,
    MAX_LEGAL,
    VERSIONS,
    key_lossless,
    key_v3,
    legal_codes,
)
from agents.cfr_table import Checkpoint, CheckpointError
from truco_env import _kernel as K
from truco_env.config import TrucoConfig
from truco_env.fast import config_array

from .mccfr import UTILITIES

MAX_DEPTH = 64  # actions in one hand, with room: three tricks, the whole ladder, an envido and a flor chain
#: Room checked before each iteration: more new information sets (and legal actions each) than one iteration
#: visits nodes (the most measured was about 4,600, in argentine-flor with uniform strategies).
MARGIN = 1 << 15
# counters
_N_INF, _N_SLOTS, _NODES = 0, 1, 2


@njit(cache=True, inline="always")
def _slot_of(key, mask):
    z = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((z ^ (z >> np.uint64(31))) & np.uint64(mask))


@njit(cache=True)
def _insert_key(hkeys, hidx, key, index):
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
def _rebuild(hkeys, hidx, inf_key, n):
    """The hash map of the first ``n`` keys; returns the index of a duplicate key, or -1."""
    hidx[:] = -1
    for j in range(n):
        if not _insert_key(hkeys, hidx, inf_key[j], j):
            return j
    return -1


@njit(cache=True)
def _row(key, n, codes, hkeys, hidx, inf_key, inf_start, slot_code, counters):
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
    j = counters[_N_INF]
    lo = counters[_N_SLOTS]
    if j + 1 >= inf_key.shape[0] or lo + n > slot_code.shape[0] or 2 * (j + 1) > hkeys.shape[0]:
        raise RuntimeError("mccfr kernel: table full inside an iteration (raise MARGIN)")
    hkeys[i] = key
    hidx[i] = j
    inf_key[j] = key
    for k in range(n):
        slot_code[lo + k] = codes[k]
    inf_start[j + 1] = lo + n
    counters[_N_INF] = j + 1
    counters[_N_SLOTS] = lo + n
    return j


@njit(cache=True, inline="always")
def _copy(src, dst):
    """``dst[:] = src`` (an element loop: numba's slice assignment took eight times as long here)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True)
def _win_prob(a, b, target, equity):
    if a >= target or b >= target:
        return 1.0 if a > b else (0.0 if b > a else 0.5)
    return equity[a, b]


@njit(cache=True)
def node_key(st, cfg, lossless, obs, mask, codes, ids, hist_seat, hist_act, n_hist, hist_rel, hist_pub):
    """The key of the actor's decision in ``st`` and its legal codes and engine ids (into ``codes``, ``ids``):
    the actor's observation and mask from the kernel, then the very functions an agent calls at play time.
    ``hist_seat``/``hist_act``: the hand's actions so far (``lossless`` only). Returns (key, count)."""
    seat = st[K.S_ACTOR]
    K.encode_obs(st, cfg, seat, obs)
    K.legal_mask(st, cfg, mask)
    n = legal_codes(obs, mask, cfg, codes, ids)
    if not lossless:
        return key_v3(obs, mask, cfg), n
    players = cfg[K.C_N]
    for i in range(n_hist):
        hist_rel[i] = (hist_seat[i] - seat) % players
        act = hist_act[i]
        hidden = act >= K.A_COVER and act < K.A_SLOT and hist_seat[i] != seat
        hist_pub[i] = -1 if hidden else act
    return key_lossless(obs, mask, hist_rel, hist_pub, n_hist), n


@njit(cache=True)
def _enter(d, traverser, iteration, cfg, lossless, states, obs, masks, codes, ids, sigma, frame,
           hist_seat, hist_act, hist_rel, hist_pub, hkeys, hidx, inf_key, inf_start, inf_touch, slot_code, regret,
           avg, counters, rng):
    """Arrive at ``states[d]``, a decision: find its row, set its strategy into ``sigma[d]`` and its frame, and
    start its first child (the traverser's) or its sampled one (the opponent's) in ``states[d + 1]``."""
    if d + 1 >= MAX_DEPTH:
        raise RuntimeError("mccfr kernel: a hand deeper than MAX_DEPTH")
    st = states[d]
    seat = st[K.S_ACTOR]
    c = codes[d]
    a = ids[d]
    key, n = node_key(st, cfg, lossless, obs[d], masks[d], c, a, hist_seat, hist_act, d, hist_rel, hist_pub)
    j = _row(key, n, c, hkeys, hidx, inf_key, inf_start, slot_code, counters)
    inf_touch[j] = iteration
    lo = inf_start[j]
    sig = sigma[d]
    total = 0.0
    for k in range(n):
        r = regret[lo + k]
        sig[k] = max(0.0, r)
        total += sig[k]
    for k in range(n):
        sig[k] = sig[k] / total if total > 0.0 else 1.0 / n
    frame[d, 0] = n
    frame[d, 1] = lo
    frame[d, 2] = 0  # the child being walked
    frame[d, 3] = 1 if seat == traverser else 0
    hist_seat[d] = seat
    choice = 0
    if seat != traverser:
        w = float(iteration)
        for k in range(n):
            avg[lo + k] += w * sig[k]
        pick = float(K._splitmix(rng, 0) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
        acc = 0.0
        choice = n - 1
        for k in range(n):
            acc += sig[k]
            if pick < acc:
                choice = k
                break
    child = states[d + 1]
    _copy(st, child)
    K.apply(child, cfg, a[choice])
    hist_act[d] = a[choice]


@njit(cache=True)
def _walk(traverser, iteration, cfg, lossless, use_equity, equity, start0, start1,
          states, obs, masks, codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub,
          hkeys, hidx, inf_key, inf_start, inf_touch, slot_code, regret, avg, counters, rng):
    """The traverser's expected utility of the hand from ``states[0]``: every action at its nodes, one sampled
    action at the opponent's; the tables are updated on the way back. A depth-first walk over an explicit stack
    of frames (numba's recursion does not survive its on-disk cache)."""
    target = cfg[K.C_TARGET]
    d = 0
    while True:
        # descend until a terminal
        while states[d][K.S_PHASE] != K.OVER:
            counters[_NODES] += 1
            _enter(d, traverser, iteration, cfg, lossless, states, obs, masks, codes, ids, sigma, frame,
                   hist_seat, hist_act, hist_rel, hist_pub, hkeys, hidx, inf_key, inf_start, inf_touch, slot_code,
                   regret, avg, counters, rng)
            d += 1
        counters[_NODES] += 1
        st = states[d]
        s0 = st[K.S_SCORE]
        s1 = st[K.S_SCORE + 1]
        if use_equity:
            u = 100.0 * (_win_prob(s0, s1, target, equity) - _win_prob(start0, start1, target, equity))
        else:
            u = float((s0 - start0) - (s1 - start1))
        if traverser == 1:
            u = -u
        # climb: hand the value to the parents until a traverser node has a child left to walk
        while True:
            if d == 0:
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
                _copy(states[d], child)
                K.apply(child, cfg, ids[d, k])
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


@njit(cache=True)
def _run(count, first_iteration, random_score, cfg, lossless, use_equity, equity,
         states, obs, masks, codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub,
         hkeys, hidx, inf_key, inf_start, inf_touch, slot_code, regret, avg, counters, rng, margin):
    """Up to ``count`` iterations, numbered from ``first_iteration``; returns how many ran (fewer when the
    tables need to grow first)."""
    target = cfg[K.C_TARGET]
    for done in range(count):
        j = counters[_N_INF]
        if (j + margin >= inf_key.shape[0] or counters[_N_SLOTS] + MAX_LEGAL * margin > slot_code.shape[0]
                or 2 * (j + margin) > hkeys.shape[0]):
            return done
        iteration = first_iteration + done
        traverser = iteration % 2
        s0 = 0
        s1 = 0
        if random_score:
            s0 = K._below(rng, 0, target)
            s1 = K._below(rng, 0, target)
        st = states[0]
        K.new_match(st, cfg, K._below(rng, 0, cfg[K.C_N]), s0, s1)
        K._rng_deal(st, cfg, rng, 0)
        _walk(traverser, iteration, cfg, lossless, use_equity, equity, s0, s1,
              states, obs, masks, codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub,
              hkeys, hidx, inf_key, inf_start, inf_touch, slot_code, regret, avg, counters, rng)
    return count


def _pow2(n: int) -> int:
    return 1 << max(int(n) - 1, 1).bit_length()


class KernelMCCFR:
    """Self-play external-sampling MCCFR on the kernel (see the module docstring). ``iterate(n)`` runs n
    iterations; the tables are ``regret`` / ``avg`` rows, one per information set, in first-visit order."""

    #: Iterations per step of the training loop (between progress updates, time checks and checkpoints).
    batch = 2000

    def __init__(self, config: TrucoConfig, seed: int = 0, abstraction: str = "v3", utility: str = "points",
                 capacity: int = 1 << 16):
        if config.num_players != 2:
            raise ValueError("MCCFR here trains 1v1 presets")
        if abstraction not in VERSIONS:
            raise ValueError(f"unknown abstraction {abstraction!r} for the compiled engine; known: "
                             f"{', '.join(VERSIONS)}")
        if utility not in UTILITIES:
            raise ValueError(f"unknown utility {utility!r}; known: {', '.join(UTILITIES)}")
        self.config = config
        self.abstraction = abstraction
        self.utility = utility
        self.walk_config = dataclasses.replace(config, single_hand=True)
        self._cfg = config_array(self.walk_config)
        self._random_score = not config.single_hand  # a one-hand research preset is a game from 0-0
        self._equity = np.zeros((1, 1))
        if utility == "match_equity":
            from agents.heuristic import match_equity_table

            self._equity = np.asarray(match_equity_table(config.target_score, config.family), dtype=np.float64)
        self.rng = np.array([seed], dtype=np.uint64)
        self.iteration = 0
        self._counters = np.zeros(3, dtype=np.int64)
        self._alloc(max(int(capacity), 4 * MARGIN), 0)
        d, w = MAX_DEPTH, MAX_LEGAL
        self._work = (np.zeros((d, K.STATE_SIZE), np.int32), np.zeros((d, K.OBS_SIZE), np.float32),
                      np.zeros((d, K.NUM_ACTIONS), np.int8), np.zeros((d, w), np.int32), np.zeros((d, w), np.int32),
                      np.zeros((d, w), np.float64), np.zeros((d, w), np.float64), np.zeros((d, 4), np.int64),
                      np.zeros(d, np.int32), np.zeros(d, np.int32), np.zeros(d, np.int32), np.zeros(d, np.int32))

    # --- tables -------------------------------------------------------------------------------------------------
    def _alloc(self, infosets: int, slots: int, keep: int = 0) -> None:
        """Room for ``infosets`` information sets and ``slots`` legal actions (plus one iteration's margin),
        keeping the first ``keep`` rows."""
        size = _pow2(infosets)
        slots = max(int(slots), 4 * size) + MAX_LEGAL * MARGIN
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
        _rebuild(self._hkeys, self._hidx, self.inf_key, keep)

    def _grow(self) -> None:
        """Double the tables (between iterations: the results do not depend on the sizes)."""
        self._alloc(2 * len(self.inf_key), 2 * len(self.slot_code), keep=self.num_infosets)

    @property
    def num_infosets(self) -> int:
        return int(self._counters[_N_INF])

    @property
    def num_slots(self) -> int:
        return int(self._counters[_N_SLOTS])

    @property
    def nodes(self) -> int:
        return int(self._counters[_NODES])

    def take_touched(self, since: int) -> int:
        """Information sets visited after iteration ``since``."""
        return int((self.inf_touch[:self.num_infosets] > since).sum())

    def average_regret(self) -> float:
        """Mean over information sets of max_a R+(I, a) / T (the training loop's ``regret/average``)."""
        n = self.num_infosets
        if n == 0 or self.iteration == 0:
            return 0.0
        best = np.maximum.reduceat(np.maximum(self.regret[:self.num_slots], 0.0), self.inf_start[:n])
        return float(best.mean() / self.iteration)

    # --- iterations ---------------------------------------------------------------------------------------------
    def iterate(self, n: int = 1) -> None:
        left = int(n)
        while left > 0:
            done = _run(left, self.iteration + 1, self._random_score, self._cfg, self.abstraction == "lossless",
                        self.utility == "match_equity", self._equity, *self._work, self._hkeys, self._hidx,
                        self.inf_key, self.inf_start, self.inf_touch, self.slot_code, self.regret, self.avg,
                        self._counters, self.rng, MARGIN)
            self.iteration += done
            left -= done
            if left > 0:
                self._grow()

    # --- checkpoints --------------------------------------------------------------------------------------------
    def solver_meta(self) -> dict:
        """The settings a resumed run must share (``check_compatible``)."""
        meta = {"algorithm": "es-mccfr", "abstraction": self.abstraction, "engine": "kernel"}
        if self.utility != "points":
            meta["utility"] = self.utility
        return meta

    def to_checkpoint(self, preset: str, extra_meta: dict | None = None) -> Checkpoint:
        n, slots = self.num_infosets, self.num_slots
        meta = {"kind": "mccfr", "preset": preset, "rules": self.config.to_dict(), "abstraction": self.abstraction,
                "iteration": self.iteration, "solver": self.solver_meta(), "nodes": self.nodes,
                "key": "abstraction-" + self.abstraction, **(extra_meta or {})}
        return Checkpoint(meta=meta, keys=self.inf_key[:n].astype(str).tolist(),
                          slot_start=self.inf_start[:n + 1].copy(), slot_action=self.slot_code[:slots].copy(),
                          regrets=self.regret[:slots].copy(), cumulative=self.avg[:slots].copy(),
                          extra={"rng_state": self.rng.view(np.int64).copy()})

    def restore(self, ckpt: Checkpoint) -> None:
        """Continue from ``ckpt`` (checked for this run's settings by the caller); CheckpointError if its arrays
        cannot be this engine's tables."""
        rng = ckpt.extra.get("rng_state")  # one splitmix64 word (the Python walk's holds 625 Mersenne Twister words)
        if rng is None or rng.shape != (1,) or rng.dtype != np.int64:
            raise CheckpointError("mccfr checkpoint lacks the compiled engine's generator state (rng_state: one "
                                  "int64)")
        try:
            keys = np.fromiter((int(k) for k in ckpt.keys), dtype=np.int64, count=len(ckpt.keys))
        except (ValueError, OverflowError):
            raise CheckpointError("mccfr checkpoint keys are not the compiled engine's integer keys") from None
        counts = np.diff(ckpt.slot_start)
        if len(counts) and (counts.max() > MAX_LEGAL or ckpt.slot_action.min() < 0
                            or ckpt.slot_action.max() >= CALL_BASE + K.NUM_ACTIONS - K.A_TRUCO):
            raise CheckpointError("mccfr checkpoint rows are not abstract action codes")
        n, slots = len(keys), len(ckpt.slot_action)
        self._alloc(max(2 * n, 4 * MARGIN), 2 * slots)
        self._counters[:] = (n, slots, int(ckpt.meta.get("nodes", 0)))
        self.inf_key[:n] = keys
        self.inf_start[:n + 1] = ckpt.slot_start
        self.slot_code[:slots] = ckpt.slot_action
        self.regret[:slots] = ckpt.regrets
        self.avg[:slots] = ckpt.cumulative
        if _rebuild(self._hkeys, self._hidx, self.inf_key, n) >= 0:
            raise CheckpointError("mccfr checkpoint holds one key twice")
        self.iteration = ckpt.iteration
        self.rng[:] = rng.view(np.uint64)


def tree_keys(tree) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(lossless key as text, legal codes, engine ids) of each information set of an exact research tree
    (:mod:`training.cfr.tree`), from its representative state as the environment shows it to the actor."""
    from agents.cfr_abstraction_v3 import state_key

    from .tree import infoset_states

    cfg = config_array(tree.config)
    out = []
    for state in infoset_states(tree):
        key, codes, ids = state_key(state, state.actor, cfg, "lossless")
        out.append((str(key), codes, ids))
    return out


def tree_policy(tree, ckpt: Checkpoint, keys: list | None = None) -> np.ndarray:
    """The average strategy of a ``lossless`` MCCFR checkpoint (either engine: they share the key) as a policy
    over the slots of the exact tree of a research preset, for :func:`training.cfr.solver.nash_conv`; uniform at
    information sets the walk never reached. ``keys``: :func:`tree_keys` of the tree, when already computed."""
    from .solver import uniform_policy

    if ckpt.meta.get("abstraction") != "lossless":
        raise ValueError(f"tree_policy needs a lossless checkpoint, got abstraction {ckpt.meta.get('abstraction')!r}")
    index = {key: i for i, key in enumerate(ckpt.keys)}
    probs = ckpt.average_policy()
    policy = uniform_policy(tree)
    for info, (key, codes, ids) in enumerate(tree_keys(tree) if keys is None else keys):
        row = index.get(key)
        if row is None:
            continue
        lo, hi = ckpt.slot_start[row], ckpt.slot_start[row + 1]
        if not np.array_equal(ckpt.slot_action[lo:hi], codes):
            raise ValueError(f"checkpoint row {row} has other actions than its tree information set {info}")
        by_id = dict(zip(ids.tolist(), probs[lo:hi].tolist()))
        s0, s1 = tree.slot_start[info], tree.slot_start[info + 1]
        policy[s0:s1] = [by_id[int(a)] for a in tree.slot_action[s0:s1]]
    return policy
