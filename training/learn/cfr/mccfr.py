"""An MCCFR run (``truco train cfr`` with ``trainer: mccfr``): the loop around the compiled walk of
:mod:`training.learn.cfr.mccfr_kernel`, with its progress bar, TensorBoard scalars, time limit, checkpoints, exact resume
and end-of-run evaluation.

Why apart from the walk: the walk is one compiled call per batch of iterations; everything that talks to the
disk, the clock or the person watching is here, in Python, where it is read and tested.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import TextIO

from agents.cfr.table import load_checkpoint
from training.learn.cfr.checkpoint import check_compatible, save_checkpoint
from training.learn.cfr.mccfr_kernel import KernelMCCFR
from training.learn.cfr.runconfig import RunConfig

logger = logging.getLogger(__name__)


def train_mccfr(cfg: RunConfig, out: TextIO = sys.stderr, max_new_iterations: int | None = None) -> dict:
    """Run (or resume) MCCFR as configured; returns a summary dict. The progress bar goes to ``out``; the status
    lines (resume, final iteration, evaluation) to this module's logger."""
    from training.learn.cfr.logs import Logger, _progress

    rules = cfg.rules()
    t0 = time.perf_counter()
    path = Path(cfg.checkpoint)
    ckpt = load_checkpoint(path) if cfg.resume and path.exists() else None
    solver = KernelMCCFR(rules, seed=cfg.seed, abstraction=cfg.abstraction, utility=cfg.utility)
    if ckpt is not None:
        check_compatible(ckpt, kind="mccfr", rules=rules.to_dict(), solver=solver.solver_meta(), where=str(path))
        solver.restore(ckpt)
        logger.info(f"[mccfr] resumed from {path} at iteration {solver.iteration}")
    board = Logger(cfg.logdir, solver.iteration)
    start_iter = solver.iteration
    bar = _progress(cfg.progress, cfg.iterations, start_iter, f"mccfr {cfg.preset}", out)
    last_ckpt = t0
    last_log_t, last_log_it = t0, solver.iteration
    try:
        while solver.iteration < cfg.iterations:
            if max_new_iterations is not None and solver.iteration - start_iter >= max_new_iterations:
                break
            now = time.perf_counter()
            if cfg.time_limit_s is not None and now - t0 >= cfg.time_limit_s:
                break
            step = min(solver.batch, cfg.iterations - solver.iteration)
            if max_new_iterations is not None:
                step = min(step, max_new_iterations - (solver.iteration - start_iter))
            solver.iterate(step)
            bar.update(step)
            k = solver.iteration
            if k // cfg.log_every != (k - step) // cfg.log_every:
                now = time.perf_counter()
                rate = (k - last_log_it) / max(now - last_log_t, 1e-9)
                touched = solver.take_touched(last_log_it)
                last_log_t, last_log_it = now, k
                board.scalars(k, {"infosets/total": solver.num_infosets,
                                   "infosets/touched": touched,
                                   "regret/average": solver.average_regret(),
                                   "perf/iterations_per_s": rate,
                                   "perf/nodes_per_iteration": solver.nodes / max(k, 1)})
                bar.set_postfix(infosets=solver.num_infosets, it_s=f"{rate:.0f}")
            if time.perf_counter() - last_ckpt >= cfg.checkpoint_every_s:
                save_checkpoint(path, solver.to_checkpoint(cfg.preset))
                last_ckpt = time.perf_counter()
    finally:
        bar.close()
        board.close()
    save_checkpoint(path, solver.to_checkpoint(cfg.preset))
    run_s = time.perf_counter() - t0
    new = solver.iteration - start_iter
    summary = {"preset": cfg.preset, "iterations": solver.iteration, "infosets": solver.num_infosets,
               "seconds": run_s, "iterations_per_s": new / run_s if run_s > 0 else 0.0, "checkpoint": str(path)}
    logger.info(f"[mccfr] {cfg.preset}: iteration {solver.iteration}, {solver.num_infosets} abstract infosets, "
                f"{summary['iterations_per_s']:.0f} it/s; checkpoint {path}")
    if cfg.eval:
        summary["eval"] = evaluate_against(cfg, path)
    return summary


def evaluate_against(cfg: RunConfig, path: Path) -> dict:
    """Duplicate matches of the checkpoint (``cfr:PATH``) against ``cfg.eval.opponent`` in the run's preset,
    through :func:`training.measure.evaluate.run_tournament` (``cfg.eval``: ``opponent``, ``matches``, ``workers``,
    ``seed``)."""
    from training.measure.evaluate import run_tournament

    opponent, matches, workers = cfg.eval.opponent, cfg.eval.matches, cfg.eval.workers
    seed = cfg.seed if cfg.eval.seed is None else cfg.eval.seed
    agent = f"cfr:{path}"
    summary, meta = run_tournament([agent, opponent], [cfg.preset], matches, seed=seed, workers=workers)
    row = summary["pairings"][0]
    flip = row["agent_a"] != agent
    result = {"opponent": opponent, "matches": row["matches"], "seed": seed, "seconds": meta["seconds"]}
    for k, v in row.items():
        if k not in ("agent_a", "agent_b", "preset", "matches"):
            result[k] = v
    if flip:
        result["note"] = "pairing row is from the opponent's side"
    logger.info(f"[mccfr] {cfg.preset}: cfr vs {opponent}: {row}")
    return result
