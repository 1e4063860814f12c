"""Output folders (training/outputs.py): one writer at a time, whole folders or none, no litter from killed
writers; and Ctrl-C: exit 130 in one line, no half-written output, an interrupted training run resumable and
without a policy file (issue 30, items 1 and 6)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from training import outputs
from training.atomic import atomic_write
from training.cli import main
from training.outputs import FolderBusy, clean_stale, hold, lock_path, output_files, output_folder

ROOT = Path(__file__).resolve().parent.parent
EVAL = ["eval", "--agents", "heuristic", "random", "--matches", "2", "--workers", "1", "--no-progress", "--no-plots"]


def python(code: str, cwd: Path) -> subprocess.Popen:
    """A Python process running ``code`` with this checkout importable, its stdout piped."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def dead_pid(tmp_path: Path) -> int:
    """The PID of a process that has ended."""
    process = python("import os; print(os.getpid())", tmp_path)
    out, _ = process.communicate(timeout=60)
    return int(out)


def siblings(path: Path) -> list[str]:
    """Temporary or set-aside copies of ``path`` and its lock, beside it."""
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(f".{path.name}."))


def test_a_second_writer_is_refused_and_the_lock_dies_with_its_process(tmp_path, capsys):
    out = tmp_path / "eval"
    holder = python(f"from training.outputs import hold\nwith hold({str(out)!r}):\n    print('held', flush=True)\n"
                    "    import time; time.sleep(120)\n", tmp_path)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FolderBusy, match=f"process {holder.pid} is writing it"):
            with output_folder(out, "eval"):
                pass
        assert main([*EVAL, "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "is in use" in err and str(holder.pid) in err, err
        assert not out.exists()
        holder.kill()  # SIGKILL: no cleanup code runs, the kernel drops the lock
        holder.wait(timeout=60)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=60)
    assert main([*EVAL, "--out", str(out)]) == 0  # the dead holder blocks nothing
    assert (out / "results.json").is_file()
    assert not lock_path(out).exists() and siblings(out) == []


def test_an_existing_folder_is_refused_without_overwrite_and_replaced_whole_with_it(tmp_path, capsys):
    out = tmp_path / "eval"
    assert main([*EVAL, "--seed", "1", "--out", str(out)]) == 0
    first = json.loads((out / "results.json").read_text())
    (out / "left-over.txt").write_text("from the first run")
    capsys.readouterr()
    assert main([*EVAL, "--seed", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "already holds files of an earlier run" in err and "--overwrite" in err
    assert json.loads((out / "results.json").read_text()) == first
    assert main([*EVAL, "--seed", "2", "--out", str(out), "--overwrite"]) == 0
    assert json.loads((out / "results.json").read_text())["meta"]["seed"] == 2
    assert not (out / "left-over.txt").exists()  # replaced whole, not file by file
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "eval" and "results.json" in manifest["files"] and manifest["pid"] == os.getpid()
    assert siblings(out) == []
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("precious")
    capsys.readouterr()
    assert main([*EVAL, "--out", str(foreign), "--overwrite"]) == 2
    assert "no truco command wrote" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "precious"


def test_a_writer_that_fails_mid_write_leaves_the_previous_folder_as_it_was(tmp_path):
    out = tmp_path / "out"
    with output_folder(out, "test") as folder:
        (folder / "a.csv").write_text("old a")
        (folder / "b.json").write_text("old b")
    before = {p.name: p.read_text() for p in out.iterdir()}
    with pytest.raises(RuntimeError, match="disk full"):
        with output_folder(out, "test", overwrite=True) as folder:
            (folder / "a.csv").write_text("new a")
            raise RuntimeError("disk full")  # before b.json and the manifest
    assert {p.name: p.read_text() for p in out.iterdir()} == before
    assert siblings(out) == []


def test_a_writer_killed_mid_write_leaves_no_mix_and_its_litter_is_cleaned(tmp_path):
    out = tmp_path / "out"
    with output_folder(out, "test") as folder:
        (folder / "a.csv").write_text("old a")
    writer = python(f"from training.outputs import output_folder\n"
                    f"with output_folder({str(out)!r}, 'test', overwrite=True) as folder:\n"
                    "    (folder / 'a.csv').write_text('new a')\n    print('writing', flush=True)\n"
                    "    import time; time.sleep(120)\n", tmp_path)
    try:
        assert writer.stdout.readline().strip() == "writing"
    finally:
        writer.kill()
        writer.wait(timeout=60)
    assert (out / "a.csv").read_text() == "old a"
    left = [name for name in siblings(out) if ".tmp-" in name]
    assert len(left) == 1 and left[0].startswith(f".out.tmp-{writer.pid}-")  # its half-made folder, aside
    with output_folder(out, "test", overwrite=True) as folder:  # the next run removes the dead writer's folder
        (folder / "a.csv").write_text("newer a")
    assert (out / "a.csv").read_text() == "newer a" and siblings(out) == []


def test_a_folder_set_aside_by_a_run_killed_between_its_renames_comes_back(tmp_path):
    out = tmp_path / "out"
    aside = tmp_path / f".out.old-{dead_pid(tmp_path)}-0a1b2c3d"
    aside.mkdir()
    (aside / "results.json").write_text("{}")
    with hold(out):
        pass
    assert (out / "results.json").read_text() == "{}" and siblings(out) == []


def test_stale_temporary_files_of_dead_writers_are_removed(tmp_path):
    names: list[str] = []
    atomic_write(tmp_path / "x.json", lambda tmp: names.append(os.path.basename(tmp)) or Path(tmp).write_text("1"))
    assert names[0].startswith(f".tmp-{os.getpid()}-")  # a temporary file names its writer
    run = tmp_path / "run"
    run.mkdir()
    dead = dead_pid(tmp_path)
    for name in (f".tmp-{dead}-abcd1234.safetensors", f".tmp-{os.getpid()}-efgh5678.json", ".tmp-old12345.npz",
                 ".tmp-new12345.npz", "checkpoint.safetensors"):
        (run / name).write_text("x")
    (tmp_path / f".tmp-{dead}-beside.json").write_text("x")
    hour_ago = time.time() - 2 * outputs.LEGACY_TEMP_AGE
    os.utime(run / ".tmp-old12345.npz", (hour_ago, hour_ago))  # a name from before the PID, long untouched
    with hold(run):
        pass
    assert {p.name for p in run.iterdir()} == {".tmp-new12345.npz", f".tmp-{os.getpid()}-efgh5678.json",
                                               "checkpoint.safetensors"}
    assert not (tmp_path / f".tmp-{dead}-beside.json").exists()
    assert clean_stale(run) == []


def test_exported_files_appear_together_and_replace_an_earlier_export_whole(tmp_path):
    model, meta, vectors = (tmp_path / name for name in ("m.onnx", "m.json", "m.test_vectors.json"))
    with output_files([model, meta, vectors]) as folder:
        for path in (model, meta, vectors):
            (folder / path.name).write_text("first")
    with pytest.raises(ValueError, match="already exist.*--overwrite"):
        with output_files([model, meta, vectors]):
            pass
    with pytest.raises(KeyboardInterrupt):
        with output_files([model, meta, vectors], overwrite=True) as folder:
            (folder / model.name).write_text("second")
            raise KeyboardInterrupt
    assert [p.read_text() for p in (model, meta, vectors)] == ["first"] * 3
    with output_files([model, meta, vectors], overwrite=True) as folder:  # this export makes no test vectors
        for path in (model, meta):
            (folder / path.name).write_text("second")
    assert [p.read_text() for p in (model, meta)] == ["second"] * 2
    assert not vectors.exists()  # no file of the earlier export stays beside the new ones
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "m.onnx"]


@pytest.fixture
def python_ctrl_c():
    """Python's own Ctrl-C handler for the test, even when the suite runs with SIGINT ignored: a background job of
    a non-interactive shell (``pytest ... &``) inherits SIGINT ignored, Python keeps it so, and a Ctrl-C then
    interrupts nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_in_truco_eval_exits_130_in_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch, python_ctrl_c):
    from training.measure import evaluate

    out = tmp_path / "eval"
    assert main([*EVAL, "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    real = evaluate.run_task
    played = []

    def ctrl_c_at_the_third_match(task):
        played.append(task)
        if len(played) == 3:
            signal.raise_signal(signal.SIGINT)  # a real Ctrl-C: Python's own handler raises KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(evaluate, "run_task", ctrl_c_at_the_third_match)
    assert main([*EVAL, "--matches", "10", "--out", str(out), "--overwrite"]) == 130
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err.strip().splitlines() == [
        (f"truco eval: interrupted; nothing was written ({out} is as it was; the same command again resumes "
         "from the matches played)")]
    assert len(played) == 3
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert siblings(out) == [".eval.journal.jsonl"]  # what the rerun resumes from (tests/test_match_journal.py)


def test_ctrl_c_while_the_parser_is_built_exits_130_in_one_line(capsys, monkeypatch):
    """Building the parser imports torch (train ppo's option list): a Ctrl-C in those first seconds of any
    command used to print a traceback."""
    from training import cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(["replay", "x.json"]) == 130
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == ["truco: interrupted"]


@pytest.mark.parametrize("argv", [[*EVAL, "--out", "LONG"], [*EVAL, "--out", "OUT", "--records", "LONG"],
                                  ["report", "--root", "LONG", "--runs", "OUT"],
                                  ["eval", "--agents", "cfr:LONG.npz", "random", "--preset", "argentine-mini"],
                                  ["report", "--root", "OUT", "--runs", "AFILE"]],
                         ids=["eval-out", "eval-records", "report-root", "cfr-agent", "report-runs-a-file"])
def test_a_path_the_system_refuses_is_one_line_and_exit_2(argv, tmp_path, capsys):
    """A name longer than the filesystem allows made Path.exists() raise: a traceback from truco eval, report and
    the cfr: agent. Any OSError that reaches the command line is now one line and exit code 2."""
    long = str(tmp_path / ("d" * 300))
    (tmp_path / "afile").write_text("")
    argv = [a.replace("LONG", long).replace("OUT", str(tmp_path / "out")).replace("AFILE", str(tmp_path / "afile"))
            for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err[-2000:]
    assert ("ddd" in err or "afile" in err) and not (tmp_path / "out").exists()


def test_running_out_of_memory_is_one_line_and_exit_2(capsys, monkeypatch):
    """truco train ppo --set tables=1000000000000 asked numpy for 4.87 PiB: a MemoryError traceback."""
    from truco_env import records

    def too_big(path):
        raise MemoryError("Unable to allocate 4.87 PiB for an array with shape (5478000000000000,)")

    monkeypatch.setattr(records, "load_record", too_big)
    assert main(["replay", "x.json"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("truco replay: error: not enough memory"), lines


@pytest.mark.slow
def test_ctrl_c_in_a_truco_eval_process_exits_130_without_a_traceback(tmp_path):
    """The same through a real process and a real terminal signal, with worker processes."""
    out = tmp_path / "eval"
    process = subprocess.Popen([sys.executable, "-m", "training.cli", "eval", "--agents", "heuristic", "random",
                                "--matches", "4000", "--workers", "2", "--no-plots", "--out", str(out)],
                               cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not lock_path(out).exists() and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(2)  # the workers are playing
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("truco eval: interrupted")
    assert not out.exists() and siblings(out) == []


# ------------------------------------------------------------------------------------------------------------
# training runs

TINY_PPO = ["--quiet", "--set", "preset=paulista", "--set", "total_decisions=4500", "--set", "batch_decisions=1500",
            "--set", "tables=16", "--set", "hidden=[32]", "--set", "eval_every=1", "--set", "eval_matches=2",
            "--set", "eval_opponents=[random]", "--set", "checkpoint_every=1", "--set", "snapshot_every=1"]


def ctrl_c_in_update(monkeypatch, update: int, times: int = 1) -> None:
    """Press Ctrl-C ``times`` during collection of the ``update``-th update of the next PPO run."""
    from training.learn import ppo

    real = ppo.Backend.run
    calls = {"n": 0}

    def run(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == update:
            for _ in range(times):
                signal.raise_signal(signal.SIGINT)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ppo.Backend, "run", run)


def test_an_interrupted_ppo_run_exits_130_with_a_checkpoint_and_no_policy_and_resume_finishes_it(
        tmp_path, capsys, monkeypatch):
    from agents.network import load_policy

    run = tmp_path / "run"
    ctrl_c_in_update(monkeypatch, 2)
    assert main(["train", "ppo", "--run-dir", str(run), *TINY_PPO]) == 130
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err and len(lines) == 2, err  # the Ctrl-C notice, then where the state is
    assert re.match(r"truco train ppo: interrupted at 3,\d{3} of 4,500 decisions; ", lines[1]), lines[1]
    assert f"its state is the checkpoint {run / 'checkpoint.safetensors'}" in lines[1]
    assert lines[1].endswith(f"--run-dir {run} --resume")
    assert (run / "checkpoint.safetensors").is_file()
    assert not (run / "policy.safetensors").exists()  # only a finished run writes it, evaluations or not
    assert not [p for p in run.iterdir() if p.name.startswith(".tmp-")]
    monkeypatch.undo()
    assert main(["train", "ppo", "--run-dir", str(run), *TINY_PPO]) == 2  # a fresh run would lose it
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "already holds a checkpoint" in err and "--resume" in err
    assert "--overwrite" in err
    assert main(["train", "ppo", "--run-dir", str(run), *TINY_PPO, "--resume"]) == 0
    _, meta = load_policy(str(run / "policy.safetensors"))
    assert meta["complete"] is True and meta["decisions"] >= 4500


def test_overwrite_starts_a_run_dir_over_and_keeps_what_the_trainer_did_not_write(tmp_path):
    from training.learn.ppo import _start_fresh

    run = tmp_path / "run"
    (run / "tb").mkdir(parents=True)
    (run / "tb" / "events.out").write_text("old curves")
    (run / "eval").mkdir()
    for name in ("policy.safetensors", "eval/results.json"):
        (run / name).write_text("x")
    with pytest.raises(ValueError, match="already holds a finished run's policy: pass --resume.*--overwrite"):
        _start_fresh(str(run), overwrite=False)
    assert (run / "policy.safetensors").exists()
    _start_fresh(str(run), overwrite=True)
    assert sorted(str(p.relative_to(run)) for p in run.rglob("*")) == ["eval", "eval/results.json"]


def test_a_second_ctrl_c_in_ppo_training_leaves_at_once_in_one_line(tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    ctrl_c_in_update(monkeypatch, 2, times=2)
    assert main(["train", "ppo", "--run-dir", str(run), *TINY_PPO]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("truco train ppo: interrupted at once; its state is the "
                                                   f"checkpoint {run / 'checkpoint.safetensors'}")
    assert not (run / "policy.safetensors").exists()
    assert not [p for p in run.iterdir() if p.name.startswith(".tmp-")]


def test_a_second_ppo_run_on_a_held_run_dir_is_refused(tmp_path, capsys):
    run = tmp_path / "run"
    with hold(run):
        assert main(["train", "ppo", "--run-dir", str(run), *TINY_PPO]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"run dir {str(run)!r} is in use" in err
    assert not (run / "checkpoint.safetensors").exists()


def test_an_interrupted_cfr_run_names_its_checkpoint_and_the_command_that_continues_it(tmp_path, capsys,
                                                                                       monkeypatch):
    from agents.cfr.table import load_checkpoint
    from training.learn.cfr.solver import CFRSolver

    config = tmp_path / "c.yaml"
    config.write_text("trainer: exact\npreset: paulista-mini\noverrides: {deck_ranks: [K]}\niterations: 40\n"
                      f"eval_every: 10\ncheckpoint_every: 10\ncheckpoint: {tmp_path / 'ck.npz'}\nlogdir: null\n"
                      "progress: false\n")
    real = CFRSolver.iterate

    def iterate(self, n):
        if self.iteration == 25:
            raise KeyboardInterrupt
        return real(self, n)

    monkeypatch.setattr(CFRSolver, "iterate", iterate)
    assert main(["train", "cfr", "--config", str(config)]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line == (f"truco train cfr: interrupted; its state is the last checkpoint {tmp_path / 'ck.npz'}; "
                    f"continue with: truco train cfr --config {config}")
    assert load_checkpoint(tmp_path / "ck.npz").iteration == 20
    monkeypatch.undo()
    assert main(["train", "cfr", "--config", str(config)]) == 0
    assert load_checkpoint(tmp_path / "ck.npz").iteration == 40
    assert not lock_path(tmp_path / "ck.npz").exists()


@pytest.mark.parametrize("argv0, named", [("/usr/bin/truco", True), ("/x/training/cli/__main__.py", True),
                                          ("/x/pytest", False)])
def test_the_manifest_names_the_truco_command_however_it_was_started(tmp_path, monkeypatch, argv0, named):
    """``python -m training.cli eval ...`` is ``truco eval ...`` where no script is installed: its manifest
    names the command as the script's does (it recorded none)."""
    from training.outputs import manifest

    monkeypatch.setattr(sys, "argv", [argv0, "eval", "--agents", "heuristic", "random"])
    command = manifest("eval", tmp_path)["command"]
    assert command == ("truco eval --agents heuristic random" if named else None)
