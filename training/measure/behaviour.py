"""How an agent behaves in its matches, read from the match records and the seats it held.

Behaviour statistics (per agent, from the match records and the seats it held)
-------------------------------------------------------------------------------
* ``truco_call_rate``: ladder proposals (truco ... vale cuatro / doze, on its turn or as a raise) per hand played;
* ``envido_call_rate``: envido chains opened per hand played (Argentine only);
* ``fold_rate``: ``no_quiero`` answers to the opponents' ladder proposals, per proposal it answered;
* ``mazo_rate``: folds (``mazo``) per hand played;
* ``bluff_rate``: of the seat-hands where it held a weak hand (bottom third of hand strength for the preset),
  the share in which that seat made a ladder proposal; ``bluff_win_rate``: of those bluffs, the share of hands its
  team won (the opponents refused or folded, or the tricks went its way);
* ``weak_call_share``: of the seat-hands in which it made a ladder proposal, the share held with a weak hand (a
  third would mean its calls ignore its cards; near 0, that it never bluffs);
* ``envido_accuracy``: of its envido calls (openings and raises), the share where its team really held the better
  envido (ties resolved as the rules do).

With señas (docs/rules.md §3.13), per agent:

* ``signal_rate``: of its seat-hands where it could signal (hands with partners in them), the share it signalled in;
* ``signal_honesty``: of its signals, the share true to the common table about the hand it held;
* ``signal_caught_rate``: of the opponents who might have caught its signals, the share who did;
* ``caught_signal_cost``: what a caught signal is worth to the opponents, in points per hand: the opponents' point
  margin over it in its hands where a signal of its was caught, minus that margin in its hands where it signalled
  and nobody caught it. Who catches is drawn apart from play, so the two kinds of hands differ by the catch alone
  (and by chance: read it with its hand counts).

**Hand strength** (for the bluff statistics) of a dealt hand is the sum over its cards of the share of the other
cards of the deck that the card beats (ties count half), with that hand's strength table, so Paulista manilhas
count. A hand is *weak* when its strength is below the lower tertile of that measure over 4,000 random deals of
the preset (fixed seed), so "bottom third" is relative to each preset's deck and hand size.

The rules a statistic needs (a hand's mano and playing order, who held the better envido, whether a hand was a
blind mão de ferro) are asked of the engine, which plays by them (:func:`truco_env.engine.playing_order`,
:func:`truco_env.engine.showdown`, :func:`truco_env.views.hand_was_blind`): a second statement would drift.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import lru_cache

import truco_env.cards
from truco_env import senas
from truco_env.cards import (
    ENVIDO_FAMILIES,
    TURNED_CARD_FAMILIES,
    hand_points,
    parse_card,
    strength_table,
)
from truco_env.config import TrucoConfig
from truco_env.engine import ENVIDO_CALLS, LADDER_CALLS, playing_order, showdown
from truco_env.views import hand_was_blind

#: Every ladder call of both families (a record names its calls; the family's own are among these).
LADDER = tuple(dict.fromkeys(call for calls in LADDER_CALLS.values() for call in calls))
ENVIDO = ENVIDO_CALLS


def hand_strength(cards: list[int], strength: tuple[int, ...], deck: tuple[int, ...]) -> float:
    """Sum over the cards of the share of the other deck cards each beats (ties half)."""
    total = 0.0
    for card in cards:
        s = strength[card]
        others = [strength[c] for c in deck if c != card]
        total += (sum(1 for o in others if o < s) + 0.5 * sum(1 for o in others if o == s)) / len(others)
    return total


def _deck_of(config: TrucoConfig) -> tuple[int, ...]:
    return truco_env.cards.deck(config.family, config.deck, config.deck_ranks)


def weak_hand_cutoff(config: TrucoConfig) -> float:
    """Lower tertile of :func:`hand_strength` over 4,000 random deals of ``config`` (fixed seed)."""
    return _weak_hand_cutoff(config.family, config.deck, config.deck_ranks, config.hand_size)


@lru_cache(maxsize=32)
def _weak_hand_cutoff(family: str, paulista_deck: str, deck_ranks: tuple | None, hand_size: int) -> float:
    rng = random.Random("truco-eval-strength")
    deck = list(truco_env.cards.deck(family, paulista_deck, deck_ranks))
    values = []
    for _ in range(4000):
        rng.shuffle(deck)
        hand = deck[:hand_size]
        vira = deck[hand_size] if family in TURNED_CARD_FAMILIES else None
        table = strength_table(family, vira, paulista_deck, deck_ranks)
        pool = tuple(c for c in deck if c != vira)
        values.append(hand_strength(hand, table, pool))
    values.sort()
    return values[len(values) // 3]


def _participants(record: dict, n: int) -> list[int]:
    """Seats of a hand record in playing order from its mano (the engine's :func:`playing_order`)."""
    return playing_order(record["dealer"], n, record.get("pair"))


def _points_of(config: TrucoConfig, record: dict, seat: int) -> tuple[int, int | None]:
    """The envido points and flor value (None: none) of ``seat``'s hand in the hand ``record``."""
    vira = record["deal"]["vira"]
    return hand_points(config.family, [parse_card(c, config.family) for c in record["deal"]["hands"][seat]],
                       None if vira is None else parse_card(vira, config.family), config.plain_flor_base)


def better_envido_team(config: TrucoConfig, record: dict) -> int:
    """The team that held the better envido in the hand ``record``: whom the engine's showdown would credit had
    the envido been accepted (ties as the rules and ``envido_tie`` resolve them)."""
    seats = _participants(record, config.num_players)
    values = {s: _points_of(config, record, s)[0] for s in seats}
    winner, _ = showdown(values, seats, config.envido_tie == "mano_team")
    return winner % 2


def behaviour_counts(config: TrucoConfig, record: dict, hand_winners: list[int | None], team_of_agent: int
                     ) -> Counter:
    """Counters of one match for the agent that held the seats of ``team_of_agent``."""
    family = config.family
    out: Counter = Counter()
    cutoff = weak_hand_cutoff(config)
    deck = _deck_of(config)
    for hand, winner in zip(record["hands"], hand_winners + [None] * len(record["hands"])):
        seats = _participants(hand, config.num_players)
        mine = [s for s in seats if s % 2 == team_of_agent]
        out["hands"] += 1
        actions = hand["actions"]
        pending_by: int | None = None  # team of the pending ladder proposal
        envido_pending = flor_pending = False
        holders = {s % 2 for s in seats if config.flor and _points_of(config, hand, s)[1] is not None}
        flor_contested = len(holders) == 2
        called_seats = set()
        for seat, action, *_ in actions:
            team = seat % 2
            mine_now = team == team_of_agent
            if action in ENVIDO:
                envido_pending = True
            elif action == "flor":
                envido_pending, flor_pending = False, flor_contested
            elif action in ("quiero", "no_quiero") and (envido_pending or flor_pending):
                envido_pending = flor_pending = False
            elif action in LADDER or (action in ("quiero", "no_quiero") and pending_by is not None):
                if pending_by is not None and pending_by != team and mine_now:
                    out["ladder_faced"] += 1
                    out["ladder_folded"] += action == "no_quiero"
                pending_by = team if action in LADDER else None
                if action in LADDER and mine_now:
                    out["truco_calls"] += 1
                    called_seats.add(seat)
            elif action == "mazo" and mine_now:
                out["mazo"] += 1
        # envido: openings and calls, with the truth of who held the better envido
        envido_calls = [(s, a) for s, a, *_ in actions if a in ENVIDO]
        if envido_calls and family in ENVIDO_FAMILIES:
            truth = better_envido_team(config, hand)
            first_seat = envido_calls[0][0]
            out["envido_opened"] += first_seat % 2 == team_of_agent
            for s, _ in envido_calls:
                if s % 2 == team_of_agent:
                    out["envido_calls"] += 1
                    out["envido_correct"] += truth == team_of_agent
        if config.senas:
            _count_signals(out, hand, mine, family, team_of_agent)
        if hand_was_blind(config, hand["score_before"]):
            continue
        vira = parse_card(hand["deal"]["vira"], family) if hand["deal"]["vira"] else None
        table = strength_table(family, vira, config.deck, config.deck_ranks)
        pool = tuple(c for c in deck if c != vira)
        for s in mine:
            cards = [parse_card(c, family) for c in hand["deal"]["hands"][s]]
            out["calling_hands"] += s in called_seats
            if hand_strength(cards, table, pool) < cutoff:
                out["weak_hands"] += 1
                if s in called_seats:
                    out["bluffs"] += 1
                    out["bluffs_won"] += winner == team_of_agent
    return out


def _count_signals(out: Counter, hand: dict, mine: list[int], family: str, team: int) -> None:
    """The señas counters of one hand for the agent at the seats ``mine`` (see the module docstring)."""
    if "pair" in hand:  # a pica-pica duel: nobody may signal
        return
    catches = hand["deal"]["catches"]
    signals = {s: a.removeprefix("sena:") for s, a, *_ in hand["actions"] if a.startswith("sena:") and s in mine}
    out["sena_chances"] += len(mine)
    out["signals"] += len(signals)
    caught = False
    for seat, gesture in signals.items():
        out["signals_true"] += senas.true_to_table(gesture, [parse_card(c, family) for c in hand["deal"]["hands"][seat]])
        out["signal_watchers"] += len(hand["deal"]["hands"]) // 2
        out["signal_catches"] += len(catches[seat])
        caught = caught or bool(catches[seat])
    if signals:
        margin = hand["points"][1 - team] - hand["points"][team]
        kind = "caught" if caught else "uncaught"
        out[f"{kind}_hands"] += 1
        out[f"{kind}_margin"] += margin


def behaviour_rates(counts: Counter | dict) -> dict[str, float | None]:
    def rate(num: str, den: str) -> float | None:
        return counts.get(num, 0) / counts[den] if counts.get(den) else None

    return {
        "hands": counts.get("hands", 0),
        "truco_call_rate": rate("truco_calls", "hands"),
        "envido_call_rate": rate("envido_opened", "hands"),
        "fold_rate": rate("ladder_folded", "ladder_faced"),
        "mazo_rate": rate("mazo", "hands"),
        "bluff_rate": rate("bluffs", "weak_hands"),
        "weak_call_share": rate("bluffs", "calling_hands"),
        "bluff_win_rate": rate("bluffs_won", "bluffs"),
        "envido_accuracy": rate("envido_correct", "envido_calls"),
        **({} if not counts.get("sena_chances") else {
            "signal_rate": rate("signals", "sena_chances"),
            "signal_honesty": rate("signals_true", "signals"),
            "signal_caught_rate": rate("signal_catches", "signal_watchers"),
            "caught_signal_cost": (None if not (counts.get("caught_hands") and counts.get("uncaught_hands"))
                                   else rate("caught_margin", "caught_hands") - rate("uncaught_margin", "uncaught_hands")),
        }),
    }
