"""The compiled heuristic (agents.heuristic.HeuristicAgent) decides exactly as its readable reference
(agents.heuristic_reference.ReferenceHeuristic): the same action at every decision and the same numbers drawn.

Matches run on the vector env with one compiled agent per table and seat and, beside each, a reference agent
seeded alike and shown the same observation; a share of the moves actually played is a random legal action, so
the agents also meet states they would not steer into (odd calls, folds, covered cards). Alone, the pinned
digests of tests/test_heuristic_exact.py cover 4,200 decisions; this covers more rule options and the states in
between, and ``act_together`` (one call for many tables) against one decision at a time."""
from __future__ import annotations

import numpy as np
import pytest

from agents import _heuristic_kernel, heuristic
from agents.heuristic import HeuristicAgent
from agents.heuristic_reference import ReferenceHeuristic
from agents.view import decode
from truco_env import TrucoConfig, TrucoState
from truco_env.actions import action_name
from truco_env.encoding import encode_action_mask, encode_observation
from truco_env.vector import VectorEnv

TABLES = 4

#: (preset, config overrides, agent parameters)
CASES = [
    ("argentine", {}, {}),
    ("argentine", {"falta_envido": "whole_match", "target_score": 15}, {"bluff": 0.4, "samples": 16}),
    ("argentine-flor", {"envido_tie": "mano_team"}, {"respect": 1.0}),
    ("argentine-2v2", {"flor": True, "falta_envido": "malas_match", "malas_buenas": True}, {"bluff": 0.3}),
    ("argentine-3v3", {"pica_pica": True}, {"samples": 12}),
    ("paulista", {"mao_de_ferro_blind": True}, {"edge": 0.0}),
    ("paulista-2v2", {"covered_card": True, "lead_after_tie": "next_after_leader", "all_tricks_tied": "dealer_team"},
     {"bluff": 0.5}),
    ("paulista-clean", {"partner_tie_wins_trick": False}, {}),
    ("argentine-mini", {}, {"bluff": 0.2}),
    ("paulista-mini", {}, {}),
    ("argentine-2v2-senas", {"sena_catch": 0.6}, {}),  # signals made and read (docs/rules.md §3.13)
    ("argentine-3v3", {"senas": True, "sena_catch": 1.0, "flor": True}, {"bluff": 0.3}),
    ("argentine-2v2-senas", {"sena_code": "free"}, {"samples": 16}),
]


def _legal_random(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def _run(preset, overrides, params, decisions, seed, deviate=0.25):
    rng = np.random.default_rng(seed)
    env = VectorEnv(preset, num_envs=TABLES, seed=int(rng.integers(2 ** 62)), reward="points", **overrides)
    fast: dict[tuple[int, int], HeuristicAgent] = {}
    reference: dict[tuple[int, int], ReferenceHeuristic] = {}
    obs, mask, actor = env.reset()
    count = 0
    try:
        while count < decisions:
            actions = np.zeros(env.num_envs, dtype=np.int64)
            for i in range(env.num_envs):
                key = (i, int(actor[i]))
                if key not in fast:
                    agent_seed = int(rng.integers(2 ** 31))
                    fast[key] = HeuristicAgent(**params, seed=agent_seed)
                    reference[key] = ReferenceHeuristic(**params, seed=agent_seed)
                view = {"observation": obs[i], "action_mask": mask[i]}
                got, want = fast[key].act(view), reference[key].act(view)
                assert got == want, (f"{preset} {overrides} {params}: decision {count} (table {i}, seat {key[1]}): "
                                     f"compiled {got}, reference {want}")
                actions[i] = _legal_random(mask[i], rng) if rng.random() < deviate else got
                count += 1
            obs, mask, _, actor, done = env.step(actions)
            for i in np.flatnonzero(done):
                for seat in range(env.num_players):
                    if (i, seat) in fast:
                        fast[(i, seat)].reset(seat)
                        reference[(i, seat)].reset(seat)
    finally:
        env.close()
    for key, agent in fast.items():
        assert agent._rng.getstate() == reference[key]._rng.getstate(), key


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0] + "".join(f"-{k}={v}" for k, v in c[1].items()))
def test_compiled_decisions_equal_the_reference(case):
    preset, overrides, params = case
    _run(preset, overrides, params, decisions=160, seed=11)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0] + "".join(f"-{k}={v}" for k, v in c[1].items()))
def test_compiled_decisions_equal_the_reference_long(case):
    preset, overrides, params = case
    for seed in range(3):
        _run(preset, overrides, params, decisions=2000, seed=100 + seed)


