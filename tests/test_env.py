"""The PettingZoo AEC environment: PettingZoo's own API and seed tests, masks, rewards, episodes, records,
no leak of hidden information, and the public names (documented in the docstring of truco_env/aec.py)."""

import json
import random

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import truco_env
import truco_env.aec
from truco_env import PRESETS, TrucoState, actions, make_config
from truco_env.cards import NUM_CARDS, card_text, deck, parse_card, piezas
from truco_env.encoding import (
    INFO_STATE_SIZE,
    OBS_OFFSETS,
    OBSERVATION_FIELDS,
    OBSERVATION_SIZE,
    PRIVILEGED_SIZE,
    encode_information_state,
    encode_observation,
    encode_privileged,
    information_state_string,
    observation_markdown,
    observation_size,
)
from truco_env.records import replay_record

EXTRA_VARIANTS = [("argentine-3v3", {"pica_pica": True}), ("argentine-2v2", {"flor": True}),
                  ("paulista", {"covered_card": True, "paulista_mazo": True}),
                  # a player who folds alone leaves the hand while his partner plays on (rules.md §8.10 row 12)
                  ("uruguayan-2v2", {"mazo_scope": "player", "flor_scoring": "per_flor_refusals",
                                     "flor_raise_by": "unsung_holder", "fold_against_unsung_flor": "flor_lost"})]


@pytest.mark.parametrize("episode", ["match", "hand"])
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_pettingzoo_api_and_seed(preset, episode):
    api_test(truco_env.env(preset, episode=episode), num_cycles=500)
    seed_test(lambda: truco_env.env(preset, episode=episode), num_cycles=500)


@pytest.mark.parametrize("preset,overrides", EXTRA_VARIANTS)
def test_pettingzoo_api_on_option_variants(preset, overrides):
    api_test(truco_env.env(preset, **overrides), num_cycles=500)


def field(obs, name):
    start, end = OBS_OFFSETS[name]
    return obs[start:end]


def play_env_match(env, rng, check):
    """Random legal play through the AEC loop; ``check(env, agent, obs)`` runs before each live step."""
    totals = {a: 0.0 for a in env.possible_agents}
    while env.agents:
        agent = env.agent_selection
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        check(env, agent, obs)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return totals


def check_mask(env, agent, obs):
    game = env.unwrapped.game
    mask = obs["action_mask"]
    assert obs["observation"].dtype == np.float32
    assert obs["observation"].shape == (observation_size(env.unwrapped.config),)
    assert mask.dtype == np.int8 and mask.any(), "empty mask for the acting agent"
    names = {env.unwrapped.action_names[i] for i in np.flatnonzero(mask)}
    assert names == set(game.legal_actions())
    assert agent == f"player_{game.actor}"


