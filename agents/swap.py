"""SwapAgent: an agent that hands one kind of decision to the heuristic, to find where it loses matches.

A research instrument, not a player to ship. Spec: ``swap:POLICY,on=KINDS`` where ``POLICY`` is a policy file or
shipped name (played greedily, as the shipped policies are measured) or an agent spec without options, such as
``cfr:paulista-2v2``, and ``KINDS`` joins with ``+`` the kinds of decision the heuristic makes instead:

* ``cards``: a turn where the policy and the heuristic would both play a card (which card);
* ``bets``: a turn of the play phase where either would call, raise or fold instead (whether to bet);
* ``answers``: answering a call (quiero, no quiero, a raise);
* ``onze``: the mão de onze choice (play or run);
* ``none``: nothing (the policy alone, on the same deals: the baseline).

``truco eval --agents swap:paulista-2v2,on=cards heuristic --preset paulista-2v2`` then says what the policy's
card play costs against the heuristic's. The heuristic is asked at every decision, so that its per-match memory
(the opponents' calls) stays what it would be had it played the whole match.
"""

from __future__ import annotations

from typing import Any

from truco_env.actions import CALL_BASE
from truco_env.limits import MAX_ECHO, clip

from .base import (
    DECISION_KINDS,
    MAX_PATH_ECHO,
    Agent,
    available_kinds,
    echo,
    make_agent,
    refuse_kinds_never_met,
    register_agent,
)
from .view import decode

SWAP_KINDS = (*DECISION_KINDS[:4], "none")  # the heuristic sends no signals


def decision_kind(phase: str, policy_action: int, heuristic_action: int) -> str:
    """The kind (``SWAP_KINDS``) of one decision, from the phase and the two candidate actions."""
    if phase == "onze":
        return "onze"
    if phase != "play":
        return "answers"
    return "cards" if policy_action < CALL_BASE and heuristic_action < CALL_BASE else "bets"


class SwapAgent(Agent):
    """The agent's action, except at decisions of the ``on`` kinds, where the heuristic's."""

    def __init__(self, policy: Agent, heuristic: Agent, on: frozenset[str]):
        self.policy, self.heuristic, self.on = policy, heuristic, on
        self.presets = policy.presets  # a policy or blueprint of one preset swaps on that preset only

    def seed(self, seed: int | None = None) -> None:
        self.policy.seed(seed)
        self.heuristic.seed(seed)

    def reset(self, seat: int | None = None) -> None:
        self.policy.reset(seat)
        self.heuristic.reset(seat)

    def act(self, observation: dict[str, Any]) -> int:
        own = self.policy.act(observation)
        other = self.heuristic.act(observation)
        return other if decision_kind(decode(observation).phase, own, other) in self.on else own


def _factory(arg: str | None, params: dict[str, str]) -> Agent:
    usage = "swap:POLICY,on=KINDS (KINDS: any of " + "+".join(SWAP_KINDS) + ")"
    policy, _, option = (arg or "").partition(",")
    key, eq, value = option.partition("=")
    if not policy or key.strip() != "on" or not eq:
        raise ValueError(f"agent 'swap' needs {usage}, got {echo(('swap:' + arg) if arg else 'swap', MAX_PATH_ECHO)}")
    on = frozenset(kind.strip() for kind in value.split("+"))
    unknown = sorted(on - set(SWAP_KINDS))
    if unknown:
        names = clip(", ".join(echo(kind) for kind in unknown), 2 * MAX_ECHO)
        raise ValueError(f"agent 'swap': unknown decision kinds [{names}]; choose from {list(SWAP_KINDS)}")
    named = policy.partition(":")[0] in available_kinds()  # cfr:paulista-2v2, say; else a policy
    agent = make_agent(policy if named else f"ppo:{policy},greedy")
    refuse_kinds_never_met("swap", agent, on)
    return SwapAgent(agent, make_agent("heuristic"), on - {"none"})


register_agent("swap", _factory)