@pytest.mark.parametrize("preset", ["argentine-flor", "paulista-2v2", "argentine-3v3"])
def test_act_together_equals_one_decision_at_a_time(preset):
    """One compiled call for every table decides as each table's agent does alone, generator and match memory
    included (the memory grows past its first size over the long matches here)."""
    tables = 6
    env = VectorEnv(preset, num_envs=tables, seed=5, reward="points")
    rng = np.random.default_rng(3)
    alone: dict[tuple[int, int], HeuristicAgent] = {}
    together: dict[tuple[int, int], HeuristicAgent] = {}
    obs, mask, actor = env.reset()
    try:
        for _ in range(150):
            keys = [(i, int(actor[i])) for i in range(tables)]
            for key in keys:
                if key not in alone:
                    seed = int(rng.integers(2 ** 31))
                    alone[key] = HeuristicAgent(seed=seed, bluff=0.3)
                    together[key] = HeuristicAgent(seed=seed, bluff=0.3)
            one_by_one = [alone[key].act({"observation": obs[i], "action_mask": mask[i]})
                          for i, key in enumerate(keys)]
            batch = HeuristicAgent.act_together([together[key] for key in keys], obs, mask)
            assert batch.tolist() == one_by_one
            actions = np.array([_legal_random(mask[i], rng) if rng.random() < 0.2 else a
                                for i, a in enumerate(one_by_one)])
            obs, mask, _, actor, done = env.step(actions)
            for i in np.flatnonzero(done):
                for seat in range(env.num_players):
                    if (i, seat) in alone:
                        alone[(i, seat)].reset(seat)
                        together[(i, seat)].reset(seat)
    finally:
        env.close()
    for key, agent in alone.items():
        assert agent._rng.getstate() == together[key]._rng.getstate()
        assert np.array_equal(agent._memo, together[key]._memo)


def test_memory_grows_without_losing_hands():
    agent = HeuristicAgent(seed=1)
    env = VectorEnv("argentine", num_envs=1, seed=2, reward="points")
    obs, mask, _ = env.reset()
    start = agent._memo.shape[1]
    try:
        while agent._memo[0, 0] * 2 + 1 < start:  # until the first size is full: the next hand grows it
            action = agent.act({"observation": obs[0], "action_mask": mask[0]})
            obs, mask, *_ = env.step(np.array([action]))
    finally:
        env.close()
    hands = int(agent._memo[0, 0])
    keys = agent._memo[0, 1:1 + 2 * hands:2].copy()
    agent._room()
    assert agent._memo.shape[1] > start
    assert agent._memo[0, 0] == hands and np.array_equal(agent._memo[0, 1:1 + 2 * hands:2], keys)


def test_no_legal_action_is_a_clear_error():
    agent = HeuristicAgent(seed=1)
    env = VectorEnv("argentine", num_envs=2, seed=2)
    obs, mask, _ = env.reset()
    env.close()
    with pytest.raises(ValueError, match="no legal action"):
        agent.act({"observation": obs[0], "action_mask": np.zeros_like(mask[0])})
    with pytest.raises(ValueError, match="no legal action"):
        HeuristicAgent.act_together([agent, HeuristicAgent(seed=2)], obs, np.zeros_like(mask))
    with pytest.raises(ValueError, match="2 agents for 1 observations"):
        HeuristicAgent.act_together([agent, agent], obs[:1], mask[:1])


def test_kernel_constants_are_the_reference_constants():
    """The kernel keeps its own copies (a compiled cache must not hold stale values from another module)."""
    for name in ("FOLD_SHARE", "RERAISE_SHARE", "ENVIDO_SAMPLES", "FALTA_FOLD", "FALTA_MIN", "BLUFF_BELOW"):
        assert getattr(_heuristic_kernel, name) == getattr(heuristic, name), name
    flor = heuristic.FLOR_VALUES
    k = _heuristic_kernel
    assert (k.FLOR_ACHICO, k.FLOR_CF_NOQ, k.FLOR_RESTO_DIRECT, k.FLOR_RESTO_AFTER, k.FLOR_PER, k.FLOR_CF_QUIERO) == (
        flor["achico"], flor["contraflor_no_quiero"], flor["resto_direct"], flor["resto_after"], flor["per_flor"],
        flor["contraflor_quiero"])


