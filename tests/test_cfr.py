"""CFR on the research presets: the exact tree, CFR+ convergence, best response, checkpoints (atomic, resumable,
never pickles), the CFR agent, the JSON export, configs and the CLI. Small rule overrides keep these fast; the
full presets are in the slow tests."""

import io
import itertools
import json
import os
import pickle
import random

import numpy as np
import pytest

from agents.base import make_agent, observation_for
from agents.cfr.table import CheckpointError, StrategyTable, canonical_key, load_checkpoint
from training.learn.cfr.checkpoint import save_checkpoint
from training.learn.cfr.policy import export_json, load_json
from training.learn.cfr.runconfig import load_config, parse_config
from training.learn.cfr.solver import (
    CFRSolver,
    best_response_value,
    expected_value,
    nash_conv,
    uniform_policy,
)
from training.learn.cfr.train import train_exact
from training.learn.cfr.tree import build_tree, deal_list, num_deals
from truco_env import TrucoConfig, TrucoState, actions, make_config
from truco_env.encoding import information_state_string

SMALL = {
    "argentine-mini": {"deck_ranks": ("7",), "target_score": 2},
    "paulista-mini": {"deck_ranks": ("K",)},
}


@pytest.fixture(scope="module", params=sorted(SMALL))
def small(request):
    cfg = make_config(request.param, **SMALL[request.param])
    return request.param, build_tree(cfg)


def _run_cfg(tmp_path, preset, **extra):
    data = {"trainer": "exact", "preset": preset, "overrides": {k: list(v) if isinstance(v, tuple) else v
                                                                 for k, v in SMALL[preset].items()},
            "iterations": 40, "eval_every": 10, "checkpoint_every": 10, "target_nash_conv": None,
            "checkpoint": str(tmp_path / "ck.npz"), "logdir": None, "progress": False}
    data.update(extra)
    return parse_config(data)


def test_tree_matches_the_engine(small):
    _, tree = small
    cfg = tree.config
    keys = {k: i for i, k in enumerate(tree.infoset_keys)}
    assert tree.num_deals == len(deal_list(cfg)) == num_deals(cfg)
    rng = random.Random(0)
    for dealer, h0, h1, vira in rng.sample(deal_list(cfg), 10):
        for _ in range(5):
            st = TrucoState.new(cfg, seed=1, deal={"hands": [list(h0), list(h1)], "vira": vira, "dealer": dealer})
            while not st.is_over:
                key = information_state_string(st, st.actor)
                i = keys[key]  # the tree's incremental keys equal the engine's
                ids = sorted(actions.action_id(a, cfg.family) for a in st.legal_actions())
                assert sorted(tree.slot_action[tree.slot_start[i]:tree.slot_start[i + 1]].tolist()) == ids
                st.apply(rng.choice(st.legal_actions()))
    assert tree.chance[: tree.num_deals].sum() == pytest.approx(1.0)


def test_best_response_bounds_and_zero_sum(small):
    _, tree = small
    pol = uniform_policy(tree)
    ev = expected_value(tree, pol)
    br0 = best_response_value(tree, pol, 0)
    br1 = best_response_value(tree, pol, 1)
    assert br0 >= ev - 1e-12 and br1 >= -ev - 1e-12
    assert nash_conv(tree, pol) == pytest.approx(br0 + br1)
    assert nash_conv(tree, pol) > 0.1


def test_cfr_plus_nash_conv_strictly_falls(small):
    _, tree = small
    solver = CFRSolver(tree, algorithm="cfr+")
    values = []
    for _ in range(8):
        solver.iterate(5)
        values.append(solver.nash_conv())
    assert all(b < a for a, b in itertools.pairwise(values)), values
    assert values[-1] < 0.05 * nash_conv(tree, uniform_policy(tree))


@pytest.mark.parametrize("algorithm", ["linear", "dcfr", "cfr"])
def test_other_algorithms_converge(small, algorithm):
    _, tree = small
    solver = CFRSolver(tree, algorithm=algorithm)
    solver.iterate(60)
    assert solver.nash_conv() < 0.1 * nash_conv(tree, uniform_policy(tree))


