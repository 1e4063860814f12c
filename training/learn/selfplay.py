"""Self-play collection for the PPO trainer: tables of matches on the vector environment, and where they run.

An update's collection is split into partitions (:class:`PartitionPlan`, played by :class:`Partition`): each plays ``tables`` matches at once on the
compiled :class:`truco_env.vector.VectorEnv`, every match against an opponent drawn from the league (the learner
itself, a frozen snapshot, any agent: a best response's league is its target alone), until it holds its share of
learner decisions; then each table
idles, so no match is left half played and a checkpoint between updates holds the whole state. One batched
forward pass per step serves every table where the learner acts, and one per snapshot in play. A partition is
plain data seeded on its own, so it gives the same decisions in this process, in a worker process or on a Ray
actor (:class:`Backend`). An opponent that needs more than its seat's observation (a tabular CFR policy reads its
information-state key) is served from reference-engine tables (:class:`truco_env.vector.EngineVectorEnv`), as
tournaments serve it, at the reference engine's speed.

Why the networks' inputs are kept as sparse rows: an observation has about 50 nonzero entries of 1,086, so a
first layer read as sparse rows costs a twentieth of the multiplications, and a batch stored that way a
twentieth of the bytes (dense, a 16,384-decision batch's inputs take 180 MB).
"""

from __future__ import annotations

import dataclasses
import signal
from typing import Any

import numpy as np
import torch

from agents.base import Agent, act_many, make_agent, observation_for
from agents.network import CardStrength, PolicyNet, Ragged, SparseRows
from agents.seats import TableSeats
from truco_env import _kernel
from truco_env.cards import NUM_CARDS
from truco_env.vector import EngineVectorEnv, VectorEnv

_STRENGTH = CardStrength()  # no weights: one instance serves every batch


def ragged_inputs(obs: torch.Tensor, hidden_cards: torch.Tensor, policy_strength: bool) -> tuple[Ragged, Ragged]:
    """What the policy's and the critic's first layers read (their ``inputs``) as :class:`Ragged` rows, from one
    scan of the critic's input (the policy's is a subset of its columns). Dense, the inputs of a 16,384-decision
    batch take 180 MB and more time to build than an epoch takes."""
    n = len(obs)
    cards = torch.cat([_STRENGTH.slots(obs), hidden_cards.reshape(n, -1, NUM_CARDS)], 1)
    levels = _STRENGTH.levels(obs, cards)  # own, partner and table slots, then the hidden ones
    critic = Ragged.from_dense(torch.cat([obs, hidden_cards, levels], 1))  # DealCritic.inputs' column order
    width, hidden = obs.shape[1], hidden_cards.shape[1]
    strength_end = width + hidden + _STRENGTH.size
    keep = critic.index < (strength_end if policy_strength else width)
    keep &= (critic.index < width) | (critic.index >= width + hidden)
    rows = torch.repeat_interleave(torch.arange(n), critic.counts)
    index = critic.index[keep]
    policy = Ragged(torch.bincount(rows[keep], minlength=n), torch.where(index < width, index, index - hidden),
                    critic.value[keep])
    return policy, critic


def stored_rows(part: dict[str, np.ndarray], key: str) -> SparseRows:
    """The ``key`` ("policy" or "critic") inputs a partition stored as ragged arrays, padded for minibatches."""
    counts, index = (torch.from_numpy(part[f"{key}_{x}"].astype(np.int64)) for x in ("counts", "index"))
    return Ragged(counts, index, torch.from_numpy(np.require(part[f"{key}_value"], requirements="W"))).padded()


# ------------------------------------------------------------------------------------------------------------
# collection: one partition of one update


@dataclasses.dataclass(frozen=True)
class PartitionPlan:
    """Everything a partition needs besides the networks; plain data, so it runs in any process."""

    preset: str
    seed: int
    tables: int
    quota: int
    shaping: float
    opponents: tuple[str, ...]  # "self", "snapshot:<id>" or an agent spec
    weights: tuple[float, ...]  # their sampling probabilities
    magnet: str = ""  # an agent spec whose probabilities at each learner decision are stored (training/learn/ppo.py)


#: The uniform share mixed into a fixed magnet's probabilities: a blueprint gives some legal actions no weight,
#: and KL(policy || magnet) would be infinite wherever the policy still tries one.
MAGNET_FLOOR = 0.01


