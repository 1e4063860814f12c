"""The single action vocabulary shared by every preset (documented in ``docs/actions.md``).

Why one vocabulary: a network trained on one preset can be pointed at another, and one ONNX model can serve
both families. Card actions are indexed by the unified 40-card index of :mod:`truco_env.cards`; only their text
differs between the Spanish and the French deck (``play:1e`` and ``play:As`` are the same id).

Layout (ids):

====================  =========  ======================================================
ids                   name       meaning
====================  =========  ======================================================
0 .. 39               play:<c>   play card ``c`` face up
40 .. 79              cover:<c>  play card ``c`` face down (Paulista ``covered_card``)
80 .. 82              play_slot  play the unseen card in dealt slot 0, 1, 2 (blind mão de ferro)
83 ..                 calls      ``CALLS`` in order
====================  =========  ======================================================
"""

from __future__ import annotations

from . import cards as C

CALLS = (
    "truco", "retruco", "vale_cuatro", "seis", "nove", "doze",
    "envido", "real_envido", "falta_envido",
    "flor", "contraflor", "contraflor_al_resto",
    "quiero", "no_quiero", "mazo",
)

PLAY_BASE = 0
COVER_BASE = C.NUM_CARDS
SLOT_BASE = 2 * C.NUM_CARDS
CALL_BASE = SLOT_BASE + 3
NUM_ACTIONS = CALL_BASE + len(CALLS)


def action_names(family: str) -> list[str]:
    """Every action name in id order, card names in the deck text of ``family``."""
    names = [f"play:{C.card_text(c, family)}" for c in range(C.NUM_CARDS)]
    names += [f"cover:{C.card_text(c, family)}" for c in range(C.NUM_CARDS)]
    names += [f"play_slot:{i}" for i in range(3)]
    names += list(CALLS)
    return names


_IDS = {family: {name: i for i, name in enumerate(action_names(family))} for family in C.FAMILIES}
_NAMES = {family: action_names(family) for family in C.FAMILIES}


def action_id(name: str, family: str) -> int:
    """Id of an action name; ValueError naming it and the allowed forms when unknown."""
    try:
        return _IDS[family][name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown action {name!r} for the {family} family: expected play:<card>, cover:<card>, "
            f"play_slot:<0-2> or one of {list(CALLS)}") from None


def action_name(action: int, family: str) -> str:
    if not isinstance(action, int) or isinstance(action, bool) or not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action id {action!r} is out of range: expected an integer 0..{NUM_ACTIONS - 1}")
    return _NAMES[family][action]
