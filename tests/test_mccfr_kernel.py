"""MCCFR on the compiled engine (training/learn/cfr/mccfr_kernel.py) with the observation keys of
agents/cfr/abstraction.py: the walk's key is the key an agent computes from the environment's observation,
abstract actions map back to the legal engine actions, the lossless walk converges towards the exact equilibrium
of the research presets (exact NashConv), runs resume bit for bit (also across table growth), bad checkpoints are
one-line errors, and the ``cfr:`` agent plays a v4 checkpoint from the observation alone."""

import dataclasses
import io
import random

import numpy as np
import pytest

from agents.base import make_agent, observation_for
from agents.cfr.abstraction import (
    KINDS,
    MAX_LEGAL,
    codes_and_ids,
    describe,
    key_base,
    key_from_observation,
    state_key,
)
from agents.cfr.table import CheckpointError, load_checkpoint
from training.learn.cfr import mccfr_kernel
from training.learn.cfr.checkpoint import save_checkpoint
from training.learn.cfr.mccfr import train_mccfr
from training.learn.cfr.mccfr_kernel import KernelMCCFR, node_key, tree_keys, tree_policy
from training.learn.cfr.runconfig import parse_config
from training.learn.cfr.solver import nash_conv, uniform_policy
from training.learn.cfr.tree import build_tree, infoset_states
from truco_env import TrucoState, actions, cards, make_config
from truco_env.encoding import encode_action_mask, encode_observation
from truco_env.fast import FastState, config_array

FULL = ["argentine", "argentine-flor", "paulista", "paulista-clean"]
#: Small research games (as tests/test_cfr.py): exact trees in well under a second.
SMALL = {"argentine-mini": {"deck_ranks": ("7",), "target_score": 2}, "paulista-mini": {"deck_ranks": ("K",)}}


class _Seat:
    """What an agent with these ``wants`` is shown (agents.base.observation_for)."""

    def __init__(self, wants=frozenset()):
        self.wants = wants


@pytest.mark.parametrize("preset, abstraction", [(p, a) for p in FULL for a in ("v4", "v5", "lossless")]
                         + [("argentine-2v2", "v5"), ("paulista-2v2", "v5")])
def test_the_walk_key_is_the_key_at_play(preset, abstraction):
    """The walk's ``node_key`` on the kernel state (single-hand rules, as the walk runs) equals the key an agent
    computes from the observation the environment shows it (reference engine, the preset's rules), for every
    decision of random hands in random match contexts; the legal codes map to exactly the legal actions, and
    one key always has the same codes."""
    rules = make_config(preset)
    walk = dataclasses.replace(rules, single_hand=True)
    cfg = config_array(rules)
    seat_view = _Seat(frozenset({"info_state"}) if abstraction == "lossless" else frozenset())
    rng = random.Random(5)
    buffers = (np.zeros(1086, np.float32), np.zeros(98, np.int8), np.zeros(MAX_LEGAL, np.int32),
               np.zeros(MAX_LEGAL, np.int32))
    history = [np.zeros(64, np.int32) for _ in range(4)]
    rows, decisions = {}, 0
    for game in range(40):
        score = [rng.randrange(rules.target_score), rng.randrange(rules.target_score)]
        ref = TrucoState.new(rules, seed=game, score=score)
        fast = FastState.new(walk, seed=game, score=score)
        hand, depth = ref.hand_index, 0
        while not ref.is_over and ref.hand_index == hand:
            seat = ref.actor
            shown = observation_for(seat_view, ref, seat)
            key = key_from_observation(shown["observation"], shown["action_mask"], cfg, abstraction,
                                       shown.get("info_state"))
            codes, ids = codes_and_ids(shown["observation"], shown["action_mask"], cfg)
            walk_key, n = node_key(fast.state_array, fast.config_array, KINDS[abstraction], *buffers,
                                   history[0], history[1], depth, history[2], history[3])
            assert walk_key == key
            assert buffers[2][:n].tolist() == codes.tolist() and buffers[3][:n].tolist() == ids.tolist()
            assert sorted(ids.tolist()) == np.flatnonzero(shown["action_mask"]).tolist()
            assert len(set(codes.tolist())) == len(codes)
            assert rows.setdefault(key, codes.tolist()) == codes.tolist()
            action = int(rng.choice(ids.tolist()))
            history[0][depth], history[1][depth] = seat, action
            depth += 1
            ref.apply(actions.action_name(action, rules.family))
            fast.apply_id(action)
            decisions += 1
    assert decisions > 150 and len(rows) > 50


