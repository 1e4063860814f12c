"""Properties of the rules engine over thousands of seeded random matches, for every preset and for option
combinations that change play: no crash, never a stuck actor, one winner at the target, only the amounts the
calls allow, clone isolation, and determinism from the seed."""

import itertools
import random

import pytest

from truco_env import PRESETS, TrucoState, make_config
from truco_env.engine import ENVIDO, FLOR_CONTEST, FLOR_DECLARE, ONZE, PLAY, TRUCO

#: Hand values by accepted level (docs/rules.md §3.9, 4.4), written out here rather than read from the engine.
LADDER_VALUES = {"argentine": (1, 2, 3, 4), "paulista": (1, 3, 6, 9, 12), "uruguayan": (1, 2, 3, 4)}

# (preset, overrides) pairs: every preset plus the options that change the course of play.
VARIANTS = [(name, {}) for name in PRESETS] + [
    ("argentine", {"target_score": 15}),
    ("argentine", {"falta_envido": "malas_match", "mazo_first_trick_bonus": True}),
    ("argentine", {"falta_envido": "whole_match", "envido_after_truco_accepted": True}),
    ("argentine", {"envido_primero": False, "envido_tie": "mano_team"}),
    ("argentine", {"envido_primero_after_played": False, "end_match_immediately": False}),
    ("argentine-flor", {"falta_envido": "whole_match", "mazo_first_trick_bonus": True}),
    ("argentine-flor", {"end_match_immediately": False}),
    ("argentine-2v2", {"flor": True, "responder": "team_pie", "envido_openers": "pie_only"}),
    ("argentine-2v2", {"lead_after_tie": "first_tied_card", "partner_tie_wins_trick": False}),
    ("argentine-3v3", {"pica_pica": True}),
    ("argentine-3v3", {"flor": True, "pica_pica": True, "deal_rotation": "against_play"}),
    ("paulista", {"all_tricks_tied": "dealer_team", "covered_card": True, "paulista_mazo": True}),
    ("paulista", {"mao_de_onze_truco": "caller_loses_match", "forbid_useless_raise": True}),
    ("paulista", {"mao_de_ferro_blind": False, "all_tricks_tied": "mao_team"}),
    ("paulista", {"mao_de_onze": False, "mao_de_ferro": False, "lead_after_tie": "next_after_leader"}),
    ("paulista-2v2", {"mao_de_onze_decider": "any_accepts", "responder": "team_pie", "covered_card": True}),
    ("paulista-2v2", {"mao_de_onze_truco": "caller_loses_match", "end_match_immediately": False}),
    ("paulista-clean", {"paulista_mazo": True, "forbid_useless_raise": True}),
]
MATCHES_PER_VARIANT = 400


def variant_id(variant):
    name, overrides = variant
    return name + "".join(f"|{k}={v}" for k, v in overrides.items())


def allowed_credits(state: TrucoState, phase: str, action: str) -> set[int]:
    """Every amount a team may be credited by ``action`` in ``phase`` (docs/rules.md §2.7, 3.4, 3.5, 3.8, 3.10, 4.7).

    Deliberately coarse and independent of the engine's bookkeeping: ladder values, the envido and flor tables
    and every falta the current score allows."""
    cfg = state.config
    target = cfg.target_score
    falta = {target - s for s in state.score} | {target - max(state.score)}
    ladder = set(LADDER_VALUES[cfg.family])
    flor = set(cfg.flor_values.values()) | {3 * k for k in range(1, 7)}
    assert state.hand_value in ladder | ({3} if state.special_hand == "mao_de_onze" else set())
    if phase == PLAY and action == "mazo":
        base = {state.hand_value, 2}
        return base | {b + f for b in base for f in flor}
    if phase == PLAY and action.startswith(("play", "cover")):
        return {state.hand_value}
    if phase == PLAY and action == "truco" and state.special_hand:
        return {target - s for s in state.score}  # caller_loses_match: the other team reaches the target
    if phase == TRUCO and action == "no_quiero":
        return ladder - {max(ladder)}
    if phase == ENVIDO:
        return {1, 2, 3, 4, 5, 7} | falta
    if phase in (FLOR_DECLARE, FLOR_CONTEST):
        return flor | {f + 3 * k for f in falta for k in range(1, 7)}
    if phase == ONZE:
        return {1}
    return set()


