"""``truco report``: the strength report of every shipped agent, written to docs/strength.md.

For each of the four main presets and each agent that ships for it (the heuristic, which is a target too, and
the shipped ``ppo:<preset>`` policy), one command measures:

* the **ABR win rate** (``truco exploit``, the same standard budget of learner decisions for every agent): how
  much a best response trained against the agent alone wins; lower is harder to exploit;
* the **gauntlet** (``truco gauntlet``): mean and worst win rate against the held-out population;
* the win rates against ``heuristic`` and ``random`` (2,000 duplicate matches each), the figures the project
  reported before, kept for comparison;
* for a CFR blueprint on a 1v1 preset, **play-time search** (``cfr:<preset>,search=``:data:`SEARCH_MS`): the
  blueprint and the searching blueprint on the same duplicate deals (as many as the other stages), against the
  heuristic and against the blueprint's own trained best response (the strongest ABR learner above).
  docs/cfr.md measures the search exactly on the research presets; this is its effect on the full game. (A best
  response trained against the searching agent itself costs one to two hours per learner on two cores and moved
  the ABR win rate by less than its interval: docs/cfr.md keeps that measurement; ``truco exploit
  cfr:<preset>,search=200`` makes it again.);
* on the 1v1 presets, **bluffing**: over :data:`BLUFF_MATCHES` duplicate matches against the heuristic (the
  heuristic against itself for its own row), the share of the agent's truco-ladder calls made with a
  bottom-third hand and how often those calls won the hand (the behaviour statistics of
  :mod:`training.evaluate`), so that bluffing is shown, not claimed.

Every stage writes its files under ``--runs`` (``runs/report/<preset>/<agent>/``) and is skipped when its
finished result is already there with the same settings, so an interrupted report resumes where it stopped and
a report is remade from its runs at no cost; within a stage, each best response resumes from its checkpoint and
each tournament from the journal of the matches it has played (:mod:`training.match_journal`). The report also keeps every stage's result, with the settings it
was made with, in the data file beside it (``docs/strength.json``, :func:`data_path`), which the repository
tracks: ``--runs`` is scratch that a fresh clone lacks, and with the data file a report measures again only the
stages whose agent file or settings changed and copies the rest (an agent's stages are keyed by a hash of its
file, so a retrained policy is always measured afresh). A stage's result counts only when it is complete
(``truco exploit`` marks an interrupted run), so a partial run never enters the report. One report at a time works on a preset's
folder of ``--runs``: a second is refused while the first holds its lock (:func:`training.outputs.hold`), and
reports of different presets run side by side.
"""

from __future__ import annotations

import logging
import os
import platform
import sys
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

from agents.best import BEST_FILE
from truco_env.config import make_config
from truco_env.limits import MAX_METADATA_BYTES, clip, loads_json

from .atomic import atomic_write, atomic_write_json
from .behaviour import behaviour_rates
from .best_agent import RULE, choices, shortfalls, write_choices
from .best_agent import table as best_table
from .best_response import STANDARD_DECISIONS, BRArgs
from .evaluate import make_tasks, play_tasks, run_tournament
from .exploit import ABR_LEARNERS, agent_file_hash, cached_exploit, recipe_key, strongest_exploit
from .fingerprint import learner_fingerprint, play_fingerprint
from .gauntlet import MAIN_PRESETS, OPPONENTS, markdown_table, run_gauntlet
from .match_journal import MatchJournal
from .outputs import hold
from .statistics import wilson_interval
from .tournament_files import OKABE_ITO

logger = logging.getLogger(__name__)

DEFAULT_OUT = "docs/strength.md"
#: The repository's own report. Only a report written there rewrites the shipped model cards
#: (``agents/policies/*.md``), which cite it; a report written anywhere else writes nothing outside its ``--out``
#: (the Markdown file, its data file and figure beside it) and ``--runs``.
OWN_REPORT = Path(__file__).resolve().parents[1] / DEFAULT_OUT
#: Matches of the bluffing stage: enough for a few thousand ladder calls per agent.
BLUFF_MATCHES = 400
BLUFF_OPPONENT = "heuristic"
#: Play-time search: the budget per decision (ms). Its comparisons play as many duplicate matches as the other
#: stages: since searches run only where they are checked (the last trick in 1v1), a searched match costs 1 to 2 s
#: of CPU, not the 7 s of a search at every decision.
SEARCH_MS = 200


def agents_of(preset: str) -> list[str]:
    """The agents the report covers on ``preset``: the heuristic, the shipped PPO policy and the shipped CFR
    blueprint."""
    from agents.cfr import shipped_blueprints
    from agents.ppo import shipped_policies

    return (["heuristic"] + ([f"ppo:{preset}"] if preset in shipped_policies() else [])
            + ([f"cfr:{preset}"] if preset in shipped_blueprints() else []))


def previous_policy(agent: str, preset: str) -> str | None:
    """The policy a rebuilt ``ppo:<preset>`` replaced (``agents/policies/previous/``, as ONNX), which it must beat
    head to head; None for other agents, and while the shipped policy is still the previous one (no
    ``config_hash`` in its metadata: only the rebuilt trainer writes it)."""
    from agents.base import SHIPPED_DIR, make_agent

    path = os.path.join(SHIPPED_DIR, "previous", f"ppo_{preset}.onnx")
    if agent != f"ppo:{preset}" or not os.path.isfile(path) or "config_hash" not in make_agent(agent).metadata:
        return None
    return f"onnx:{os.path.relpath(path)}"


def _safe(spec: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in spec)


def _settings(stage: dict[str, Any]) -> Any:
    """A stored stage's settings, its best-response recipe read as today's (:func:`training.exploit.recipe_key`)."""
    settings = stage.get("settings")
    if isinstance(settings, dict) and isinstance(settings.get("recipe"), dict):
        return {**settings, "recipe": recipe_key(settings["recipe"])}
    return settings


def _cached(path: Path, settings: dict[str, Any], spec: Any = None) -> dict[str, Any] | None:
    """A stage's stored result when it is complete and was made with ``settings``; a file there that is no JSON
    object, or a complete stage whose figures are not what ``spec`` allows (:func:`check`), is refused."""
    if not path.is_file():
        return None
    try:
        data = _read_json(path)
        check(data, STAGE)  # an object, whatever it holds, before it is asked whether it is complete
        if data.get("status") != "complete" or _settings(data) != settings:
            return None
        check(data, spec or STAGE, page=True)
    except ValueError as exc:
        raise ValueError(f"{path} is not a finished stage of truco report: {exc} (remove it to measure the stage "
                         "again)") from None
    # a stage written before stages were dated: the file's own date is when it was measured
    data.setdefault("measured", time.strftime("%Y-%m-%d", time.localtime(path.stat().st_mtime)))
    return data


