"""The distillation trainer (training/learn/distill.py), run tiny: chunks that resume and do not depend on who plays
them, a policy that plays, and the agreement figures."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents import make_agent
from training.cli import main
from training.learn.distill import DistillArgs, collect_chunk

TINY = ["--set", "preset=argentine", "--set", "teacher=search:ppo:argentine,worlds=2,on=cards",
        "--set", "init=ppo:argentine", "--set", "matches=2", "--set", "chunk_matches=1", "--set", "workers=1",
        "--set", "holdout=0.5", "--set", "epochs=1"]


def test_a_tiny_run_writes_a_policy_and_resumes_from_its_chunks(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "distill", *TINY, "--run-dir", str(run), "--quiet"]) == 0
    summary = json.loads((run / "distill.json").read_text())
    assert summary["decisions"] > 10 and summary["held_out_decisions"] > 10
    assert 0 <= summary["agreement_before"] <= 1 and 0 <= summary["agreement_after"] <= 1
    agent = make_agent(f"ppo:{run / 'policy.safetensors'}")
    assert agent.greedy and agent.presets == ("argentine",)
    chunks = sorted((run / "chunks").iterdir())
    assert len(chunks) == 2
    kept = chunks[1].read_bytes()
    chunks[1].unlink()
    capsys.readouterr()
    assert main(["train", "distill", *TINY, "--run-dir", str(run)]) == 0
    assert "collecting 1 of 2 chunks" in capsys.readouterr().err
    assert np.array_equal(np.load(chunks[1])["actions"], np.load(__import__("io").BytesIO(kept))["actions"])


def test_a_chunk_is_the_same_whoever_plays_it():
    args = DistillArgs(preset="argentine", teacher="search:ppo:argentine,worlds=2,on=cards", init="ppo:argentine",
                       chunk_matches=1).model_dump()
    first, again = collect_chunk(args, 3), collect_chunk(args, 3)
    assert all(np.array_equal(first[k], again[k]) for k in first)
    assert not np.array_equal(collect_chunk(args, 4)["actions"][:20], first["actions"][:20])


def test_a_start_that_is_no_network_is_one_line(tmp_path, capsys):
    assert main(["train", "distill", *TINY, "--set", "init=heuristic", "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert "is no network to start from" in err and "\n" not in err


@pytest.mark.parametrize("teacher, words", [("search:random", "gives no action probabilities"),
                                            ("search:ppo:paulista,worlds=99999", "worlds must be an integer")])
def test_a_teacher_that_cannot_play_is_one_line_and_writes_nothing(tmp_path, capsys, teacher, words):
    run = tmp_path / "r"
    assert main(["train", "distill", *TINY, "--set", f"teacher={teacher}", "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and not run.exists()
