"""Training loops behind ``truco train cfr --config FILE``: progress bar, TensorBoard, checkpoints and resume.

``train_cfr(cfg)`` dispatches on ``cfg.trainer``: ``exact`` (full-traversal CFR+/linear/DCFR on a research preset,
exact NashConv) or ``mccfr`` (see :mod:`training.learn.cfr.mccfr`).

TensorBoard scalars (``logdir``): ``exploitability/nash_conv`` and ``exploitability/nash_conv_relative`` (of the
average strategy, exact), ``regret/average`` (mean over infosets of max_a R+(I, a) / T), ``regret/increment``
(mean |instantaneous regret| of the last iteration), ``infosets/touched``, ``perf/iterations_per_s``.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import TextIO

import numpy as np

from agents.cfr.table import Checkpoint, load_checkpoint
from training.learn.cfr.checkpoint import check_compatible, save_checkpoint
from training.learn.cfr.logs import Logger, _progress
from training.learn.cfr.runconfig import RunConfig
from training.learn.cfr.solver import CFRSolver
from training.learn.cfr.tree import GameTree, tree_for

logger = logging.getLogger(__name__)


def average_regret(tree_slot_start: np.ndarray, regrets: np.ndarray, iteration: int) -> float:
    """Mean over infosets of max_a R+(I, a) / T: the bound on average regret that CFR drives to zero."""
    if iteration == 0 or len(regrets) == 0:
        return 0.0
    return float(np.maximum.reduceat(np.maximum(regrets, 0.0), tree_slot_start[:-1]).mean() / iteration)


def exact_checkpoint(solver: CFRSolver, cfg: RunConfig, history: list, nash: float | None) -> Checkpoint:
    tree = solver.tree
    meta = {"kind": "exact", "preset": cfg.preset, "rules": tree.config.to_dict(),
            "fingerprint": tree.fingerprint(), "iteration": solver.iteration, "solver": solver.params(),
            "nash_conv": nash, "utility_range": tree.utility_range, "history": history,
            "key": "information_state_string"}
    return Checkpoint(meta=meta, keys=tree.infoset_keys, slot_start=tree.slot_start,
                      slot_action=tree.slot_action, regrets=solver.regrets, cumulative=solver.cumulative)


def restore_exact(solver: CFRSolver, path: str | Path, cfg: RunConfig | None = None,
                  ckpt: Checkpoint | None = None) -> list:
    """Load ``path`` (or ``ckpt``, already read from it) into ``solver`` after checking it belongs to the same
    game and settings; returns the NashConv history stored with it."""
    ckpt = ckpt if ckpt is not None else load_checkpoint(path)
    tree = solver.tree
    check_compatible(ckpt, kind="exact", rules=tree.config.to_dict(), fingerprint=tree.fingerprint(),
                     solver=solver.params(), where=str(path))
    if len(ckpt.regrets) != tree.num_slots:
        raise ValueError(f"{path}: {len(ckpt.regrets)} slots, this game has {tree.num_slots}")
    solver.regrets = ckpt.regrets.astype(np.float64).copy()
    solver.cumulative = ckpt.cumulative.astype(np.float64).copy()
    solver.iteration = ckpt.iteration
    return list(ckpt.meta.get("history") or [])


def train_exact(cfg: RunConfig, out: TextIO = sys.stderr, max_new_iterations: int | None = None,
                tree: GameTree | None = None) -> dict:
    """Run (or resume) exact CFR as configured. ``max_new_iterations`` stops early (tests use it to simulate
    an interruption). Returns a summary dict. The progress bar goes to ``out``; the status lines (tree size,
    resume, final NashConv) to this module's logger."""
    rules = cfg.rules()
    ckpt_path = Path(cfg.checkpoint)
    saved = None
    if cfg.resume and ckpt_path.exists():
        # read and check the checkpoint before the tree is built (20 s for argentine-mini): a broken, hostile or
        # foreign file is refused at once, not after the build
        saved = load_checkpoint(ckpt_path)
        check_compatible(saved, kind="exact", rules=rules.to_dict(), where=str(ckpt_path))
    t0 = time.perf_counter()
    tree = tree if tree is not None else tree_for(rules)
    build_s = time.perf_counter() - t0
    size = tree.summary()
    logger.info(f"[cfr] {cfg.preset}: {size['deals']} deals, {size['histories']} histories, "
                f"{sum(size['infosets'])} infosets ({size['slots']} infoset-actions), utility range "
                f"{size['utility_range']:g}; tree built in {build_s:.1f}s")
    solver = CFRSolver(tree, **cfg.solver_params())
    history: list = []
    if saved is not None:
        history = restore_exact(solver, ckpt_path, ckpt=saved)
        logger.info(f"[cfr] resumed from {ckpt_path} at iteration {solver.iteration}")
    board = Logger(cfg.logdir, solver.iteration)
    urange = tree.utility_range
    target = None if cfg.target_nash_conv is None else cfg.target_nash_conv * urange
    nash = history[-1][1] if history else None
    start_iter = solver.iteration
    bar = _progress(cfg.progress, cfg.iterations, start_iter, f"cfr {cfg.preset}", out)
    t_run = time.perf_counter()
    last_t, last_it = t_run, solver.iteration
    reached = nash is not None and target is not None and nash <= target
    try:
        while solver.iteration < cfg.iterations and not reached:
            if max_new_iterations is not None and solver.iteration - start_iter >= max_new_iterations:
                break
            solver.iterate(1)
            bar.update(1)
            k = solver.iteration
            if k % cfg.eval_every == 0 or k == cfg.iterations:
                nash = solver.nash_conv()
                history.append([k, nash])
                now = time.perf_counter()
                rate = (k - last_it) / max(now - last_t, 1e-9)
                last_t, last_it = now, k
                board.scalars(k, {"exploitability/nash_conv": nash,
                                   "exploitability/nash_conv_relative": nash / urange,
                                   "regret/average": average_regret(tree.slot_start, solver.regrets, k),
                                   "regret/increment": solver.last_regret_mean,
                                   "infosets/touched": tree.num_infosets,
                                   "perf/iterations_per_s": rate})
                bar.set_postfix(nash_conv=f"{nash:.2e}", rel=f"{nash / urange:.1e}", it_s=f"{rate:.0f}")
                reached = target is not None and nash <= target
            if k % cfg.checkpoint_every == 0:
                save_checkpoint(ckpt_path, exact_checkpoint(solver, cfg, history, nash))
    finally:
        bar.close()
        board.close()
    if nash is None or not history or history[-1][0] != solver.iteration:
        nash = solver.nash_conv()
        history.append([solver.iteration, nash])
    save_checkpoint(ckpt_path, exact_checkpoint(solver, cfg, history, nash))
    run_s = time.perf_counter() - t_run
    new = solver.iteration - start_iter
    summary = {"preset": cfg.preset, "iterations": solver.iteration, "nash_conv": nash,
               "nash_conv_relative": nash / urange, "utility_range": urange, "seconds": run_s,
               "build_seconds": build_s, "iterations_per_s": new / run_s if run_s > 0 else 0.0,
               "target_reached": bool(target is not None and nash <= target), "checkpoint": str(ckpt_path),
               **{f"tree_{k}": v for k, v in size.items()}}
    logger.info(f"[cfr] {cfg.preset}: iteration {solver.iteration}, NashConv {nash:.3e} "
                f"({nash / urange:.2e} of the utility range {urange:g}), {summary['iterations_per_s']:.1f} it/s; "
                f"checkpoint {ckpt_path}")
    return summary


def train_cfr(cfg: RunConfig, out: TextIO = sys.stderr, **kwargs) -> dict:
    """Run the configured trainer while holding the checkpoint's lock (:func:`training.outputs.hold`): a second
    run on the same checkpoint is refused (ValueError), and temporary files of killed writes beside it are
    removed. Ctrl-C leaves the last checkpoint written (every ``checkpoint_every`` iterations or
    ``checkpoint_every_s`` seconds) as the run's resumable state."""
    from training.outputs import hold

    with hold(cfg.checkpoint, f"checkpoint {cfg.checkpoint!r}"):
        if cfg.trainer == "exact":
            return train_exact(cfg, out=out, **kwargs)
        from training.learn.cfr.mccfr import train_mccfr

        return train_mccfr(cfg, out=out, **kwargs)
