"""``truco demo``: the project's main job in miniature, on an embedded default config.

A couple of minutes of PPO self-play on Argentine Truco (with a progress line at least every tenth of it), then a
duplicate-deal tournament: the trained policy and the shipped ``ppo:argentine`` (the same trainer at its full
budget), each against the random and the heuristic agents. It ends with the two side by side in one small table,
so a newcomer sees what a short run and a full run each reach, and writes the tournament's CSV, JSON and PNG files
in the output folder. Everything is seeded: the same command gives the same numbers on the same machine.
"""

from __future__ import annotations

import logging
from pathlib import Path

from training.learn.ppo import PPOArgs, train_ppo
from training.measure.evaluate import EVAL_MARKERS, default_workers, run_tournament
from training.measure.tournament_files import markdown_report, rename_agent, write_outputs
from training.outputs import output_folder

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
    policy = train_ppo(PPOArgs(run_dir=str(run_dir), **settings), overwrite=True)
    trained, shipped = f"ppo:{policy}", f"ppo:{settings['preset']}"
    agents = [trained, shipped, "heuristic", "random"]
    pairs = [(a, b) for a in (trained, shipped) for b in ("heuristic", "random")]
    logger.info(f"truco demo: duplicate-deal tournament, {matches} matches per pairing: the trained policy and "
                f"{shipped} against the heuristic and random")
    with output_folder(folder / "eval", "eval", overwrite=True, markers=EVAL_MARKERS) as tmp:
        summary, meta = run_tournament(agents, [settings["preset"]], matches, seed=seed,
                                       workers=default_workers(), progress=True, pairs=pairs)
        summary, meta = rename_agent(summary, trained, DEMO_NAME), rename_agent(meta, trained, DEMO_NAME)
        files = [folder / "eval" / p.relative_to(tmp) for p in write_outputs(tmp, summary, meta)]
    report = markdown_report(summary) + "\n" + side_by_side(summary, trained, shipped)
    return {"report": report, "policy": policy, "eval": folder / "eval", "files": files}


DEMO_NAME = "ppo (demo)"


def side_by_side(summary: dict, trained: str, shipped: str) -> str:
    """The demo's last word: the short run and the shipped full run against the same opponents, same deals."""
    from agents import make_agent

    rows = {(p["agent_a"], p["agent_b"]): p for p in summary["pairings"]}
    lines = ["What a short run and a full run reach (same deals; win rate, 95% interval):", "",
             "| policy | learner decisions | vs heuristic | vs random |", "|---|---:|---:|---:|"]
    for name, spec in ((DEMO_NAME, trained), (shipped, shipped)):
        made = make_agent(spec).metadata.get("decisions")
        cells = [f"{100 * p['win_rate_a']:.1f}% [{100 * p['ci_low']:.1f}, {100 * p['ci_high']:.1f}]"
                 for p in (rows[(name, "heuristic")], rows[(name, "random")])]
        lines.append(f"| `{name}` | {f'{made:,}' if made else 'n/a'} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


