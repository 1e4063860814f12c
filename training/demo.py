"""``truco demo``: the project's main job in miniature, on an embedded default config.

A couple of minutes of PPO self-play on Argentine Truco, then a duplicate-deal tournament of the trained policy
against the random and the heuristic agents, with the Markdown table on the terminal and CSV, JSON and PNG files in
the output folder. Everything is seeded: the same command gives the same numbers on the same machine.
"""

from __future__ import annotations

import os
from pathlib import Path

from training.evaluate import default_workers, markdown_report, run_tournament, write_outputs
from training.ppo_legacy.train import PPOArgs, train

#: The embedded training config: small enough for a few minutes on two cores, enough to beat random clearly.
DEMO_CONFIG = {
    "preset": "argentine", "seed": 1, "total_updates": 40, "num_tables": 32, "batch_steps": 2048,
    "minibatch_size": 512, "learning_rate": 1e-3, "league": {"self": 0.5, "random": 0.5},
    "eval_every": 0, "eval_opponents": ("random",), "checkpoint_every": 10,
}
QUICK = {"total_updates": 2, "batch_steps": 512, "num_tables": 8}


def run_demo(out: str = "runs/demo", matches: int = 200, seed: int = 0, quick: bool = False) -> int:
    folder = Path(out)
    settings = {**DEMO_CONFIG, **(QUICK if quick else {})}
    print(f"truco demo: training PPO on {settings['preset']} for {settings['total_updates']} updates "
          f"(embedded config) -> {folder / 'train'}", flush=True)
    policy = train(PPOArgs(run_dir=str(folder / "train"), **settings), progress=True)
    agents = [f"ppo:{policy}", "heuristic", "random"]
    print(f"truco demo: duplicate-deal tournament, {matches} matches per pairing: {', '.join(agents)}", flush=True)
    summary, meta = run_tournament(agents, [settings["preset"]], matches, seed=seed,
                                   workers=default_workers(), progress=True)
    summary = _rename(summary, agents[0], "ppo (demo)")
    meta["agents"] = ["ppo (demo)" if a == agents[0] else a for a in meta["agents"]]
    print(markdown_report(summary))
    files = write_outputs(folder / "eval", summary, meta)
    print(f"truco demo: policy {policy}; tournament files in {folder / 'eval'}: "
          + ", ".join(os.path.basename(str(f)) for f in files))
    return 0


def _rename(value, old: str, new: str):
    """Shorten the temporary policy path to a readable name in every table of the summary."""
    if isinstance(value, dict):
        return {_rename(k, old, new): _rename(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, old, new) for v in value]
    return new if value == old else value