@pytest.mark.parametrize("preset", ["argentine", "paulista"])
def test_v4_is_the_base_key_and_the_own_card_on_the_current_trick(preset):
    """The v4 key is the base key with the seat's own card on the current trick in bits 60-62 (its tier, 6 when
    face down, 0 before it plays), read here from the reference engine's trick; a seat that has led sees it."""
    rules = make_config(preset)
    cfg = config_array(rules)
    rng = random.Random(4)
    seen = {0: 0, "card": 0}
    for game in range(150):
        st = TrucoState.new(rules, seed=game, score=[rng.randrange(rules.target_score) for _ in range(2)])
        hand = st.hand_index
        while not st.is_over and st.hand_index == hand:
            seat, legal = st.actor, st.legal_actions()
            base = int(key_base(encode_observation(st, seat), encode_action_mask(st), cfg))
            v4, _, _ = state_key(st, seat, cfg, "v4")
            mine = [(card, covered) for s, card, covered in st.current_trick if s == seat]
            want = 0
            if mine:
                card, covered = mine[0]
                table = cards.strength_table(rules.family, st.vira, rules.deck, rules.deck_ranks)
                want = 6 if covered else 1 + sum(table[card] < bound for bound in (13, 11, 9, 6))
            assert v4 & ((1 << 60) - 1) == base and v4 >> 60 == want
            seen["card" if want else 0] += 1
            if want:
                assert "c" + "?ABCDEx"[want] in describe(v4, rules.family)
            st.apply(rng.choice(legal))
    assert seen[0] > 50 and seen["card"] > 20


@pytest.mark.parametrize("abstraction", ["v4", "lossless"])
@pytest.mark.parametrize("preset", sorted(SMALL))
def test_every_key_of_the_walk_is_a_decision_key_of_the_game(preset, abstraction):
    """On a small research game every decision is in its exact tree: each key the walk stored is the play-time
    key of some tree decision, with the same legal codes. Lossless keys tell one seat's information sets apart
    (a seat-0 set and its mirror at seat 1, the same cards and history relative to the seat, share a key: both
    seats play from one table)."""
    rules = make_config(preset, **SMALL[preset])
    tree = build_tree(rules)
    cfg = config_array(rules)
    keys, per_seat = {}, ({}, {})
    for info, state in enumerate(infoset_states(tree)):
        key, codes, _ = state_key(state, state.actor, cfg, abstraction)
        keys.setdefault(str(key), codes.tolist())
        per_seat[int(tree.infoset_player[info])].setdefault(key, info)
    if abstraction == "lossless":
        assert [len(p) for p in per_seat] == [tree.infosets_of(0), tree.infosets_of(1)]
    solver = KernelMCCFR(rules, seed=1, abstraction=abstraction)
    solver.iterate(3000)
    ckpt = solver.to_checkpoint(preset)
    assert 0.5 * len(keys) < len(ckpt.keys) <= len(keys)
    for i, key in enumerate(ckpt.keys):
        assert keys[key] == ckpt.slot_action[ckpt.slot_start[i]:ckpt.slot_start[i + 1]].tolist()


def _nash_conv(tree, keys, solver, preset):
    return nash_conv(tree, tree_policy(tree, solver.to_checkpoint(preset), keys))


@pytest.mark.parametrize("preset", sorted(SMALL))
def test_lossless_walk_converges_on_small_research_games(preset):
    rules = make_config(preset, **SMALL[preset])
    tree = build_tree(rules)
    keys = tree_keys(tree)
    uniform = nash_conv(tree, uniform_policy(tree))
    solver = KernelMCCFR(rules, seed=0, abstraction="lossless")
    solver.iterate(1000)
    early = _nash_conv(tree, keys, solver, preset)
    solver.iterate(9000)
    late = _nash_conv(tree, keys, solver, preset)
    assert late < 0.5 * early and late < 0.06 * uniform


