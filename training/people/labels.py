"""What a player says for each action and calls each card, in the family's language: Spanish for Argentine and
Uruguayan Truco, Portuguese for Truco Paulista. Shared by the terminal game (``truco play``, ``truco replay --show``) and the
web table (``truco serve``), so that a person reads "ancho de espadas" or "zap" where the engine writes ``1e`` or
``4c``."""

from __future__ import annotations

from truco_env import cards
from truco_env.engine import ONZE, TrucoState
from truco_env.senas import MEANINGS

SPANISH = {
    "truco": "¡Truco!", "retruco": "¡Quiero retruco!", "vale_cuatro": "¡Quiero vale cuatro!",
    "envido": "Envido", "real_envido": "Real envido", "falta_envido": "Falta envido", "flor": "¡Flor!",
    "contraflor": "Contraflor", "contraflor_al_resto": "Contraflor al resto", "quiero": "Quiero",
    "no_quiero": "No quiero", "mazo": "Me voy al mazo",
}
#: The señas (docs/rules.md §3.13) as a player describes the gesture.
GESTURE_WORDS = {
    "eyebrows": "levantar las cejas", "wink": "guiñar un ojo", "mouth_side": "torcer la boca",
    "lip_bite": "morderse el labio", "kiss": "tirar un beso", "open_mouth": "abrir la boca",
    "head_tilt": "inclinar la cabeza", "eyes_closed": "cerrar los ojos",
}
PORTUGUESE = {
    "truco": "Truco!", "seis": "Seis!", "nove": "Nove!", "doze": "Doze!", "quiero": "Aceito",
    "no_quiero": "Corro", "mazo": "Vou ao mazo",
}


SPANISH_RANK = {"1": "as", "2": "2", "3": "3", "4": "4", "5": "5", "6": "6", "7": "7", "10": "sota", "11": "caballo",
                "12": "rey"}
SPANISH_SUIT = {"e": "espadas", "b": "bastos", "o": "oros", "c": "copas"}
#: The four cards above the threes, by their names at the table.
SPANISH_NICKNAME = {"1e": "ancho de espadas", "1b": "ancho de bastos", "7e": "siete de espadas",
                    "7o": "siete de oros"}
PORTUGUESE_RANK = {"A": "ás", "Q": "dama", "J": "valete", "K": "rei", "2": "2", "3": "3", "4": "4", "5": "5",
                   "6": "6", "7": "7"}
PORTUGUESE_SUIT = {"s": "espadas", "c": "paus", "d": "ouros", "h": "copas"}
#: Uruguayan piezas with names of their own at the table: the caballo and the sota of the muestra.
PIEZA_NICKNAME = {"11": "perico", "10": "perica"}
#: A manilha (the rank after the vira's) by its suit, strongest first: what players call it.
MANILHA_NICKNAME = {"c": "zap", "h": "copas", "s": "espadilha", "d": "pica-fumo"}


def card_name(text: str, family: str, manilha: str | None = None) -> str:
    """What a player calls the card written ``text`` (``"1e"`` -> "ancho de espadas", ``"7c"`` -> "7 de copas";
    in Paulista, with ``manilha`` the manilha's rank, ``"4c"`` -> "zap (4 de paus)"; in Uruguayan Truco, with
    ``manilha`` the muestra, ``"11c"`` under ``"3c"`` -> "perico (caballo de copas, pieza)")."""
    rank, suit = text[:-1], text[-1]
    if family != cards.PAULISTA:
        plain = f"{SPANISH_RANK[rank]} de {SPANISH_SUIT[suit]}"
        if family == cards.URUGUAYAN and manilha is not None:
            muestra = cards.parse_card(manilha, family)
            pieces = cards.piezas(muestra)
            card = cards.parse_card(text, family)
            if card in pieces:
                stands = cards.PIEZA_RANKS[pieces.index(card)]
                name = PIEZA_NICKNAME.get(stands)
                instead = f", en lugar del {SPANISH_RANK[stands]}" if stands != rank else ""
                return f"{name} ({plain}, pieza{instead})" if name else f"{plain} (pieza{instead})"
        return SPANISH_NICKNAME.get(text, plain)
    plain = f"{PORTUGUESE_RANK[rank]} de {PORTUGUESE_SUIT[suit]}"
    return f"{MANILHA_NICKNAME[suit]} ({plain})" if rank == manilha else plain


def card_legend(family: str) -> str:
    """One line on how the engine writes cards, for a player who meets ``3c`` in the drawing of the table."""
    if family == cards.ARGENTINE:
        return ("cards: rank then suit, e espadas, b bastos, o oros, c copas (10 sota, 11 caballo, 12 rey); from "
                "the top: ancho de espadas, ancho de bastos, siete de espadas, siete de oros, the 3s, the 2s, ...")
    if family == cards.URUGUAYAN:
        return ("cards: rank then suit, e espadas, b bastos, o oros, c copas (10 sota, 11 caballo, 12 rey); the "
                "muestra makes piezas of its suit's 2, 4, 5, 11 (perico) and 10 (perica), the 12 standing in for a "
                "turned pieza, above the ancho de espadas, ancho de bastos, siete de espadas, siete de oros, the 3s, ...")
    return ("cards: rank then suit, s espadas, c paus, d ouros, h copas (A ás, Q dama, J valete, K rei); the "
            "manilhas (the rank after the vira) beat all, zap > copas > espadilha > pica-fumo, then 3, 2, A, K, ...")


def choice_label(name: str, family: str, phase: str, manilha: str | None = None, sena_table: bool = False) -> str:
    """The name a player of that family would say for ``name``, said in ``phase`` (the engine's phase before the
    action: a mão de onze's "quiero" is playing the hand); cards by :func:`card_name`; a signal by its gesture,
    with the common table's meaning where ``sena_table``."""
    kind, _, arg = name.partition(":")
    spanish = family != cards.PAULISTA
    if kind == "sena":
        return f"Seña: {GESTURE_WORDS[arg]}" + (f" ({MEANINGS[arg]})" if sena_table else "")
    if kind == "play":
        return f"{'Jugar' if spanish else 'Jogar'} {card_name(arg, family, manilha)}"
    if kind == "cover":
        return f"Jogar {card_name(arg, family, manilha)} coberta"
    if kind == "play_slot":
        return f"Jogar a carta {int(arg) + 1} (às cegas)"
    if phase == ONZE:
        return {"quiero": "Jogar a mão de onze", "no_quiero": "Correr da mão de onze"}[name]
    return (SPANISH if spanish else PORTUGUESE).get(name, name)


def manilha_of(state: TrucoState) -> str | None:
    """The manilhas' rank text of ``state``'s hand (Paulista, once the vira is turned), the muestra's card text
    (Uruguayan), else None: what :func:`card_name` reads as ``manilha``."""
    if state.family == cards.URUGUAYAN and state.vira is not None:
        return cards.card_text(state.vira, state.family)
    if state.family != cards.PAULISTA or state.vira is None:
        return None
    config = state.config
    return cards.FRENCH_RANKS[cards.manilha_rank_index(state.vira, config.deck, config.deck_ranks)]


def action_words(name: str, state: TrucoState) -> str:
    """:func:`choice_label` of ``name`` about to be played in ``state``."""
    return choice_label(name, state.family, state.phase, manilha_of(state),
                        state.config.senas and state.config.sena_code == "table")
