"""The strength report's data (docs/strength.json and the stage files under ``--runs``): what each stage holds,
the fixed settings some stages are measured with, and the checks every figure passes when it is read back.

Why a module of its own: the page, the model cards and the orchestration all read this data, and what they read
back is checked once, here (issue 72): an edited or hostile file is refused in one line that names the file, the
field and what is allowed, never shown as 750.0% nor ended in a traceback.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

from training.measure.population import REPORT_PRESETS
from training.measure.stages import read_json
from truco_env.limits import clip

#: Matches of the bluffing stage: enough for a few thousand ladder calls per agent.
BLUFF_MATCHES = 400
BLUFF_OPPONENT = "heuristic"
#: Play-time search: the budget per decision (ms). Its comparisons play as many duplicate matches as the other
#: stages: since searches run only where they are checked (the last trick in 1v1), a searched match costs 1 to 2 s
#: of CPU, not the 7 s of a search at every decision.
SEARCH_MS = 200


def stages_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's stage results (the values that carry a ``status``)."""
    return [v for v in row.values() if isinstance(v, dict) and "status" in v]


def measured_on(row: dict[str, Any], default: str) -> str:
    """The date of the row's most recently measured stage (when its numbers last changed); ``default`` when no
    stage is dated."""
    return max((stage["measured"] for stage in stages_of(row) if "measured" in stage), default=default)


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
STAGE = {"status?": "text", "measured?": "text", "settings?": "any", "seconds?": "seconds", "cpu_seconds?": "seconds"}
_WIN_RATE = {"win_rate": "rate", "ci_low": "rate", "ci_high": "rate"}
_PAIRINGS = {**STAGE, "*": FIGURE}  # a figure per opponent
STAGES = {
    "exploit": {**STAGE, "seed?": "integer", "machine?": "text",
                "abr": {**_WIN_RATE, **dict.fromkeys(("matches?", "wins?", "losses?", "draws?"), "count")},
                "training~": {"decisions": "count", "seconds": "seconds", "decisions_per_second": "seconds"},
                "spread?": {"min": "rate", "max": "rate"}, "learners~": [{**_WIN_RATE, "seconds?": "seconds", "cpu_seconds?": "seconds"}]},
    "gauntlet": {**STAGE, "mean": "rate", "mean_low": "bound", "mean_high": "bound",
                 "worst": {**_WIN_RATE, "opponent": "text", "spec~": "text"},
                 "opponents~": [{**_WIN_RATE, "opponent": "text", "family": "text", "spec": "text",
                                 "matches": "positive"}]},
    "versus": {**_PAIRINGS, "random": FIGURE}, "rivals": _PAIRINGS,
    "bluffing": {**STAGE, "opponent": "text", "matches": "count",
                 "counts": {"hands": "positive", "*": "integer",
                            **dict.fromkeys(("bluffs?", "calling_hands?", "bluffs_won?", "truco_calls?"), "count")}},
    "rise": {**STAGE, "abr": _WIN_RATE, "budget": {"decisions": "positive"}},
    "search": {**STAGE, "searched": "text",
               **{side: {"blueprint": FIGURE, "searched": FIGURE, "seconds?": "seconds"}
                  for side in ("heuristic", "exploiter")}},
}
ROW = {"agent": "text", "preset": tuple(REPORT_PRESETS),
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
    agent) once, a heuristic row in every preset (the bars of :mod:`training.measure.best_agent` are relative to it),
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


def read_report(path: Path, page: bool = False) -> dict[str, Any] | None:
    """A report's data file, checked (:func:`check_report`); None when there is no file. A file that is there
    but unreadable or not what the report writes is an error rather than a silent re-measurement of hours."""
    if not path.exists():
        return None
    try:
        data = read_json(path)
        check_report(data, page)
    except ValueError as exc:
        raise ValueError(f"{path} is not a report's data file: {exc} (remove it to measure every stage again)") \
            from None
    for row in data["rows"]:  # stages stored before stages were dated were measured by the report that stored them
        for stage in stages_of(row):
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

