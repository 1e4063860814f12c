"""``truco demo``: the project's main job in miniature, on an embedded default config.

A couple of minutes of PPO self-play on Argentine Truco, then a duplicate-deal tournament of the trained policy
against the random and the heuristic agents, with the Markdown table on the terminal and CSV, JSON and PNG files in
the output folder. Everything is seeded: the same command gives the same numbers on the same machine.
"""

from __future__ import annotations

import logging
from pathlib import Path

from training.evaluate import (
    EVAL_MARKERS,
    default_workers,
    markdown_report,
    rename_agent,
    run_tournament,
    write_outputs,
)
from training.outputs import output_folder
from training.ppo import PPOArgs, train

#: The embedded training config: small enough for a few minutes on two cores, enough to beat random clearly.
DEMO_CONFIG = {
    "preset": "argentine", "seed": 1, "total_decisions": 300_000, "batch_decisions": 8192, "tables": 64,
    "learning_rate": 1e-3, "scripted": {"random": 0.3}, "eval_every": 0, "eval_opponents": (),
    "checkpoint_every": 10,
}
QUICK = {"total_decisions": 2000, "batch_decisions": 1000, "tables": 8}

logger = logging.getLogger(__name__)


def run_demo(out: str = "runs/demo", matches: int = 200, seed: int = 0, quick: bool = False) -> dict:
    """Train, then play the tournament; returns the Markdown ``report``, the trained ``policy``'s path, the
    ``eval`` folder and the tournament ``files`` written there (``truco demo`` prints the report). A demo always
    starts over: it replaces the run and the tournament files of an earlier demo in ``out`` (and is refused
    while another demo writes there)."""
    folder = Path(out)
    settings = {**DEMO_CONFIG, **(QUICK if quick else {})}
    logger.info(f"truco demo: training PPO on {settings['preset']} for {settings['total_decisions']:,} decisions "
                f"(embedded config) -> {folder / 'train'}")
    run_dir = folder / "train"
    policy = train(PPOArgs(run_dir=str(run_dir), **settings), overwrite=True)
    agents = [f"ppo:{policy}", "heuristic", "random"]
    logger.info(f"truco demo: duplicate-deal tournament, {matches} matches per pairing: {', '.join(agents)}")
    with output_folder(folder / "eval", "eval", overwrite=True, markers=EVAL_MARKERS) as tmp:
        summary, meta = run_tournament(agents, [settings["preset"]], matches, seed=seed,
                                       workers=default_workers(), progress=True)
        summary, meta = rename_agent(summary, agents[0], "ppo (demo)"), rename_agent(meta, agents[0], "ppo (demo)")
        files = [folder / "eval" / p.relative_to(tmp) for p in write_outputs(tmp, summary, meta)]
    return {"report": markdown_report(summary), "policy": policy, "eval": folder / "eval", "files": files}


