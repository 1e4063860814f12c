"""The collection of the one learner (training/selfplay.py), which self-play and best responses share: the rewards
of every trajectory add up to what the match was worth less a potential, every stored action was legal, and the
matches against a fixed opponent report their results."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.network import PolicyNet
from training.selfplay import Buffers, Partition, Task, stored_rows
from truco_env.encoding import OBS_OFFSETS, OBSERVATION_SIZE
from truco_env.vector import VectorEnv


def collect(preset: str, opponents: tuple[str, ...], weights: tuple[float, ...], quota: int) -> dict:
    torch.manual_seed(0)
    env = VectorEnv(preset, num_envs=16, seed=0, reward="points")
    task = Task(preset, 3, 16, quota, 1.0, opponents, weights)
    try:
        return Partition(task, env, PolicyNet(hidden=(32,)).eval(), {}, {}, Buffers()).collect()
    finally:
        env.close()


def trajectories(batch: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per trajectory: the sum of its rewards and the observation at its first decision; and each decision's
    observation (densified from the stored sparse rows)."""
    rows = stored_rows(batch, "policy")
    dense = torch.zeros(len(rows.index), rows.index.shape[1] and int(rows.index.max()) + 1 or 1)
    dense.scatter_add_(1, rows.index, rows.value)
    obs = dense[:, :OBSERVATION_SIZE].numpy()
    order = np.argsort(batch["traj"], kind="stable")  # playing order within each trajectory
    traj = batch["traj"][order]
    starts = np.flatnonzero(np.r_[True, traj[1:] != traj[:-1]])
    totals = np.add.reduceat(batch["rewards"][order], starts)
    return totals, obs[order][starts], obs


@pytest.mark.parametrize("preset, opponents, weights", [("paulista", ("self", "random"), (0.0, 1.0)),
                                                        ("paulista-2v2", ("self", "random"), (0.5, 0.5))])
def test_shaping_leaves_each_return_the_match_result_less_a_potential(preset, opponents, weights):
    """Potential-based shaping: the rewards of a whole trajectory add up to the match result (+1, -1, or 0 for a
    draw) less the score difference / target when its first decision was taken, whatever the hands between.
    (Paulista: points are scored only when a hand closes, so the observation's score is that potential; in
    Argentine an envido paid mid-hand shows in the score before the hand's credit arrives.)"""
    batch = collect(preset, opponents, weights, 3000)
    totals, first, _ = trajectories(batch)
    own, opp = OBS_OFFSETS["score"][0], OBS_OFFSETS["score"][0] + 1
    potential = first[:, own] - first[:, opp]
    assert np.allclose(np.round(totals + potential), totals + potential, atol=1e-4)
    assert set(np.round(totals + potential).astype(int)) <= {-1, 0, 1}
    assert batch["masks"][np.arange(len(batch["actions"])), batch["actions"]].all()  # all legal
    results = batch["results"]  # (opponent index, learner's score) of each match against a fixed opponent
    assert len(results) > 0 and set(results[:, 0]) == {1} and set(results[:, 1]) <= {0.0, 0.5, 1.0}


def test_one_hand_presets_reward_the_point_difference():
    batch = collect("paulista-mini", ("self", "random"), (0.0, 1.0), 500)
    totals, _, _ = trajectories(batch)
    totals = totals * 12  # target 12
    assert np.allclose(totals, np.round(totals), atol=1e-4)  # whole points
    assert np.abs(totals).max() > 1  # raised hands count more than one point
