"""examples/rllib_selfplay.py: the observation form RLlib's masking module expects, and the example itself runs."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import truco_env

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "rllib_selfplay.py"


def _example():
    spec = importlib.util.spec_from_file_location("rllib_selfplay", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imports no Ray at module level
    return module


def _rllib_or_skip():
    try:
        import ray.rllib  # noqa: F401
    except ImportError as exc:  # Ray without its RLlib dependencies raises ImportError too
        pytest.skip(f"ray.rllib cannot be imported ({exc}); pip install -e '.[rllib]'")


def test_observations_in_the_form_of_rllibs_masking_module():
    env = _example().RLlibObservations(truco_env.env("argentine-2v2"))
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        space = env.observation_space(agent)
        assert set(obs) == {"observations", "action_mask"}
        assert obs["action_mask"].dtype == np.float32 and space.contains(obs)
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.slow
def test_rllib_pettingzoo_wrapper_plays_a_whole_match():
    _rllib_or_skip()
    env = _example().make_env({"preset": "paulista"})
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    returns = {}
    while True:
        (agent, agent_obs), = obs.items()
        action = int(rng.choice(np.flatnonzero(agent_obs["action_mask"])))
        obs, rewards, terminated, _, _ = env.step({agent: action})
        for key, value in rewards.items():
            returns[key] = returns.get(key, 0.0) + value
        if terminated["__all__"]:
            break
    assert sorted(returns.values()) == [-1.0, 1.0]  # zero-sum, every seat gets its final reward


@pytest.mark.slow
def test_example_trains_and_plays(tmp_path):
    _rllib_or_skip()
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run([sys.executable, str(EXAMPLE), "--iterations", "2", "--batch", "400", "--epochs", "1",
                           "--eval-matches", "2", "--checkpoint", str(tmp_path / "algo")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "iteration 2:" in done.stdout
    assert "against random:" in done.stdout
    assert (tmp_path / "algo").is_dir()
