"""``best:<preset>``: the rule of training/measure/best_agent.py chooses as docs/strength.md says, and agents/best.py reads
the report's choice safely (a stranger may have edited the file)."""

from __future__ import annotations

import json

import pytest

from agents import make_agent
from agents.best import choices, default_spec, resolve_best
from training.measure import best_agent


def figure(rate: float) -> dict:
    return {"matches": 2000, "win_rate_a": rate, "ci_low": rate - 0.02, "ci_high": rate + 0.02}


def row(agent: str, heuristic: float | None, random: float, worst: float, abr: float, rivals=None) -> dict:
    versus = {"random": figure(random)}
    if heuristic is not None:
        versus["heuristic"] = figure(heuristic)
    out = {"preset": "argentine", "agent": agent, "versus": versus,
           "gauntlet": {"worst": {"win_rate": worst, "ci_low": worst - 0.03, "ci_high": worst + 0.03}},
           "exploit": {"abr": {"win_rate": abr, "ci_low": abr - 0.02, "ci_high": abr + 0.02}}}
    if rivals:
        out["rivals"] = {k: figure(v) for k, v in rivals.items()}
    return out


HEURISTIC = row("heuristic", None, 0.99, 0.30, 0.70)


def test_the_candidate_with_the_lowest_abr_is_chosen():
    rows = [HEURISTIC, row("ppo:argentine", 0.70, 0.97, 0.60, 0.35, {"cfr:argentine": 0.55}),
            row("cfr:argentine", 0.65, 0.97, 0.55, 0.20)]
    # cfr loses the head to head (45%): it is no candidate, so ppo is chosen despite cfr's lower ABR
    assert best_agent.choose(rows) == "ppo:argentine"
    rows[1]["rivals"]["cfr:argentine"] = figure(0.5)
    assert best_agent.choose(rows) == "cfr:argentine"  # both candidates now: the lower ABR wins
    assert best_agent.bars(rows[0], rows)[best_agent.BARS[0]] is False  # the heuristic never passes 62% vs itself


def test_candidates_tied_head_to_head_are_told_apart_by_abr():
    rows = [HEURISTIC, row("ppo:argentine", 0.70, 0.97, 0.60, 0.31, {"cfr:argentine": 0.50}),
            row("cfr:argentine", 0.65, 0.97, 0.55, 0.30)]
    assert best_agent.choose(rows) == "cfr:argentine"
    rows[2]["exploit"]["abr"]["win_rate"] = 0.32
    assert best_agent.choose(rows) == "ppo:argentine"


def test_with_no_candidate_the_agent_passing_most_bars_then_the_lowest_abr():
    rows = [HEURISTIC, row("ppo:argentine", 0.68, 0.93, 0.66, 0.38, {"cfr:argentine": 0.52}),
            row("cfr:argentine", 0.60, 0.94, 0.55, 0.25)]
    # ppo: heuristic, gauntlet, head to head (3 of 4); cfr: gauntlet only (2 of 4: it loses to ppo and to 62%)
    assert best_agent.choose(rows) == "ppo:argentine"
    assert best_agent.bars(rows[2], rows) == dict(zip(best_agent.BARS, [False, False, True, False], strict=True))
    table = "\n".join(best_agent.best_table(rows))
    assert "**`ppo:argentine`**" in table and "`cfr:argentine`" in table


def test_the_choice_file_is_read_and_checked(tmp_path):
    path = tmp_path / "best.json"
    path.write_text(json.dumps({"best": {"argentine": "ppo:argentine", "paulista": "cfr:paulista"}}))
    assert resolve_best("paulista", str(path)) == "cfr:paulista"
    with pytest.raises(ValueError, match="no choice for that preset; presets with one: \\['argentine', 'paulista'\\]"):
        resolve_best("argentine-2v2", str(path))
    path.write_text(json.dumps({"best": {"paulista": "search:ppo:paulista,worlds=16"}}))
    assert resolve_best("paulista", str(path)) == "search:ppo:paulista,worlds=16"  # a searching row may be chosen
    for bad in ({"best": {"argentine": "exec:rm -rf /"}}, {"best": {"argentine": "ppo:/tmp/x.safetensors"}},
                {"best": {"argentine": "search:exec:rm -rf /"}}, {"best": {"argentine": "search:ppo:/tmp/x"}},
                {"best": {"argentine": "search:search:ppo:argentine"}}, {"best": {"argentine": "search:heuristic"}},
                {"best": ["ppo:argentine"]}, {"rule": "no best"}):
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match="best.json"):
            choices(str(path))
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not the report's choice"):
        choices(str(path))


