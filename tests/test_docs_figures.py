"""Docs that cannot drift (issue 74 item 7): what the README, the docs and the model cards say of the strength data
is checked against that data, docs/strength.json, and no doc cites a file or branch outside the repository.

1. **Strength tables.** Every Markdown table of a checked page with a preset column, an agent column and a column
   this file knows (an ABR win rate, a gauntlet mean or worst case, a win rate against the heuristic, random or the
   policy replaced) has each such cell compared, figure and interval, with the data; an agent that is not in the
   data fails. A new table of that shape is checked without a word here.
2. **Model cards.** The "What it measured" table of every shipped ``ppo:``/``cfr:`` card beside the policies, its
   date, and its line on the bars, against the data (``truco report`` writes the cards from it).
3. **Prose.** Each sentence of :data:`QUOTES` that quotes a figure, and each of :data:`CLAIMS` that states a pass,
   a fail or a comparison, is found in its page and checked. A sentence reworded so that it is no longer found
   fails too, naming it: update it here, or point the page to docs/strength.md instead of quoting a figure.
   Anywhere in a checked page, "`AGENT` passes every bar" and "`AGENT` is `best:PRESET`" are checked as well.
4. **What else a doc states of the code** and once drifted: the `truco` subcommands of training/cli/__init__.py's docstring,
   what each PPO config sets (configs/README.md), the network sizes of docs/export.md.
5. **Citations.** No page under docs/ nor the README cites a session's queue script, a script inside a run folder,
   a path beside the repository (a sibling ``shared`` folder), a git branch, or a ``runs/pilots/`` folder that no
   command of the same page writes (a reader's own ``--run-dir runs/pilots/KM`` is a command's output, and fine).

Pages not checked against the data (:data:`HISTORY`): docs/research.md, a dated log whose figures are what was
measured then; CHANGELOG.md, the same; docs/strength.md, which ``truco report`` writes from the data (a test of
tests/test_gauntlet.py remakes it byte for byte). The failure messages name the file, the figure quoted and the
data's figure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = "docs/strength.json"
#: Pages whose figures are history or are written from the data itself (module docstring).
HISTORY = {"docs/research.md", "docs/strength.md", "CHANGELOG.md"}
#: The spec of a shipped agent as the docs write it in backticks.
SPEC = r"(?:heuristic|ppo:[\w-]+|cfr:[\w-]+)"
NUM = r"(\d+(?:\.\d+)?)"


# ------------------------------------------------------------------------------------------------ the data

@cache
def data() -> dict[str, Any]:
    return json.loads((ROOT / DATA).read_text(encoding="utf-8"))


@cache
def rows() -> dict[tuple[str, str], dict[str, Any]]:
    return {(row["preset"], row["agent"]): row for row in data()["rows"]}


def preset_rows(preset: str) -> list[dict[str, Any]]:
    return [row for row in data()["rows"] if row["preset"] == preset]


def row_of(preset: str, agent: str) -> dict[str, Any]:
    return rows()[(preset, agent)]


def preset_of(spec: str) -> str:
    return spec.partition(":")[2]


def pct(rate: float) -> str:
    return f"{100 * rate:.1f}"


def figure(rate: float, low: float | None = None, high: float | None = None) -> str:
    """A figure as the report writes it: ``38.8% [36.7, 41.0]``."""
    return f"{pct(rate)}%" + ("" if low is None else f" [{pct(low)}, {pct(high)}]")


def stage_dates(chosen: list[dict[str, Any]]) -> str:
    """The dates the stages of ``chosen`` rows were measured, as a doc writes them: one date, or ``A to B``."""
    dates = sorted({stage["measured"] for row in chosen for stage in row.values()
                    if isinstance(stage, dict) and "measured" in stage})
    return dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"


def shortfalls(row: dict[str, Any]) -> list[str]:
    from training.measure.best_agent import shortfalls as missed

    return missed(row, preset_rows(row["preset"]))


def best(preset: str) -> str:
    from training.measure.best_agent import choices

    return choices(data()["rows"])[preset]


# ------------------------------------------------------------------------------------------------ the pages

def checked_pages() -> list[str]:
    """The README, every page under docs/ and the other folders' READMEs, less :data:`HISTORY`."""
    names = ["README.md", *(p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "docs").glob("*.md")))]
    names += [p.relative_to(ROOT).as_posix() for p in sorted(ROOT.glob("*/README.md"))]
    names += ["agents/policies/previous/README.md"]
    return [name for name in names if name not in HISTORY and (ROOT / name).is_file()]