def _stage(path: Path, settings: dict[str, Any], run: Any, log: Any,
           stored: dict[str, Any] | None = None, spec: Any = None) -> dict[str, Any]:
    """The stage's result: from ``path`` under ``--runs`` (its figures checked against ``spec``), else from
    ``stored`` (the same stage in the report's data file, checked when that was read) when that is complete and
    was made with ``settings``, else by ``run()``, saved to ``path``."""
    found = _cached(path, settings, spec)
    if found is not None:
        log(f"  reuse {path}")
        return found
    if stored and stored.get("status") == "complete" and _settings(stored) == settings:
        log(f"  reuse {path.parent.name}/{path.stem} from the report's data file")
        return stored
    log(f"  run   {path.parent.name}/{path.name}")
    data = run()
    if data.get("status", "complete") != "complete":
        raise KeyboardInterrupt  # an interrupted stage ends the report; what is done stays for the next run
    data = {**data, "status": "complete", "settings": settings, "measured": time.strftime("%Y-%m-%d")}
    atomic_write_json(path, data, indent=1)
    return data


def measure(agent: str, preset: str, runs: Path, decisions: int, seed: int, workers: int, gauntlet_matches: int,
            eval_matches: int, progress: bool, log: Any, stored: dict[str, Any] | None = None) -> dict[str, Any]:
    """The agent's stages (each reused when already done, under ``runs`` or in ``stored``, the agent's row of the
    report's data file)."""
    stored = stored or {}
    folder = runs / preset / _safe(agent)
    file_hash = agent_file_hash(agent)
    # a stage is reused only while the agent's file and what today's code does are as they were when it was made
    same_file = {"agent_file": file_hash} if file_hash else {}
    same_file["code"] = {"play": play_fingerprint(agent, preset), "learner": learner_fingerprint(preset)}

    def journal(name: str) -> MatchJournal:
        """Where one of the agent's tournaments notes each match as it is played, so a stopped report resumes it."""
        return MatchJournal(folder / "journals" / f"{name}.jsonl", key=same_file)

    # the strongest of ABR_LEARNERS best responses (seeds `seed` on) against the agent alone
    recipe = BRArgs(preset=preset, target=agent, decisions=decisions, seed=seed, workers=workers)
    exploit = _stage(folder / "exploit.json", {"recipe": recipe_key(recipe), "matches": eval_matches,
                                               "learners": ABR_LEARNERS, **same_file},
                     lambda: {**strongest_exploit(recipe, eval_matches, progress=progress), "machine": machine_words()},
                     log, stored.get("exploit"), STAGES["exploit"])
    held_out = {o.name: play_fingerprint(o.spec_for(preset), preset) for o in OPPONENTS}  # they may change too
    gauntlet = _stage(folder / "gauntlet.json", {"matches": gauntlet_matches, "seed": seed, "opponents": held_out,
                                                 **same_file},
                      lambda: run_gauntlet(agent, preset, gauntlet_matches, seed, workers, folder / "gauntlet",
                                           progress=progress, overwrite=True), log, stored.get("gauntlet"),
                      STAGES["gauntlet"])
    opponents = [spec for spec in ("heuristic", "random") if spec != agent]
    previous = previous_policy(agent, preset)
    if previous:
        opponents.append(previous)

    def baselines() -> dict[str, Any]:
        summary, _meta = run_tournament([agent, *opponents], [preset], eval_matches, seed=seed, workers=workers,
                                       progress=progress, pairs=[(agent, o) for o in opponents],
                                       journal=journal("baselines"))
        return {r["agent_b"]: {k: r[k] for k in ("matches", "win_rate_a", "ci_low", "ci_high")}
                for r in summary["pairings"]}

    key = {"matches": eval_matches, "seed": seed, **({"previous": previous} if previous else {}), **same_file}
    versus = _stage(folder / "baselines.json", key, baselines, log, stored.get("versus"),
                    {**STAGES["versus"], **dict.fromkeys(opponents, FIGURE)})
    row = {"agent": agent, "preset": preset, "exploit": exploit, "gauntlet": gauntlet, "versus": versus}
    # head to head against the other shipped agents listed after this one (the heuristic is in the baselines):
    # each pairing is played once, from the side of the agent listed first (training/best_agent.py)
    listed = agents_of(preset)
    rivals = [a for a in listed[listed.index(agent) + 1:] if a != "heuristic"] if agent != "heuristic" else []
    if rivals:

        def rivalry() -> dict[str, Any]:
            summary, _meta = run_tournament([agent, *rivals], [preset], eval_matches, seed=seed, workers=workers,
                                           progress=progress, pairs=[(agent, o) for o in rivals],
                                           journal=journal("rivals"))
            return {r["agent_b"]: {k: r[k] for k in ("matches", "win_rate_a", "ci_low", "ci_high")}
                    for r in summary["pairings"]}

        row["rivals"] = _stage(folder / "rivals.json", {"matches": eval_matches, "seed": seed, **same_file,
                                                        "rivals": {o: agent_file_hash(o) for o in rivals}},
                               rivalry, log, stored.get("rivals"), {**STAGES["rivals"], **dict.fromkeys(rivals, FIGURE)})
    if make_config(preset).num_players == 2:
        row["bluffing"] = _stage(folder / "bluffing.json", {"matches": BLUFF_MATCHES, "seed": seed,
                                                            "opponent": BLUFF_OPPONENT, **same_file},
                                 lambda: bluffing(agent, preset, BLUFF_MATCHES, seed, workers, progress), log,
                                 stored.get("bluffing"), STAGES["bluffing"])
    if agent.startswith("cfr:") and make_config(preset).num_players == 2:

        def search() -> dict[str, Any]:  # the strongest ABR learner: under runs/exploit, trained again if only stored
            strongest = recipe.model_copy(update={"seed": exploit["seed"]})
            learner = cached_exploit(strongest, eval_matches, progress=progress)[1] / "learner.safetensors"
            return search_effect(agent, preset, f"ppo:{learner},greedy", eval_matches, seed, workers, progress,
                                 journal)

        # "checked": searches are checked before they are played (agents/cfr/search.py); a stage stored before the
        # check lacks the field and is measured again
        row["search"] = _stage(folder / "search.json", {"matches": eval_matches, "seed": seed, "ms": SEARCH_MS,
                                                        "checked": True, "exploiter": exploit["settings"],
                                                        **same_file},
                               search, log, stored.get("search"), STAGES["search"])
    return row


