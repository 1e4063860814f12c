"""The batched environment (truco_env.vector): its matches replay through the reference engine (truco replay), its
observations and masks equal the AEC encoders', rewards and auto-reset behave, and worker processes change nothing."""

import json

import numpy as np
import pytest

from training.cli import main as cli_main
from truco_env import PRESETS, _kernel
from truco_env.encoding import (
    encode_action_mask,
    encode_observation,
    encode_privileged,
)
from truco_env.records import replay_record
from truco_env.vector import VectorEnv

VARIANTS = [(p, {}) for p in sorted(PRESETS)] + [
    ("argentine-3v3", {"pica_pica": True}), ("argentine-2v2", {"flor": True}),
    ("paulista", {"covered_card": True, "paulista_mazo": True}),
    ("argentine-flor", {"responder": "team_pie", "falta_envido": "malas_match", "mazo_first_trick_bonus": True}),
    ("argentine-2v2", {"senas": True, "sena_catch": 0.5}), ("argentine-3v3", {"senas": True, "pica_pica": True}),
]


@pytest.mark.parametrize("preset,overrides", VARIANTS)
def test_vector_matches_replay_through_the_reference_engine(preset, overrides):
    venv = VectorEnv(preset, num_envs=32, seed=3, record=True, **overrides)
    venv.reset()
    for _ in range(250):
        venv.step(venv.random_actions())
    finished = venv.finished_records
    assert len(finished) >= 10
    if venv.config.senas:  # signals were made, and each deal's catches came from the vector env's own stream
        signals = [a for r in finished for h in r["hands"] for _, a in h["actions"] if a.startswith("sena:")]
        catches = [len(row) for r in finished for h in r["hands"] for row in h["deal"]["catches"]]
        assert len(signals) > 50 and 0.1 < sum(catches) / (len(catches) * venv.num_players / 2) < 0.9
    for record in finished + venv.current_records():
        state = replay_record(json.loads(json.dumps(record)))
        assert state.is_over == (record in finished)
    # the state the vector env shows now is the state the reference engine reaches
    obs, mask, actor = venv._bufs.obs, venv._bufs.masks, venv._bufs.actors
    privileged = venv.privileged()
    for i, record in enumerate(venv.current_records()):
        state = replay_record(record)
        assert state.actor == actor[i]
        assert np.array_equal(obs[i], encode_observation(state, int(actor[i])))
        assert np.array_equal(mask[i], encode_action_mask(state))
        assert np.array_equal(privileged[i], encode_privileged(state, int(actor[i])))
    venv.close()


def test_many_matches_replay_and_truco_replay_accepts_them(tmp_path, capsys):
    venv = VectorEnv("argentine", num_envs=256, seed=11, record=True)
    venv.reset()
    for _ in range(160):
        venv.step(venv.random_actions())
    finished = venv.finished_records
    assert len(finished) >= 1000
    for record in finished:
        replay_record(record)
    path = tmp_path / "vector_match.json"
    path.write_text(json.dumps(finished[0]))
    assert cli_main(["replay", str(path)]) == 0
    assert "OK" in capsys.readouterr().out
    venv.close()


@pytest.mark.parametrize("reward", ["match", "points"])
def test_rewards_done_and_auto_reset(reward):
    venv = VectorEnv("paulista-2v2", num_envs=16, seed=5, reward=reward, record=True)
    venv.reset()
    totals = np.zeros((16, 4))
    seen_done = 0
    for _ in range(600):
        before = len(venv.finished_records)
        _, mask, rewards, actor, done = venv.step(venv.random_actions())
        assert rewards.shape == (16, 4) and rewards.dtype == np.float32
        assert np.all(rewards[:, 0] == rewards[:, 2]) and np.all(rewards[:, 0] == -rewards[:, 1])
        assert mask.any(axis=1).all() and np.all(actor >= 0)
        totals += rewards
        finished = venv.finished_records[before:]
        assert len(finished) == int(done.sum())
        for record, i in zip(finished, np.flatnonzero(done)):
            score = record["hands"][-1]["score_after"]
            if reward == "points":
                assert totals[i, 0] == score[0] - score[1]
            else:
                assert totals[i, 0] == (1 if record["winner"] == 0 else -1)
            assert venv.info[i, _kernel.INFO_WINNER] == record["winner"]
            totals[i] = 0
            # auto-reset: the row already shows a fresh match
            assert venv.states[i, _kernel.S_SCORE] == 0 and venv.states[i, _kernel.S_SCORE + 1] == 0
        seen_done += int(done.sum())
    assert seen_done > 0
    venv.close()


def test_two_workers_step_exactly_like_one():
    one = VectorEnv("argentine-flor", num_envs=40, seed=9)
    two = VectorEnv("argentine-flor", num_envs=40, num_workers=2, seed=9)
    try:
        a, b = one.reset(), two.reset()
        for x, y in zip(a, b):
            assert np.array_equal(x, y)
        for _ in range(200):
            actions = one.random_actions()
            a = one.step(actions)
            b = two.step(actions)
            for x, y in zip(a, b):
                assert np.array_equal(x, y)
    finally:
        one.close()
        two.close()


def test_illegal_actions_and_bad_arguments():
    venv = VectorEnv("argentine", num_envs=4, seed=0)
    with pytest.raises(RuntimeError):
        venv.step(np.zeros(4, dtype=np.int32))
    venv.reset()
    states = venv.states.copy()
    actions = venv.random_actions()
    actions[2] = int(np.flatnonzero(venv._bufs.masks[2] == 0)[0])
    with pytest.raises(ValueError, match="env 2"):
        venv.step(actions)
    assert np.array_equal(states, venv.states)  # nothing moved
    with pytest.raises(ValueError):
        venv.step(np.zeros(3, dtype=np.int32))
    for bad in ({"num_envs": 0}, {"num_workers": 0}, {"reward": "x"}, {"flor": "yes"}):
        with pytest.raises(ValueError):
            VectorEnv("argentine", **{"num_envs": 2, **bad})
    venv.close()
    with pytest.raises(RuntimeError):
        venv.reset()


def test_same_seed_same_matches():
    a = VectorEnv("paulista", num_envs=8, seed=4)
    b = VectorEnv("paulista", num_envs=8, seed=4)
    a.reset()
    b.reset()
    for _ in range(50):
        step_a = a.step(a.random_actions())
        step_b = b.step(b.random_actions())
        assert np.array_equal(step_a[0], step_b[0])
