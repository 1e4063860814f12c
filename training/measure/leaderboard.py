"""``truco leaderboard CONFIG.yaml``: a public leaderboard that grows one entrant at a time.

The config lists the entrants (any agent specs, outside programs as ``exec:COMMAND`` included), the preset, the
matches per pairing and the seed. Every pair of entrants plays duplicate matches (:mod:`training.measure.evaluate`), and
each pairing's results are stored on their own under ``OUT/pairings/``, keyed by the two specs, the files they
play from (by hash) and the settings: adding an entrant plays only its new pairings, and a run stopped by Ctrl-C
resumes at the first pairing it had not finished. The board itself (``OUT/board/``: ``report.md``, ``results.json``,
the CSV files, the win-rate heatmap and the ratings plot, as ``truco eval`` writes them) is made again from all the
stored pairings, with OpenSkill ratings over every match in a fixed order, so the same entrants give the same board.
Every pairing's deals are hidden (:mod:`agents.hidden_seeds`), whether or not it has an outside program: the board
is where programs meet, and every pair meets the same deals. They follow from the seed and the deal key of whoever
runs the board; a board run under another key plays its pairings again (their stored match seeds differ).

A stored pairing file is believed only when it holds exactly the matches its settings make: its header names the
pairing's two specs, the preset, the matches and the seed, and its results are that many well-formed match results,
one for each deal and orientation that :func:`~training.measure.evaluate.make_tasks` gives, in that order. Anything else
(unreadable or deeply nested JSON, more than :func:`max_pairing_bytes`, ``results`` empty, doubled, null or not a
list, an entry that is no match result of this pairing) counts as *not stored*: the pairing is played again and the
file replaced, with a line saying why. Why replay rather than refuse: the file is this command's own cache, so
playing it again is always right and asks nothing of the user.

The config is refused with one line before anything plays when it lists more than :data:`MAX_ENTRANTS` entrants,
a spec longer than :data:`MAX_SPEC_CHARS` characters or more than :data:`MAX_MATCHES` matches per pairing; an error
message echoes at most a clipped piece (:func:`truco_env.limits.clip`) of any spec or path it names.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator

from training.atomic import atomic_write_json
from training.measure.evaluate import Task, make_tasks, pairings_of, play_tasks, summarise, validate
from training.measure.exploit import agent_file_hash
from training.measure.tournament_files import markdown_report, write_outputs
from training.options import Options, PresetName
from training.outputs import hold
from truco_env.limits import clip, loads_json, one_line

logger = logging.getLogger(__name__)

#: Entrants of one leaderboard at most (64 make 2,016 pairings).
MAX_ENTRANTS = 64
#: Matches per pairing at most (a pairing file of 100,000 matches is about 60 MB).
MAX_MATCHES = 100_000
#: Characters of one entrant spec at most (a spec is a name, a path or a command line).
MAX_SPEC_CHARS = 1000
#: Characters of an entrant spec that a line of the log shows.
SPEC_ECHO = 80
#: Bytes a stored pairing file may hold: this much for its header, plus :data:`RESULT_BYTES` per match (a match
#: result takes 0.4 to 0.8 kB; a forfeit's reason adds at most a few hundred bytes).
HEADER_BYTES = 64 * 1024
RESULT_BYTES = 4 * 1024


class LeaderboardConfig(Options):
    """A leaderboard: who plays, on which rules, how many matches per pairing."""

    entrants: Annotated[list[Annotated[str, Field(min_length=1, max_length=MAX_SPEC_CHARS)]],
                        Field(min_length=2, max_length=MAX_ENTRANTS)]
    """Agent specs, distinct, 2 to 64 of them, each at most 1,000 characters (``heuristic``, ``ppo:argentine``,
    ``exec:node bots/mine.mjs``, ...)."""
    preset: PresetName = "argentine"
    """The rules every pairing plays."""
    matches: Annotated[int, Field(ge=2, le=MAX_MATCHES)] = 200
    """Matches per pairing, even, 2 to 100,000: each deal is played twice with the seats swapped."""
    seed: Annotated[int, Field(ge=0)] = 0
    """Seed of the deals (the same for every pairing, so every pair meets the same deals)."""

    @field_validator("entrants")
    @classmethod
    def _distinct(cls, entrants: list[str]) -> list[str]:
        seen: set[str] = set()
        for spec in entrants:
            if spec in seen:
                raise ValueError(f"entrant {clip(repr(spec))} is listed twice; the entrants must be distinct")
            seen.add(spec)
        return entrants


def file_hash(spec: str) -> str | None:
    """:func:`~training.measure.exploit.agent_file_hash` of ``spec``; a name too long to be a file (a long ``exec:``
    command) names no file, and a file that cannot be read is a one-line ValueError."""
    try:
        return agent_file_hash(spec)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return None
        raise ValueError(f"agent spec {clip(repr(spec))}: cannot read the file it names "
                         f"({exc.strerror or clip(exc, 120)})") from None


def pairing_key(config: LeaderboardConfig, a: str, b: str, hashes: dict[str, str | None] | None = None) -> str:
    """What makes a pairing's stored results reusable: the two specs, their files and the settings (``hashes``:
    the specs' :func:`file_hash`, computed here when not given)."""
    hashes = hashes or {}
    data = [a, b, hashes[a] if a in hashes else file_hash(a), hashes[b] if b in hashes else file_hash(b),
            config.preset, config.matches, config.seed]
    return hashlib.sha256(json.dumps(data).encode()).hexdigest()[:20]


def max_pairing_bytes(matches: int) -> int:
    """The most bytes a stored pairing file of ``matches`` matches may hold (a bigger one is played again)."""
    return HEADER_BYTES + RESULT_BYTES * matches


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0  # a JSON true is no count