def _stages(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's stage results (the values that carry a ``status``)."""
    return [v for v in row.values() if isinstance(v, dict) and "status" in v]


def measured_on(row: dict[str, Any], default: str) -> str:
    """The date of the row's most recently measured stage (when its numbers last changed); ``default`` when no
    stage is dated."""
    return max((stage["measured"] for stage in _stages(row) if "measured" in stage), default=default)


def data_path(out: Path) -> Path:
    """The report's data file: beside ``out``, same name, ``.json``."""
    return out.with_suffix(".json")


# What the report reads back from its data file and its stage files (issue 72): every figure it shows is checked
# before anything is measured or written, so an edited or hostile file is refused in one line that names the file,
# the field and what is allowed, never shown as 750.0% nor ended in a traceback. A spec is a kind (below), a tuple
# of the values allowed, [spec] for a list of such, or {key: spec} for an object: "key?" may be absent, "key~" may
# be absent only outside the page (``page=False``: a row read for its stages alone, as a model card's figures),
# "*" is the spec of any key not named, and other keys not named are free.
_BIG = 10 ** 12


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and -_BIG <= v <= _BIG  # False for NaN, inf


KINDS = {
    "rate": ("a number from 0 to 1", lambda v: _number(v) and 0 <= v <= 1),
    "bound": ("a number from -1 to 2 (a normal interval may pass 0 or 1)", lambda v: _number(v) and -1 <= v <= 2),
    "count": ("a whole number from 0 to 10^12", lambda v: _number(v) and isinstance(v, int) and v >= 0),
    "positive": ("a whole number from 1 to 10^12", lambda v: _number(v) and isinstance(v, int) and v >= 1),
    "integer": ("a whole number from -10^12 to 10^12", lambda v: _number(v) and isinstance(v, int)),
    "seconds": ("a number from 0 to 10^12", lambda v: _number(v) and v >= 0),
    "text": ("text", lambda v: isinstance(v, str)),
    "any": ("anything", lambda v: True),
}
#: Values of one object that, where it holds them all, must not decrease in this order (an interval around its
#: rate; a spread; bluffs won among bluffs among calling hands among hands), up to float rounding.
ORDERED = (("ci_low", "win_rate", "ci_high"), ("ci_low", "win_rate_a", "ci_high"), ("mean_low", "mean", "mean_high"),
           ("min", "max"), ("bluffs_won", "bluffs", "calling_hands", "hands"))
FIGURE = {"win_rate_a": "rate", "ci_low": "rate", "ci_high": "rate", "matches~": "positive"}
STAGE = {"status?": "text", "measured?": "text", "settings?": "any"}
_WIN_RATE = {"win_rate": "rate", "ci_low": "rate", "ci_high": "rate"}
_PAIRINGS = {**STAGE, "*": FIGURE}  # a figure per opponent
STAGES = {
    "exploit": {**STAGE, "seed?": "integer", "machine?": "text",
                "abr": {**_WIN_RATE, **dict.fromkeys(("matches?", "wins?", "losses?", "draws?"), "count")},
                "training~": {"decisions": "count", "seconds": "seconds", "decisions_per_second": "seconds"},
                "spread?": {"min": "rate", "max": "rate"}, "learners~": [_WIN_RATE]},
    "gauntlet": {**STAGE, "mean": "rate", "mean_low": "bound", "mean_high": "bound",
                 "worst": {**_WIN_RATE, "opponent": "text", "spec~": "text"},
                 "opponents~": [{**_WIN_RATE, "opponent": "text", "family": "text", "spec": "text",
                                 "matches": "positive"}]},
    "versus": {**_PAIRINGS, "random": FIGURE}, "rivals": _PAIRINGS,
    "bluffing": {**STAGE, "opponent": "text", "matches": "count",
                 "counts": {"hands": "positive", "*": "integer",
                            **dict.fromkeys(("bluffs?", "calling_hands?", "bluffs_won?", "truco_calls?"), "count")}},
    "search": {**STAGE, "searched": "text",
               **{side: {"blueprint": FIGURE, "searched": FIGURE, "seconds?": "seconds"}
                  for side in ("heuristic", "exploiter")}},
}
ROW = {"agent": "text", "preset": tuple(MAIN_PRESETS),
       **{name + ("" if name in ("exploit", "gauntlet", "versus") else "?"): spec for name, spec in STAGES.items()}}
MEASURING = ("decisions", "seed", "gauntlet_matches", "eval_matches")  # the settings a report is measured with
REPORT = {"settings": {"finished": "text", "seed~": "integer",
                       **dict.fromkeys(("decisions~", "gauntlet_matches~", "eval_matches~"), "positive")},
          "rows": [ROW]}


def _field(field: str, key: Any) -> str:
    key = str(key)
    if not key.isidentifier():
        return f"{field}[{clip(repr(key))}]"
    return f"{field}.{key}" if field else key


def _show(value: Any) -> str:
    return {dict: "an object", list: "a list"}.get(type(value)) or clip(repr(value))


def check(value: Any, spec: Any, field: str = "", page: bool = False) -> None:
    """ValueError, one line naming the field and what is allowed, unless ``value`` is what ``spec`` allows
    (the spec language is above :data:`KINDS`): the types, ranges and required keys of a report's data."""
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            raise ValueError(f"{field or 'the file'} is {_show(value)}; allowed: an object")
        named = {key.rstrip("?~"): key for key in spec if key != "*"}
        for name, key in named.items():
            if name in value:
                check(value[name], spec[key], _field(field, name), page)
            elif not key.endswith("?") and not (key.endswith("~") and not page):
                raise ValueError(f"{_field(field, name)} is missing; required")
        for name in value.keys() - named.keys() if "*" in spec else ():
            check(value[name], spec["*"], _field(field, name), page)
        for chain in ORDERED:
            if all(k in named and k in value for k in chain) and \
                    any(value[a] > value[b] + 1e-9 for a, b in pairwise(chain)):
                shown = ", ".join(f"{k} {value[k]!r}" for k in chain)
                raise ValueError(f"{field} has {shown}; allowed: {' <= '.join(chain)}")
        if all(f"{k}?" in spec and k in value for k in ("wins", "losses", "draws", "matches")) and \
                value["wins"] + value["losses"] + value["draws"] != value["matches"]:
            raise ValueError(f"{field} has wins + losses + draws = {value['wins'] + value['losses'] + value['draws']}"
                             f" and matches {value['matches']}; allowed: wins + losses + draws = matches")
    elif isinstance(spec, list):
        if not isinstance(value, list):
            raise ValueError(f"{field} is {_show(value)}; allowed: a list")
        for i, item in enumerate(value):
            check(item, spec[0], f"{field}[{i}]", page)
    elif isinstance(spec, tuple):
        if not isinstance(value, str) or value not in spec:
            raise ValueError(f"{field} is {_show(value)}; allowed: one of {', '.join(spec)}")
    elif not KINDS[spec][1](value):
        raise ValueError(f"{field} is {_show(value)}; allowed: {KINDS[spec][0]}")


def check_report(data: Any, page: bool = False) -> None:
    """:func:`check` of a report's data file against :data:`REPORT`, and what spans its rows: each (preset,
    agent) once, a heuristic row in every preset (the bars of :mod:`training.best_agent` are relative to it),
    and a baseline against the heuristic for every other agent."""
    check(data, REPORT, page=page)
    seen: set[tuple[str, str]] = set()
    for i, row in enumerate(data["rows"]):
        if (row["preset"], row["agent"]) in seen:
            raise ValueError(f"rows[{i}] is a second row of {clip(row['agent'])} on {row['preset']}; allowed: one")
        seen.add((row["preset"], row["agent"]))
        if row["agent"] != "heuristic" and "heuristic" not in row["versus"]:
            raise ValueError(f"rows[{i}].versus.heuristic is missing; required for every agent but the heuristic")
    for preset in dict.fromkeys(p for p, _ in seen):
        if (preset, "heuristic") not in seen:
            raise ValueError(f"rows has no row of the heuristic on {preset}; required for every preset it holds")


def _read_json(path: Path) -> Any:
    """A JSON file of at most :data:`MAX_METADATA_BYTES`, :data:`MAX_DEPTH <truco_env.limits.MAX_DEPTH>` levels
    deep (:func:`truco_env.limits.loads_json`); ValueError for anything else."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_METADATA_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read it ({exc.strerror or exc})") from None
    return loads_json(data, max_bytes=MAX_METADATA_BYTES)


def read_report(path: Path, page: bool = False) -> dict[str, Any] | None:
    """A report's data file, checked (:func:`check_report`); None when there is no file. A file that is there
    but unreadable or not what the report writes is an error rather than a silent re-measurement of hours."""
    if not path.exists():
        return None
    try:
        data = _read_json(path)
        check_report(data, page)
    except ValueError as exc:
        raise ValueError(f"{path} is not a report's data file: {exc} (remove it to measure every stage again)") \
            from None
    for row in data["rows"]:  # stages stored before stages were dated were measured by the report that stored them
        for stage in _stages(row):
            stage.setdefault("measured", data["settings"]["finished"])
    return data


def stored_settings(path: Path) -> dict[str, Any]:
    """The measuring settings a report's data file was made with (its date left out)."""
    settings = read_report(path, page=True)["settings"]
    return {k: settings[k] for k in MEASURING}


def stored_rows(path: Path, page: bool = False) -> dict[tuple[str, str], dict[str, Any]]:
    """The rows of a report's data file by (preset, agent), checked (:func:`read_report`; ``page``: with all the
    page shows of each); none when there is no file."""
    data = read_report(path, page)
    return {(r["preset"], r["agent"]): r for r in data["rows"]} if data else {}


def search_effect(agent: str, preset: str, exploiter: str, matches: int, seed: int, workers: int,
                  progress: bool, journal: Any = None) -> dict[str, Any]:
    """The blueprint and the blueprint searching at :data:`SEARCH_MS` against the heuristic and against the
    blueprint's trained best response, on the same deals (a paired comparison): the agent's win rates.
    ``journal(name)``, when given, is each tournament's :class:`MatchJournal`."""
    searched = f"{agent},search={SEARCH_MS}"
    out: dict[str, Any] = {"searched": searched}
    for name, opponent in (("heuristic", "heuristic"), ("exploiter", exploiter)):
        summary, meta = run_tournament([agent, searched, opponent], [preset], matches, seed=seed, workers=workers,
                                       progress=progress, pairs=[(agent, opponent), (searched, opponent)],
                                       journal=journal and journal(f"search-{name}"))
        out[name] = {("searched" if r["agent_a"] == searched else "blueprint"):
                     {k: r[k] for k in ("matches", "win_rate_a", "ci_low", "ci_high")} for r in summary["pairings"]}
        out[name]["seconds"] = meta["seconds"]
    return out


def stage_table(rows: list[dict[str, Any]], stages: tuple[str, ...], header: list[str], cells: Any) -> list[str]:
    """A Markdown table of some stages: a line per row that has them all (preset, agent, then ``cells(row)``); a
    ``header`` name that starts with ``>`` is a right-aligned (numeric) column."""
    lines = ["| preset | agent | " + " | ".join(h.lstrip(">") for h in header) + " |",
             "|---|---|" + "".join("---:|" if h.startswith(">") else "---|" for h in header)]
    lines += [f"| {row['preset']} | `{row['agent']}` | " + " | ".join(cells(row)) + " |"
              for row in rows if all(stage in row for stage in stages)]
    return lines


def search_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown rows: the blueprint's win rates without and with play-time search, against the heuristic and
    against the blueprint's strongest trained best response."""
    return stage_table(rows, ("search",),
                       ["vs heuristic", "searching, vs heuristic", "vs its trained best response",
                        "searching, vs the same best response"],
                       lambda row: [_rate(row["search"][o][k]) for o in ("heuristic", "exploiter")
                                    for k in ("blueprint", "searched")])


def bluffing(agent: str, preset: str, matches: int, seed: int, workers: int, progress: bool) -> dict[str, Any]:
    """The agent's behaviour counts over ``matches`` duplicate matches against :data:`BLUFF_OPPONENT` (which may be
    the agent itself: the tasks are made directly, so the pair need not be two distinct specs)."""
    tasks = make_tasks([agent, BLUFF_OPPONENT], [preset], matches, seed, pairs=[(agent, BLUFF_OPPONENT)])
    counts: Counter = Counter()
    for result in play_tasks(tasks, workers=workers, progress=progress):
        counts.update(result["behaviour_a"])
    return {"opponent": BLUFF_OPPONENT, "matches": len(tasks), "counts": dict(sorted(counts.items()))}


def bluffing_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown rows: ladder calls per hand, the weak-hand share of those calls and how often they won."""

    def cells(row: dict[str, Any]) -> list[str]:
        counts = row["bluffing"]["counts"]
        rates = behaviour_rates(counts)
        share = _pct(rates["weak_call_share"] or 0.0, *wilson_interval(counts.get("bluffs", 0),
                                                                       counts.get("calling_hands", 0)))
        won = _pct(rates["bluff_win_rate"] or 0.0, *wilson_interval(counts.get("bluffs_won", 0),
                                                                   counts.get("bluffs", 0)))
        return [f"{rates['hands']:,}", f"{rates['truco_call_rate']:.3f}",
                f"{share} ({counts.get('bluffs', 0):,} of {counts.get('calling_hands', 0):,})", won]

    return stage_table(rows, ("bluffing",), [">hands", ">ladder calls per hand",
                                          "share of calls with a bottom-third hand", "bluffs that won the hand"],
                       cells)


def _pct(rate: float, low: float, high: float) -> str:
    return f"{100 * rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def _rate(v: dict[str, Any]) -> str:
    """A pairing's win rate of agent A with its interval."""
    return _pct(v["win_rate_a"], v["ci_low"], v["ci_high"])


def _abr(stage: dict[str, Any]) -> str:
    """An exploit stage's ABR win rate (the best response's) with its interval."""
    abr = stage["abr"]
    cell = _pct(abr["win_rate"], abr["ci_low"], abr["ci_high"])
    if "spread" in stage:  # the strongest of several learners: the others' range beside it
        spread = stage["spread"]
        cell += f" (best of {len(stage['learners'])}; {100 * spread['min']:.1f} to {100 * spread['max']:.1f})"
    return cell


def machine() -> dict[str, Any]:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            model = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import torch

    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__,
            "system": f"{platform.system()} {platform.release()}"}


