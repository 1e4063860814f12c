"""The rule that names ``best:<preset>``: which shipped agent of a preset the report calls its strongest.

The rule is fixed before anything is measured, and docs/strength.md states it (:data:`RULE`), so that the choice
follows from the numbers and never the numbers from a wish for a choice. The bars are issue 59's, measured by
``truco report`` on every shipped agent of the preset (the heuristic, ``ppo:<preset>``, ``cfr:<preset>``):

1. an agent is a *candidate* when it passes every bar except exploitability: at least 62% against the heuristic
   (the heuristic itself does not pass it), against random at least the heuristic's own rate less 3 points, no
   gauntlet opponent above 50% against it (its worst gauntlet win rate at least 50%), and at least 50% head to
   head against every other shipped agent of the preset;
2. among candidates, the lowest ABR win rate wins (the head to head cannot break a tie between candidates: each
   has won at least half of their matches, so they split them evenly);
3. with no candidate, the agent that passes the most of those bars, ties broken by the lowest ABR win rate.

``truco report`` writes the choice to ``agents/policies/best.json`` (:func:`write_choices`, only for the
repository's own report), which :mod:`agents.best` reads.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from training.atomic import atomic_write_json
from training.measure.report_data import stages_of

RULE = ("`best:<preset>` names, among the shipped agents of the preset, the one that passes every bar but "
        "exploitability (at least 62% against the heuristic, which the heuristic itself does not pass; against "
        "random at least the heuristic's own rate less 3 points; no gauntlet opponent above 50% against it; at "
        "least 50% head to head against every other shipped agent) with the lowest ABR win rate; when none passes "
        "them all, the one that passes the most, ties broken by the lowest ABR win rate. The rule was written "
        "before the figures it applies to.")
#: Bar names, in the order the report's table shows them.
BARS = ("vs heuristic >= 62%", "vs random >= heuristic's - 3 pts", "gauntlet worst >= 50%", "head to head >= 50%")


def head_to_head(rows: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    """Win rate of agent A against agent B for every ordered pair of the preset's agents whose matches the report
    played: each agent's ``versus`` (the heuristic among its opponents) and ``rivals`` stages, and the complement
    for the other seat of each pairing (a match always has a winner)."""
    rates: dict[tuple[str, str], float] = {}
    agents = {row["agent"] for row in rows}
    for row in rows:
        for stage in ("versus", "rivals"):
            for opponent, figure in (row.get(stage) or {}).items():
                if opponent in agents and isinstance(figure, dict):
                    rates[(row["agent"], opponent)] = figure["win_rate_a"]
                    rates.setdefault((opponent, row["agent"]), 1.0 - figure["win_rate_a"])
    return rates


def bars(row: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, bool | None]:
    """Which bars ``row``'s agent passes (None: not measured, which counts as not passed)."""
    heuristic = next(r for r in rows if r["agent"] == "heuristic")
    pairs = head_to_head(rows)
    others = [r["agent"] for r in rows if r["agent"] != row["agent"]]
    against = [pairs.get((row["agent"], other)) for other in others]
    vs = row["versus"]
    return {
        BARS[0]: row["agent"] != "heuristic" and vs["heuristic"]["win_rate_a"] >= 0.62,
        BARS[1]: vs["random"]["win_rate_a"] >= heuristic["versus"]["random"]["win_rate_a"] - 0.03,
        BARS[2]: row["gauntlet"]["worst"]["win_rate"] >= 0.5,
        BARS[3]: None if None in against else all(rate >= 0.5 for rate in against),
    }


#: The exploitability bar, which the rule leaves to the tie-break: at most this ABR win rate, and below the
#: heuristic's.
ABR_BAR = 0.40


