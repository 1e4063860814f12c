"""External-sampling MCCFR on the full 1v1 presets with the information-set abstraction of
:mod:`training.cfr.abstraction`.

The game learned is one hand in its match context: each iteration draws a starting score (uniform over the
scores below the target, so late-match situations such as falta envido, mão de onze and mão de ferro are
trained too), a dealer and a deal, then walks that hand for the traverser (players alternate per iteration):
every action at the traverser's abstract information sets, one sampled action (from the current strategy) at
the opponent's. The utility is the traverser's points in the hand minus the opponent's (the hand ends early
when a team reaches the target; the walk uses a ``single_hand`` copy of the rules, so the engine deals no next
hand). Regrets use regret matching (negative regrets floored at 0, as in CFR+), and
the average strategy is accumulated at the opponent's nodes with linear (iteration) weights.

Tables are Python dicts key -> [regrets], [average weights] while training and the plain checkpoint arrays of
:mod:`training.cfr.checkpoint` on disk (``kind: mccfr``), so a run resumes exactly (the RNG state is stored).
"""

from __future__ import annotations

import dataclasses
import random
import sys
import time
from pathlib import Path
from typing import TextIO

import numpy as np

from truco_env import TrucoState
from truco_env.config import TrucoConfig

from .abstraction import VERSION, VERSIONS, abstract_key, action_name, view_from_state
from .checkpoint import Checkpoint, check_compatible, load_checkpoint, save_checkpoint
from .runconfig import RunConfig

CARD_KINDS = ("play", "cover", "play_slot")