MATCHES = 1500
#: ... or fewer, once this many decisions are played: a preset of long matches (Uruguayan Truco's 40 points, six
#: players) then costs about what a short one does.
DECISIONS = 20_000


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_random_matches_through_the_env(preset):
    env = truco_env.env(preset)
    rng = np.random.default_rng(0)
    decisions = 0
    for match in range(MATCHES):
        if decisions >= DECISIONS:
            assert match >= 300, f"{preset}: only {match} matches in {DECISIONS:,} decisions"
            break
        env.reset(seed=match)
        totals = play_env_match(env, rng, check_mask)
        team = [sum(v for a, v in totals.items() if int(a.split("_")[1]) % 2 == t) / (len(totals) // 2)
                for t in (0, 1)]
        record = env.unwrapped.match_record(include_legal=match % 2 == 0)
        decisions += sum(len(hand["actions"]) for hand in record["hands"])
        assert team[0] + team[1] == 0
        assert team[0] == {0: 1, 1: -1, None: 0}[record["winner"]]
        replayed = replay_record(json.loads(json.dumps(record)))
        assert replayed.match_record() == env.unwrapped.match_record()


def test_points_rewards_and_hand_episodes():
    env = truco_env.env("paulista-2v2", episode="hand", reward="points")
    rng = np.random.default_rng(1)
    env.reset(seed=5)
    hands = 0
    while True:
        totals = play_env_match(env, rng, check_mask)
        game = env.unwrapped.game
        finished = game.hand_records[hands]
        expected = finished["points"][0] - finished["points"][1]
        assert totals["player_0"] == totals["player_2"] == expected == -totals["player_1"] == -totals["player_3"]
        hands += 1
        if game.is_over:
            break
        env.reset()  # continues the same match with its next hand
        assert env.unwrapped.game.hand_index == hands
    assert hands == len(env.unwrapped.match_record()["hands"]) and hands > 1
    env.reset()  # the match is over: a new one starts
    assert env.unwrapped.game.hand_index == 0


def test_illegal_action_raise_and_terminate():
    deal = {"hands": [["7c", "6c", "3e"], ["2o", "1b", "4b"]], "vira": None, "dealer": 1}
    env = truco_env.env("argentine")
    env.reset(seed=0, options={"deal": deal})
    before = env.unwrapped.match_record(include_legal=True)
    with pytest.raises(ValueError, match="'play:1b'.*legal actions"):
        env.step(env.unwrapped.action_id("play:1b"))
    with pytest.raises(ValueError, match="out of range"):
        env.step(actions.NUM_ACTIONS)
    with pytest.raises(ValueError, match="integer id"):
        env.step("truco")
    assert env.unwrapped.match_record(include_legal=True) == before
    env = truco_env.env("argentine-2v2", illegal_action="terminate")
    env.reset(seed=0)
    offender = env.agent_selection
    legal = np.flatnonzero(env.observe(offender)["action_mask"])
    env.step(int(next(i for i in range(actions.NUM_ACTIONS) if i not in legal)))
    assert all(env.terminations.values())
    seat = int(offender.split("_")[1])
    for agent in env.agents:
        expected = -1.0 if int(agent.split("_")[1]) % 2 == seat % 2 else 1.0
        assert env._cumulative_rewards[agent] == expected


def test_interface_names_and_errors():
    env = truco_env.env("paulista")
    raw = env.unwrapped
    assert raw.possible_agents == ["player_0", "player_1"]
    assert len(raw.action_names) == actions.NUM_ACTIONS == raw.action_space("player_0").n
    assert raw.action_id("play:4c") == raw.action_names.index("play:4c")
    assert truco_env.env("argentine").unwrapped.action_id("play:1e") == raw.action_id("play:As")
    for name in ("truco", "seis", "nove", "doze", "quiero", "no_quiero", "mazo", "play_slot:2", "cover:Qd"):
        assert raw.action_names[raw.action_id(name)] == name
    with pytest.raises(ValueError, match="unknown action 'bluff'"):
        raw.action_id("bluff")
    with pytest.raises(ValueError, match="unknown preset"):
        truco_env.env("truco-mineiro")
    with pytest.raises(ValueError, match="unknown config field"):
        truco_env.env("argentine", colour="red")
    with pytest.raises(ValueError, match="episode='round'"):
        truco_env.env("argentine", episode="round")
    with pytest.raises(ValueError, match="reward"):
        truco_env.env("argentine", reward="elo")
    with pytest.raises(ValueError, match="duplicate card"):
        env.reset(options={"deal": {"hands": [["4c", "5c", "6c"], ["4c", "Qd", "Jd"]], "vira": "3d"}})
    with pytest.raises(ValueError, match="score"):
        env.reset(options={"score": [12, 0]})
    env.reset(seed=3, options={"score": [10, 4]})
    assert env.unwrapped.game.score == (10, 4)
    assert truco_env.raw_env("argentine-3v3").possible_agents[-1] == "player_5"
    import pettingzoo

    if hasattr(pettingzoo, "make"):
        made = pettingzoo.make("aec", truco_env.ENV_ID, preset="paulista-clean")
        assert made.unwrapped.config.deck == "clean"


def test_render_and_state():
    env = truco_env.env("paulista-2v2", render_mode="ansi")
    env.reset(seed=2, options={"deal": {"hands": [["5c", "3h", "Ks"], ["2c", "Qd", "6h"], ["7d", "Js", "4h"],
                                                  ["Ad", "6s", "Qc"]], "vira": "4d", "dealer": 3}})
    text = env.render()
    assert "vira: 4d" in text and "manilhas: 5" in text and "your hand: 5c 3h Ks" in text
    assert "2c" not in text  # another seat's card
    env.step(env.unwrapped.action_id("truco"))
    assert "seat 0: truco" in env.render()
    state = env.unwrapped.state()
    assert state.shape == env.unwrapped.state_space.shape and state.dtype == np.float32
    hands = state[OBSERVATION_SIZE:].reshape(6, NUM_CARDS)
    assert hands[1, parse_card("2c", "paulista")] == 1.0


def test_observation_layout_is_documented_and_consistent():
    assert sum(size for _, size, _ in OBSERVATION_FIELDS) == OBSERVATION_SIZE
    assert f"({OBSERVATION_SIZE},) float32" in truco_env.aec.__doc__
    with open("docs/observation.md", encoding="utf-8") as handle:
        doc = handle.read()
    assert observation_markdown() in doc, "docs/observation.md is stale: regenerate it (see its header)"
    with open("docs/actions.md", encoding="utf-8") as handle:
        actions_doc = handle.read()
    for name in actions.CALLS:
        assert f"`{name}`" in actions_doc


def test_observation_fields_for_a_known_position():
    """T14's position after seat 0's truco and seat 1's envido, seen by seat 0."""
    state = TrucoState.new(make_config("argentine"), seed=0,
                           deal={"hands": [["7c", "3c", "1e"], ["7o", "4o", "2e"]], "dealer": 1}, score=[6, 3])
    state.apply("truco")
    state.apply("envido")
    obs = encode_observation(state, 0)
    hand = np.flatnonzero(field(obs, "hand"))
    assert sorted(card_text(c, "argentine") for c in hand) == ["1e", "3c", "7c"]
    assert field(obs, "pending_truco")[1] == 1 and list(field(obs, "pending_truco_by")) == [1, 0]
    calls = field(obs, "envido_calls").reshape(4, 5)
    assert list(calls[0]) == [1, 0, 0, 0, 1]  # envido by the opponents
    assert list(field(obs, "score")) == pytest.approx([6 / 30, 3 / 30])
    assert field(obs, "mano")[0] == 1 and field(obs, "dealer")[1] == 1 and field(obs, "actor")[0] == 1
    assert field(obs, "phase")[2] == 1 and field(obs, "family")[0] == 1 and field(obs, "num_players")[0] == 1
    assert field(obs, "own_points")[0] == pytest.approx(30 / 33)
    state.apply("quiero")  # 31 beats 30: seat 1 announces
    shown = field(encode_observation(state, 0), "envido_shown").reshape(6, 3)
    assert list(shown[0]) == pytest.approx([1, 30 / 33, 0]) and list(shown[1]) == pytest.approx([1, 31 / 33, 0])
    assert encode_information_state(state, 0).shape == (INFO_STATE_SIZE,)


def test_match_tally_counts_each_team_public_decisions_across_hands():
    state = TrucoState.new(make_config("argentine"), seed=0,
                           deal={"hands": [["7c", "3c", "1e"], ["7o", "4o", "2e"]], "dealer": 1}, score=[6, 3])
    for action in ("truco", "envido", "no_quiero", "no_quiero"):  # seat 0 truco, seat 1 envido, both refuse
        state.apply(action)
    assert state.hand_index == 1 and state.score == (7, 4)
    state.apply("mazo")  # the next hand's mano (seat 1) goes to the deck
    assert state.match_tally == ((0, 1, 0, 0, 0, 0, 1, 0), (0, 0, 1, 0, 0, 0, 1, 1))
    tally = field(encode_observation(state, 0), "match_tally").reshape(2, 9)
    assert list(tally[0]) == pytest.approx([0, 1 / 2, 0, 0, 0, 0, 1 / 2, 0, 2 / 22])  # own team: seat 0
    assert list(tally[1]) == pytest.approx([0, 0, 1 / 3, 0, 0, 0, 1 / 3, 1 / 3, 3 / 23])
    seen_by_1 = field(encode_observation(state, 1), "match_tally").reshape(2, 9)
    assert np.array_equal(seen_by_1[::-1], tally)
    fresh = TrucoState.new(make_config("argentine"), seed=0)
    assert fresh.match_tally == ((0,) * 8, (0,) * 8)
    assert not field(encode_observation(fresh, 0), "match_tally").any()


def test_privileged_features_hold_the_other_seats_unplayed_cards_from_the_viewer_on():
    """The training critic's extra input (never a policy's): seat k places after the viewer in block k - 1."""
    hands = [["7c", "3c", "1e"], ["7o", "4o", "2e"], ["5c", "6c", "12e"], ["1b", "2b", "3b"]]
    state = TrucoState.new(make_config("argentine-2v2"), seed=0, deal={"hands": hands, "dealer": 3})
    assert state.actor == 0
    state.apply("play:7c")
    priv = encode_privileged(state, 1).reshape(-1, NUM_CARDS)
    assert PRIVILEGED_SIZE == 5 * NUM_CARDS and priv.shape == (5, NUM_CARDS)
    names = [sorted(card_text(c, "argentine") for c in np.flatnonzero(row)) for row in priv]
    assert names == [sorted(hands[2]), sorted(hands[3]), ["1e", "3c"], [], []]  # seat 0's 7c is on the table
    out = np.full(PRIVILEGED_SIZE, 9.0, dtype=np.float32)
    assert encode_privileged(state, 1, out) is out and np.array_equal(out, priv.ravel())


# ---------------------------------------------------------------------------------------------------------
# No leak of hidden information


def hidden_swap(record, viewer, visible_seats, rng, cfg):
    """A deal that differs from ``record``'s only in cards ``viewer`` cannot see: other seats' cards that were
    never played face up, swapped with cards nobody was dealt."""
    hands = [list(h) for h in record["deal"]["hands"]]
    shown = {a.split(":", 1)[1] for _, a in record["actions"] if a.startswith("play:")}
    used = {c for h in hands for c in h} | {record["deal"]["vira"]}
    pool = [card_text(c, cfg.family) for c in deck(cfg.family, cfg.deck, cfg.deck_ranks)]
    spare = [c for c in pool if c not in used]
    rng.shuffle(spare)
    changed = 0
    for seat, hand in enumerate(hands):
        if seat in visible_seats:
            continue
        for i, card in enumerate(hand):
            if card not in shown and spare:
                hand[i] = spare.pop()
                changed += 1
    return hands, changed


def play_one_hand(cfg, seed, rng):
    state = TrucoState.new(cfg, seed=seed)
    while state.hand_index == 0 and not state.is_over:
        state.apply(rng.choice(state.legal_actions()))
    return state.hand_records[0]


@pytest.mark.parametrize("preset,overrides", [(p, {}) for p in sorted(PRESETS)] + [
    ("argentine-flor", {"mazo_first_trick_bonus": True}), ("paulista", {"covered_card": True}),
    ("paulista-2v2", {"covered_card": True})])
def test_hidden_cards_do_not_leak(preset, overrides):
    cfg = make_config(preset, **overrides)
    rng = random.Random(0)
    compared = 0
    for seed in range(150):
        record = play_one_hand(cfg, seed, rng)
        for viewer in range(cfg.num_players):
            visible = {viewer}
            hands, changed = hidden_swap(record, viewer, visible, rng, cfg)
            if not changed:
                continue
            deal = {"dealer": record["dealer"], "vira": record["deal"]["vira"]}
            a = TrucoState.new(cfg, seed=seed, deal={**deal, "hands": record["deal"]["hands"]})
            b = TrucoState.new(cfg, seed=seed, deal={**deal, "hands": hands})
            for _, action in record["actions"]:
                public_same = (a.score == b.score and a.envido_announcements == b.envido_announcements
                               and a.flor_announcements == b.flor_announcements and a.actor == b.actor
                               and a.flor_status == b.flor_status and action in b.legal_actions()
                               # once a flor is declared every flor at the table is (rules.md §3.8): public
                               and (a.flor_status == "none" or a.flor_holders == b.flor_holders))
                if not public_same:
                    break  # the public history diverged (an envido shown, a flor forced): nothing left to compare
                assert encode_observation(a, viewer).tobytes() == encode_observation(b, viewer).tobytes(), (
                    f"seat {viewer} sees a difference in hidden cards ({preset}, seed {seed}, before {action})")
                assert information_state_string(a, viewer) == information_state_string(b, viewer)
                compared += 1
                a.apply(action)
                b.apply(action)
    assert compared > (200 if cfg.single_hand else 500)


def test_blind_mao_de_ferro_hides_own_cards():
    cfg = make_config("paulista-2v2")
    base = [["5c", "3h", "Ks"], ["2c", "Qd", "6h"], ["7d", "Js", "4h"], ["Ad", "6s", "Qc"]]
    other = [["Kc", "7h", "Jd"], *base[1:]]  # seat 0's own (unseen) cards differ
    states = [TrucoState.new(cfg, seed=0, deal={"hands": h, "vira": "4d", "dealer": 3}, score=[11, 11])
              for h in (base, other)]
    assert encode_observation(states[0], 0).tobytes() == encode_observation(states[1], 0).tobytes()
    assert field(encode_observation(states[0], 0), "hand").sum() == 0
    assert list(field(encode_observation(states[0], 0), "hand_slots")) == [1, 1, 1]


def test_mao_de_onze_shows_the_partner_hand_only_to_the_team_at_eleven():
    hands = [["5c", "3h", "Ks"], ["2c", "Qd", "6h"], ["7d", "Js", "4h"], ["Ad", "6s", "Qc"]]
    deal = {"hands": hands, "vira": "4d", "dealer": 3}
    onze = TrucoState.new(make_config("paulista-2v2"), seed=0, deal=deal, score=[11, 7])
    normal = TrucoState.new(make_config("paulista-2v2"), seed=0, deal=deal, score=[10, 7])

    def partner(state, seat):
        cards = np.flatnonzero(field(encode_observation(state, seat), "partner_cards"))
        return sorted(card_text(c, "paulista") for c in cards)

    assert partner(onze, 0) == sorted(hands[2]) and partner(onze, 2) == sorted(hands[0])
    assert partner(onze, 1) == [] and partner(onze, 3) == []
    assert all(partner(normal, s) == [] for s in range(4))
    onze.apply("quiero")
    onze.apply("play:5c")
    assert partner(onze, 2) == ["3h", "Ks"]  # still visible during the hand, played cards are on the table
    one_v_one = TrucoState.new(make_config("paulista"), seed=0, score=[11, 3])
    assert partner(one_v_one, 0) == [] and partner(one_v_one, 1) == []


def test_render_of_a_uruguayan_table_names_the_muestra_and_its_piezas():
    """A Uruguayan table drew the muestra as a Paulista vira ('vira: 2e  manilhas: 3'), and a research deck of
    Spanish ranks could not be drawn at all (ValueError from the Paulista manilha cycle)."""
    for overrides in ({}, {"deck_ranks": ("1", "10", "11", "12")}):
        env = truco_env.env("uruguayan", render_mode="ansi", **overrides)
        env.reset(seed=0)
        game = env.unwrapped.game
        pieces = " ".join(card_text(c, "uruguayan") for c in piezas(game.vira))
        text = env.render()
        assert f"muestra: {card_text(game.vira, 'uruguayan')}  piezas: {pieces}\n" in text and "manilha" not in text
