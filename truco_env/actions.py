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
83 .. 97              calls      ``CALLS`` in order
98 .. 105             sena:<g>   a partner signal (``senas.GESTURES``), only where ``senas`` is on
====================  =========  ======================================================

``NUM_ACTIONS`` (98) is the action space of every game without señas, unchanged by them; a game with señas has
``num_actions(config)`` = 106.
"""

from __future__ import annotations

from . import cards
from .senas import GESTURES

CALLS = (
    "truco", "retruco", "vale_cuatro", "seis", "nove", "doze",
    "envido", "real_envido", "falta_envido",
    "flor", "contraflor", "contraflor_al_resto",
    "quiero", "no_quiero", "mazo",
)

PLAY_BASE = 0
COVER_BASE = cards.NUM_CARDS
SLOT_BASE = 2 * cards.NUM_CARDS
CALL_BASE = SLOT_BASE + 3
NUM_ACTIONS = CALL_BASE + len(CALLS)
SENA_BASE = NUM_ACTIONS
SENA_ACTIONS = tuple(f"sena:{g}" for g in GESTURES)
NUM_ACTIONS_SENAS = SENA_BASE + len(SENA_ACTIONS)


def num_actions(config) -> int:
    """The size of ``config``'s action space: ``NUM_ACTIONS``, and the signals after them where señas are on."""
    return NUM_ACTIONS_SENAS if config.senas else NUM_ACTIONS

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


def action_names(family: str, senas: bool = False) -> list[str]:
    """Every action name in id order, card names in the deck text of ``family``; the signals too with ``senas``."""
    names = [f"play:{cards.card_text(c, family)}" for c in range(cards.NUM_CARDS)]
    names += [f"cover:{cards.card_text(c, family)}" for c in range(cards.NUM_CARDS)]
    names += [f"play_slot:{i}" for i in range(3)]
    names += list(CALLS)
    return names + list(SENA_ACTIONS) if senas else names


_IDS = {family: {name: i for i, name in enumerate(action_names(family, True))} for family in cards.FAMILIES}
_NAMES = {family: action_names(family, True) for family in cards.FAMILIES}


def action_id(name: str, family: str) -> int:
    """Id of an action name; ValueError naming it and the allowed forms when unknown."""
    try:
        return _IDS[family][name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown action {name!r} for the {family} family: expected play:<card>, cover:<card>, "
            f"play_slot:<0-2>, one of {list(CALLS)} or sena:<gesture> (argentine team play with senas)") from None


def action_name(action: int, family: str) -> str:
    if not isinstance(action, int) or isinstance(action, bool) or not 0 <= action < NUM_ACTIONS_SENAS:
        raise ValueError(f"action id {action!r} is out of range: expected an integer 0..{NUM_ACTIONS - 1} "
                         f"({NUM_ACTIONS_SENAS - 1} with senas)")
    return _NAMES[family][action]
