"""Taking turns: the one loop that lets seats act until a match ends, and what an agent sees at its seat.

Tournaments (``training.measure.evaluate.play_match``), terminal play (``truco play``), the CLI's random matches
(``truco demo --random``) and the single-agent view all drive a match with :func:`play_turns`; they differ only
in who chooses at each seat, when to stop early, and what they do when a hand ends.

Agents are duck typed: anything with ``act(observation) -> action id`` (and, optionally, ``wants``: the extra
seat-safe views of ``agents.base``) plays. The environment layer never imports the agents package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .actions import action_name
from .engine import TrucoState

#: A match still running after this many actions means an engine bug, not a long match.
MAX_ACTIONS_PER_MATCH = 100_000


def observation_for(agent: Any, state: TrucoState, seat: int) -> dict[str, Any]:
    """What ``seat`` of ``state`` shows ``agent``: observation, mask, and the extras it ``wants``."""
    from .encoding import (  # numpy, loaded on use: the rules and the random matches do without it
        encode_action_mask,
        encode_information_state,
        encode_observation,
        information_state_string,
    )

    wants = getattr(agent, "wants", ())
    buffer = getattr(state, "observation_buffer", None)
    if buffer is not None:  # the compiled engine encodes with its kernel; extras come from its reference state
        obs = {"observation": state.encode_observation(seat, buffer()), "action_mask": state.legal_mask().copy()}
        if not wants:
            return obs
        state = state.reference()
    else:
        obs = {"observation": encode_observation(state, seat), "action_mask": encode_action_mask(state)}
    if "info_state_string" in wants:
        obs["info_state_string"] = information_state_string(state, seat)
    if "info_state" in wants:
        obs["info_state"] = encode_information_state(state, seat)
    if "protocol" in wants:  # an outside program's messages (truco_env/protocol.py): seat-safe by construction
        from .protocol import act_message, match_message

        obs["protocol"] = {"match": match_message(state, seat),
                           "act": act_message(state, seat, obs["observation"])}
    return obs


def ask_agent(agent: Any, state: TrucoState, seat: int) -> str:
    """The name of the legal action ``agent`` chooses at ``seat``; a ValueError naming the agent otherwise."""
    action_id = agent.act(observation_for(agent, state, seat))
    try:
        name = action_name(int(action_id), state.family)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{_who(agent, seat)} returned {action_id!r}: {exc}") from None
    mask = getattr(state, "legal_mask", None)  # the compiled engine answers from its mask, without name lists
    if not (mask()[int(action_id)] if mask is not None else name in state.legal_actions()):
        raise ValueError(f"{_who(agent, seat)} chose an illegal action: {name!r}; legal: {state.legal_actions()}")
    return name


def _who(agent: Any, seat: int) -> str:
    return f"agent {getattr(agent, 'spec', '') or agent!r} at seat {seat}"


def play_turns(state: TrucoState, choose: Callable[[int], str], *,
               until: Callable[[TrucoState], bool] | None = None,
               on_hand_end: Callable[[int, tuple[int, int]], None] | None = None,
               max_actions: int = MAX_ACTIONS_PER_MATCH) -> None:
    """Apply ``choose(seat)`` for the seat to act, turn after turn, until the match ends or ``until(state)`` holds.

    ``on_hand_end(hand, score_before)`` runs after each action that finished hand number ``hand`` (or the match),
    with the score before that action. Why ``until``: the single-agent view cannot pass its learner as a chooser,
    since it hands control back to its caller whenever the learner is to act (``until=lambda s: s.actor ==
    learner``) and resumes on the next ``step``; ``truco play`` stops after a given number of hands."""
    actions = 0
    while not state.is_over and not (until is not None and until(state)):
        seat = state.actor
        name = choose(seat)
        hand, before = state.hand_index, state.score
        state.apply(name)
        if on_hand_end is not None and (state.is_over or state.hand_index != hand):
            on_hand_end(hand, before)
        actions += 1
        if actions > max_actions:
            raise RuntimeError(f"match seed {state.seed} not over after {max_actions} actions")