def render(rows: list[dict[str, Any]], settings: dict[str, Any], host: dict[str, Any], command: str,
           figure: str | None) -> str:
    """The strength report's page: what was measured and how, the headline table, each best response's cost, then
    the sections on bluffing, play-time search, the strongest agent per preset and the gauntlet."""
    lines = _preamble(rows, settings, host, command)
    if figure:
        lines += [f"![strength]({figure})", ""]
    lines += _headline(rows) + _training_cost(rows) + _sections(rows, settings)
    return "\n".join(lines) + "\n"


def _preamble(rows: list[dict[str, Any]], settings: dict[str, Any], host: dict[str, Any], command: str) -> list[str]:
    """The page's opening: the command, the machine, and what each column measures."""
    decisions = settings["decisions"]
    dates = [stage["measured"] for r in rows for stage in _stages(r) if "measured" in stage] or [settings["finished"]]
    lines = [
        "# Strength report",
        "",
        "How strong is each shipped agent, measured against opponents it never trained against and by a trained",
        ("best response? Made by one command, which measures again only what changed: every stage's result is "
         "kept, with the settings it was made with, in the data file beside this page (`strength.json`), and a "
         "stage is reused when an agent's file and the settings are the same:"),
        "",
        "```bash",
        command,
        "```",
        "",
        (f"Report made on: {host['cpu']}, {host['cores']} cores; Python {host['python']}, torch {host['torch']}, "
        f"{host['system']}. Assembled {settings['finished']} from stages measured {min(dates)} to {max(dates)} "
        "(each stage's date is in the data file)."),
        "",
        "Columns:",
        (f"* **ABR win rate**: {ABR_LEARNERS} fresh best-response learners (`truco exploit` with seeds "
        f"{settings['seed']} to {settings['seed'] + ABR_LEARNERS - 1}, the fixed recipe of "
        f"`training/best_response.py`) each train against the agent alone for **{decisions:,} learner decisions**, "
        f"then play it greedily over {settings['eval_matches']:,} duplicate matches; the strongest learner's win "
        "rate with its 95% Wilson interval (an exploitability bound is the best exploiter found; the interval "
        "covers the matches, not the learner's training), and the range of all learners beside it. Lower is "
        "harder to exploit; 50% would mean the learners found nothing to exploit."),
        (f"* **Gauntlet mean / worst**: win rate of the agent over {settings['gauntlet_matches']} duplicate matches "
        "against each of the held-out opponents below (no shipped recipe trains against any of them): the mean "
        "over opponents (normal interval) and the opponent it does worst against."),
        (f"* **vs heuristic / vs random**: {settings['eval_matches']:,} duplicate matches each (seed "
        f"{settings['seed']})."),
        ("* **vs the policy it replaced**: a policy of the rebuilt trainer against the `ppo:<preset>` shipped before "
         "it (kept as ONNX in `agents/policies/previous/`, never trained against), same matches; n/a for the "
         "heuristic and while the previous policy still ships."),
        "",
        ("Budgets are in learner decisions, not minutes, so that every agent faces the same amount of learning: a "
        "minutes budget would give a fast network target ten times the experience of the slow heuristic."),
        "",
    ]
    return lines


