"""The held-out gauntlet (training/measure/gauntlet.py) and the strength report (training/measure/report.py): the population is
what its documentation says, no training config or test trains against it, and the commands report honestly."""

from __future__ import annotations

import ast
import json
import os
import re
import time
from pathlib import Path
from unittest.mock import ANY

import pytest
import yaml

from agents.base import make_agent
from training.cli import main
from training.measure.gauntlet import (
    MAIN_PRESETS,
    OPPONENTS,
    REPORT_PRESETS,
    all_gauntlet_specs,
    gauntlet_specs,
    run_gauntlet,
    summarise_gauntlet,
)
from training.measure.match_journal import MatchJournal

ROOT = Path(__file__).resolve().parent.parent
#: Test files that name gauntlet opponents to test the opponents themselves (never as a training opponent).
GAUNTLET_TESTS = {"test_gauntlet.py", "test_scripted.py"}


def _strings(node):
    """Every string in a parsed YAML document: keys and values, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(node, (list, tuple)):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, str):
        yield node


def test_population_has_eight_opponents_in_four_families_not_all_heuristic():
    families = {o.family for o in OPPONENTS}
    assert len(OPPONENTS) >= 8 and len(families) >= 4
    heuristic_based = [o for o in OPPONENTS if o.spec.startswith("heuristic")]
    assert len(heuristic_based) <= len(OPPONENTS) // 4
    for preset in REPORT_PRESETS:
        specs = gauntlet_specs(preset)
        assert len(set(specs)) == len(specs)
        assert "heuristic" not in specs and "random" not in specs  # training configs use both


@pytest.mark.parametrize("preset", REPORT_PRESETS)
def test_every_opponent_is_packaged_and_plays_its_preset(preset):
    for spec in gauntlet_specs(preset):
        agent = make_agent(spec)  # a trained opponent must be packaged under agents/policies/gauntlet/
        assert agent.presets is None or agent.presets == (preset,), spec


def test_no_training_config_names_a_gauntlet_opponent():
    held_out = all_gauntlet_specs()
    configs = sorted((ROOT / "configs").rglob("*.yaml"))
    assert configs
    for path in configs:
        named = set(_strings(yaml.safe_load(path.read_text())))
        assert not named & held_out, f"{path.name} names gauntlet opponents {sorted(named & held_out)}"


TRAINED_WITH = ("scripted", "eval_opponents", "target")


def _trained_with(tree: ast.AST):
    """Strings a test passes as a training opponent (``scripted``) or evaluation opponent of a training run:
    keyword arguments and dict entries of those names (their keys and values at any depth), and
    ``--set scripted=...`` style strings."""
    for node in ast.walk(tree):
        values = []
        if isinstance(node, ast.keyword) and node.arg in TRAINED_WITH:
            values.append(node.value)
        if isinstance(node, ast.Dict):
            values += [v for k, v in zip(node.keys, node.values)
                       if isinstance(k, ast.Constant) and k.value in TRAINED_WITH]
        for value in values:
            yield from (n.value for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(
                tuple(f"{name}=" for name in TRAINED_WITH)):
            yield from node.value.split("=", 1)[1].strip("{}").replace(":", ",").replace(" ", "").split(",")


def test_no_other_test_trains_against_a_gauntlet_opponent():
    held_out = all_gauntlet_specs()
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        if path.name in GAUNTLET_TESTS:
            continue
        named = set(_trained_with(ast.parse(path.read_text())))
        assert not named & held_out, f"{path.name} trains against gauntlet opponents {sorted(named & held_out)}"


def test_the_check_of_tests_would_catch_a_gauntlet_league():
    source = 'build(PPOArgs, {"scripted": {"station": 1.0}}); run(scripted={"threshold": 0.5}); "--set", "eval_opponents=maniac"'
    assert {"station", "threshold", "maniac"} <= set(_trained_with(ast.parse(source)))


def test_truco_train_ppo_refuses_to_train_or_evaluate_against_the_gauntlet(tmp_path, capsys):
    """The rule is the command's: a best response is the same trainer and may take any agent as its target."""
    from training.cli import main

    for spec in ("threshold", "station", "heuristic:bluff=0.35", "ppo:gauntlet/argentine-br-heuristic"):
        for option in (f"scripted={{'{spec}': 0.1}}", f"eval_opponents=['{spec}']"):
            code = main(["train", "ppo", "--set", "preset=argentine", "--set", option, "--run-dir",
                         str(tmp_path / "run"), "--quiet"])
            err = capsys.readouterr().err
            assert code == 2 and "held-out gauntlet" in err and "Traceback" not in err, (spec, option)
    assert not (tmp_path / "run").exists()


