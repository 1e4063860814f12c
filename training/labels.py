"""What a player says for each action, in the family's language: Spanish for Argentine Truco, Portuguese for
Truco Paulista. Shared by the terminal game (``truco play``) and the web table (``truco serve``)."""

from __future__ import annotations

from truco_env import cards as C
from truco_env.engine import ONZE

SPANISH = {
    "truco": "¡Truco!", "retruco": "¡Quiero retruco!", "vale_cuatro": "¡Quiero vale cuatro!",
    "envido": "Envido", "real_envido": "Real envido", "falta_envido": "Falta envido", "flor": "¡Flor!",
    "contraflor": "Contraflor", "contraflor_al_resto": "Contraflor al resto", "quiero": "Quiero",
    "no_quiero": "No quiero", "mazo": "Me voy al mazo",
}
PORTUGUESE = {
    "truco": "Truco!", "seis": "Seis!", "nove": "Nove!", "doze": "Doze!", "quiero": "Aceito",
    "no_quiero": "Corro", "mazo": "Vou ao mazo",
}


def choice_label(name: str, family: str, phase: str) -> str:
    """The name a player of that family would say for ``name``, said in ``phase`` (the engine's phase before the
    action: a mão de onze's "quiero" is playing the hand)."""
    kind, _, arg = name.partition(":")
    spanish = family == C.ARGENTINE
    if kind == "play":
        return f"{'Jugar' if spanish else 'Jogar'} {arg}"
    if kind == "cover":
        return f"Jogar {arg} coberta"
    if kind == "play_slot":
        return f"Jogar a carta {int(arg) + 1} (às cegas)"
    if phase == ONZE:
        return {"quiero": "Jogar a mão de onze", "no_quiero": "Correr da mão de onze"}[name]
    return (SPANISH if spanish else PORTUGUESE).get(name, name)