@cache
def text_of(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def flat(text: str) -> str:
    """The text with every run of white space (line breaks too) as one space: prose wraps anywhere."""
    return re.sub(r"\s+", " ", text)


def tables(text: str) -> list[tuple[int, list[str], list[tuple[int, list[str]]]]]:
    """The Markdown tables of ``text``: (line of the header, header cells, [(line, cells), ...])."""

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    out, lines, i = [], text.splitlines(), 0
    while i + 1 < len(lines):
        if lines[i].lstrip().startswith("|") and re.fullmatch(r"\s*\|?(\s*:?-+:?\s*\|)+\s*:?-*:?\s*", lines[i + 1]):
            header, body, j = cells(lines[i]), [], i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                body.append((j + 1, cells(lines[j])))
                j += 1
            out.append((i + 1, header, body))
            i = j
        else:
            i += 1
    return out


def plain(cell: str) -> str:
    """A cell without its Markdown emphasis and code marks."""
    return re.sub(r"[*`]", "", cell).strip()


# ------------------------------------------------------------------------------------------------ one figure

def compare(where: str, what: str, cell: str, want: str) -> list[str]:
    """``cell`` quotes the figure ``want`` (``38.8% [36.7, 41.0]`` or ``38.8%``): its first percentage, and its
    interval when the cell gives one, must be the data's."""
    quoted = re.search(NUM + r"%(?: \[" + NUM + r"%?, " + NUM + r"%?\])?", plain(cell))
    if quoted is None:
        return [f"{where}: {what}: no figure in {cell!r}; {DATA} has {want}"]
    got = quoted.group(0).replace("%,", ",").replace("%]", "]")
    if not quoted.group(2):
        want = want.split(" [")[0]
    return [] if got == want else [f"{where}: {what} is quoted as {got}; {DATA} has {want}"]


def abr_cell(where: str, row: dict[str, Any], cell: str) -> list[str]:
    stage = row["exploit"]
    abr = stage["abr"]
    problems = compare(where, f"the ABR win rate of `{row['agent']}` ({row['preset']})", cell,
                       figure(abr["win_rate"], abr["ci_low"], abr["ci_high"]))
    spread = re.search(r"best of (\d+); " + NUM + " to " + NUM, cell)
    if spread:
        got = f"best of {spread.group(1)}; {spread.group(2)} to {spread.group(3)}"
        want = (f"best of {len(stage['learners'])}; {pct(stage['spread']['min'])} to "
                f"{pct(stage['spread']['max'])}")
        if got != want:
            problems.append(f"{where}: the ABR learners of `{row['agent']}` ({row['preset']}) are quoted as "
                            f"{got!r}; {DATA} has {want!r}")
    return problems


def rate_figure(v: dict[str, Any]) -> str:
    """A pairing's win rate of agent A with its interval."""
    return figure(v["win_rate_a"], v["ci_low"], v["ci_high"])


def versus_cell(where: str, row: dict[str, Any], opponent: str, cell: str) -> list[str]:
    """A win rate of the row's agent against ``opponent`` (``previous``: the policy it replaced)."""
    versus = {**row["versus"], **(row.get("rivals") or {})}
    if opponent == "previous":
        opponent = next((k for k in versus if k.startswith("onnx:")), "previous")
    what = f"`{row['agent']}` against {opponent} ({row['preset']})"
    if plain(cell) == "(itself)":
        return [] if opponent == row["agent"] else [f"{where}: {what} is quoted as (itself)"]
    if plain(cell) == "n/a":
        if opponent not in versus:
            return []
        return [f"{where}: {what} is quoted as n/a; {DATA} has {figure(versus[opponent]['win_rate_a'])}"]
    if opponent not in versus:
        return [f"{where}: {what} is quoted ({cell}); {DATA} has no such figure"]
    return compare(where, what, cell, rate_figure(versus[opponent]))


def mean_cell(where: str, row: dict[str, Any], cell: str) -> list[str]:
    g = row["gauntlet"]
    return compare(where, f"the gauntlet mean of `{row['agent']}` ({row['preset']})", cell,
                   figure(g["mean"], g["mean_low"], g["mean_high"]))


def worst_cell(where: str, row: dict[str, Any], cell: str) -> list[str]:
    worst = row["gauntlet"]["worst"]
    what = f"the worst gauntlet case of `{row['agent']}` ({row['preset']})"
    problems = compare(where, what, cell, figure(worst["win_rate"], worst["ci_low"], worst["ci_high"]))
    named = re.search(r"\bvs (.+)$", plain(cell))
    if named:
        opponent = named.group(1).strip()
        if opponent == "its best response":  # the heuristic's own exploiter, one of its gauntlet
            opponent = f"br-{row['agent']}"
        if opponent != worst["opponent"]:
            problems.append(f"{where}: {what} is quoted against {named.group(1)!r}; {DATA} has "
                            f"{worst['opponent']!r}")
    return problems


def mean_worst_cell(where: str, row: dict[str, Any], cell: str) -> list[str]:
    mean, _, worst = cell.partition(" / ")
    return mean_cell(where, row, mean) + worst_cell(where, row, worst)


#: Column headers (lower case, marks dropped) and how a cell of theirs is checked: (where, row, cell, the row's
#: other cells by header) -> problems.
COLUMNS: dict[str, Callable[..., list[str]]] = {
    "abr win rate": lambda where, row, cell, _: abr_cell(where, row, cell),
    "abr win rate (lower is better)": lambda where, row, cell, _: abr_cell(where, row, cell),
    "vs heuristic": lambda where, row, cell, _: versus_cell(where, row, "heuristic", cell),
    "vs random": lambda where, row, cell, _: versus_cell(where, row, "random", cell),
    "vs the policy it replaced": lambda where, row, cell, _: versus_cell(where, row, "previous", cell),
    "gauntlet mean": lambda where, row, cell, _: mean_cell(where, row, cell),
    "gauntlet worst": lambda where, row, cell, _: worst_cell(where, row, cell),
    "gauntlet mean / worst": lambda where, row, cell, _: mean_worst_cell(where, row, cell),
    "a win rate [95% ci]": lambda where, row, cell, other: versus_cell(where, row, plain(other["agent b"]), cell),
}
#: Agent columns: "agent", the README's "`best:<preset>` is" (which must also be the rule's choice), and a
#: pairing table's "agent A" (checked only where the data holds the pairing: truco eval's tables hold others).
AGENT_COLUMNS = ("agent", "best:<preset> is", "agent a")


def table_problems(name: str) -> tuple[int, list[str]]:
    """(how many cells were checked, the problems) for every strength table of page ``name``."""
    checked, problems = 0, []
    for _, header, body in tables(text_of(name)):
        keys = [plain(h).lower() for h in header]
        agent_key = next((k for k in AGENT_COLUMNS if k in keys), None)
        figures = [k for k in keys if k in COLUMNS]
        if "preset" not in keys or agent_key is None or not figures:
            continue
        for lineno, cells in body:
            other = dict(zip(keys, cells))
            where = f"{name}:{lineno}"
            preset, agent = plain(other.get("preset", "")), plain(other.get(agent_key, ""))
            if (preset, agent) not in rows():
                if agent_key != "agent a":
                    problems.append(f"{where}: `{agent}` on {preset} is quoted; {DATA} has no such row")
                continue
            row = row_of(preset, agent)
            if agent_key == "agent a" and plain(other.get("agent b", "")) not in row["versus"]:
                continue
            if agent_key == "best:<preset> is" and best(preset) != agent:
                problems.append(f"{where}: `best:{preset}` is quoted as `{agent}`; the rule makes it "
                                f"`{best(preset)}` of {DATA}")
            if "matches" in other and agent_key == "agent a":
                want = row["versus"][plain(other["agent b"])]["matches"]
                if other["matches"].replace(",", "") != str(want):
                    problems.append(f"{where}: {other['matches']} matches quoted; {DATA} has {want}")
            for key in figures:
                problems += COLUMNS[key](where, row, other[key], other)
                checked += 1
    return checked, problems


def test_every_strength_table_of_the_docs_quotes_the_data():
    counts, problems = {}, []
    for name in checked_pages():
        counts[name], found = table_problems(name)
        problems += found
    assert not problems, "\n".join(problems)
    # the tables this was written for are found and checked (a parser that finds nothing would pass)
    assert counts["README.md"] >= 4 * 4 and counts["docs/cfr.md"] >= 4 * 3 and counts["docs/evaluation.md"] >= 4


# ------------------------------------------------------------------------------------------------ model cards

#: A model card's "What it measured" rows: the measure's words -> how its result is checked.
CARD_ROWS: list[tuple[str, Callable[[str, dict[str, Any], str, re.Match], list[str]]]] = [
    (r"ABR win rate \(([\d,]+) decisions; lower is better\)", lambda w, row, cell, m: card_abr(w, row, cell, m)),
    (r"gauntlet mean", lambda w, row, cell, m: mean_cell(w, row, cell)),
    (r"gauntlet worst", lambda w, row, cell, m: worst_cell(w, row, cell)),
    (r"vs heuristic", lambda w, row, cell, m: versus_cell(w, row, "heuristic", cell)),
    (r"vs random", lambda w, row, cell, m: versus_cell(w, row, "random", cell)),
    (r"vs the policy it replaced", lambda w, row, cell, m: versus_cell(w, row, "previous", cell)),
    (r"vs `(" + SPEC + r")` \(head to head\)", lambda w, row, cell, m: versus_cell(w, row, m.group(1), cell)),
    (r"`(cfr:[\w-]+,search=\d+)`, vs (heuristic|the blueprint's trained best response) \(.*\)",
     lambda w, row, cell, m: search_cell(w, row, m, cell)),
]


def card_abr(where: str, row: dict[str, Any], cell: str, match: re.Match) -> list[str]:
    """The ABR row of a card: the figure, and the budget its words name."""
    budget = data()["settings"]["decisions"]
    problems = abr_cell(where, row, cell)
    if match.group(1).replace(",", "") != str(budget):
        problems.append(f"{where}: the ABR budget is quoted as {match.group(1)} decisions; {DATA} has {budget:,}")
    return problems


def search_cell(where: str, row: dict[str, Any], match: re.Match, cell: str) -> list[str]:
    """``SEARCHED (BLUEPRINT)``: the searching agent's win rate, the blueprint's on the same deals beside it."""
    search = row["search"]
    if match.group(1) != search["searched"]:
        return [f"{where}: the searching agent is quoted as `{match.group(1)}`; {DATA} has `{search['searched']}`"]
    stage = search["heuristic" if match.group(2) == "heuristic" else "exploiter"]
    searched, _, blueprint = cell.partition("(")
    what = f"`{search['searched']}` against {match.group(2)}"
    return (compare(where, what, searched, rate_figure(stage["searched"]))
            + compare(where, f"{what}: its blueprint on the same deals", blueprint, rate_figure(stage["blueprint"])))


def card_names() -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for pattern in ("ppo_*.md", "cfr_*.md")
                  for p in (ROOT / "agents" / "policies").glob(pattern))


