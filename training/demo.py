"""``truco demo``: the project's main job in miniature, on an embedded default config.

A couple of minutes of PPO self-play on Argentine Truco, then a duplicate-deal tournament of the trained policy
against the random and the heuristic agents, with the Markdown table on the terminal and CSV, JSON and PNG files in
the output folder. Everything is seeded: the same command gives the same numbers on the same machine.
"""

from __future__ import annotations

import logging
from pathlib import Path

from training.evaluate import default_workers, markdown_report, run_tournament, write_outputs
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
    ``eval`` folder and the tournament ``files`` written there (``truco demo`` prints the report)."""
    folder = Path(out)
    settings = {**DEMO_CONFIG, **(QUICK if quick else {})}
    logger.info(f"truco demo: training PPO on {settings['preset']} for {settings['total_decisions']:,} decisions "
                f"(embedded config) -> {folder / 'train'}")
    run_dir = folder / "train"
    if (run_dir / "checkpoint.safetensors").exists():  # a finished demo run: start it over
        (run_dir / "checkpoint.safetensors").unlink()
    policy = train(PPOArgs(run_dir=str(run_dir), **settings))
    agents = [f"ppo:{policy}", "heuristic", "random"]
    logger.info(f"truco demo: duplicate-deal tournament, {matches} matches per pairing: {', '.join(agents)}")
    summary, meta = run_tournament(agents, [settings["preset"]], matches, seed=seed,
                                   workers=default_workers(), progress=True)
    summary = _rename(summary, agents[0], "ppo (demo)")
    meta["agents"] = ["ppo (demo)" if a == agents[0] else a for a in meta["agents"]]
    files = write_outputs(folder / "eval", summary, meta)
    return {"report": markdown_report(summary), "policy": policy, "eval": folder / "eval", "files": files}


def _rename(value, old: str, new: str):
    """Shorten the temporary policy path to a readable name in every table of the summary."""
    if isinstance(value, dict):
        return {_rename(k, old, new): _rename(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, old, new) for v in value]
    return new if value == old else value
