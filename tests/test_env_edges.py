"""Values at the environments' edges (issue 30, items 2 and 7): a forfeit ends the match whichever team forfeits;
actions, action batches, seeds, presets and reset options follow one rule (truco_env/inputs.py) in the AEC env,
the single-agent view and the vector envs: the right types are accepted, anything else is one ValueError line
and changes nothing."""

import numpy as np
import pytest

import truco_env
from truco_env import PRESETS, actions
from truco_env.gym_vector import TrucoVectorEnv
from truco_env.vector import SKIP, EngineVectorEnv, VectorEnv

WRONG_TYPES = [26.7, "26", None, True, np.bool_(True), np.float64(3.0), np.array([3]), np.array(3.0), [3], b"3"]
OUT_OF_RANGE = [actions.NUM_ACTIONS, -1, 2 ** 32 + 3, np.int64(2 ** 32 + 3), np.uint64(2 ** 64 - 1)]
GOOD_SEEDS = [np.int64(3), np.uint32(3), np.int8(3), np.uint64(3)]
BAD_SEEDS = [-1, np.int64(-3), 3.0, "3", True, [3], np.array([3])]


def one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message and message
    return message


def legal_ids(env, agent):
    return np.flatnonzero(env.observe(agent)["action_mask"])


def step_legal(env, rng):
    env.step(int(rng.choice(legal_ids(env, env.agent_selection))))


# ---------------------------------------------------------------------------------------------------------
# Item 2: a forfeit (illegal_action="terminate") ends the match, for team 0 as for team 1


def play_until_seat_acts(env, seat, rng, at_least=3):
    """Random cards (calls only where no card may be played: a falta envido could end the match) until ``seat``
    is to act after ``at_least`` decisions of the match, a position that the forfeited match could be continued
    from; an episode that ends meanwhile (``episode="hand"``) is continued by reset()."""
    played = 0
    while True:
        if all(env.terminations.values()):
            env.reset()
            assert env.unwrapped.game.hand_index > 0
            continue
        if played >= at_least and env.agent_selection == f"player_{seat}":
            return
        legal = legal_ids(env, env.agent_selection)
        cards = legal[legal < actions.CALL_BASE]
        env.step(int(rng.choice(cards if cards.size else legal)))
        played += 1


@pytest.mark.parametrize("episode", ["match", "hand"])
@pytest.mark.parametrize(("preset", "seat"), [("argentine", 0), ("argentine", 1), ("argentine-2v2", 0),
                                              ("argentine-2v2", 1), ("argentine-2v2", 2), ("argentine-2v2", 3),
                                              ("paulista", 0), ("paulista-2v2", 2)])
def test_a_forfeit_ends_the_match_for_either_team(preset, seat, episode):
    env = truco_env.env(preset, episode=episode, illegal_action="terminate")
    env.reset(seed=11)
    rng = np.random.default_rng(seat)
    play_until_seat_acts(env, seat, rng)
    forfeited = env.unwrapped.match_record()
    assert any(hand["actions"] for hand in forfeited["hands"]) and forfeited["winner"] is None
    offender = env.agent_selection
    illegal = next(a for a in range(actions.NUM_ACTIONS) if a not in legal_ids(env, offender))
    env.step(illegal)
    assert all(env.terminations.values())
    for agent in env.agents:
        other = int(agent.split("_")[1]) % 2 != seat % 2
        assert env.rewards[agent] == (1.0 if other else -1.0)
        assert not env.observe(agent)["action_mask"].any()
    env.reset()  # no seed, no options: with episode="hand" this continued a team-0 forfeit (the bug)
    fresh = env.unwrapped.match_record()
    assert fresh["hands"][0]["score_before"] == [0, 0] and len(fresh["hands"]) == 1
    assert fresh["hands"][0]["actions"] == [] and fresh["hands"][0]["deal"] != forfeited["hands"][0]["deal"]
    assert not any(env.terminations.values()) and legal_ids(env, env.agent_selection).size


def test_a_refused_illegal_action_leaves_the_rewards_that_last_reports():
    env = truco_env.env("argentine", reward="points")
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    while env.last()[1] == 0.0:  # until a hand has ended and the agent to act has points to collect
        step_legal(env, rng)
    agent, pending = env.agent_selection, env.last()[1]
    with pytest.raises(ValueError, match="legal actions"):
        env.step(next(a for a in range(actions.NUM_ACTIONS) if a not in legal_ids(env, agent)))
    assert env.agent_selection == agent and env.last()[1] == pending and env.rewards[agent] != 0.0


