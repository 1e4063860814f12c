"""The belief over the unseen cards (agents/belief.py): the real deal always agrees with the view, the belief reads
nothing its seat may not see, with a uniform model it samples the heuristic's deals, and on argentine-mini its
weights are the exact posterior."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from agents.belief import (
    FLOOR,
    deal_candidates,
    hand_view,
    policy_model,
    rules_of,
    sample_worlds,
    weigh_deals,
)
from agents.network import PolicyNet
from agents.ppo import PPOAgent
from truco_env import TrucoState, actions, make_config
from truco_env.cards import card_text, deck, parse_card
from truco_env.encoding import encode_action_mask, encode_observation
from truco_env.turns import observation_for

MAIN = ["argentine", "argentine-flor", "argentine-2v2", "paulista", "paulista-2v2", "argentine-3v3", "argentine-2v2-senas"]


class Viewer:
    wants = frozenset({"info_state_string"})


def a_model(seed: int = 0, preset: str = "argentine"):
    """An untrained network of its own seed: far from uniform, and no evaluation opponent."""
    torch.manual_seed(seed)
    config = make_config(preset)
    return policy_model(PPOAgent(PolicyNet(num_actions=actions.num_actions(config), hidden=(16,))))


def random_decision(config, seed: int, steps: int | None = None) -> TrucoState | None:
    """A state some random actions into a match (None if it ended)."""
    state = TrucoState.new(config, seed=seed)
    r = random.Random(seed)
    for _ in range(r.randrange(0, 12) if steps is None else steps):
        if state.is_over:
            return None
        state.apply(r.choice(state.legal_actions()))
    return None if state.is_over else state


def real_cards(state: TrucoState) -> np.ndarray:
    hands = state.hand_records[-1]["deal"]["hands"]

    return np.array([[parse_card(c, state.family) for h in hands for c in h]], dtype=np.int32)


@pytest.mark.parametrize("preset", MAIN)
def test_the_real_deal_always_agrees_with_the_view(preset):
    """Over many decisions: the real deal survives the replay and the observation check, with a positive weight,
    and every sampled world agrees with the view too."""
    config = make_config(preset)
    model = a_model(preset=preset)
    rng = np.random.default_rng(0)
    checked = empty = 0
    for seed in range(40):
        state = random_decision(config, seed)
        if state is None:
            continue
        observation = observation_for(Viewer(), state, state.actor)
        rules = rules_of(observation["observation"])
        root = hand_view(observation, rules)
        if root is None:
            continue
        worlds = weigh_deals(root, rules, model, real_cards(state))
        assert len(worlds.weights) == 1 and worlds.weights[0] == 1.0, (preset, seed)
        sampled = sample_worlds(root, rules, model, 256, rng)
        empty += len(sampled.weights) == 0
        assert len(sampled.weights) == 0 or np.isclose(sampled.weights.sum(), 1.0)
        own = slice(root.seat * config.hand_size, (root.seat + 1) * config.hand_size)
        assert (sampled.cards[:, own] == np.array(root.dealt)).all()
        assert weigh_deals(root, rules, model, sampled.cards).weights.shape == sampled.weights.shape  # all agree
        checked += 1
    assert checked >= 25 and empty <= checked // 20, (checked, empty)  # rare: points shown by several seats


def same_view_other_cards(state: TrucoState, rng: random.Random) -> TrucoState | None:
    """The first hand of ``state`` replayed with the other seats' unplayed cards dealt again from what the actor
    cannot see (None when that replay is not legal or looks different to the actor)."""

    record = state.hand_records[-1]
    seat = state.actor
    hands = [[parse_card(c, state.family) for c in h] for h in record["deal"]["hands"]]
    played = {(s, parse_card(a.split(":")[1], state.family)) for s, a in record["actions"] if a.startswith("play:")}
    vira = None if record["deal"]["vira"] is None else parse_card(record["deal"]["vira"], state.family)
    hidden = [(s, i) for s, h in enumerate(hands) for i, c in enumerate(h)
              if s != seat and (s, c) not in played and (s % 2 != seat % 2 or state.num_players == 2)]
    pool = [c for c in deck(state.family) if c not in {x for h in hands for x in h} | {vira}]
    pool += [hands[s][i] for s, i in hidden]
    rng.shuffle(pool)
    for (s, i), card in zip(hidden, pool):
        hands[s][i] = card
    deal = {"hands": [[card_text(c, state.family) for c in h] for h in hands], "dealer": record["dealer"]}
    if vira is not None:
        deal["vira"] = card_text(vira, state.family)
    other = TrucoState.new(state.config, deal=deal)
    for _, action in record["actions"]:
        if action not in other.legal_actions():
            return None
        other.apply(action)
    if other.actor != seat or not np.array_equal(encode_observation(other, seat), encode_observation(state, seat)):
        return None
    return other


@pytest.mark.parametrize("preset", ["argentine", "paulista-2v2", "argentine-2v2-senas"])
def test_a_belief_reads_nothing_its_seat_may_not_see(preset):
    """Two real states that look the same to the seat (other hidden cards) give the same belief, draw for draw."""
    config = make_config(preset)
    model = a_model(preset=preset)
    compared = 0
    for seed in range(60):
        state = TrucoState.new(config, seed=seed)
        r = random.Random(seed)
        for _ in range(r.randrange(0, 6)):
            if state.hand_index > 0 or state.is_over:
                break
            state.apply(r.choice(state.legal_actions()))
        if state.is_over or state.hand_index > 0:
            continue
        other = same_view_other_cards(state, random.Random(seed + 1))
        if other is None:
            continue
        beliefs = []
        for real in (state, other):
            observation = observation_for(Viewer(), real, real.actor)
            rules = rules_of(observation["observation"])
            beliefs.append(sample_worlds(hand_view(observation, rules), rules, model, 64, np.random.default_rng(7)))
        assert not np.array_equal(real_cards(state), real_cards(other))
        assert np.array_equal(beliefs[0].cards, beliefs[1].cards)
        assert np.array_equal(beliefs[0].weights, beliefs[1].weights)
        compared += 1
    assert compared >= 20


def test_with_a_uniform_model_it_samples_the_heuristics_deals():
    """The heuristic's sampler and the belief without a model give each unseen card the same chance of being in
    the opponent's hand, where points were shown. The heuristic redraws a deal until it agrees with the points
    (keeping the 25th draw if none does): its draws that agree are uniform over the agreeing deals, which is
    what the belief's are. (Where a seat said "son buenas" the belief knows more than the heuristic's sampler,
    which does not read it: such states are left out.)"""
    from agents.heuristic_reference import ReferenceHeuristic, _envido
    from agents.view import decode

    config = make_config("argentine")
    compared = 0
    for seed in range(600):
        state = random_decision(config, seed, steps=random.Random(seed).randrange(2, 8))
        if state is None or state.hand_index > 0 or not state.envido_announcements:
            continue
        if any(points is None for _, points in state.envido_announcements):
            continue
        observation = observation_for(Viewer(), state, state.actor)
        rules = rules_of(observation["observation"])
        root = hand_view(observation, rules)
        opponent = 1 - root.seat
        played = [a for s, a in root.history if s == opponent and a < 40]
        shown = dict(state.envido_announcements).get(opponent)
        _, _, draws = ReferenceHeuristic(seed=seed)._draw(decode(observation), 20000)
        theirs = np.zeros(40)
        for drawn in draws:
            if shown is None or _envido(played + list(drawn)) == shown:
                theirs[drawn] += 1
        worlds = sample_worlds(root, rules, None, 20000, np.random.default_rng(seed))
        ours = np.zeros(40)
        for cards, weight in zip(worlds.cards, worlds.weights):
            for card in cards[opponent * 3:(opponent + 1) * 3]:
                if card not in played:
                    ours[card] += weight
        distance = 0.5 * np.abs(ours / ours.sum() - theirs / theirs.sum()).sum()
        assert distance < 0.05, (seed, distance)  # sampling noise alone is about 0.025
        compared += 1
        if compared == 5:
            break
    assert compared == 5


def exact_posterior(state: TrucoState, model) -> dict[int, float]:
    """Independently of agents/belief.py, on the reference engine: for each card the opponent may hold in
    argentine-mini's first hand, the probability of its actions with that card (the floor mixed in, as the belief
    does), normalized."""

    seat = state.actor
    record = state.hand_records[-1]
    hands = [[parse_card(c, state.family) for c in h] for h in record["deal"]["hands"]]
    own = hands[seat][0]
    weights = {}
    for card in deck(state.family, state.config.deck, state.config.deck_ranks):
        if card == own:
            continue
        deal = [[own], [card]] if seat == 0 else [[card], [own]]
        world = TrucoState.new(state.config, deal={"hands": [[card_text(c, state.family) for c in h] for h in deal],
                                                   "dealer": record["dealer"]})
        weight = 1.0
        for actor, action in record["actions"]:
            if action not in world.legal_actions():
                weight = 0.0
                break
            if actor != seat:
                mask = encode_action_mask(world)
                p = model(encode_observation(world, actor)[None], mask[None])[0, actions.action_id(action, state.family)]
                weight *= (1 - FLOOR) * p + FLOOR / mask.sum()
            world.apply(action)
        if weight and np.array_equal(encode_observation(world, seat), encode_observation(state, seat)):
            weights[card] = weight
    total = sum(weights.values())
    return {card: w / total for card, w in weights.items()}


def test_on_argentine_mini_the_weights_are_the_exact_posterior():
    """Every deal weighed: the belief's weights equal the posterior computed on the reference engine by
    enumeration; sampled: the belief's distribution of the opponent's card is within sampling error of it."""
    config = make_config("argentine-mini")
    model = a_model(3, "argentine-mini")
    compared = 0
    for seed in range(200):
        state = random_decision(config, seed, steps=random.Random(seed).randrange(1, 4))
        if state is None or state.hand_index > 0:
            continue
        observation = observation_for(Viewer(), state, state.actor)
        rules = rules_of(observation["observation"])
        root = hand_view(observation, rules)
        exact = exact_posterior(state, model)
        if len(exact) < 5 or max(exact.values()) > 0.5:
            continue
        opponent = 1 - root.seat
        every = np.array([[*([root.dealt[0], c] if root.seat == 0 else [c, root.dealt[0]])] for c in rules.deck
                          if c != root.dealt[0]], dtype=np.int32)
        weighed = weigh_deals(root, rules, model, every)
        got = {int(cards[opponent]): w for cards, w in zip(weighed.cards, weighed.weights)}
        assert got.keys() == exact.keys()
        assert max(abs(got[c] - exact[c]) for c in exact) < 1e-5
        sampled = sample_worlds(root, rules, model, 20000, np.random.default_rng(seed))
        estimate = dict.fromkeys(exact, 0.0)
        for cards, w in zip(sampled.cards, sampled.weights):
            estimate[int(cards[opponent])] += w
        assert 0.5 * sum(abs(estimate[c] - exact[c]) for c in exact) < 0.05
        compared += 1
        if compared == 6:
            break
    assert compared == 6


def test_deals_keep_what_is_known_and_spread_the_rest():
    config = make_config("paulista-2v2")
    state = random_decision(config, 5, steps=6)
    observation = observation_for(Viewer(), state, state.actor)
    rules = rules_of(observation["observation"])
    root = hand_view(observation, rules)
    deals = deal_candidates(root, rules, 500, np.random.default_rng(1))
    assert (np.sort(deals, axis=1)[:, 1:] != np.sort(deals, axis=1)[:, :-1]).all()  # no card twice
    assert root.vira not in deals
    for seat, action in root.history:
        if seat != root.seat and action < 40:
            assert (deals[:, seat * 3:(seat + 1) * 3] == action).any(1).all()


def test_a_model_that_gives_nothing_finite_is_made_uniform_over_the_legal_actions():
    """A stranger's model (an ONNX file) may give NaN or no mass to the legal actions: the search's rollouts must
    still only ever take a legal action."""

    class Broken:
        batched, wants = True, frozenset()

        def __init__(self, value):
            self.value = value

        def probabilities(self, obs, mask):
            out = np.zeros(mask.shape)
            out[:, 0] = self.value
            return out

    mask = np.zeros((2, 98), dtype=np.int8)
    mask[:, [5, 83, 97]] = 1
    for value in (np.nan, 0.0, np.inf, -1.0):
        probs = policy_model(Broken(value))(np.zeros((2, 1086), np.float32), mask)
        assert np.allclose(probs[:, [5, 83, 97]], 1 / 3) and probs.sum() == pytest.approx(2.0)