def test_best_spec_plays_the_agent_the_shipped_file_names():
    shipped = choices()
    assert set(shipped) == {"argentine", "argentine-2v2", "paulista", "paulista-2v2", "uruguayan", "uruguayan-2v2"}
    agent = make_agent("best:argentine")
    assert agent.spec == "best:argentine" and type(agent) is type(make_agent(shipped["argentine"]))
    assert default_spec("argentine", "heuristic") == "best:argentine"
    assert default_spec("argentine-mini", "heuristic") == "heuristic"
    with pytest.raises(ValueError, match="best:<preset>"):
        make_agent("best")


def test_the_shipped_choice_is_what_the_rule_makes_of_the_committed_report():
    from pathlib import Path

    data = json.loads((Path(__file__).resolve().parents[1] / "docs" / "strength.json").read_text())
    assert choices() == best_agent.choices(data["rows"])


def test_the_readme_quotes_the_committed_reports_choice():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    rows = json.loads((root / "docs" / "strength.json").read_text())["rows"]
    readme = (root / "README.md").read_text()
    assert "\n".join(best_agent.headline(rows)) in readme, "README's best:<preset> table is not the report's"


def test_shortfalls_name_each_missed_bar_with_its_figure():
    rows = [HEURISTIC, row("ppo:argentine", 0.68, 0.93, 0.66, 0.42, {"cfr:argentine": 0.52}),
            row("cfr:argentine", 0.60, 0.97, 0.45, 0.25)]
    assert best_agent.shortfalls(rows[1], rows) == [
        "93.0% against random (the bar: the heuristic's 99.0% less 3 points)",
        "an ABR win rate of 42.0% (the bar: at most 40.0% and below the heuristic's 70.0%)"]
    assert best_agent.shortfalls(rows[2], rows) == [
        "60.0% against the heuristic (the bar: 62%)", "45.0% against its worst gauntlet opponent (the bar: 50%)",
        "under 50% head to head against `ppo:argentine` (48.0%)"]
    rows[2].update(gauntlet={"worst": {"win_rate": 0.6, "opponent": "tight"}},
                   versus={"heuristic": figure(0.64), "random": figure(0.97)})
    rows[1]["rivals"]["cfr:argentine"] = figure(0.5)
    assert best_agent.shortfalls(rows[2], rows) == []
    rows[2]["gauntlet"]["worst"]["win_rate"] = 0.45
    assert best_agent.shortfalls(rows[2], rows) == ["45.0% against its worst gauntlet opponent, tight (the bar: 50%)"]
    assert best_agent.shortfalls(HEURISTIC, rows) == [  # no ABR bar for the agent that sets it
        "30.0% against its worst gauntlet opponent (the bar: 50%)",
        "under 50% head to head against `cfr:argentine` (36.0%), `ppo:argentine` (32.0%)"]


def test_the_bar_rises_only_for_a_best_agent_that_passes_every_bar(tmp_path, monkeypatch):
    """Issue 73: where a preset's ``best:`` agent passes every bar, exploitability included, the report trains one
    best response at five times the budget against it (``rise``), reuses it as every stage, and says it; a best
    agent that misses a bar gets none."""
    from training.measure import report
    from training.measure.report_page import shortfall_lines

    calls = []

    def fake_exploit(recipe, matches, root, progress):
        calls.append(recipe)
        return {"status": "complete", "budget": {"decisions": recipe.decisions},
                "abr": {"win_rate": 0.41, "ci_low": 0.39, "ci_high": 0.43}}, root

    monkeypatch.setattr(report, "cached_exploit", fake_exploit)
    monkeypatch.setattr(report, "same_code", lambda agent, preset: {"code": {"play": "p", "learner": "l"}})
    settings = {"decisions": 600_000, "seed": 0, "eval_matches": 2000}

    def rows_with(abr: float) -> list[dict]:
        return [row("heuristic", None, 0.99, 0.30, 0.70), row("ppo:argentine", 0.70, 0.97, 0.60, abr)]

    rows = rows_with(0.35)
    report.rise(rows, "argentine", tmp_path / "report", settings, 1, False, lambda line: None, {})
    assert [c.decisions for c in calls] == [3_000_000] and calls[0].target == "ppo:argentine"
    assert rows[1]["rise"]["abr"]["win_rate"] == 0.41
    line = shortfall_lines(rows)[-1]
    assert "every bar passed; a best response at 5 times the standard budget (3,000,000 learner decisions) wins " \
           "41.0% [39.0, 43.0] against it: the risen bar (at most 45%) passed" in line
    again = rows_with(0.35)  # a second report: the stage file under --runs is reused, nothing is trained
    report.rise(again, "argentine", tmp_path / "report", settings, 1, False, lambda line: None, {})
    assert len(calls) == 1 and again[1]["rise"]["abr"]["win_rate"] == 0.41
    missing = rows_with(0.45)  # an ABR win rate above 40%: not every bar passed, no risen bar
    report.rise(missing, "argentine", tmp_path / "other", settings, 1, False, lambda line: None, {})
    assert len(calls) == 1 and "rise" not in missing[1]
