"""MCCFR with the information-set abstraction on the full 1v1 presets: the abstraction reads the same key from
the engine and from the seat's information-state string, training runs, checkpoints resume exactly, and the
CFR agent plays the result."""

import io
import random

import numpy as np
import pytest

from agents.base import Agent, make_agent, observation_for
from agents.cfr_abstraction import (
    abstract_key,
    action_name,
    betting_v2,
    key_from_info_string,
    view_from_state,
)
from agents.cfr_table import CheckpointError, load_checkpoint
from training.cfr.mccfr import MCCFR, train_mccfr
from training.cfr.runconfig import parse_config
from truco_env import TrucoState, make_config
from truco_env import actions as A
from truco_env.encoding import information_state_string

PRESETS = ["argentine", "argentine-flor", "paulista"]


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("preset", PRESETS + ["paulista-clean"])
def test_abstraction_same_from_engine_and_info_string(preset, version):
    cfg = make_config(preset)
    rng = random.Random(7)
    for game in range(25):
        st = TrucoState.new(cfg, seed=game, score=[rng.randrange(cfg.target_score), rng.randrange(cfg.target_score)])
        start, hand, calls = st.score, st.hand_index, []
        while not st.is_over and st.hand_index == hand:
            seat, legal = st.actor, st.legal_actions()
            key, codes = abstract_key(view_from_state(st, seat, start, calls), legal, version)
            key2, view = key_from_info_string(information_state_string(st, seat), cfg, legal, version)
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


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_mccfr_agent_plays_legal_actions(tmp_path, version):
    cfg = _cfg(tmp_path, preset="argentine", iterations=40, abstraction=version)
    summary = train_mccfr(cfg, out=io.StringIO())
    assert summary["infosets"] > 100
    ckpt = load_checkpoint(cfg.checkpoint)
    assert ckpt.meta["abstraction"] == version and ckpt.meta["key"] == "abstraction-" + version
    agent = make_agent(f"cfr:{cfg.checkpoint}")
    agent.seed(0)
    rules = make_config("argentine")
    rng = random.Random(0)
    for seed in range(11, 16):  # several matches, so that the lookup counts are not a matter of one deal
        st = TrucoState.new(rules, seed=seed)
        while not st.is_over:
            if st.actor == 0:
                action = agent.act(observation_for(agent, st, 0))
                assert A.action_name(action, rules.family) in st.legal_actions()
                st.apply(A.action_name(action, rules.family))
            else:
                st.apply(rng.choice(st.legal_actions()))
    assert agent.lookups > 20
    if version == "v2":  # coarse enough that 40 iterations already cover some of a match's spots
        assert agent.misses < agent.lookups


def test_betting_v2_is_compact():
    # trick numbers and answers drop out; the ladder keeps its level and the last caller
    assert betting_v2([(0, 1, "truco"), (0, 0, "quiero"), (1, 0, "retruco")]) == ("L20", False)
    assert betting_v2([(2, 1, "truco"), (2, 0, "quiero"), (2, 0, "retruco")]) == ("L20", False)
    # an envido chain counts only while its answer is pending
    assert betting_v2([(0, 0, "envido"), (0, 1, "real_envido")]) == ("L0E0e1re", True)
    assert betting_v2([(0, 0, "envido"), (0, 1, "quiero"), (0, 1, "truco")]) == ("L11", False)
    # envido primero on a pending truco
    assert betting_v2([(0, 0, "truco"), (0, 1, "envido")]) == ("L10E1e", True)


def test_mccfr_v2_is_coarser_than_v1():
    sizes = {}
    for version in ("v1", "v2"):
        m = MCCFR(make_config("argentine"), seed=2, abstraction=version)
        m.iterate(30)
        sizes[version] = len(m.table)
    assert sizes["v2"] < sizes["v1"] / 2


def test_mccfr_resume_refuses_other_abstraction(tmp_path):
    train_mccfr(_cfg(tmp_path, iterations=10, abstraction="v1"), out=io.StringIO())
    with pytest.raises(CheckpointError, match="abstraction"):
        train_mccfr(_cfg(tmp_path, iterations=20, abstraction="v2"), out=io.StringIO())


def test_mccfr_end_of_run_evaluation(tmp_path):
    cfg = _cfg(tmp_path, iterations=20, eval={"opponent": "random", "matches": 4})
    summary = train_mccfr(cfg, out=io.StringIO())
    result = summary["eval"]
    assert result["opponent"] == "random" and result["matches"] == 4
    assert 0.0 <= result["ci_low"] <= result["win_rate_a"] <= result["ci_high"] <= 1.0
    assert result["seed"] == 3  # the run's seed by default