def _result_problem(entry: Any, task: Task) -> str | None:
    """What keeps ``entry`` from being the result of ``task`` as :func:`~training.measure.evaluate.run_task` writes it
    (the fields the board reads), or None."""
    if not isinstance(entry, dict):
        return f"{_json_type(entry)}, not a match result"
    expected = {"preset": task.preset, "pairing": 0, "deal": task.deal, "swapped": task.swapped,
                "match_seed": task.match_seed}
    for key, value in expected.items():
        if entry.get(key) != value or type(entry.get(key)) is not type(value):
            return f"{key!r} is {clip(repr(entry.get(key)))}, expected {value!r}"
    if entry.get("winner", "") not in ("a", "b", None):
        return f"'winner' is {clip(repr(entry.get('winner', 'missing')))}, expected 'a', 'b' or null"
    for key in ("score_a", "score_b", "hands", "points_a", "points_b", "hands_won_a", "hands_won_b"):
        if not _count(entry.get(key)):
            return f"{key!r} is {clip(repr(entry.get(key)))}, expected a count"
    for key in ("behaviour_a", "behaviour_b"):
        counts = entry.get(key)
        if not isinstance(counts, dict) or len(counts) > 64 or not all(
                len(k) <= 40 and type(v) is int for k, v in counts.items()):
            return f"{key!r} is not a table of counts"
    forfeit = entry.get("forfeit")
    if "forfeit" in entry and not (isinstance(forfeit, dict) and forfeit.get("side") in ("a", "b")
                                   and _count(forfeit.get("seat")) and isinstance(forfeit.get("reason"), str)):
        return "'forfeit' is not a forfeit (side, seat, reason)"
    return None


def stored_problem(data: Any, config: LeaderboardConfig, a: str, b: str, tasks: list[Task]) -> str | None:
    """Why ``data`` (a pairing file's JSON) is not the stored results of the pairing ``a`` vs ``b`` whose matches
    are ``tasks``, or None when it is."""
    if not isinstance(data, dict):
        return f"{_json_type(data)}, not a pairing's results"
    header = {"agent_a": a, "agent_b": b, "preset": config.preset, "matches": config.matches, "seed": config.seed}
    for key, value in header.items():
        if data.get(key) != value or type(data.get(key)) is not type(value):
            return f"its {key!r} is {clip(repr(data.get(key)))}, expected {clip(repr(value))}"
    results = data.get("results")
    if not isinstance(results, list):
        return f"its 'results' is {clip(repr(results))}, not a list"
    if len(results) != len(tasks):
        return f"{len(results)} results for its {config.matches} matches"
    for index, (entry, task) in enumerate(zip(results, tasks)):
        problem = _result_problem(entry, task)
        if problem is not None:
            return f"result {index}: {problem}"
    return None


def read_stored(path: Path, config: LeaderboardConfig, a: str, b: str, tasks: list[Task]
                ) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The stored results of a pairing, or None and why not (None too when there is no file: nothing to say).
    Read with the bounded reader: at most :func:`max_pairing_bytes` and :data:`~truco_env.limits.MAX_DEPTH`
    levels."""
    limit = max_pairing_bytes(config.matches)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or clip(exc, 120)})"
    if len(data) > limit:
        return None, f"holds more than the {limit:,} bytes allowed for {config.matches} matches"
    try:
        found = loads_json(data, max_bytes=limit)
    except ValueError as exc:
        return None, clip(str(exc), 200)
    problem = stored_problem(found, config, a, b, tasks)
    return (None, problem) if problem else (found["results"], None)


def run_leaderboard(config: LeaderboardConfig, out: Path, workers: int = 1, progress: bool = True,
                    log: Any = None) -> dict[str, Any]:
    """Play every pairing not yet stored, then write the board; returns its summary. ``log`` (default: the
    module's logger) hears which pairings are played and which reused."""
    log = log or logger.info
    if config.matches % 2:
        raise ValueError(f"matches must be even (each deal is played twice with the seats swapped), got "
                         f"{config.matches}")
    validate(config.entrants, [config.preset], config.matches, other_preset_hint="")  # it has no such flag
    hashes = {spec: file_hash(spec) for spec in config.entrants}
    pairs = pairings_of(config.entrants)
    stored = out / "pairings"
    results: list[dict[str, Any]] = []
    with hold(out, f"the leaderboard folder {clip(repr(str(out)), 200)}"):
        for index, (a, b) in enumerate(pairs):
            path = stored / f"{pairing_key(config, a, b, hashes)}.json"
            tasks = make_tasks([a, b], [config.preset], config.matches, config.seed, pairs=[(a, b)], hidden=True)
            found, problem = read_stored(path, config, a, b, tasks)
            names = f"{clip(a, SPEC_ECHO)} vs {clip(b, SPEC_ECHO)}"
            if found is not None:
                log(f"  reuse {names}")
            else:
                if problem:
                    log(f"  replay {names}: its stored file {path} is not used ({problem})")
                log(f"  play  {names}: {config.matches} matches")
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

    from training.options import build, read_yaml

    try:
        config = build(LeaderboardConfig, read_yaml(args.config), source=args.config)
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {clip(repr(str(out)), 200)} is a file; give a folder")
        summary = run_leaderboard(config, out, workers=args.workers, progress=not args.no_progress)
    except (ValueError, OSError) as exc:
        print(f"truco leaderboard: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ntruco leaderboard: interrupted; the pairings played so far are kept in {clip(args.out, 200)}/pairings "
              "(run the same command to go on)", file=sys.stderr)
        return 130
    print(markdown_report(summary))
    print(f"wrote {args.out}/board (report.md, results.json, CSV files, plots); pairings in {args.out}/pairings")
    return 0