def card_problems(name: str) -> list[str]:
    kind, _, preset = Path(name).stem.partition("_")
    if (preset, f"{kind}:{preset}") not in rows():
        return [f"{name}: a model card of `{kind}:{preset}`, which {DATA} does not measure"]
    row, text, problems = row_of(preset, f"{kind}:{preset}"), text_of(name), []
    dated = re.search(r"## What it measured \(`truco report`, (\d{4}-\d\d-\d\d);", text)
    last = max(stage["measured"] for stage in row.values() if isinstance(stage, dict) and "measured" in stage)
    if dated is None or dated.group(1) != last:
        problems.append(f"{name}: measured on {dated.group(1) if dated else '(no date)'}; {DATA}'s last stage of "
                        f"`{row['agent']}` was measured {last}")
    measured = [t for t in tables(text) if [plain(h) for h in t[1]] == ["measure", "result"]]
    if len(measured) != 1:
        return problems + [f"{name}: no single \"| measure | result |\" table"]
    for lineno, (measure, cell, *_) in measured[0][2]:
        where = f"{name}:{lineno}"
        for pattern, check in CARD_ROWS:
            match = re.fullmatch(pattern, measure)
            if match:
                problems += check(where, row, cell, match)
                break
        else:
            problems.append(f"{where}: a measure this test does not know, {measure!r}: teach CARD_ROWS to check it")
    short = shortfalls(row)
    want = ("It passes every bar of docs/strength.md" if not short
            else "Where it falls short of the bars of docs/strength.md: " + "; ".join(short) + ".")
    if want not in flat(text):
        problems.append(f"{name}: its line on the bars is not {DATA}'s: {want!r}")
    return problems


