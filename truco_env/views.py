"""Seat views: what one seat may know of a match, in the JSON form the JavaScript encoder reads (docs/frontends.md).

A seat view is the match record cut down to one seat's knowledge: its own cards (none in a blind mão de ferro),
the vira, the public actions (another seat's face-down card as ``cover``, a blind card as
``play_slot:<i>=<card>``), the points announced at a showdown, the flor holders once a flor is declared, a
partner's cards where a mão de onze shows them, the signals it saw (with señas; ``sena_caught_by`` where it
signalled), and the scores. A game server sends it to a front end that runs a
policy for that seat (``truco serve``); the encoder's parity export writes it beside truco_env's observation.
"""

from __future__ import annotations

from . import actions, senas
from .cards import parse_card, strength_table
from .config import TrucoConfig
from .encoding import partner_cards_visible
from .engine import MAO_DE_FERRO, TrucoState, playing_order, special_hand_at, trick_winner


def public_name(name: str, seat: int, shown: set[int], hands: list[list[str]], viewer: int,
                catches: list[list[int]] | None) -> str | None:
    """How the viewer saw ``seat``'s action: another seat's face-down card is ``cover`` (unless the viewer sees that
    seat's cards), a blind card is ``play_slot:<i>=<the card it showed>``, a signal it did not see nothing (None)."""
    if name.startswith("cover:") and seat not in shown:
        return "cover"
    if name.startswith("sena:") and not senas.sees(catches, seat, viewer):
        return None
    if name.startswith("play_slot:"):
        return f"{name}={hands[seat][int(name.split(':')[1])]}"
    return name


def _hand_view(record: dict, seat: int, shown: set[int], blind: bool) -> dict:
    hands = record["deal"]["hands"]
    cards = [list(hands[s]) if s in shown and not (blind and s == seat) else None for s in range(len(hands))]
    catches = record["deal"].get("catches")
    seen = [[s, public_name(a, s, shown, hands, seat, catches)] for s, a in record["actions"]]
    out = {"dealer": record["dealer"], "deal": {"hands": cards, "vira": record["deal"]["vira"]},
           "score_before": list(record["score_before"]), "actions": [entry for entry in seen if entry[1] is not None]}
    if any(s == seat and a.startswith("sena:") for s, a in record["actions"]):  # who caught its own signal
        out["sena_caught_by"] = list(catches[seat])
    if "pair" in record:
        out["pair"] = list(record["pair"])
    return out


def visible_tricks(state: TrucoState, viewer: int, shown: set[int] | None = None
                   ) -> list[tuple[list[tuple[int, int | None]], int | str | None]]:
    """The current hand's tricks as ``viewer`` sees them: per trick, its plays as ``(seat, card index)``, the card
    None where it went face down from a seat whose cards the viewer does not see (``shown``, by default the viewer
    alone), and the winning team (``TIE``, or None while the trick is unfinished). Every drawing of the table
    (the environment's, ``truco play``'s, the line protocol's) reads the tricks through this one function."""
    shown = {viewer} if shown is None else shown
    out = []
    for t, trick in enumerate([*state.tricks, state.current_trick]):
        if trick:
            winner = state.trick_results[t] if t < len(state.trick_results) else None
            out.append(([(s, None if covered and s not in shown else c) for s, c, covered in trick], winner))
    return out


def group_tricks(actions: list, hands: list, size: int, fold_alone: bool) -> list[tuple[list, bool]]:
    """A hand's card plays, ``(seat, card, covered)``, grouped into its tricks, each with whether it is complete.
    A trick awaits one card from each seat still in the hand: with ``mazo_scope="player"`` (``fold_alone``) a seat
    that folds leaves the hand, so the tricks after it (and the one it left, which may end there) hold fewer."""
    tricks: list[tuple[list, bool]] = []
    trick: list[tuple[int, str, bool]] = []
    for seat, name in actions:
        kind, _, arg = name.partition(":")
        if kind in ("play", "cover", "play_slot"):
            trick.append((seat, hands[seat][int(arg)] if kind == "play_slot" else arg, kind == "cover"))
        elif kind == "mazo" and fold_alone:
            size -= 1
        if trick and len(trick) >= size:
            tricks.append((trick, True))
            trick = []
    if trick:
        tricks.append((trick, False))
    return tricks


def record_tricks(config: TrucoConfig, record: dict) -> list[tuple[list[tuple[int, str, bool]], int | None]]:
    """The tricks of a recorded hand (one of ``match_record()["hands"]``): per trick its plays ``(seat, card text,
    face down)`` and the winning team (``TIE``, or None while it is open), by the engine's own rules. Every display
    of a past hand (the web table's, ``truco play``'s last trick) reads its tricks here, so that none groups or
    judges them in its own way (grouping by the seat count merged two tricks after a seat folded alone)."""
    family, vira, pair = config.family, record["deal"]["vira"], record.get("pair")
    strength = strength_table(family, None if vira is None else parse_card(vira, family), config.deck,
                              config.deck_ranks)
    mano_team = playing_order(record["dealer"], config.num_players, pair)[0] % 2 if config.trick_tie_to_mano else None
    size = len(pair or range(config.num_players))
    out = []
    for trick, complete in group_tricks(record["actions"], record["deal"]["hands"], size,
                                        config.mazo_scope == "player"):
        winner = None
        if complete:
            winner, _ = trick_winner([(s, parse_card(card, family), covered) for s, card, covered in trick],
                                     strength, config.partner_tie_wins_trick, mano_team)
        out.append((trick, winner))
    return out


def hand_was_blind(config, score_before) -> bool:
    """Whether a hand that began at ``score_before`` was a blind mão de ferro (nobody saw their own cards)."""
    return bool(config.mao_de_ferro_blind) and special_hand_at(config, score_before) == MAO_DE_FERRO


def seat_view(state: TrucoState, seat: int, compact: bool = False) -> dict:
    """What ``seat`` may know of ``state``, in the seat-view form of docs/frontends.md (without ``rules``).

    ``compact``: only the current hand, with the match tally of the earlier hands as counts (``tally_before``);
    otherwise every hand of the match (earlier hands only feed the match tally)."""
    config = state.config
    records = state.hand_records
    current = len(records) - 1
    hands = []
    for i, record in enumerate(records):
        if compact and i < current:
            continue
        if i < current:
            view = _hand_view(record, seat, {seat}, hand_was_blind(config, record["score_before"]))
            view["points"], view["score_after"] = list(record["points"]), list(record["score_after"])
        else:
            shown = {seat}
            if partner_cards_visible(state, seat):
                shown |= {s for s in range(state.num_players) if s != seat and s % 2 == seat % 2}
            blind = state.special_hand == MAO_DE_FERRO and config.mao_de_ferro_blind
            view = _hand_view(record, seat, shown, blind)
            if state.flor_status != "none":  # every flor is public once one is declared
                view["flor_holders"] = list(state.flor_holders)
            if state.envido_announcements:
                view["envido_shown"] = [list(a) for a in state.envido_announcements]
            if state.flor_announcements:
                view["flor_shown"] = [list(a) for a in state.flor_announcements]
        hands.append(view)
    out = {"seat": seat, "hands": hands}
    if compact:
        tally = [[0] * len(actions.TALLY_CLASSES) for _ in range(2)]
        for record in records[:current]:
            for s, name in record["actions"]:
                if not name.startswith("sena:"):  # signals stay out of the tally
                    tally[s % 2][actions.TALLY_CLASS_OF[actions.action_id(name, config.family)]] += 1
        out["tally_before"] = tally
    return out
