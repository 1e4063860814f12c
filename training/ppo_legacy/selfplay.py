"""Self-play against a league: who sits at each table, and the collection of learner trajectories.

Why per-seat trajectories: Truco is turn-based and a seat's next decision comes after the others have acted, so
each learner seat of each match is its own trajectory (its decisions in order, the hand-point shaping credited
to its latest decision, the match result at its last one). Why whole matches per update: collection stops
opening new matches once the batch is full and finishes the open ones, so an update never leaves a half-played
match behind; a checkpoint taken between updates therefore holds the whole training state, and a resumed run
continues exactly as an uninterrupted one would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from agents.base import Agent, make_agent, observation_for
from agents.heuristic import match_equity_table
from truco_env import actions as A
from truco_env.config import TrucoConfig
from truco_env.encoding import (
    OBSERVATION_SIZE,
    encode_action_mask,
    encode_observation,
    encode_privileged,
)
from truco_env.engine import TrucoState

from .model import PolicyNet, opponent_codes

# ------------------------------------------------------------------------------------------------------------
# The league


@dataclass
class League:
    """Frozen past selves plus fixed agents; the learner's results against each steer sampling."""

    kinds: dict[str, float]  # "self", "snapshot", or an agent spec -> weight
    sampling: str = "uniform"  # or "prioritized": snapshots the learner beats less often come more often
    max_snapshots: int = 20
    snapshots: list[PolicyNet] = field(default_factory=list)
    results: list[list[float]] = field(default_factory=list)  # per snapshot: learner scores (1 win, 0 loss)

    def add_snapshot(self, net: PolicyNet) -> None:
        frozen = PolicyNet(net.obs_size, net.num_actions, net.hidden, net.features)
        frozen.load_state_dict(net.state_dict())
        frozen.eval()
        self.snapshots.append(frozen)
        self.results.append([])
        if len(self.snapshots) > self.max_snapshots:  # keep the first (weakest anchor) and the most recent
            del self.snapshots[1]
            del self.results[1]

    def win_rate(self, index: int, window: int) -> float:
        recent = self.results[index][-window:]
        return float(np.mean(recent)) if recent else 0.5

    def task(self, config: TrucoConfig, num_tables: int, min_steps: int, seed: int,
             points_reward: float, preset: str | None = None, reward: str = "match",
             equity_edge: dict[str, float] | None = None, privileged: bool = False,
             guide: str = "none", guide_against: tuple[str, ...] = ()) -> RolloutTask:
        """One partition of an update's collection, as plain data (it may run in another process). With
        ``preset`` (and league agents that need nothing but observations) it runs on the vector env."""
        return RolloutTask(config, num_tables, min_steps, seed, points_reward, dict(self.kinds), self.sampling,
                           [self.win_rate(i, 200) for i in range(len(self.snapshots))], preset, reward,
                           dict(equity_edge or {}), privileged, guide, tuple(guide_against))


@dataclass
class RolloutTask:
    """Everything one collection partition needs besides the networks; its seed makes it reproducible anywhere."""

    config: TrucoConfig
    num_tables: int
    min_steps: int
    seed: int
    points_reward: float
    kinds: dict[str, float]
    sampling: str
    snapshot_win_rates: list[float]
    preset: str | None = None  # set: collect on truco_env.vector.VectorEnv (the compiled engine)
    reward: str = "match"  # see REWARDS
    equity_edge: dict[str, float] = field(default_factory=dict)  # league agent spec -> learner's edge per hand
    privileged: bool = False  # record each learner decision's encode_privileged row (for a privileged critic)
    guide: str = "none"  # agent spec whose choice is recorded at learner decisions against ``guide_against``
    guide_against: tuple[str, ...] = ()  # league agent specs

    def sample_opponent(self, rng: np.random.Generator) -> tuple[str, Any]:
        """("self", None) | ("snapshot", index) | ("agent", spec)."""
        count = len(self.snapshot_win_rates)
        kinds = {k: w for k, w in self.kinds.items() if w > 0 and (k != "snapshot" or count)}
        names = sorted(kinds)
        weights = np.array([kinds[k] for k in names], dtype=float)
        kind = names[int(rng.choice(len(names), p=weights / weights.sum()))]
        if kind == "self":
            return "self", None
        if kind == "snapshot":
            if self.sampling == "prioritized":
                w = np.array([(1.0 - rate) ** 2 + 0.05 for rate in self.snapshot_win_rates])
            else:
                w = np.ones(count)
            return "snapshot", int(rng.choice(count, p=w / w.sum()))
        return "agent", kind


