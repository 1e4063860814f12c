"""Text drawing of the table for one viewing seat: what that seat may see, nothing more.

Used by the environment's ``ansi``/``human`` render modes and by the terminal front end."""

from __future__ import annotations

from .cards import FRENCH_RANKS, URUGUAYAN, card_text, manilha_rank_index, piezas
from .encoding import partner_cards_visible, public_action_name
from .engine import MAO_DE_FERRO, TIE, TrucoState
from .senas import MEANINGS
from .views import visible_tricks


def card_str(state: TrucoState, card: int) -> str:
    return card_text(card, state.family)


def render_text(state: TrucoState, viewer: int | None = None) -> str:
    """The table as seen by ``viewer`` (default: the actor, or seat 0 once the match is over)."""
    if viewer is None:
        viewer = state.actor if state.actor is not None else 0
    cfg = state.config
    team = state.team_of(viewer)
    lines = []
    title = f"{cfg.family} truco, {cfg.num_players} players, to {cfg.target_score}"
    lines.append(f"{title} | hand {state.hand_index + 1} | dealer seat {state.dealer}, mano seat {state.mano}")
    lines.append(f"score: team 0 = {state.score[0]}, team 1 = {state.score[1]} (you: seat {viewer}, team {team})")
    if state.vira is not None and cfg.family == URUGUAYAN:  # the muestra makes piezas, not a manilha rank
        lines.append(f"muestra: {card_str(state, state.vira)}  piezas: "
                     + " ".join(card_str(state, c) for c in piezas(state.vira)))
    elif state.vira is not None:
        manilha = FRENCH_RANKS[manilha_rank_index(state.vira, cfg.deck, cfg.deck_ranks)]
        lines.append(f"vira: {card_str(state, state.vira)}  manilhas: {manilha}")
    if state.special_hand:
        lines.append("special hand: " + state.special_hand.replace("_", " "))
    blind = state.special_hand == MAO_DE_FERRO and cfg.mao_de_ferro_blind
    remaining = state.remaining_cards(viewer)
    if blind:
        hand = " ".join(f"[slot {i}]" for i, c in enumerate(state.dealt_cards(viewer)) if c in remaining)
    else:
        hand = " ".join(card_str(state, c) for c in remaining)
    lines.append(f"your hand: {hand or '-'}")
    if partner_cards_visible(state, viewer):
        for seat in state.participants:
            if seat != viewer and state.team_of(seat) == team:
                cards = " ".join(card_str(state, c) for c in state.remaining_cards(seat))
                lines.append(f"partner seat {seat}: {cards}")
    for t, (plays, winner) in enumerate(visible_tricks(state, viewer)):
        played = ", ".join(f"seat {s}: {'(covered)' if c is None else card_str(state, c)}" for s, c in plays)
        result = "" if winner is None else (" -> tied" if winner == TIE else f" -> team {winner}")
        lines.append(f"trick {t + 1}: {played}{result}")
    ladder = state.truco_level
    lines.append(f"hand worth {state.hand_value}" + (f" (bet level {ladder})" if ladder else ""))
    calls = [f"seat {s}: {public_action_name(state, s, a, viewer)}" for s, a in state.hand_records[-1]["actions"]
             if not a.startswith(("play", "cover", "sena:"))]
    if calls:
        lines.append("calls: " + ", ".join(calls))
    signals = state.signals_seen(viewer) if cfg.senas else {}
    if signals:
        lines.append("signals seen: " + ", ".join(
            f"seat {s}: {g}" + (f" ({MEANINGS[g]})" if cfg.sena_code == "table" else "")
            for s, g in sorted(signals.items())))
    if cfg.senas and viewer in state.signals:
        caught = state.catches[viewer]
        lines.append("your signal was caught by " + (", ".join(f"seat {o}" for o in caught) if caught else "nobody"))
    for label, shown in (("envido", state.envido_announcements), ("flor", state.flor_announcements)):
        if shown:
            lines.append(f"{label} shown: " + ", ".join(
                f"seat {s}: {'son buenas' if v is None else v}" for s, v in shown))
    if state.is_over:
        lines.append(f"match over: team {state.winner} wins")
    else:
        lines.append(f"to act: seat {state.actor} ({state.phase})")
    return "\n".join(lines)