def test_simultaneous_updates_also_converge(small):
    _, tree = small
    solver = CFRSolver(tree, algorithm="cfr+", alternating=False)
    solver.iterate(60)
    assert solver.nash_conv() < 0.05 * nash_conv(tree, uniform_policy(tree))


def test_resume_equals_uninterrupted_run(tmp_path):
    preset = "argentine-mini"
    straight = _run_cfg(tmp_path / "a", preset)
    train_exact(straight, out=io.StringIO())
    interrupted = _run_cfg(tmp_path / "b", preset)
    train_exact(interrupted, out=io.StringIO(), max_new_iterations=17)  # stops mid-way
    assert load_checkpoint(interrupted.checkpoint).iteration == 17
    train_exact(interrupted, out=io.StringIO())
    a, b = load_checkpoint(straight.checkpoint), load_checkpoint(interrupted.checkpoint)
    assert a.iteration == b.iteration == 40
    assert np.array_equal(a.regrets, b.regrets)
    assert np.array_equal(a.cumulative, b.cumulative)
    assert a.meta["nash_conv"] == b.meta["nash_conv"]


def test_mismatched_checkpoints_are_refused(tmp_path):
    cfg = _run_cfg(tmp_path, "argentine-mini", iterations=10)
    train_exact(cfg, out=io.StringIO())
    other_game = _run_cfg(tmp_path, "paulista-mini", iterations=20)
    with pytest.raises(CheckpointError, match="other rules"):
        train_exact(other_game, out=io.StringIO())
    other_solver = _run_cfg(tmp_path, "argentine-mini", iterations=20, algorithm="linear")
    with pytest.raises(CheckpointError, match="solver settings differ"):
        train_exact(other_solver, out=io.StringIO())


def test_a_checkpoint_from_before_a_rules_field_existed_resumes_under_its_default():
    """A field added to the rules since a checkpoint was written is missing from its stored rules; at its default it
    is the game the checkpoint trained (the Uruguayan blueprint's checkpoint predates ``envido_refusal``). Only a
    value that differs refuses the checkpoint."""
    from types import SimpleNamespace

    from training.learn.cfr.checkpoint import check_compatible

    rules = TrucoConfig(family="uruguayan").to_dict()
    older = {k: v for k, v in rules.items() if k not in ("envido_refusal", "falta_adds_chain")}
    check_compatible(SimpleNamespace(meta={"kind": "mccfr", "rules": older}), kind="mccfr", rules=rules)
    changed = TrucoConfig(family="uruguayan", envido_refusal="previous_sum_plus_one").to_dict()
    with pytest.raises(CheckpointError, match=r"other rules .*fields differ: \['envido_refusal'\]"):
        check_compatible(SimpleNamespace(meta={"kind": "mccfr", "rules": older}), kind="mccfr", rules=changed)


