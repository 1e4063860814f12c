"""Uruguayan Truco in the engine (docs/rules.md): the muestra turned after the deal, its piezas in
the tricks, the envido and the flor; the compiled kernel plays it exactly as the reference engine does; its
observation appends a block of its own and leaves every other family's as it was."""

import random

import numpy as np
import pytest
from test_fast_engine import play_both
from test_fuzz import check_observation

from truco_env import PRESETS, TrucoConfig, TrucoState, cards
from truco_env.encoding import (
    OBS_OFFSETS,
    OBSERVATION_SIZE,
    OBSERVATION_SIZE_SENAS,
    URUGUAYAN_OFFSETS,
    encode_observation,
    observation_size,
)
from truco_env.engine import TIE as TIE_RESULT
from truco_env.fast import FastState


def uruguayan(**fields):
    return TrucoConfig(family="uruguayan", **fields)


def card(text):
    return cards.parse_card(text, "uruguayan")


def play(state, *names):
    for name in names:
        assert name in state.legal_actions(), (name, state.legal_actions())
        state.apply(name)
    return state


@pytest.mark.parametrize("fields", [
    {}, {"num_players": 4}, {"num_players": 6}, {"flor": False}, {"plain_flor_base": 0, "num_players": 4},
    {"num_players": 6, "pica_pica": True}, {"target_score": 15, "falta_envido": "leader_needs"},
    {"falta_envido": "winner_to_buenas"}, {"falta_envido": "leader_to_buenas", "num_players": 4, "target_score": 30},
    {"deck_ranks": ("1", "2", "3", "4", "5", "7"), "num_players": 4},
    {"envido_refusal": "previous_sum_plus_one", "falta_adds_chain": True, "falta_envido": "winner_to_buenas"},
    {"envido_refusal": "previous_sum_plus_one", "falta_adds_chain": True, "num_players": 4, "flor": False},
    {"flor_before_answer": "refuse_unsung", "num_players": 4}, {"flor_before_answer": "refuse_unsung"},
    {"trick_tie_to_mano": True}, {"trick_tie_to_mano": True, "num_players": 4, "partner_tie_wins_trick": False},
    {"trick_tie_to_mano": True, "num_players": 6, "pica_pica": True},
    {"flor_scoring": "per_flor_refusals"}, {"flor_scoring": "per_flor_refusals", "num_players": 4},
    {"flor_raise_by": "unsung_holder", "fold_against_unsung_flor": "flor_lost"},
    {"flor_raise_by": "unsung_holder", "fold_against_unsung_flor": "flor_lost", "num_players": 4,
     "flor_scoring": "per_flor_refusals"},
    {"mazo_scope": "player", "num_players": 4}, {"mazo_scope": "player", "num_players": 6},
    {"mazo_scope": "player", "num_players": 6, "pica_pica": True, "responder": "team_pie"},
    {"mazo_scope": "player", "num_players": 4, "lead_after_tie": "next_after_leader", "envido_tie": "mano_team"},
], ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "defaults")
def test_the_kernel_plays_uruguayan_truco_as_the_reference_engine(fields):
    """Records (every legal set included), actors, scores and every seat's observation agree step by step."""
    config = uruguayan(**fields)
    decisions = sum(play_both(config, seed, check_obs=seed < 6) for seed in range(60))  # the presets: 400 more
    assert decisions > 60 * 4


def test_a_deal_turns_a_muestra_outside_every_hand():
    for n in (2, 4, 6):
        for seed in range(20):
            state = TrucoState.new(uruguayan(num_players=n), seed=seed)
            dealt = {c for seat in range(n) for c in state.dealt_cards(seat)}
            assert state.vira is not None and state.vira not in dealt and len(dealt) == 3 * n
            record_deal = state.match_record()["hands"][0]["deal"]
            assert record_deal["vira"] == cards.card_text(state.vira, "uruguayan")


def test_a_pieza_beats_the_matas_and_the_twelve_stands_in_for_a_turned_pieza():
    # muestra 4c: the 4 is out of play, the 12 of copas takes its place (second pieza, above the 5)
    state = TrucoState.new(uruguayan(), deal={"hands": [["12c", "4e", "6o"], ["1e", "5c", "6b"]], "vira": "4c",
                                               "dealer": 1})
    play(state, "play:12c", "play:5c")  # 12c (as the 4 of the muestra) beats 5c
    assert state.trick_results == [0]
    play(state, "play:4e", "play:1e")  # an ordinary 4 loses to the first mata
    assert state.trick_results == [0, 1]
    # muestra 3e: the 12 of espadas is an ordinary 12; the 10 of espadas is the lowest pieza, above 1e
    state = TrucoState.new(uruguayan(), deal={"hands": [["10e", "12e", "6o"], ["1e", "11o", "6b"]], "vira": "3e",
                                               "dealer": 1})
    play(state, "play:10e", "play:1e")
    assert state.trick_results == [0]
    play(state, "play:12e", "play:11o")  # the 12 beats the 11: two tricks, the hand to seat 0's team
    assert state.score == (1, 0) and state.hand_index == 1