@pytest.mark.slow
@pytest.mark.parametrize("preset, iterations", [("argentine-mini", 3000), ("paulista-mini", 10000)])
def test_the_lossless_walk_approaches_the_equilibrium_of_the_research_presets(preset, iterations):
    """After ``iterations`` the lossless walk's exact NashConv is below 80% of the uniform strategy's; continued to
    300,000 iterations, below 5%. (Its first oracle, the retired Python walk, agreed within sampling noise.)"""
    rules = make_config(preset)
    tree = build_tree(rules)
    keys = tree_keys(tree)
    uniform = nash_conv(tree, uniform_policy(tree))
    solver = KernelMCCFR(rules, seed=0, abstraction="lossless")
    solver.iterate(iterations)
    assert _nash_conv(tree, keys, solver, preset) < 0.8 * uniform
    solver.iterate(300_000 - iterations)
    assert _nash_conv(tree, keys, solver, preset) < 0.05 * uniform


# --- training runs, checkpoints, resume -------------------------------------------------------------------------

def _cfg(tmp_path, preset="paulista", **extra):
    data = {"trainer": "mccfr", "preset": preset, "iterations": 2000, "checkpoint": str(tmp_path / "m.npz"),
            "logdir": None, "progress": False, "log_every": 1000, "seed": 3, "abstraction": "v4"}
    data.update(extra)
    return parse_config(data)


def _same(a, b):
    assert a.iteration == b.iteration and a.keys == b.keys
    assert np.array_equal(a.slot_start, b.slot_start) and np.array_equal(a.slot_action, b.slot_action)
    assert np.array_equal(a.regrets, b.regrets) and np.array_equal(a.cumulative, b.cumulative)
    assert np.array_equal(a.extra["rng_state"], b.extra["rng_state"])


@pytest.mark.parametrize("utility", ["points", "match_equity"])
def test_resume_equals_uninterrupted(tmp_path, utility):
    a = _cfg(tmp_path / "a", utility=utility)
    summary = train_mccfr(a, out=io.StringIO())
    assert summary["iterations"] == 2000 and summary["infosets"] > 1000
    b = _cfg(tmp_path / "b", utility=utility)
    train_mccfr(b, out=io.StringIO(), max_new_iterations=1234)
    assert load_checkpoint(b.checkpoint).iteration == 1234
    train_mccfr(b, out=io.StringIO())
    ca, cb = load_checkpoint(a.checkpoint), load_checkpoint(b.checkpoint)
    _same(ca, cb)
    assert ca.meta["abstraction"] == "v4" and ca.meta["key"] == "abstraction-v4"
    assert ca.meta["solver"]["engine"] == "kernel"


def test_table_growth_changes_nothing(monkeypatch):
    """Tables that start small and double between iterations give the tables of roomy ones, bit for bit."""
    rules = make_config("paulista")
    roomy = KernelMCCFR(rules, seed=4)
    roomy.iterate(2000)
    monkeypatch.setattr(mccfr_kernel, "MARGIN", 1024)  # more than one Paulista iteration visits nodes (~510)
    small = KernelMCCFR(rules, seed=4, capacity=1)
    start = len(small.inf_key)
    small.iterate(2000)
    assert len(small.inf_key) >= 4 * start  # it grew at least twice
    _same(roomy.to_checkpoint("paulista"), small.to_checkpoint("paulista"))


def test_checkpoint_of_another_run_is_a_one_line_error(tmp_path):
    train_mccfr(_cfg(tmp_path, iterations=200), out=io.StringIO())
    path = tmp_path / "m.npz"
    for other, message in ((_cfg(tmp_path, preset="argentine"), "other rules"),
                           (_cfg(tmp_path, abstraction="v5"), "solver settings differ"),
                           (_cfg(tmp_path, abstraction="lossless"), "solver settings differ"),
                           (_cfg(tmp_path, utility="match_equity"), "solver settings differ")):
        with pytest.raises(CheckpointError, match=message) as err:
            train_mccfr(other, out=io.StringIO())
        assert "\n" not in str(err.value)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])  # truncated
    with pytest.raises(CheckpointError, match="corrupt") as err:
        train_mccfr(_cfg(tmp_path), out=io.StringIO())
    assert "\n" not in str(err.value)


