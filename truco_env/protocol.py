"""``truco-bot/1``: the messages a seat's outside program receives, built from what that seat may see.

A bot in any language plays through JSON Lines on its standard input and output (docs/protocol.md): a ``match``
message when a match starts, then an ``act`` message at each of its decisions, which it answers with one line
``{"action": NAME}`` (or the action's id). This module makes those messages from the engine's state and reads the
answers; :mod:`agents.exec` runs the program, ``truco bot`` is the other end for this project's own agents.

Nothing a seat may not see goes into a message: its own unplayed cards (none in a blind mão de ferro), the vira,
the cards face up on the table, its partner's cards only where a mão de onze shows them, the public actions of the
hand (another seat's face-down card is ``cover``), the points announced at a showdown, and the scores.
``tests/test_protocol.py`` checks it over many deals.
"""

from __future__ import annotations

import json
from typing import Any

from . import actions, cards
from .config import TrucoConfig
from .engine import MAO_DE_FERRO, TIE, TrucoState
from .limits import MAX_DEPTH, clip, json_depth
from .views import public_name, visible_tricks

PROTOCOL = "truco-bot/1"
#: The longest line read from a bot (an answer names one action: a few dozen bytes); a longer line is a forfeit,
#: found without reading the rest of it.
MAX_ANSWER_BYTES = 4096


class ProtocolError(ValueError):
    """An answer that is not one line of JSON naming a legal action (the message says what it was)."""


def match_message(state: TrucoState, seat: int, seed: int | None = None) -> dict:
    """The first message of a match for ``seat``: the protocol, the rules and the seat."""
    return {**_rules_part(state.config), "seat": seat, "team": state.team_of(seat), "players": state.num_players,
            "seed": seed}


_RULES_PARTS: dict[int, tuple[TrucoConfig, dict]] = {}


def _rules_part(config: TrucoConfig) -> dict:
    """The part of a match message every seat of these rules shares, made once per rules object (a match loop
    asks at every decision; a config holds a dict, so it cannot be a cache key itself)."""
    cached = _RULES_PARTS.get(id(config))
    if cached is None or cached[0] is not config:
        from .config import PRESETS

        preset = next((name for name, rules in PRESETS.items() if rules == config), None)  # the preset, if any
        if len(_RULES_PARTS) > 256:
            _RULES_PARTS.clear()
        cached = _RULES_PARTS[id(config)] = (config, {"type": "match", "protocol": PROTOCOL, "preset": preset,
                                                      "rules": config.to_dict()})
    return cached[1]


def _team_word(team: int | str | None, mine: int) -> str | None:
    if team is None:
        return None
    if team == TIE:
        return "tie"
    return "us" if team == mine else "them"


def act_message(state: TrucoState, seat: int, observation: Any = None) -> dict:
    """What ``seat`` sees at its decision, in named fields, with its legal actions (docs/protocol.md);
    ``observation`` (the seat's encoded observation vector, optional) goes along as its nonzero entries, for
    programs that run this project's networks."""
    # numpy, loaded on use: the rules layer does without it
    from .encoding import partner_cards_visible

    config, family = state.config, state.family
    team = state.team_of(seat)
    record = state.hand_records[-1]
    blind = state.special_hand == MAO_DE_FERRO and config.mao_de_ferro_blind
    remaining = state.remaining_cards(seat)
    shown = {seat}
    partners = {}
    if partner_cards_visible(state, seat):
        for other in state.participants:
            if other != seat and state.team_of(other) == team:
                shown.add(other)
                partners[str(other)] = [cards.card_text(c, family) for c in state.remaining_cards(other)]
    tricks = [{"cards": [[s, None if c is None else cards.card_text(c, family)] for s, c in plays],
               "winner": _team_word(winner, team)} for plays, winner in visible_tricks(state, seat, shown)]
    hands = record["deal"]["hands"]
    manilha = None
    if state.vira is not None and family == cards.PAULISTA:  # a Uruguayan muestra makes piezas, not manilhas
        manilha = cards.FRENCH_RANKS[cards.manilha_rank_index(state.vira, config.deck, config.deck_ranks)]
    message = {
        "type": "act", "seat": seat, "team": team,
        "hand": None if blind else [cards.card_text(c, family) for c in remaining],
        "cards_left": len(remaining),
        "vira": None if state.vira is None else cards.card_text(state.vira, family), "manilhas": manilha,
        "score": {"us": state.score[team], "them": state.score[1 - team], "target": config.target_score},
        "hand_number": state.hand_index + 1, "dealer": state.dealer, "mano": state.mano,
        "special_hand": state.special_hand or None, "hand_value": state.hand_value, "phase": state.phase,
        "tricks": tricks,
        "history": [[s, name] for s, name in ((s, public_name(a, s, shown, hands, seat, record["deal"].get("catches")))
                                               for s, a in record["actions"]) if name is not None],
        "envido_shown": [list(a) for a in state.envido_announcements],
        "flor_shown": [list(a) for a in state.flor_announcements],
        "partners": partners,
        "legal": [{"name": name, "id": actions.action_id(name, family)} for name in state.legal_actions()],
    }
    if config.senas and seat in state.signals:  # who caught its own signal (docs/rules.md §3.13)
        message["sena_caught_by"] = list(state.catches[seat])
    if observation is not None:
        indices = observation.nonzero()[0] if hasattr(observation, "nonzero") else [
            i for i, value in enumerate(observation) if value]  # a numpy vector, or a plain list
        message["observation"] = {"size": len(observation),
                                  "nonzero": [[int(i), float(observation[i])] for i in indices]}
    return message


def read_answer(line: str | bytes, legal: list[dict]) -> str:
    """The legal action name an answer line chooses; ProtocolError naming what was wrong and what is allowed."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    if len(line) > MAX_ANSWER_BYTES:
        raise ProtocolError(f"an answer of {len(line):,} characters (at most {MAX_ANSWER_BYTES:,})")
    depth = json_depth(line.encode("utf-8", "replace"))
    if depth > MAX_DEPTH:  # Python's parser recurses: refused before it runs out of stack
        raise ProtocolError(f"an answer nested {depth} levels deep (at most {MAX_DEPTH})")
    try:
        answer = json.loads(line)
    except ValueError:
        raise ProtocolError(f"an answer that is not JSON: {clip(repr(line.strip()), 80)}") from None
    if not isinstance(answer, dict) or "action" not in answer:
        raise ProtocolError(f'an answer without "action": {clip(repr(line.strip()), 80)}')
    chosen = answer["action"]
    by_id = {entry["id"]: entry["name"] for entry in legal}
    names = set(by_id.values())
    if isinstance(chosen, str) and chosen in names:
        return chosen
    if type(chosen) is int and chosen in by_id:
        return by_id[chosen]
    raise ProtocolError(f"an illegal action {clip(repr(chosen), 60)}; legal: {sorted(names)}")