def magnet_log_probs(agent: Agent, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Log-probabilities of ``agent``'s mixed strategy at each row (``agent.probabilities``), with
    :data:`MAGNET_FLOOR` of uniform over the legal actions; -inf off the mask."""
    legal = mask.astype(bool)
    probs = np.stack([agent.probabilities({"observation": o, "action_mask": m}) for o, m in zip(obs, mask)])
    uniform = legal / legal.sum(1, keepdims=True)
    with np.errstate(divide="ignore"):
        return np.log(np.where(legal, (1 - MAGNET_FLOOR) * probs + MAGNET_FLOOR * uniform, 0.0)).astype(np.float32)


class Buffers:
    """Arrays that grow as needed and are reused from update to update: a fresh 100 MB array per update costs
    more in page faults than the forward passes that fill it."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def put(self, key: str, start: int, values: np.ndarray) -> None:
        array = self.arrays.get(key)
        end = start + len(values)
        if array is None or len(array) < end:
            grown = np.empty((max(end, 2 * (0 if array is None else len(array)), 1024), *values.shape[1:]),
                             dtype=values.dtype)
            if array is not None:
                grown[:start] = array[:start]
            self.arrays[key] = array = grown
        array[start:end] = values

    def view(self, key: str, count: int) -> np.ndarray:
        return self.arrays[key][:count]


class Partition:
    """Plays one :class:`PartitionPlan` to the end and returns its learner decisions in playing order (views of
    ``buffers``, valid until they are filled again), their rewards and trajectory ids, and the learner's score
    against each league opponent."""

    def __init__(self, task: PartitionPlan, env: VectorEnv | EngineVectorEnv, learner: PolicyNet, snapshots: dict[int, PolicyNet],
                 agents: dict[str, Agent], buffers: Buffers, seats: dict[str, TableSeats] | None = None):
        """``agents``: per spec, the one instance that serves every table (a batched agent, the magnet); ``seats``:
        per spec, the agents seated one per table and seat (both kept by the caller from partition to partition)."""
        self.task, self.env, self.learner, self.snapshots, self.agents = task, env, learner, snapshots, agents
        self.seats = {} if seats is None else seats
        self.buffers = buffers
        self.rng = np.random.default_rng(task.seed)
        self.generator = torch.Generator().manual_seed(int(self.rng.integers(2 ** 62)))
        config = env.config
        self.n, self.rows = config.num_players, env.num_envs
        self.scale, self.one_hand = float(config.target_score), bool(config.single_hand)
        self.opponent = np.full(self.rows, -1, dtype=np.int64)  # index into task.opponents; -1: the table idles
        self.learner_seat = np.zeros((self.rows, self.n), dtype=bool)
        self.traj = np.full((self.rows, self.n), -1, dtype=np.int64)
        self.last = np.full((self.rows, self.n), -1, dtype=np.int64)  # latest decision id per seat
        self.next_traj = 0
        self.decisions = 0
        self.entries = {"policy": 0, "critic": 0}  # stored sparse entries so far
        self.rewards: list[np.ndarray] = []  # credits (decision ids, values), applied at the end
        self.results: list[tuple[int, float]] = []

    def collect(self) -> dict[str, Any]:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the same float arithmetic in every process
        try:
            self.obs, self.mask, self.actor = self.env.reset(seed=int(self.rng.integers(2 ** 62)))
            for name in self.task.opponents:  # one instance of a batched agent serves every table
                if name != "self" and not name.startswith("snapshot:") and traits(name).batched:
                    self._agent(name, -1, -1).seed(int(self.rng.integers(2 ** 31)))
            self._start(np.arange(self.rows))
            while (self.opponent >= 0).any():
                self._step()
            return self._batch()
        finally:
            torch.set_num_threads(threads)

    def _start(self, rows: np.ndarray) -> None:
        """Open a match at each of ``rows`` (already dealt by the env), or idle it once the quota is met."""
        for r in rows:
            if self.decisions >= self.task.quota:
                self.opponent[r] = -1
                self.learner_seat[r] = False
                continue
            k = int(self.rng.choice(len(self.task.opponents), p=self.task.weights))
            name = self.task.opponents[k]
            team = int(self.rng.integers(2))
            self.opponent[r] = k
            self.learner_seat[r] = True if name == "self" else (np.arange(self.n) % 2 == team)
            self.traj[r] = np.arange(self.next_traj, self.next_traj + self.n)
            self.next_traj += self.n
            self.last[r] = -1
            if name != "self" and not name.startswith("snapshot:") and not traits(name).batched:
                for seat in np.flatnonzero(~self.learner_seat[r]):
                    self._seated(name).new_match(int(r), int(seat), int(self.rng.integers(2 ** 31)))

    def _agent(self, spec: str, row: int, seat: int) -> Agent:
        """The agent of ``spec`` at table ``row`` and ``seat``; row -1: the one instance that serves every table."""
        if row >= 0:
            return self._seated(spec).at(row, seat)
        if spec not in self.agents:
            self.agents[spec] = make_agent(spec)
        return self.agents[spec]

    def _seated(self, spec: str) -> TableSeats:
        """The agents of ``spec`` that play one table at a time, one per table and seat."""
        if spec not in self.seats:
            self.seats[spec] = TableSeats(lambda table, seat: make_agent(spec))
        return self.seats[spec]

    def _step(self) -> None:
        obs, mask, actor = self.obs, self.mask, self.actor
        rows = np.arange(self.rows)
        live = self.opponent >= 0
        mine = live & self.learner_seat[rows, actor]
        actions = np.argmax(mask, axis=1).astype(np.int64)  # idle tables: any legal action
        learner = rows[mine]
        if learner.size:
            legal = torch.from_numpy(mask[learner].astype(bool))
            hidden = self.env.privileged(learner)
            x_policy, x_critic = ragged_inputs(torch.from_numpy(obs[learner]), torch.from_numpy(hidden),
                                               self.learner.strength is not None)
            with torch.no_grad():
                logits, _ = self.learner.from_inputs(x_policy, legal)
                log_probs = torch.log_softmax(logits, -1)
                chosen = sample(log_probs.exp(), self.generator)
            seats = actor[learner]
            start = self.decisions
            self.decisions += learner.size
            record = {"masks": legal.numpy(), "actions": chosen.numpy(),
                      "logprobs": log_probs.gather(1, chosen[:, None]).squeeze(1).numpy(),
                      "traj": self.traj[learner, seats]}
            if self.task.magnet:
                record["magnet_logits"] = magnet_log_probs(self._agent(self.task.magnet, -1, -1), obs[learner],
                                                    mask[learner])
            for key, values in record.items():
                self.buffers.put(key, start, values)
            for key, rows_of in (("policy", x_policy), ("critic", x_critic)):
                self.buffers.put(f"{key}_counts", start, rows_of.counts.numpy())
                self.buffers.put(f"{key}_index", self.entries[key], rows_of.index.to(torch.int16).numpy())
                self.buffers.put(f"{key}_value", self.entries[key], rows_of.value.numpy())
                self.entries[key] += len(rows_of.index)
            self.last[learner, seats] = np.arange(start, self.decisions)
            actions[learner] = chosen.numpy()
        others = rows[live & ~mine]
        for k in np.unique(self.opponent[others]):
            name = self.task.opponents[k]
            at = others[self.opponent[others] == k]
            if name.startswith("snapshot:"):
                net = self.snapshots[int(name.split(":")[1])]
                with torch.no_grad():
                    probs = net.probabilities(torch.from_numpy(obs[at]), torch.from_numpy(mask[at].astype(bool)))
                actions[at] = sample(probs, self.generator).numpy()
            elif traits(name).batched:
                actions[at] = self._agent(name, -1, -1).act_batch(obs[at], mask[at])
            elif traits(name).wants:  # extras from each table's engine state; a search decides its tables together
                seated = [self._agent(name, int(i), int(actor[i])) for i in at]
                views = [observation_for(agent, self.env.state(int(i)), int(actor[i])) for agent, i in zip(seated, at)]
                actions[at] = act_many(seated, obs[at], mask[at], views)
            else:  # one agent per table and seat; a heuristic's tables take one compiled call
                actions[at] = self._seated(name).act(at, obs, mask, actor)
        self.obs, self.mask, points, self.actor, done = self.env.step(actions)
        info = self.env.info
        closed = np.flatnonzero(info[:, _kernel.INFO_CLOSED] & live)
        if closed.size:
            weight = 1.0 if self.one_hand else self.task.shaping
            self._credit(closed, weight * points[closed] / self.scale)
        ended = np.flatnonzero(done & live)
        if ended.size:
            self._end(ended, info)

    def _credit(self, rows: np.ndarray, value: np.ndarray) -> None:
        """Add ``value`` [rows, seats] to the latest decision of each learner seat of ``rows``."""
        pick = self.learner_seat[rows] & (self.last[rows] >= 0)
        self.rewards.append(np.stack([self.last[rows][pick], value[pick]]))

    def _end(self, rows: np.ndarray, info: np.ndarray) -> None:
        """Credit the match results, record them for the league, and open the next matches."""
        if not self.one_hand:
            winner = info[rows, _kernel.INFO_WINNER]
            diff = (info[rows, _kernel.INFO_SCORE] - info[rows, _kernel.INFO_SCORE + 1]).astype(np.float32)
            team = np.arange(self.n) % 2  # per seat
            won = (winner[:, None] == team[None, :]).astype(np.float32)
            result = np.where(winner[:, None] < 0, 0.0, 2.0 * won - 1.0)
            own_diff = np.where(team[None, :] == 0, diff[:, None], -diff[:, None])
            self._credit(rows, result - self.task.shaping * own_diff / self.scale)
        for r in rows:
            k = int(self.opponent[r])
            if self.task.opponents[k] != "self":
                team = int(np.flatnonzero(self.learner_seat[r])[0] % 2)
                winner = int(info[r, _kernel.INFO_WINNER])
                self.results.append((k, 0.5 if winner < 0 else float(winner == team)))
        self._start(rows)

    def _batch(self) -> dict[str, Any]:
        """The decisions in playing order (:func:`trajectory_advantages` sorts indices, not inputs), their rewards
        and trajectory ids; the networks' inputs as ragged sparse rows (an observation has ~50 nonzero entries of
        1,086: a twentieth of the bytes to keep or send)."""
        keys = ("masks", "actions", "logprobs", "traj", "policy_counts", "critic_counts") + \
            (("magnet_logits",) if self.task.magnet else ())
        out: dict[str, Any] = {key: self.buffers.view(key, self.decisions) for key in keys}
        for key in ("policy", "critic"):
            for part in ("index", "value"):
                out[f"{key}_{part}"] = self.buffers.view(f"{key}_{part}", self.entries[key])
        rewards = np.zeros(self.decisions, dtype=np.float32)
        if self.rewards:
            credits = np.concatenate(self.rewards, axis=1)
            np.add.at(rewards, credits[0].astype(np.int64), credits[1])
        out["rewards"] = rewards
        out["results"] = np.asarray(self.results, dtype=np.float64).reshape(-1, 2)
        return out


def sample(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row by inverse CDF (a third of ``torch.multinomial``'s time). The CDF rises only at actions
    of positive probability and the draw stays below its top, so the first entry above the draw is always an
    action of positive probability."""
    cdf = probs.cumsum(1)
    draws = torch.rand(len(probs), 1, generator=generator) * (cdf[:, -1:] * (1 - 1e-6))
    return torch.searchsorted(cdf, draws, right=True).squeeze(1)


@dataclasses.dataclass(frozen=True)
class Traits:
    """How a league agent is served: ``batched``, one instance plays many tables through one ``act_batch``;
    ``wants``, it reads more than the observation, so its matches need reference-engine tables."""

    batched: bool
    wants: bool


_TRAITS: dict[str, Traits] = {}


def traits(spec: str) -> Traits:
    """The :class:`Traits` of the agent of ``spec`` (made once per process)."""
    if spec not in _TRAITS:
        agent = make_agent(spec)
        _TRAITS[spec] = Traits(bool(agent.batched), bool(agent.wants))
    return _TRAITS[spec]


def needs_engine(task: PartitionPlan) -> bool:
    """Whether ``task``'s matches must be played on reference-engine tables (an opponent wants extras)."""
    return any(traits(o).wants for o in task.opponents if o != "self" and not o.startswith("snapshot:"))


# ------------------------------------------------------------------------------------------------------------
# where partitions run


class Collector:
    """Runs partitions; keeps its vector envs, scripted agents and the snapshots it was sent between updates."""

    def __init__(self) -> None:
        self.envs: dict[tuple[str, int, bool], VectorEnv | EngineVectorEnv] = {}
        self.agents: dict[str, Agent] = {}  # per spec, one instance for every table
        self.seats: dict[str, TableSeats] = {}  # per spec, one agent per table and seat
        self.snapshots: dict[int, PolicyNet] = {}
        self.learner: PolicyNet | None = None
        self.buffers: list[Buffers] = []

    def run(self, arch: dict[str, Any], learner: dict[str, np.ndarray], new_snapshots: dict[int, dict],
            tasks: list[PartitionPlan]) -> list[dict[str, Any]]:
        self.learner = _network(arch, learner, self.learner)
        for sid, weights in new_snapshots.items():
            self.snapshots[sid] = _network(arch, weights)
        wanted = {int(o.split(":")[1]) for t in tasks for o in t.opponents if o.startswith("snapshot:")}
        self.snapshots = {sid: net for sid, net in self.snapshots.items() if sid in wanted}
        out = []
        while len(self.buffers) < len(tasks):
            self.buffers.append(Buffers())
        for task, buffers in zip(tasks, self.buffers, strict=False):
            engine = needs_engine(task)
            key = (task.preset, task.tables, engine)
            if key not in self.envs:
                kind = EngineVectorEnv if engine else VectorEnv
                self.envs[key] = kind(task.preset, num_envs=task.tables, seed=0, reward="points")
            out.append(Partition(task, self.envs[key], self.learner, self.snapshots, self.agents, buffers,
                                 self.seats).collect())
        return out


def _network(arch: dict[str, Any], weights: dict[str, np.ndarray], reuse: PolicyNet | None = None) -> PolicyNet:
    net = reuse if reuse is not None else PolicyNet(arch["obs_size"], arch["num_actions"], tuple(arch["hidden"]),
                                                    arch["features"], arch["tally_film"])
    net.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in weights.items()})
    return net.eval()


def _serve(conn: Any) -> None:
    """A worker process: one :class:`Collector`, fed messages until ``None``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the trainer's: it finishes the update
    torch.set_num_threads(1)
    collector = Collector()
    try:
        while (message := conn.recv()) is not None:
            try:
                conn.send(collector.run(*message))
            except ValueError as exc:  # bad input, such as a league's program that will not start: one line
                conn.send(WorkerError(str(exc)))
                return
    except (EOFError, BrokenPipeError):
        pass


class WorkerError:
    """A collection worker's ValueError, sent back whole so that the trainer raises it as its own."""

    def __init__(self, message: str):
        self.message = message


class Backend:
    """Sends each update's partitions to where they run and returns their results in partition order. Worker
    ``w`` always runs partitions ``w, w + workers, ...``, so each keeps its own envs and snapshots."""

    def __init__(self, kind: str, workers: int):
        self.kind, self.workers = kind, workers
        self.sent: set[int] = set()  # snapshot ids the workers hold
        if kind == "local":
            self.local = Collector()
        elif kind == "processes":
            import multiprocessing

            ctx = multiprocessing.get_context("spawn")
            self.pipes = []
            # the workers inherit an ignored Ctrl-C from their first instruction, before _serve runs (importing
            # torch takes a second): a Ctrl-C then would print a traceback per worker (training/workers.py)
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                for _ in range(workers):
                    parent, child = ctx.Pipe()
                    ctx.Process(target=_serve, args=(child,), daemon=True).start()
                    child.close()
                    self.pipes.append(parent)
            finally:
                signal.signal(signal.SIGINT, previous)
        else:
            from training.workers import start_ray

            ray = self.ray = start_ray(workers)
            self.actors = [ray.remote(num_cpus=1)(Collector).remote() for _ in range(workers)]

    def run(self, net: PolicyNet, snapshots: dict[int, dict[str, np.ndarray]], tasks: list[PartitionPlan]
            ) -> list[dict[str, Any]]:
        """Collect ``tasks`` with the learner ``net`` and the league's ``snapshots`` (weights by id; each is sent
        to the workers once)."""
        arch = net.architecture()
        weights = {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}  # collection is on the CPU
        new = {sid: w for sid, w in snapshots.items() if sid not in self.sent}
        self.sent = set(snapshots)
        if self.kind == "local":
            return self.local.run(arch, weights, new, tasks)
        mine = [tasks[w::self.workers] for w in range(self.workers)]
        if self.kind == "processes":
            try:
                for pipe, part in zip(self.pipes, mine, strict=True):
                    pipe.send((arch, weights, new, part))
                per_worker = [pipe.recv() for pipe in self.pipes]
            except (EOFError, OSError):
                raise RuntimeError("a collection worker died (its error is printed above)") from None
            failed = next((r for r in per_worker if isinstance(r, WorkerError)), None)
            if failed is not None:
                raise ValueError(failed.message)
        else:
            refs = [self.ray.put(x) for x in (arch, weights, new)]
            try:
                per_worker = self.ray.get([a.run.remote(*refs, part)
                                           for a, part in zip(self.actors, mine, strict=True)])
            except self.ray.exceptions.RayError as exc:  # a collector lost with its worker or node
                raise ValueError(f"a collection actor was lost on the Ray cluster ({type(exc).__name__}); the last "
                                 "checkpoint is whole: run again with --resume on a cluster with at least "
                                 f"{self.workers} free CPUs") from None
        out: list[dict[str, Any]] = [{}] * len(tasks)
        for w, results in enumerate(per_worker):
            for k, result in enumerate(results):
                out[w + k * self.workers] = result
        return out

    def close(self) -> None:
        if self.kind == "processes":
            for pipe in self.pipes:
                try:
                    pipe.send(None)
                except (BrokenPipeError, OSError):
                    pass
        elif self.kind == "ray":
            for actor in self.actors:
                self.ray.kill(actor)
