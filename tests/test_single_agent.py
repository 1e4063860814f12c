"""The Gymnasium single-agent view: Gymnasium's own check_env, masks, rewards, agents given as objects (truco_env)
or as specs (agents.single_agent), and sb3-contrib's MaskablePPO training on it without an illegal action."""

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agents
import truco_env
from agents import RandomAgent, make_agent
from truco_env.single import TrucoSingleAgentEnv


@pytest.mark.parametrize("preset", ["argentine", "paulista-2v2", "argentine-flor", "argentine-3v3"])
def test_check_env_passes(preset):
    env = agents.single_agent(preset, opponents="random")
    check_env(env, skip_render_check=True)


def test_episode_rewards_masks_and_seats():
    env = agents.single_agent("argentine-2v2", opponents="random", partners="random", reward="points")
    rng = np.random.default_rng(0)
    seats = set()
    for episode in range(20):
        _, info = env.reset(seed=episode)
        seats.add(info["seat"])
        total, done = 0.0, False
        while not done:
            mask = env.action_masks()
            assert (mask == info["action_mask"].astype(bool)).all() and mask.any()
            _, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert not truncated and "illegal_action" not in info
            total += reward
        team = info["seat"] % 2
        assert total == env.state.score[team] - env.state.score[1 - team]
    assert seats == {0, 1, 2, 3}


def test_illegal_action_ends_the_episode_and_bad_specs_fail():
    env = agents.single_agent("argentine", opponents="random", seat=0)
    env.reset(seed=1)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, done, _, info = env.step(illegal)
    assert done and reward == -1.0 and info["illegal_action"]
    with pytest.raises(ValueError, match="unknown agent kind"):
        agents.single_agent("argentine", opponents="wizard")
    with pytest.raises(ValueError, match="seat"):
        TrucoSingleAgentEnv("argentine", opponents=RandomAgent(), seat=5)


def test_environment_takes_agents_not_specs():
    """truco_env never resolves specs (it does not import agents): a string is refused in one line that points to
    agents.single_agent; agent objects and callables that make one play exactly as the specs do."""
    with pytest.raises(ValueError, match=r"agents\.single_agent") as refused:
        truco_env.single_agent("argentine", opponents="random")
    assert "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="act, reset and seed"):
        truco_env.single_agent("argentine", opponents=object())

    def episodes(env):
        rng = np.random.default_rng(3)
        trace = []
        for episode in range(4):
            env.reset(seed=episode)
            done = False
            while not done:
                obs, reward, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
                trace.append((obs.tobytes(), reward))
            trace.append(str(env.state.match_record()))
        return trace

    from_specs = agents.single_agent("argentine-2v2", opponents="heuristic", partners="random", reward="points")
    from_objects = truco_env.single_agent("argentine-2v2", opponents=lambda: make_agent("heuristic"),
                                          partners=RandomAgent, reward="points")
    assert episodes(from_specs) == episodes(from_objects)
    one_object = truco_env.single_agent("argentine", opponents=make_agent("heuristic"), seat=1)
    assert len(episodes(one_object)) > 4


def test_maskable_ppo_trains_without_illegal_actions():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.callbacks import BaseCallback

    class CountIllegal(BaseCallback):
        illegal = 0

        def _on_step(self) -> bool:
            self.illegal += sum(bool(info.get("illegal_action")) for info in self.locals["infos"])
            return True

    env = agents.single_agent("paulista", opponents="random")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=0, verbose=0,
                                    policy_kwargs={"net_arch": [64]})
    counter = CountIllegal()
    model.learn(total_timesteps=3000, callback=counter)
    assert model.num_timesteps >= 3000
    assert counter.illegal == 0


def test_registered_with_gymnasium():
    """`gymnasium.make` builds the view from its id, with a spec that check_env sees; random players by default."""
    import gymnasium

    env = gymnasium.make(truco_env.SINGLE_AGENT_ID, preset="paulista")
    assert env.spec is not None and env.spec.id == truco_env.SINGLE_AGENT_ID
    check_env(env.unwrapped)
    obs, info = env.reset(seed=4)
    assert obs.shape == env.observation_space.shape and info["action_mask"].any()
    with_heuristic = gymnasium.make(truco_env.SINGLE_AGENT_ID, opponents=make_agent("heuristic"), seat=1)
    _, info = with_heuristic.reset(seed=0)
    assert info["seat"] == 1
    env.close()
    with_heuristic.close()


def test_the_aec_metadata_name_carries_the_registered_version():
    assert truco_env.raw_env().metadata["name"] == "truco_v1" and truco_env.ENV_ID.endswith("-v1")


def test_registered_with_pettingzoo():
    """PettingZoo >= 1.27 (the project's floor) has a registry: the AEC env is made from its id."""
    import pettingzoo

    env = pettingzoo.make("aec", truco_env.ENV_ID, preset="paulista")
    env.reset(seed=0)
    assert env.unwrapped.metadata["name"] == "truco_v1" and env.agents == ["player_0", "player_1"]
