"""External-sampling MCCFR compiled end to end on the fast engine's kernel, with the ``v4``, ``v5`` or ``lossless``
key of :mod:`agents.cfr.abstraction`; 1v1, and 2v2 with ``v5``. The run around it (checkpoints, progress,
evaluation) is :mod:`training.learn.cfr.mccfr`.

Each iteration draws a starting score (uniform below the target for each team; 0-0 on a one-hand research preset,
whose game starts there), a dealer and a deal, then walks that hand on a ``single_hand`` copy of the rules for the
traverser (alternating by iteration): every action at the traverser's nodes, one action sampled from the current
strategy at the opponent's, where the average strategy is accumulated with linear (iteration) weights. Regret
matching floors negative regrets at 0 (as CFR+). The utility is the hand's point difference or the change in
match-winning probability (:data:`training.learn.cfr.runconfig.UTILITIES`). Both seats share one table. In 2v2 the
traverser is each of the four seats in turn, its team's utility its own; every seat's rows are keyed from its own
observation (``v5``), so partners, who never see each other's cards, learn rows of their own in the one table: a
team strategy of four independent seats, as the game is played (no seat acts on its partner's cards). External
rather than outcome sampling: its variance is far lower on this shallow game. ``tests/test_mccfr_kernel.py``
checks the lossless walk against the exact NashConv of the research presets.

How it runs: the walk itself (:func:`agents.cfr.walk.walk`: per-depth buffers, the key computed at each node from
the kernel's observation and legal mask, the function an agent uses at play time, and hash-map tables over flat
arrays) lives in ``agents``, since the ``cfr`` agent's play-time search (:mod:`agents.cfr.search`) runs it too;
this module draws the deals and drives it. Before each iteration the kernel checks there is room for any one
iteration's new rows; when there is not it returns, and Python doubles the arrays and carries on, so growing never
changes a result. The generator's state is one uint64: a checkpoint (plain arrays of
:mod:`training.learn.cfr.checkpoint`, ``kind: mccfr``, keys as decimal text) resumes bit for bit.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit

from agents.cfr.abstraction import CALL_BASE, KINDS, MAX_LEGAL, VERSIONS
from agents.cfr.table import Checkpoint, CheckpointError
from agents.cfr.walk import (  # noqa: F401  (node_key: re-exported, the tests and the docs name it here)
    MARGIN,
    N_INF,
    N_SLOTS,
    WalkTables,
    node_key,
    rebuild,
    search_context,
    walk,
    walk_buffers,
)
from training.learn.cfr.runconfig import UTILITIES
from truco_env import _kernel
from truco_env.config import TrucoConfig
from truco_env.fast import config_array

#: Abstractions that read a team seat's whole trick (agents/cfr/abstraction.py, key_v5).
TEAM_ABSTRACTIONS = ("v5",)


@njit(cache=True)
def _run(count, first_iteration, random_score, cfg, kind, use_equity, equity,
         states, obs, masks, codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub,
         hkeys, hidx, inf_key, inf_start, inf_touch, slot_code, regret, avg, counters, rng, margin, ctx):
    """Up to ``count`` iterations, numbered from ``first_iteration``; returns how many ran (fewer when the
    tables need to grow first)."""
    target = cfg[_kernel.C_TARGET]
    for done in range(count):
        j = counters[N_INF]
        if (j + margin >= inf_key.shape[0] or counters[N_SLOTS] + MAX_LEGAL * margin > slot_code.shape[0]
                or 2 * (j + margin) > hkeys.shape[0]):
            return done
        iteration = first_iteration + done
        traverser = iteration % cfg[_kernel.C_N]  # each seat in turn: in team play, partners keep their own tables
        s0 = 0
        s1 = 0
        if random_score:
            s0 = _kernel._below(rng, 0, target)
            s1 = _kernel._below(rng, 0, target)
        st = states[0]
        _kernel.new_match(st, cfg, _kernel._below(rng, 0, cfg[_kernel.C_N]), s0, s1)
        _kernel._rng_deal(st, cfg, rng, 0)
        walk(0, 1.0, traverser, iteration, cfg, kind, use_equity, equity, s0, s1,
             states, obs, masks, codes, ids, sigma, values, frame, hist_seat, hist_act, hist_rel, hist_pub,
             hkeys, hidx, inf_key, inf_start, inf_touch, slot_code, regret, avg, counters, rng, ctx)
    return count


class KernelMCCFR(WalkTables):
    """Self-play external-sampling MCCFR on the kernel (see the module docstring). ``iterate(n)`` runs n
    iterations; the tables are ``regret`` / ``avg`` rows, one per information set, in first-visit order."""

    #: Iterations per step of the training loop (between progress updates, time checks and checkpoints).
    batch = 2000

    def __init__(self, config: TrucoConfig, seed: int = 0, abstraction: str = "v4", utility: str = "points",
                 capacity: int = 1 << 16):
        if config.num_players not in (2, 4) or (config.num_players == 4 and abstraction not in TEAM_ABSTRACTIONS):
            raise ValueError(f"MCCFR here trains 1v1 presets, and 2v2 with the {'/'.join(TEAM_ABSTRACTIONS)} "
                             f"abstraction; not {config.num_players} players with {abstraction!r}")
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
        super().__init__(capacity, MARGIN)  # the module's MARGIN, read now (a test makes it smaller)
        self._work = walk_buffers()
        self._ctx = search_context()

    def _grow(self) -> None:
        self.grow(MARGIN)

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
            done = _run(left, self.iteration + 1, self._random_score, self._cfg, KINDS[self.abstraction],
                        self.utility == "match_equity", self._equity, *self._work, *self.arrays[:-1],
                        self._counters, self.rng, MARGIN, self._ctx)
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
        rng = ckpt.extra.get("rng_state")  # one splitmix64 word
        if rng is None or rng.shape != (1,) or rng.dtype != np.int64:
            raise CheckpointError("mccfr checkpoint lacks the compiled engine's generator state (rng_state: one "
                                  "int64)")
        try:
            keys = np.fromiter((int(k) for k in ckpt.keys), dtype=np.int64, count=len(ckpt.keys))
        except (ValueError, OverflowError):
            raise CheckpointError("mccfr checkpoint keys are not the compiled engine's integer keys") from None
        counts = np.diff(ckpt.slot_start)
        if len(counts) and (counts.max() > MAX_LEGAL or ckpt.slot_action.min() < 0
                            or ckpt.slot_action.max() >= CALL_BASE + _kernel.NUM_ACTIONS - _kernel.A_TRUCO):
            raise CheckpointError("mccfr checkpoint rows are not abstract action codes")
        n, slots = len(keys), len(ckpt.slot_action)
        self.alloc(max(2 * n, 4 * MARGIN), 2 * slots, MARGIN)
        self._counters[:] = (n, slots, int(ckpt.meta.get("nodes", 0)))
        self.inf_key[:n] = keys
        self.inf_start[:n + 1] = ckpt.slot_start
        self.slot_code[:slots] = ckpt.slot_action
        self.regret[:slots] = ckpt.regrets
        self.avg[:slots] = ckpt.cumulative
        if rebuild(self._hkeys, self._hidx, self.inf_key, n) >= 0:
            raise CheckpointError("mccfr checkpoint holds one key twice")
        self.iteration = ckpt.iteration
        self.rng[:] = rng.view(np.uint64)


def tree_keys(tree) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(lossless key as text, legal codes, engine ids) of each information set of an exact research tree
    (:mod:`training.learn.cfr.tree`), from its representative state as the environment shows it to the actor."""
    from agents.cfr.abstraction import state_key
    from training.learn.cfr.tree import infoset_states

    cfg = config_array(tree.config)
    out = []
    for state in infoset_states(tree):
        key, codes, ids = state_key(state, state.actor, cfg, "lossless")
        out.append((str(key), codes, ids))
    return out


def tree_policy(tree, ckpt: Checkpoint, keys: list | None = None) -> np.ndarray:
    """The average strategy of a ``lossless`` MCCFR checkpoint (either engine: they share the key) as a policy
    over the slots of the exact tree of a research preset, for :func:`training.learn.cfr.solver.nash_conv`; uniform at
    information sets the walk never reached. ``keys``: :func:`tree_keys` of the tree, when already computed."""
    from training.learn.cfr.solver import uniform_policy

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
