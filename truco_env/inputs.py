"""The one rule for values that cross the environments' edges: action ids, batches of them, seeds, reset options.

Why one rule: the AEC env, the single-agent view and the vector envs used to coerce actions each their own way,
so ``26.7`` or ``"26"`` played action 26 in one, ``2**32 + k`` played ``k`` in another, and a 0-d array that
``action_space.contains`` accepts was refused by a third. Here a value of the wrong *type* (a float, a string,
None, a bool) or outside the action space is a programming error and raises one ``ValueError`` line naming the
value and what is allowed; a well-formed id that the rules do not allow now is an *illegal action*, which each
environment handles by its own option (``illegal_action=``).

Accepted as an action: a Python ``int``, a numpy integer scalar or a 0-d integer array (what the
``Discrete`` space's ``contains`` accepts), within the env's own action space: ``0 .. NUM_ACTIONS - 1`` (0..97),
or 0..105 in a preset with señas (``actions.num_actions(config)``); every message names the range of the env that
raised it. Bools are refused although ``Discrete.contains(True)`` is true: ``True`` for action 1 is a bug, never
an intent.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .actions import NUM_ACTIONS
from .limits import clip


def _allowed(num_actions: int) -> str:
    """What an env with ``num_actions`` actions takes as an action (its own range: 106 ids with señas)."""
    return f"an integer id 0..{num_actions - 1} (a Python int, numpy integer or 0-d integer array)"


def _describe(value: Any) -> str:
    text = " ".join(repr(value).split())  # one line, even for a 2-d array
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def as_action(action: Any, num_actions: int = NUM_ACTIONS) -> int:
    """``action`` as a Python int id below ``num_actions`` (106 with señas), or ValueError naming it and what is
    allowed."""
    if type(action) is int:  # the common case first: an AEC loop calls this on every step
        value = action
    elif (isinstance(action, (np.integer, np.ndarray)) and action.shape == () and action.dtype.kind in "iu") or (
            isinstance(action, int) and not isinstance(action, bool)):
        value = int(action)
    else:
        raise ValueError(f"action must be {_allowed(num_actions)}, got {_describe(action)}; "
                         f"truco_env.actions.action_id(name, family) gives a name's id")
    if not 0 <= value < num_actions:
        raise ValueError(f"action id {value} is out of range: expected an integer 0..{num_actions - 1}")
    return value


def as_action_batch(actions: Any, num_envs: int, skip: int | None = None,
                    kernel_checks: bool = False, num_actions: int = NUM_ACTIONS) -> np.ndarray:
    """One action id per env as an int32 array (the kernel's type), or ValueError naming the problem.

    ``skip``: -1 where that id leaves an env as it is (``truco_env.vector.SKIP``), or None where there is no such
    id. The dtype and range are checked before the cast, so ``2**32 + k`` cannot wrap round to ``k`` (nor
    ``2**32 - 1`` to ``skip``). With ``kernel_checks`` an int32 or int64 batch (what ``random_actions`` and
    policies give) comes back as it is, uncast: the caller's compiled legality check (``_kernel.vec_check``)
    refuses out-of-range ids in the pass it makes anyway, and the caller casts after it. Why: two numpy
    reductions would cost a 64-env step about a tenth of its time."""
    acts = np.asarray(actions)
    if acts.shape != (num_envs,) or acts.dtype.kind not in "iu":
        raise ValueError(f"actions must be {num_envs} integer action ids, got shape {acts.shape} "
                         f"and dtype {acts.dtype}")
    if kernel_checks and acts.dtype in (np.int32, np.int64):
        return acts
    low = 0 if skip is None else skip
    if acts.size and (acts.min() < low or acts.max() >= num_actions):
        bad = int(np.argmax((acts < low) | (acts >= num_actions)))
        also = "" if skip is None else f" or {skip} to skip the env"
        raise ValueError(f"illegal action {acts[bad]} for env {bad}: out of range, expected an action id "
                         f"0..{num_actions - 1}{also}")
    return acts.astype(np.int32, copy=False)


def as_seed(seed: Any) -> int | None:
    """``seed`` as None or a Python int >= 0 (numpy integers accepted), or ValueError naming it."""
    if seed is None or (type(seed) is int and seed >= 0):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return int(seed)
    raise ValueError(f"seed must be None or an integer >= 0 (a Python or numpy integer), got {_describe(seed)}")


def as_reset_options(options: Any) -> dict:
    """The keys of reset's ``options`` that the environments read (``deal``, ``score``); other keys are ignored,
    as Gymnasium and PettingZoo's api_test expect of reset options, with a warning that names them (a misspelt
    ``"scores"`` would otherwise pass unseen). ValueError when ``options`` is no dict."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"options must be None or a dict with keys 'deal' and/or 'score', got "
                         f"{_describe(options)}")
    unknown = sorted(str(k) for k in options if k not in ("deal", "score"))
    if unknown:
        warnings.warn(f"reset options {clip(unknown, 80)} are ignored: the environment reads 'deal' and 'score'",
                      UserWarning, stacklevel=3)
    return {k: v for k, v in options.items() if k in ("deal", "score")}
