"""The searching agent (agents/search.py): its spec, that it changes nothing where it is told to overrule nothing,
that it is seeded, and that its rollouts price actions in match-win probability."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.belief import hand_view, rules_of, weigh_deals
from agents.search import SearchAgent, rollout_values
from training.measure.evaluate import run_tournament
from truco_env import TrucoState, _kernel, actions, cards, make_config
from truco_env.turns import observation_for


def outcomes(summary: dict) -> list[tuple]:
    return [(m["deal"], m["swapped"], m["score_a"], m["score_b"], m["hands"]) for m in summary["matches"]]


def test_a_search_that_overrules_nothing_plays_as_its_agent():
    """margin=1 (no gain can clear it): the same matches as the agent alone, deal for deal."""
    alone, _ = run_tournament(["ppo:argentine", "random"], ["argentine"], 4, seed=3, workers=1, progress=False)
    searched, _ = run_tournament(["search:ppo:argentine,worlds=4,margin=1", "random"], ["argentine"], 4, seed=3,
                                 workers=1, progress=False)
    assert outcomes(searched) == outcomes(alone)


def test_the_same_seed_gives_the_same_decisions_and_the_search_acts():
    spec = "search:ppo:paulista,worlds=8"
    runs = [run_tournament([spec, "heuristic"], ["paulista"], 2, seed=5, workers=1, progress=False)[0]
            for _ in range(2)]
    assert outcomes(runs[0]) == outcomes(runs[1])
    agent = make_agent(spec)
    config = make_config("paulista")
    state = TrucoState.new(config, seed=2)
    agent.seed(1)
    decisions = []
    while not state.is_over and len(decisions) < 40:
        decisions.append(actions.action_name(agent.act(observation_for(agent, state, state.actor)), config.family))
        state.apply(decisions[-1])
    assert agent.search_stats["searched"] > 10  # it searched most of them (a decision with one legal action is not)


SURE_HAND = {"hands": [["1e", "1b", "7e"], ["4c", "5o", "6b"]], "dealer": 1}


def sure_hand(spec: str):
    """Seat 0 to act at 20-20 holding the three strongest cards of Argentine Truco: the agent, the rules and the
    one world that is the real deal."""
    state = TrucoState.new(make_config("argentine"), deal=SURE_HAND, score=(20, 20))
    agent = make_agent(spec)
    observation = observation_for(agent, state, 0)
    rules = rules_of(observation["observation"])
    real = np.array([[cards.parse_card(c, "argentine") for h in SURE_HAND["hands"] for c in h]], dtype=np.int32)
    return agent, rules, weigh_deals(hand_view(observation, rules), rules, agent.model, real)


def test_rollouts_price_folding_a_sure_hand_below_playing_it():
    """Going to the mazo with the three strongest cards gives the hand away, playing wins it; the rollouts,
    valued by match equity, say so."""
    agent, rules, worlds = sure_hand("search:ppo:argentine")
    play, mazo = actions.action_id("play:1e", "argentine"), actions.action_id("mazo", "argentine")
    values = rollout_values(np.repeat(worlds.states, 16, axis=0), [play, mazo], rules, agent.model, 0,
                            np.random.default_rng(0))
    assert values.shape == (2,) and 0 <= values.min() and values.max() <= 1
    assert values[0] > values[1] + 0.05, values


@pytest.mark.parametrize("spec,words", [
    ("search", "needs an agent to search with"),
    ("search:heuristic", "gives no action probabilities"),
    ("search:ppo:argentine,on=cards+dance", "unknown decision kinds ['dance']"),
    ("search:ppo:argentine,worlds=0", "worlds must be an integer 1..4096"),
    ("search:ppo:argentine,margin=" + "9" * 5000, "margin must be a number 0..1"),
    ("search:search:ppo:argentine", "a search inside a search"),
    ("search:ppo:argentine,worlds=32,worlds=2", "worlds is given twice"),
    # the value given, not int()'s words about it ("invalid literal for int() with base 10: ..."), and which option
    ("search:ppo:argentine,worlds=nan", "worlds must be an integer 1..4096, got 'nan'"),
    ("search:ppo:argentine,worlds=3.5", "worlds must be an integer 1..4096, got '3.5'"),
    ("search:ppo:argentine,margin=", "margin must be a number 0..1, got ''"),
    ("search:ppo:argentine,margin=inf", "margin must be a number 0..1, got 'inf'"),
    # a space before the inner spec hid the nested search, which then failed as "gives no action probabilities"
    ("search: search:ppo:argentine", "a search inside a search"),
    ("search:,", "needs an agent to search with"),
    # a misspelt search option is refused by the agent searched with, whose words alone named only its options
    ("search:ppo:argentine,world=8", "worlds=W, margin=M, on=KINDS"),
    ("search:cfr:paulista,margins=0.1", "worlds=W, margin=M, on=KINDS"),
    # a kind the agent's games never have: the search searched nothing there, silently
    ("search:ppo:argentine-2v2,on=cards+signals", "whose games have no signals decisions"),
    ("search:ppo:uruguayan,on=onze", "whose games have no onze decisions"),
])
def test_a_bad_search_spec_is_one_line_naming_the_option_and_the_value(spec, words):
    with pytest.raises(ValueError) as failure:
        make_agent(spec)
    message = str(failure.value)
    assert words in message and "invalid literal" not in message and "\n" not in message, message
    assert len(message) < 400, message


def test_a_senas_network_searches_its_signals(tmp_path):
    from agents.network import PolicyNet
    from training.learn.ppo import save_policy
    from truco_env import PRESETS
    from truco_env.encoding import observation_size

    preset = "argentine-2v2-senas"
    net = PolicyNet(obs_size=observation_size(PRESETS[preset]), num_actions=actions.num_actions(PRESETS[preset]),
                    hidden=(16,))
    save_policy(net, str(tmp_path / "senas.safetensors"), presets=[preset])
    agent = make_agent(f"search:ppo:{tmp_path / 'senas.safetensors'},on=cards+signals")
    assert agent.on == frozenset({"cards", "signals"})


def test_the_search_wraps_blueprints_and_keeps_their_preset():
    agent = make_agent("search:cfr:paulista,worlds=4")
    assert isinstance(agent, SearchAgent) and agent.presets == ("paulista",)
    assert "info_state_string" in agent.wants


def test_a_searching_agent_is_keyed_on_the_file_it_searches_with():
    """The report keys every stage on the agents' files: a search of a retrained policy is measured again."""
    from training.measure.exploit import agent_file_hash

    assert agent_file_hash("search:ppo:argentine,worlds=8") == agent_file_hash("ppo:argentine") is not None
    assert agent_file_hash("search:cfr:paulista") == agent_file_hash("cfr:paulista") is not None


