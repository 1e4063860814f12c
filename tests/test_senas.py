"""Señas (docs/rules.md §3.13) on the reference engine: the rules, who sees a signal, records, and that every game
without them is exactly what it was."""

from __future__ import annotations

import hashlib
import json
import random
import re

import numpy as np
import pytest

from truco_env import actions
from truco_env.config import PRESETS, TrucoConfig, make_config
from truco_env.encoding import (
    OBSERVATION_SIZE,
    SENAS_OFFSETS,
    SENAS_SIZE,
    encode_information_state,
    encode_observation,
    information_state_string,
    observation_size,
)
from truco_env.engine import TrucoState
from truco_env.records import ReplayError, replay_record
from truco_env.render import render_text
from truco_env.senas import GESTURES, MEANINGS, draw_catches, honest_gesture, sees, true_to_table

SENAS = make_config("argentine-2v2", senas=True)


def play_random(config: TrucoConfig, seed: int, signal: float = 0.5, limit: int | None = None) -> TrucoState:
    """A seeded match where each seat that may signal does so with probability ``signal``."""
    rng = random.Random(seed)
    state = TrucoState.new(config, seed=seed)
    steps = 0
    while not state.is_over and (limit is None or steps < limit):
        legal = state.legal_actions()
        signals = [a for a in legal if a.startswith("sena:")]
        others = [a for a in legal if not a.startswith("sena:")]
        state.apply(rng.choice(signals) if signals and rng.random() < signal else rng.choice(others))
        steps += 1
    return state


# --- games without señas are what they were -----------------------------------------------------------------

#: sha256 (16 hex) of every observation, information state and record of three seeded random matches per preset,
#: recorded by the code before señas existed (the helper below, unchanged).
BEFORE_SENAS = {
    "argentine": "96acf0c9681abd27", "argentine-2v2": "96f6affecac31d39", "argentine-3v3": "a635a999737e490f",
    "argentine-flor": "f007929675166818", "argentine-mini": "384de5b922e48923", "paulista": "44e1d4817ea44db7",
    "paulista-2v2": "76c454ac20465cea", "paulista-clean": "c3377c1279044c44", "paulista-mini": "dd2a7a2551685ebe",
}


