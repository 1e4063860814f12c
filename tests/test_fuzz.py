"""Seeded fuzzing of the environments over random presets and random valid values of every rules field
(docs/rules.md §5), every episode, reward and illegal_action mode, random legal play and now and then an
illegal action. Each case checks: nothing crashes; the action mask is the rules engine's legal set; every
observation is finite and within the ranges that truco_env/encoding.py documents (``FRACTION_FIELDS``); rewards
are zero-sum and shared by a team; an illegal action raises and changes nothing, or forfeits the match; the
match record replays to the same record; the same seed plays the same match. The default suite runs a few
hundred cases; ``-m slow`` runs many more."""

import dataclasses
import json
import math
import random

import numpy as np
import pytest
from test_env import check_mask  # mask == the rules engine's legal set, agent == the seat to act

import truco_env
from truco_env import PRESETS, cards, make_config
from truco_env.aec import EPISODES, ILLEGAL, REWARDS
from truco_env.config import (
    ARGENTINE_ONLY,
    CHOICES,
    DEFAULT_FLOR_VALUES,
    FIELD_NAMES,
    PAULISTA_ONLY,
    SENAS_FIELDS,
    URUGUAYAN_FALTAS,
    URUGUAYAN_ONLY,
    TrucoConfig,
)
from truco_env.encoding import (
    FRACTION_FIELDS,
    OBS_OFFSETS,
    OBSERVATION_FIELDS,
    OBSERVATION_SIZE,
    OBSERVATION_SIZE_URUGUAYAN,
    SENAS_SIZE,
    URUGUAYAN_OFFSETS,
)
from truco_env.records import replay_record
from truco_env.vector import VectorEnv

CASES = 300
SLOW_CASES = 5000
ILLEGAL_RATE = 0.01  # per decision: most matches end by the rules, a few by a forfeit or see a refused action
TARGETS = (1, 2, 3, 5, 9, 12, 15, 30, 33)  # 33: the observation's target field is clipped to 1
BOOLS = tuple(f.name for f in dataclasses.fields(TrucoConfig) if f.type == "bool" or f.name == "flor")


# ---------------------------------------------------------------------------------------------------------
# Random rules


def draw_rules(rng: random.Random, preset: str) -> dict:
    """Overrides for ``preset``: each field of its family drawn with probability 1/2 from its valid values
    (fields of the other family keep their defaults, as the config requires); valid by construction."""
    base = PRESETS[preset]
    foreign = {cards.ARGENTINE: set(PAULISTA_ONLY) | set(URUGUAYAN_ONLY),
               cards.PAULISTA: set(ARGENTINE_ONLY) | set(URUGUAYAN_ONLY),
               cards.URUGUAYAN: set(PAULISTA_ONLY) | set(SENAS_FIELDS)}[base.family]
    drawn: dict = {}

    def value(name):
        return drawn.get(name, getattr(base, name))

    def draw_ranks():
        ranks = cards.PAULISTA_DECK_RANKS[value("deck")] if base.family == cards.PAULISTA else cards.SPANISH_RANKS
        needed = value("hand_size") * value("num_players") + (base.family in cards.TURNED_CARD_FAMILIES)
        return tuple(rng.sample(ranks, rng.randint(math.ceil(needed / 4), len(ranks))))

    draws = {  # in dependency order: deck_ranks and pica_pica read fields drawn before them
        "num_players": lambda: rng.choice((2, 4) if base.family == cards.PAULISTA else (2, 4, 6)),
        "target_score": lambda: rng.choice(TARGETS),
        "malas_buenas": lambda: rng.choice((None, True, False)),
        "flor_values": lambda: {key: rng.randrange(10) for key in DEFAULT_FLOR_VALUES},
        "hand_size": lambda: rng.randint(1, 3),
        **{name: (lambda name=name: rng.choice(CHOICES[name])) for name in CHOICES
           if name not in ("family", "sena_code", "falta_envido")},
        # the readings to the end of the malas are Uruguayan only (rules.md §8.5)
        "falta_envido": lambda: rng.choice([f for f in CHOICES["falta_envido"]
                                            if base.family == cards.URUGUAYAN or f not in URUGUAYAN_FALTAS]),
        **{name: (lambda: rng.random() < 0.5) for name in BOOLS if name not in ("pica_pica", "senas")},
        "pica_pica": lambda: value("num_players") == 6 and rng.random() < 0.5,
        "deck_ranks": lambda: None if rng.random() < 0.3 else draw_ranks(),
        "senas": lambda: value("num_players") > 2 and rng.random() < 0.5,
        "sena_catch": lambda: rng.choice((0.0, 0.25, 0.7, 1.0)),
        "sena_code": lambda: rng.choice(CHOICES["sena_code"]),
        "plain_flor_base": lambda: rng.choice((0, 20)),
        "envido_refusal": lambda: rng.choice(CHOICES["envido_refusal"]),
        "pica_pica_until": lambda: rng.choice(CHOICES["pica_pica_until"]),
        "flor_before_answer": lambda: rng.choice(CHOICES["flor_before_answer"]),
    }
    assert set(draws) | {"family"} == set(FIELD_NAMES), "a rules field the fuzzer does not draw"
    for name, draw in draws.items():
        if name not in foreign and rng.random() < 0.5:
            drawn[name] = draw()
    if value("pica_pica") and value("num_players") != 6:
        drawn["pica_pica"] = False
    if not value("pica_pica"):  # when duels stop matters only with duels
        drawn["pica_pica_until"] = "end_of_malas"
    if value("senas") and value("num_players") == 2:
        drawn["senas"] = False
    if value("flor_scoring") != "table":  # pytruco's flor scoring has no table (rules.md §8.9)
        drawn["flor_values"] = dict(DEFAULT_FLOR_VALUES)
    if not value("senas"):  # the señas fields keep their defaults without señas (a señas preset sets them)
        for name in SENAS_FIELDS[1:]:
            drawn[name] = getattr(TrucoConfig, name)
    ranks = value("deck_ranks")
    if ranks is not None:  # a preset's own small deck may no longer fit the drawn players, cards or deck
        family_ranks = cards.PAULISTA_DECK_RANKS[value("deck")] if base.family == cards.PAULISTA else cards.SPANISH_RANKS
        needed = value("hand_size") * value("num_players") + (base.family in cards.TURNED_CARD_FAMILIES)
        if 4 * len(ranks) < needed or not set(ranks) <= set(family_ranks):
            drawn["deck_ranks"] = draw_ranks()
    make_config(preset, **drawn)  # every draw is valid: a ValueError here is a bug in the config or here
    return drawn


