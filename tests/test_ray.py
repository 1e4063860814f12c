"""Ray backends: a tournament and PPO rollouts on a local Ray instance with 2 CPUs give exactly the local results."""

import pytest

ray = pytest.importorskip("ray")

from training.evaluate import run_tournament
from training.ppo_legacy.model import load_policy
from training.ppo_legacy.train import PPOArgs, train


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_tournament_on_ray_equals_local(local_ray):
    agents = ["heuristic", "random"]
    local, _ = run_tournament(agents, ["argentine", "paulista-2v2"], 8, seed=3, workers=2)
    remote, _ = run_tournament(agents, ["argentine", "paulista-2v2"], 8, seed=3, workers=2, backend="ray")
    assert remote["matches"] == local["matches"]
    assert remote["pairings"] == local["pairings"]


def test_ppo_rollouts_on_ray_equal_local(local_ray, tmp_path):
    options = {"total_updates": 2, "num_tables": 8, "batch_steps": 512, "minibatch_size": 256, "eval_every": 0,
               "eval_opponents": ("random",), "rollout_workers": 2, "league": {"self": 0.5, "random": 0.5}}
    local = train(PPOArgs(preset="paulista", run_dir=str(tmp_path / "local"), **options), progress=False)
    remote = train(PPOArgs(preset="paulista", run_dir=str(tmp_path / "ray"), backend="ray", **options),
                   progress=False)
    net_a, _ = load_policy(local)
    net_b, _ = load_policy(remote)
    for key, value in net_a.state_dict().items():
        assert (value == net_b.state_dict()[key]).all(), key