@pytest.mark.parametrize("hand,muestra,envido", [
    (["2c", "7e", "3o"], "4c", 37), (["12c", "6b", "1o"], "4c", 35), (["11c", "10b", "12o"], "4c", 27),
    (["7e", "6e", "3c"], "4c", 33), (["5o", "4o", "3b"], "4c", 29), (["1e", "1b", "7o"], "4c", 7),
    (["12e", "6o", "1b"], "3e", 6), (["4o", "5c", "6c"], "3e", 31),
])
def test_the_envido_counts_the_piezas(hand, muestra, envido):
    """The worked examples of docs/rules.md §8.3, as the showdown of an accepted envido shows them."""
    other = [c for c in ("6e", "7b", "10o", "11b", "12b", "1c") if c not in hand and c != muestra
             and card(c) not in cards.piezas(card(muestra))][:3]
    state = TrucoState.new(uruguayan(flor=False), deal={"hands": [hand, other], "vira": muestra, "dealer": 1})
    play(state, "envido", "quiero")
    shown = dict(state.envido_announcements)
    assert shown[0] == envido or (shown[0] is None and shown[1] >= envido)
    assert cards.uruguayan_envido_of([card(c) for c in hand], card(muestra)) == envido


@pytest.mark.parametrize("hand,value,plain", [
    (["2c", "12c", "5c"], 47, 47), (["2c", "5c", "7o"], 45, 45), (["11c", "6o", "3o"], 36, 36),
    (["7e", "6e", "5e"], 38, 18), (["11o", "10o", "12o"], 20, 0),
])
def test_a_flor_with_piezas_is_declared_and_scored(hand, value, plain):
    """§8.4: three of a suit, two piezas, or a pieza and two of one suit make a flor; ``plain_flor_base`` is the 20
    of a flor without a pieza. An uncontested flor scores its 3 at once."""
    for base, expected in ((20, value), (0, plain)):
        config = uruguayan(plain_flor_base=base)
        state = TrucoState.new(config, deal={"hands": [hand, ["1e", "6b", "7c"]], "vira": "4c", "dealer": 1})
        assert state.phase == "flor_declare" and state.legal_actions() == ["flor"]
        assert state._flor_points[0] == expected
        play(state, "flor")
        assert state.score == (3, 0)
    state = TrucoState.new(uruguayan(), deal={"hands": [["2c", "7e", "6o"], ["1e", "6b", "7c"]], "vira": "4c",
                                               "dealer": 1})
    assert state.phase == "play"  # one pieza, two suits: an envido hand, no flor


def test_a_forced_deal_needs_its_muestra_apart_from_the_hands():
    hands = [["2c", "7e", "3o"], ["1e", "1b", "7o"]]
    with pytest.raises(ValueError, match="uruguayan needs the muestra as its 'vira'"):
        TrucoState.new(uruguayan(), deal={"hands": hands})
    with pytest.raises(ValueError, match="the vira '7e' is also in a hand"):
        TrucoState.new(uruguayan(), deal={"hands": hands, "vira": "7e"})
    with pytest.raises(ValueError, match="Spanish deck"):
        TrucoState.new(uruguayan(), deal={"hands": hands, "vira": "Qs"})


def test_config_defaults_and_the_fields_of_other_families():
    config = uruguayan()
    assert (config.target_score, config.flor, config.falta_envido, config.malas_buenas) == (40, True, "malas_match", True)
    assert TrucoConfig.from_dict(config.to_dict()) == config and config.to_dict()["plain_flor_base"] == 20
    assert "plain_flor_base" not in PRESETS["argentine"].to_dict()  # the other families' records are unchanged
    for fields, words in [({"family": "argentine", "plain_flor_base": 0}, "applies only to the uruguayan family"),
                          ({"plain_flor_base": 7}, "choose 20"), ({"plain_flor_base": False}, "choose 20"),
                          ({"num_players": 4, "senas": True}, "applies only to the argentine family"),
                          ({"mao_de_onze": False}, "applies only to the paulista family")]:
        with pytest.raises(ValueError, match=words):
            TrucoConfig(**{"family": "uruguayan", **fields})
    assert TrucoConfig(family="argentine").flor is False and TrucoConfig(family="paulista").target_score == 12


