"""Values at the environments' edges (issue 30): a forfeit ends the match whichever team forfeits."""

import numpy as np
import pytest

import truco_env
from truco_env import actions as A


def legal_ids(env, agent):
    return np.flatnonzero(env.observe(agent)["action_mask"])


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
        cards = legal[legal < A.CALL_BASE]
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
    illegal = next(a for a in range(A.NUM_ACTIONS) if a not in legal_ids(env, offender))
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
