"""``truco report`` reads back what it measured (its data file, docs/strength.json, and the stage files under
``--runs``): a file edited by hand or by a stranger must be refused in one line that names the file, the field and
what is allowed, never rendered as an impossible figure (750.0%, nan%) nor ended in a traceback (issue 72, items 4
and 12)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from training.cli import main
from training.measure import report, report_data
from training.measure.report import ReportStage, measured_stage
from training.measure.report_data import stored_rows

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = json.loads((ROOT / "docs" / "strength.json").read_text())
# rows of the committed file: 0 heuristic, 1 ppo:argentine, 2 cfr:argentine (with a search stage), all argentine


def write(tmp_path: Path, change=None, text: str | None = None) -> Path:
    """A copy of the committed data file where a report with ``--root tmp_path`` reads it, after ``change(data)``,
    or ``text`` itself."""
    data = copy.deepcopy(COMMITTED)
    if change:
        change(data)
    path = tmp_path / "docs" / "strength.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else json.dumps(data))
    return path


def refused(path: Path, message: str, *parts: str) -> None:
    """``message`` is one line of under 1,000 characters naming ``path`` and every one of ``parts``."""
    assert len(message) < 1000 and "\n" not in message.strip(), message
    assert str(path) in message, message
    for part in parts:
        assert part in message, (part, message)


def setter(where: str, value):
    """A change that sets the field at ``where`` (keys and list indexes, dot-separated) to ``value``."""

    def change(data):
        *parents, last = [int(k) if k.isdigit() else k for k in where.split(".")]
        for key in parents:
            data = data[key]
        data[last] = value(data[last]) if callable(value) else value

    return change


RATE = "allowed: a number from 0 to 1"

# item 4: figures the report would render as impossible ones
IMPOSSIBLE = {
    "a win rate of 7.5": (setter("rows.0.versus.random.win_rate_a", 7.5),
                          "rows[0].versus.random.win_rate_a is 7.5", RATE),
    "a win rate of -3": (setter("rows.0.versus.random.win_rate_a", -3), "win_rate_a is -3", RATE),
    "a NaN win rate": (setter("rows.1.versus.heuristic.win_rate_a", float("nan")),
                       "rows[1].versus.heuristic.win_rate_a is nan", RATE),
    "an infinite bound": (setter("rows.1.versus.heuristic.ci_high", float("inf")), "ci_high is inf", RATE),
    "true as a rate": (setter("rows.0.exploit.abr.win_rate", True), "rows[0].exploit.abr.win_rate is True", RATE),
    "an ABR rate of 9.99": (setter("rows.0.exploit.abr.win_rate", 9.99), "exploit.abr.win_rate is 9.99", RATE),
    "an interval past 1": (setter("rows.0.versus.random.ci_high", 1.5), "ci_high is 1.5", RATE),
    "an interval that misses its rate": (setter("rows.0.versus.random.ci_low", 0.999),
                                         "rows[0].versus.random has ci_low 0.999",
                                         "allowed: ci_low <= win_rate_a <= ci_high"),
    "counts that do not add up": (setter("rows.0.exploit.abr.wins", lambda wins: wins + 1),
                                  "rows[0].exploit.abr has wins + losses + draws",
                                  "allowed: wins + losses + draws = matches"),
    "a negative match count": (setter("rows.0.versus.random.matches", -1), "matches is -1",
                               "allowed: a whole number from 1"),
    "a huge count": (setter("rows.0.exploit.training.decisions", 10 ** 400), "training.decisions is 1000",
                     "allowed: a whole number from 0 to 10^12"),
    "a fractional hand count": (setter("rows.0.bluffing.counts.hands", 10.5), "bluffing.counts.hands is 10.5",
                                "allowed: a whole number"),
    "more bluffs than calls": (setter("rows.0.bluffing.counts.bluffs", 10 ** 9), "rows[0].bluffing.counts has",
                               "allowed: bluffs_won <= bluffs <= calling_hands <= hands"),
    "a gauntlet mean of 9.99": (setter("rows.1.gauntlet.mean", 9.99), "rows[1].gauntlet.mean is 9.99", RATE),
    "a gauntlet opponent's rate": (setter("rows.1.gauntlet.opponents.3.win_rate", 2.0),
                                   "rows[1].gauntlet.opponents[3].win_rate is 2.0", RATE),
    "a searched rate": (setter("rows.2.search.exploiter.searched.win_rate_a", -0.5),
                        "rows[2].search.exploiter.searched.win_rate_a is -0.5", RATE),
    "a rival's rate": (setter("rows.1.rivals.cfr:argentine.win_rate_a", 50),
                       "rows[1].rivals['cfr:argentine'].win_rate_a is 50", RATE),
    "negative training seconds": (setter("rows.0.exploit.training.seconds", -5), "training.seconds is -5",
                                  "allowed: a number from 0"),
}

# item 12: files that ended the report in a traceback
CRASHING = {
    "rows as an object": (setter("rows", {"a": 1}), "rows is an object", "allowed: a list"),
    "the file a list": (lambda data: None, "the file is a list", "allowed: an object"),  # text below
    "nesting 100,000 levels deep": (None, "nested too deeply", "at most 64 allowed"),
    "a win rate of 'abc'": (setter("rows.0.versus.random.win_rate_a", "abc"), "win_rate_a is 'abc'", RATE),
    "a kept row without versus": (lambda data: data["rows"][0].pop("versus"), "rows[0].versus is missing",
                                  "required"),
    "an unknown agent in the heuristic's row": (setter("rows.0.agent", "nobody"),
                                                "rows[0].versus.heuristic is missing",
                                                "required for every agent but the heuristic"),
    "a preset without its heuristic": (lambda data: data["rows"].pop(0),
                                       "no row of the heuristic on argentine", "required"),
    "an agent that is no text": (setter("rows.1.agent", 7), "rows[1].agent is 7", "allowed: text"),
    "an unknown preset": (setter("rows.1.preset", "argentine-mini"), "rows[1].preset is 'argentine-mini'",
                          "allowed: one of argentine, argentine-2v2, paulista, paulista-2v2"),
    "a row twice": (lambda data: data["rows"].append(data["rows"][1]), "second row of ppo:argentine on argentine",
                    "allowed: one"),
    "a stage that is a list": (setter("rows.1.gauntlet", [1]), "rows[1].gauntlet is a list", "allowed: an object"),
    "no settings": (lambda data: data.pop("settings"), "settings is missing", "required"),
    "a date that is a number": (setter("settings.finished", 20261207), "settings.finished is 20261207",
                                "allowed: text"),
    "not JSON": (None, "not valid JSON", "line 1"),
}
TEXTS = {"the file a list": "[]", "nesting 100,000 levels deep": "[" * 100_000 + "]" * 100_000,
         "not JSON": "{not json"}


def bad_file(tmp_path: Path, case: str) -> tuple[Path, tuple[str, ...]]:
    change, *parts = {**IMPOSSIBLE, **CRASHING}[case]
    return write(tmp_path, change, TEXTS.get(case)), tuple(parts)


def test_the_committed_data_file_passes_the_check():
    from training.measure.report_data import check_report

    check_report(copy.deepcopy(COMMITTED), page=True)  # every field the page shows, present and possible


@pytest.mark.parametrize("case", [*IMPOSSIBLE, *CRASHING])
def test_the_data_file_reader_refuses_in_one_line(tmp_path, case):
    path, parts = bad_file(tmp_path, case)
    with pytest.raises(ValueError) as err:
        stored_rows(path)
    refused(path, str(err.value), "is not a report's data file", *parts)


@pytest.mark.parametrize("case", ["a win rate of 7.5", "a NaN win rate", "rows as an object",
                                  "nesting 100,000 levels deep", "a win rate of 'abc'", "a kept row without versus",
                                  "a preset without its heuristic", "an unknown agent in the heuristic's row"])
def test_truco_report_refuses_a_bad_data_file_before_measuring(tmp_path, capsys, monkeypatch, case):
    """The cheapest path that reads the data file back: a --preset run reads it (for the kept rows of the other
    presets) before measuring anything; nothing is measured nor written."""

    def measuring(*args, **kwargs):
        raise AssertionError("measured a stage")

    monkeypatch.setattr(report, "measure", measuring)
    path, parts = bad_file(tmp_path, case)
    before = path.read_bytes()
    out = tmp_path / "docs" / "strength.md"
    assert main(["report", "--preset", "paulista", "--runs", str(tmp_path / "runs"), "--root", str(tmp_path),
                 "--no-progress"]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err.startswith("truco report: error: ")
    refused(path, captured.err, *parts)
    assert not out.exists() and path.read_bytes() == before


def test_an_extra_setting_in_the_data_file_is_no_crash(tmp_path, monkeypatch):
    """Settings the report does not measure with are no difference between runs (it used to end in
    StopIteration looking for the setting that differed)."""
    monkeypatch.setattr(report, "measure", lambda *args: args[10])  # each agent's stored row, as measured
    path = write(tmp_path, setter("settings.extra", 1))
    assert main(["report", "--preset", "paulista", "--runs", str(tmp_path / "runs"), "--root", str(tmp_path),
                 "--no-progress"]) == 0
    assert "| argentine | `heuristic` |" in (tmp_path / "docs" / "strength.md").read_text()
    assert json.loads(path.read_text())["rows"] == COMMITTED["rows"]


@pytest.mark.parametrize("flags, words", [
    # a --root that can never be written was found only when the page was written, hours of measuring later
    (["--root", "{tmp}/afile/sub"], "afile' is a file, so"),
    (["--root", "{tmp}/afile"], "is a file; give the folder"),
    # an odd count was refused by the gauntlet stage, after the hour of the ABR stage before it
    (["--gauntlet-matches", "3"], "--gauntlet-matches must be an even number >= 2"),
    (["--matches", "5"], "--matches must be an even number >= 2"),
])
def test_a_root_that_cannot_be_written_or_an_odd_count_is_refused_before_measuring(tmp_path, capsys, monkeypatch,
                                                                                    flags, words):
    def measuring(*args, **kwargs):
        raise AssertionError("measured a stage")

    monkeypatch.setattr(report, "measure", measuring)
    (tmp_path / "afile").write_text("")
    argv = ["report", "--preset", "paulista", "--runs", str(tmp_path / "runs"), "--root", str(tmp_path / "root"),
            "--no-progress", *[flag.replace("{tmp}", str(tmp_path)) for flag in flags]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("truco report: error: ") and words in err and len(err.strip().splitlines()) == 1, err


def test_a_preset_named_twice_is_measured_once(tmp_path, monkeypatch):
    """Its rows were measured twice and written twice into the page and the data file."""
    seen = []

    def measuring(*args):
        seen.append((args[1], args[0]))
        return args[10]  # each agent's stored row, as measured

    monkeypatch.setattr(report, "measure", measuring)
    path = write(tmp_path)
    assert main(["report", "--preset", "paulista", "--preset", "paulista", "--runs", str(tmp_path / "runs"),
                 "--root", str(tmp_path), "--no-progress"]) == 0
    assert len(seen) == len(set(seen)) > 0
    assert json.loads(path.read_text())["rows"] == COMMITTED["rows"]


def stage_file(tmp_path: Path, change=None, text: str | None = None) -> tuple[Path, dict]:
    """The committed heuristic's exploit stage on argentine as a stage file under ``tmp_path``, and its
    settings."""
    stage = copy.deepcopy(COMMITTED["rows"][0]["exploit"])
    if change:
        change(stage)
    path = tmp_path / "runs" / "argentine" / "heuristic" / "exploit.json"
    path.parent.mkdir(parents=True)
    path.write_text(text if text is not None else json.dumps(stage))
    return path, ReportStage(path, None, never).key_of(COMMITTED["rows"][0]["exploit"])


def never(*args):
    raise AssertionError("measured the stage again")


def test_a_good_stage_file_is_reused(tmp_path):
    path, settings = stage_file(tmp_path)
    found = measured_stage(path, settings, never, print, None, report_data.STAGES["exploit"])
    assert found["abr"] == COMMITTED["rows"][0]["exploit"]["abr"]


@pytest.mark.parametrize("change, text, parts", [
    (setter("abr.win_rate", 9.99), None, ("abr.win_rate is 9.99", RATE)),
    (setter("abr.ci_low", float("nan")), None, ("abr.ci_low is nan", RATE)),
    (setter("learners", {"seed": 0}), None, ("learners is an object", "allowed: a list")),
    (lambda stage: stage.pop("training"), None, ("training is missing", "required")),
    (None, "[" * 100_000 + "]" * 100_000, ("nested too deeply",)),
    (None, '"complete"', ("the file is 'complete'", "allowed: an object")),
    (setter("status", ["complete"]), None, ("status is a list", "allowed: text")),
])
def test_a_bad_stage_file_is_refused_in_one_line(tmp_path, change, text, parts):
    path, settings = stage_file(tmp_path, change, text)
    with pytest.raises(ValueError) as err:
        measured_stage(path, settings, never, print, None, report_data.STAGES["exploit"])
    refused(path, str(err.value), "is not a finished stage of truco report", *parts)


def test_an_unfinished_stage_is_measured_again_whatever_it_holds(tmp_path):
    """Only a complete stage made with the same settings is read for its figures; any other is run again (and
    replaced), as before."""
    path, settings = stage_file(tmp_path, lambda stage: stage.update(status="interrupted", abr="abc"))
    assert measured_stage(path, settings, lambda: {"abr": 1}, print, None, report_data.STAGES["exploit"])["abr"] == 1
    assert json.loads(path.read_text())["status"] == "complete"


def test_truco_report_refuses_an_edited_stage_file(tmp_path, capsys):
    """A stage file under --runs edited to 999.0% is refused where the report reads it (the committed data file
    holds this very stage, made with today's settings), before anything is measured or written."""
    row = next(r for r in COMMITTED["rows"] if (r["preset"], r["agent"]) == ("paulista", "heuristic"))
    path = tmp_path / "runs" / "paulista" / "heuristic" / "exploit.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**row["exploit"], "abr": {**row["exploit"]["abr"], "win_rate": 9.99}}))
    out = tmp_path / "docs" / "strength.md"
    assert main(["report", "--preset", "paulista", "--runs", str(tmp_path / "runs"), "--root", str(tmp_path),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err  # after the progress line of the agent whose stage it is
    errors = [line for line in err.splitlines() if line.startswith("truco report: error: ")]
    assert "Traceback" not in err and len(errors) == 1
    refused(path, errors[0], "abr.win_rate is 9.99", RATE)
    assert not out.exists()
