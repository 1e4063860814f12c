"""Scripted opponents for the held-out gauntlet: ``threshold``, ``station`` and ``maniac``.

Why these exist: a policy trained against ``heuristic`` (and itself) can learn to exploit that one player's habits
and still look strong when evaluated against it. These bots are an independently written family of rule-based
players (they share nothing with :mod:`agents.heuristic`: no look-ahead, no sampling, no match equity) that no
policy trains against, so a gauntlet of them rewards play that is sound in general, not play that only beats the
heuristic. They act on their observation dict alone (decoded by :mod:`agents.view`), handle every preset, and are
pure Python thresholds, so a gauntlet costs little.

Specs and rules:

* ``threshold`` (``threshold:bet=0.72,call=0.5,envido_call=26,seed=1``) plays by card-strength thresholds.
  Hand strength = mean over its unplayed cards of each card's *rank share* (the share of the deck's other cards it
  beats, ties half, with the hand's strength table so Paulista manilhas count), plus ``TRICK_STEP`` per trick won
  and minus it per trick lost, nudged by whether it can beat the opponents' card in the current trick.

  - Ladder (truco / retruco / vale cuatro; truco / seis / nove / doze): on its own turn it proposes the next level
    when strength >= ``bet`` + ``RAISE_MARGIN`` x the accepted level; answering a proposal of level ``k`` it raises
    when strength >= ``bet`` + ``RAISE_MARGIN`` x ``k``, accepts when >= ``call``, otherwise refuses. A threshold
    of 1 means "never" (1.0 turns proposals off, 0.0 accepts everything).
  - Envido (Argentine, from the envido points of its dealt cards): opens ``envido`` at >= 27, ``real_envido`` at
    >= 30, ``falta_envido`` at >= 32 only when the falta is cheap (losing it would not end the match for the
    opponents, or it is worth at most 3); answers raise with the same thresholds, accept at >= ``envido_call``
    (a falta needs 31 unless cheap), otherwise refuse. It opens before trick 1's card and also as "envido va
    primero" against a first-trick truco.
  - Flor: always declared when legal (the rules force it); in a contest it raises with a flor of 35 or more,
    accepts with 29 or more, otherwise backs down.
  - Cards: wins the trick with the cheapest card that beats the table, ties when it cannot win after trick 1,
    otherwise throws its lowest; never overtakes a partner's winning card; leads the middle card in trick 1 and
    its highest later. A blind mão de ferro slot is chosen uniformly with its seeded generator.
  - Mão de onze (Paulista, team at 11): plays when strength >= 0.55 (the better of its and a visible partner's
    hand), else runs.
  - ``mazo`` only when it is the only legal action; never a truco call in a mão de onze/ferro (fatal where legal).
* ``station`` (``station:seed=1``), the poker "calling station": never proposes a ladder call or an envido, accepts
  every proposal (ladder, envido, flor contest, mão de onze), never refuses or folds, and plays cards by the
  ``threshold`` card rule.
* ``maniac`` (``maniac:seed=1``), the poker "maniac": raises a flor contest, opens or raises the envido (a
  uniformly drawn legal call of each kind) and raises the ladder whenever legal (except the fatal truco of a mão de
  onze/ferro), never refuses, otherwise plays a uniformly random legal card. It reads only the mask and two flags,
  so it never decodes the observation.

All three are deterministic given their seed (``Agent.seed`` reseeds the generator that breaks blind or random
choices); tournaments reseed them per match.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

import truco_env.cards
from truco_env import actions
from truco_env.cards import FAMILIES, NUM_CARDS, PAULISTA, hand_points
from truco_env.encoding import OBS_OFFSETS

from .base import SEED_PARAM, Agent, number_in, register_agent, spec_params
from .view import OPP, OWN, View, decode

LADDER = ("truco", "retruco", "vale_cuatro", "seis", "nove", "doze")
ENVIDO_CALLS = ("envido", "real_envido", "falta_envido")
FLOR_RAISES = ("contraflor", "contraflor_al_resto")
ENVIDO_AT, REAL_ENVIDO_AT, FALTA_ENVIDO_AT = 27, 30, 32
FALTA_ACCEPT_AT = 31  # accepting a falta that is not cheap needs about the top tenth of envido hands
FLOR_RAISE_AT, FLOR_ACCEPT_AT = 35, 29
RAISE_MARGIN = 0.1  # extra strength per ladder level for raising
TRICK_STEP = 0.2  # strength added per trick won, removed per trick lost
TABLE_STEP = 0.1  # strength added when it can beat the opponents' card on the table, removed when it cannot
ONZE_PLAY_AT = 0.55
CHEAP_FALTA = 3

_CALL_ID = {name: actions.CALL_BASE + i for i, name in enumerate(actions.CALLS)}
_FLOR, _QUIERO, _NO_QUIERO, _MAZO = (_CALL_ID[n] for n in ("flor", "quiero", "no_quiero", "mazo"))
_LADDER_IDS = frozenset(_CALL_ID[n] for n in LADDER)
_ENVIDO_IDS = frozenset(_CALL_ID[n] for n in ENVIDO_CALLS)
_FLOR_RAISE_IDS = frozenset(_CALL_ID[n] for n in FLOR_RAISES)
_MAO_DE_ONZE = OBS_OFFSETS["special_hand"][0]
_MAO_DE_FERRO = _MAO_DE_ONZE + 1

_SHARES: dict[tuple, tuple[float, ...]] = {}
_FULL_DECKS = {(family, clean): truco_env.cards.deck(family, "clean" if clean else "dirty")
               for family in FAMILIES for clean in (False, True)
               if family == PAULISTA or not clean}


def _legal_ids(observation: dict[str, Any]) -> list[int]:
    legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
    if not legal:
        raise ValueError("scripted agent: the action mask has no legal action")
    return legal


def rank_shares(view: View) -> tuple[float, ...]:
    """Per card index, the share of the deck's other cards it beats (ties half), for this hand's strength table.
    Why a share: it puts both families, both Paulista decks and the manilhas on one 0..1 scale."""
    if view.options.get("single_hand"):
        deck = view.deck()
    else:
        deck = _FULL_DECKS[(view.family, view.family == PAULISTA and view.options.get("deck=clean", False))]
    key = (deck, view.manilha_rank, view.vira)
    shares = _SHARES.get(key)
    if shares is None:
        strength = view.strength
        pool = [strength[c] for c in deck if c != view.vira]
        out = []
        for card in range(NUM_CARDS):
            s = strength[card]
            itself = card in deck and card != view.vira
            beaten = sum(1 for o in pool if o < s) + 0.5 * (sum(1 for o in pool if o == s) - itself)
            out.append(beaten / max(1, len(pool) - 1))
        shares = _SHARES[key] = tuple(out)
    return shares


def table_best(view: View) -> tuple[int, int | None]:
    """Strength of the best face-up card in the current trick and who holds it (OWN/OPP team, None: tied/empty)."""
    trick = view.table[view.trick_index] if view.trick_index < len(view.table) else {}
    strength = view.strength
    best, owner = 0, None
    for rel, card in trick.items():
        s = strength[card]
        team = OWN if rel % 2 == 0 else OPP
        if s > best:
            best, owner = s, team
        elif s == best and owner is not None and owner != team:
            owner = None  # top strength on both teams: a tie so far
    return best, owner


def hand_strength(view: View, cards: list[int] | None = None) -> float:
    """Mean rank share of the unplayed cards, adjusted for the tricks won and lost and the current trick."""
    cards = view.hand if cards is None else cards
    shares = rank_shares(view)
    base = sum(shares[c] for c in cards) / len(cards) if cards else 0.5
    base += TRICK_STEP * (view.trick_results.count(OWN) - view.trick_results.count(OPP))
    best, owner = table_best(view)
    if owner == OPP and cards:
        strength = view.strength
        base += TABLE_STEP if max(strength[c] for c in cards) > best else -TABLE_STEP
    return min(1.0, max(0.0, base))


def _passes(value: float, threshold: float) -> bool:
    """``value >= threshold``, where a threshold of 1 (or more) means never."""
    return threshold < 1.0 and value >= threshold


def _falta_cheap(view: View) -> bool:
    """Whether a falta envido lost to the opponents would cost little: it would not hand them the match, or it is
    worth at most ``CHEAP_FALTA`` points."""
    target = view.target
    own, opp = view.score
    lead = max(own, opp)
    if view.options.get("falta_envido=whole_match") or (
            view.options.get("falta_envido=malas_match") and view.options.get("malas_buenas") and lead <= target / 2):
        falta = target - opp
    else:
        falta = target - lead
    return opp + falta < target or falta <= CHEAP_FALTA


def _own_envido(view: View) -> int:
    dealt = view.played_by(0) + view.hand
    if not dealt:
        return view.own_envido
    return hand_points(view.family, dealt, view.vira)[0]


def card_choice(view: View, ids: dict[str, int], rng: random.Random) -> int:
    """The card rule shared by ``threshold`` and ``station``: cheapest winner, never overtake a partner, lead the
    middle card in trick 1 and the highest later."""
    strength = view.strength
    cards = sorted((a for a in view.legal if a < actions.COVER_BASE), key=lambda c: (strength[c], c))  # play:<c> is c
    if not cards:
        slots = [a for a in view.legal if actions.SLOT_BASE <= a < actions.CALL_BASE]
        if slots:
            return rng.choice(slots)  # blind mão de ferro: any slot is as good as another
        return _fallback(view, rng)
    trick = view.table[view.trick_index] if view.trick_index < len(view.table) else {}
    covered = view.covered[view.trick_index] if view.trick_index < len(view.covered) else set()
    if not trick and not covered:  # leading
        return cards[(len(cards) - 1) // 2] if view.trick_index == 0 else cards[-1]
    best, owner = table_best(view)
    if owner == OWN:
        return cards[0]  # a partner's card is winning: let it stand
    winners = [c for c in cards if strength[c] > best]
    if winners:
        return winners[0]
    ties = [c for c in cards if strength[c] == best]
    if ties and owner == OPP and view.trick_index > 0:
        return ties[0]  # after trick 1 a tie never hurts more than losing the trick
    return cards[0]


def _fallback(view: View, rng: random.Random) -> int:
    """Anything but mazo and no_quiero when possible (uniformly with the seeded generator)."""
    keep = [a for a, name in zip(view.legal, view.legal_names) if name not in ("mazo", "no_quiero")]
    return rng.choice(keep or view.legal)


def _ladder_ok(view: View) -> bool:
    """A truco call in a mão de onze or mão de ferro is fatal where it is legal at all."""
    return not (view.mao_de_onze or view.mao_de_ferro)


# ------------------------------------------------------------------------------------------------------------
# agents


class _Scripted(Agent):
    """Shared plumbing: a seeded generator, shortcuts that need only the mask, and decoding for the rest."""

    def __init__(self, seed: int | None = None):
        self._rng = random.Random(seed)

    def seed(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def act(self, observation: dict[str, Any]) -> int:
        legal = _legal_ids(observation)
        if len(legal) == 1:
            return legal[0]  # forced (a flor declaration, the last card): no need to decode
        if _FLOR in legal:
            return _FLOR  # mandatory where the rules say; a flor is never worth hiding here
        quick = self.quick(observation, legal)
        if quick is not None:
            return quick
        view = decode(observation)
        return int(self.decide(view, dict(zip(view.legal_names, view.legal))))

    def quick(self, observation: dict[str, Any], legal: list[int]) -> int | None:
        """A decision read off the mask alone (call ids are the same in both families), or None to decode.
        Why: decoding is most of the cost of a decision, and the archetypes rarely need it."""
        return None

    def decide(self, view: View, ids: dict[str, int]) -> int:
        raise NotImplementedError


class ThresholdAgent(_Scripted):
    """Card-strength thresholds for every decision (see the module docstring)."""

    def __init__(self, bet: float = 0.72, call: float = 0.5, envido_call: int = 26, seed: int | None = None):
        super().__init__(seed)
        self.bet = float(bet)
        self.call = float(call)
        self.envido_call = int(envido_call)

    def decide(self, view: View, ids: dict[str, int]) -> int:
        phase = view.phase
        if phase == "onze":
            s = hand_strength(view)
            if view.partner_cards:  # the team plays both hands: the better one decides
                s = max(s, hand_strength(view, view.partner_cards))
            if s >= ONZE_PLAY_AT or "no_quiero" not in ids:
                return ids.get("quiero", view.legal[0])
            return ids["no_quiero"]
        if phase == "flor_contest":
            return self._flor_answer(view, ids)
        if phase == "envido":
            return self._envido_answer(view, ids)
        opening = self._envido_opening(view, ids)
        if opening is not None:
            return opening
        if phase == "truco":
            return self._ladder_answer(view, ids)
        ladder = [n for n in LADDER if n in ids]
        if ladder and _ladder_ok(view) and _passes(hand_strength(view), self.bet + RAISE_MARGIN * view.truco_level):
            return ids[ladder[0]]
        return card_choice(view, ids, self._rng)

    def _envido_opening(self, view: View, ids: dict[str, int]) -> int | None:
        if not any(n in ids for n in ENVIDO_CALLS):
            return None
        return self._envido_raise(view, ids, _own_envido(view))

    def _envido_raise(self, view: View, ids: dict[str, int], points: int) -> int | None:
        if points >= FALTA_ENVIDO_AT and "falta_envido" in ids and _falta_cheap(view):
            return ids["falta_envido"]
        if points >= REAL_ENVIDO_AT and "real_envido" in ids:
            return ids["real_envido"]
        if points >= ENVIDO_AT and "envido" in ids:
            return ids["envido"]
        return None

    def _envido_answer(self, view: View, ids: dict[str, int]) -> int:
        points = _own_envido(view)
        raised = self._envido_raise(view, ids, points)
        if raised is not None:
            return raised
        falta = bool(view.envido_calls) and view.envido_calls[-1][0] == "falta_envido"
        need = self.envido_call if not falta or _falta_cheap(view) else max(self.envido_call, FALTA_ACCEPT_AT)
        if points >= need and "quiero" in ids:
            return ids["quiero"]
        return ids.get("no_quiero", view.legal[0])

    def _ladder_answer(self, view: View, ids: dict[str, int]) -> int:
        s = hand_strength(view)
        raises = [n for n in LADDER if n in ids]
        if raises and _ladder_ok(view) and _passes(s, self.bet + RAISE_MARGIN * view.pending_level):
            return ids[raises[0]]
        if "quiero" in ids and _passes(s, self.call):
            return ids["quiero"]
        return ids.get("no_quiero", ids.get("quiero", view.legal[0]))

    def _flor_answer(self, view: View, ids: dict[str, int]) -> int:
        flor = view.own_flor or 0
        if flor >= FLOR_RAISE_AT:
            if "contraflor_al_resto" in ids and _falta_cheap(view):
                return ids["contraflor_al_resto"]
            if "contraflor" in ids:
                return ids["contraflor"]
        if flor >= FLOR_ACCEPT_AT and "quiero" in ids:
            return ids["quiero"]
        if "no_quiero" in ids:
            return ids["no_quiero"]
        return _fallback(view, self._rng)


class StationAgent(_Scripted):
    """The calling station: accepts everything, proposes nothing, plays cards by the threshold card rule."""

    def quick(self, observation: dict[str, Any], legal: list[int]) -> int | None:
        return _QUIERO if _QUIERO in legal else None  # quiero is legal only when answering a proposal

    def decide(self, view: View, ids: dict[str, int]) -> int:
        if view.phase == "play":
            return card_choice(view, ids, self._rng)
        return _fallback(view, self._rng)


class ManiacAgent(_Scripted):
    """The maniac: every raise and envido it can make, never a refusal, otherwise a random card. It needs only
    the mask and the mão de onze/ferro flags, so it never decodes the whole observation."""

    def quick(self, observation: dict[str, Any], legal: list[int]) -> int:
        rng = self._rng
        raises = [a for a in legal if a in _FLOR_RAISE_IDS]
        if raises:
            return rng.choice(raises)
        envido = [a for a in legal if a in _ENVIDO_IDS]
        if envido:
            return rng.choice(envido)
        obs = observation["observation"]
        if obs[_MAO_DE_ONZE] <= 0 and obs[_MAO_DE_FERRO] <= 0:
            ladder = [a for a in legal if a in _LADDER_IDS]
            if ladder:
                return ladder[0]
        if _QUIERO in legal:
            return _QUIERO
        cards = [a for a in legal if a < actions.CALL_BASE]
        keep = cards or [a for a in legal if a not in (_NO_QUIERO, _MAZO)] or legal
        return rng.choice(keep)


# ------------------------------------------------------------------------------------------------------------
# specs


SEED = {"seed": SEED_PARAM}


def _threshold_factory(arg: str | None, params: dict[str, str]) -> Agent:
    unit = (number_in(0.0, 1.0), "a number in [0, 1]")
    allowed = {"bet": unit, "call": unit, "envido_call": (number_in(0, 33, int), "an integer in [0, 33]"), **SEED}
    return ThresholdAgent(**spec_params("threshold", arg, params, allowed))


def _station_factory(arg: str | None, params: dict[str, str]) -> Agent:
    return StationAgent(**spec_params("station", arg, params, SEED))


def _maniac_factory(arg: str | None, params: dict[str, str]) -> Agent:
    return ManiacAgent(**spec_params("maniac", arg, params, SEED))


register_agent("threshold", _threshold_factory)
register_agent("station", _station_factory)
register_agent("maniac", _maniac_factory)