# ------------------------------------------------------------------------------------------------------------
# One table


@dataclass
class Table:
    state: TrucoState
    learner_seats: set[int]
    opponent: tuple[str, Any]
    agents: dict[Any, Agent]  # seat -> league agent; ("teacher" or "guide", seat) -> that agent
    trajectories: dict[int, dict[str, list]]
    hand_index: int = 0
    hand_start: tuple[int, int] = (0, 0)  # the score when the current hand began


@dataclass
class Trajectory:
    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    logprobs: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    ends: np.ndarray  # True at a decision after which no reward flows back (its hand closed, under match_equity)
    opponent: str = "self"  # who the learner faced: "self", "snapshot" or the league agent's spec
    privileged: np.ndarray | None = None  # per decision, encode_privileged of the learner seat (task.privileged)
    guide: np.ndarray | None = None  # per decision, the guide agent's action there, or -1 (task.guide)


def _new_trajectory() -> dict[str, list]:
    return {"obs": [], "masks": [], "actions": [], "logprobs": [], "values": [], "rewards": [], "ends": [],
            "privileged": [], "guide": []}


# ------------------------------------------------------------------------------------------------------------
# Rewards

#: ``match``: +1/-1 at the match end, plus ``points_reward`` x (hand point difference / target) at each hand's
#: last decision; advantages run over the whole match. ``match_equity``: each closed hand credits the seat's
#: last decision in it with twice the change of its team's match-winning probability (the heuristic's
#: match-equity table; the final hand reaches 1 or 0), and advantages stop at the hand's end. Why: the match
#: result is one noisy bit after ~50 decisions, while the equity change says at once what a hand was worth at
#: that score -- the per-hand utility that made the CFR response beat the heuristic (see docs/research.md).
#: The table assumes even hands unless ``equity_edge`` names the opponent: against a much weaker player (random)
#: the learner's true match equity is near 1 at any score, and only a table with its edge says that a coin-flip
#: falta envido, worth a fair gamble between equals, risks a match that was all but won.
REWARDS = ("match", "match_equity")


def credit_hand(trajectories: dict[int, dict[str, list]], task: RolloutTask, before: tuple[int, int],
                after: tuple[int, int], over: bool, winner: int | None,
                opponent: tuple[str, Any] = ("self", None)) -> None:
    """Credit one closed hand (scores ``before`` and ``after`` it) to the learner seats' trajectories; under
    ``match_equity`` with the learner's ``equity_edge`` against ``opponent`` (a league agent)."""
    config = task.config
    if task.reward == "match_equity":
        edge = task.equity_edge.get(opponent[1], 0.0) if opponent[0] == "agent" else 0.0
        table = match_equity_table(config.target_score, config.family, edge)
        for seat, traj in trajectories.items():
            if not traj["actions"] or traj["ends"][-1]:
                continue  # the seat made no decision in this hand
            team = seat % 2
            start = table[before[team]][before[1 - team]]
            if over:
                end = 0.5 if winner is None else float(winner == team)
            else:
                end = table[after[team]][after[1 - team]]
            traj["rewards"][-1] += 2.0 * (end - start)
            traj["ends"][-1] = True
        return
    if task.points_reward:
        scale = task.points_reward / config.target_score
        for seat, traj in trajectories.items():
            if traj["rewards"]:
                team = seat % 2
                traj["rewards"][-1] += scale * ((after[team] - before[team]) - (after[1 - team] - before[1 - team]))
    if over:
        for seat, traj in trajectories.items():
            if traj["actions"]:
                traj["rewards"][-1] += _result(winner, seat)