def play_random_match(preset, overrides, seed, check_clone=False):
    state = TrucoState.new(make_config(preset, **overrides), seed=seed)
    rng = random.Random(seed)
    steps = 0
    while not state.is_over:
        legal = state.legal_actions()
        assert legal, f"actor {state.actor} has no legal action in phase {state.phase}"
        assert state.actor is not None
        action = rng.choice(legal)
        before = state.score
        phase = state.phase
        allowed = allowed_credits(state, phase, action)
        if check_clone and steps % 7 == 0:
            snapshot = (state.score, state.actor, legal, state.match_record(include_legal=True))
            twin = state.clone()
            twin_rng = random.Random(steps)
            for _ in range(5):
                if twin.is_over:
                    break
                twin.apply(twin_rng.choice(twin.legal_actions()))
            assert snapshot == (state.score, state.actor, state.legal_actions(),
                                state.match_record(include_legal=True)), "clone-then-apply changed the original"
        state.apply(action)
        steps += 1
        for team in (0, 1):
            gained = state.score[team] - before[team]
            assert gained >= 0
            if gained:
                assert gained in allowed, (
                    f"{action!r} in phase {phase} credited team {team} {gained}, allowed {sorted(allowed)}")
        assert steps < 5000, "match does not end"
    return state


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_random_matches_end_with_one_winner(variant):
    preset, overrides = variant
    cfg = make_config(preset, **overrides)
    for seed in range(MATCHES_PER_VARIANT):
        state = play_random_match(preset, overrides, seed, check_clone=seed < 10)
        assert state.actor is None and state.legal_actions() == []
        winner = state.winner
        if cfg.single_hand and max(state.score) < cfg.target_score:  # research variant: one hand decides
            points = state.hand_records[0]["points"]
            assert len(state.hand_records) == 1
            assert winner == (None if points[0] == points[1] else int(points[1] > points[0]))
            continue
        assert winner in (0, 1)
        assert state.score[winner] >= cfg.target_score
        if cfg.end_match_immediately:
            assert state.score[1 - winner] < cfg.target_score
        records = state.hand_records
        assert records[0]["score_before"] == [0, 0]
        for previous, record in itertools.pairwise(records):
            assert record["score_before"] == previous["score_after"]
        for index, record in enumerate(records):
            gained = [a - b for a, b in zip(record["score_after"], record["score_before"])]
            assert gained == record["points"]
            sources = state.hand_point_sources(index)
            assert [sum(team) for team in zip(*sources.values())] == record["points"], sources
            if not cfg.flor:
                assert sources["flor"] == (0, 0)
        assert list(state.score) == records[-1]["score_after"]
        with pytest.raises(ValueError, match="match is over"):
            state.apply(records[-1]["actions"][-1][1])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_same_seed_same_match(preset):
    first = play_random_match(preset, {}, seed=123)
    second = play_random_match(preset, {}, seed=123)
    other = play_random_match(preset, {}, seed=124)
    assert first.match_record(include_legal=True) == second.match_record(include_legal=True)
    assert first.match_record() != other.match_record()


def test_deal_follows_the_reference_procedure():
    """docs/rules.md §2.3: card k of the shuffled deck goes to seat (mano + k) mod n; card 3n is the vira."""
    from truco_env import cards

    for preset in ("argentine-3v3", "paulista-2v2"):
        cfg = make_config(preset)
        state = TrucoState.new(cfg, seed=9)
        n = cfg.num_players
        deck = list(cards.deck(cfg.family, cfg.deck))
        random.Random("9:0").shuffle(deck)
        mano = (state.dealer + 1) % n
        expected = [[] for _ in range(n)]
        for k in range(3 * n):
            expected[(mano + k) % n].append(cards.card_text(deck[k], cfg.family))
        record = state.hand_records[0]
        assert record["deal"]["hands"] == expected
        assert record["deal"]["vira"] == (cards.card_text(deck[3 * n], cfg.family) if cfg.family == "paulista" else None)
        assert state.actor == mano or state.phase != PLAY


def test_pica_pica_alternates_redonda_and_three_duels():
    state = TrucoState.new(make_config("argentine-3v3", pica_pica=True), seed=4, deal={"dealer": 5})
    rng = random.Random(4)
    while len(state.hand_records) < 5 and not state.is_over:
        state.apply(rng.choice(state.legal_actions()))
    records = state.hand_records
    assert "pair" not in records[0]  # the first deal is a redonda
    # the second deal (dealer 0, mano 1) is played as three duels, starting with the mano's pair
    assert [r["pair"] for r in records[1:4]] == [[1, 4], [2, 5], [0, 3]]
    assert all(r["dealer"] == 0 and r["deal"] == records[1]["deal"] for r in records[1:4])
    assert all({seat for seat, _ in r["actions"]} <= set(r["pair"]) for r in records[1:4])
    assert "pair" not in records[4] and records[4]["dealer"] == 1
