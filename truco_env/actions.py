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

#: Classes of public decisions that the observation's ``match_tally`` counts per team over a match. Why: how an
#: opponent has behaved so far in the match (does it bet anything, accept everything, fold to a falta envido?) is
#: public and is what lets one policy both exploit a cautious opponent and stay sound against a reckless one.
TALLY_CLASSES = ("card", "ladder_call", "envido_call", "falta_envido", "flor_call", "quiero", "no_quiero", "mazo")


def _tally_class(action: int) -> int:
    if action < CALL_BASE:
        return 0
    call = CALLS[action - CALL_BASE]
    if call in ("truco", "retruco", "vale_cuatro", "seis", "nove", "doze"):
        return 1
    if call in ("envido", "real_envido"):
        return 2
    if call in ("flor", "contraflor", "contraflor_al_resto"):
        return 4
    return TALLY_CLASSES.index(call)


#: ``TALLY_CLASS_OF[action_id]``: index into ``TALLY_CLASSES``.
TALLY_CLASS_OF = tuple(_tally_class(a) for a in range(NUM_ACTIONS))


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
