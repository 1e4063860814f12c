"""Agents: the observation decoder, HeuristicAgent's legality and decisions on every preset, and agent specs.

The heuristic must act on its observation dict alone, so every test here hands it an observation built by
``encode_observation`` / ``encode_action_mask`` and checks what it chose, never its internals' access to the state.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from agents import make_agent
from agents.base import available_kinds
from agents.heuristic import HeuristicAgent, match_equity_table
from agents.view import OPP, OWN, TIE, decode
from truco_env import PRESETS, TrucoState, actions, cards, make_config
from truco_env.encoding import encode_action_mask, encode_observation
from truco_env.engine import TIE as ENGINE_TIE

CONFIGS = {
    **PRESETS,
    "argentine-3v3-pica-pica": make_config("argentine-3v3", pica_pica=True),
    "paulista-options": make_config("paulista", covered_card=True, paulista_mazo=True,
                                    mao_de_onze_decider="any_accepts", mao_de_onze_truco="caller_loses_match"),
    "paulista-2v2-clean": make_config("paulista-2v2", deck="clean", all_tricks_tied="mao_team",
                                      lead_after_tie="first_tied_card", forbid_useless_raise=True),
    "argentine-2v2-flor": make_config("argentine-2v2", flor=True, falta_envido="malas_match",
                                      envido_tie="mano_team", responder="team_pie"),
}


def observe(state: TrucoState, seat: int | None = None) -> dict:
    seat = state.actor if seat is None else seat
    return {"observation": encode_observation(state, seat), "action_mask": encode_action_mask(state)}


def act_name(agent, state: TrucoState) -> str:
    return actions.action_name(agent.act(observe(state)), state.family)


def card_played(agent, state: TrucoState) -> str:
    """The card the agent ends its turn with; the opponents accept any call it makes on the way."""
    seat = state.actor
    for _ in range(10):
        if state.actor == seat:
            name = act_name(agent, state)
            if name.startswith(("play", "cover")):
                return name
        else:
            name = "quiero" if "quiero" in state.legal_actions() else state.legal_actions()[0]
        state.apply(name)
    raise AssertionError("no card played")


def heuristic(**kwargs) -> HeuristicAgent:
    agent = HeuristicAgent(seed=kwargs.pop("seed", 0), **kwargs)
    agent.reset(0)
    return agent


# ------------------------------------------------------------------------------------------------ decoder


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_view_decodes_what_the_engine_shows(name):
    config = CONFIGS[name]
    rng = random.Random(7)
    for seed in range(3):
        state = TrucoState.new(config, seed=seed, score=[config.target_score - 1, 0] if seed == 1 else None)
        steps = 0
        while not state.is_over and steps < 400:
            seat = state.actor
            v = decode(observe(state))
            n = config.num_players
            team = seat % 2
            assert v.family == config.family and v.num_players == n and v.hand_size == config.hand_size
            if config.target_score <= 30:
                assert v.target == config.target_score
                assert v.score == (state.score[team], state.score[1 - team])
            assert v.phase == state.phase
            assert sorted(v.legal_names) == sorted(state.legal_actions())
            assert v.mano == (state.mano - seat) % n and v.dealer == (state.dealer - seat) % n
            assert v.participants == sorted((s - seat) % n for s in state.participants)
            blind = state.special_hand == "mao_de_ferro" and config.mao_de_ferro_blind
            assert sorted(v.hand) == ([] if blind else sorted(state.remaining_cards(seat)))
            expected = [ENGINE_TIE if r == ENGINE_TIE else r for r in state.trick_results]
            assert v.trick_results == [TIE if r == ENGINE_TIE else (OWN if r == team else OPP) for r in expected]
            assert v.truco_level == state.truco_level and v.hand_value == state.hand_value
            for trick_number, trick in enumerate([*state.tricks, state.current_trick]):
                for s, card, covered in trick:
                    rel = (s - seat) % n
                    if covered:
                        assert rel in v.covered[trick_number]
                    else:
                        assert v.table[trick_number][rel] == card
            if config.family == cards.PAULISTA:
                assert v.vira == state.vira
                assert v.strength == cards.strength_table(config.family, state.vira, config.deck, config.deck_ranks)
            state.apply(rng.choice(state.legal_actions()))
            steps += 1


def test_view_deck_of_a_research_preset_is_the_shipped_reduced_deck():
    for preset in ("argentine-mini", "paulista-mini"):
        config = PRESETS[preset]
        state = TrucoState.new(config, seed=3)
        v = decode(observe(state))
        assert v.deck() == cards.deck(config.family, config.deck, config.deck_ranks)


# ------------------------------------------------------------------------------------------------ legality


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_heuristic_plays_legal_complete_matches_on_every_preset(name):
    config = CONFIGS[name]
    for seed in range(2):
        agents = [heuristic(seed=seed * 10 + s, bluff=0.3) if s % 2 == 0 else make_agent("random")
                  for s in range(config.num_players)]
        for s, agent in enumerate(agents):
            agent.seed(s)
        state = TrucoState.new(config, seed=seed)
        steps = 0
        while not state.is_over:
            name_ = act_name(agents[state.actor], state)
            assert name_ in state.legal_actions()
            state.apply(name_)
            steps += 1
            assert steps < 5000


def test_heuristic_is_a_function_of_observation_and_seed():
    config = make_config("argentine")
    state = TrucoState.new(config, seed=11)
    obs = observe(state)
    frozen = {k: np.array(v, copy=True) for k, v in obs.items()}
    first = [HeuristicAgent(seed=5).act(obs) for _ in range(3)]
    assert len(set(first)) == 1
    for key in obs:  # the agent must not write into what it is shown
        assert np.array_equal(obs[key], frozen[key])


def test_heuristic_rejects_an_empty_mask():
    state = TrucoState.new(make_config("argentine"), seed=0)
    obs = observe(state)
    obs["action_mask"] = np.zeros_like(obs["action_mask"])
    with pytest.raises(ValueError, match="no legal action"):
        HeuristicAgent().act(obs)


# ------------------------------------------------------------------------------------------------ decisions

ARG_DEALER1 = {"vira": None, "dealer": 1}  # seat 0 is the mano


def arg_state(hands, score=None, preset="argentine", **overrides):
    return TrucoState.new(make_config(preset, **overrides), seed=0, deal={"hands": hands, **ARG_DEALER1},
                          score=score)


def test_wins_a_trick_as_cheaply_as_possible_and_keeps_the_top_card():
    state = arg_state([["4e", "5o", "6b"], ["1e", "5b", "12c"]])
    state.apply("play:4e")
    assert card_played(heuristic(), state) == "play:5b"


def test_plays_low_when_it_cannot_win_the_trick():
    state = arg_state([["1e", "6o", "5c"], ["4b", "3c", "11o"]])
    state.apply("play:1e")
    assert card_played(heuristic(), state) == "play:4b"


def test_accepts_or_raises_truco_with_the_best_cards_and_refuses_with_the_worst():
    strong = arg_state([["4c", "5o", "6b"], ["1e", "1b", "7o"]])  # envido 7: no envido va primero
    strong.apply("truco")
    assert act_name(heuristic(), strong) in ("quiero", "retruco")
    weak = arg_state([["1e", "1b", "7e"], ["4c", "4o", "5b"]])
    weak.apply("truco")
    assert act_name(heuristic(), weak) == "no_quiero"


def test_envido_by_points():
    good = arg_state([["7c", "6c", "4b"], ["4e", "5o", "12b"]])  # 33 as the mano cannot lose: even the falta
    assert act_name(heuristic(), good) in ("envido", "real_envido", "falta_envido")
    fair = arg_state([["7c", "2c", "4b"], ["4e", "5o", "12b"]])  # 29: worth a call, not the match
    assert act_name(heuristic(), fair) in ("envido", "real_envido")
    answer_good = arg_state([["4e", "5o", "12b"], ["7c", "6c", "4b"]])
    answer_good.apply("envido")
    assert act_name(heuristic(), answer_good) in ("quiero", "envido", "real_envido", "falta_envido")
    answer_bad = arg_state([["7c", "6c", "4b"], ["10e", "11o", "12b"]])
    answer_bad.apply("envido")
    assert act_name(heuristic(), answer_bad) == "no_quiero"


def test_falta_envido_is_refused_without_a_clear_favourite():
    state = arg_state([["7c", "5c", "4b"], ["4e", "2e", "12b"]])  # 26 for the answering seat 1
    state.apply("falta_envido")
    assert act_name(heuristic(), state) == "no_quiero"


def test_bluff_rate_is_configurable():
    hands = [["4c", "5o", "6b"], ["1e", "2b", "3c"]]  # seat 0: a hopeless hand, no envido
    calls = {0.0: 0, 1.0: 0}
    for bluff in calls:
        for seed in range(10):
            state = arg_state(hands)
            calls[bluff] += act_name(heuristic(bluff=bluff, seed=seed), state) == "truco"
    assert calls[0.0] == 0 and calls[1.0] == 10


def test_team_play_does_not_overtake_a_winning_partner():
    # argentine-2v2, dealer 3, mano seat 0; seat 2 (partner of 0) sees its partner winning the trick with 1e
    config = make_config("argentine-2v2")
    state = TrucoState.new(config, seed=0, deal={"hands": [["1e", "4o", "5c"], ["4b", "5b", "6e"],
                                                           ["7e", "3c", "6o"], ["12b", "11o", "10e"]],
                                                 "vira": None, "dealer": 3})
    state.apply("play:1e")
    state.apply("play:4b")
    assert state.actor == 2
    assert card_played(heuristic(), state) == "play:6o"


def test_mao_de_onze_plays_strong_hands_and_runs_with_weak_ones():
    config = make_config("paulista")
    strong = TrucoState.new(config, seed=0, score=[11, 6],
                            deal={"hands": [["5c", "5h", "3s"], ["4d", "6s", "7d"]], "vira": "4s", "dealer": 1})
    assert strong.phase == "onze" and strong.actor == 0
    assert act_name(heuristic(), strong) == "quiero"
    weak = TrucoState.new(config, seed=0, score=[11, 6],
                          deal={"hands": [["4d", "6s", "7d"], ["5c", "5h", "3s"]], "vira": "4s", "dealer": 1})
    assert act_name(heuristic(), weak) == "no_quiero"


def test_manilhas_count_in_paulista_truco_answers():
    config = make_config("paulista")
    # vira 4s: the 5s are manilhas; seat 1 holds zap and copas
    state = TrucoState.new(config, seed=0, deal={"hands": [["3d", "2c", "Ad"], ["5c", "5h", "4d"]], "vira": "4s",
                                                 "dealer": 1})
    state.apply("truco")
    assert act_name(heuristic(), state) in ("quiero", "seis")


def test_match_equity_table_is_a_probability_and_favours_the_leader():
    table = match_equity_table(30, cards.ARGENTINE)
    assert abs(table[0][0] - 0.5) < 1e-9
    assert table[20][10] > table[10][10] > table[10][20]
    assert all(0.0 <= x <= 1.0 for row in table for x in row)
    assert match_equity_table(12, cards.PAULISTA, 0.1)[0][0] > 0.5


# ------------------------------------------------------------------------------------------------ specs


def test_heuristic_spec_parameters():
    agent = make_agent("heuristic:bluff=0.3,samples=16,respect=0,edge=0,seed=4")
    assert isinstance(agent, HeuristicAgent)
    assert (agent.bluff, agent.samples, agent.respect, agent.edge) == (0.3, 16, 0.0, 0.0)
    assert agent.spec == "heuristic:bluff=0.3,samples=16,respect=0,edge=0,seed=4"
    assert "heuristic" in available_kinds() and "random" in available_kinds()


@pytest.mark.parametrize("spec, message", [
    ("heuristic:colour=red", (r"unknown parameter.*allowed: bluff=<a number>, samples=<an integer>, "
                              r"respect=<a number>, edge=<a number>, signal=<0 or 1>, seed=<an integer in 0\.\.2\*\*63-1>")),
    ("heuristic:bluff=lots", "bluff must be a number"),
    ("heuristic:bluff=1.5", r"bluff must be in \[0, 1\]"),
    ("heuristic:samples=2", "samples must be in"),
    ("heuristic:some/path.npz", "takes key=value parameters"),
    ("heuristic:bluff=0.3,bluff=0.5", "'bluff' is given twice"),
    ("grandmaster", r"unknown agent kind 'grandmaster'; available: \[.*'heuristic'.*'random'"),
    ("", "non-empty string"),
])
def test_bad_specs_say_what_is_allowed(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_swap_agent_hands_exactly_the_named_decisions_to_the_heuristic():
    """``swap:POLICY,on=cards`` plays the heuristic's card where both would play a card and the policy's
    choice everywhere else; ``on=none`` is the policy alone."""
    from agents.swap import SWAP_KINDS, decision_kind

    config = make_config("paulista-2v2")
    agents = {on: make_agent(f"swap:paulista-2v2,on={on}") for on in ("cards", "bets+answers+onze", "none")}
    policy, heuristic = make_agent("ppo:paulista-2v2,greedy"), make_agent("heuristic")
    for agent in [*agents.values(), heuristic]:
        agent.seed(3)
        agent.reset(0)
    seen = set()
    state = TrucoState.new(config, seed=11)
    rng = random.Random(0)
    while not state.is_over and len(seen) < 3:
        seat = state.actor
        obs = {"observation": encode_observation(state, seat), "action_mask": encode_action_mask(state)}
        own, other = policy.act(obs), heuristic.act(obs)
        kind = decision_kind(decode(obs).phase, own, other)
        assert kind in SWAP_KINDS
        seen.add(kind)
        assert agents["cards"].act(obs) == (other if kind == "cards" else own)
        assert agents["bets+answers+onze"].act(obs) == (own if kind == "cards" else other)
        assert agents["none"].act(obs) == own
        state.apply(rng.choice(state.legal_actions()))
    assert {"cards", "bets"} <= seen
    with pytest.raises(ValueError, match=r"unknown decision kinds \['tricks'\]; choose from \['cards', 'bets', "
                                         r"'answers', 'onze', 'none'\]"):
        make_agent("swap:paulista-2v2,on=tricks")
    with pytest.raises(ValueError, match=r"agent 'swap' needs swap:POLICY,on=KINDS"):
        make_agent("swap:paulista-2v2")
    # the mão de onze is Paulista's: swapped in an Argentine game it swapped nothing, silently
    with pytest.raises(ValueError, match=r"agent 'swap': cfr:argentine plays \['argentine'\], whose games have no "
                                         r"onze decisions"):
        make_agent("swap:cfr:argentine,on=cards+onze")


def test_swap_agent_takes_a_blueprint_too():
    """``swap:cfr:P,on=KINDS`` measures a blueprint the same way: the blueprint acts, but not where swapped."""
    from agents.swap import decision_kind

    config = make_config("paulista-2v2")
    swapped, blueprint, heuristic = (make_agent(s) for s in ("swap:cfr:paulista-2v2,on=cards", "cfr:paulista-2v2",
                                                             "heuristic"))
    assert type(swapped.policy) is type(blueprint) and swapped.presets == blueprint.presets == ("paulista-2v2",)
    for agent in (swapped, blueprint, heuristic):
        agent.seed(5)
        agent.reset(0)
    state, rng, kinds = TrucoState.new(config, seed=2), random.Random(1), set()
    while not state.is_over and len(kinds) < 2:
        obs = {"observation": encode_observation(state, state.actor), "action_mask": encode_action_mask(state)}
        own, other = blueprint.act(obs), heuristic.act(obs)
        kind = decision_kind(decode(obs).phase, own, other)
        kinds.add(kind)
        assert swapped.act(obs) == (other if kind == "cards" else own)
        state.apply(rng.choice(state.legal_actions()))
    assert "cards" in kinds
