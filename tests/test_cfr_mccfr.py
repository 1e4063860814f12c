"""An MCCFR run as ``truco train cfr`` makes it (the loop of training/learn/cfr/mccfr.py around the compiled walk): its
end-of-run evaluation, the ``cfr:PATH`` options of the agent that plays it, its utilities and their resume guard,
the JSON export, and the refusal of checkpoints and configs of the retired abstractions. The walk itself, its keys
and its resume are tests/test_mccfr_kernel.py."""

import io
import random

import pytest

from agents.base import make_agent, observation_for
from agents.cfr.abstraction import codes_and_ids, key_from_observation
from agents.cfr.table import Checkpoint, CheckpointError, load_checkpoint
from training.learn.cfr.checkpoint import save_checkpoint
from training.learn.cfr.mccfr import train_mccfr
from training.learn.cfr.mccfr_kernel import KernelMCCFR
from training.learn.cfr.runconfig import parse_config
from truco_env import TrucoState, actions, make_config
from truco_env.encoding import encode_action_mask, encode_observation
from truco_env.fast import config_array


def _cfg(tmp_path, preset="paulista", **extra):
    data = {"trainer": "mccfr", "preset": preset, "iterations": 60, "checkpoint": str(tmp_path / "m.npz"),
            "logdir": None, "progress": False, "log_every": 20, "seed": 3}
    data.update(extra)
    return parse_config(data)


def test_the_default_abstraction_is_v4_and_its_agent_plays_legal_actions(tmp_path):
    cfg = _cfg(tmp_path, preset="argentine", iterations=400)
    summary = train_mccfr(cfg, out=io.StringIO())
    assert summary["infosets"] > 100
    ckpt = load_checkpoint(cfg.checkpoint)
    assert ckpt.meta["abstraction"] == "v4" and ckpt.meta["key"] == "abstraction-v4"
    agent = make_agent(f"cfr:{cfg.checkpoint}")
    agent.seed(0)
    rules = make_config("argentine")
    rng = random.Random(0)
    for seed in range(11, 16):  # several matches, so that the lookup counts are not a matter of one deal
        st = TrucoState.new(rules, seed=seed)
        while not st.is_over:
            if st.actor == 0:
                action = agent.act(observation_for(agent, st, 0))
                assert actions.action_name(action, rules.family) in st.legal_actions()
                st.apply(actions.action_name(action, rules.family))
            else:
                st.apply(rng.choice(st.legal_actions()))
    assert agent.lookups > 20 and agent.misses < agent.lookups


def test_mccfr_end_of_run_evaluation(tmp_path):
    cfg = _cfg(tmp_path, iterations=20, eval={"opponent": "random", "matches": 4})
    summary = train_mccfr(cfg, out=io.StringIO())
    result = summary["eval"]
    assert result["opponent"] == "random" and result["matches"] == 4
    assert 0.0 <= result["ci_low"] <= result["win_rate_a"] <= result["ci_high"] <= 1.0
    assert result["seed"] == 3  # the run's seed by default


def test_mccfr_end_of_run_evaluation_plays_the_deals_of_its_own_seed(tmp_path):
    """eval.seed chooses the deals (say, other than the strength report's): the same as a tournament with it."""
    from training.measure.evaluate import run_tournament

    cfg = _cfg(tmp_path, iterations=20, eval={"opponent": "random", "matches": 6, "seed": 11})
    result = train_mccfr(cfg, out=io.StringIO())["eval"]
    agent = f"cfr:{cfg.checkpoint}"
    row = run_tournament([agent, "random"], ["paulista"], 6, seed=11, workers=1, progress=False)[0]["pairings"][0]
    assert result["seed"] == 11
    assert (result["wins_a"], result["wins_b"], result["hands"]) == (row["wins_a"], row["wins_b"], row["hands"])


def test_mccfr_agent_threshold(tmp_path):
    """threshold=1 keeps only the row's most likely action(s): every decision with a row plays one of them."""
    from agents.cfr import MCCFR_THRESHOLD, CFRAgent

    cfg = _cfg(tmp_path, preset="paulista", iterations=3000)
    train_mccfr(cfg, out=io.StringIO())
    assert make_agent(f"cfr:{cfg.checkpoint}").threshold == MCCFR_THRESHOLD
    agent = CFRAgent(str(cfg.checkpoint), seed=0, threshold=1.0)
    rules = make_config("paulista")
    cfg_array = config_array(rules)
    rng = random.Random(1)
    checked = 0
    for game in range(5):
        st = TrucoState.new(rules, seed=game)
        while not st.is_over:
            if st.actor == 0:
                action = agent.act(observation_for(agent, st, 0))
                obs, mask = encode_observation(st, 0), encode_action_mask(st)
                found = agent.table.lookup(str(key_from_observation(obs, mask, cfg_array, "v4")))
                if found is not None:
                    codes, probs = found
                    by_id = dict(zip(*(x.tolist() for x in codes_and_ids(obs, mask, cfg_array)[::-1])))
                    assert probs[list(codes).index(by_id[action])] == probs.max()
                    checked += 1
                st.apply(actions.action_name(action, rules.family))
            else:
                st.apply(rng.choice(st.legal_actions()))
    assert checked > 10


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