def test_summary_mean_and_worst_case():
    rows = [{"agent_b": o.spec_for("paulista"), "matches": 100, "win_rate_a": 0.3 + 0.05 * k, "ci_low": 0.0,
             "ci_high": 1.0, "points_per_hand_a": 1.0, "points_per_hand_b": 1.0} for k, o in enumerate(OPPONENTS)]
    result = summarise_gauntlet("x", "paulista", rows)
    rates = [0.3 + 0.05 * k for k in range(len(OPPONENTS))]
    assert result["mean"] == pytest.approx(sum(rates) / len(rates))
    assert result["mean_low"] < result["mean"] < result["mean_high"]
    assert result["worst"]["spec"] == OPPONENTS[0].spec_for("paulista")
    assert result["worst"]["win_rate"] == pytest.approx(0.3)


def test_a_small_gauntlet_writes_its_files(tmp_path):
    out = tmp_path / "g"
    result = run_gauntlet("random", "argentine", matches=2, seed=0, workers=1, out=out, progress=False)
    assert [r["opponent"] for r in result["opponents"]] == [o.name for o in OPPONENTS]
    assert all(r["matches"] == 2 for r in result["opponents"])
    assert min(r["win_rate"] for r in result["opponents"]) == result["worst"]["win_rate"]
    for name in ("gauntlet.json", "gauntlet.csv", "gauntlet.png", "eval/pairings.csv"):
        assert (out / name).is_file(), name
    assert json.loads((out / "gauntlet.json").read_text())["mean"] == pytest.approx(result["mean"])