# ---------------------------------------------------------------------------------------------------------
# Item 7: actions


@pytest.mark.parametrize("illegal_action", ["raise", "terminate"])
@pytest.mark.parametrize(("bad", "expected"), [(bad, "must be an integer id 0..97") for bad in WRONG_TYPES]
                         + [(bad, "out of range") for bad in OUT_OF_RANGE], ids=repr)
def test_the_aec_env_refuses_what_is_no_action_id_whatever_illegal_action_says(bad, expected, illegal_action):
    env = truco_env.env("argentine", illegal_action=illegal_action)
    env.reset(seed=0)
    before = env.unwrapped.match_record(include_legal=True)
    with pytest.raises(ValueError) as err:
        env.step(bad)
    assert expected in one_line(err)
    assert env.unwrapped.match_record(include_legal=True) == before
    assert not any(env.terminations.values())  # a programming error is no forfeit


@pytest.mark.parametrize("make", [int, np.int64, np.int32, np.uint8, np.array, lambda a: np.array(a, np.int16)],
                         ids=["int", "int64", "int32", "uint8", "0-d int64 array", "0-d int16 array"])
def test_the_aec_env_plays_every_integer_that_its_action_space_contains(make):
    reference, env = truco_env.env("paulista-2v2"), truco_env.env("paulista-2v2")
    reference.reset(seed=4)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(12):
        action = int(rng.choice(legal_ids(reference, reference.agent_selection)))
        assert env.action_space(env.agent_selection).contains(make(action))
        reference.step(action)
        env.step(make(action))
    assert env.unwrapped.match_record() == reference.unwrapped.match_record()


def test_the_single_agent_view_refuses_what_is_no_action_id_and_ends_on_an_illegal_one():
    env = truco_env.single_agent("argentine", seat=0)
    env.reset(seed=1)
    state_before = env.state.match_record()
    for bad in WRONG_TYPES + OUT_OF_RANGE:
        with pytest.raises(ValueError) as err:
            env.step(bad)
        one_line(err)
    assert env.state.match_record() == state_before
    legal = np.flatnonzero(env.action_masks())
    played = []
    for make in (int, np.int64, np.array):  # the same move, whatever integer type carries it
        twin = truco_env.single_agent("argentine", seat=0)
        twin.reset(seed=1)
        _, _, _, _, info = twin.step(make(int(legal[0])))
        assert "illegal_action" not in info
        played.append(twin.state.match_record())
    assert played[0] == played[1] == played[2] != state_before
    illegal = next(a for a in range(actions.NUM_ACTIONS) if a not in legal)
    _, reward, done, _, info = env.step(np.array(illegal))  # a well-formed id the rules refuse: -1, episode over
    assert done and reward == -1.0 and info["illegal_action"]


def test_the_vector_env_checks_range_before_the_cast_and_nothing_moves():
    venv = VectorEnv("argentine", num_envs=4, seed=0)
    venv.reset()
    states = venv.states.copy()
    legal = venv.random_actions()
    wrapped = legal.astype(np.int64) + 2 ** 32  # cast to int32 these are the legal ids again
    for bad, row in ((wrapped, 0), (np.full(4, 2 ** 64 - 1, dtype=np.uint64), 0),  # the last would wrap to SKIP
                     (np.append(legal[:3], 2 ** 31 + 5), 3), (np.full(4, SKIP - 1, dtype=np.int16), 0)):
        with pytest.raises(ValueError) as err:
            venv.step(bad)
        assert f"illegal action {bad[row]} for env {row}" in one_line(err)
    for bad in (legal.astype(float), legal.astype(bool), legal[:3], legal.astype(str), [None] * 4):
        with pytest.raises(ValueError, match="4 integer action ids") as err:
            venv.step(bad)
        one_line(err)
    assert np.array_equal(venv.states, states)
    twin = VectorEnv("argentine", num_envs=4, seed=0)
    twin.reset()
    venv.step(legal.astype(np.uint8))
    twin.step(legal.tolist())
    assert np.array_equal(venv.states, twin.states)
    venv.close()
    twin.close()


def test_the_engine_and_gymnasium_vector_envs_refuse_out_of_range_ids():
    engine = EngineVectorEnv("argentine", num_envs=2, seed=0)
    engine.reset()
    for bad in (np.array([-5, -5], dtype=np.int32), np.array([2 ** 32, 2 ** 32]), np.array([SKIP, SKIP])):
        with pytest.raises(ValueError, match="out of range"):
            engine.step(bad)
    envs = TrucoVectorEnv("argentine", num_envs=2)
    envs.reset(seed=np.int64(0))
    legal = np.array([np.flatnonzero(row)[0] for row in envs.action_masks()])
    for bad in (legal + 2 ** 32, np.full(2, SKIP)):  # the learner acts in every row: no skipping
        with pytest.raises(ValueError, match="out of range"):
            envs.step(bad)
    envs.step(legal.astype(np.uint16))
    envs.close()


