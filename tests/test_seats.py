"""One agent per table and seat (agents/seats.py), the bookkeeping that the collector's scripted opponents, the answer
probe, the warm start's teacher and the heuristic's benchmark share (issue 74 item 4). That they still play what
they played is pinned elsewhere: the learners' paths (tests/test_learner_paths.py: a best response against the
heuristic, a warm start), the probe's figures (tests/test_probes.py), the benchmark's own check that its three
runs take the same actions."""

from __future__ import annotations

import numpy as np

from agents.base import Agent
from agents.heuristic import HeuristicAgent
from agents.seats import TableSeats
from truco_env.vector import VectorEnv


class Ledger(Agent):
    """Remembers what it was told."""

    def __init__(self, table: int, seat: int):
        self.where, self.seeds, self.resets = (table, seat), [], []

    def seed(self, seed=None):
        self.seeds.append(seed)

    def reset(self, seat=None):
        self.resets.append(seat)

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_each_seat_gets_its_own_agent_made_once_and_reset_for_its_seat():
    made = []
    seats = TableSeats(lambda table, seat: made.append((table, seat)) or Ledger(table, seat))
    actor = np.array([1, 0, 3])
    first = seats.acting([2, 0], actor)
    assert [a.where for a in first] == [(2, 3), (0, 1)] and made == [(2, 3), (0, 1)]
    assert seats.acting([0, 2], actor) == first[::-1] and len(made) == 2  # the same agents, not new ones
    assert [a.resets for a in first] == [[3], [1]]


def test_an_ended_match_resets_the_agents_of_its_table_only():
    seats = TableSeats(Ledger)
    for table, seat in ((0, 0), (0, 2), (1, 0)):
        seats.at(table, seat)
    seats.matches_ended(np.array([0]))
    assert {key: a.resets for key, a in seats.agents.items()} == {(0, 0): [0, 0], (0, 2): [2, 2], (1, 0): [0]}


def test_a_new_match_seeds_the_seat_anew():
    seats = TableSeats(Ledger)
    seats.new_match(4, 1, 99)
    seats.new_match(4, 1, 7)
    agent = seats.at(4, 1)
    assert agent.seeds == [99, 7] and agent.resets == [1, 1, 1]


def test_the_seats_decide_together_as_one_at_a_time():
    """Heuristics at every seat of eight tables: one batched call per step takes the actions that each agent, asked
    on its own, takes (the seats of two twin sets keep the same seeds)."""
    together = TableSeats(lambda table, seat: HeuristicAgent(seed=100 * table + seat))
    alone = TableSeats(lambda table, seat: HeuristicAgent(seed=100 * table + seat))
    env = VectorEnv("argentine-2v2", num_envs=8, seed=3, reward="points")
    tables = np.arange(8)
    obs, mask, actor = env.reset()
    try:
        for _ in range(120):
            actions = together.act(tables, obs, mask, actor)
            one = [agent.act({"observation": obs[t], "action_mask": mask[t]})
                   for t, agent in zip(tables, alone.acting(tables, actor), strict=True)]
            assert actions.tolist() == one
            obs, mask, _, actor, done = env.step(actions)
            together.matches_ended(np.flatnonzero(done))
            alone.matches_ended(np.flatnonzero(done))
    finally:
        env.close()