def test_each_action_has_its_kind():
    from agents.search import action_kind

    assert action_kind(_kernel.PLAY, actions.action_id("play:1e", "argentine")) == "cards"
    assert action_kind(_kernel.PLAY, actions.action_id("truco", "argentine")) == "bets"
    assert action_kind(_kernel.PLAY, actions.action_id("sena:wink", "argentine")) == "signals"
    assert action_kind(_kernel.TRUCO, actions.action_id("quiero", "argentine")) == "answers"
    assert action_kind(_kernel.ONZE, actions.action_id("quiero", "paulista")) == "onze"


def test_the_docs_state_the_search_defaults_the_code_has():
    """docs/search.md and docs/evaluation.md quote the options' defaults: they must be the code's."""
    from pathlib import Path

    from agents.search import DEFAULTS, SEARCH_KINDS

    docs = Path(__file__).resolve().parents[1] / "docs"
    search, evaluation = (docs / "search.md").read_text(), (docs / "evaluation.md").read_text()
    assert f"`worlds=W` ({DEFAULTS['worlds']})" in search and f"`margin=M` ({DEFAULTS['margin']})" in search
    assert all(f"`{kind}`" in search for kind in SEARCH_KINDS)
    assert f"`worlds={DEFAULTS['worlds']}`, `margin={DEFAULTS['margin']}`" in evaluation
    assert f"`on={DEFAULTS['on']}`" in evaluation and f"`{DEFAULTS['on']}` by default" in search


def searched_views(spec: str, preset: str, tables: int) -> tuple[list, list[dict]]:
    """An agent of ``spec`` per table, seeded by the table, and a decision point of seeded random play for each."""
    from training.people.export import random_positions

    agents, views = [], []
    for table, (state, seat) in enumerate(random_positions(preset, tables, seed=0)):
        agent = make_agent(spec)
        agent.seed(table)
        agents.append(agent)
        views.append(observation_for(agent, state, seat))
    return agents, views


def test_tables_searched_together_decide_as_each_alone():
    """A best response's batch of matches asks every table's search in one network call per round
    (``act_together``): each table must still get the decision its agent makes alone, and the agents searched."""
    spec = "search:ppo:paulista,worlds=8,on=cards+bets+answers"
    alone_agents, views = searched_views(spec, "paulista", 12)
    alone = [agent.act(view) for agent, view in zip(alone_agents, views)]
    together_agents, _ = searched_views(spec, "paulista", 12)
    obs = np.stack([v["observation"] for v in views])
    mask = np.stack([v["action_mask"] for v in views])
    together = SearchAgent.act_together(together_agents, obs, mask, views)
    assert list(together) == alone
    assert sum(agent.search_stats["searched"] for agent in together_agents) >= 6
    assert [a.search_stats for a in together_agents] == [a.search_stats for a in alone_agents]