def test_the_model_cards_quote_the_data():
    names = card_names()
    assert len(names) == sum(1 for _, agent in rows() if agent != "heuristic"), names
    problems = [p for name in names for p in card_problems(name)]
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------------------------ prose

def search_within_intervals(kinds: tuple[str, ...]) -> str | None:
    """None when every blueprint's searching agent lands inside the blueprint's own interval, on each of ``kinds``
    ("heuristic": against it; "exploiter": against the blueprint's trained best response)."""
    for row in data()["rows"]:
        for kind in kinds if "search" in row else ():
            stage = row["search"][kind]
            low, high = stage["blueprint"]["ci_low"], stage["blueprint"]["ci_high"]
            if not low <= stage["searched"]["win_rate_a"] <= high:
                return (f"`{row['search']['searched']}` {figure(stage['searched']['win_rate_a'])} against {kind}, "
                        f"outside its blueprint's {figure(stage['blueprint']['win_rate_a'], low, high)}")
    return None


def abr(preset: str, agent: str) -> str:
    return pct(row_of(preset, agent)["exploit"]["abr"]["win_rate"])


def versus(preset: str, agent: str, opponent: str, key: str = "win_rate_a") -> str:
    return pct(row_of(preset, agent)["versus"][opponent][key])


def learners() -> str:
    """How many best-response learners each ABR figure of the data is the strongest of, in words."""
    counts = {len(row["exploit"]["learners"]) for row in data()["rows"]}
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
    return words.get(counts.pop(), "?") if len(counts) == 1 else f"{sorted(counts)} (not one number)"