def test_restore_refuses_tables_that_are_not_the_kernels(tmp_path):
    solver = KernelMCCFR(make_config("paulista"), seed=0)
    solver.iterate(50)
    ckpt = solver.to_checkpoint("paulista")
    for change, message in ((lambda c: c.extra.update(rng_state=np.zeros(625, np.int64)), "generator state"),
                            (lambda c: c.keys.__setitem__(0, "m|00|ABC"), "integer keys"),
                            (lambda c: c.keys.__setitem__(1, c.keys[0]), "one key twice")):
        bad = solver.to_checkpoint("paulista")
        change(bad)
        with pytest.raises(CheckpointError, match=message):
            KernelMCCFR(make_config("paulista"), seed=0).restore(bad)
    fresh = KernelMCCFR(make_config("paulista"), seed=9)
    fresh.restore(ckpt)
    _same(fresh.to_checkpoint("paulista"), ckpt)


@pytest.mark.parametrize("data, message", [
    ({"abstraction": "v6"}, "abstraction"),
    ({"preset": "argentine-2v2", "abstraction": "v4"}, "2v2 ones with abstraction v5"),
    ({"preset": "argentine-3v3", "abstraction": "v5"}, "has 6 players"),
    ({"opponent_model": {"agent": "heuristic"}}, "unknown option 'opponent_model'"),
])
def test_config_errors(tmp_path, data, message):
    with pytest.raises(ValueError, match=message) as err:
        _cfg(tmp_path, **data)
    assert "\n" not in str(err.value).strip()


def test_agent_plays_a_v4_checkpoint_from_the_observation_alone(tmp_path):
    cfg = _cfg(tmp_path, preset="argentine", iterations=2000)
    train_mccfr(cfg, out=io.StringIO())
    agent = make_agent(f"cfr:{cfg.checkpoint}")
    assert agent.wants == frozenset() and agent.presets == ("argentine",)
    agent.seed(0)
    rules = make_config("argentine")
    rng = random.Random(0)
    for seed in range(3):
        st = FastState.new(rules, seed=seed)
        while not st.is_over:
            if st.actor == 0:
                action = agent.act(observation_for(agent, st, 0))
                assert st.legal_mask()[action]
                st.apply_id(action)
            else:
                st.apply_id(rng.choice(st.legal_ids()))
        assert st._ref is None  # the reference engine was never needed
    assert agent.lookups > 30 and agent.misses < agent.lookups / 2


def test_v5_is_v4_in_1v1_and_reads_the_whole_trick_in_team_play():
    """1v1: the v5 key is the v4 key. 2v2: two decisions that v4 cannot tell apart (the same own cards, the same
    card of the next seat on the trick) get different v5 keys when the best card on the trick is the partner's in
    one and an opponent's in the other."""
    from agents.cfr.abstraction import abstract_key

    rules = make_config("argentine")
    cfg = config_array(rules)
    for seed in range(20):
        st = FastState.new(rules, seed=seed)
        obs, mask = st.encode_observation(st.actor, np.zeros(1086, np.float32)), st.legal_mask()
        assert abstract_key(obs, mask, cfg, KINDS["v5"]) == abstract_key(obs, mask, cfg, KINDS["v4"])
    team = make_config("argentine-2v2")
    cfg = config_array(team)
    by_v4: dict[int, set[int]] = {}
    rng = random.Random(1)
    for seed in range(300):
        st = FastState.new(team, seed=seed)
        while not st.is_over and st.hand_index == 0:
            obs, mask = st.encode_observation(st.actor, np.zeros(1086, np.float32)), st.legal_mask()
            by_v4.setdefault(int(abstract_key(obs, mask, cfg, KINDS["v4"])), set()).add(
                int(abstract_key(obs, mask, cfg, KINDS["v5"])))
            assert abstract_key(obs, mask, cfg, KINDS["v5"]) >= 0
            st.apply_id(rng.choice(st.legal_ids()))
    assert sum(len(v5) > 1 for v5 in by_v4.values()) > 20  # v4 merges what v5 tells apart


def test_a_2v2_blueprint_trains_and_each_seat_plays_it_from_its_own_observation(tmp_path):
    """Self-play MCCFR on argentine-2v2 with v5: every seat traverses in turn, partners keep their own rows (one
    table, keyed by what each sees), and the cfr agent plays all four seats from the observation alone."""
    cfg = _cfg(tmp_path, preset="argentine-2v2", abstraction="v5", iterations=2000)
    summary = train_mccfr(cfg, out=io.StringIO())
    assert summary["iterations"] == 2000 and summary["infosets"] > 1000
    rules = make_config("argentine-2v2")
    agents = [make_agent(f"cfr:{cfg.checkpoint}") for _ in range(4)]
    assert agents[0].wants == frozenset() and agents[0].presets == ("argentine-2v2",)
    for seat, agent in enumerate(agents):
        agent.seed(seat)
        agent.reset(seat)
    for seed in range(2):
        st = FastState.new(rules, seed=seed)
        while not st.is_over:
            action = agents[st.actor].act(observation_for(agents[st.actor], st, st.actor))
            assert st.legal_mask()[action]
            st.apply_id(action)
    assert sum(a.lookups for a in agents) > 60 and sum(a.misses for a in agents) < sum(a.lookups for a in agents)


