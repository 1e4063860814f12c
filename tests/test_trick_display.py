"""A trick's winner is the engine's to say (issue 74 item 2): `truco play` and `truco serve` ask
`truco_env.engine.trick_winner`, so with `partner_tie_wins_trick` off they no longer tell a player "won by us" for
a trick the engine calls tied."""

from __future__ import annotations

import re

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



def test_the_last_trick_after_a_seat_folds_alone_is_the_engines():
    """With ``mazo_scope="player"`` a folder leaves the hand and the tricks after it hold fewer cards: the last
    trick that `truco play` and `truco replay --show` print is the engine's last trick, its seats and its winner, at
    every step of random 2v2 matches (grouping the plays by the seat count merged two tricks into one and judged
    their four cards together)."""
    import random

    from truco_env import TrucoConfig
    from truco_env.views import visible_tricks

    config = TrucoConfig(family="uruguayan", num_players=4, mazo_scope="player")
    checked = 0
    for seed in range(40):
        rng, state = random.Random(seed), TrucoState.new(config, seed=seed)
        while not state.is_over:
            hand = state.hand_index
            state.apply(rng.choice(state.legal_actions()))
            record = state.hand_records[-1]
            tricks = visible_tricks(state, 0, shown=set(range(4)))
            if state.hand_index != hand or state.is_over or not tricks:
                continue
            plays, won = tricks[-1]
            shown = last_trick(state, record)
            verdict = shown.replace(" (unfinished)", " -> open").rpartition(" -> ")[2]
            assert re.findall(r"seat (\d): ", shown) == [str(s) for s, _ in plays], shown
            assert verdict == ("open" if won is None else "tied" if won == TIE else f"team {won}"), shown
            checked += any(name == "mazo" for _, name in record["actions"])
    assert checked > 100  # steps after a seat folded alone