def test_act_many_mixes_kinds_and_decides_as_one_at_a_time():
    """agents.act_many groups the rows by agent class: heuristics in one call, the others one by one."""
    from agents import act_many, make_agent

    env = VectorEnv("argentine-2v2", num_envs=6, seed=9)
    obs, mask, _ = env.reset()
    env.close()
    specs = ["heuristic", "random", "threshold", "heuristic:bluff=0.5", "maniac", "heuristic"]
    alone = [make_agent(spec) for spec in specs]
    together = [make_agent(spec) for spec in specs]
    for seed, (a, b) in enumerate(zip(alone, together, strict=True)):
        a.seed(seed)
        b.seed(seed)
    expected = [a.act({"observation": obs[i], "action_mask": mask[i]}) for i, a in enumerate(alone)]
    assert act_many(together, obs, mask).tolist() == expected


@pytest.mark.parametrize("fields,params", [
    ({}, {}), ({"num_players": 4, "plain_flor_base": 0, "falta_envido": "leader_to_buenas"}, {"bluff": 0.3}),
    ({"num_players": 6, "flor": False, "falta_envido": "winner_to_buenas"}, {"samples": 16}),
    ({"envido_refusal": "previous_sum_plus_one", "falta_adds_chain": True, "falta_envido": "winner_to_buenas"}, {}),
    ({"num_players": 4, "flor_before_answer": "refuse_unsung", "trick_tie_to_mano": True}, {}),
    ({"trick_tie_to_mano": True}, {"samples": 16})],
    ids=["1v1", "2v2-plain0-leader_to_buenas", "3v3-noflor-winner_to_buenas", "1v1-pytruco-envido-chain",
         "2v2-pytruco-flor-answers", "1v1-tie-to-mano"])
def test_compiled_decisions_equal_the_reference_in_uruguayan_truco(fields, params):
    """The third family through the reference engine (its presets come with every layer): piezas in the tricks, the
    muestra's envido and flor in the sampled deals, the target of 40 in the match equity."""
    rng = np.random.default_rng(5)
    decisions = 0
    while decisions < 120:  # whole matches (a falta envido often ends one early)
        state = TrucoState.new(TrucoConfig(family="uruguayan", **fields), seed=int(rng.integers(2 ** 31)))
        fast: dict[int, HeuristicAgent] = {}
        reference: dict[int, ReferenceHeuristic] = {}
        while not state.is_over:
            seat = state.actor
            if seat not in fast:
                agent_seed = int(rng.integers(2 ** 31))
                fast[seat] = HeuristicAgent(**params, seed=agent_seed)
                reference[seat] = ReferenceHeuristic(**params, seed=agent_seed)
            view = {"observation": encode_observation(state, seat), "action_mask": encode_action_mask(state)}
            got, want = fast[seat].act(view), reference[seat].act(view)
            assert got == want, f"{fields} decision {decisions}: compiled {got}, reference {want}"
            action = _legal_random(view["action_mask"], rng) if rng.random() < 0.25 else got
            state.apply(action_name(action, "uruguayan"))
            decisions += 1
        for seat, agent in fast.items():
            assert agent._rng.getstate() == reference[seat]._rng.getstate(), seat


@pytest.mark.parametrize("mode", ["malas_match", "winner_to_buenas", "leader_to_buenas", "leader_needs"])
def test_the_falta_the_heuristic_prices_is_the_engines(mode):
    """The falta a Uruguayan heuristic expects, compiled and reference, equals what the engine credits, at every
    score (a branch the decisions above reach too rarely to pin it)."""
    config = TrucoConfig(family="uruguayan", falta_envido=mode)
    reference = ReferenceHeuristic(seed=0)
    vw = np.empty(_heuristic_kernel.VIEW_SIZE, dtype=np.int64)
    for a, b in [(0, 0), (10, 5), (5, 10), (19, 3), (20, 7), (7, 20), (25, 30), (39, 0)]:
        for own_wins in (True, False):
            state = TrucoState.new(config, score=[a, b], deal={"hands": [["7c", "6c", "3e"], ["1e", "1b", "7o"]],
                                                               "vira": "12e", "dealer": 1})
            view = {"observation": encode_observation(state, 0), "action_mask": encode_action_mask(state)}
            _heuristic_kernel._decode(view["observation"], view["action_mask"], heuristic._TAB, vw)
            want = state._falta(0 if own_wins else 1)  # what the engine would credit the seat's team or the other
            assert reference._falta(decode(view), own_wins) == want, (mode, a, b, own_wins)
            assert _heuristic_kernel._falta(vw, own_wins) == want, (mode, a, b, own_wins)