def _headline(rows: list[dict[str, Any]]) -> list[str]:
    """One row per agent: its ABR win rate, gauntlet, baselines and the policy it replaced."""
    lines = [("| preset | agent | ABR win rate (lower is better) | gauntlet mean | gauntlet worst | vs heuristic "
              "| vs random | vs the policy it replaced |"), "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        g = row["gauntlet"]
        w = g["worst"]
        vs = row["versus"]
        heur = _pct(vs["heuristic"]["win_rate_a"], vs["heuristic"]["ci_low"], vs["heuristic"]["ci_high"]) \
            if "heuristic" in vs else "(itself)"
        rnd = vs["random"]
        prev = next((v for k, v in vs.items() if k.startswith("onnx:")), None)
        before = _pct(prev["win_rate_a"], prev["ci_low"], prev["ci_high"]) if prev else "n/a"
        lines.append(f"| {row['preset']} | `{row['agent']}` | {_abr(row['exploit'])} "
                     f"| {_pct(g['mean'], g['mean_low'], g['mean_high'])} "
                     f"| {_pct(w['win_rate'], w['ci_low'], w['ci_high'])} vs {w['opponent']} "
                     f"| {heur} | {_pct(rnd['win_rate_a'], rnd['ci_low'], rnd['ci_high'])} | {before} |")
    return lines


def _training_cost(rows: list[dict[str, Any]]) -> list[str]:
    """What each best response of the page cost to train, and where."""
    lines = ["", ("Training cost of each best response (the strongest learner's; the budget above, on the machine it "
                  "trained on):"), "",
              "| preset | target | decisions | training time | decisions/s | machine |",
              "|---|---|---:|---:|---:|---|"]
    for row in rows:
        t = row["exploit"]["training"]
        lines.append(f"| {row['preset']} | `{row['agent']}` | {t['decisions']:,} | {t['seconds'] / 60:.1f} min "
                     f"| {t['decisions_per_second']:,.0f} | {row['exploit'].get('machine', 'not recorded')} |")
    return lines


def _sections(rows: list[dict[str, Any]], settings: dict[str, Any]) -> list[str]:
    """Bluffing, play-time search, the strongest agent per preset and the gauntlet."""
    lines: list[str] = []
    if any("bluffing" in row for row in rows):
        lines += ["", "## Bluffing", "",
                  (f"Each agent's truco-ladder calls over {BLUFF_MATCHES} duplicate matches against `{BLUFF_OPPONENT}` "
                   "(the heuristic's row: against itself). A hand is *bottom-third* when its strength (the share of "
                   "the deck each card beats, summed) is below the lower tertile of the preset's deals; a call with "
                   "one is a bluff. A share near a third means calls that ignore the cards; near 0, no bluffing. "
                   "95% Wilson intervals; per seat-hand, so a hand with several calls by the same seat counts once."),
                  "", *bluffing_table(rows)]
    if any("search" in row for row in rows):
        lines += ["", "## Play-time search", "",
                  (f"Each CFR blueprint as it ships and with play-time search (`,search={SEARCH_MS}`: a budget "
                   f"of {SEARCH_MS} ms on one core at each decision whose public state is small enough to check "
                   "the search exactly, in 1v1 the last trick, and the search played only when its check passes; "
                   f"docs/cfr.md), on the same {settings['eval_matches']:,} duplicate deals: its win rate against the "
                   "heuristic, and against the strongest trained best response of its ABR figure (a best response "
                   "to the blueprint, not to the searching agent: how much of the hole the search closes). 95% "
                   "Wilson intervals. A best response trained against the searching agent itself (one to two hours "
                   "per learner here) moved the ABR win rate by less than its interval when it was measured "
                   "(docs/cfr.md), so the report does not repeat it."),
                  "", *search_table(rows)]
    lines += ["", "## The strongest agent per preset", "", RULE, "",
              ("The head to head of two shipped agents other than the heuristic is played once, "
               f"{settings['eval_matches']:,} duplicate matches, from the side of the first one listed; `truco play`"
               " and `truco serve` play `best:<preset>` unless told otherwise."), "",
              *best_table(rows), "", *shortfall_lines(rows)]
    lines += ["", "## The gauntlet", "",
              ("Fixed per preset (`training/gauntlet.py`); `ppo:gauntlet/...` are the best responses `truco exploit` "
               "trains (seed 0, the standard budget) against the opponent named, packaged under "
               "`agents/policies/gauntlet/`; the one against the heuristic is the very run of the heuristic's ABR "
               "figure above, so the heuristic's own gauntlet holds its exploiter."),
              "", "| opponent | family | spec | what it is |", "|---|---|---|---|"]
    for o in OPPONENTS:
        lines.append(f"| {o.name} | {o.family} | `{o.spec}` | {o.about} |")
    for row in rows:
        lines += ["", f"### `{row['agent']}` on {row['preset']}", "", markdown_table(row["gauntlet"])]
    return lines


def shortfall_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Where each preset's ``best:`` agent misses the bars (exploitability included), with a pointer to what was
    measured of why."""
    lines = [("Where each preset's `best:` agent falls short of the bars, exploitability included (at most "
              "40% ABR win rate and below the heuristic's); what was measured of why is in the "
              "[research log](research.md#where-the-shipped-agents-fall-short):"), ""]
    for preset, agent in choices(rows).items():
        short = shortfalls(next(r for r in rows if r["agent"] == agent and r["preset"] == preset),
                           [r for r in rows if r["preset"] == preset])
        lines.append(f"* {preset}, `{agent}`: " + ("; ".join(short) if short else "every bar passed") + ".")
    return lines


def machine_words() -> str:
    """The machine in a few words, kept with each best response: its training time is only meaningful with it,
    and a report may reuse stages measured on another machine."""
    host = machine()
    return f"{host['cpu']}, {host['cores']} cores"


SHORTFALL_CAUSES = "../../docs/research.md#where-the-shipped-agents-fall-short"


def short_lines(short: list[str] | None) -> list[str]:
    """A card's line on the bars of docs/strength.md: which it misses and where their measured causes are."""
    if short is None:
        return []
    if not short:
        return ["* It passes every bar of docs/strength.md (\"The strongest agent per preset\")."]
    return [("* Where it falls short of the bars of docs/strength.md: " + "; ".join(short)
             + f". What was measured of why: [research log]({SHORTFALL_CAUSES}).")]


def model_card(row: dict[str, Any], meta: dict[str, Any], settings: dict[str, Any],
               short: list[str] | None = None) -> str:
    """The card shipped beside a rebuilt ``ppo:<preset>``: how it was made, what it measured, where it stops."""
    preset, config = row["preset"], meta["config"]
    prev = next((v for k, v in row["versus"].items() if k.startswith("onnx:")), None)
    teacher = config.get("imitation_teacher", "heuristic")
    blueprint = config.get("imitation_decisions") and teacher.split(",")[0] == f"cfr:{preset}"  # the shipped one
    magnet = config.get("magnet") if config.get("magnet_coef") else None

    lines = [
        f"# Model card: `ppo:{preset}`", "",
        (f"One policy network for {preset}, trained by population self-play"
         + (f" after a warm start that imitates {config['imitation_decisions']:,} decisions of `{teacher}` playing "
            "itself (the same run)" if config.get("imitation_decisions") else "")
         + ": it played itself, frozen past snapshots of itself and small shares of the scripted agents in its "
         "config, and acts from its own observation alone (no input, expert or reward term depends on whom it "
         "faces)."), "",
        "## How it was made", "",
        "```bash", f"truco train ppo --config configs/ppo/{preset}.yaml", "python -m training.ship runs/ppo/" + preset,
        "```", "",
        (f"* {meta.get('decisions', 0):,} learner decisions in {meta.get('updates', 0):,} updates, "
        f"{meta.get('seconds', 0) / 3600:.2f} h on the training machine;"),
        (f"* network: hidden layers {config['hidden']}, features `{config.get('features', 'card_strength')}`"
         f"{', the match tally scaling and shifting its features (`tally_film`)' if config.get('tally_film') else ''}"
         f"; plays `{meta.get('play')}` "
        "by default (`ppo:PATH,greedy` or `,sample` to choose);"),
        *([(f"* held near the blueprint `{magnet}` throughout: the loss adds {config['magnet_coef']} times the KL "
            "divergence from the blueprint's strategy at each of its decisions (magnetic mirror descent with a fixed "
            "magnet), so self-play cannot drift far from it where only its own league would reward that;")]
          if magnet else []),
        f"* config hash `{meta.get('config_hash')}`, commit `{meta.get('commit')}` (both in the file's metadata).",
        "", f"![training curves](../../docs/img/ppo_{preset}_training.png)", "",
        *measured_rows(row, settings),
        f"| vs the policy it replaced | {_rate(prev) if prev else 'n/a'} |", "",
        "## Limits", "",
        f"* It plays {preset} only (the file says so; other presets are refused).",
        "* Its numbers are against the agents above, on duplicate deals; it was never measured against people.",
        *short_lines(short),
        ("* A best response trained against it alone wins the ABR rate above: where that is over 50%, a learner "
         "found a way to exploit it."),
        *([(f"* Its {'warm start' if blueprint else 'magnet'} reads the shipped self-play blueprint "
            f"`cfr:{preset}` (`agents/policies/`, made by `truco train cfr --config "
            f"configs/cfr_blueprint_{preset}.yaml`): the run is one command given the repository, but not from "
            "nothing without that file.")] if blueprint or magnet == f"cfr:{preset}" else []),
        ("* These are one training run's numbers. Two training seeds of one config can differ by 20 to 30 points "
         "in ABR win rate (on argentine: 43.4% and 63.1%, 37.9% and 68.0%; [research log](../../docs/research.md)),"
         " so the ABR above is one draw of the recipe, not a property of it."),
        "",
    ]
    return "\n".join(lines)


def measured_rows(row: dict[str, Any], settings: dict[str, Any]) -> list[str]:
    """A model card's "What it measured" heading and table: ABR, gauntlet, heuristic and random (every card)."""
    g, vs = row["gauntlet"], row["versus"]

    return [
        f"## What it measured (`truco report`, {measured_on(row, settings['finished'])}; `docs/strength.md`)", "",
        "| measure | result |", "|---|---|",
        f"| ABR win rate ({settings['decisions']:,} decisions; lower is better) | {_abr(row['exploit'])} |",
        f"| gauntlet mean | {_pct(g['mean'], g['mean_low'], g['mean_high'])} |",
        (f"| gauntlet worst | {_pct(g['worst']['win_rate'], g['worst']['ci_low'], g['worst']['ci_high'])} "
         f"vs {g['worst']['opponent']} |"),
        f"| vs heuristic | {_rate(vs['heuristic'])} |", f"| vs random | {_rate(vs['random'])} |",
        *(f"| vs `{rival}` (head to head) | {_rate(figure)} |" for rival, figure in row.get("rivals", {}).items()
          if isinstance(figure, dict) and "win_rate_a" in figure)]


def search_rows(row: dict[str, Any]) -> list[str]:
    """The model card's rows of the play-time search stage (none when the row has no such stage)."""
    if "search" not in row:
        return []
    s = row["search"]

    n = s["heuristic"]["blueprint"]["matches"]
    lines = [(f"| `{s['searched']}`, vs heuristic ({n:,} matches; the blueprint on the same deals) "
              f"| {_rate(s['heuristic']['searched'])} ({_rate(s['heuristic']['blueprint'])}) |"),
             (f"| `{s['searched']}`, vs the blueprint's trained best response ({n:,} matches; the blueprint) "
              f"| {_rate(s['exploiter']['searched'])} ({_rate(s['exploiter']['blueprint'])}) |")]
    return lines


def blueprint_card(row: dict[str, Any], meta: dict[str, Any], settings: dict[str, Any],
                   short: list[str] | None = None) -> str:
    """The card shipped beside ``cfr:<preset>``: how the blueprint was made, what it measured, where it stops."""
    preset, shipped = row["preset"], meta["shipped"]
    team = make_config(preset).num_players > 2
    seats, partners = ("every seat", ": partners never see each other's cards") if team else ("both seats", "")

    lines = [
        f"# Model card: `cfr:{preset}`", "",
        (f"A self-play blueprint for {preset}: external-sampling MCCFR on the compiled engine, {seats} sharing one "
         f"table, no opponent model, over the information-set abstraction `{meta.get('abstraction')}` (keys "
         f"computed from the seat's own observation, so it plays from what that seat may know{partners}). Each "
         "hand is valued by "
         f"`{(meta.get('solver') or {}).get('utility', 'points')}`."), "",
        "## How it was made", "",
        "```bash", f"truco train cfr --config {shipped['config']}", f"python -m training.ship {shipped['config']}",
        "```", "",
        (f"* {meta.get('iteration', 0):,} iterations (one hand each), {meta.get('nodes', 0):,} nodes walked; "
         f"the shipped table holds the average strategy only (play-only: regrets dropped);"),
        (f"* plays its average strategy {_play_words(meta)} (`cfr:{preset},threshold=X` or `,greedy=1` to "
         "change it);"),
        f"* config hash `{shipped.get('config_hash')}`, commit `{shipped.get('commit')}` (both in the file's header).",
        "", *measured_rows(row, settings), *search_rows(row), "",
        "## Limits", "",
        f"* It plays {preset} only, and only what its abstraction tells apart: hands that share a key share a strategy.",
        "* An information set the run never visited is played uniformly over the legal actions.",
        "* Its numbers are against the agents above, on duplicate deals; it was never measured against people.",
        *short_lines(short),
        "",
    ]
    return "\n".join(lines)


def _play_words(meta: dict[str, Any]) -> str:
    from agents.cfr.table import default_play

    play = default_play(meta)
    if play["mode"] == "threshold":
        return f"thresholded (actions under probability {play['threshold']} dropped, the rest renormalised)"
    return "greedily (its most likely action)" if play["mode"] == "greedy" else "by sampling"


def write_model_cards(rows: list[dict[str, Any]], settings: dict[str, Any], log: Any) -> None:
    from agents.base import SHIPPED_DIR, make_agent

    for row in rows:
        kind = row["agent"].partition(":")[0]
        short = shortfalls(row, [r for r in rows if r["preset"] == row["preset"]])
        if kind == "ppo":
            meta = make_agent(row["agent"]).metadata
            if "config_hash" not in meta:
                continue  # a policy made before the rebuild has no card
            text = model_card(row, meta, settings, short)
        elif kind == "cfr":
            text = blueprint_card(row, make_agent(row["agent"]).table.meta, settings, short)
        else:
            continue
        path = Path(SHIPPED_DIR) / f"{kind}_{row['preset']}.md"
        atomic_write(path, lambda tmp, text=text: Path(tmp).write_text(text), ".md")
        log(f"wrote {path}")


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    presets = list(dict.fromkeys(r["preset"] for r in rows))
    fig, axes = plt.subplots(1, len(presets), figsize=(4.6 * len(presets), 3.6), squeeze=False, sharey=True)
    # each measure: (label, (rate, low, high) of a row); error bars are the 95% intervals
    measures = [("ABR: the best\nresponse's win rate\n(lower is better)",
                 lambda r: (r["exploit"]["abr"]["win_rate"], r["exploit"]["abr"]["ci_low"],
                            r["exploit"]["abr"]["ci_high"])),
                ("the agent's\ngauntlet mean", lambda r: (r["gauntlet"]["mean"], r["gauntlet"]["mean_low"],
                                             r["gauntlet"]["mean_high"])),
                ("the agent's\ngauntlet worst", lambda r: (r["gauntlet"]["worst"]["win_rate"], r["gauntlet"]["worst"]["ci_low"],
                                              r["gauntlet"]["worst"]["ci_high"]))]
    colours = OKABE_ITO[:3]  # told apart with any colour vision
    for ax, preset in zip(axes[0], presets):
        mine = [r for r in rows if r["preset"] == preset]
        width = 0.8 / len(mine)
        for k, r in enumerate(mine):
            rate, low, high = zip(*(f(r) for _, f in measures), strict=True)
            errors = [[v - lo for v, lo in zip(rate, low, strict=True)],
                      [hi - v for v, hi in zip(rate, high, strict=True)]]
            ax.bar([i + k * width for i in range(len(measures))], rate, width, yerr=errors, capsize=2,
                   color=colours[k % len(colours)], label=r["agent"])
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(measures))], [m for m, _ in measures], fontsize=7)
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_ylim(0, 1)
        ax.set_title(preset, fontsize=10)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("win rate (95% interval)")
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png"), ".png")
    plt.close(fig)


