"""Scripted gauntlet opponents (agents/scripted.py): legality on every preset, determinism, the archetypes'
defining habits, the threshold rules, the floor against ``random`` and spec errors.

Behaviour is checked on what the agents choose from their observation dicts in real matches and forced deals,
never on their internals."""
from __future__ import annotations

import pytest

from agents import make_agent
from agents.base import Agent, observation_for
from agents.scripted import ManiacAgent, StationAgent, ThresholdAgent
from agents.view import decode
from training.measure.evaluate import play_match, run_tournament
from truco_env import PRESETS, TrucoState, actions, make_config

KINDS = ("threshold", "station", "maniac")
LADDER = ("truco", "retruco", "vale_cuatro", "seis", "nove", "doze")
ENVIDO = ("envido", "real_envido", "falta_envido")


class Logged(Agent):
    """Wraps an agent and logs, per decision, the phase, the legal action names and the chosen name."""

    def __init__(self, inner: Agent):
        self.inner = inner
        self.spec = inner.spec
        self.log: list[tuple[str, list[str], str]] = []

    def seed(self, seed=None):
        self.inner.seed(seed)

    def reset(self, seat=None):
        self.inner.reset(seat)

    def act(self, observation):
        action = self.inner.act(observation)
        view = decode(observation)
        self.log.append((view.phase, view.legal_names, view.name_of(int(action))))
        return action


def match(preset: str, specs: list[str], seed: int, agent_seed: int = 0):
    """One match with ``specs[seat % 2]`` at each seat (team 0 = specs[0]); returns the state and the agents."""
    config = make_config(preset)
    agents = []
    for seat in range(config.num_players):
        agent = Logged(make_agent(specs[seat % 2]))
        agent.seed(agent_seed * 100 + seat)
        agent.reset(seat)
        agents.append(agent)
    state, _, _ = play_match(config, agents, seed)
    return state, agents


def decisions(agents, team: int = 0):
    return [entry for seat, agent in enumerate(agents) if seat % 2 == team for entry in agent.log]


# ------------------------------------------------------------------------------------------------ legality


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_plays_whole_matches_on_every_preset(kind, preset):
    """play_match raises on any illegal action; the opponents cover random, a prober and a caller."""
    for seed, opponent in enumerate(("random", "maniac", "station", "threshold")):
        state, agents = match(preset, [kind, opponent], seed)
        assert state.is_over and (state.winner in (0, 1) or PRESETS[preset].single_hand)  # one hand may draw
        assert all(name != "mazo" or legal == ["mazo"] for _, legal, name in decisions(agents))


@pytest.mark.parametrize("preset", ["paulista", "paulista-2v2", "paulista-clean"])
@pytest.mark.parametrize("score", [(11, 0), (0, 11), (11, 11)])
def test_mao_de_onze_and_mao_de_ferro_are_legal(preset, score):
    """Starting at 11 forces the mão de onze decision (and 11-11 the blind mão de ferro) at once."""
    config = make_config(preset)
    for kind in KINDS:
        agents = [make_agent(kind if seat % 2 == 0 else "threshold") for seat in range(config.num_players)]
        for seed in range(3):
            state = TrucoState.new(config, seed=seed, score=list(score))
            for steps in range(5000):
                if state.is_over:
                    break
                agent = agents[state.actor]
                state.apply(actions.action_name(agent.act(observation_for(agent, state, state.actor)), config.family))
            assert state.is_over