def test_mccfr_end_of_run_evaluation_plays_the_deals_of_its_own_seed(tmp_path):
    """eval.seed chooses the deals (say, other than the strength report's): the same as a tournament with it."""
    from training.evaluate import run_tournament

    cfg = _cfg(tmp_path, iterations=20, eval={"opponent": "random", "matches": 6, "seed": 11})
    result = train_mccfr(cfg, out=io.StringIO())["eval"]
    agent = f"cfr:{cfg.checkpoint}"
    row = run_tournament([agent, "random"], ["paulista"], 6, seed=11, workers=1, progress=False)[0]["pairings"][0]
    assert result["seed"] == 11
    assert (result["wins_a"], result["wins_b"], result["hands"]) == (row["wins_a"], row["wins_b"], row["hands"])


def test_mccfr_regret_matching_changes_strategy():
    m = MCCFR(make_config("paulista"), seed=1)
    m.iterate(50)
    assert m.table and any(max(e[1]) > 0 for e in m.table.values())


def test_mccfr_agent_threshold(tmp_path):
    from agents.cfr import MCCFR_THRESHOLD, CFRAgent
    from agents.cfr_abstraction import action_code

    cfg = _cfg(tmp_path, preset="paulista", iterations=300)
    train_mccfr(cfg, out=io.StringIO())
    assert make_agent(f"cfr:{cfg.checkpoint}").threshold == MCCFR_THRESHOLD
    agent = CFRAgent(str(cfg.checkpoint), seed=0, threshold=1.0)  # keeps only the most likely action(s)
    rules = make_config("paulista")
    rng = random.Random(1)
    checked = 0
    for game in range(5):
        st = TrucoState.new(rules, seed=game)
        while not st.is_over:
            if st.actor == 0:
                name = A.action_name(agent.act(observation_for(agent, st, 0)), rules.family)
                key, view = key_from_info_string(information_state_string(st, 0), rules, st.legal_actions(), "v2")
                found = agent.table.lookup(key)
                if found is not None:
                    codes, probs = found
                    chosen = probs[list(codes).index(action_code(view, name))]
                    assert chosen == probs.max()
                    checked += 1
                st.apply(name)
            else:
                st.apply(rng.choice(st.legal_actions()))
    assert checked > 0


# --- data-biased response to a model of a fixed agent ------------------------------------------------------------

def test_opponent_model_counts_the_agents_abstract_actions():
    from training.cfr.opponent_model import OpponentModel

    rules = make_config("paulista")
    model = OpponentModel.collect(rules, "random:seed=1", 6, seed=2)
    assert len(model) > 20 and model.decisions >= sum(sum(r.values()) for r in model.counts.values())
    for key, row in model.counts.items():
        legal_codes = {int(c) for c in key.rsplit("|", 1)[1].split(",")}
        assert set(row) <= legal_codes  # only codes the key allows
    again = OpponentModel.collect(rules, "random:seed=1", 6, seed=2)
    assert again.counts == model.counts  # seeded: the same matches
    restored = OpponentModel.from_arrays(model.to_arrays())
    assert restored.counts == model.counts
    conf, freq = model.weighted(next(iter(model.counts)), full_count=10**6)
    assert 0 < conf < 1 and abs(sum(freq.values()) - 1) < 1e-12


def test_opponent_model_refuses_inconsistent_arrays():
    from training.cfr.opponent_model import OpponentModel

    arrays = OpponentModel(counts={"k|0,1": {0: 3, 1: 1}}).to_arrays()
    arrays["model_counts"] = arrays["model_counts"][:1]
    with pytest.raises(ValueError, match="opponent model is inconsistent"):
        OpponentModel.from_arrays(arrays)


def _dbr_cfg(tmp_path, **extra):
    return _cfg(tmp_path, opponent_model={"agent": "random:seed=4", "matches": 4, "weight": 1.0, "full_count": 1},
                **extra)


