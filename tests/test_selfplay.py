"""The collection of the one learner (training/learn/selfplay.py), which self-play and best responses share: the rewards
of every trajectory add up to what the match was worth less a potential, every stored action was legal, and the
matches against a fixed opponent report their results."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.network import PolicyNet
from training.learn.selfplay import Buffers, Partition, PartitionPlan, stored_rows
from truco_env.encoding import OBS_OFFSETS, OBSERVATION_SIZE
from truco_env.vector import VectorEnv


def collect(preset: str, opponents: tuple[str, ...], weights: tuple[float, ...], quota: int, magnet: str = "") -> dict:
    torch.manual_seed(0)
    env = VectorEnv(preset, num_envs=16, seed=0, reward="points")
    task = PartitionPlan(preset, 3, 16, quota, 1.0, opponents, weights, magnet)
    try:
        return Partition(task, env, PolicyNet(hidden=(32,)).eval(), {}, {}, Buffers()).collect()
    finally:
        env.close()


def observations(batch: dict) -> np.ndarray:
    """Each stored decision's observation, densified from the stored sparse rows of the policy's inputs."""
    rows = stored_rows(batch, "policy")
    dense = torch.zeros(len(rows.index), max(OBSERVATION_SIZE, int(rows.index.max()) + 1))
    dense.scatter_add_(1, rows.index, rows.value)
    return dense[:, :OBSERVATION_SIZE].numpy()


def trajectories(batch: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per trajectory: the sum of its rewards and the observation at its first decision; and each decision's
    observation."""
    obs = observations(batch)
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


def test_a_fixed_magnet_is_stored_with_each_decision_as_the_blueprints_strategy():
    """With ``magnet`` a blueprint, each learner decision carries its log-probabilities there: the blueprint's
    strategy at that decision's observation, with the floor of uniform, -inf off the mask."""
    from agents.base import make_agent
    from training.learn.selfplay import MAGNET_FLOOR

    batch = collect("paulista", ("self",), (1.0,), 300, magnet="cfr:paulista")
    stored = np.exp(batch["magnet_logits"])
    masks = batch["masks"]
    assert stored.shape == masks.shape and np.allclose(stored.sum(1), 1.0, atol=1e-5)
    assert (stored[~masks] == 0).all() and (stored[masks] >= MAGNET_FLOOR / masks.sum(1).max() - 1e-7).all()
    blueprint = make_agent("cfr:paulista")
    obs = observations(batch)
    for i in range(0, len(obs), 37):
        probs = blueprint.probabilities({"observation": obs[i], "action_mask": masks[i].astype(np.int8)})
        expected = (1 - MAGNET_FLOOR) * probs + MAGNET_FLOOR * masks[i] / masks[i].sum()
        assert np.allclose(stored[i], expected, atol=1e-5), i
