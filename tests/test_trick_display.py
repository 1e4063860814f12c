"""A trick's winner is the engine's to say (issue 74 item 2): `truco play` and `truco serve` ask
`truco_env.engine.trick_winner`, so with `partner_tie_wins_trick` off they no longer tell a player "won by us" for
a trick the engine calls tied."""

from __future__ import annotations

import pytest

from training.people.play import Words, last_trick
from truco_env import TrucoState, make_config
from truco_env.engine import TIE

DEAL = {"hands": [["3e", "4e", "5e"], ["4c", "6c", "7c"], ["3b", "4b", "6b"], ["5c", "6o", "4o"]], "dealer": 3}


@pytest.mark.parametrize("partners_win", [True, False])
def test_a_trick_partners_tie_on_top_is_shown_as_the_engine_scores_it(partners_win):
    config = make_config("argentine-2v2", partner_tie_wins_trick=partners_win)
    state = TrucoState.new(config, deal=DEAL)
    for action in ("play:3e", "play:4c", "play:3b", "play:5c"):
        state.apply(action)
    assert state.trick_results[0] == (0 if partners_win else TIE)
    shown = last_trick(state, state.hand_records[-1], Words(0, 4))
    assert shown.endswith(" -> won by us" if partners_win else " -> tied"), shown


def test_the_web_table_shows_the_engines_verdict_too():
    from training.people.serve import Table

    config_tie = make_config("argentine-2v2", partner_tie_wins_trick=False)
    state = TrucoState.new(config_tie, deal=DEAL)
    for action in ("play:3e", "play:4c", "play:3b", "play:5c"):
        state.apply(action)
    table = Table.__new__(Table)  # only the trick drawing, which reads the config and the seat
    table.config, table.seat = config_tie, 0
    tricks = table._tricks(state, state.hand_records[-1], state.hand_index)
    assert tricks[0]["winner"] == "tie"