def collect_partition(task: RolloutTask, net: PolicyNet, snapshots: list[PolicyNet]
                      ) -> tuple[list[Trajectory], list[tuple[tuple[str, Any], float]]]:
    """Play one partition: finished learner trajectories and (opponent, learner score) per league match.

    The result depends only on the task and the weights, not on where it runs: a local run, worker processes
    and Ray actors give the same trajectories for the same seed."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the same float arithmetic in every process
    try:
        rng = np.random.default_rng(task.seed)
        generator = torch.Generator().manual_seed(task.seed)
        if task.preset is not None and _observation_only(task):
            return collect_on_vector_env(task, net, snapshots, rng, generator)
        collector = SelfPlayCollector(task)
        return collector.collect(net, snapshots, rng, generator), collector.match_results
    finally:
        torch.set_num_threads(threads)


class SelfPlayCollector:
    """Runs ``task.num_tables`` matches at once and returns finished learner trajectories."""

    def __init__(self, task: RolloutTask):
        self.task = task
        self.config = task.config
        self.match_results: list[tuple[tuple[str, Any], float]] = []  # (opponent, learner score) per match

    def _open_table(self, rng: np.random.Generator) -> Table:
        state = TrucoState.new(self.config, seed=int(rng.integers(2 ** 62)))
        return self.seat_table(state, rng)

    def seat_table(self, state: Any, rng: np.random.Generator) -> Table:
        """Draw the opponent of a new match and who plays which seat."""
        n = self.config.num_players
        opponent = self.task.sample_opponent(rng)
        if opponent[0] == "self":
            learner = set(range(n))
        else:
            team = int(rng.integers(2))
            learner = {s for s in range(n) if s % 2 == team}
        agents: dict[int, Agent] = {}
        if opponent[0] == "agent":
            for seat in range(n):
                if seat not in learner:
                    agents[seat] = make_agent(opponent[1])
                    agents[seat].seed(int(rng.integers(2 ** 31)))
                    agents[seat].reset(seat)
        start = state.score if state is not None else (0, 0)
        return Table(state, learner, opponent, agents, {s: _new_trajectory() for s in learner}, 0, start)

    def collect(self, net: PolicyNet, snapshots: list[PolicyNet], rng: np.random.Generator,
                generator: torch.Generator) -> list[Trajectory]:
        """Play until ``min_steps`` learner decisions are in finished trajectories, then finish open matches."""
        tables = [self._open_table(rng) for _ in range(self.task.num_tables)]
        finished: list[Trajectory] = []
        steps_done = 0
        while tables:
            learner_rows, snapshot_rows, agent_rows = [], {}, []
            for i, table in enumerate(tables):
                seat = table.state.actor
                if seat in table.learner_seats:
                    learner_rows.append(i)
                elif table.opponent[0] == "snapshot":
                    snapshot_rows.setdefault(table.opponent[1], []).append(i)
                else:
                    agent_rows.append(i)
            actions: dict[int, int] = {}
            if learner_rows:
                obs, masks = self._encode(tables, learner_rows)
                with torch.no_grad():
                    logits, values = net(torch.from_numpy(obs), torch.from_numpy(masks))
                    log_probs = torch.log_softmax(logits, -1)
                    chosen = torch.multinomial(log_probs.exp(), 1, generator=generator).squeeze(-1)
                    logprobs = log_probs.gather(1, chosen[:, None]).squeeze(1)
                for row, i in enumerate(learner_rows):
                    traj = tables[i].trajectories[tables[i].state.actor]
                    traj["obs"].append(obs[row])
                    traj["masks"].append(masks[row])
                    traj["actions"].append(int(chosen[row]))
                    traj["logprobs"].append(float(logprobs[row]))
                    traj["values"].append(float(values[row]))
                    traj["rewards"].append(0.0)
                    traj["ends"].append(False)
                    if self.task.privileged:
                        traj["privileged"].append(encode_privileged(tables[i].state, tables[i].state.actor))
                    seat = tables[i].state.actor
                    guide = _guide(self.task, tables[i], seat, rng)
                    traj["guide"].append(-1 if guide is None else
                                         int(guide.act(observation_for(guide, tables[i].state, seat))))
                    actions[i] = int(chosen[row])
            for index, rows in sorted(snapshot_rows.items()):
                obs, masks = self._encode(tables, rows)
                with torch.no_grad():
                    probs = snapshots[index].probabilities(torch.from_numpy(obs), torch.from_numpy(masks))
                    chosen = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
                for row, i in enumerate(rows):
                    actions[i] = int(chosen[row])
            for i in agent_rows:
                table = tables[i]
                seat = table.state.actor
                agent = table.agents[seat]
                actions[i] = int(agent.act(observation_for(agent, table.state, seat)))
            still_open = []
            for i, table in enumerate(tables):
                steps_done += self._advance(table, actions[i], finished)
                if not table.state.is_over:
                    still_open.append(table)
                elif steps_done < self.task.min_steps:
                    still_open.append(self._open_table(rng))
            tables = still_open
        return finished

    def _encode(self, tables: list[Table], rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
        obs = np.zeros((len(rows), OBSERVATION_SIZE), dtype=np.float32)
        masks = np.zeros((len(rows), A.NUM_ACTIONS), dtype=np.bool_)
        for row, i in enumerate(rows):
            state = tables[i].state
            encode_observation(state, state.actor, obs[row])
            masks[row] = encode_action_mask(state).astype(bool)
        return obs, masks

    def _advance(self, table: Table, action: int, finished: list[Trajectory]) -> int:
        """Apply one action; credit closed hands and results; returns learner steps closed into ``finished``."""
        state = table.state
        state.apply(A.action_name(action, state.family))
        closed = 0
        if state.hand_index != table.hand_index or state.is_over:
            table.hand_index = state.hand_index
            credit_hand(table.trajectories, self.task, table.hand_start, state.score, state.is_over, state.winner,
                        table.opponent)
            table.hand_start = state.score
        if state.is_over:
            for traj in table.trajectories.values():
                if traj["actions"]:
                    finished.append(_freeze(traj, table.opponent))
                    closed += len(traj["actions"])
            if table.opponent[0] != "self":
                seat = next(iter(table.learner_seats))
                self.match_results.append((table.opponent, 0.5 + 0.5 * _result(state.winner, seat)))
        return closed


def _observation_only(task: RolloutTask) -> bool:
    """Can every league agent play from the observation vector alone (no engine-side extras)?"""
    return all(not make_agent(spec).wants for spec in task.kinds if spec not in ("self", "snapshot"))


def _sample(net: PolicyNet, obs: np.ndarray, masks: np.ndarray, generator: torch.Generator):
    """Sampled actions with their log-probabilities and values for a batch of observations."""
    with torch.no_grad():
        logits, values = net(torch.from_numpy(obs), torch.from_numpy(masks))
        log_probs = torch.log_softmax(logits, -1)
        chosen = torch.multinomial(log_probs.exp(), 1, generator=generator).squeeze(-1)
        return chosen.numpy(), log_probs.gather(1, chosen[:, None]).squeeze(1).numpy(), values.numpy()


def collect_on_vector_env(task: RolloutTask, net: PolicyNet | None, snapshots: list[PolicyNet],
                          rng: np.random.Generator, generator: torch.Generator, teacher: str | None = None
                          ) -> tuple[list[Trajectory], list]:
    """The same collection as :class:`SelfPlayCollector`, stepped on the compiled vector environment.

    Each row of the vector env is one table; a finished match restarts in its row at once (auto-reset), and the
    row gets a new opponent then, or goes idle (random legal moves, nothing recorded) once the budget is met.
    With ``teacher`` (an agent spec) that agent plays the learner seats instead of ``net``: its decisions are
    recorded (log-probabilities and values 0) for imitation before PPO starts."""
    from truco_env import _kernel as K
    from truco_env.vector import VectorEnv

    rows = task.num_tables
    venv = VectorEnv(task.preset, num_envs=rows, seed=int(rng.integers(2 ** 62)), reward="points")
    finished: list[Trajectory] = []
    results: list[tuple[tuple[str, Any], float]] = []
    try:
        obs, masks, actors = venv.reset()
        shell = SelfPlayCollector(task)

        tables = [shell.seat_table(None, rng) for _ in range(rows)]
        steps_done = 0
        while any(t is not None for t in tables):
            bool_masks = masks.astype(bool)
            actions = np.zeros(rows, dtype=np.int64)
            learner = [i for i in range(rows) if tables[i] is not None and int(actors[i]) in tables[i].learner_seats]
            by_snapshot: dict[int, list[int]] = {}
            for i in range(rows):
                table = tables[i]
                if table is None:
                    actions[i] = int(np.flatnonzero(masks[i])[0])  # idle row: any legal move
                elif i not in learner and table.opponent[0] == "snapshot":
                    by_snapshot.setdefault(table.opponent[1], []).append(i)
                elif i not in learner:
                    agent = table.agents[int(actors[i])]
                    actions[i] = int(agent.act({"observation": obs[i], "action_mask": masks[i]}))
            if learner:
                if teacher is not None:
                    chosen = np.array([_seat_agent(tables[i], "teacher", teacher, int(actors[i]), rng).act(
                        {"observation": obs[i], "action_mask": masks[i]}) for i in learner])
                    logprobs = values = np.zeros(len(learner), dtype=np.float32)
                else:
                    idx = np.array(learner)
                    chosen, logprobs, values = _sample(net, obs[idx], bool_masks[idx], generator)
                privileged = venv.privileged(learner) if task.privileged else None
                for row, i in enumerate(learner):
                    traj = tables[i].trajectories[int(actors[i])]
                    traj["obs"].append(obs[i].copy())
                    traj["masks"].append(bool_masks[i].copy())
                    traj["actions"].append(int(chosen[row]))
                    traj["logprobs"].append(float(logprobs[row]))
                    traj["values"].append(float(values[row]))
                    traj["rewards"].append(0.0)
                    traj["ends"].append(False)
                    if privileged is not None:
                        traj["privileged"].append(privileged[row])
                    guide = _guide(task, tables[i], int(actors[i]), rng)
                    traj["guide"].append(-1 if guide is None else
                                         int(guide.act({"observation": obs[i], "action_mask": masks[i]})))
                    actions[i] = int(chosen[row])
            for index, group in sorted(by_snapshot.items()):
                idx = np.array(group)
                chosen, _, _ = _sample(snapshots[index], obs[idx], bool_masks[idx], generator)
                actions[idx] = chosen
            obs, masks, _, actors, done = venv.step(actions)
            info = venv.info
            for i in range(rows):
                table = tables[i]
                if table is None or not info[i, K.INFO_CLOSED]:  # no hand ended in this row
                    continue
                after = (int(info[i, K.INFO_SCORE]), int(info[i, K.INFO_SCORE + 1]))
                before = (after[0] - int(info[i, K.INFO_HP]), after[1] - int(info[i, K.INFO_HP + 1]))
                winner = int(info[i, K.INFO_WINNER])  # team, or -1 for none
                winner = None if winner < 0 else winner
                credit_hand(table.trajectories, task, before, after, bool(done[i]), winner, table.opponent)
                if done[i]:
                    for traj in table.trajectories.values():
                        if traj["actions"]:
                            finished.append(_freeze(traj, table.opponent))
                            steps_done += len(traj["actions"])
                    if table.opponent[0] != "self":
                        seat = next(iter(table.learner_seats))
                        results.append((table.opponent, 0.5 + 0.5 * _result(winner, seat)))
                    tables[i] = shell.seat_table(None, rng) if steps_done < task.min_steps else None
    finally:
        venv.close()
    return finished, results


def _guide(task: RolloutTask, table: Table, seat: int, rng: np.random.Generator) -> Agent | None:
    """The guide agent of learner ``seat`` (its choice is recorded at each decision), or None where the match
    is not against one of ``task.guide_against``."""
    if not (table.opponent[0] == "agent" and table.opponent[1] in task.guide_against):
        return None
    return _seat_agent(table, "guide", task.guide, seat, rng)


def _seat_agent(table: Table, role: str, spec: str, seat: int, rng: np.random.Generator) -> Agent:
    """The ``role`` agent ("teacher" or "guide") of learner ``seat`` of ``table``, made on its first decision."""
    key = (role, seat)
    if key not in table.agents:
        agent = make_agent(spec)
        agent.seed(int(rng.integers(2 ** 31)))
        agent.reset(seat)
        table.agents[key] = agent
    return table.agents[key]


def _result(winner: int | None, seat: int) -> float:
    if winner is None:
        return 0.0
    return 1.0 if winner == seat % 2 else -1.0


def _freeze(traj: dict[str, list], opponent: tuple[str, Any]) -> Trajectory:
    return Trajectory(np.stack(traj["obs"]), np.stack(traj["masks"]), np.array(traj["actions"], dtype=np.int64),
                      np.array(traj["logprobs"], dtype=np.float32), np.array(traj["values"], dtype=np.float32),
                      np.array(traj["rewards"], dtype=np.float32), np.array(traj["ends"], dtype=np.bool_),
                      opponent[1] if opponent[0] == "agent" else opponent[0],
                      np.stack(traj["privileged"]) if traj["privileged"] else None,
                      np.array(traj["guide"], dtype=np.int64))


def critic_inputs(trajectories: list[Trajectory]) -> tuple[torch.Tensor, torch.Tensor]:
    """A privileged critic's extra inputs for every decision of ``trajectories`` (collected with
    ``task.privileged``), in order: the hidden cards and the opponent one-hot (``model.Critic``)."""
    hidden = torch.from_numpy(np.concatenate([t.privileged for t in trajectories]))
    return hidden, opponent_codes([t.opponent for t in trajectories for _ in t.actions])


def advantages(traj: Trajectory, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE over one finished trajectory: the value after its last decision, and after any decision marked in
    ``ends``, is 0 (the match, or under ``match_equity`` the hand, is over for the credit)."""
    steps = len(traj.rewards)
    adv = np.zeros(steps, dtype=np.float32)
    last = 0.0
    for t in reversed(range(steps)):
        if t + 1 == steps or traj.ends[t]:
            next_value, last = 0.0, 0.0
        else:
            next_value = traj.values[t + 1]
        delta = traj.rewards[t] + gamma * next_value - traj.values[t]
        last = delta + gamma * lam * last
        adv[t] = last
    return adv, adv + traj.values