# ------------------------------------------------------------------------------------------------ determinism


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("preset", ["argentine-flor", "paulista-2v2"])
def test_same_seed_same_match(kind, preset):
    first = match(preset, [kind, "maniac"], seed=5, agent_seed=3)[0].match_record()
    again = match(preset, [kind, "maniac"], seed=5, agent_seed=3)[0].match_record()
    assert first == again
    # reseeding one agent object reproduces its match too (tournaments reuse agents across matches)
    config = make_config(preset)
    agents = [make_agent(kind), make_agent("maniac")] * (config.num_players // 2)
    records = []
    for _ in range(2):
        for seat, agent in enumerate(agents):
            agent.seed(seat)
            agent.reset(seat)
        records.append(play_match(config, agents, 9)[0].match_record())
    assert records[0] == records[1]


def test_maniac_seed_changes_its_cards():
    records = {str(match("argentine", ["maniac", "station"], seed=1, agent_seed=s)[0].match_record())
               for s in range(4)}
    assert len(records) > 1


# ------------------------------------------------------------------------------------------------ archetypes


@pytest.mark.parametrize("preset", ["argentine", "argentine-2v2", "paulista", "argentine-flor"])
def test_station_accepts_everything_and_proposes_nothing(preset):
    answered = 0
    for seed in range(3):
        _, agents = match(preset, ["station", "maniac"], seed)
        for phase, legal, name in decisions(agents):
            assert name not in LADDER and name not in ENVIDO, (phase, legal, name)
            assert name not in ("no_quiero", "mazo") and not name.startswith("contraflor")
            if phase in ("truco", "envido", "onze"):
                assert name == "quiero"
                answered += 1
    assert answered > 10  # the maniac proposes a lot: the check above is not vacuous


@pytest.mark.parametrize("preset", ["argentine", "paulista", "argentine-2v2"])
def test_maniac_raises_and_calls_whenever_legal(preset):
    trucos = 0
    for seed in range(3):
        _, agents = match(preset, ["maniac", "threshold"], seed)
        for phase, legal, name in decisions(agents):
            assert name not in ("no_quiero", "mazo") or len(legal) == 1
            if any(n in legal for n in ENVIDO):
                assert name in ENVIDO
            elif any(n in legal for n in LADDER):
                assert name in LADDER
                trucos += name == "truco"
            elif phase != "play":
                assert name == "quiero"
    assert trucos > 3


def test_threshold_zero_accepts_every_ladder_call():
    answered = 0
    for preset in ("argentine", "paulista", "argentine-2v2"):
        for seed in range(3):
            _, agents = match(preset, ["threshold:bet=0,call=0", "maniac"], seed)
            for phase, legal, name in decisions(agents):
                if phase == "truco":
                    assert name != "no_quiero", legal
                    answered += 1
                elif phase == "play" and "truco" in legal and not any(n in legal for n in ENVIDO):
                    assert name == "truco"  # bet=0: every hand is worth a call
    assert answered > 10


def test_threshold_one_never_proposes_and_refuses():
    refused = 0
    for preset in ("argentine", "paulista", "argentine-2v2"):
        for seed in range(3):
            _, agents = match(preset, ["threshold:bet=1,call=1", "maniac"], seed)
            for phase, _legal, name in decisions(agents):
                assert name not in LADDER
                if phase == "truco":
                    assert name == "no_quiero" or name in ENVIDO  # envido first, then the refusal
                    refused += name == "no_quiero"
    assert refused > 10


def test_thresholds_order_the_bots():
    """Raising bet makes the agent propose less often (same deals, same opponent)."""
    def proposals(spec):
        total = 0
        for seed in range(4):
            _, agents = match("argentine", [spec, "station"], seed)
            total += sum(name in LADDER for _, _, name in decisions(agents))
        return total
    assert proposals("threshold:bet=0.5") > proposals("threshold:bet=0.72") > proposals("threshold:bet=0.9")


# ------------------------------------------------------------------------------------------------ forced deals


def first_choice(agent: Agent, preset: str, deal: dict, plays: list[str] = (), score=None) -> str:
    """The agent's first action after the seats to act have played ``plays`` (names, in order)."""
    config = make_config(preset)
    state = TrucoState.new(config, seed=0, deal=deal, score=score)
    for name in plays:
        state.apply(name)
    agent.reset(state.actor)
    return actions.action_name(agent.act(observation_for(agent, state, state.actor)), config.family)


def test_threshold_card_rule():
    quiet = ThresholdAgent(bet=1, call=1)  # no calls: the card rule alone
    hands = {"hands": [["1e", "7o", "4c"], ["3e", "2o", "5c"]], "dealer": 1}
    assert first_choice(quiet, "argentine", hands) == "play:7o"  # trick 1: lead the middle card
    assert first_choice(quiet, "argentine", hands, ["play:4c"]) == "play:5c"  # cheapest winner
    assert first_choice(quiet, "argentine", hands, ["play:1e"]) == "play:5c"  # cannot win: lowest
    # later tricks: lead the highest
    assert first_choice(quiet, "argentine", hands, ["play:4c", "play:5c"]) == "play:3e"
    # 2v2: the partner's winning card is not overtaken
    team = {"hands": [["3e", "4b", "5b"], ["4c", "6o", "6c"], ["1e", "5o", "6b"], ["4o", "5e", "7b"]],
            "dealer": 3}
    assert first_choice(quiet, "argentine-2v2", team, ["play:3e", "play:4c"]) == "play:5o"
    assert first_choice(quiet, "argentine-2v2", team, ["play:4b", "play:6o"]) == "play:1e"


def test_threshold_envido_and_truco_rules():
    agent = ThresholdAgent()
    # 33 points (7c 6c): real envido at >= 30; no falta at 0-0 (losing it would hand over the match)
    assert first_choice(agent, "argentine", {"hands": [["7c", "6c", "4e"], ["4o", "5o", "12b"]], "dealer": 1}) \
        == "real_envido"
    # ... but a falta when it is cheap (we lead 20-5: losing it would not end the match)
    assert first_choice(agent, "argentine", {"hands": [["7c", "6c", "4e"], ["4o", "5o", "12b"]], "dealer": 1},
                        score=[20, 5]) == "falta_envido"
    # 27 points: envido; 20 points and strong cards: truco, then the card
    assert first_choice(agent, "argentine", {"hands": [["7o", "10o", "4e"], ["4c", "5c", "12b"]], "dealer": 1}) \
        == "envido"
    strong = {"hands": [["1e", "1b", "3o"], ["4c", "5c", "12b"]], "dealer": 1}
    assert first_choice(agent, "argentine", strong) == "truco"
    # answering: a weak hand refuses a truco, accepts an envido only at >= 26
    weak = {"hands": [["3e", "2o", "1b"], ["4c", "5o", "6b"]], "dealer": 1}
    assert first_choice(agent, "argentine", weak, ["truco"]) == "no_quiero"
    assert first_choice(agent, "argentine", weak, ["envido"]) == "no_quiero"
    assert first_choice(agent, "argentine", strong | {"hands": [["4c", "5c", "12b"], ["1e", "1b", "3o"]]},
                        ["truco"]) == "retruco"  # a very strong hand raises the answer


def test_threshold_mao_de_onze():
    agent = ThresholdAgent()
    deal = {"vira": "4d", "dealer": 1}  # manilhas are the 5s
    strong = deal | {"hands": [["5c", "5h", "3s"], ["4c", "6h", "7s"]]}
    weak = deal | {"hands": [["4c", "6h", "7s"], ["5c", "5h", "3s"]]}
    assert first_choice(agent, "paulista", strong, score=[11, 3]) == "quiero"
    assert first_choice(agent, "paulista", weak, score=[11, 3]) == "no_quiero"
    assert first_choice(StationAgent(), "paulista", weak, score=[11, 3]) == "quiero"
    assert first_choice(ManiacAgent(), "paulista", weak, score=[11, 3]) == "quiero"


# ------------------------------------------------------------------------------------------------ strength


def test_threshold_clearly_beats_random():
    summary, _ = run_tournament(["threshold", "random"], ["argentine"], 100, seed=0, workers=1)
    assert summary["pairings"][0]["win_rate_a"] > 0.8


# ------------------------------------------------------------------------------------------------ specs


def test_specs_build_the_agents():
    agent = make_agent("threshold:bet=0.75,call=0.55,envido_call=28,seed=1")
    assert isinstance(agent, ThresholdAgent)
    assert (agent.bet, agent.call, agent.envido_call) == (0.75, 0.55, 28)
    assert (ThresholdAgent().bet, ThresholdAgent().call, ThresholdAgent().envido_call) == (0.72, 0.5, 26)
    assert isinstance(make_agent("station:seed=3"), StationAgent)
    assert isinstance(make_agent("maniac"), ManiacAgent)


@pytest.mark.parametrize("spec, message", [
    ("threshold:bet=1.5", r"agent 'threshold': bet must be a number in \[0, 1\], got '1.5'"),
    ("threshold:call=-0.1", r"call must be a number in \[0, 1\], got '-0.1'"),
    ("threshold:call=nan", r"call must be a number in \[0, 1\], got 'nan'"),
    ("threshold:bet=high", r"bet must be a number in \[0, 1\], got 'high'"),
    ("threshold:envido_call=34", r"envido_call must be an integer in \[0, 33\], got '34'"),
    ("threshold:seed=x", r"seed must be an integer in 0\.\.2\*\*63-1, got 'x'"),
    ("threshold:colour=red", r"unknown parameter\(s\) \['colour'\]; allowed: bet=.*seed="),
    ("station:bet=0.5", r"agent 'station': unknown parameter\(s\) \['bet'\]; allowed: seed=<an integer in 0\.\.2\*\*63-1>"),
    ("maniac:some/path", "agent 'maniac' takes key=value parameters"),
])
def test_bad_specs_give_one_line_errors(spec, message):
    with pytest.raises(ValueError, match=message) as info:
        make_agent(spec)
    assert "\n" not in str(info.value)