class MCCFR:
    def __init__(self, config: TrucoConfig, seed: int = 0, abstraction: str = VERSION):
        if config.num_players != 2:
            raise ValueError("MCCFR here trains 1v1 presets")
        if abstraction not in VERSIONS:
            raise ValueError(f"unknown abstraction {abstraction!r}; known: {', '.join(VERSIONS)}")
        self.config = config
        self.abstraction = abstraction
        # The walk plays one hand: a single-hand copy of the rules ends the match when the hand is over (or a
        # team reaches the target), so no next hand is dealt. The stored rules stay the preset's.
        self.walk_config = dataclasses.replace(config, single_hand=True)
        self.rng = random.Random(seed)
        self.iteration = 0
        self.table: dict[str, list] = {}  # key -> [codes, regrets, avg]
        self.touched_since = set()
        self.nodes = 0

    # --- tables ---------------------------------------------------------------------------------------------
    def _entry(self, key: str, codes: list[int]) -> list:
        entry = self.table.get(key)
        if entry is None:
            entry = self.table[key] = [codes, [0.0] * len(codes), [0.0] * len(codes)]
        return entry

    @staticmethod
    def _strategy(regrets: list[float]) -> list[float]:
        pos = [r if r > 0 else 0.0 for r in regrets]
        total = sum(pos)
        if total <= 0:
            return [1.0 / len(regrets)] * len(regrets)
        return [p / total for p in pos]

    # --- one iteration --------------------------------------------------------------------------------------
    def iterate(self, n: int = 1) -> None:
        cfg = self.config
        for _ in range(n):
            self.iteration += 1
            traverser = self.iteration % 2
            score = [self.rng.randrange(cfg.target_score), self.rng.randrange(cfg.target_score)]
            seed = self.rng.getrandbits(62)
            state = TrucoState.new(self.walk_config, seed=seed, score=score)
            self._walk(state, traverser, tuple(score), [], state.hand_index)

    def _walk(self, state: TrucoState, traverser: int, start: tuple, calls: list, hand: int) -> float:
        self.nodes += 1
        if state.is_over or state.hand_index != hand:
            sc = state.score
            d = (sc[0] - start[0]) - (sc[1] - start[1])
            return float(d if traverser == 0 else -d)
        seat = state.actor
        legal = state.legal_actions()
        view = view_from_state(state, seat, start, calls)
        key, codes = abstract_key(view, legal, self.abstraction)
        entry = self._entry(key, codes)
        self.touched_since.add(key)
        sigma = self._strategy(entry[1])
        trick = state.trick_index
        if seat == traverser:
            names = [action_name(view, c) for c in codes]
            values = []
            for i, name in enumerate(names):
                child = state.clone() if i < len(names) - 1 else state
                child.apply(name)
                new_calls = calls if name.partition(":")[0] in CARD_KINDS else calls + [(trick, seat, name)]
                values.append(self._walk(child, traverser, start, new_calls, hand))
            v = sum(s * x for s, x in zip(sigma, values))
            regrets = entry[1]
            for i, x in enumerate(values):
                r = regrets[i] + (x - v)
                regrets[i] = r if r > 0 else 0.0
            return v
        avg = entry[2]
        w = float(self.iteration)
        for i, s in enumerate(sigma):
            avg[i] += w * s
        pick = self.rng.random()
        acc = 0.0
        choice = len(sigma) - 1
        for i, s in enumerate(sigma):
            acc += s
            if pick < acc:
                choice = i
                break
        name = action_name(view, codes[choice])
        state.apply(name)
        new_calls = calls if name.partition(":")[0] in CARD_KINDS else calls + [(trick, seat, name)]
        return self._walk(state, traverser, start, new_calls, hand)

    # --- checkpoints ----------------------------------------------------------------------------------------
    def to_checkpoint(self, preset: str, extra_meta: dict | None = None) -> Checkpoint:
        keys = list(self.table)
        starts = [0]
        codes, regrets, avg = [], [], []
        for key in keys:
            c, r, a = self.table[key]
            codes.extend(c)
            regrets.extend(r)
            avg.extend(a)
            starts.append(len(codes))
        state = self.rng.getstate()
        meta = {"kind": "mccfr", "preset": preset, "rules": self.config.to_dict(), "abstraction": self.abstraction,
                "iteration": self.iteration, "solver": {"algorithm": "es-mccfr", "abstraction": self.abstraction},
                "nodes": self.nodes, "key": "abstraction-" + self.abstraction, **(extra_meta or {})}
        rng_state = np.asarray(state[1], dtype=np.int64)
        return Checkpoint(meta=meta, keys=keys, slot_start=np.asarray(starts), slot_action=np.asarray(codes),
                          regrets=np.asarray(regrets, dtype=np.float64), cumulative=np.asarray(avg, dtype=np.float64),
                          extra={"rng_state": rng_state, "rng_version": np.asarray([state[0]], dtype=np.int64),
                                 "rng_gauss": np.asarray([0 if state[2] is None else 1], dtype=np.int64)})

    def restore(self, ckpt: Checkpoint) -> None:
        self.table = {}
        for i, key in enumerate(ckpt.keys):
            lo, hi = int(ckpt.slot_start[i]), int(ckpt.slot_start[i + 1])
            self.table[key] = [[int(c) for c in ckpt.slot_action[lo:hi]], ckpt.regrets[lo:hi].tolist(),
                               ckpt.cumulative[lo:hi].tolist()]
        self.iteration = ckpt.iteration
        self.nodes = int(ckpt.meta.get("nodes", 0))
        rng = ckpt.extra.get("rng_state")
        if rng is None or len(rng) != 625:
            raise ValueError("mccfr checkpoint lacks a valid RNG state")
        version = int(ckpt.extra.get("rng_version", np.asarray([3]))[0])
        self.rng.setstate((version, tuple(int(x) for x in rng), None))