def test_the_observation_appends_the_uruguayan_block_and_leaves_the_others_as_they_were():
    others = {name: c for name, c in PRESETS.items() if c.family != "uruguayan"}
    assert {name: observation_size(c) for name, c in others.items()} == {
        name: OBSERVATION_SIZE_SENAS if c.senas else OBSERVATION_SIZE for name, c in others.items()}
    config = uruguayan(num_players=4, plain_flor_base=0)
    rng = random.Random(5)
    for seed in range(10):
        state = TrucoState.new(config, seed=seed)
        fast = FastState.new(config, seed=seed)
        buffer = fast.observation_buffer()
        while not state.is_over:
            for viewer in range(4):
                obs = encode_observation(state, viewer)
                assert obs.shape == (observation_size(config),)
                check_observation(obs)  # fractions at most 1, flags 0 or 1, one-hot fields at most one 1
                assert obs[slice(*URUGUAYAN_OFFSETS["uruguayan_target"])][0] == 1.0
                a, b = URUGUAYAN_OFFSETS["piezas"]
                assert set(np.flatnonzero(obs[a:b])) == set(cards.piezas(state.vira))
                assert obs[slice(*URUGUAYAN_OFFSETS["uruguayan"])][0] == 1.0
                assert obs[slice(*URUGUAYAN_OFFSETS["uruguayan_options"])][0] == 1.0
                assert not obs[slice(*OBS_OFFSETS["family"])].any()
                assert not obs[slice(*OBS_OFFSETS["manilha_rank"])].any()
                assert obs[slice(*OBS_OFFSETS["vira"])][state.vira] == 1.0
                assert np.array_equal(fast.encode_observation(viewer, buffer), obs)
            action = rng.choice(state.legal_actions())
            state.apply(action)
            fast.apply(action)


def test_a_uruguayan_network_counts_the_piezas_among_card_strengths():
    """A network made for the family reads 19 strength levels under the muestra; the others keep their 14."""
    import torch

    from agents.network import PolicyNet

    net = PolicyNet(obs_size=observation_size(uruguayan()))
    assert net.strength.num_levels == 19 and PolicyNet().strength.num_levels == 14
    state = TrucoState.new(uruguayan(), deal={"hands": [["12c", "4e", "6o"], ["1e", "5c", "6b"]], "vira": "4c",
                                              "dealer": 1})
    obs = torch.tensor(encode_observation(state, 0))[None]
    hand_levels = net.strength(obs)[0, :19]
    expected = torch.zeros(19)
    for text in ("12c", "4e", "6o"):  # the 12 stands in for the 4 of the muestra: strength 18
        expected[cards.URUGUAYAN_STRENGTH[card("4c")][card(text)] - 1] += 1
    assert torch.equal(hand_levels, expected) and expected[17] == 1
    logits, _ = net(obs, torch.ones(1, 98, dtype=torch.bool))
    assert torch.isfinite(logits).all()


@pytest.mark.parametrize("mode,score,expected", [
    ("winner_to_buenas", (10, 5), {0: 10, 1: 15}),  # in the malas: what the winner lacks to reach 20
    ("leader_to_buenas", (10, 5), {0: 10, 1: 10}),  # ... what the leader lacks
    ("malas_match", (10, 5), {0: 30, 1: 35}),  # the family's default: the winner takes the match
    ("winner_to_buenas", (20, 5), {0: 20, 1: 20}),  # the leader in the buenas: what the leader lacks to 40
])
def test_the_falta_envido_readings_of_the_family(mode, score, expected):
    """rules.md §8.5: an accepted falta, worth by the reading ``falta_envido``; seat 0 holds 33, seat 1 7."""
    for winner_seat, hands in ((0, [["7c", "6c", "3e"], ["1e", "1b", "7o"]]),
                               (1, [["1e", "1b", "7o"], ["7c", "6c", "3e"]])):
        state = TrucoState.new(uruguayan(falta_envido=mode), score=list(score),
                               deal={"hands": hands, "vira": "12e", "dealer": 1})
        play(state, "falta_envido", "quiero")
        gained = [after - before for after, before in zip(state.score, score, strict=True)]
        assert gained[winner_seat] == expected[winner_seat] and gained[1 - winner_seat] == 0, (mode, gained)
    with pytest.raises(ValueError, match="reading of the uruguayan family only"):
        TrucoConfig(family="argentine", falta_envido=mode) if mode != "malas_match" else TrucoConfig(
            family="argentine", falta_envido="winner_to_buenas")


