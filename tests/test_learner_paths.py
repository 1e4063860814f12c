"""The learners' paths, pinned: a few updates of the best-response learner and of the PPO trainer give the weights
they gave when these digests were recorded (training/measure/fingerprint.py summarises weights per tensor, so the digests
hold across CPUs). A change that moves a digest changes what every stored ABR figure and every shipped policy's
recipe would make: re-record the digest in the same commit that says why, and remeasure with ``truco report``
(its stages are keyed on :func:`training.measure.fingerprint.learner_fingerprint`, so it does so by itself)."""

from __future__ import annotations

import pytest
from safetensors.torch import load_file

from training.learn.ppo import PPOArgs, train_ppo
from training.measure.fingerprint import digest, learner_fingerprint, weights_summary
from training.options import build

#: Recorded 2026-12-06 when the best response became the PPO trainer with a league of its target alone (its path
#: moved then: the old learner had collectors of its own; the PPO trainer's digests below held).
LEARNER = {"argentine": "5b7798541febcbd2", "argentine-2v2": "1d1a9a9429579569", "paulista": "6904f32dbb65f1cc",
           "paulista-2v2": "1b1ef4af106d5b92"}
TINY = {"preset": "paulista", "total_decisions": 6000, "batch_decisions": 1500, "tables": 16, "hidden": [32],
        "snapshot_every": 1, "scripted": {"random": 0.3}, "eval_every": 0, "eval_matches": 10,
        "eval_opponents": ["random"], "checkpoint_every": 1}
TRAINER = {"plain": ({}, "d8fb178887282ea2"),
           "magnet": ({"magnet_coef": 0.5, "magnet_every": 2}, "890af8b4744ac3e3"),
           "2v2-warm-start": ({"preset": "argentine-2v2", "imitation_decisions": 500}, "0c5a73504a20bd5f")}


@pytest.mark.parametrize("preset", sorted(LEARNER))
def test_the_best_response_learner_follows_its_recorded_path(preset):
    assert learner_fingerprint(preset) == LEARNER[preset]


@pytest.mark.parametrize("name", sorted(TRAINER))
def test_the_ppo_trainer_follows_its_recorded_path(name, tmp_path):
    changes, recorded = TRAINER[name]
    policy = train_ppo(build(PPOArgs, {**TINY, "run_dir": str(tmp_path / "run"), **changes}), progress_bar=False)
    assert digest(weights_summary(load_file(policy))) == recorded


def test_the_summary_moves_when_one_weight_does():
    import torch

    weights = {"a": torch.zeros(3, 3), "b": torch.ones(4)}
    before = digest(weights_summary(weights))
    weights["a"][1, 2] = 1e-3
    assert digest(weights_summary(weights)) != before