def cli_main(args: Any) -> int:
    """``truco report``: exit 0 when the report is written, 2 on bad input (or a preset's folder of ``--runs`` in
    use by another report), 130 when interrupted."""
    presets = args.preset or list(MAIN_PRESETS)
    bad = [p for p in presets if p not in MAIN_PRESETS]
    out = Path(args.out)
    if bad:
        print(f"truco report: error: the report covers presets {list(MAIN_PRESETS)}, not {clip(repr(bad[0]))}",
              file=sys.stderr)
        return 2
    if out.exists() and out.is_dir():
        print(f"truco report: error: --out {str(out)!r} is a folder; give the Markdown file to write",
              file=sys.stderr)
        return 2
    runs = Path(args.runs)
    if runs.exists() and not runs.is_dir():
        print(f"truco report: error: --runs {str(runs)!r} is a file; give the folder for the stage files",
              file=sys.stderr)
        return 2
    settings = {"decisions": args.budget_decisions or STANDARD_DECISIONS, "seed": args.seed,
                "gauntlet_matches": args.gauntlet_matches, "eval_matches": args.matches}
    log = logger.info  # progress: which agent, which stage is run or reused, which file is written

    rows = []
    try:
        stored = stored_rows(data_path(out), page=True)
        kept = [r for r in stored.values() if r["preset"] not in presets]  # the page shows them too
        if kept and (made_with := stored_settings(data_path(out))) != settings:
            changed = next(k for k in settings if made_with.get(k) != settings[k])
            raise ValueError(f"{data_path(out)} holds other presets measured with {changed}={made_with.get(changed)}, "
                             f"not {settings[changed]}: measure every preset (no --preset) or give another --out")
        for preset in presets:
            with hold(runs / preset, f"--runs {str(runs / preset)!r}", recursive=True):
                for agent in agents_of(preset):
                    log(f"{preset}: {agent}")
                    rows.append(measure(agent, preset, runs, settings["decisions"], args.seed, args.workers,
                                        args.gauntlet_matches, args.matches, not args.no_progress, log,
                                        stored.get((preset, agent))))
    except (ValueError, OSError) as exc:
        print(f"truco report: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ninterrupted: finished stages are kept under {runs}; run the same command to resume "
              f"({out} is not written)", file=sys.stderr)
        return 130
    settings["finished"] = time.strftime("%Y-%m-%d")
    # a --preset run measures its presets and keeps the others' rows, so the page and the data file always show
    # every preset measured (the same settings), and no measurement is lost
    data = sorted(rows + kept, key=lambda r: list(MAIN_PRESETS).index(r["preset"]))
    shown = list(dict.fromkeys(r["preset"] for r in data))
    command = "truco report" + ("" if shown == list(MAIN_PRESETS) else "".join(f" --preset {p}" for p in shown))
    figure = out.parent / "img" / "strength.png"
    plot(data, figure)
    text = render(data, settings, machine(), command, os.path.relpath(figure, out.parent))
    atomic_write(out, lambda tmp: Path(tmp).write_text(text), ".md")
    atomic_write_json(data_path(out), {"command": command, "settings": settings, "rows": data}, indent=1)
    if out.resolve() == OWN_REPORT:
        write_model_cards(rows, settings, log)
        write_choices(data, Path(BEST_FILE))
        log(f"wrote {BEST_FILE}")
    else:
        log(f"model cards not written: they cite {DEFAULT_OUT}, and this report went to {out}")
    print(text)
    logger.info(f"wrote {out}, {data_path(out)} and {figure}")
    return 0