@pytest.mark.parametrize("calls,refused,plus_one", [
    (["envido"], 1, 1), (["real_envido"], 1, 1), (["falta_envido"], 1, 1),
    (["envido", "envido"], 2, 3), (["envido", "real_envido"], 2, 3), (["envido", "envido", "real_envido"], 4, 5),
    (["envido", "falta_envido"], 2, 3), (["envido", "real_envido", "falta_envido"], 5, 6),
    (["envido", "envido", "real_envido", "falta_envido"], 7, 8),
])
def test_a_refused_envido_chain_pays_by_the_reading_envido_refusal(calls, refused, plus_one):
    """rules.md §8.10 row 5: the calls before the refused one ([CJT]'s table; 1 for a lone call), or that sum
    plus one (pytruco). The last caller scores; nothing else moves."""
    hands = [["7c", "6c", "3e"], ["1e", "1b", "7o"]]  # no flor under the muestra 12e
    for reading, expected in (("previous_sum", refused), ("previous_sum_plus_one", plus_one)):
        state = TrucoState.new(uruguayan(envido_refusal=reading), deal={"hands": hands, "vira": "12e", "dealer": 1})
        play(state, *calls, "no_quiero")
        caller_team = (len(calls) - 1) % 2  # seat 0 is the mano and opens; the teams alternate
        assert state.score[caller_team] == expected and state.score[1 - caller_team] == 0, (reading, calls)


@pytest.mark.parametrize("calls,chain_points", [
    (["falta_envido"], 0), (["envido", "falta_envido"], 2), (["envido", "real_envido", "falta_envido"], 5),
])
def test_an_accepted_falta_pays_the_calls_before_it_by_the_reading_falta_adds_chain(calls, chain_points):
    """rules.md §8.10 row 4: the falta alone (§3.4), or the falta and the calls before it (pytruco). Seat 0 holds
    33 and wins; the falta (winner_to_buenas at 10-5) is the 10 it lacks to the buenas."""
    hands = [["7c", "6c", "3e"], ["1e", "1b", "7o"]]
    for adds, expected in ((False, 10), (True, 10 + chain_points)):
        state = TrucoState.new(uruguayan(falta_envido="winner_to_buenas", falta_adds_chain=adds), score=[10, 5],
                               deal={"hands": hands, "vira": "12e", "dealer": 1})
        play(state, *calls, "quiero")
        assert state.score == (10 + expected, 5), (adds, calls)
    with pytest.raises(ValueError, match="applies only to the uruguayan family"):
        TrucoConfig(family="argentine", falta_adds_chain=True)
    with pytest.raises(ValueError, match="envido_refusal"):
        uruguayan(envido_refusal="double")



@pytest.mark.parametrize("until,stop", [("end_of_malas", 20), ("target_minus_5", 35)])
def test_pica_pica_duels_stop_at_the_end_of_the_malas_by_default(until, stop):
    """rules.md §8.8 and §8.10 row 17: a Uruguayan 3v3 table with pica-pica plays duels while both teams are in
    the malas ([RSG]); ``pica_pica_until="target_minus_5"`` keeps the Argentine rule. Both engines agree."""
    config = uruguayan(num_players=6, pica_pica=True, pica_pica_until=until)
    assert config.pica_pica_stop() == stop
    assert TrucoConfig(family="argentine", num_players=6, pica_pica=True).pica_pica_stop() == 25
    for score, duels in (([stop - 3, 0], True), ([stop, 0], False)):
        state = TrucoState.new(config, seed=2, score=score)
        while state.hand_index == 0:  # the redonda, cards only: it moves a point or two, never the falta
            legal = state.legal_actions()
            state.apply(next((a for a in legal if a.startswith("play:")), legal[0]))
        assert (len(state.participants) == 2) == (duels and max(state.score) < stop), (until, score, state.score)
    play_both(config, 3)


