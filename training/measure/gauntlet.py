"""``truco gauntlet AGENT``: duplicate matches against a fixed population that no shipped recipe trains against.

A win rate against the opponents a policy trained with says how well it fitted them. The gauntlet is the
held-out test: a fixed, documented population per preset, in four families, none of them a training or
evaluation opponent of any training config (``truco train ppo`` refuses them, and ``tests/test_gauntlet.py`` compares
the spec strings of every config with this list). Strength in Truco is not transitive (a policy that exploits one style can lose to another), so
the families differ in kind, not only in parameters:

* **heuristic variants**: the project's look-ahead heuristic with other parameters, an aggressive bluffer
  (``bluff=0.35``: bluffs a third of its weak hands) and a tight caller (``bluff=0,respect=0.9``: never bluffs
  and reads every call as strength). The default ``heuristic`` itself is not in the gauntlet: training configs
  use it, and the strength report gives it its own column.
* **threshold rules**: :class:`agents.scripted.ThresholdAgent`, written independently of the heuristic (card
  strength thresholds, its own envido and truco rules), at its defaults and loose (``bet=0.6,call=0.4``).
* **archetypes**: a calling station (never bets, accepts everything) and a maniac (raises whenever it can):
  a policy that folds too much loses to the first, one that bluffs too much to the second.
* **trained best responses**: two networks trained by ``truco exploit`` (seed 0, the standard budget), one
  against the default heuristic and one against ``threshold``: learned play of another style. The first is the
  very run that measures the heuristic's ABR win rate in the strength report (so the heuristic's own gauntlet
  holds its exploiter). They are packaged under ``agents/policies/gauntlet/`` and made by
  ``truco gauntlet --make-opponents --preset P``.

``random`` is not in it either: training configs use it. The win rates against ``heuristic`` and ``random`` are
reported beside the gauntlet, never inside it. The mean is over the opponents, each weighing the same; the worst
case is the opponent the agent does worst against.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

from agents.base import check_preset, make_agent
from training.atomic import atomic_write, atomic_write_json
from training.measure.evaluate import run_tournament
from training.measure.match_journal import journal_beside
from training.measure.population import (  # noqa: F401
    MAIN_PRESETS,
    OPPONENTS,
    REPORT_PRESETS,
    Opponent,
    all_gauntlet_specs,
    gauntlet_specs,
)
from training.measure.statistics import Z95
from training.measure.tournament_files import OKABE_ITO, display_name, write_outputs
from training.outputs import output_folder
from truco_env.limits import clip, one_line


def make_trained_opponents(preset: str, workers: int = 2, progress: bool = True) -> list[str]:
    """Train the gauntlet's two networks of ``preset`` (``truco exploit`` against ``heuristic`` and against
    ``threshold``, seed 0, the standard budget, kept under ``runs/exploit/``) and package their learners under
    ``agents/policies/gauntlet/``. Returns the files written."""
    from agents.base import SHIPPED_DIR
    from agents.network import load_policy
    from training.learn.best_response import BRArgs
    from training.learn.ppo import save_policy
    from training.measure.exploit import cached_exploit

    written = []
    for target, name in (("heuristic", "br-heuristic"), ("threshold", "br-threshold")):
        result, run = cached_exploit(BRArgs(preset=preset, target=target, seed=0, workers=workers),
                                     progress=progress)
        if result["status"] != "complete":
            raise KeyboardInterrupt
        net, meta = load_policy(str(run / "learner.safetensors"))
        path = os.path.join(SHIPPED_DIR, "gauntlet", f"{preset}-{name}.safetensors")
        save_policy(net, path, presets=[preset], play="greedy", best_response=meta["best_response"],
                    gauntlet={"name": name, "command": result["command"], "abr": result["abr"]})
        written.append(path)
    return written


def check_inputs(agent: str, preset: str, matches: int, out: Path | None) -> None:
    if preset not in REPORT_PRESETS:
        raise ValueError(f"the gauntlet covers presets {list(REPORT_PRESETS)}, not {clip(repr(preset))}")
    check_preset(make_agent(agent), preset)
    if agent in gauntlet_specs(preset):
        raise ValueError(f"{agent!r} is itself a gauntlet opponent of {preset}")
    if matches < 2 or matches % 2:
        raise ValueError(f"matches must be an even number >= 2 (each deal is played twice with the seats "
                         f"swapped), got {matches}")
    if out is not None and out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file; give a folder (it is created if missing)")
    missing = [s for s in gauntlet_specs(preset) if s.startswith("ppo:")
               and not os.path.isfile(_packaged(s))]
    if missing:
        raise ValueError(f"the gauntlet's trained opponents {missing} are not packaged; make them with "
                         f"truco gauntlet --make-opponents --preset {preset}")


def _packaged(spec: str) -> str:
    from agents.ppo import policy_path

    return policy_path(spec.removeprefix("ppo:"))


def summarise_gauntlet(agent: str, preset: str, pairings: list[dict[str, Any]]) -> dict[str, Any]:
    """Per opponent the agent's win rate and interval, then the mean (equal weights, with its normal interval
    from the per-opponent variances) and the worst case."""
    by_spec = {r["agent_b"]: r for r in pairings}
    rows = []
    for o in OPPONENTS:
        r = by_spec[o.spec_for(preset)]
        rows.append({"opponent": o.name, "family": o.family, "spec": o.spec_for(preset), "matches": r["matches"],
                     "win_rate": r["win_rate_a"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                     "points_per_hand": r["points_per_hand_a"], "points_per_hand_opponent": r["points_per_hand_b"]})
    k = len(rows)
    mean = sum(r["win_rate"] for r in rows) / k
    var = sum(r["win_rate"] * (1 - r["win_rate"]) / r["matches"] for r in rows) / k ** 2
    worst = min(rows, key=lambda r: r["win_rate"])
    return {"agent": agent, "preset": preset, "opponents": rows,
            "mean": mean, "mean_low": mean - Z95 * math.sqrt(var), "mean_high": mean + Z95 * math.sqrt(var),
            "worst": {k2: worst[k2] for k2 in ("opponent", "spec", "win_rate", "ci_low", "ci_high")}}


def plot_gauntlet(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["opponents"]
    fig, ax = plt.subplots(figsize=(7, 0.8 + 0.42 * len(rows)))
    names = [f"{r['opponent']} ({r['family']})" for r in rows][::-1]
    rates = [r["win_rate"] for r in rows][::-1]
    errs = [[r["win_rate"] - r["ci_low"] for r in rows][::-1], [r["ci_high"] - r["win_rate"] for r in rows][::-1]]
    ax.barh(names, rates, xerr=errs, color=OKABE_ITO[0], capsize=3)
    ax.axvline(0.5, color="grey", lw=0.8, ls="--")
    ax.axvline(result["mean"], color=OKABE_ITO[3], lw=1.2, label=f"mean {100 * result['mean']:.1f}%")
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"{display_name(result['agent'])}'s match win rate (bars: 95% Wilson interval)")
    ax.set_title(f"gauntlet, {result['preset']}", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png"), ".png")
    plt.close(fig)


#: The file by which ``--overwrite`` knows a gauntlet folder written before manifests (training/outputs.py).
GAUNTLET_MARKERS = ("gauntlet.json",)


def run_gauntlet(agent: str, preset: str, matches: int = 400, seed: int = 0, workers: int = 2,
                 out: Path | None = None, progress: bool = True, overwrite: bool = False) -> dict[str, Any]:
    """Play ``agent`` against every opponent of ``preset``'s gauntlet; writes files to ``out`` when given, all
    together once every match is played (:func:`training.outputs.output_folder`): ValueError before any match
    when another process writes ``out``, or when it holds an earlier run's files and ``overwrite`` is false.
    With ``out``, the matches are journalled beside it as they finish, and the same call after a kill plays only
    the rest."""
    check_inputs(agent, preset, matches, out)
    if out is None:
        return _play_gauntlet(agent, preset, matches, seed, workers, None, progress)
    with output_folder(out, "gauntlet", overwrite, markers=GAUNTLET_MARKERS) as folder:
        return _play_gauntlet(agent, preset, matches, seed, workers, folder, progress, journal_beside(out))


def _play_gauntlet(agent: str, preset: str, matches: int, seed: int, workers: int, out: Path | None,
                   progress: bool, journal: Any = None) -> dict[str, Any]:
    specs = gauntlet_specs(preset)
    summary, meta = run_tournament([agent, *specs], [preset], matches, seed=seed, workers=workers,
                                   progress=progress, pairs=[(agent, s) for s in specs], journal=journal)
    result = summarise_gauntlet(agent, preset, summary["pairings"])
    result.update(matches_per_opponent=matches, seed=seed, seconds=meta["seconds"])
    if out is not None:
        write_outputs(out / "eval", summary, meta, plots=False)
        atomic_write_json(out / "gauntlet.json", result, indent=1)
        lines = ["opponent,family,spec,matches,win_rate,ci_low,ci_high"]
        lines += [f"{r['opponent']},{r['family']},{r['spec']},{r['matches']},{r['win_rate']:.4f},"
                  f"{r['ci_low']:.4f},{r['ci_high']:.4f}" for r in result["opponents"]]

        def write(tmp: str) -> None:
            Path(tmp).write_text("\n".join(lines) + "\n")

        atomic_write(out / "gauntlet.csv", write, ".csv")
        plot_gauntlet(result, out / "gauntlet.png")
    return result


def markdown_table(result: dict[str, Any]) -> str:
    lines = ["| opponent | family | spec | matches | win rate [95% CI] |", "|---|---|---|---:|---|"]
    for r in result["opponents"]:
        lines.append(f"| {r['opponent']} | {r['family']} | `{r['spec']}` | {r['matches']} | "
                     f"{100 * r['win_rate']:.1f}% [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}] |")
    lines.append(f"| **mean** | | | | **{100 * result['mean']:.1f}%** [{100 * result['mean_low']:.1f}, "
                 f"{100 * result['mean_high']:.1f}] |")
    w = result["worst"]
    lines.append(f"| **worst** | | `{w['spec']}` | | **{100 * w['win_rate']:.1f}%** [{100 * w['ci_low']:.1f}, "
                 f"{100 * w['ci_high']:.1f}] |")
    return "\n".join(lines)


def cli_main(args: Any) -> int:
    """``truco gauntlet``: exit 0 on success, 2 on bad input (or an output folder in use or already full), 130
    when interrupted."""
    if args.make_opponents:
        if args.preset not in REPORT_PRESETS:
            print(f"truco gauntlet: error: the gauntlet is made for presets {list(REPORT_PRESETS)}, not "
                  f"{args.preset!r}", file=sys.stderr)
            return 2
        try:
            print("\n".join(make_trained_opponents(args.preset, args.workers, not args.no_progress)))
        except KeyboardInterrupt:
            print("interrupted: no opponent was packaged from the unfinished run", file=sys.stderr)
            return 130
        return 0
    if args.agent is None:
        print("truco gauntlet: error: give the AGENT spec to evaluate (or --make-opponents)", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path("runs") / "gauntlet-eval" / args.preset
    try:
        result = run_gauntlet(args.agent, args.preset, args.matches, args.seed, args.workers, out,
                              progress=not args.no_progress, overwrite=args.overwrite)
    except (ValueError, OSError) as exc:
        print(f"truco gauntlet: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ntruco gauntlet: interrupted; nothing was written ({out} is as it was: its files are written "
              "once every match is played)", file=sys.stderr)
        return 130
    print(markdown_table(result))
    print(f"\n{len(result['opponents']) * args.matches} matches in {result['seconds']:.0f} s; wrote {out}/"
          "gauntlet.json, gauntlet.csv, gauntlet.png, eval/, manifest.json")
    return 0