def test_data_biased_response_mixes_model_and_own_strategy():
    """The restricted opponent plays the model's frequencies with weight ``model_weight * min(1, n / full)``
    and its own regret-matching strategy otherwise."""
    from training.cfr.opponent_model import OpponentModel

    model = OpponentModel({"k|0,1,10": {0: 3, 10: 1}}, "test", 1)
    rules = make_config("paulista")
    sigma = [0.2, 0.3, 0.5]
    full = MCCFR(rules, model=model, model_weight=1.0, model_full_count=4)
    assert full.mixed("k|0,1,10", [0, 1, 10], sigma) == pytest.approx([0.75, 0.0, 0.25])
    half = MCCFR(rules, model=model, model_weight=0.5, model_full_count=8)  # confidence 4/8 -> weight 0.25
    assert half.mixed("k|0,1,10", [0, 1, 10], sigma) == pytest.approx(
        [0.75 * 0.2 + 0.25 * 0.75, 0.75 * 0.3, 0.75 * 0.5 + 0.25 * 0.25])
    assert full.mixed("unseen|0,1", [0, 1], [0.4, 0.6]) == [0.4, 0.6]


def test_data_biased_response_keeps_two_tables():
    from training.cfr.opponent_model import OpponentModel

    rules = make_config("paulista")
    model = OpponentModel.collect(rules, "random:seed=4", 4, seed=0)
    m = MCCFR(rules, seed=0, model=model)
    m.iterate(100)
    assert m.table and m.table_r and m.table is not m.table_r
    plain = MCCFR(rules, seed=0)
    plain.iterate(100)
    assert not plain.table_r


def test_data_biased_response_resumes_exactly(tmp_path):
    a = _dbr_cfg(tmp_path / "a")
    train_mccfr(a, out=io.StringIO())
    b = _dbr_cfg(tmp_path / "b")
    train_mccfr(b, out=io.StringIO(), max_new_iterations=25)
    train_mccfr(b, out=io.StringIO())
    ca, cb = load_checkpoint(a.checkpoint), load_checkpoint(b.checkpoint)
    assert ca.iteration == cb.iteration == 60 and ca.keys == cb.keys
    assert np.array_equal(ca.regrets, cb.regrets) and np.array_equal(ca.cumulative, cb.cumulative)
    for name in ("r_regrets", "r_cumulative", "model_counts"):
        assert np.array_equal(ca.extra[name], cb.extra[name])
    assert ca.meta["solver"]["response"]["model"] == "random:seed=4"
    agent = make_agent(f"cfr:{a.checkpoint}")  # the responder's strategy plays like any MCCFR checkpoint
    assert agent.table.kind == "mccfr"


def test_data_biased_response_refuses_other_model_settings(tmp_path):
    train_mccfr(_dbr_cfg(tmp_path, iterations=10), out=io.StringIO())
    changed = _cfg(tmp_path, iterations=20,
                   opponent_model={"agent": "random:seed=4", "matches": 4, "weight": 0.5, "full_count": 1})
    with pytest.raises(CheckpointError, match="solver settings differ"):
        train_mccfr(changed, out=io.StringIO())
    with pytest.raises(CheckpointError, match="solver settings differ"):
        train_mccfr(_cfg(tmp_path, iterations=20), out=io.StringIO())  # plain self-play on a response checkpoint


@pytest.mark.parametrize("bad, message", [
    ({"agent": "heuristic", "weight": 1.5}, "option 'opponent_model.weight' = 1.5 is not allowed: should be less"),
    ({"agent": "heuristic", "matches": 0}, "option 'opponent_model.matches' = 0 is not allowed: should be greater"),
    ({"agent": "nobody"}, "unknown agent kind 'nobody'"),
    ({"agent": "heuristic", "size": 3}, "unknown option 'opponent_model.size'"),
    ("heuristic", "option 'opponent_model' = 'heuristic' is not allowed: should be a valid dictionary"),
])
def test_opponent_model_config_errors(tmp_path, bad, message):
    with pytest.raises(ValueError, match=message):
        _cfg(tmp_path, opponent_model=bad)


@pytest.mark.parametrize("suffix, message", [
    (",threshold=2", "threshold must be a number in \\[0, 1\\]"),
    (",greedy=yes", "greedy must be 0 or 1"),
    (",depth=3", "unknown option 'depth=3'"),
])
def test_cfr_spec_options_errors(tmp_path, suffix, message):
    cfg = _cfg(tmp_path, iterations=5)
    train_mccfr(cfg, out=io.StringIO())
    with pytest.raises(ValueError, match=message):
        make_agent(f"cfr:{cfg.checkpoint}{suffix}")


