"""MCCFR with the information-set abstraction on the full 1v1 presets: the abstraction reads the same key from
the engine and from the seat's information-state string, training runs, checkpoints resume exactly, and the
CFR agent plays the result."""

import io
import random

import numpy as np
import pytest

from agents.base import make_agent, observation_for
from training.cfr.abstraction import (
    abstract_key,
    action_name,
    key_from_info_string,
    view_from_state,
)
from training.cfr.checkpoint import load_checkpoint
from training.cfr.mccfr import MCCFR, train_mccfr
from training.cfr.runconfig import parse_config
from truco_env import TrucoState, make_config
from truco_env import actions as A
from truco_env.encoding import information_state_string

PRESETS = ["argentine", "argentine-flor", "paulista"]


@pytest.mark.parametrize("preset", PRESETS + ["paulista-clean"])
def test_abstraction_same_from_engine_and_info_string(preset):
    cfg = make_config(preset)
    rng = random.Random(7)
    for game in range(25):
        st = TrucoState.new(cfg, seed=game, score=[rng.randrange(cfg.target_score), rng.randrange(cfg.target_score)])
        start, hand, calls = st.score, st.hand_index, []
        while not st.is_over and st.hand_index == hand:
            seat, legal = st.actor, st.legal_actions()
            key, codes = abstract_key(view_from_state(st, seat, start, calls), legal)
            key2, view = key_from_info_string(information_state_string(st, seat), cfg, legal)
            assert key == key2
            assert sorted(action_name(view, c) for c in codes) == sorted(legal)
            action = rng.choice(legal)
            if action.partition(":")[0] not in ("play", "cover", "play_slot"):
                calls.append((st.trick_index, seat, action))
            st.apply(action)


def _cfg(tmp_path, preset="paulista", **extra):
    data = {"trainer": "mccfr", "preset": preset, "iterations": 60, "checkpoint": str(tmp_path / "m.npz"),
            "logdir": None, "progress": False, "log_every": 20, "seed": 3}
    data.update(extra)
    return parse_config(data)


def test_mccfr_resume_equals_uninterrupted(tmp_path):
    a = _cfg(tmp_path / "a")
    train_mccfr(a, out=io.StringIO())
    b = _cfg(tmp_path / "b")
    train_mccfr(b, out=io.StringIO(), max_new_iterations=25)
    assert load_checkpoint(b.checkpoint).iteration == 25
    train_mccfr(b, out=io.StringIO())
    ca, cb = load_checkpoint(a.checkpoint), load_checkpoint(b.checkpoint)
    assert ca.iteration == cb.iteration == 60
    assert ca.keys == cb.keys
    assert np.array_equal(ca.regrets, cb.regrets) and np.array_equal(ca.cumulative, cb.cumulative)


def test_mccfr_agent_plays_legal_actions(tmp_path):
    cfg = _cfg(tmp_path, preset="argentine", iterations=40)
    summary = train_mccfr(cfg, out=io.StringIO())
    assert summary["infosets"] > 100
    agent = make_agent(f"cfr:{cfg.checkpoint}")
    rules = make_config("argentine")
    rng = random.Random(0)
    st = TrucoState.new(rules, seed=11)
    while not st.is_over:
        if st.actor == 0:
            action = agent.act(observation_for(agent, st, 0))
            assert A.action_name(action, rules.family) in st.legal_actions()
            st.apply(A.action_name(action, rules.family))
        else:
            st.apply(rng.choice(st.legal_actions()))
    assert agent.lookups > 0


def test_mccfr_regret_matching_changes_strategy():
    m = MCCFR(make_config("paulista"), seed=1)
    m.iterate(50)
    assert m.table and any(max(e[1]) > 0 for e in m.table.values())