@pytest.mark.parametrize("argv, message", [
    (["gauntlet", "random", "--preset", "argentine-mini"], "the gauntlet covers presets"),
    (["gauntlet", "ppo:paulista", "--preset", "argentine"], "made for preset(s) ['paulista']"),
    (["gauntlet", "--make-opponents", "--preset", "paulista-mini"], "the gauntlet is made for presets"),
    (["gauntlet", "station", "--preset", "argentine"], "is itself a gauntlet opponent"),
    (["gauntlet", "random", "--matches", "5"], "matches must be an even number"),
    (["gauntlet", "--preset", "argentine"], "give the AGENT spec"),
    (["report", "--preset", "argentine-mini"], "the report covers presets"),
    (["gauntlet", "random", "--preset", "uruguayan-3v3"], "the gauntlet covers presets"),
    (["gauntlet", "--make-opponents", "--preset", "argentine-3v3"], "the gauntlet is made for presets"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    out = tmp_path / "never"
    assert main([*argv, "--root" if argv[0] == "report" else "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_report_reuses_only_complete_stages_made_with_the_same_settings(tmp_path):
    from training.measure.report import measured_stage as _stage

    path = tmp_path / "stage.json"
    calls = []

    def run():
        calls.append(1)
        return {"value": len(calls)}

    assert _stage(path, {"seed": 0}, run, print)["value"] == 1
    assert _stage(path, {"seed": 0}, run, print)["value"] == 1  # reused
    assert json.loads(path.read_text())["measured"] == time.strftime("%Y-%m-%d")  # a stage keeps its own date
    assert _stage(path, {"seed": 1}, run, print)["value"] == 2  # other settings: run again
    path.write_text(json.dumps({"value": 9, "status": "interrupted", "settings": {"seed": 1}}))
    assert _stage(path, {"seed": 1}, run, print)["value"] == 3  # a partial stage never counts
    with pytest.raises(KeyboardInterrupt):
        _stage(tmp_path / "other.json", {}, lambda: {"status": "interrupted"}, print)
    assert not (tmp_path / "other.json").exists()


def test_bluffing_stage_counts_the_agents_own_calls_and_renders_intervals():
    """The bluffing stage may pit the heuristic against itself, counts only the agent's seats, and its table
    shows each share with the counts behind it."""
    from training.measure.report import bluffing
    from training.measure.report_page import bluffing_table

    found = bluffing("heuristic:bluff=1", "argentine", 4, seed=0, workers=1, progress=False)
    mirror = bluffing("heuristic", "argentine", 4, seed=0, workers=1, progress=False)
    counts = found["counts"]
    assert found["matches"] == 4 and counts["hands"] > 0
    assert 0 < counts["bluffs"] <= counts["calling_hands"] <= counts["hands"]
    assert counts["bluffs"] > mirror["counts"].get("bluffs", 0)  # bluff=1 bluffs with every weak hand
    lines = bluffing_table([{"preset": "argentine", "agent": "heuristic:bluff=1", "bluffing": found},
                            {"preset": "argentine-2v2", "agent": "heuristic"}])  # no stage: no row
    assert len(lines) == 3
    assert f"({counts['bluffs']:,} of {counts['calling_hands']:,})" in lines[2]


def test_the_report_covers_a_shipped_blueprint_and_writes_its_card(tmp_path, monkeypatch):
    """cfr:<preset> joins the report once shipped; its card says how it was made and what it measured."""
    from agents.cfr import agent as cfr_agent
    from training.measure.model_cards import blueprint_card
    from training.measure.report import agents_of

    monkeypatch.setattr(cfr_agent, "SHIPPED_DIR", str(tmp_path))
    assert "cfr:paulista" not in agents_of("paulista")
    (tmp_path / "cfr_paulista.npz").write_bytes(b"")
    assert agents_of("paulista")[-1] == "cfr:paulista"
    rate = {"win_rate_a": 0.6, "ci_low": 0.55, "ci_high": 0.65}
    row = {"preset": "paulista", "exploit": {"abr": {"win_rate": 0.4, "ci_low": 0.38, "ci_high": 0.42}},
           "gauntlet": {"mean": 0.6, "mean_low": 0.58, "mean_high": 0.62,
                        "worst": {"win_rate": 0.5, "ci_low": 0.45, "ci_high": 0.55, "opponent": "tight"}},
           "versus": {"heuristic": rate, "random": rate}}
    meta = {"abstraction": "v4", "iteration": 6_000_000, "nodes": 10, "solver": {"utility": "match_equity"},
            "kind": "mccfr", "shipped": {"config": "configs/cfr_blueprint_paulista.yaml", "config_hash": "abc",
                                         "commit": "def"}}
    card = blueprint_card(row, meta, {"finished": "2026-12-02", "decisions": 600_000})
    for fact in ("`cfr:paulista`", "truco train cfr --config configs/cfr_blueprint_paulista.yaml",
                 "truco ship configs/cfr_blueprint_paulista.yaml", "6,000,000 iterations",
                 "match_equity", "40.0% [38.0, 42.0]", "60.0% [55.0, 65.0]", "vs tight", "thresholded"):
        assert fact in card, fact
    assert "bars of docs/strength.md" not in card  # not measured against them: nothing said
    assert "both seats sharing one table" in card and "partners" not in card
    team = blueprint_card({**row, "preset": "paulista-2v2"}, meta, {"finished": "2026-12-02", "decisions": 600_000})
    assert "every seat sharing one table" in team and "partners never see each other's cards" in team
    short = blueprint_card(row, meta, {"finished": "2026-12-02", "decisions": 600_000},
                           ["60.0% against the heuristic (the bar: 62%)", "an ABR win rate of 40.0%"])
    assert ("falls short of the bars of docs/strength.md: 60.0% against the heuristic (the bar: 62%); an ABR win "
            "rate of 40.0%. What was measured of why: [research log](../../docs/research.md#where-the-shipped-"
            "agents-fall-short)") in short
    assert "It passes every bar" in blueprint_card(row, meta, {"finished": "2026-12-02", "decisions": 600_000}, [])


def test_the_report_says_where_each_presets_best_agent_falls_short():
    from training.measure.report_page import shortfall_lines

    def agent(name, heuristic, random, abr, worst=0.55):
        return {"preset": "paulista", "agent": name, "exploit": {"abr": {"win_rate": abr}},
                "gauntlet": {"worst": {"win_rate": worst, "opponent": "tight"}},
                "versus": {"random": {"win_rate_a": random}, **({"heuristic": {"win_rate_a": heuristic}}
                                                                if heuristic else {})}}

    rows = [agent("heuristic", None, 0.94, 0.48, 0.40), agent("cfr:paulista", 0.59, 0.91, 0.37)]
    lines = shortfall_lines(rows)
    assert lines[-1] == "* paulista, `cfr:paulista`: 59.0% against the heuristic (the bar: 62%)."
    assert "research.md#where-the-shipped-agents-fall-short" in lines[0]


def test_search_stage_pairs_the_blueprint_with_its_searching_self_on_the_same_deals(monkeypatch, tmp_path):
    """The report's play-time search stage: the shipped blueprint plain and searching, each against the heuristic
    and against a given best response, every pairing on the same duplicate deals; its table shows the four rates
    of each blueprint row and skips the other agents; a stopped stage resumes from its tournaments' journals."""
    from training.measure import model_cards, report, report_page

    monkeypatch.setattr(report, "SEARCH_MS", 1)  # 400 walked nodes a decision: the mechanism, not the strength
    found = report.search_effect("cfr:paulista", "paulista", "random", 2, seed=0, workers=1, progress=False)
    journals = []

    def journal(name):
        journals.append(name)
        return MatchJournal(tmp_path / f"{name}.jsonl", key="k")

    assert report.search_effect("cfr:paulista", "paulista", "random", 2, seed=0, workers=1, progress=False,
                                journal=journal) == {**found, **{o: {**found[o], "seconds": ANY} for o in
                                                                 ("heuristic", "exploiter")}}
    assert journals == ["search-heuristic", "search-exploiter"] and not list(tmp_path.iterdir())  # done: removed
    assert found["searched"] == "cfr:paulista,search=1"
    for opponent in ("heuristic", "exploiter"):
        assert set(found[opponent]) == {"blueprint", "searched", "seconds"}
        for side in ("blueprint", "searched"):
            assert found[opponent][side]["matches"] == 2
            assert 0.0 <= found[opponent][side]["ci_low"] <= found[opponent][side]["win_rate_a"] <= 1.0
    abr = {"target": "cfr:paulista", "abr": {"win_rate": 0.368, "ci_low": 0.347, "ci_high": 0.389}}
    row = {"preset": "paulista", "agent": "cfr:paulista", "exploit": abr, "search": found}
    lines = report_page.search_table([row, {"preset": "paulista", "agent": "heuristic", "exploit": abr}])
    assert len(lines) == 3 and lines[2].startswith("| paulista | `cfr:paulista` |")
    rate = report_page.pairing_rate(found["exploiter"]["searched"])
    assert lines[2].count("%") == 4 and lines[2].endswith(f"| {rate} |")
    card = model_cards.search_rows(row)
    assert len(card) == 2 and all("`cfr:paulista,search=1`" in line for line in card) and rate in card[1]
    assert model_cards.search_rows({}) == []


def test_reports_of_different_presets_run_side_by_side_and_one_preset_is_refused(tmp_path, capsys, monkeypatch):
    """truco report locks each preset's folder of --runs, not the whole folder: with paulista's held by another
    report, a paulista report is refused in one line and an argentine one goes on (here to its first stage)."""
    from training.measure import report
    from training.outputs import hold

    def first_stage(*args, **kwargs):
        raise KeyboardInterrupt  # as an interrupted stage ends the report: got past the lock

    monkeypatch.setattr(report, "measure", first_stage)
    runs = tmp_path / "runs"
    with hold(runs / "paulista"):
        assert main(["report", "--preset", "paulista", "--runs", str(runs), "--root", str(tmp_path / "p")]) == 2
        err = capsys.readouterr().err
        assert "paulista" in err and len(err.strip().splitlines()) == 1
        assert main(["report", "--preset", "argentine", "--runs", str(runs), "--root", str(tmp_path / "a")]) == 130
    assert not (tmp_path / "p").exists() and not (tmp_path / "a").exists()


def test_a_stage_stored_in_the_reports_data_file_is_reused_only_when_complete_with_the_same_settings(tmp_path):
    """The data file beside the report stands in for a fresh clone's missing --runs: a stored stage counts when
    it was made with the very settings (agent file hash included) the stage would use now."""
    from training.measure.report import measured_stage as _stage

    calls = []

    def run():
        calls.append(1)
        return {"value": 7}

    stored = {"value": 3, "status": "complete", "settings": {"seed": 0, "agent_file": "aaaa"}}
    assert _stage(tmp_path / "a.json", {"seed": 0, "agent_file": "aaaa"}, run, print, stored)["value"] == 3
    assert not calls and not (tmp_path / "a.json").exists()
    assert _stage(tmp_path / "b.json", {"seed": 0, "agent_file": "bbbb"}, run, print, stored)["value"] == 7  # retrained
    assert _stage(tmp_path / "c.json", {"seed": 0, "agent_file": "aaaa"}, run, print,
                  {**stored, "status": "interrupted"})["value"] == 7
    assert len(calls) == 2


def test_a_model_card_dates_its_numbers_by_when_its_stages_were_measured_not_by_the_last_report(tmp_path):
    """A report that reuses an agent's stages does not redate its card: the card's date is its newest stage's,
    and stages stored before stages were dated take the date of the report that stored them."""
    from training.measure.model_cards import measured_rows
    from training.measure.report_data import stored_rows

    rate = {"win_rate_a": 0.6, "ci_low": 0.55, "ci_high": 0.65}
    row = {"preset": "paulista", "agent": "heuristic",
           "exploit": {"abr": {"win_rate": 0.4, "ci_low": 0.38, "ci_high": 0.42}, "status": "complete",
                       "measured": "2026-11-20"},
           "gauntlet": {"mean": 0.6, "mean_low": 0.58, "mean_high": 0.62, "status": "complete",
                        "worst": {"win_rate": 0.5, "ci_low": 0.45, "ci_high": 0.55, "opponent": "tight"}},
           "versus": {"heuristic": rate, "random": rate, "status": "complete", "measured": "2026-11-25"}}
    data = tmp_path / "strength.json"
    data.write_text(json.dumps({"settings": {"finished": "2026-11-22"}, "rows": [row]}))
    stored = stored_rows(data)[("paulista", "heuristic")]
    assert stored["gauntlet"]["measured"] == "2026-11-22" and stored["exploit"]["measured"] == "2026-11-20"
    assert "(`truco report`, 2026-11-25;" in measured_rows(stored, {"finished": "2026-12-31", "decisions": 1})[0]


def test_an_unreadable_data_file_is_one_line_error_not_hours_of_silent_measurement(tmp_path, capsys):
    from training.cli import main

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "strength.json").write_text("{not json")
    assert main(["report", "--preset", "argentine", "--runs", str(tmp_path / "runs"), "--root", str(tmp_path),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "is not a report's data file" in err and "strength.json" in err and len(err.strip().splitlines()) == 1


def _no_measuring(monkeypatch, collect_cards: bool = True) -> dict:
    """Make every measuring stage of the report fail the test; unless ``collect_cards`` is false, collect the rows
    of the model cards instead of writing them."""
    from training.measure import report

    def measuring(*args, **kwargs):
        raise AssertionError(f"measured a stage that docs/strength.json holds: {args[:2]}")

    for name in ("cached_exploit", "run_gauntlet", "run_tournament", "bluffing", "search_effect"):
        monkeypatch.setattr(report, name, measuring)
    cards: dict = {}
    if collect_cards:
        monkeypatch.setattr(report, "write_model_cards", lambda rows, settings, folder, log: cards.update(
            {(r["preset"], r["agent"]): r for r in rows}))
    return cards


def _root_with_committed_data(root: Path) -> Path:
    """``root`` laid out as the repository's report is (``root/docs/strength.json``, a copy of the committed
    one); returns the data file."""
    import shutil

    data = root / "docs" / "strength.json"
    data.parent.mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "strength.json", data)
    return data


def test_a_report_of_one_preset_keeps_and_shows_the_other_presets(tmp_path, monkeypatch):
    """--preset narrows what is measured, never what the data file holds or the page shows: no measurement is
    lost, and the repository's own page is never left with one preset."""
    _no_measuring(monkeypatch)
    data = _root_with_committed_data(tmp_path)
    before = json.loads(data.read_text())["rows"]
    assert main(["report", "--preset", "paulista", "--runs", str(tmp_path / "runs"), "--root", str(tmp_path),
                 "--no-progress"]) == 0
    after = json.loads(data.read_text())["rows"]
    assert [(r["preset"], r["agent"]) for r in after] == [(r["preset"], r["agent"]) for r in before]
    assert after == before
    text = (tmp_path / "docs" / "strength.md").read_text()
    assert all(f"| {preset} | `heuristic` |" in text for preset in MAIN_PRESETS)
    assert "\ntruco report\n" in text  # the command that remakes this very page


def test_a_report_of_one_preset_refuses_a_data_file_of_other_settings(tmp_path, monkeypatch, capsys):
    """Rows of other presets measured with another budget would sit on one page under this run's settings: a
    --preset run refuses, in one line, before measuring anything."""
    _no_measuring(monkeypatch)
    data = _root_with_committed_data(tmp_path)
    before = data.read_text()
    assert main(["report", "--preset", "paulista", "--budget-decisions", "1000", "--runs", str(tmp_path / "runs"),
                 "--root", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "decisions=600000, not 1000" in err and "no --preset" in err and len(err.strip().splitlines()) == 1
    assert data.read_text() == before and not (tmp_path / "docs" / "strength.md").exists()


def test_a_report_writes_under_its_root_and_nowhere_else(tmp_path, monkeypatch):
    """A report with another --root (a trial with a tiny budget, say) writes its page, data file, figure, model
    cards and choice of best:<preset> there, laid out as the repository (so a card's link to
    ../../docs/strength.md holds), and nothing outside its --root and --runs: the shipped cards are left alone."""
    _no_measuring(monkeypatch, collect_cards=False)
    shipped = {p: p.read_bytes() for p in (ROOT / "agents" / "policies").glob("*.md")}
    out = tmp_path / "out"
    _root_with_committed_data(out)
    assert main(["report", "--preset", "argentine-2v2", "--runs", str(tmp_path / "runs"), "--root", str(out),
                 "--no-progress"]) == 0
    written = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert written == {"docs/strength.md", "docs/strength.json", "docs/img/strength.png", "agents/policies/best.json",
                       "agents/policies/ppo_argentine-2v2.md", "agents/policies/cfr_argentine-2v2.md"}
    assert {p.relative_to(tmp_path).parts[0] for p in tmp_path.rglob("*")} <= {"out", "runs"}
    assert {p: p.read_bytes() for p in (ROOT / "agents" / "policies").glob("*.md")} == shipped


def test_a_root_that_is_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    assert main(["report", "--root", str(tmp_path / "afile"), "--runs", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert "--root" in err and "is a file" in err and len(err.strip().splitlines()) == 1


def test_the_committed_strength_report_is_remade_from_its_data_file_without_measuring(tmp_path, monkeypatch):
    """docs/strength.json holds every stage of docs/strength.md for the agents that ship now (their file hashes
    match): on a fresh clone, truco report remakes the page, the model cards and best.json from it without
    playing a match: the cards byte for byte, the page but for its line on the machine and the day it was
    assembled (tests/test_report_render.py remakes that line too). Fails when an agent is shipped or retrained
    without running the report again."""
    from training.measure import report

    _no_measuring(monkeypatch, collect_cards=False)
    _root_with_committed_data(tmp_path)
    assert main(["report", "--runs", str(tmp_path / "runs"), "--root", str(tmp_path), "--no-progress"]) == 0

    def lines(path):
        return [line for line in path.read_text().splitlines() if not line.startswith("Report made on:")]

    assert lines(tmp_path / "docs" / "strength.md") == lines(ROOT / "docs" / "strength.md")
    committed = ROOT / "agents" / "policies"
    cards = sorted(p.name for p in (tmp_path / "agents" / "policies").glob("*.md"))
    assert len(cards) == sum(len(report.agents_of(p)) - 1 for p in report.REPORT_PRESETS)  # all but the heuristics
    for name in cards:
        assert (tmp_path / "agents" / "policies" / name).read_bytes() == (committed / name).read_bytes(), name
    assert json.loads((tmp_path / "agents" / "policies" / "best.json").read_text()) == \
        json.loads((committed / "best.json").read_text())


def _fake_measurements(monkeypatch, exploit_status: str = "complete") -> list:
    """The report's measurements stood in for by the committed ppo:paulista row's figures; returns the list of
    what was asked, in order."""
    from training.measure import report

    committed = next(r for r in json.loads((ROOT / "docs" / "strength.json").read_text())["rows"]
                     if r["agent"] == "ppo:paulista")
    figures = {k: {f: v for f, v in committed[k].items() if f not in ("status", "settings", "measured")}
               for k in ("exploit", "gauntlet", "bluffing")}
    blueprint = next(r for r in json.loads((ROOT / "docs" / "strength.json").read_text())["rows"]
                     if r["agent"] == "cfr:paulista")
    figures["search"] = {f: v for f, v in blueprint["search"].items() if f not in ("status", "settings", "measured")}
    asked: list[tuple] = []

    def search(agent, preset, exploiter, *args):
        asked.append(("search", agent, exploiter))
        return figures["search"]

    def exploit(recipe, matches, root, progress=True):
        asked.append(("exploit", recipe.target))
        return {**figures["exploit"], "status": exploit_status}

    def gauntlet(agent, preset, *args, **kwargs):
        asked.append(("gauntlet", agent))
        return figures["gauntlet"]

    def tournament(agents, presets, matches, pairs=None, **kwargs):
        asked.append(("tournament", tuple(pairs)))
        return {"pairings": [{"agent_a": a, "agent_b": b, "matches": matches, "win_rate_a": 0.6, "ci_low": 0.58,
                              "ci_high": 0.62} for a, b in pairs]}, {"seconds": 0.0}

    def bluffing(agent, *args):
        asked.append(("bluffing", agent))
        return figures["bluffing"]

    monkeypatch.setattr(report, "SEARCHED", {"paulista": "ppo:paulista"})
    monkeypatch.setattr(report, "strongest_exploit", exploit)
    monkeypatch.setattr(report, "run_gauntlet", gauntlet)
    monkeypatch.setattr(report, "run_tournament", tournament)
    monkeypatch.setattr(report, "bluffing", bluffing)
    monkeypatch.setattr(report, "search_effect", search)
    monkeypatch.setattr(report, "cached_exploit", lambda args, matches, root, progress=True: (
        {**figures["exploit"], "seed": args.seed}, Path("runs") / f"learner-{args.seed}"))
    return asked


def test_a_searching_agent_joins_the_report_with_every_stage_of_a_shipped_one(tmp_path, monkeypatch):
    """A preset of report.SEARCHED adds ``search:SPEC`` to its rows (issue 73 item 5): a best response trained
    against the search itself, the gauntlet, the baselines and bluffing, each keyed on the search's own play; the
    shipped agents before it meet it head to head; it gets no model card (it ships no file of its own). The
    measurements are stood in for by the committed ppo:paulista row's figures (what is checked is what is asked)."""
    from training.measure import report

    searching = "search:ppo:paulista"
    asked = _fake_measurements(monkeypatch)
    monkeypatch.setattr(report, "write_model_cards", lambda rows, settings, folder, log: asked.append(
        ("cards", tuple(r["agent"] for r in rows if report.model_card(r, rows, report.agent_metadata(r["agent"]),
                                                                      settings)))))
    _root_with_committed_data(tmp_path)
    assert report.agents_of("paulista")[-1] == searching
    assert main(["report", "--preset", "paulista", "--runs", str(tmp_path / "runs"), "--root", str(tmp_path),
                 "--no-progress"]) == 0
    assert ("exploit", searching) in asked and ("gauntlet", searching) in asked and ("bluffing", searching) in asked
    assert ("tournament", ((searching, "heuristic"), (searching, "random"))) in asked
    assert ("tournament", (("ppo:paulista", "cfr:paulista"), ("ppo:paulista", searching))) in asked
    assert ("tournament", (("cfr:paulista", searching),)) in asked
    assert searching not in next(a for a in asked if a[0] == "cards")[1]
    data = json.loads((tmp_path / "docs" / "strength.json").read_text())
    row = next(r for r in data["rows"] if r["agent"] == searching)
    assert {"exploit", "gauntlet", "versus", "bluffing"} <= set(row) and row["exploit"]["status"] == "complete"
    assert f"`{searching}`" in (tmp_path / "docs" / "strength.md").read_text()


class ObjectRef(int):
    """A stand-in for Ray's reference to a task's result (the report knows one by its type's name)."""


class InlineRay:
    """Ray as the report's stage runner uses it, each task run at once in this process (the stand-ins for the
    measurements are this process's), after the round trip through Ray's pickler that a task takes to a worker."""

    def __init__(self):
        from ray import cloudpickle

        self.pickler, self.results, self.options = cloudpickle, {}, []

    def remote(self, **options):
        def task(function):
            def remote(*args):
                from ray.exceptions import RayTaskError

                function_there, args_there = self.pickler.loads(self.pickler.dumps((function, args)))
                ref = ObjectRef(len(self.results))
                try:
                    self.results[ref] = function_there(*(self.results[a] if isinstance(a, ObjectRef) else a
                                                         for a in args_there))
                except Exception as exc:  # noqa: BLE001  (Ray wraps whatever the task raised)
                    self.results[ref] = RayTaskError(function.__name__, "traceback", exc)
                self.options.append(options)
                return ref
            return type("Task", (), {"remote": staticmethod(remote)})
        return task

    def wait(self, refs, num_returns=1):
        return refs[:num_returns], refs[num_returns:]

    exceptions = pytest.importorskip("ray").exceptions

    def get(self, ref):
        if isinstance(self.results[ref], BaseException):  # what Ray raises for a task that failed
            raise self.results[ref]
        return self.results[ref]


def test_the_report_s_stages_as_ray_tasks_store_what_a_local_report_stores(tmp_path, monkeypatch, capsys):
    """``truco report --backend ray`` (issue 75 item 3): every stage still to measure goes to Ray as a task (each
    through Ray's pickler, one worker's cores each), the search stage after its exploit, a line as each finishes;
    the data file holds what the local run stores; a stage that stops half-way is stored nowhere and the report
    exits 130, the finished stages kept. (Tasks run in this process here: the real cluster is
    tests/test_ray_cluster.py's, for tournaments and PPO.)"""
    pytest.importorskip("ray")
    from training import workers
    from training.measure import report

    def run(root, *extra):
        _root_with_committed_data(root)
        return main(["report", "--preset", "paulista", "--runs", str(root / "runs"), "--root", str(root),
                     "--no-progress", *extra])

    def rows(root):
        return json.loads((root / "docs" / "strength.json").read_text())["rows"]

    _fake_measurements(monkeypatch)
    monkeypatch.setattr(report, "write_model_cards", lambda rows, settings, folder, log: None)
    assert run(tmp_path / "local") == 0
    capsys.readouterr()
    inline = InlineRay()
    monkeypatch.setattr(workers, "start_ray", lambda n: inline)
    assert run(tmp_path / "ray", "--backend", "ray") == 0
    err = capsys.readouterr().err
    assert "paulista: search:ppo:paulista: exploit complete in " in err and "stage(s) to go" in err
    assert rows(tmp_path / "ray") == rows(tmp_path / "local")
    # the two rivals stages that now meet the search, and the search row's four: six tasks of two cores
    assert len(inline.options) == 6 and all(o == {"num_cpus": 2, "max_retries": 3} for o in inline.options)
    # from nothing: every stage a task, the blueprint's search stage after its exploit stage, with its learner
    asked = _fake_measurements(monkeypatch)
    (tmp_path / "empty").mkdir()
    assert main(["report", "--preset", "paulista", "--runs", str(tmp_path / "empty" / "runs"), "--root",
                 str(tmp_path / "empty"), "--no-progress", "--backend", "ray"]) == 0
    assert ("search", "cfr:paulista", f"ppo:{Path('runs') / 'learner-2'}/learner.safetensors,greedy") in asked
    err = capsys.readouterr().err  # the learner the search faced is the exploit stage's strongest (seed 2)
    assert err.index("paulista: cfr:paulista: exploit complete") < err.index("paulista: cfr:paulista: search complete")
    assert len(re.findall(r" complete in [\d,]+ s \(", err)) == 19  # four rows of four stages, two rivals, a search
    def broken(*args, **kwargs):
        raise ValueError("the gauntlet's population file is unreadable")

    monkeypatch.setattr(report, "run_gauntlet", broken)  # a task that fails says so in one line, as locally
    assert run(tmp_path / "failed", "--backend", "ray") == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == \
        "truco report: error: the gauntlet's population file is unreadable"
    _fake_measurements(monkeypatch, exploit_status="interrupted")
    assert run(tmp_path / "stopped", "--backend", "ray") == 130
    folder = tmp_path / "stopped" / "runs" / "paulista" / "search_ppo_paulista"
    assert not (folder / "exploit.json").exists() and (folder / "gauntlet.json").exists()


def test_a_reports_best_responses_are_kept_beside_its_runs_where_every_node_sees_them(tmp_path, monkeypatch):
    """The learners a report trains go to ``exploit/`` beside ``--runs`` (``runs/exploit`` for the default
    ``runs/report``, as before), not to the working folder of whichever node runs the stage."""
    from training.measure import report

    class Trained(Exception):
        pass

    def strongest(recipe, matches, root, progress):
        raise Trained(root)

    monkeypatch.setattr(report, "strongest_exploit", strongest)
    runs = tmp_path / "shared" / "report"
    with pytest.raises(Trained) as trained:
        report.measure("heuristic", "argentine", runs, 1000, 0, 1, 2, 2, False, lambda line: None)
    assert trained.value.args[0] == tmp_path / "shared" / "exploit"
    assert report.learner_cache(Path("runs/report")) == Path("runs/exploit")


def test_the_uruguayan_presets_have_a_gauntlet_and_a_report(tmp_path):
    """Uruguayan Truco's 1v1 and 2v2 are measured as the main presets are (issue 76): the gauntlet takes them and
    names its trained opponents until they are packaged; the report accepts them; no training config may name
    their held-out opponents either."""
    from training.measure.gauntlet import check_inputs
    from training.measure.population import REPORT_PRESETS
    from training.measure.report import check_places

    for preset in ("uruguayan", "uruguayan-2v2"):
        assert preset in REPORT_PRESETS and preset not in MAIN_PRESETS
        assert set(gauntlet_specs(preset)) <= all_gauntlet_specs()
        check_places([preset], tmp_path / "root", tmp_path / "runs")  # accepted
        if not all(os.path.isfile(os.path.join(ROOT, "agents", "policies", "gauntlet", f"{preset}-{n}.safetensors"))
                   for n in ("br-heuristic", "br-threshold")):
            with pytest.raises(ValueError, match=f"--make-opponents --preset {preset}"):
                check_inputs("random", preset, 2, None)
