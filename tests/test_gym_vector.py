"""The Gymnasium vector env on the compiled engine (truco_env.gym_vector) and the SKIP action it rests on."""

import gc

import gymnasium
import numpy as np
import pytest
import torch

import agents
import truco_env
from truco_env import _kernel
from truco_env.gym_vector import TrucoVectorEnv
from truco_env.vector import SKIP, VectorEnv


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in mask])


def test_skip_leaves_an_env_as_it_is():
    venv = VectorEnv("argentine", num_envs=8, seed=3)
    obs, mask, actor = venv.reset()
    before = venv.states.copy(), obs.copy(), mask.copy(), actor.copy()
    acts = venv.random_actions().astype(np.int64)
    acts[::2] = SKIP
    obs, mask, reward, actor, done = venv.step(acts)
    assert (venv.states[::2] == before[0][::2]).all() and (obs[::2] == before[1][::2]).all()
    assert (mask[::2] == before[2][::2]).all() and (actor[::2] == before[3][::2]).all()
    assert (venv.states[1::2] != before[0][1::2]).any(axis=1).all()  # the others moved
    assert not reward[::2].any() and not done[::2].any() and not venv.info[::2, _kernel.INFO_CLOSED].any()
    with pytest.raises(ValueError, match="illegal action -2"):
        venv.step(np.full(8, -2))


def test_make_vec_gives_the_compiled_vector_env_with_spaces():
    envs = gymnasium.make_vec(truco_env.SINGLE_AGENT_ID, num_envs=16, preset="paulista")
    assert isinstance(envs, TrucoVectorEnv) and envs.num_envs == 16
    assert envs.single_observation_space.shape == (1086,) and envs.single_action_space.n == 98
    assert envs.observation_space.shape == (16, 1086) and envs.action_space.shape == (16,)
    obs, info = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    assert (info["action_mask"] == envs.action_masks()).all() and info["action_mask"].any(axis=1).all()
    envs.close()


@pytest.mark.parametrize("preset", ["argentine", "argentine-2v2", "paulista"])
def test_the_learner_acts_only_for_its_team_and_rewards_match_results(preset):
    envs = TrucoVectorEnv(preset, num_envs=32)
    _, info = envs.reset(seed=1)
    rng = np.random.default_rng(1)
    results = []
    for _ in range(600):
        assert ((info["seat"] % 2) == envs._team).all()  # every row waits for a seat of the learner's team
        _obs, reward, terminated, truncated, info = envs.step(random_legal(info["action_mask"], rng))
        assert not truncated.any()
        assert ((reward != 0) == terminated).all()  # match rewards: +1/-1 exactly when a match ends
        assert (reward[terminated] == np.where(info["won"][terminated], 1.0, -1.0)).all()
        assert (info["_won"] == terminated).all()
        results += list(info["won"][terminated])
    assert len(results) > 30
    assert 0.3 < np.mean(results) < 0.7  # random against random


def test_points_reward_sums_to_the_score_difference():
    envs = TrucoVectorEnv("argentine", num_envs=16, reward="points", team=0)
    _, info = envs.reset(seed=2)
    rng = np.random.default_rng(2)
    total = np.zeros(16)
    finished = []
    for _ in range(400):
        _obs, reward, terminated, _, info = envs.step(random_legal(info["action_mask"], rng))
        total += reward
        for i in np.flatnonzero(terminated):
            if envs._carry[i] == 0:  # else the opponent already closed a hand of the next match (its score shows)
                score = envs.env.info[i, _kernel.INFO_SCORE:_kernel.INFO_SCORE + 2]
                finished.append((total[i], int(score[0] - score[1])))
            total[i] = 0.0  # the next match's points start with the next step's reward
    assert len(finished) > 10 and all(t == diff != 0 for t, diff in finished)