def test_corrupt_checkpoints_give_clear_errors(tmp_path):
    cfg = _run_cfg(tmp_path, "paulista-mini", iterations=10)
    train_exact(cfg, out=io.StringIO())
    good = (tmp_path / "ck.npz").read_bytes()
    cases = {
        "truncated.npz": good[: len(good) // 2],
        "garbage.npz": b"this is not a checkpoint",
        "empty.npz": b"",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(CheckpointError, match="corrupt|not an .npz|refused"):
            load_checkpoint(tmp_path / name)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "missing.npz")
    ck = load_checkpoint(tmp_path / "ck.npz")
    ck.regrets = ck.regrets[:-1]  # wrong length
    np.savez(tmp_path / "short.npz", meta=np.frombuffer(json.dumps(ck.meta).encode(), np.uint8),
             keys=np.frombuffer("\n".join(ck.keys).encode(), np.uint8), slot_start=ck.slot_start,
             slot_action=ck.slot_action, regrets=ck.regrets, cumulative=ck.cumulative)
    with pytest.raises(CheckpointError, match="one value per slot"):
        load_checkpoint(tmp_path / "short.npz")
    np.savez(tmp_path / "notours.npz", x=np.zeros(3))
    with pytest.raises(CheckpointError, match="missing arrays"):
        load_checkpoint(tmp_path / "notours.npz")


class _Payload:
    """Unpickling this would create a marker directory (it must never happen)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def test_crafted_pickles_are_refused(tmp_path):
    marker = str(tmp_path / "pwned")
    raw = tmp_path / "raw_pickle.npz"
    raw.write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(CheckpointError, match="refused|corrupt"):
        load_checkpoint(raw)
    # an .npz whose arrays are object arrays (numpy stores those as pickles)
    obj = tmp_path / "object_arrays.npz"
    payload = np.empty(1, dtype=object)
    payload[0] = _Payload(marker)
    names = ("meta", "keys", "slot_start", "slot_action", "regrets", "cumulative")
    np.savez(obj, **{name: payload for name in names})
    with pytest.raises(CheckpointError, match="refused"):
        load_checkpoint(obj)
    with pytest.raises(ValueError):
        make_agent(f"cfr:{obj}")
    assert not os.path.exists(marker)


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    cfg = _run_cfg(tmp_path, "paulista-mini", iterations=10)
    train_exact(cfg, out=io.StringIO())
    path = tmp_path / "ck.npz"
    before = path.read_bytes()
    ck = load_checkpoint(path)

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(np, "savez_compressed", boom)
    with pytest.raises(RuntimeError):
        save_checkpoint(path, ck)
    assert path.read_bytes() == before  # the old checkpoint is intact
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_agent_and_export(tmp_path):
    preset = "argentine-mini"
    cfg = _run_cfg(tmp_path, preset, iterations=60)
    train_exact(cfg, out=io.StringIO())
    agent = make_agent(f"cfr:{cfg.checkpoint}")
    assert agent.wants == {"info_state_string"}
    rules = cfg.rules()
    rng = random.Random(3)
    agent.seed(5)
    for game in range(30):
        st = TrucoState.new(rules, seed=game)
        while not st.is_over:
            seat = st.actor
            if seat == 0:
                action = agent.act(observation_for(agent, st, seat))
                st.apply(actions.action_name(action, rules.family))
            else:
                st.apply(rng.choice(st.legal_actions()))
    assert agent.misses == 0 and agent.lookups > 0
    out = tmp_path / "strategy.json"
    summary = export_json(cfg.checkpoint, out)
    doc = load_json(out)
    assert doc["kind"] == "exact" and doc["preset"] == preset and doc["key"] == "information_state_string"
    assert doc["play"] == {"mode": "sample"}
    assert summary["infosets"] == len(doc["strategy"]) == len(StrategyTable.load(cfg.checkpoint))
    names = set(actions.action_names(rules.family))
    for key, probs in doc["strategy"].items():
        assert key.startswith("p") and set(probs) <= names
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-4)


def test_canonical_key_sorts_own_cards():
    key = "p0|3e,1b/None/0-0/d1:0truco|"
    assert canonical_key(key, "argentine") == "p0|1b,3e/None/0-0/d1:0truco|"


def test_config_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    for text, match in [("trainer: nope\npreset: argentine-mini\n", "trainer"),
                        ("trainer: exact\npreset: argentine\n", "research variant"),
                        ("trainer: exact\npreset: argentine-mini\nalgorithm: magic\n", "algorithm"),
                        ("trainer: exact\npreset: argentine-mini\niterations: -3\n", "iterations"),
                        ("trainer: exact\npreset: argentine-mini\nbogus: 1\n", "unknown option 'bogus'"),
                        ("trainer: exact\npreset: argentine-mini\niteratons: 3\n", "did you mean 'iterations'"),
                        ("trainer: exact\npreset: argentine-mini\nutility: points\n", "belongs to trainer 'mccfr'"),
                        ("trainer: exact\npreset: argentine-mini\nalpha: fast\n", "'alpha' = 'fast' is not allowed"),
                        ("trainer: mccfr\npreset: argentine-2v2\n", "1v1"),
                        ("[", "YAML")]:
        bad.write_text(text)
        with pytest.raises(ValueError, match=match):
            load_config(bad)


def test_shipped_configs_parse():
    import glob

    files = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "configs", "cfr_*.yaml")))
    assert len(files) >= 5
    for path in files:
        cfg = load_config(path)
        players = cfg.rules().num_players
        assert players == 2 or (players == 4 and cfg.abstraction == "v5"), path  # team play: the team key


def test_cli_train_and_export(tmp_path, capsys):
    from training.cli import main

    config = tmp_path / "c.yaml"
    config.write_text(
        "trainer: exact\npreset: paulista-mini\noverrides: {deck_ranks: [K]}\niterations: 30\n"
        f"eval_every: 10\ncheckpoint: {tmp_path / 'ck.npz'}\nlogdir: {tmp_path / 'tb'}\nprogress: false\n")
    assert main(["train", "cfr", "--config", str(config)]) == 0
    assert (tmp_path / "ck.npz").exists()
    assert any((tmp_path / "tb").iterdir())  # TensorBoard events
    assert main(["export", "cfr", str(tmp_path / "ck.npz"), "--out", str(tmp_path / "s.json")]) == 0
    assert load_json(tmp_path / "s.json")["strategy"]
    (tmp_path / "bad.npz").write_bytes(b"nope")
    assert main(["export", "cfr", str(tmp_path / "bad.npz"), "--out", str(tmp_path / "t.json")]) == 2
    assert "corrupt" in capsys.readouterr().err


def test_export_cfr_takes_a_shipped_blueprint_by_name(tmp_path, capsys):
    """As `truco export ppo` takes ppo:<name>: cfr:<preset> is the shipped blueprint (it said the file did not
    exist), an unshipped name lists what ships, and best:<preset> exports the report's choice when it is a
    blueprint (best:paulista-2v2) and names what it is otherwise."""
    from training.cli import main

    assert main(["export", "cfr", "cfr:paulista-mini", "--out", str(tmp_path / "x.json")]) == 2
    assert "no shipped blueprint 'paulista-mini'; shipped: [" in capsys.readouterr().err
    assert main(["export", "cfr", "best:argentine", "--out", str(tmp_path / "y.json")]) == 2
    assert "is ppo:argentine, not a CFR blueprint" in capsys.readouterr().err
    assert main(["export", "cfr", "best:paulista-2v2", "--out", str(tmp_path / "s.json")]) == 0
    assert load_json(tmp_path / "s.json")["rules"]["num_players"] == 4
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "y.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["argentine-mini", "paulista-mini"])
def test_research_presets_solved_to_1e3(preset):
    tree = build_tree(make_config(preset))
    solver = CFRSolver(tree, algorithm="cfr+")
    while solver.iteration < 400:
        solver.iterate(10)
        if solver.nash_conv() <= 1e-3 * tree.utility_range:
            break
    assert solver.nash_conv() <= 1e-3 * tree.utility_range


def test_cli_set_overrides_are_checked(tmp_path, capsys):
    from training.cli import main

    config = tmp_path / "c.yaml"
    config.write_text(f"trainer: exact\npreset: paulista-mini\noverrides: {{deck_ranks: [K]}}\niterations: 30\n"
                      f"checkpoint: {tmp_path / 'ck.npz'}\nprogress: false\n")
    for bad, message in [("iterations=fast", "option 'iterations' = 'fast' is not allowed"),
                         ("alpha=-1", "option 'alpha' = -1 is not allowed: should be greater than or equal to 0"),
                         ("iteration=3", "unknown option 'iteration'; did you mean 'iterations'")]:
        assert main(["train", "cfr", "--config", str(config), "--set", bad]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
    assert main(["train", "cfr", "--config", str(config), "--set", "iterations=2", "--set", "eval_every=2"]) == 0
    from agents.cfr.table import load_checkpoint

    assert load_checkpoint(tmp_path / "ck.npz").iteration == 2  # --set took the place of the file's 30
    assert main(["train", "cfr", "--config", str(config), "--set", "iterations=1", "--no-resume"]) == 0
    assert load_checkpoint(tmp_path / "ck.npz").iteration == 1  # started over (a resumed run would stay at 2)