# ---------------------------------------------------------------------------------------------------------
# Checks


ONE_HOT = [name for name, _, meaning in OBSERVATION_FIELDS if meaning.startswith("one-hot")]
FLAGS = np.ones(OBSERVATION_SIZE + SENAS_SIZE, dtype=bool)  # the señas block holds flags only
FLAGS_URUGUAYAN = np.ones(OBSERVATION_SIZE_URUGUAYAN, dtype=bool)  # ... and the Uruguayan block, but its target
for _name in FRACTION_FIELDS:
    for _flags, _offsets in ((FLAGS, OBS_OFFSETS), (FLAGS_URUGUAYAN, {**OBS_OFFSETS, **URUGUAYAN_OFFSETS})):
        if _name in _offsets:
            _flags[slice(*_offsets[_name])] = False


def check_observation(obs: np.ndarray) -> None:
    """The ranges of truco_env/encoding.py: all in [0, 1], flags 0 or 1, one-hot fields at most one 1."""
    assert obs.dtype == np.float32 and obs.shape in ((OBSERVATION_SIZE,), (OBSERVATION_SIZE + SENAS_SIZE,),
                                                     (OBSERVATION_SIZE_URUGUAYAN,))
    assert np.isfinite(obs).all() and obs.min() >= 0.0 and obs.max() <= 1.0
    flags = obs[FLAGS_URUGUAYAN if len(obs) == OBSERVATION_SIZE_URUGUAYAN else FLAGS[:len(obs)]]
    assert ((flags == 0.0) | (flags == 1.0)).all(), "a flag field holds a fraction"
    for name in ONE_HOT:
        assert obs[slice(*OBS_OFFSETS[name])].sum() <= 1.0, f"one-hot field {name} has several ones"


def check_replay(record: dict) -> None:
    replayed = replay_record(json.loads(json.dumps(record)))
    assert replayed.match_record(include_legal=any(len(a) == 3 for h in record["hands"] for a in h["actions"])) \
        == record


def team_of(agent: str) -> int:
    return int(agent.split("_")[1]) % 2


# ---------------------------------------------------------------------------------------------------------
# One case: a match through the AEC env


