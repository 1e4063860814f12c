"""Beliefs over the unseen cards, from one seat's observation alone: the worlds a search plays forward.

Why weights and not only consistency: the heuristic's look-ahead samples the deals that agree with what was shown
(the points announced, the cards played) and treats every such deal as equally likely. But a seat that raised to
vale cuatro rarely holds nothing, and a partner who signalled holds what the signal says. A belief that weighs each
deal by how likely the other seats' actions of this hand were, had they held those cards, reads both.

A *world* is a full deal of the current hand together with the kernel state it leads to. :func:`sample_worlds`:

1. Deals. The cards the seat cannot see (the deck less its own dealt cards, the vira, the cards the others played
   face up this hand and a partner's cards where the rules show them) are dealt at random to the other seats,
   each keeping the cards it is known to hold: ``candidates`` deals, uniform over the completions.
2. Replay. The hand is replayed from its start (dealer, score, this match's action tally before the hand) on the
   compiled engine (:mod:`truco_env._kernel`) with each deal. A deal under which an action of the history would
   be illegal, or after which the seat's observation differs from its real one in any value (points shown, flor
   declared, the order of play, the tally), cannot be the real one: weight 0.
3. Weights. Each remaining deal is weighted by the product, over the other seats' actions of the hand, of the
   probability the *model* gives that action from that seat's observation in the world: with
   :data:`FLOOR` of uniform over the legal actions mixed in, so that an action the model would never take (a
   seat that does not play like the model) lowers a deal's weight instead of ruling it out. The seat's own
   actions carry no weight: it knows its cards, so they say nothing about the others'.

The model is the agent itself by default (:func:`policy_model`: a network, an ONNX export or a CFR blueprint, each
as one batched call over every world per step of the history); ``None`` gives every action the same weight, which
is the heuristic's consistency sampling. Only the seat's own observation and its information-state string (the
hand's public actions and its own dealt cards) are read, never the engine's state, so two real states that look
the same to the seat give the same belief (``tests/test_belief.py`` checks it over many deals).

Señas. The signals the seat saw are actions of its history like any other: replayed, and weighted by the model's
probability of that gesture from the signalling seat's cards, which is how a partner's honest signal moves the
belief. Who catches whose signal is part of a world: what the seat knows of it is kept (who caught its own
signal, and that it caught each opponent's signal it saw), the rest is drawn with the rules' catch probability. A
signal the seat did not see is no part of its history and of no world: a world has the other seats signal only
where the seat saw it (their partners' observations in the world lack those signals).

Not covered, where :func:`hand_view` returns None and the caller plays without a belief: a blind mão de ferro
(nobody sees their cards) and a card played face down (no preset uses the rule).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from numba import njit

import truco_env.cards
from truco_env import _kernel
from truco_env.config import PRESETS, TrucoConfig
from truco_env.encoding import observation_size
from truco_env.fast import config_array, options_array

from .cfr.search import HandRoot, root_from_info_string

#: The share of uniform over the legal actions mixed into the model's probability of each observed action.
FLOOR = 0.05
#: Rounds of ``candidates`` proposed deals a belief may draw to find ``candidates`` that agree with the view.
ROUNDS = 8
#: How far an observation value of a world may lie from the real one and still agree (float32 rounding of the
#: tally's shares).
TOLERANCE = 1e-4
_TALLY = slice(_kernel.O_TALLY, _kernel.O_TALLY + 2 * (_kernel.NUM_TALLY + 1))

#: A model of a seat: action probabilities [rows, actions] for observations [rows, obs] and masks [rows, actions].
Model = Callable[[np.ndarray, np.ndarray], np.ndarray]
#: What a plan asks the model: observations [rows, obs] and masks [rows, actions]; it is sent the probabilities.
Request = tuple[np.ndarray, np.ndarray]
T = TypeVar("T")
#: A computation that asks the model as it goes (a generator of :data:`Request`), so that many of them, one per
#: table, can share one model call per round (:func:`run_plans`).
Plan = Generator[Request, np.ndarray, T]


def run_plans(plans: Sequence[Plan[Any]], model: Model) -> list[Any]:
    """The results of ``plans``, run side by side: each round, every rows they ask about in one call of ``model``.

    Why: a network call costs about the same for a few rows as for thousands, and a search asks one per step of
    the history and of the rollouts; tables searched together (a best response's batch of matches) then cost one
    call per round instead of one per table. Each plan's own randomness is its own, so a plan gives the same
    result run alone or beside others."""
    results: list[Any] = [None] * len(plans)
    asks: dict[int, Request] = {}

    def advance(i: int, answer: np.ndarray | None) -> None:
        try:
            asks[i] = plans[i].send(answer)  # type: ignore[arg-type]
        except StopIteration as done:
            asks.pop(i, None)
            results[i] = done.value

    for i in range(len(plans)):
        advance(i, None)
    while asks:
        order = list(asks)
        probs = model(np.concatenate([asks[i][0] for i in order]), np.concatenate([asks[i][1] for i in order]))
        for i, part in zip(order, np.split(probs, np.cumsum([len(asks[i][0]) for i in order])[:-1]), strict=True):
            advance(i, part)
    return results


def run_plan(plan: Plan[T], model: Model | None) -> T:
    """One plan's result (a plan that never asks needs no model)."""
    return run_plans([plan], model)[0]  # type: ignore[arg-type]


def policy_model(agent) -> Model | None:
    """``agent``'s mixed strategy as a batched :data:`Model`, or None where it has none (a rule-based agent). The
    probabilities are its softmax even where the agent plays its most probable action: the belief and the
    rollouts price what it might do, not only its favourite. Every row is made safe: zero off the mask, and
    uniform over the legal actions where a stranger's model gives them no finite positive mass (the compiled
    engine trusts that a rollout's action is legal)."""
    raw = _raw_model(agent)
    if raw is None:
        return None

    def model(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        legal = mask > 0
        probs = np.where(legal, np.nan_to_num(np.asarray(raw(obs, mask), dtype=np.float64)[:, :mask.shape[1]],
                                              nan=0.0, posinf=0.0, neginf=0.0), 0.0)
        probs = np.maximum(probs, 0.0)
        total = probs.sum(1, keepdims=True)
        bad = ~(total > 0)
        return np.where(bad, legal / np.maximum(legal.sum(1, keepdims=True), 1), probs / np.where(bad, 1, total))

    return model


def _raw_model(agent) -> Model | None:
    net = getattr(agent, "net", None)
    if net is not None:  # a PPO policy
        import torch

        def network(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
            with torch.no_grad():
                return net.probabilities(torch.from_numpy(obs), torch.from_numpy(mask > 0)).double().numpy()

        return network
    probabilities = getattr(agent, "probabilities", None)
    if not callable(probabilities) or getattr(agent, "wants", None):
        return None
    if getattr(agent, "batched", False):  # an ONNX export
        return lambda obs, mask: np.asarray(probabilities(obs, mask), dtype=np.float64)
    return lambda obs, mask: np.stack([probabilities({"observation": o, "action_mask": m})  # a CFR blueprint
                                       for o, m in zip(obs, mask)]).astype(np.float64)


@dataclass
class Rules:
    """The rules a seat plays, as the kernel reads them, found from its observation's static part."""

    config: TrucoConfig
    cfg: np.ndarray
    template: np.ndarray  # an observation whose static part is filled in
    deck: np.ndarray


_RULES: dict[bytes, Rules | None] = {}


def rules_of(observation: np.ndarray) -> Rules | None:
    """The preset whose rules the observation's static part states (None if no preset, or more than one with
    other kernel rules, matches)."""
    observation = np.asarray(observation, dtype=np.float32)
    tail = _static(observation)
    if tail not in _RULES:
        found = {}
        for config in PRESETS.values():
            out = np.zeros(observation_size(config), dtype=np.float32)
            cfg = config_array(config)
            _kernel.encode_static(cfg, options_array(config), out)
            if len(out) > _kernel.O_SENA_CODE:  # señas: the code is the one static value of their block
                out[_kernel.O_SENA_CODE] = 1.0 if config.sena_code == "table" else 0.0
            if _static(out) == tail:
                found[cfg.tobytes()] = Rules(config, cfg, out, np.asarray(
                    truco_env.cards.deck(config.family, config.deck, config.deck_ranks), dtype=np.int32))
        _RULES[tail] = next(iter(found.values())) if len(found) == 1 else None
    return _RULES[tail]


@dataclass
class SeatView(HandRoot):
    """What a seat knows of the hand (:class:`~agents.cfr.search.HandRoot`) and the envido points each seat
    showed (-1: none)."""

    points: np.ndarray | None = None
    caught: tuple[int, ...] | None = None  # señas: who caught its own signal (None: it did not signal)


def _static(observation: np.ndarray) -> bytes:
    """The values of an observation that the rules alone fix (and its length)."""
    code = observation[_kernel.O_SENA_CODE:_kernel.O_SENA_CODE + 1] if len(observation) > _kernel.O_SENA_CODE else observation[:0]
    return observation[_kernel.O_FAMILY:_kernel.O_TALLY].tobytes() + code.tobytes() + len(observation).to_bytes(4, "little")


def hand_view(observation: dict, rules: Rules) -> SeatView | None:
    """What the seat knows of the hand, or None where a belief is not made (module docstring)."""
    info = observation.get("info_state_string")
    if info is None:
        return None
    root = root_from_info_string(info, observation["observation"], observation["action_mask"], rules.config)
    if root.blind or any(action < 0 for _, action in root.history):
        return None
    return SeatView(**vars(root), points=shown_points(observation, rules, root.seat),
                    caught=own_signal_caught_by(observation["info_state_string"], rules, root.seat))


def own_signal_caught_by(info: str, rules: Rules, seat: int) -> tuple[int, ...] | None:
    """With señas, the opponents who caught the seat's own signal this hand (None when it did not signal)."""
    n = rules.config.num_players
    last = info.split("|")[1].split(";")[-1]
    for move in last.partition(":")[2].split():
        if move[0] == "0" and move[1:].startswith("sena:") and "^" in move:
            return tuple(sorted((seat + int(rel)) % n for rel in move.split("^")[1]))
    return None


@dataclass
class Worlds:
    """Deals consistent with a seat's view, their kernel states at the decision, and their normalized weights."""

    cards: np.ndarray  # [worlds, seats * hand size], seat-major
    states: np.ndarray  # [worlds, K.STATE_SIZE]
    weights: np.ndarray  # [worlds], summing to 1


def new_worlds(root: HandRoot, rules: Rules, cards: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Kernel states at the hand's start, one per deal of ``cards``; with señas, who catches whose signal: what
    the seat knows of it kept, the rest drawn (module docstring)."""
    states = np.zeros((len(cards), _kernel.STATE_SIZE), dtype=np.int32)
    catches = np.zeros((len(cards), rules.config.num_players), dtype=np.int32)
    if rules.config.senas:
        catches = signal_catches(root, rules, len(cards), rng)
    _deal_worlds(states, rules.cfg, root.dealer, root.score[0], root.score[1], cards, root.vira,
                 hand_start_tally(root, rules), catches)
    return states


def signal_catches(root: HandRoot, rules: Rules, count: int, rng: np.random.Generator) -> np.ndarray:
    """Per world and seat, the bit mask of the opponents who catch its signal (``K.S_CATCH``)."""
    n = rules.config.num_players
    drawn = rng.random((count, n, n)) < rules.config.sena_catch
    for s in range(n):
        for o in range(n):
            if o % 2 == s % 2:
                drawn[:, s, o] = False
    caught = getattr(root, "caught", None)
    if caught is not None:
        drawn[:, root.seat, :] = False
        drawn[:, root.seat, list(caught)] = True
    for seat, action in root.history:
        if action >= _kernel.A_SENA and seat % 2 != root.seat % 2:  # an opponent's signal it saw: it caught it
            drawn[:, seat, root.seat] = True
    return (drawn * (1 << np.arange(n))).sum(2).astype(np.int32)


def hand_start_tally(root: HandRoot, rules: Rules) -> np.ndarray:
    """The match's action tally (per team, per class; ``K.S_TALLY`` layout) before this hand, read back from the
    observation's tally shares and counts less the hand's own actions."""
    obs = root.obs
    team = root.seat % 2
    tally = np.zeros(2 * _kernel.NUM_TALLY, dtype=np.int64)
    for row in range(2):
        base = _kernel.O_TALLY + (_kernel.NUM_TALLY + 1) * row
        share = float(obs[base + _kernel.NUM_TALLY])
        total = round(_kernel.TALLY_SCALE * share / (1.0 - share)) if share > 0 else 0
        absolute = team if row == 0 else 1 - team
        tally[_kernel.NUM_TALLY * absolute:_kernel.NUM_TALLY * (absolute + 1)] = np.rint(obs[base:base + _kernel.NUM_TALLY] * total)
    for seat, action in root.history:
        if action < _kernel.A_SENA:
            tally[_kernel.NUM_TALLY * (seat % 2) + _tally_class(action)] -= 1
    return np.maximum(tally, 0).astype(np.int32)


def _tally_class(action: int) -> int:
    return int(_kernel._tally_class(action))


def known_cards(root: HandRoot, rules: Rules) -> dict[int, list[int]]:
    """The cards each other seat is known to hold in its dealt hand: those it played face up this hand, and a
    partner's cards where the rules show them (read from the observation)."""
    n = rules.config.num_players
    known: dict[int, list[int]] = {s: [] for s in range(n) if s != root.seat}
    for seat, action in root.history:
        if seat != root.seat and action < _kernel.A_COVER:
            known[seat].append(int(action))
    partners = [s for s in known if s % 2 == root.seat % 2]
    shown = np.flatnonzero(root.obs[_kernel.O_PARTNER:_kernel.O_PARTNER + 40] > 0.5)
    if len(partners) == 1 and shown.size:
        known[partners[0]] += [int(c) for c in shown if c not in known[partners[0]]]
    return known


def shown_points(observation: dict, rules: Rules, seat: int) -> np.ndarray:
    """The envido points each seat showed this hand (-1: none shown, or "son buenas"), from the seat's
    information-state string."""
    n = rules.config.num_players
    points = np.full(n, -1, dtype=np.int64)
    for item in observation["info_state_string"].rpartition("|")[2].split(","):
        kind, _, value = item.partition("=")
        if kind[:1] == "e" and value not in ("", "-"):
            points[(seat + int(kind[1:])) % n] = int(value)
    return points


def deal_candidates(root: HandRoot, rules: Rules, count: int, rng: np.random.Generator,
                    points: np.ndarray | None = None) -> np.ndarray:
    """Up to ``count`` deals [deals, seats * hand size] uniform over the completions of what the seat knows that
    give each seat the envido ``points`` it showed (-1: any), drawn in compiled code (at most
    :data:`ROUNDS` times ``count`` tries: points shown by two seats can leave one completion in hundreds); within
    each other seat's hand the order is random too (it is dealt order, which a seat's own observation shows)."""
    n, hs = rules.config.num_players, rules.config.hand_size
    known = known_cards(root, rules)
    fixed = set(root.dealt) | {c for cards in known.values() for c in cards} | ({root.vira} if root.vira >= 0 else set())
    pool = np.array([c for c in rules.deck if c not in fixed], dtype=np.int32)
    if sum(hs - len(cards) for cards in known.values()) > len(pool) or any(len(c) > hs for c in known.values()):
        return np.zeros((0, n * hs), dtype=np.int32)
    base = np.full(n * hs, -1, dtype=np.int32)
    base[root.seat * hs:(root.seat + 1) * hs] = root.dealt
    for seat, cards in known.items():
        base[seat * hs:seat * hs + len(cards)] = cards
    targets = np.full(n, -1, dtype=np.int64) if points is None else points.copy()
    targets[root.seat] = -1
    out = np.zeros((count, n * hs), dtype=np.int32)
    found = _draw_deals(int(rng.integers(2 ** 31)), pool, base, targets, hs, ROUNDS * count, out)
    out = out[:found]
    for seat in known:  # dealt order within each other seat's hand
        order = np.argsort(rng.random((found, hs)), axis=1)
        out[:, seat * hs:(seat + 1) * hs] = np.take_along_axis(out[:, seat * hs:(seat + 1) * hs], order, axis=1)
    return out


def sample_worlds(root: HandRoot, rules: Rules, model: Model | None, candidates: int,
                  rng: np.random.Generator) -> Worlds:
    """The belief over the hand's deals (module docstring): every one of ``candidates`` proposed deals that agrees
    with the seat's view, with its weight; none when no candidate agrees."""
    return run_plan(sampling(root, rules, model is not None, candidates, rng), model)


def sampling(root: HandRoot, rules: Rules, modelled: bool, candidates: int, rng: np.random.Generator
             ) -> Plan[Worlds]:
    """:func:`sample_worlds` as a :data:`Plan` (``modelled``: weighed by the model it is run with)."""
    cards = deal_candidates(root, rules, candidates, rng, getattr(root, "points", None))
    return (yield from weighing(root, rules, modelled, cards[agreeing(root, rules, cards)]))


def agreeing(root: HandRoot, rules: Rules, cards: np.ndarray) -> np.ndarray:
    """Which deals of ``cards`` agree with the seat's view (module docstring, 2), as a boolean mask: the replay
    without the model, cheap enough to try many deals."""
    states = new_worlds(root, rules, cards, np.random.default_rng(len(cards)))
    history = np.array(root.history, dtype=np.int64).reshape(-1, 2)
    alive = np.ones(len(cards), dtype=np.bool_)
    _replay(states, rules.cfg, history, alive, np.zeros(len(root.mask), dtype=np.int8))
    return _agree(states, rules, alive, root)


def _agree(states: np.ndarray, rules: Rules, alive: np.ndarray, root: HandRoot) -> np.ndarray:
    """Live worlds where the seat is to act and sees exactly what it really sees."""
    obs = np.tile(rules.template, (len(states), 1))
    _observe(states, rules.cfg, alive, root.seat, obs, np.zeros((len(states), len(root.mask)), dtype=np.int8))
    real = np.asarray(root.obs, dtype=np.float32)
    return alive & (np.abs(obs[:, :_kernel.O_FAMILY] - real[:_kernel.O_FAMILY]).max(1, initial=0) <= TOLERANCE) & (
        np.abs(obs[:, _TALLY] - real[_TALLY]).max(1, initial=0) <= TOLERANCE) & (
        np.abs(obs[:, _kernel.O_SENAS_SEEN:] - real[_kernel.O_SENAS_SEEN:]).max(1, initial=0) <= TOLERANCE)


def weigh_deals(root: HandRoot, rules: Rules, model: Model | None, cards: np.ndarray) -> Worlds:
    """The deals of ``cards`` [deals, seats * hand size] that agree with the seat's view, each with its weight
    (module docstring, 2-3), the weights normalized."""
    return run_plan(weighing(root, rules, model is not None, cards), model)


def weighing(root: HandRoot, rules: Rules, modelled: bool, cards: np.ndarray) -> Plan[Worlds]:
    """:func:`weigh_deals` as a :data:`Plan`: one request per action of another seat in the hand."""
    k = len(cards)
    states = new_worlds(root, rules, cards, np.random.default_rng(k))
    alive = np.ones(k, dtype=np.bool_)
    weights = np.ones(k, dtype=np.float64)
    obs = np.tile(rules.template, (k, 1))
    masks = np.zeros((k, len(root.mask)), dtype=np.int8)
    for seat, action in root.history:
        _observe(states, rules.cfg, alive, seat, obs, masks)
        rows = np.flatnonzero(alive & (masks[:, action] > 0))
        alive[:] = False
        alive[rows] = True
        if seat != root.seat and modelled and rows.size:
            probs = (yield obs[rows], masks[rows])[:, action]
            weights[rows] *= (1 - FLOOR) * probs + FLOOR / masks[rows].sum(1)
        _apply_action(states, rules.cfg, alive, action)
    keep = np.flatnonzero(_agree(states, rules, alive, root) & (weights > 0))
    total = weights[keep].sum()
    return Worlds(cards[keep], states[keep], weights[keep] / total if total > 0 else weights[keep])


# ---------------------------------------------------------------------------------------------------------------
# the kernel, many worlds at a time


@njit(cache=True)
def _deal_worlds(states, cfg, dealer, score0, score1, cards, vira, tally, catches):
    for i in range(states.shape[0]):
        st = states[i]
        _kernel.new_match(st, cfg, dealer, score0, score1)
        for j in range(tally.shape[0]):
            st[_kernel.S_TALLY + j] = tally[j]
        for j in range(catches.shape[1]):
            st[_kernel.S_CATCH + j] = catches[i, j]
        _kernel.deal(st, cfg, cards[i], vira)


@njit(cache=True)
def _observe(states, cfg, alive, seat, obs, masks):
    """For each live world: the actor's legal actions and ``seat``'s observation; a world where ``seat`` is not
    the one to act is no longer live."""
    for i in range(states.shape[0]):
        if not alive[i]:
            continue
        st = states[i]
        if st[_kernel.S_PHASE] == _kernel.OVER or st[_kernel.S_PHASE] == _kernel.DEAL or st[_kernel.S_ACTOR] != seat:
            alive[i] = False
            continue
        _kernel.legal_mask(st, cfg, masks[i])
        _kernel.encode_obs(st, cfg, seat, obs[i])


@njit(cache=True)
def _draw_deals(seed, pool, base, targets, hand_size, tries, out):
    """Fill the free places (-1) of ``base`` from ``pool`` at random into each row of ``out``, keeping a draw only
    when every seat with a target (>= 0) has those envido points; returns the rows filled (at most ``tries``
    draws)."""
    np.random.seed(seed)
    free = np.flatnonzero(base < 0)
    m = free.shape[0]
    cards = pool.copy()
    scratch = np.zeros(_kernel.STATE_SIZE, dtype=np.int32)
    found = 0
    for _ in range(tries):
        if found == out.shape[0]:
            break
        for j in range(m):  # a partial Fisher-Yates shuffle: the first m cards are a uniform draw
            r = j + np.random.randint(cards.shape[0] - j)
            cards[j], cards[r] = cards[r], cards[j]
        row = base.copy()
        for j in range(m):
            row[free[j]] = cards[j]
        ok = True
        for s in range(targets.shape[0]):
            if targets[s] >= 0:
                for i in range(hand_size):
                    scratch[_kernel.S_DEALT + 3 * s + i] = row[s * hand_size + i]
                if _kernel._envido_of(scratch, s, hand_size) != targets[s]:
                    ok = False
                    break
        if ok:
            out[found] = row
            found += 1
    return found


@njit(cache=True)
def _replay(states, cfg, history, alive, mask):
    """Replay the hand's ``history`` [(seat, action)] in every live world; a world where an action is not the
    actor's or not legal is no longer live."""
    for i in range(states.shape[0]):
        st = states[i]
        for t in range(history.shape[0]):
            if st[_kernel.S_PHASE] == _kernel.OVER or st[_kernel.S_PHASE] == _kernel.DEAL or st[_kernel.S_ACTOR] != history[t, 0]:
                alive[i] = False
                break
            _kernel.legal_mask(st, cfg, mask)
            if mask[history[t, 1]] == 0:
                alive[i] = False
                break
            _kernel.apply(st, cfg, history[t, 1])


@njit(cache=True)
def _apply_action(states, cfg, alive, action):
    for i in range(states.shape[0]):
        if alive[i]:
            _kernel.apply(states[i], cfg, action)