def test_match_equity_is_the_heuristics_table_and_a_finished_match_is_certain():
    """``utility: match_equity`` values a hand by the change in match-winning probability (x 100), read from the
    heuristic's table below the target and certain at it."""
    from agents.cfr.walk import win_prob
    from agents.heuristic import match_equity_table

    solver = KernelMCCFR(make_config("paulista"), seed=0, utility="match_equity")
    table = match_equity_table(12, "paulista")
    equity = solver._equity
    assert win_prob(12, 5, 12, equity) == 1.0 and win_prob(3, 12, 12, equity) == 0.0
    for a, b in [(0, 0), (11, 4), (4, 11), (10, 10)]:
        assert win_prob(a, b, 12, equity) == table[a][b]
        assert win_prob(a, b, 12, equity) + win_prob(b, a, 12, equity) == pytest.approx(1.0)
    assert win_prob(11, 4, 12, equity) > win_prob(4, 4, 12, equity) > win_prob(4, 11, 12, equity)
    assert solver.solver_meta()["utility"] == "match_equity"


def test_utility_config_errors_and_resume_guard(tmp_path):
    with pytest.raises(ValueError, match="option 'utility' = 'equity' is not allowed: should be 'points' or 'match_equity'"):
        _cfg(tmp_path, utility="equity")
    with pytest.raises(ValueError, match="unknown utility"):
        KernelMCCFR(make_config("paulista"), utility="equity")
    train_mccfr(_cfg(tmp_path, iterations=10), out=io.StringIO())
    with pytest.raises(CheckpointError, match="solver settings differ"):
        train_mccfr(_cfg(tmp_path, iterations=20, utility="match_equity"), out=io.StringIO())


def test_the_json_export_says_how_to_play_and_names_abstract_codes(tmp_path):
    """Other front ends play the export as the agent does (thresholded), and MCCFR rows hold abstract codes,
    exported as ranks and calls, never as engine card names."""
    from training.learn.cfr.policy import export_json, load_json

    cfg = _cfg(tmp_path, iterations=200)
    train_mccfr(cfg, out=io.StringIO())
    export_json(cfg.checkpoint, tmp_path / "p.json")
    doc = load_json(tmp_path / "p.json")
    assert doc["play"] == {"mode": "threshold", "threshold": 0.2} and doc["key"] == "abstraction-v4"
    allowed = {f"{kind}:{rank}" for kind in ("play", "cover") for rank in (1, 2, 3)} | set(actions.CALLS)
    names = {name for row in doc["strategy"].values() for name in row}
    assert names and names <= allowed and "play:1" in names, sorted(names - allowed)


@pytest.mark.parametrize("retired", ["v1", "v2", "v3"])
def test_retired_abstractions_are_refused_in_one_line(tmp_path, retired):
    """A config of a retired abstraction, and a checkpoint one made, are one-line errors naming what is allowed."""
    with pytest.raises(ValueError, match="abstraction") as err:
        _cfg(tmp_path, abstraction=retired)
    assert "'v4'" in str(err.value) and "\n" not in str(err.value)
    solver = KernelMCCFR(make_config("paulista"), seed=0)
    solver.iterate(5)
    ckpt = solver.to_checkpoint("paulista")
    old = Checkpoint(meta={**ckpt.meta, "abstraction": retired, "key": f"abstraction-{retired}"}, keys=ckpt.keys,
                     slot_start=ckpt.slot_start, slot_action=ckpt.slot_action, regrets=ckpt.regrets,
                     cumulative=ckpt.cumulative, extra=ckpt.extra)
    path = tmp_path / f"{retired}.npz"
    save_checkpoint(path, old)
    with pytest.raises(ValueError, match=f"abstraction '{retired}', which is retired; playable: v4, v5, lossless") as err:
        make_agent(f"cfr:{path}")
    assert "\n" not in str(err.value)