def fuzz_case(case: int) -> dict:
    """Play one random match (with every check above); returns its record."""
    rng = random.Random(case)
    preset = rng.choice(sorted(PRESETS))
    rules = draw_rules(rng, preset)
    episode, reward, illegal_mode = rng.choice(EPISODES), rng.choice(REWARDS), rng.choice(ILLEGAL)
    env = truco_env.env(preset, episode=episode, reward=reward, illegal_action=illegal_mode, **rules)
    raw = env.unwrapped
    env.reset(seed=case)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    forfeit = None
    decisions = 0
    while True:
        while env.agents:  # one episode
            agent = env.agent_selection
            obs, reward_now, terminated, truncated, _ = env.last()
            totals[agent] += reward_now
            if terminated or truncated:
                env.step(None)
                continue
            check_mask(env, agent, obs)  # the mask is the engine's legal set; the agent is the seat to act
            check_observation(obs["observation"])
            decisions += 1
            if decisions % 7 == 0:  # the others see the same ranges and no legal action
                for other in env.agents:
                    if other != agent:
                        seen = raw.observe(other)
                        check_observation(seen["observation"])
                        assert not seen["action_mask"].any()
                state = raw.state()
                assert np.isfinite(state).all() and state.min() >= 0.0 and state.max() <= 1.0
            mask = obs["action_mask"]
            if rng.random() < ILLEGAL_RATE:
                bad = rng.choice(np.flatnonzero(mask == 0).tolist())
                if illegal_mode == "raise":
                    before = raw.match_record(include_legal=True), dict(raw._cumulative_rewards)
                    with pytest.raises(ValueError, match="legal actions") as err:
                        env.step(bad)
                    assert "\n" not in str(err.value)
                    assert (raw.match_record(include_legal=True), raw._cumulative_rewards) == before
                else:
                    env.step(bad)
                    forfeit = team_of(agent)
                    assert all(env.terminations.values())
                    assert all(env.rewards[a] == (-1.0 if team_of(a) == forfeit else 1.0) for a in env.agents)
                    continue
            env.step(int(rng.choice(np.flatnonzero(mask).tolist())))
        game = raw.game
        if forfeit is not None or game.is_over:
            break
        assert episode == "hand"
        hand = game.hand_index
        env.reset()  # the next hand of the same match
        assert raw.game.hand_index == hand and raw.game.score == game.score
    for team in (0, 1):
        shares = {totals[a] for a in totals if team_of(a) == team}
        assert len(shares) == 1, f"the agents of team {team} got different rewards: {totals}"
    team0 = totals["player_0"]
    assert team0 == -totals["player_1"]
    record = raw.match_record(include_legal=rng.random() < 0.3)
    if forfeit is not None:
        assert record["winner"] is None
        if reward == "match":
            assert team0 == (-1.0 if forfeit == 0 else 1.0)
    elif reward == "match":
        assert team0 == {0: 1.0, 1: -1.0, None: 0.0}[record["winner"]]
    else:
        assert team0 == game.score[0] - game.score[1]
    check_replay(record)
    env.reset()  # however the match ended, a new one starts
    fresh = raw.match_record()
    assert len(fresh["hands"]) == 1 and not fresh["hands"][0]["actions"]
    assert fresh["hands"][0]["score_before"] == [0, 0]
    return record


def test_the_fuzzer_draws_every_rules_field_and_only_valid_configs():
    rng = random.Random(0)
    seen: dict = {}
    for _ in range(400):
        for name, value in draw_rules(rng, rng.choice(sorted(PRESETS))).items():
            seen.setdefault(name, set()).add(json.dumps(value, sort_keys=True))
    assert set(seen) | {"family"} == set(FIELD_NAMES)
    assert all(len(values) >= 2 for name, values in seen.items() if name != "pica_pica")


def test_fuzzed_matches_through_the_aec_env():
    for case in range(CASES):
        fuzz_case(case)


def test_the_same_seed_plays_the_same_fuzzed_match():
    for case in (3, 41, 97):
        assert fuzz_case(case) == fuzz_case(case)


@pytest.mark.slow
def test_many_fuzzed_matches_through_the_aec_env():
    for case in range(CASES, CASES + SLOW_CASES):
        fuzz_case(case)


# ---------------------------------------------------------------------------------------------------------
# The compiled vector env on fuzzed rules


def fuzz_vector(case: int, steps: int) -> list[dict]:
    """Random legal play on a VectorEnv with random rules, and now and then a batch with one illegal action
    (it raises naming that env, and no env moves); returns the finished matches' records, each replayed."""
    rng = random.Random(case)
    preset = rng.choice(sorted(PRESETS))
    rules = draw_rules(rng, preset)
    venv = VectorEnv(preset, num_envs=8, seed=case, record=True, reward=rng.choice(REWARDS), **rules)
    try:
        obs, mask, _ = venv.reset()
        for _ in range(steps):
            for row in obs:
                check_observation(row)
            actions = venv.random_actions()
            if rng.random() < 0.05:
                row = rng.randrange(venv.num_envs)
                actions[row] = rng.choice(np.flatnonzero(mask[row] == 0).tolist())
                states = venv.states.copy()
                with pytest.raises(ValueError, match=f"for env {row} "):
                    venv.step(actions)
                assert np.array_equal(states, venv.states)
                continue
            obs, mask, rewards, _, _ = venv.step(actions)
            assert np.isfinite(rewards).all() and (rewards[:, 0] == -rewards[:, 1]).all()
        for record in venv.finished_records:
            check_replay(record)
        return venv.finished_records
    finally:
        venv.close()


def test_fuzzed_rules_on_the_vector_env():
    finished = 0
    for case in range(12):
        finished += len(fuzz_vector(case, steps=150))
    assert finished > 20
    assert fuzz_vector(5, steps=60) == fuzz_vector(5, steps=60)


@pytest.mark.slow
def test_many_fuzzed_rules_on_the_vector_env():
    for case in range(12, 100):
        fuzz_vector(case, steps=300)