def test_cfr_spec_options(tmp_path):
    cfg = _cfg(tmp_path, iterations=5)
    train_mccfr(cfg, out=io.StringIO())
    agent = make_agent(f"cfr:{cfg.checkpoint},threshold=0.35,greedy=1,seed=3")
    assert agent.threshold == 0.35 and agent.greedy is True


def test_match_equity_utility_values():
    """``utility: match_equity`` values a hand by the change in match-winning probability (x 100)."""
    from agents.heuristic import match_equity_table

    rules = make_config("paulista")
    m = MCCFR(rules, seed=0, utility="match_equity")
    table = match_equity_table(12, "paulista")
    assert m._win_prob(12, 5) == 1.0 and m._win_prob(3, 12) == 0.0
    for a, b in [(0, 0), (11, 4), (4, 11), (10, 10)]:
        assert m._win_prob(a, b) == table[a][b]
        assert m._win_prob(a, b) + m._win_prob(b, a) == pytest.approx(1.0)
    assert m._win_prob(11, 4) > m._win_prob(4, 4) > m._win_prob(4, 11)
    # a terminal hand: the traverser's value is the equity change from the start score, x 100
    st = TrucoState.new(m.walk_config, seed=5, score=[10, 3])
    while not st.is_over:
        st.apply(st.legal_actions()[0])
    a, b = st.score
    value = m._walk(st, 0, (10, 3), [], st.hand_index)
    assert value == pytest.approx(100 * (m._win_prob(a, b) - m._win_prob(10, 3)))
    assert m._walk(st, 1, (10, 3), [], st.hand_index) == pytest.approx(-value)
    m.iterate(30)
    assert m.solver_meta()["utility"] == "match_equity"
    assert "utility" not in MCCFR(rules).solver_meta()  # old checkpoints keep their settings


def test_utility_config_errors_and_resume_guard(tmp_path):
    with pytest.raises(ValueError, match="option 'utility' = 'equity' is not allowed: should be 'points' or 'match_equity'"):
        _cfg(tmp_path, utility="equity")
    with pytest.raises(ValueError, match="unknown utility"):
        MCCFR(make_config("paulista"), utility="equity")
    train_mccfr(_cfg(tmp_path, iterations=10), out=io.StringIO())
    with pytest.raises(CheckpointError, match="solver settings differ"):
        train_mccfr(_cfg(tmp_path, iterations=20, utility="match_equity"), out=io.StringIO())


def test_response_checkpoints_play_greedily_by_default(tmp_path):
    """A data-biased response is played as a pure strategy (its most likely action); self-play MCCFR
    checkpoints keep the threshold; an explicit greedy=0 wins."""
    response = _dbr_cfg(tmp_path / "r", iterations=10)
    train_mccfr(response, out=io.StringIO())
    plain = _cfg(tmp_path / "p", iterations=10)
    train_mccfr(plain, out=io.StringIO())
    assert make_agent(f"cfr:{response.checkpoint}").greedy is True
    assert make_agent(f"cfr:{plain.checkpoint}").greedy is False
    assert make_agent(f"cfr:{response.checkpoint},greedy=0").greedy is False
    # the JSON export says how to play each kind, so other front ends play it the same way
    from training.cfr.policy import export_json, load_json

    export_json(response.checkpoint, tmp_path / "r.json")
    export_json(plain.checkpoint, tmp_path / "p.json")
    assert load_json(tmp_path / "r.json")["play"] == {"mode": "greedy"}
    assert load_json(tmp_path / "p.json")["play"] == {"mode": "threshold", "threshold": 0.2}
    # MCCFR tables hold abstract codes: exported as ranks and calls, never as engine card names
    from agents.cfr_abstraction import CALL_CODE

    allowed = {f"{kind}:{rank}" for kind in ("play", "cover") for rank in (1, 2, 3)} | set(CALL_CODE)
    names = {name for row in load_json(tmp_path / "p.json")["strategy"].values() for name in row}
    assert names and names <= allowed and "play:1" in names, sorted(names - allowed)


def test_the_opponent_models_recorder_passes_a_new_match_on_to_the_agent():
    """The recorder stands in the agent's seat in every match: the reset that starts a match must reach the agent,
    or the heuristic's memory of earlier matches (its reading of the opponent) leaks into the next one."""
    from training.cfr.opponent_model import _Recorder

    seen = []

    class Remembering(Agent):
        def reset(self, seat=None):
            seen.append(seat)

        def act(self, observation):
            return 0

    recorder = _Recorder(Remembering(), make_config("argentine"), "v2", {})
    recorder.reset(1)
    assert seen == [1]