def _digest(config: TrucoConfig, matches: int = 3) -> str:
    h = hashlib.sha256()
    for seed in range(matches):
        state = TrucoState.new(config, seed=seed)
        rng = random.Random(seed)
        while not state.is_over:
            for viewer in range(state.num_players):
                h.update(encode_observation(state, viewer).tobytes())
            h.update(encode_information_state(state, state.actor).tobytes())
            h.update(information_state_string(state, state.actor).encode())
            state.apply(rng.choice(state.legal_actions()))
        h.update(json.dumps(state.match_record(include_legal=True), sort_keys=True).encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("preset", sorted(BEFORE_SENAS))
def test_games_without_senas_are_byte_identical_to_before(preset):
    assert _digest(PRESETS[preset]) == BEFORE_SENAS[preset]
    assert not set(GESTURES) & {a.partition(":")[2] for a in actions.action_names(PRESETS[preset].family)}


def test_config_fields_defaults_and_errors():
    base = make_config("argentine-2v2")
    assert (base.senas, base.sena_catch, base.sena_code) == (False, 0.25, "table")
    assert "senas" not in base.to_dict() and "sena_catch" not in base.to_dict()
    assert TrucoConfig.from_dict(SENAS.to_dict()) == SENAS and SENAS.to_dict()["sena_catch"] == 0.25
    assert make_config("argentine-3v3", senas=True, sena_catch=1, sena_code="free").sena_catch == 1.0
    for preset, overrides, needle in [
        ("argentine", {"senas": True}, "needs a team game"),
        ("paulista-2v2", {"senas": True}, "only to the argentine family"),
        ("argentine-2v2", {"sena_catch": 0.5}, "applies only with senas = True"),
        ("argentine-2v2", {"sena_code": "free"}, "applies only with senas = True"),
        ("argentine-2v2", {"senas": True, "sena_catch": 1.5}, "probability between 0 and 1"),
        ("argentine-2v2", {"senas": True, "sena_catch": True}, "probability between 0 and 1"),
        ("argentine-2v2", {"senas": True, "sena_code": "secret"}, "choose one of \\['table', 'free'\\]"),
    ]:
        with pytest.raises(ValueError, match=needle):
            make_config(preset, **overrides)


def test_action_ids_follow_the_calls_and_only_senas_games_have_them():
    assert actions.NUM_ACTIONS == 98 and actions.num_actions(SENAS) == 106 and actions.num_actions(make_config("argentine-2v2")) == 98
    names = actions.action_names("argentine", senas=True)
    assert names[actions.SENA_BASE:] == [f"sena:{g}" for g in GESTURES]
    assert actions.action_id("sena:kiss", "argentine") == actions.SENA_BASE + GESTURES.index("kiss")
    assert actions.action_name(105, "argentine") == "sena:eyes_closed"
    with pytest.raises(ValueError, match="out of range"):
        actions.action_name(106, "argentine")


# --- the rules -------------------------------------------------------------------------------------------------

def test_one_signal_a_hand_before_the_first_card_and_it_keeps_the_turn():
    state = TrucoState.new(SENAS, seed=5)
    seat = state.actor
    assert set(actions.SENA_ACTIONS) <= set(state.legal_actions())
    tally = state.match_tally
    state.apply("sena:kiss")
    assert state.actor == seat and state.phase == "play"
    assert not any(a.startswith("sena:") for a in state.legal_actions()), "a second signal in the hand"
    assert state.match_tally == tally, "a signal is not a public decision"
    card = next(a for a in state.legal_actions() if a.startswith("play:"))
    state.apply(card)
    nxt = state.actor
    assert set(actions.SENA_ACTIONS) <= set(state.legal_actions()), "the next seat may still signal"
    state.apply(next(a for a in state.legal_actions() if a.startswith("play:")))
    assert state.actor != nxt
    # after its card a seat may no longer signal, not even on a later trick
    for _ in range(200):
        if state.is_over or state.hand_index > 0:
            break
        if state.actor in (seat, nxt):
            assert not any(a.startswith("sena:") for a in state.legal_actions())
        state.apply(next(a for a in state.legal_actions() if not a.startswith(("sena:", "mazo"))))


def test_signals_only_in_team_hands_not_in_pica_pica_duels():
    config = make_config("argentine-3v3", senas=True, pica_pica=True)
    seen_duel = False
    for seed in range(20):
        state = TrucoState.new(config, seed=seed)
        rng = random.Random(seed)
        while not state.is_over:
            legal = state.legal_actions()
            if len(state.participants) == 2:
                seen_duel = True
                assert not any(a.startswith("sena:") for a in legal)
            state.apply(rng.choice(legal))
    assert seen_duel


def test_signals_change_no_score():
    """The same deals and the same non-signal moves give the same points with and without signals."""
    for seed in range(30):
        signalled = play_random(SENAS, seed, signal=1.0)
        plain = TrucoState.new(SENAS, seed=seed)
        for hand in signalled.hand_records:
            for seat, action in hand["actions"]:
                if not action.startswith("sena:"):
                    plain.apply(action)
        assert plain.is_over and plain.score == signalled.score and plain.winner == signalled.winner


def test_catches_come_from_their_own_stream_with_the_set_probability():
    # the deal stream is untouched: the same seed deals the same cards with and without señas
    plain = TrucoState.new(make_config("argentine-2v2"), seed=11)
    with_senas = TrucoState.new(SENAS, seed=11)
    assert plain.hand_records[0]["deal"]["hands"] == with_senas.hand_records[0]["deal"]["hands"]
    # whatever is played, deal k of a seed draws the same catches
    compared = 0
    for seed in range(10):
        tables = [[h["deal"]["catches"] for h in play_random(SENAS, seed, signal=signal).hand_records]
                  for signal in (0.0, 1.0)]
        k = min(map(len, tables))
        assert tables[0][:k] == tables[1][:k]
        compared += k
    assert compared > 20
    assert tables[0][0] == draw_catches(9, 0, 4, 0.25)
    # each opponent catches with probability sena_catch; a partner is never in the table
    draws = [draw_catches(seed, 0, 4, 0.25) for seed in range(2000)]
    caught = sum(len(row) for table in draws for row in table)
    assert abs(caught / (2000 * 4 * 2) - 0.25) < 0.02
    assert all(o % 2 != seat % 2 for table in draws for seat, row in enumerate(table) for o in row)
    assert draw_catches(1, 0, 4, 0.0) == [[]] * 4 and draw_catches(1, 0, 4, 1.0) == [[1, 3], [0, 2], [1, 3], [0, 2]]


# --- who sees what ---------------------------------------------------------------------------------------------

def _without(state: TrucoState, drop: set[int]) -> TrucoState:
    """The same match replayed without the signals of the seats in ``drop`` (this hand only)."""
    twin = TrucoState.new(state.config, seed=state.seed)
    for i, hand in enumerate(state.hand_records):
        for seat, action in hand["actions"]:
            if not (i == state.hand_index and action.startswith("sena:") and seat in drop):
                twin.apply(action)
    return twin


def test_an_uncaught_signal_leaves_no_trace_in_the_opponents_view():
    """Over many deals: an opponent's observation, information state and key are exactly those of the same match
    without the signals it did not catch, while a partner's differ."""
    checked = 0
    for seed in range(150):
        state = play_random(SENAS, seed, signal=1.0, limit=random.Random(seed).randrange(2, 12))
        if state.is_over or not state.signals:
            continue
        for viewer in range(4):
            unseen = {s for s in state.signals if not sees(state.catches, s, viewer)}
            if not unseen:
                continue
            twin = _without(state, unseen)
            assert np.array_equal(encode_observation(state, viewer), encode_observation(twin, viewer))
            assert np.array_equal(encode_information_state(state, viewer), encode_information_state(twin, viewer))
            assert information_state_string(state, viewer) == information_state_string(twin, viewer)
            assert render_text(state, viewer) == render_text(twin, viewer)
            for seat in unseen:  # the signaller's partner saw it
                partner = (seat + 2) % 4
                assert not np.array_equal(encode_observation(state, partner), encode_observation(twin, partner))
            checked += 1
    assert checked > 30


def test_the_senas_block_shows_own_partner_and_caught_signals():
    config = make_config("argentine-2v2", senas=True)
    catches = [[1], [], [], [0, 2]]  # seat 0's signal is caught by seat 1 only; seat 3's by both opponents
    state = TrucoState.new(config, seed=0, deal={"dealer": 3, "catches": catches})
    assert state.actor == 0
    state.apply("sena:wink")
    size = observation_size(config)
    assert size == OBSERVATION_SIZE + SENAS_SIZE

    def seen(viewer: int) -> np.ndarray:
        start, end = SENAS_OFFSETS["senas_seen"]
        return encode_observation(state, viewer)[start:end].reshape(6, 8)

    wink = GESTURES.index("wink")
    assert seen(0)[0, wink] == 1 and seen(2)[2, wink] == 1 and seen(1)[3, wink] == 1  # relative seats
    assert seen(3).sum() == 0
    start, end = SENAS_OFFSETS["sena_caught_by"]
    assert list(encode_observation(state, 0)[start:end]) == [0, 1, 0, 0, 0, 0]
    assert encode_observation(state, 1)[start:end].sum() == 0, "only the signaller learns who caught it"
    assert encode_observation(state, 0)[SENAS_OFFSETS["sena_code"][0]] == 1
    assert "1 of clubs" in render_text(state, 2) and "caught by seat 1" in render_text(state, 0)
    assert "sena" not in render_text(state, 3) and "wink" not in render_text(state, 3)
    free = TrucoState.new(config.replace(sena_code="free"), seed=0, deal={"dealer": 3, "catches": catches})
    free.apply("sena:wink")
    assert "wink" in render_text(free, 2) and "1 of clubs" not in render_text(free, 2)
    assert encode_observation(free, 0)[SENAS_OFFSETS["sena_code"][0]] == 0
    assert information_state_string(state, 0).endswith("0sena:wink^1|") and "sena" not in information_state_string(state, 3)


# --- records -----------------------------------------------------------------------------------------------------

def test_records_with_signals_replay_and_keep_their_catches():
    for seed in range(20):
        state = play_random(make_config("argentine-3v3", senas=True, sena_catch=0.5), seed)
        record = json.loads(json.dumps(state.match_record(include_legal=True)))
        assert all("catches" in h["deal"] for h in record["hands"])
        replayed = replay_record(record)
        assert replayed.match_record(include_legal=True) == record


def test_bad_catches_are_one_line_errors():
    state = play_random(SENAS, 3)
    record = state.match_record()
    for bad, needle in [([[1]], "a list of 4 lists"), ([[2], [], [], []], "distinct opponents from [1, 3]"),
                        ([[3, 1], [], [], []], "sorted list"), ("x", "a list of 4 lists")]:
        broken = json.loads(json.dumps(record))
        broken["hands"][0]["deal"]["catches"] = bad
        with pytest.raises(ReplayError, match=re.escape(needle)) as err:
            replay_record(broken)
        assert "\n" not in str(err.value)
    plain = json.loads(json.dumps(play_random(make_config("argentine-2v2"), 3).match_record()))
    plain["hands"][0]["deal"]["catches"] = [[], [], [], []]
    with pytest.raises(ReplayError, match="unknown deal key"):
        replay_record(plain)


def test_table_meanings_and_the_honest_gesture():
    from truco_env.cards import parse_card

    def hand(*texts: str) -> list[int]:
        return [parse_card(t, "argentine") for t in texts]

    assert true_to_table("eyebrows", hand("1e", "7c", "10c")) and not true_to_table("wink", hand("1e", "7c", "10c"))
    assert honest_gesture(hand("1e", "7c", "10c")) == "eyebrows"
    assert honest_gesture(hand("7o", "3c", "2b")) == "mouth_side"
    assert honest_gesture(hand("4e", "5b", "6o")) == "eyes_closed"
    assert honest_gesture(hand("6e", "5e", "4b")) == "head_tilt"  # envido 31
    assert not true_to_table("head_tilt", hand("6e", "12e", "4b"))  # envido 26
    assert set(MEANINGS) == set(GESTURES)


# --- the environments ---------------------------------------------------------------------------------------------

def test_every_view_of_the_senas_preset_has_the_longer_spaces():
    import truco_env
    from truco_env.gym_vector import TrucoVectorEnv
    from truco_env.single import TrucoSingleAgentEnv

    env = truco_env.env("argentine-2v2-senas")
    env.reset(seed=0)
    assert env.observation_space("player_0")["observation"].shape == (OBSERVATION_SIZE + SENAS_SIZE,)
    assert env.action_space("player_0").n == 106 and env.unwrapped.action_names[98] == "sena:eyebrows"
    assert env.unwrapped.state().shape == env.unwrapped.state_space.shape
    single = TrucoSingleAgentEnv("argentine-2v2-senas")
    obs, info = single.reset(seed=0)
    assert obs.shape == single.observation_space.shape == (1141,) and info["action_mask"].shape == (106,)
    rng = np.random.default_rng(0)
    signalled = 0
    for _ in range(300):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        signalled += action >= actions.SENA_BASE
        obs, _, done, _, info = single.step(action)
        assert obs.shape == (1141,)
        if done:
            obs, info = single.reset()
    assert signalled > 10
    batched = TrucoVectorEnv("argentine-2v2-senas", 4)
    obs, info = batched.reset(seed=0)
    assert obs.shape == (4, 1141) and info["action_mask"].shape == (4, 106)
    batched.close()


# --- the heuristic -----------------------------------------------------------------------------------------------

def test_the_heuristic_signals_honestly_by_the_table_and_not_without_one():
    from agents.heuristic import HeuristicAgent
    from truco_env.encoding import encode_action_mask

    for code, signal, expect in (("table", 1, True), ("free", 1, False), ("table", 0, False)):
        config = make_config("argentine-2v2-senas", sena_code=code)
        signalled = 0
        for seed in range(20):
            state = TrucoState.new(config, seed=seed)
            agents = [HeuristicAgent(seed=seed + s, signal=signal) for s in range(4)]
            while not state.is_over and state.hand_index < 3:
                seat = state.actor
                first_turn = any(a.startswith("sena:") for a in state.legal_actions())
                action = actions.action_name(agents[seat].act({"observation": encode_observation(state, seat),
                                                         "action_mask": encode_action_mask(state)}), "argentine")
                if action.startswith("sena:"):
                    assert first_turn and expect
                    gesture = action.removeprefix("sena:")
                    assert gesture == honest_gesture(state.dealt_cards(seat))
                    signalled += 1
                else:
                    assert not (first_turn and expect), "an honest signaller skipped its chance"
                state.apply(action)
        assert (signalled > 50) == expect


def test_the_heuristic_reads_a_signal_it_saw_as_the_seat_holding_those_cards():
    from agents.heuristic_reference import ReferenceHeuristic
    from agents.view import decode

    hands = [["4e", "5b", "6o"], ["12c", "11c", "4c"], ["1e", "5c", "6c"], ["4o", "5o", "7c"]]
    state = TrucoState.new(make_config("argentine-2v2-senas"), seed=0,
                           deal={"dealer": 3, "hands": hands, "catches": [[], [], [], []]})
    state.apply("play:4e")
    state.apply("play:12c")
    state.apply("sena:eyebrows")  # seat 2 tells seat 0 it holds the 1 of swords; nobody else sees it
    view = decode({"observation": encode_observation(state, 0), "action_mask": np.zeros(106, np.int8)})
    assert view.signals == {2: "eyebrows"} and view.sena_table
    assert decode({"observation": encode_observation(state, 1), "action_mask": np.zeros(106, np.int8)}).signals == {}

    def share_with_1e(v) -> float:  # of seat 0's sampled deals, those that give its partner the 1 of swords
        _, slots, draws = ReferenceHeuristic(seed=1)._draw(v, 200)
        off, k = next((off, k) for rel, off, k in slots if rel == 2)
        return sum(0 in draw[off:off + k] for draw in draws) / len(draws)

    read = share_with_1e(view)
    view.signals = {}
    unread = share_with_1e(view)
    assert read > 0.8 and unread < 0.3, (read, unread)


# --- people at the table -------------------------------------------------------------------------------------------

def test_truco_play_offers_signals_and_never_shows_one_the_person_did_not_catch(tmp_path):
    import io

    from training.people.play import play_match

    save = tmp_path / "match.json"
    out = io.StringIO()
    offered = []

    def person(prompt: str) -> str:  # signal when offered, else the first choice
        screen = out.getvalue()
        choices = re.findall(r"\[(\d+)\] ([^\n]+)", screen[screen.rfind("your turn"):])
        signal = [key for key, label in choices if label.startswith("Seña:")]
        offered.append(bool(signal))
        return signal[0] if signal else "1"

    assert play_match("argentine-2v2-senas", "heuristic", "heuristic", 0, 3, str(save), max_hands=4, read=person,
                      out=out) == 0
    screen = out.getvalue()
    record = json.loads(save.read_text())
    hands = record["hands"]
    caught = sum(1 for h in hands for s, a in h["actions"]
                 if a.startswith("sena:") and s % 2 == 1 and 0 in h["deal"]["catches"][s])
    partner = sum(1 for h in hands for s, a in h["actions"] if a.startswith("sena:") and s == 2)
    opponents = sum(1 for h in hands for s, a in h["actions"] if a.startswith("sena:") and s % 2 == 1)
    announced = re.findall(r"(\w[\w ()]*) says: Seña: ", screen)
    assert sum("partner" in who for who in announced) == partner > 0
    assert sum("partner" not in who for who in announced) == caught < opponents, "an uncaught signal was shown"
    assert any(offered) and any(a.startswith("sena:") for s, a in hands[0]["actions"] if s == 0)
    assert "(the 1 of swords)" in screen or "(a 3)" in screen or "(nothing good)" in screen  # the table's meaning


def test_the_web_table_shows_the_person_only_the_signals_it_saw(tmp_path):
    from werkzeug.test import Client

    from training.people.serve import App, Policy, Table

    table = Table("argentine-2v2-senas", Policy("onnx:unused.onnx", tmp_path / "unused.onnx", {}),
                  tmp_path / "records", seed=5)
    client = Client(App(table))
    view = client.post("/api/games").get_json()
    state = table.games[view["game"]].state
    rng = random.Random(2)
    offered = shown = hidden = 0
    while not view["over"] and state.hand_index < 6:
        if view["to_act"] == 0:
            signals = [a for a in view["legal"] if a["name"].startswith("sena:")]
            offered += bool(signals)
            assert all(a["label"].startswith("Seña: ") and "(" in a["label"] for a in signals)  # the table's meaning
            action = (signals or view["legal"])[0]["id"] if signals else rng.choice(view["legal"])["id"]
        else:
            legal = state.legal_actions()
            signals = [a for a in legal if a.startswith("sena:")]
            action = actions.action_id(signals[0] if signals else rng.choice(legal), "argentine")
        seat, hand = view["to_act"], state.hand_index
        name = actions.action_name(action, "argentine")
        seen = sees(state.catches, seat, 0)
        body = {"seat": seat, "action": action, "position": view["position"]}
        view = client.post(f"/api/games/{view['game']}/actions", json=body).get_json()
        said = view["said"] if state.hand_index == hand else view["previous"]["said"]
        if name.startswith("sena:"):
            last = said[-1] if said else {}
            assert (last.get("name") == name and last.get("seat") == seat) == seen, "a signal shown but not seen"
            shown += seen
            hidden += not seen
    assert offered and shown and hidden


# --- learning to signal ----------------------------------------------------------------------------------------------

def test_ppo_trains_a_network_for_senas_that_plays_exports_and_matches_its_onnx(tmp_path):
    import torch

    from agents.base import make_agent
    from agents.network import PolicyNet
    from training.learn.ppo import PPOArgs, train_ppo
    from training.measure.evaluate import run_tournament
    from training.options import build
    from training.people.export import export_onnx
    from truco_env.encoding import encode_action_mask

    args = build(PPOArgs, {"preset": "argentine-2v2-senas", "total_decisions": 3000, "batch_decisions": 1500,
                           "tables": 16, "hidden": [32], "eval_every": 0, "eval_opponents": [],
                           "scripted": {"heuristic": 0.2}, "run_dir": str(tmp_path / "run")})
    policy = train_ppo(args, progress_bar=False)
    agent = make_agent(f"ppo:{policy}")
    assert (agent.net.obs_size, agent.net.num_actions) == (OBSERVATION_SIZE + SENAS_SIZE, 106)
    summary, _ = run_tournament([f"ppo:{policy}", "heuristic"], ["argentine-2v2-senas"], 4, seed=1)
    assert summary["pairings"][0]["matches"] == 4
    model, _ = export_onnx(str(policy), str(tmp_path / "policy.onnx"))
    onnx = make_agent(f"onnx:{model}")
    states = [play_random(SENAS, seed, limit=seed % 7) for seed in range(40)]
    states = [s for s in states if not s.is_over]
    obs = np.stack([encode_observation(s, s.actor) for s in states])
    masks = np.stack([encode_action_mask(s) for s in states])
    with torch.no_grad():
        reference = agent.net.probabilities(torch.from_numpy(obs), torch.from_numpy(masks > 0)).numpy()
    assert np.abs(onnx.probabilities(obs, masks) - reference).max() < 1e-5
    # a network made without señas plays the game with them: it reads the usual observation and never signals
    plain = PolicyNet(hidden=(16,))
    with torch.no_grad():
        probs = plain.probabilities(torch.from_numpy(obs), torch.from_numpy(masks > 0)).numpy()
    assert probs.shape == masks.shape and probs[:, actions.SENA_BASE:].sum() == 0 and np.allclose(probs.sum(1), 1)


def test_evaluation_reports_how_each_agent_signals(tmp_path):
    from training.measure.evaluate import run_tournament
    from training.measure.tournament_files import markdown_report, write_outputs

    summary, meta = run_tournament(["heuristic", "heuristic:signal=0"], ["argentine-2v2-senas", "argentine"], 16,
                                   seed=3)
    rows = {(r["preset"], r["agent"]): r for r in summary["behaviour"]}
    honest = rows[("argentine-2v2-senas", "heuristic")]
    assert honest["signal_rate"] > 0.7 and honest["signal_honesty"] == 1.0 and 0 < honest["signal_caught_rate"] < 0.6
    counts = honest["counts"]
    assert counts["caught_hands"] + counts["uncaught_hands"] > 0 and counts["signal_watchers"] == 2 * counts["signals"]
    assert rows[("argentine-2v2-senas", "heuristic:signal=0")]["signal_rate"] == 0
    assert "signal_rate" not in rows[("argentine", "heuristic")]  # only games with señas have the columns
    assert "| true to the table |" in markdown_report(summary)
    written = write_outputs(tmp_path / "out", summary, meta, plots=False)
    assert "signal_rate" in (tmp_path / "out" / "behaviour.csv").read_text().splitlines()[0] and written


def test_truco_replay_shows_a_record_with_signals_and_who_caught_them(tmp_path, capsys):
    from training.cli import main as cli_main

    state = play_random(SENAS, 8, signal=1.0, limit=40)
    path = tmp_path / "match.json"
    path.write_text(json.dumps(state.match_record()))
    assert cli_main(["replay", str(path)]) == 0
    assert cli_main(["replay", "--show", str(path)]) == 0
    out = capsys.readouterr().out
    first = state.hand_records[0]
    seat = next(s for s, a in first["actions"] if a.startswith("sena:"))
    caught = first["deal"]["catches"][seat]
    assert "Seña: " in out and ("caught by " + (", ".join(f"seat {o}" for o in caught) or "nobody")) in out