def test_a_flor_holder_may_refuse_a_truco_unsung_by_the_reading_flor_before_answer():
    """rules.md §8.10 row 18: challenged by a truco, a flor holder declares first (§3.8 moment 3), or under
    pytruco's reading may say no_quiero unsung: the truco's 1 goes to the caller and the flor is never scored."""
    hands = [["1e", "1b", "7o"], ["7c", "6c", "3c"]]  # seat 1 holds a flor of copas; muestra 12e
    for reading, legal in (("declare", ["flor"]), ("refuse_unsung", ["flor", "no_quiero"])):
        state = TrucoState.new(uruguayan(flor_before_answer=reading),
                               deal={"hands": hands, "vira": "12e", "dealer": 1})
        play(state, "truco")
        assert state.phase == "flor_declare" and state.actor == 1 and state.legal_actions() == legal
    play(state, "no_quiero")
    assert state.score == (1, 0) and state.hand_index == 1 and state.flor_status == "none"


def test_a_tied_trick_goes_to_the_mano_by_the_reading_trick_tie_to_mano():
    """rules.md §8.10 row 16: a tied trick is parda (§2.6), or with ``trick_tie_to_mano`` ([BAN]) it goes to the
    mano's team, whose tying player leads the next trick. Seat 0 (the mano) and seat 1 tie the first trick with
    two 3s; seat 1 wins the second."""
    hands = [["3e", "4o", "5b"], ["3o", "7o", "6b"]]  # muestra 12c: no pieza, no flor
    for to_mano in (False, True):
        state = TrucoState.new(uruguayan(trick_tie_to_mano=to_mano), deal={"hands": hands, "vira": "12c", "dealer": 1})
        play(state, "play:3e", "play:3o")
        assert state.trick_results == [0 if to_mano else TIE_RESULT]
        assert state.actor == 0  # the parda's leader (same_leader), or the mano who took the tie
        play(state, "play:4o", "play:7o")
        if to_mano:  # one trick each: the third decides
            assert state.trick_results == [0, 1] and state.hand_index == 0
        else:  # a parda, then the second trick decides the hand (§2.6)
            assert state.hand_index == 1 and state.score == (0, 1)
    assert TrucoConfig(family="uruguayan", trick_tie_to_mano=True).to_dict()["trick_tie_to_mano"] is True



def play_deal(config, deal, *calls):
    """``calls`` from a forced deal in the reference engine and the compiled kernel, which must agree on every
    legal set and score; the reference state."""
    ref, fast = TrucoState.new(config, seed=0, deal=deal), FastState.new(config, seed=0, deal=deal)
    for name in calls:
        assert fast.legal_actions() == ref.legal_actions() and name in ref.legal_actions(), (name, ref.legal_actions())
        ref.apply(name)
        fast.apply(name)
        assert fast.score == ref.score and fast.actor == ref.actor, (name, fast.score, ref.score)
    assert fast.legal_actions() == ref.legal_actions()
    return ref


FLOR_AGAINST_FLOR = {"hands": [["7e", "6e", "5e"], ["1o", "6o", "3o"]], "vira": "12b", "dealer": 1}  # 38 against 30


@pytest.mark.parametrize("calls,team,table,per_flor", [
    (["quiero"], 0, 6, 6), (["no_quiero"], 0, 4, 6), (["contraflor", "quiero"], 0, 6, 4),
    (["contraflor", "no_quiero"], 1, 4, 7), (["contraflor_al_resto", "no_quiero"], 1, 4, 7),
    (["contraflor", "contraflor_al_resto", "no_quiero"], 0, 6, 7), (["contraflor_al_resto", "quiero"], 0, None, None),
])
def test_a_flor_contest_pays_by_the_reading_flor_scoring(calls, team, table, per_flor):
    """rules.md §8.10 row 8: the ``flor_values`` table (§3.8), or pytruco's reading: 3 a flor shown, 4 for an
    accepted contra flor, the falta alone for an accepted al resto (the table adds 3 a flor), and a refusal 3 for
    every flor at the table, 1 more after a contra flor or al resto. The mano (38) sings against a flor of 30."""
    for reading, points in (("table", table), ("per_flor_refusals", per_flor)):
        falta = TrucoState.new(uruguayan(), deal=FLOR_AGAINST_FLOR)._falta(0)
        state = play_deal(uruguayan(flor_scoring=reading), FLOR_AGAINST_FLOR, "flor", *calls)
        if points is None:  # al resto accepted
            points = falta + (6 if reading == "table" else 0)
        assert state.score[team] == points and state.score[1 - team] == 0, (reading, state.score)
        assert state.flor_status == ("accepted" if calls[-1] == "quiero" else "refused")


