"""One agent per table and seat: how a loop over many matches at once seats agents that play one table at a time.

Agents that keep a match's state (the heuristic's memory of the hands, an outside program) cannot serve several
tables from one instance, so a loop over a vector environment's tables (a trainer's scripted opponents, the
answer probe, a warm start's teacher, the heuristic's benchmark) keeps one per table and seat: made the first time
that seat acts, told when its table's match ends, and asked together through :func:`agents.base.act_many`, so
that the heuristic's tables take one compiled call. :class:`TableSeats` is that bookkeeping, written once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .base import Agent, act_many


class TableSeats:
    """The agents at a vector environment's tables, one per table and seat, made by ``make(table, seat)`` (a
    seeded agent) the first time they are asked for."""

    def __init__(self, make: Callable[[int, int], Agent]):
        self.make = make
        self.agents: dict[tuple[int, int], Agent] = {}

    def at(self, table: int, seat: int) -> Agent:
        """The agent at ``table`` and ``seat``; a new one is reset for its seat before its first match."""
        agent = self.agents.get((table, seat))
        if agent is None:
            agent = self.agents[table, seat] = self.make(table, seat)
            agent.reset(seat)
        return agent

    def acting(self, tables: Iterable[int], actor: np.ndarray) -> list[Agent]:
        """The agents who act now at ``tables``: each table's ``actor[table]`` (the acting seat of every table, as
        the environment gives it), in the order of ``tables``."""
        return [self.at(int(table), int(actor[table])) for table in tables]

    def act(self, tables: np.ndarray, obs: np.ndarray, mask: np.ndarray, actor: np.ndarray) -> np.ndarray:
        """The actions of the acting agents at ``tables`` (rows of the environment's ``obs`` and ``mask``), decided
        together through :func:`act_many`."""
        return act_many(self.acting(tables, actor), obs[tables], mask[tables])

    def new_match(self, table: int, seat: int, seed: int) -> None:
        """A new match at ``table`` in which the agent at ``seat`` plays with the random ``seed`` (a loop that
        draws a new opponent for every match seeds it anew each time)."""
        agent = self.at(table, seat)
        agent.seed(seed)
        agent.reset(seat)

    def matches_ended(self, tables: Iterable[int]) -> None:
        """The matches at ``tables`` ended (the environment dealt new ones there): their agents forget them."""
        ended = {int(table) for table in tables}
        for (table, seat), agent in self.agents.items():
            if table in ended:
                agent.reset(seat)
