"""Señas: partner signals in Argentine team play (docs/rules.md §3.13), the rules' part that is not the engine's.

Why a module of its own: the gestures, what the common table says each one means, and who catches a signal are
read by the engine, the observation encoder, the text table and the heuristic alike; none of it changes what a
card is worth, so it stays apart from the scoring rules.

A signal is the action ``sena:<gesture>``. Partners always see it; each opponent catches it with probability
``sena_catch``. Who would catch each seat's signal is drawn once per hand, when the cards are dealt, from a
stream of its own (:func:`draw_catches`), so that the deals of a seeded match are the same whatever the signals,
and the draw is stored with the deal in the hand's record so that a replay shows the same catches.
"""

from __future__ import annotations

import random

from .cards import ARGENTINE, envido_of, parse_card

#: The eight gestures, in action-id order (``sena:<gesture>``).
GESTURES = ("eyebrows", "wink", "mouth_side", "lip_bite", "kiss", "open_mouth", "head_tilt", "eyes_closed")

#: What the common table (``sena_code: table``) says each gesture means.
MEANINGS = {
    "eyebrows": "the 1 of swords", "wink": "the 1 of clubs", "mouth_side": "the 7 of swords or the 7 of coins",
    "lip_bite": "a 3", "kiss": "a 2", "open_mouth": "the 1 of coins or the 1 of cups",
    "head_tilt": "good envido", "eyes_closed": "nothing good",
}

#: The cards each card gesture names (Spanish card text).
_NAMED_CARDS = {
    "eyebrows": ("1e",), "wink": ("1b",), "mouth_side": ("7e", "7o"), "lip_bite": ("3e", "3b", "3o", "3c"),
    "kiss": ("2e", "2b", "2o", "2c"), "open_mouth": ("1o", "1c"),
}
CARDS_OF = {g: frozenset(parse_card(c, ARGENTINE) for c in cards) for g, cards in _NAMED_CARDS.items()}

#: Envido the table calls good (``head_tilt``): 27 or more, the count from which players usually call envido
#: themselves.
GOOD_ENVIDO = 27


def true_to_table(gesture: str, dealt: tuple[int, ...] | list[int]) -> bool:
    """Whether ``gesture`` tells the truth, by the common table, about the hand ``dealt`` (card indices)."""
    if gesture in CARDS_OF:
        return any(c in CARDS_OF[gesture] for c in dealt)
    if gesture == "head_tilt":
        return envido_of(dealt) >= GOOD_ENVIDO
    return not any(true_to_table(g, dealt) for g in GESTURES[:-1])  # eyes_closed: nothing good


def honest_gesture(dealt: tuple[int, ...] | list[int]) -> str:
    """The gesture an honest player makes by the table: the first that is true, best card first."""
    return next(g for g in GESTURES if true_to_table(g, dealt))


def draw_catches(seed: int, hand: int, num_players: int, catch: float) -> list[list[int]]:
    """For each seat, the opponents who would catch its signal in hand ``hand`` of the match with ``seed``.

    Drawn from ``Random(f"{seed}:senas:{hand}")``, apart from the deal's own stream: one draw per (signaller,
    opponent) pair in seat order, whether or not anybody signals, so the draw never depends on play."""
    rng = random.Random(f"{seed}:senas:{hand}")
    table = []
    for seat in range(num_players):
        row = []
        for other in range(num_players):
            if other % 2 != seat % 2 and rng.random() < catch:
                row.append(other)
        table.append(row)
    return table


def sees(catches: list[list[int]], seat: int, viewer: int) -> bool:
    """Whether ``viewer`` sees ``seat``'s signal: its own, a partner's, or an opponent's it catches."""
    return seat % 2 == viewer % 2 or viewer in catches[seat]