def train_mccfr(cfg: RunConfig, out: TextIO = sys.stderr, max_new_iterations: int | None = None) -> dict:
    from .train import Logger, _progress

    rules = cfg.rules()
    solver = MCCFR(rules, seed=cfg.seed, abstraction=cfg.abstraction)
    path = Path(cfg.checkpoint)
    if cfg.resume and path.exists():
        ckpt = load_checkpoint(path)
        check_compatible(ckpt, kind="mccfr", rules=rules.to_dict(),
                         solver={"algorithm": "es-mccfr", "abstraction": cfg.abstraction}, where=str(path))
        solver.restore(ckpt)
        print(f"[mccfr] resumed from {path} at iteration {solver.iteration}", file=out)
    logger = Logger(cfg.logdir)
    start_iter = solver.iteration
    bar = _progress(cfg.progress, cfg.iterations, start_iter, f"mccfr {cfg.preset}", out)
    t0 = time.perf_counter()
    last_ckpt = t0
    last_log_t, last_log_it = t0, solver.iteration
    try:
        while solver.iteration < cfg.iterations:
            if max_new_iterations is not None and solver.iteration - start_iter >= max_new_iterations:
                break
            now = time.perf_counter()
            if cfg.time_limit_s is not None and now - t0 >= cfg.time_limit_s:
                break
            step = min(100, cfg.iterations - solver.iteration)
            if max_new_iterations is not None:
                step = min(step, max_new_iterations - (solver.iteration - start_iter))
            solver.iterate(step)
            bar.update(step)
            k = solver.iteration
            if k // cfg.log_every != (k - step) // cfg.log_every:
                now = time.perf_counter()
                rate = (k - last_log_it) / max(now - last_log_t, 1e-9)
                last_log_t, last_log_it = now, k
                regrets = [max(max(e[1]), 0.0) for e in solver.table.values()]
                logger.scalars(k, {"infosets/total": len(solver.table),
                                   "infosets/touched": len(solver.touched_since),
                                   "regret/average": (sum(regrets) / len(regrets) / k) if regrets else 0.0,
                                   "perf/iterations_per_s": rate,
                                   "perf/nodes_per_iteration": solver.nodes / max(k, 1)})
                solver.touched_since = set()
                bar.set_postfix(infosets=len(solver.table), it_s=f"{rate:.0f}")
            if time.perf_counter() - last_ckpt >= cfg.checkpoint_every_s:
                save_checkpoint(path, solver.to_checkpoint(cfg.preset))
                last_ckpt = time.perf_counter()
    finally:
        bar.close()
        logger.close()
    save_checkpoint(path, solver.to_checkpoint(cfg.preset))
    run_s = time.perf_counter() - t0
    new = solver.iteration - start_iter
    summary = {"preset": cfg.preset, "iterations": solver.iteration, "infosets": len(solver.table),
               "seconds": run_s, "iterations_per_s": new / run_s if run_s > 0 else 0.0, "checkpoint": str(path)}
    print(f"[mccfr] {cfg.preset}: iteration {solver.iteration}, {len(solver.table)} abstract infosets, "
          f"{summary['iterations_per_s']:.0f} it/s; checkpoint {path}", file=out)
    if cfg.eval:
        summary["eval"] = evaluate_against(cfg, path, out)
    return summary


def evaluate_against(cfg: RunConfig, path: Path, out: TextIO) -> dict:
    """Duplicate matches of the checkpoint (``cfr:PATH``) against ``cfg.eval['opponent']`` in the run's preset,
    through :func:`training.evaluate.run_tournament` (``cfg.eval``: ``opponent``, ``matches``, ``workers``)."""
    from training.evaluate import run_tournament

    opponent = str(cfg.eval.get("opponent", "heuristic"))
    matches = int(cfg.eval.get("matches", 200))
    workers = int(cfg.eval.get("workers", 1))
    agent = f"cfr:{path}"
    summary, meta = run_tournament([agent, opponent], [cfg.preset], matches, seed=cfg.seed, workers=workers)
    row = summary["pairings"][0]
    flip = row["agent_a"] != agent
    result = {"opponent": opponent, "matches": row["matches"], "seconds": meta["seconds"]}
    for k, v in row.items():
        if k not in ("agent_a", "agent_b", "preset", "matches"):
            result[k] = v
    if flip:
        result["note"] = "pairing row is from the opponent's side"
    print(f"[mccfr] {cfg.preset}: cfr vs {opponent}: {row}", file=out)
    return result