def shortfalls(row: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """Each bar ``row``'s agent misses, in words with its figure: what its model card and the report say of where
    it falls short (the exploitability bar included)."""
    heuristic = next(r for r in rows if r["agent"] == "heuristic")
    passed = bars(row, rows)
    vs, pct = row["versus"], lambda rate: f"{100 * rate:.1f}%"
    figures = {
        BARS[0]: (f"{pct(vs['heuristic']['win_rate_a'])} against the heuristic (the bar: 62%)"
                  if "heuristic" in vs else None),
        BARS[1]: (f"{pct(vs['random']['win_rate_a'])} against random (the bar: the heuristic's "
                  f"{pct(heuristic['versus']['random']['win_rate_a'])} less 3 points)"),
        BARS[2]: (f"{pct(row['gauntlet']['worst']['win_rate'])} against its worst gauntlet opponent"
                  f"{', ' + row['gauntlet']['worst']['opponent'] if 'opponent' in row['gauntlet']['worst'] else ''} "
                  "(the bar: 50%)"),
        BARS[3]: "under 50% head to head against " + ", ".join(
            f"`{other}` ({pct(rate)})" for (agent, other), rate in sorted(head_to_head(rows).items())
            if agent == row["agent"] and rate < 0.5) if passed[BARS[3]] is False else "a head to head not played",
    }
    lines = [figures[name] for name, ok in passed.items() if not ok and figures[name]]
    abr, heuristic_abr = row["exploit"]["abr"]["win_rate"], heuristic["exploit"]["abr"]["win_rate"]
    if row["agent"] != "heuristic" and (abr > ABR_BAR or abr >= heuristic_abr):
        lines.append(f"an ABR win rate of {pct(abr)} (the bar: at most {pct(ABR_BAR)} and below the heuristic's "
                     f"{pct(heuristic_abr)})")
    return lines


#: Where a preset's ``best:`` agent passes every bar, the bars rise (issue 73): one best response at
#: :data:`RISE_FACTOR` times the standard budget (seed 0 of the report's learners) wins at most :data:`RISE_BAR`.
RISE_FACTOR = 5
RISE_BAR = 0.45


def passes_every_bar(row: dict[str, Any], rows: list[dict[str, Any]]) -> bool:
    """All four bars and exploitability: what earns a preset's ``best:`` agent the risen bar."""
    return row["agent"] != "heuristic" and all(bars(row, rows).values()) and not shortfalls(row, rows)


def rise_line(row: dict[str, Any]) -> str:
    """The risen bar in words, for a row that has its ``rise`` stage."""
    abr = row["rise"]["abr"]
    verdict = "passed" if abr["win_rate"] <= RISE_BAR else "missed"
    return (f"a best response at {RISE_FACTOR} times the standard budget "
            f"({row['rise']['budget']['decisions']:,} learner decisions) wins {100 * abr['win_rate']:.1f}% "
            f"[{100 * abr['ci_low']:.1f}, {100 * abr['ci_high']:.1f}] against it: the risen bar (at most "
            f"{100 * RISE_BAR:.0f}%) {verdict}")


def choose(rows: list[dict[str, Any]]) -> str:
    """The agent spec the rule (module docstring) names among one preset's rows."""
    passed = {row["agent"]: sum(bool(v) for v in bars(row, rows).values()) for row in rows}
    abr = {row["agent"]: row["exploit"]["abr"]["win_rate"] for row in rows}
    return min(passed, key=lambda a: (-passed[a], abr[a]))  # all bars passed first: the candidates


def best_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown: per preset and agent, the bars it passes and the ABR win rate; the chosen agent in bold."""
    lines = ["| preset | agent | " + " | ".join(BARS) + " | ABR win rate | `best:` |",
             "|---|---|" + "---|" * (len(BARS) + 2)]
    for preset in dict.fromkeys(r["preset"] for r in rows):
        mine = [r for r in rows if r["preset"] == preset]
        best = choose(mine)
        for row in mine:
            marks = ["n/a" if v is None else ("yes" if v else "no") for v in bars(row, mine).values()]
            abr = row["exploit"]["abr"]
            name = f"**`{row['agent']}`**" if row["agent"] == best else f"`{row['agent']}`"
            lines.append(f"| {preset} | {name} | " + " | ".join(marks)
                         + f" | {100 * abr['win_rate']:.1f}% | {'yes' if row['agent'] == best else ''} |")
    return lines


def headline(rows: list[dict[str, Any]]) -> list[str]:
    """The README's table: per preset, the agent the rule chooses and its main figures (a test keeps the README's
    copy equal to this, so the README never quotes a figure the report no longer holds)."""

    def pct(value: float) -> str:
        return f"{100 * value:.1f}%"

    lines = [("| preset | `best:<preset>` is | vs heuristic | vs random | ABR win rate (lower is better) "
              "| gauntlet worst |"), "|---|---|---:|---:|---:|---:|"]
    chosen = choices(rows)
    for row in rows:
        if chosen[row["preset"]] == row["agent"]:
            vs = row["versus"]
            lines.append(f"| {row['preset']} | `{row['agent']}` | "
                         f"{pct(vs['heuristic']['win_rate_a']) if 'heuristic' in vs else '(itself)'} | "
                         f"{pct(vs['random']['win_rate_a'])} | {pct(row['exploit']['abr']['win_rate'])} | "
                         f"{pct(row['gauntlet']['worst']['win_rate'])} |")
    return lines


def choices(rows: list[dict[str, Any]]) -> dict[str, str]:
    """``{preset: spec}`` for every preset among ``rows``."""
    presets = dict.fromkeys(r["preset"] for r in rows)
    return {p: choose([r for r in rows if r["preset"] == p]) for p in presets}


def write_choices(rows: list[dict[str, Any]], path: Path) -> None:
    """``agents/policies/best.json``: the choice per preset, with the rule and the day of the newest measurement
    it rests on (not the day it was written: the same data makes the same file on any day, as a clone's remade
    report must)."""
    made = max((stage["measured"] for row in rows for stage in stages_of(row) if "measured" in stage),
               default=time.strftime("%Y-%m-%d"))
    atomic_write_json(path, {"rule": RULE, "made": made, "best": choices(rows)}, indent=1)