# ---------------------------------------------------------------------------------------------------------
# Item 7: seeds, presets, reset options


def aec_record(seed):
    env = truco_env.env("argentine")
    env.reset(seed=seed)
    rng = np.random.default_rng(0)
    for _ in range(6):
        step_legal(env, rng)
    return env.unwrapped.match_record()


def test_seeds_take_python_and_numpy_integers_and_refuse_the_rest():
    expected = aec_record(3)
    for seed in GOOD_SEEDS:
        assert aec_record(seed) == expected
        single = truco_env.single_agent("paulista", seat=1)
        assert np.array_equal(single.reset(seed=seed)[0], single.reset(seed=3)[0])
    first = VectorEnv("argentine", num_envs=3, seed=np.int64(3))
    second = VectorEnv("argentine", num_envs=3)
    assert np.array_equal(first.reset()[0], second.reset(seed=np.uint32(3))[0])
    first.close()
    second.close()
    env, single = truco_env.env("argentine"), truco_env.single_agent("argentine")
    vec, engine = VectorEnv("argentine", num_envs=2), EngineVectorEnv("argentine", num_envs=2)
    envs = TrucoVectorEnv("argentine", num_envs=2)
    for bad in BAD_SEEDS:
        for reset in (env.reset, single.reset, vec.reset, engine.reset, envs.reset):
            with pytest.raises(ValueError, match="seed must be None or an integer >= 0") as err:
                reset(seed=bad)
            one_line(err)
        for make in (VectorEnv, EngineVectorEnv):
            with pytest.raises(ValueError, match="seed must be"):
                make("argentine", num_envs=2, seed=bad)
    vec.close()
    envs.close()


@pytest.mark.parametrize("make", [truco_env.env, truco_env.raw_env, truco_env.single_agent, VectorEnv,
                                  truco_env.make_config])
@pytest.mark.parametrize("preset", [["argentine"], {"flor": True}, 3, None])
def test_a_preset_that_is_no_name_is_one_line_listing_the_presets(make, preset):
    with pytest.raises(ValueError, match="preset must be a preset name") as err:
        make(preset)
    assert str(sorted(PRESETS)) in one_line(err)


def test_reset_options_that_are_no_mapping_are_one_line():
    for env in (truco_env.env("argentine"), truco_env.single_agent("argentine")):
        for bad in (["deal"], "score", 3):
            with pytest.raises(ValueError, match="options must be None or a dict") as err:
                env.reset(options=bad)
            one_line(err)
        with pytest.warns(UserWarning, match=r"reset options \['unrelated'\] are ignored"):
            env.reset(options={"score": [3, 4], "unrelated": 1})  # other keys are ignored, as the APIs expect


LONG = "x" * 5_000_000  # a 5 MB "name"


@pytest.mark.parametrize("call", [
    lambda: truco_env.env(LONG),
    lambda: truco_env.env("argentine", illegal_action=LONG),
    lambda: truco_env.env("argentine", episode=LONG),
    lambda: truco_env.single_agent("argentine", reward=LONG),
    lambda: VectorEnv("argentine", num_envs=2, reward=LONG),
    lambda: truco_env.make_config("argentine", **{LONG[:100_000]: 1}),
    lambda: truco_env.make_config("argentine", target_score=LONG),
    lambda: truco_env.env("argentine").reset(seed=1, options={"deal": {"hands": [[LONG]]}}),
    lambda: truco_env.env("argentine").reset(seed=1, options={"deal": {"hands": [[LONG, "1e", "2e"], ["3e", "4e", "5e"]]}}),
    lambda: truco_env.env("argentine").reset(seed=1, options={"score": [LONG, 1]}),
], ids=["preset", "illegal_action", "episode", "reward", "vector-reward", "config-field", "config-value",
        "deal-hands", "deal-card", "score"])
def test_a_5mb_value_at_the_edges_is_echoed_cut(call):
    """Every one of these messages used to carry the whole value (5 MB in one error line)."""
    with pytest.raises(ValueError) as err:
        call()
    message = one_line(err)
    assert len(message) < 1000 and "…" in message, message[:300]