#: Sentences that quote figures of the data: (page, pattern over the page's text with white space made single
#: spaces, each group's figure from the data).
QUOTES: list[tuple[str, str, Callable[[], tuple[str, ...]]]] = [
    ("README.md", (r"from its figures \(([\d,]+) duplicate matches each; `truco report`, stages measured "
                   r"(\S+(?: to \S+)?)\)"),
     lambda: (f"{data()['settings']['eval_matches']:,}",
              stage_dates([row_of(p, best(p)) for p in dict.fromkeys(r["preset"] for r in data()["rows"])]))),
    ("docs/cfr.md", r"its data file `strength.json`, stages of (\S+(?: to \S+)?);",
     lambda: (stage_dates([row_of(p, a) for p in ("argentine", "paulista") for a in ("heuristic", f"cfr:{p}")]),)),
    ("docs/cfr.md", r"its trained best response wins (\d+\.\d)% where the heuristic's wins (\d+\.\d)%",
     lambda: (abr("argentine", "cfr:argentine"), abr("argentine", "heuristic"))),
    ("docs/cfr.md", (r"both beat it: (\d+\.\d)% and (\d+\.\d)% of ([\d,]+) duplicate matches, intervals "
                     r"starting at (\d+\.\d)% and (\d+\.\d)%"),
     lambda: (versus("argentine", "cfr:argentine", "heuristic"), versus("paulista", "cfr:paulista", "heuristic"),
              f"{row_of('argentine', 'cfr:argentine')['versus']['heuristic']['matches']:,}",
              versus("argentine", "cfr:argentine", "heuristic", "ci_low"),
              versus("paulista", "cfr:paulista", "heuristic", "ci_low"))),
    ("docs/senas.md", r"against the heuristic on `argentine-2v2` \((\d+\.\d)%, docs/strength.md\)",
     lambda: (versus("argentine-2v2", "ppo:argentine-2v2", "heuristic"),)),
    ("docs/exploitability.md", r"the figures in docs/strength.json were measured so, (\S+(?: to \S+)?)\.",
     lambda: (stage_dates(data()["rows"]),)),
    ("README.md", r"The ABR win rate is the strongest of (\w+) trained best responses", lambda: (learners(),)),
    ("docs/cfr.md", r"the ABR win rate is the strongest of (\w+) best responses", lambda: (learners(),)),
    ("docs/exploitability.md", r"figure is the strongest of (\w+) learner seeds", lambda: (learners(),)),
]