def test_only_the_team_yet_to_sing_raises_a_flor_contest_by_the_reading_flor_raise_by():
    """rules.md §8.10 row 9: either team may raise until al resto is called (§3.8), or in pytruco's reading only a
    holder who has not sung: the first answer to the flor, never the singer's team after a contra flor."""
    for reading, legal in (("either_team", ["quiero", "no_quiero", "contraflor_al_resto"]),
                           ("unsung_holder", ["quiero", "no_quiero"])):
        state = play_deal(uruguayan(flor_raise_by=reading), FLOR_AGAINST_FLOR, "flor")
        assert state.legal_actions() == ["quiero", "no_quiero", "contraflor", "contraflor_al_resto"]
        state = play_deal(uruguayan(flor_raise_by=reading), FLOR_AGAINST_FLOR, "flor", "contraflor")
        assert state.actor == 0 and state.legal_actions() == legal


def test_a_fold_pays_the_unsung_flor_of_the_other_team_by_the_reading_fold_against_unsung_flor():
    """rules.md §8.10 row 10: a team that folds concedes the other's undeclared flor too (§3.8), or in pytruco's
    reading that flor is never scored. The mano folds at once against the foot's unsung flor."""
    deal = {"hands": [["1e", "4b", "7o"], ["1o", "6o", "3o"]], "vira": "12b", "dealer": 1}
    for reading, score in (("score_flor", (0, 4)), ("flor_lost", (0, 1))):
        state = play_deal(uruguayan(fold_against_unsung_flor=reading), deal, "mazo")
        assert state.score == score and state.hand_index == 1


def test_the_flor_contest_readings_belong_to_the_family_and_flor_values_to_its_table():
    for name, value in (("flor_scoring", "per_flor_refusals"), ("flor_raise_by", "unsung_holder"),
                        ("fold_against_unsung_flor", "flor_lost")):
        with pytest.raises(ValueError, match=f"'{name}' applies only to the uruguayan family"):
            TrucoConfig(family="argentine", flor=True, **{name: value})
        assert uruguayan(**{name: value}).to_dict()[name] == value
    with pytest.raises(ValueError, match="'flor_values' applies only with flor_scoring = 'table'"):
        uruguayan(flor_scoring="per_flor_refusals", flor_values={**uruguayan().flor_values, "achico": 5})
    with pytest.raises(ValueError, match="choose one of"):
        uruguayan(flor_raise_by="anyone")


def test_a_player_folds_alone_by_the_reading_mazo_scope():
    """rules.md §8.10 row 12: a fold concedes the hand for the team (§3.10), or in pytruco's reading the folder
    alone leaves it: his partner plays on, the trick completes without him, he is no longer among the hand's
    participants (which every seat's observation shows), and the last of a team to fold concedes the hand."""
    deal = {"hands": [["4e", "5e", "6o"], ["7c", "6c", "4b"], ["1e", "7o", "3b"], ["3c", "2o", "5b"]],
            "vira": "12o", "dealer": 3}  # the mano is seat 0; piezas in oros: 2o (seat 3)
    team = play_deal(uruguayan(num_players=4), deal, "mazo")
    assert team.hand_index == 1 and team.score == (0, 1)
    state = play_deal(uruguayan(num_players=4, mazo_scope="player"), deal, "mazo")
    assert state.hand_index == 0 and state.participants == (1, 2, 3) and state.actor == 1
    obs = encode_observation(state, 1)
    a, b = OBS_OFFSETS["participants"]
    assert list(obs[a:b][:4]) == [1.0, 1.0, 1.0, 0.0]  # relative seats 0-2 (seats 1, 2, 3); seat 0 left
    state = play_deal(uruguayan(num_players=4, mazo_scope="player"), deal, "mazo", "play:7c", "play:1e", "play:3c")
    assert state.trick_results == [0] and state.actor == 2  # three cards made the trick; seat 2 (1e) leads
    state = play_deal(uruguayan(num_players=4, mazo_scope="player"), deal, "mazo", "play:7c", "mazo")
    assert state.hand_index == 1 and state.score == (0, 1)  # seat 2, the last of team 0, concedes the hand


def test_when_duels_stop_is_refused_without_duels():
    """``pica_pica_until`` says when pica-pica duels stop: set without ``pica_pica`` it changes nothing, so it is
    refused as every field that does not apply is (it was accepted on uruguayan-2v2)."""
    with pytest.raises(ValueError, match="'pica_pica_until' applies only with pica_pica = True"):
        uruguayan(num_players=4, pica_pica_until="target_minus_5")
    assert uruguayan(num_players=6, pica_pica=True, pica_pica_until="target_minus_5").pica_pica_stop() == 35
