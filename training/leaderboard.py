"""``truco leaderboard CONFIG.yaml``: a public leaderboard that grows one entrant at a time.

The config lists the entrants (any agent specs, outside programs as ``exec:COMMAND`` included), the preset, the
matches per pairing and the seed. Every pair of entrants plays duplicate matches (:mod:`training.evaluate`), and
each pairing's results are stored on their own under ``OUT/pairings/``, keyed by the two specs, the files they
play from (by hash) and the settings: adding an entrant plays only its new pairings, and a run stopped by Ctrl-C
resumes at the first pairing it had not finished. The board itself (``OUT/board/``: ``report.md``, ``results.json``,
the CSV files, the win-rate heatmap and the ratings plot, as ``truco eval`` writes them) is made again from all the
stored pairings, with OpenSkill ratings over every match in a fixed order, so the same entrants give the same board.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from .atomic import atomic_write_json
from .evaluate import make_tasks, pairings_of, play_tasks, summarise, validate
from .exploit import agent_file_hash
from .options import Options, PresetName
from .outputs import hold
from .tournament_files import markdown_report, write_outputs

logger = logging.getLogger(__name__)


class LeaderboardConfig(Options):
    """A leaderboard: who plays, on which rules, how many matches per pairing."""

    entrants: Annotated[list[str], Field(min_length=2)]
    """Agent specs, distinct (``heuristic``, ``ppo:argentine``, ``exec:node bots/mine.mjs``, ...)."""
    preset: PresetName = "argentine"
    """The rules every pairing plays."""
    matches: Annotated[int, Field(ge=2)] = 200
    """Matches per pairing, even: each deal is played twice with the seats swapped."""
    seed: Annotated[int, Field(ge=0)] = 0
    """Seed of the deals (the same for every pairing, so every pair meets the same deals)."""


def pairing_key(config: LeaderboardConfig, a: str, b: str) -> str:
    """What makes a pairing's stored results reusable: the two specs, their files and the settings."""
    data = [a, b, agent_file_hash(a), agent_file_hash(b), config.preset, config.matches, config.seed]
    return hashlib.sha256(json.dumps(data).encode()).hexdigest()[:20]


def run_leaderboard(config: LeaderboardConfig, out: Path, workers: int = 1, progress: bool = True,
                    log: Any = None) -> dict[str, Any]:
    """Play every pairing not yet stored, then write the board; returns its summary. ``log`` (default: the
    module's logger) hears which pairings are played and which reused."""
    log = log or logger.info
    if config.matches % 2:
        raise ValueError(f"matches must be even (each deal is played twice with the seats swapped), got "
                         f"{config.matches}")
    validate(config.entrants, [config.preset], config.matches)
    pairs = pairings_of(config.entrants)
    stored = out / "pairings"
    results: list[dict[str, Any]] = []
    with hold(out, f"the leaderboard folder {str(out)!r}"):
        for index, (a, b) in enumerate(pairs):
            path = stored / f"{pairing_key(config, a, b)}.json"
            try:
                found = json.loads(path.read_text())["results"]
                log(f"  reuse {a} vs {b}")
            except (OSError, ValueError, KeyError):
                log(f"  play  {a} vs {b}: {config.matches} matches")
                tasks = make_tasks([a, b], [config.preset], config.matches, config.seed, pairs=[(a, b)])
                found = play_tasks(tasks, workers=workers, progress=progress)
                atomic_write_json(path, {"agent_a": a, "agent_b": b, "preset": config.preset,
                                         "matches": config.matches, "seed": config.seed,
                                         "played": time.strftime("%Y-%m-%d"), "results": found})
            results += [{**r, "pairing": index} for r in found]
        summary = summarise(config.entrants, [config.preset], results, pairs)
        summary["matches"] = results
        meta = {"agents": config.entrants, "presets": [config.preset], "matches_per_pairing": config.matches,
                "seed": config.seed, "leaderboard": True}
        write_outputs(out / "board", summary, meta)
    return summary


def cli_main(args: Any) -> int:
    """``truco leaderboard``: 0 when the board is written, 2 on bad input, 130 when interrupted (the pairings
    already played are kept)."""
    import sys

    from .options import build, read_yaml

    try:
        config = build(LeaderboardConfig, read_yaml(args.config), source=args.config)
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {str(out)!r} is a file; give a folder")
        summary = run_leaderboard(config, out, workers=args.workers, progress=not args.no_progress)
    except (ValueError, OSError) as exc:
        print(f"truco leaderboard: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ntruco leaderboard: interrupted; the pairings played so far are kept in {args.out}/pairings "
              "(run the same command to go on)", file=sys.stderr)
        return 130
    print(markdown_report(summary))
    print(f"wrote {args.out}/board (report.md, results.json, CSV files, plots); pairings in {args.out}/pairings")
    return 0