def test_a_2v2_run_resumes_bit_for_bit(tmp_path):
    a = _cfg(tmp_path / "a", preset="paulista-2v2", abstraction="v5", utility="match_equity")
    train_mccfr(a, out=io.StringIO())
    b = _cfg(tmp_path / "b", preset="paulista-2v2", abstraction="v5", utility="match_equity")
    train_mccfr(b, out=io.StringIO(), max_new_iterations=777)
    train_mccfr(b, out=io.StringIO())
    _same(load_checkpoint(a.checkpoint), load_checkpoint(b.checkpoint))


def test_lossless_agent_reads_the_history(tmp_path):
    """A lossless checkpoint plays from the observation and the information-state tensor; on a small game the
    walk has reached (nearly) every information set, so the agent finds (nearly) every decision's key."""
    preset = "paulista-mini"
    rules = make_config(preset, **SMALL[preset])
    solver = KernelMCCFR(rules, seed=0, abstraction="lossless")
    solver.iterate(5000)
    path = tmp_path / "l.npz"
    save_checkpoint(path, solver.to_checkpoint(preset))
    agent = make_agent(f"cfr:{path}")
    assert agent.wants == frozenset({"info_state"})
    for seed in range(30):
        st = TrucoState.new(rules, seed=seed)
        while not st.is_over:
            action = agent.act(observation_for(agent, st, st.actor))
            st.apply(actions.action_name(action, rules.family))
    assert agent.lookups > 60 and agent.misses <= agent.lookups // 50


def test_a_finished_blueprint_ships_play_only_and_plays_as_its_checkpoint(tmp_path, monkeypatch):
    """truco ship CONFIG.yaml: the shipped table plays exactly the run's average strategy, is found
    by preset name (cfr:<preset>), refuses to be trained on, and an unfinished run does not ship."""
    import yaml

    from agents.cfr import agent as cfr_agent
    from agents.cfr.table import StrategyTable
    from training.cli import main as cli
    from training.learn.cfr.checkpoint import check_compatible

    config = tmp_path / "blueprint.yaml"
    data = {"trainer": "mccfr", "preset": "paulista", "iterations": 40, "abstraction": "v4",
            "checkpoint": str(tmp_path / "run" / "ck.npz"), "logdir": None, "progress": False, "seed": 1}
    config.write_text(yaml.safe_dump(data))
    train_mccfr(parse_config(data), out=io.StringIO(), max_new_iterations=30)
    monkeypatch.setattr(cfr_agent, "SHIPPED_DIR", str(tmp_path / "policies"))
    monkeypatch.setattr("agents.base.SHIPPED_DIR", str(tmp_path / "policies"))
    assert cli(["ship", str(config)]) == 2  # 30 of 40 iterations: not shipped
    train_mccfr(parse_config(data), out=io.StringIO())
    assert cli(["ship", str(config)]) == 0
    shipped = tmp_path / "policies" / "cfr_paulista.npz"
    run, play = StrategyTable.load(data["checkpoint"]), StrategyTable.load(shipped)
    assert len(play) == len(run) > 0
    for key in run.keys():  # noqa: SIM118  (a StrategyTable, not a dict: it has no __iter__)
        (a, p), (b, q) = run.lookup(key), play.lookup(key)
        assert np.array_equal(a, b) and np.allclose(p, q, atol=1e-12)
    assert play.meta["shipped"]["config_hash"] and play.meta["play_only"] is True
    assert cfr_agent.shipped_blueprints() == ["paulista"]
    assert make_agent("cfr:paulista").table.meta["iteration"] == 40
    with pytest.raises(CheckpointError, match="play-only"):
        check_compatible(load_checkpoint(shipped), kind="mccfr", rules=play.meta["rules"])
