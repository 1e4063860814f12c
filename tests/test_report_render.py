"""The committed strength page (docs/strength.md) and model cards (agents/policies/*.md) are drawn byte for byte
from docs/strength.json by the report's pure rendering functions (training/measure/report_page.py,
training/measure/model_cards.py): no measurement, no file written, nothing but the data, the shipped files' own metadata
and, for the page's one line on the machine that assembled it, that line's own words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from training.measure.model_cards import card_name, model_card
from training.measure.report import PAGE, PLOT, agent_metadata
from training.measure.report_data import read_report
from training.measure.report_page import render

ROOT = Path(__file__).resolve().parent.parent
COMMITTED_PAGE = (ROOT / "docs" / "strength.md").read_text()
DATA = read_report(ROOT / "docs" / "strength.json", page=True)
ROWS = DATA["rows"]
CARDS = {card_name(row): row for row in ROWS if not row["agent"].startswith("heuristic")}


def machine_of(page: str) -> dict:
    """The machine the page says it was assembled on (the only words of the page that are not in the data file:
    the report reads them from the machine it runs on)."""
    found = re.search(r"^Report made on: (.+), (\d+) cores; Python (\S+), torch (\S+), (.+?)\. Assembled ", page,
                      re.MULTILINE)
    assert found, "docs/strength.md has no line on the machine that made it"
    cpu, cores, python, torch, system = found.groups()
    return {"cpu": cpu, "cores": int(cores), "python": python, "torch": torch, "system": system}


def test_the_committed_page_is_rendered_byte_for_byte_from_its_data_file():
    figure = str(PLOT.relative_to(PAGE.parent))
    assert render(ROWS, DATA["settings"], machine_of(COMMITTED_PAGE), DATA["command"], figure) == COMMITTED_PAGE


@pytest.mark.parametrize("name", sorted(CARDS))
def test_each_committed_model_card_is_rendered_byte_for_byte_from_the_data_file(name):
    row = CARDS[name]
    text = model_card(row, ROWS, agent_metadata(row["agent"]), DATA["settings"])
    assert text == (ROOT / "agents" / "policies" / name).read_text(), f"{name} is not what the data file makes"


def test_every_shipped_model_card_has_a_row_in_the_data_file():
    shipped = {p.name for p in (ROOT / "agents" / "policies").glob("*.md")}
    assert shipped == set(CARDS)


def test_the_page_says_what_its_stages_cost_in_cpu_time_by_kind_and_on_more_machines():
    """Issue 75 item 4: a report measured beside other work states its cost from the CPU time each stage kept
    (every learner of a best response its own), by kind of stage, with the longest chain of stages that must run
    one after another (a row's slowest learner, then its search stage) bounding what more machines buy."""
    import copy

    from training.measure.report_page import longest_chain, stage_costs

    rows = copy.deepcopy([r for r in ROWS if r["preset"] == "argentine"])
    assert "## What this report cost" not in render(rows, DATA["settings"], machine_of(COMMITTED_PAGE), "", None)
    for row in rows:  # every learner 1,800 CPU s; the gauntlet 360; the cfr blueprint's search 7,200
        for learner in row["exploit"]["learners"]:
            learner["cpu_seconds"] = 1800.0
        row["gauntlet"]["cpu_seconds"] = 360.0
        if "search" in row:
            row["search"]["cpu_seconds"] = 7200.0
    timed = [cpu for _, _, cpu in stage_costs(rows) if cpu is not None]
    assert len(timed) == 3 * len(rows) + len(rows) + sum("search" in r for r in rows)
    assert longest_chain(rows) == 1800.0 + 7200.0  # a learner, then the blueprint's search
    page = render(rows, DATA["settings"], machine_of(COMMITTED_PAGE), "", None)
    section = page[page.index("## What this report cost"):]
    total = (3 * 1800 + 360) * len(rows) + 7200 * sum("search" in r for r in rows)
    assert f"| best responses (each learner) | {3 * len(rows)} | {3 * 1800 * len(rows) / 3600:.1f} h | 0.50 h |" \
        in section
    assert f"| **all** | **{len(timed)}** | **{total / 3600:.1f} h** | |" in section
    assert f"| 1 | {total / 2 / 3600:.1f} h |" in section and f"| 8 | {9000 / 2 / 3600:.1f} h |" in section