def random_margin(preset: str, agent: str) -> float:
    """How far, in points, the agent's rate against random is above its bar (the heuristic's less 3 points)."""
    heuristic = row_of(preset, "heuristic")["versus"]["random"]["win_rate_a"]
    return 100 * (row_of(preset, agent)["versus"]["random"]["win_rate_a"] - (heuristic - 0.03))


#: Sentences that state a pass, a fail or a comparison: (page, the words, None or what the data says instead).
CLAIMS: list[tuple[str, str, Callable[[], str | None]]] = [
    ("README.md", "the one against random by under a point",
     lambda: None if 0 <= random_margin("argentine", "ppo:argentine") < 1 else
     f"`ppo:argentine` is {random_margin('argentine', 'ppo:argentine'):.2f} points above the random bar"),
    ("README.md", "The other presets' agents do not yet",
     lambda: next((f"`{best(p)}` passes every bar" for p in dict.fromkeys(r["preset"] for r in data()["rows"])
                   if p != "argentine" and not shortfalls(row_of(p, best(p)))), None)),
    ("README.md", "measured, it changes neither blueprint's win rates nor its ABR win rate beyond their intervals",
     lambda: search_within_intervals(("heuristic", "exploiter"))),
    ("docs/cfr.md", "Play-time search (below) changes neither blueprint's win rates beyond their intervals",
     lambda: search_within_intervals(("heuristic", "exploiter"))),
    ("docs/cfr.md", "Both blueprints are much harder to exploit than the heuristic",
     lambda: next((f"`cfr:{p}` {abr(p, f'cfr:{p}')}% against the heuristic's {abr(p, 'heuristic')}%"
                   for p in ("argentine", "paulista") if float(abr(p, f"cfr:{p}")) >= float(abr(p, "heuristic"))),
                  None)),
]


def test_the_figures_quoted_in_prose_are_the_data():
    problems = []
    for name, pattern, want in QUOTES:
        match = re.search(pattern, flat(text_of(name)))
        if match is None:
            problems.append(f"{name}: the sentence /{pattern}/ is gone: update QUOTES in tests/test_docs_figures.py "
                            "(or point the page to docs/strength.md instead of quoting a figure)")
            continue
        for got, expected in zip(match.groups(), want(), strict=True):
            if got != expected:
                problems.append(f"{name}: quotes {got} in \"{match.group(0)}\"; {DATA} has {expected}")
    for name, words, check in CLAIMS:
        if words not in flat(text_of(name)):
            problems.append(f"{name}: the claim {words!r} is gone: update CLAIMS in tests/test_docs_figures.py")
        elif (why := check()) is not None:
            problems.append(f"{name}: says {words!r}, but in {DATA} {why}")
    assert not problems, "\n".join(problems)


def test_every_agent_said_to_pass_every_bar_or_to_be_best_is():
    seen, problems = 0, []
    for name in checked_pages():
        text = flat(text_of(name))
        for agent in re.findall(r"`(" + SPEC + r")` passes every bar", text):
            seen += 1
            if (short := shortfalls(row_of(preset_of(agent), agent))):
                problems.append(f"{name}: says `{agent}` passes every bar; in {DATA} it misses: " + "; ".join(short))
        for agent, preset in re.findall(r"`(" + SPEC + r")` is `best:([\w-]+)`", text):
            seen += 1
            if best(preset) != agent:
                problems.append(f"{name}: says `{agent}` is `best:{preset}`; the rule makes it `{best(preset)}`")
    assert not problems, "\n".join(problems)
    assert seen >= 3  # the README's two and docs/cfr.md's one


# ------------------------------------------------------------------------------------------------ the code's words

def test_the_cli_docstring_lists_every_subcommand_in_order():
    import argparse

    from training import cli

    block = cli.__doc__.split("Subcommands:", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"^  (\w+) {2,}\S", block, re.MULTILINE)
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert listed == list(commands), f"training/cli/__init__.py's docstring lists {listed}; `truco` has {list(commands)}"


