"""Ray backends: a tournament and PPO rollouts on a local Ray instance with 2 CPUs give exactly the local results."""

import pytest

ray = pytest.importorskip("ray")

from agents.network import load_policy
from training.learn.ppo import PPOArgs, train_ppo
from training.measure.evaluate import run_tournament


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_tournament_on_ray_equals_local(local_ray):
    agents = ["heuristic", "random"]
    local, _ = run_tournament(agents, ["argentine", "paulista-2v2"], 8, seed=3, workers=2)
    remote, meta = run_tournament(agents, ["argentine", "paulista-2v2"], 8, seed=3, workers=2, backend="ray")
    assert remote["matches"] == local["matches"]
    assert remote["pairings"] == local["pairings"]
    assert meta["ray_nodes"] == [ray.get_runtime_context().get_node_id()]  # the one node that played them


def test_ppo_rollouts_on_ray_equal_local(local_ray, tmp_path):
    options = {"total_decisions": 3000, "tables": 16, "batch_decisions": 1500, "hidden": (32,), "eval_every": 0,
               "eval_opponents": (), "snapshot_every": 1, "scripted": {"random": 0.3}}
    local = train_ppo(PPOArgs(preset="paulista", run_dir=str(tmp_path / "local"), **options), progress_bar=False)
    remote = train_ppo(PPOArgs(preset="paulista", run_dir=str(tmp_path / "ray"), backend="ray", **options),
                   progress_bar=False)
    net_a, _ = load_policy(local)
    net_b, _ = load_policy(remote)
    for key, value in net_a.state_dict().items():
        assert (value == net_b.state_dict()[key]).all(), key