def test_same_seed_same_matches():
    def run():
        envs = TrucoVectorEnv("argentine", num_envs=8)
        obs, info = envs.reset(seed=5)
        rng = np.random.default_rng(0)
        seen = [obs]
        for _ in range(50):
            obs, reward, _, _, info = envs.step(random_legal(info["action_mask"], rng))
            seen += [obs, reward]
        return seen

    first, second = run(), run()
    assert all((a == b).all() for a, b in zip(first, second, strict=True))


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(TypeError, match="act_batch"):
        TrucoVectorEnv("argentine", num_envs=2, opponents=object())
    with pytest.raises(ValueError, match="team must be"):
        TrucoVectorEnv("argentine", num_envs=2, team=2)
    with pytest.raises(ValueError, match="plays one table at a time"):
        agents.vector_env("argentine", num_envs=2, opponents="heuristic")
    # the agent itself, not its spec: refused here, not with NotImplementedError at the first step
    with pytest.raises(TypeError, match="plays one table at a time"):
        TrucoVectorEnv("argentine", num_envs=2, opponents=agents.make_agent("heuristic"))
    envs = TrucoVectorEnv("argentine", num_envs=2)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="2 integer action ids"):
        envs.step(np.zeros(3, dtype=np.int64))


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_refused_construction_leaves_nothing_to_fail_at_collection():
    """gymnasium's ``VectorEnv.__del__`` closes the instance, also one whose construction was refused."""
    with pytest.raises(ValueError, match="team must be"):
        TrucoVectorEnv("argentine", num_envs=2, team=2)
    gc.collect()


def test_a_cleanrl_style_masked_ppo_loop_trains_on_it():
    """A few thousand steps of masked PPO in CleanRL's manner, straight on the vector env: the standard
    interface (spaces, masks in ``info``, same-step autoreset) is all such a loop needs."""
    torch.manual_seed(0)
    envs = agents.vector_env("argentine", num_envs=64, opponents="random", reward="points")
    net = torch.nn.Sequential(torch.nn.Linear(1086, 64), torch.nn.Tanh(), torch.nn.Linear(64, 98 + 1))
    optim = torch.optim.Adam(net.parameters(), lr=3e-3)
    obs, info = envs.reset(seed=0)
    steps, per_update, returns = 16, 64 * 16, []
    for update in range(6):
        buf = {k: [] for k in ("obs", "mask", "act", "logp", "rew", "done", "value")}
        for _ in range(steps):
            x, mask = torch.from_numpy(obs), torch.from_numpy(info["action_mask"])
            with torch.no_grad():
                out = net(x)
                dist = torch.distributions.Categorical(logits=out[:, :98].masked_fill(~mask, -1e9))
                act = dist.sample()
            obs, reward, terminated, _, info = envs.step(act.numpy())
            for k, v in zip(buf, (x, mask, act, dist.log_prob(act), torch.from_numpy(reward),
                                  torch.from_numpy(terminated), out[:, 98]), strict=True):
                buf[k].append(v)
        rew, done, value = (torch.stack(buf[k]) for k in ("rew", "done", "value"))
        returns.append(float(rew.sum()) / per_update)
        ret = torch.zeros_like(rew)
        running = torch.zeros(64)
        for t in reversed(range(steps)):  # undiscounted return to the end of the rollout, cut at match ends
            running = rew[t] + running * (~done[t]).float()
            ret[t] = running
        adv = (ret - value).flatten()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        x, mask, act, old = (torch.cat(buf[k]) for k in ("obs", "mask", "act", "logp"))
        for _ in range(4):
            out = net(x)
            dist = torch.distributions.Categorical(logits=out[:, :98].masked_fill(~mask, -1e9))
            ratio = (dist.log_prob(act) - old).exp()
            loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
            loss = loss + 0.5 * ((out[:, 98] - ret.flatten()) ** 2).mean()
            optim.zero_grad()
            loss.backward()
            optim.step()
            assert torch.isfinite(loss)
        assert (dist.probs[~mask] == 0).all()  # masked logits: an illegal action never has probability
    envs.close()
    assert len(returns) == 6 and all(np.isfinite(returns))
