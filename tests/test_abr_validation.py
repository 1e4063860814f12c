"""The ABR learner against exact best responses (training/measure/abr_validation.py, python -m benchmarks.abr_validation).

The fast tests run the machinery on ``paulista-mini`` with a tiny budget and check that the exact value is what a
tournament measures; the full validation (every check of both research presets) runs only with ``-m slow``."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from agents.cfr.table import load_checkpoint
from training.learn.cfr.checkpoint import save_checkpoint
from training.learn.cfr.solver import best_response_value
from training.learn.cfr.tree import infoset_states, tree_for
from training.measure.abr_validation import TARGETS, exact_values, make_target, run_validation
from training.measure.evaluate import run_tournament
from training.measure.exploit import value_per_deal
from truco_env import make_config
from truco_env.encoding import information_state_string

PRESET = "paulista-mini"
CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.fixture(scope="module")
def tree():
    return tree_for(make_config(PRESET))


def test_validation_runs_end_to_end(tmp_path, tree):
    report = run_validation(tmp_path, CONFIGS, presets=(PRESET,), targets=("random",), decisions=5_000, matches=200,
                            workers=1, progress=False)
    (row,) = report["rows"]
    assert row["status"] == "complete" and row["matches"] == 200
    assert row["exact_seat0"] == pytest.approx(row["exact_seat1"])  # random plays both seats alike
    assert row["exact"] > 0 and row["abr"] is not None and row["utility_range"] == 24
    # the greedy learner's exact value is the number its 200 duplicate matches estimate
    assert row["abr_low"] <= row["learner_exact"] <= row["abr_high"]
    assert row["learner_exact"] <= row["exact"]  # no policy beats the best response
    assert json.loads((tmp_path / "validation.json").read_text())["rows"][0]["exact"] == row["exact"]
    assert "| paulista-mini | random |" in (tmp_path / "validation.md").read_text()

    converged = make_target("converged", PRESET, tree, tmp_path / "converged", CONFIGS)
    exact = sum(exact_values(tree, converged.policy)) / 2
    assert (tmp_path / "converged" / "checkpoint.npz").is_file()
    assert exact == pytest.approx(converged.nash_conv / 2, abs=1e-9)  # the checkpoint plays the solver's average
    assert 0 <= exact <= 5e-4 * tree.utility_range < row["exact"]


def test_infoset_states_replay_each_infosets_history(tree):
    states = infoset_states(tree)
    assert len(states) == tree.num_infosets
    for i in range(0, tree.num_infosets, 997):
        seat = int(tree.infoset_player[i])
        assert states[i].actor == seat
        assert information_state_string(states[i], seat) == tree.infoset_keys[i]


def test_exact_value_is_what_the_tournament_measures(tmp_path, tree):
    """The exact best response to a CFR checkpoint, itself played as a checkpoint, scores its exact value per deal
    (both seats averaged, random first dealer) within the tournament's interval."""
    target = make_target("cfr10", PRESET, tree, tmp_path, CONFIGS)
    value0, br0 = best_response_value(tree, target.policy, 0, return_policy=True)
    value1, br1 = best_response_value(tree, target.policy, 1, return_policy=True)
    base = load_checkpoint(tmp_path / "checkpoint.npz")
    save_checkpoint(tmp_path / "br.npz", dataclasses.replace(base, cumulative=br0 + br1))
    summary, _ = run_tournament([f"cfr:{tmp_path / 'br.npz'}", target.spec], [PRESET], 2000, seed=1, workers=1,
                                progress=False)
    _, low, high = value_per_deal(summary["matches"])
    assert low <= (value0 + value1) / 2 <= high
    assert np.isclose((value0 + value1) / 2, target.nash_conv / 2)


@pytest.mark.slow
def test_abr_matches_exact_best_responses(tmp_path):
    report = run_validation(tmp_path, CONFIGS, progress=False)
    rows = {(r["preset"], r["target"]): r for r in report["rows"]}
    assert len(rows) == 2 * len(TARGETS)
    for row in rows.values():
        assert row["status"] == "complete" and row["not_above"] and row["close"], row
        assert row["abr_low"] <= row["learner_exact"] <= row["abr_high"], row  # the matches measure the policy
        if row["nash_conv"] is not None:  # both seats averaged, the game value cancels: NashConv / 2
            assert row["exact"] == pytest.approx(row["nash_conv"] / 2, abs=1e-9)
    for preset in ("argentine-mini", "paulista-mini"):
        random, cfr10, converged = (rows[preset, name] for name in TARGETS)
        assert random["exact"] > cfr10["exact"] > converged["exact"] >= 0
        assert converged["exact"] <= 5e-4 * converged["utility_range"]
    assert report["passed"]
