"""Match records (docs/records.md): validation and replay.

Why replay: a record is the one artefact that travels between the environment, the vector environment, the
tournament runner and other front ends. Re-simulating it through the engine proves that whoever wrote it played
by the same rules. Records come from strangers, so every field is checked before use and any problem is reported
as one line naming the first disagreement, never as a traceback.
"""

from __future__ import annotations

from typing import Any

from .config import TrucoConfig
from .engine import TrucoState
from .limits import MAX_ECHO, MAX_RECORD_BYTES, clip, read_json

MAX_HANDS = 10_000
MAX_ACTIONS_PER_HAND = 1_000
#: Card and action names are a few characters; a longer string is refused before the engine sees it, so that no
#: message echoes it whole.
MAX_NAME_CHARS = MAX_ECHO


class ReplayError(ValueError):
    """A record that is malformed or does not reproduce; the message names the first problem."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ReplayError(message)


def _check_pair(value: Any, where: str) -> None:
    _expect(isinstance(value, list) and len(value) == 2 and all(_is_int(v) and 0 <= v < 10**6 for v in value),
            f"{where}: expected [team0, team1] of non-negative integers, got {_short(value)}")


def _short(value: Any) -> str:
    return clip(repr(value), 2 * MAX_ECHO)


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= MAX_NAME_CHARS


def validate_record(record: Any) -> None:
    """Check the shape and types of a record (not its rules): ReplayError naming the first bad field."""
    _expect(isinstance(record, dict), f"record: expected a JSON object, got {type(record).__name__}")
    for key in ("rules", "hands"):
        _expect(key in record, f"record: missing field {key!r}")
    _expect(isinstance(record["rules"], dict), "record.rules: expected an object of config fields")
    hands = record["hands"]
    _expect(isinstance(hands, list) and 0 < len(hands) <= MAX_HANDS,
            f"record.hands: expected a list of 1..{MAX_HANDS} hands, got {_short(hands)}")
    winner = record.get("winner")
    _expect(winner is None or winner in (0, 1) and _is_int(winner),
            f"record.winner: expected 0, 1 or null, got {_short(winner)}")
    if "forfeit" in record:  # an outside program broke the protocol (docs/protocol.md)
        forfeit = record["forfeit"]
        _expect(isinstance(forfeit, dict) and _is_int(forfeit.get("seat")) and 0 <= forfeit["seat"] < 6
                and isinstance(forfeit.get("reason"), str) and len(forfeit["reason"]) <= 2000,
                f"record.forfeit: expected {{'seat': 0..5, 'team': 0 or 1, 'reason': text}}, got {_short(forfeit)}")
    for i, hand in enumerate(hands):
        where = f"hands[{i}]"
        _expect(isinstance(hand, dict), f"{where}: expected an object")
        for key in ("dealer", "deal", "score_before", "actions", "points", "score_after"):
            _expect(key in hand, f"{where}: missing field {key!r}")
        _expect(_is_int(hand["dealer"]) and 0 <= hand["dealer"] < 6, f"{where}.dealer: expected a seat 0..5")
        deal = hand["deal"]
        _expect(isinstance(deal, dict) and isinstance(deal.get("hands"), list) and "vira" in deal,
                f"{where}.deal: expected {{'hands': [...], 'vira': card or null}}")
        for seat_cards in deal["hands"]:
            _expect(isinstance(seat_cards, list) and all(_is_name(c) for c in seat_cards),
                    f"{where}.deal.hands: expected lists of card strings (at most {MAX_NAME_CHARS} characters "
                    f"each), got {_short(seat_cards)}")
        _expect(deal["vira"] is None or _is_name(deal["vira"]),
                f"{where}.deal.vira: expected a card or null, got {_short(deal['vira'])}")
        for key in ("score_before", "points", "score_after"):
            _check_pair(hand[key], f"{where}.{key}")
        actions = hand["actions"]
        _expect(isinstance(actions, list) and len(actions) <= MAX_ACTIONS_PER_HAND,
                f"{where}.actions: expected a list of at most {MAX_ACTIONS_PER_HAND} actions")
        for j, entry in enumerate(actions):
            ok = (isinstance(entry, list) and len(entry) in (2, 3) and _is_int(entry[0]) and 0 <= entry[0] < 6
                  and _is_name(entry[1]))
            if ok and len(entry) == 3:
                ok = isinstance(entry[2], list) and all(_is_name(a) for a in entry[2])
            _expect(ok, f"{where}.actions[{j}]: expected [seat, name] or [seat, name, [legal names]] (names of "
                        f"at most {MAX_NAME_CHARS} characters), got {_short(entry)}")
        if "pair" in hand:
            pair = hand["pair"]
            _expect(isinstance(pair, list) and len(pair) == 2 and all(_is_int(s) for s in pair),
                    f"{where}.pair: expected [seat, seat]")


class StopWatching(Exception):
    """Raised by a watcher of :func:`replay_record` that has seen enough: the replay ends there."""


def replay_record(record: Any, watch: Any = None) -> TrucoState:
    """Re-simulate ``record``; returns the final state, or raises ReplayError naming the first disagreement.
    ``watch``, when given, sees the match go by (``truco replay --show``): its ``hand_start(state, i)``,
    ``action(state, seat, name)`` (before the action is applied) and ``hand_end(state, i)`` are called in order;
    any of them may raise :class:`StopWatching` to end the replay there."""
    validate_record(record)
    try:
        config = TrucoConfig.from_dict(record["rules"])
    except (ValueError, TypeError) as err:
        raise ReplayError(f"record.rules: {clip(err, 4 * MAX_ECHO)}") from None
    hands = record["hands"]
    first = hands[0]
    try:
        state = TrucoState.new(config, seed=0, score=first["score_before"],
                               deal={**_cards_of(first["deal"]), "dealer": first["dealer"]})
    except ValueError as err:
        raise ReplayError(f"hands[0]: {clip(err, 4 * MAX_ECHO)}") from None
    for i, hand in enumerate(hands):
        where = f"hands[{i}]"
        _expect(not state.is_over, f"{where}: the match was already over after hand {i - 1}")
        _expect(state.hand_index == i, f"{where}: the engine is in hand {state.hand_index}")
        current = state.hand_records[i]
        for key in ("dealer", "score_before"):
            _expect(current[key] == hand[key], f"{where}.{key}: recorded {_short(hand[key])}, "
                                               f"replay has {_short(current[key])}")
        _expect(current["deal"] == hand["deal"], f"{where}.deal: recorded {_short(hand['deal'])}, "
                                                 f"replay has {_short(current['deal'])}")
        _expect(current.get("pair") == hand.get("pair"),
                f"{where}.pair: recorded {_short(hand.get('pair'))}, replay has {current.get('pair')}")
        actions = hand["actions"]
        if watch is not None:
            watch.hand_start(state, i)
        for j, entry in enumerate(actions):
            seat, name = entry[0], entry[1]
            at = f"{where}.actions[{j}] {_short(entry[:2])}"
            _expect(not state.is_over, f"{at}: the match is already over")
            _expect(state.hand_index == i, f"{at}: hand {i} already ended")
            _expect(seat == state.actor, f"{at}: seat {state.actor} is to act, not seat {seat}")
            legal = state.legal_actions()
            if len(entry) == 3:
                _expect(sorted(entry[2]) == sorted(legal),
                        f"{at}: recorded legal set {clip(sorted(entry[2]), 10 * MAX_ECHO)} differs from {sorted(legal)}")
            _expect(name in legal, f"{at}: {_short(name)} is not legal here; legal: {legal}")
            if j == len(actions) - 1 and i + 1 < len(hands) and state.next_hand_is_new_deal:
                try:
                    state.force_next_deal(_cards_of(hands[i + 1]["deal"]))
                except ValueError as err:
                    raise ReplayError(f"hands[{i + 1}].deal: {clip(err, 4 * MAX_ECHO)}") from None
            if watch is not None:
                watch.action(state, seat, name)
            state.apply(name)
        last = i == len(hands) - 1
        if not last:
            _expect(state.hand_index == i + 1 or state.is_over,
                    f"{where}: the recorded actions do not finish the hand")
        done = state.hand_records[i]
        for key in ("points", "score_after"):
            _expect(done[key] == hand[key], f"{where}.{key}: recorded {hand[key]}, replay has {done[key]}")
        if watch is not None:
            watch.hand_end(state, i)
    forfeit = record.get("forfeit")
    if forfeit is not None:  # the match stopped at the forfeiting seat's decision; the other team won it
        _expect(not state.is_over and state.actor == forfeit["seat"],
                f"record.forfeit: seat {forfeit['seat']} forfeited, but the replay has "
                + ("the match over" if state.is_over else f"seat {state.actor} to act"))
        _expect(record.get("winner") == 1 - state.team_of(forfeit["seat"]),
                f"record.winner: recorded {record.get('winner')}, but seat {forfeit['seat']} forfeited")
    elif "winner" in record:
        _expect(record["winner"] == state.winner,
                f"record.winner: recorded {record['winner']}, replay has {state.winner}")
    return state


def _cards_of(deal: dict) -> dict:
    """What a recorded deal fixes: the hands, the vira and, with señas, who catches each seat's signal."""
    return {k: deal[k] for k in ("hands", "vira", "catches") if k in deal}


def load_record(path: str) -> Any:
    """Read a JSON record; ReplayError (one line) for unreadable, truncated, oversized (over
    :data:`~truco_env.limits.MAX_RECORD_BYTES`) or absurdly nested files."""
    return read_json(path, MAX_RECORD_BYTES, ReplayError)
