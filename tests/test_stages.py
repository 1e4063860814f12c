"""The stage runner (training/measure/stages.py): a stored result is reused only when complete and made with today's key,
and a run that stopped half-way is never stored as a finished one."""

from __future__ import annotations

import json
import time

import pytest

from training.measure.stages import COMPLETE, Stage, run_stage, safe_name


def counting_run(results: list[dict]):
    """A run that returns the next of ``results`` each time it is called, and counts its calls."""
    calls = []

    def run():
        calls.append(1)
        return results[len(calls) - 1]

    return run, calls


def test_a_finished_stage_is_stored_with_its_key_and_date_and_reused_for_the_same_key(tmp_path):
    path = tmp_path / "stage.json"
    run, calls = counting_run([{"value": 1}, {"value": 2}])
    assert run_stage(Stage(path, {"seed": 0}, run))["value"] == 1
    stored = json.loads(path.read_text())
    seconds = stored.pop("seconds")  # what the run took: a report's cost is the sum of its stages'
    stored.pop("cpu_seconds")
    assert stored == {"value": 1, "status": COMPLETE, "settings": {"seed": 0}, "measured": time.strftime("%Y-%m-%d")}
    assert 0 <= seconds < 60
    assert run_stage(Stage(path, {"seed": 0}, run))["value"] == 1 and len(calls) == 1  # reused
    assert run_stage(Stage(path, {"seed": 1}, run))["value"] == 2 and len(calls) == 2  # another key: run again
    assert json.loads(path.read_text())["settings"] == {"seed": 1}


def test_a_half_made_result_is_handed_back_and_never_stored(tmp_path):
    path = tmp_path / "stage.json"
    run, calls = counting_run([{"status": "interrupted", "value": 1}, {"value": 2}])
    assert run_stage(Stage(path, {}, run)) == {"status": "interrupted", "value": 1}
    assert not path.exists()
    path.write_text(json.dumps({"status": "interrupted", "settings": {}, "value": 9}))  # a partial one found there
    assert run_stage(Stage(path, {}, run))["value"] == 2 and len(calls) == 2


def test_the_log_says_whether_a_stage_was_reused_or_run(tmp_path):
    lines: list[str] = []
    stage = Stage(tmp_path / "agent" / "exploit.json", {}, lambda: {"value": 1})
    run_stage(stage, lines.append)
    run_stage(stage, lines.append)
    assert lines == ["  run   agent/exploit.json", f"  reuse {tmp_path / 'agent' / 'exploit.json'}"]


def test_a_stored_file_that_is_no_json_is_a_one_line_error(tmp_path):
    path = tmp_path / "stage.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        run_stage(Stage(path, {}, lambda: {"value": 1}))


def test_a_file_name_made_of_an_agent_spec_is_one_name():
    assert safe_name("ppo:runs/x y,greedy") == "ppo_runs_x_y_greedy"
    assert safe_name("heuristic:bluff=0.3") == "heuristic_bluff_0.3"


def test_a_stage_keeps_the_cpu_seconds_of_its_run_and_of_its_worker_processes(tmp_path):
    """A report measured beside other work states its cost from the CPU time: the stage's own and that of the
    processes it started and waited for, not the wall time a busy machine stretches."""
    import multiprocessing

    def spin():
        end = time.process_time() + 0.3
        while time.process_time() < end:
            pass

    def run():
        spin()
        worker = multiprocessing.get_context("fork").Process(target=spin)
        worker.start()
        worker.join()
        return {"value": 1}

    stored = run_stage(Stage(tmp_path / "stage.json", {}, run))
    assert stored["cpu_seconds"] >= 0.55  # both spins, the worker's included
    assert json.loads((tmp_path / "stage.json").read_text())["cpu_seconds"] == stored["cpu_seconds"]