def test_configs_readme_names_what_each_ppo_config_sets_beyond_the_first():
    """configs/README.md's PPO table: the first row is the base; every other row names, as `key: value`, exactly the
    options its file sets differently from the base's (the preset and the run folder aside)."""
    import yaml

    header, body = next((h, b) for _, h, b in tables(text_of("configs/README.md")) if plain(h[0]) == "config")
    assert [plain(h) for h in header] == ["config", "preset", "what it sets"]
    base = yaml.safe_load((ROOT / "configs" / plain(body[0][1][0])).read_text())
    problems = []
    for lineno, (files, _, sets) in body[1:]:
        named = dict(re.findall(r"`(\w+): ([^`]+)`", sets))
        for file in re.findall(r"`([^`]+\.yaml)`", files):
            config = yaml.safe_load((ROOT / "configs" / file).read_text())
            differ = {k: v for k, v in config.items() if k not in ("preset", "run_dir") and base.get(k) != v}
            said = {k: yaml.safe_load(v) for k, v in named.items() if k != "run_dir"}
            if said != differ:
                problems.append(f"configs/README.md:{lineno}: {file} is said to add {said}; beyond "
                                f"{plain(body[0][1][0])} it sets {differ}")
    assert not problems, "\n".join(problems)


def test_export_md_quotes_the_network_sizes():
    from truco_env.actions import NUM_ACTIONS, NUM_ACTIONS_SENAS
    from truco_env.encoding import OBSERVATION_SIZE, OBSERVATION_SIZE_SENAS

    text = flat(text_of("docs/export.md"))
    for words in (f"`[batch, {OBSERVATION_SIZE}]`", f"`[batch, {NUM_ACTIONS}]`",
                  f"reads {OBSERVATION_SIZE_SENAS:,} inputs", f"has {NUM_ACTIONS_SENAS} actions",
                  f"({NUM_ACTIONS}; {NUM_ACTIONS_SENAS} with señas)"):
        assert words in text, f"docs/export.md does not say {words!r} (the code's sizes)"


# ------------------------------------------------------------------------------------------------ citations

#: What no page cites: things a reader of the repository does not have.
OUTSIDE = {
    "a session's queue script": re.compile(r"\bqueue\w*\.sh\b"),
    "a script inside a run folder": re.compile(r"\bruns/\S*?\.sh\b"),
    "a path beside the repository": re.compile(r"\.\./+shared\b"),
    "a git branch": re.compile(r"\bbranch(?:es)?\s+`[^`]+`"),
}
PILOT = re.compile(r"\bruns/pilots/([\w.-]+)")
WRITTEN = re.compile(r"--(?:run-dir|out)[ =]runs/pilots/([\w.-]+)")
#: Names that stand for any pilot's folder in a command ("ppo:runs/pilots/X/policy.safetensors").
PLACEHOLDERS = {"X"}


def citation_problems(name: str, text: str) -> list[str]:
    def line(match: re.Match) -> int:
        return text.count("\n", 0, match.start()) + 1

    written = set(WRITTEN.findall(flat(text))) | PLACEHOLDERS
    matches = [(what, m) for what, pattern in OUTSIDE.items() for m in pattern.finditer(text)]
    matches += [("a run folder no command of the page writes", m) for m in PILOT.finditer(text)
                if m.group(1) not in written]
    found, seen = [], []
    for what, m in matches:  # one report per citation: the first kind that names it
        if not any(m.start() < end and start < m.end() for start, end in seen):
            seen.append(m.span())
            found.append((line(m), f"cites {what}: {flat(m.group(0))}"))
    return [f"{name}:{lineno}: {why}" for lineno, why in sorted(found)]


def test_no_doc_cites_a_file_or_branch_outside_the_repository():
    names = ["README.md", *(p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "docs").glob("*.md")))]
    problems = [p for name in names for p in citation_problems(name, text_of(name))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("line", ["the queue (`runs/pilots/queue7.sh`)", "`runs/senas/queue2.sh` trained it",
                                  ("see `../" "shared/notes.md`"), "on branch `report-code-keys`",
                                  "the re-measurement (branch\n`report-code-keys`)",
                                  "`truco exploit ppo:runs/pilots/KM/policy.safetensors`"])
def test_the_citation_check_catches_each_kind(line):
    assert citation_problems("page.md", f"before\n{line}\nafter")


def test_a_pilot_folder_that_the_page_writes_may_be_cited():
    text = ("`truco train ppo --run-dir\nruns/pilots/KM`, then `truco eval --agents "
            "ppo:runs/pilots/KM/policy.safetensors`")
    assert citation_problems("page.md", text) == []
