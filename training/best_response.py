"""A trained best response: PPO against one frozen agent, the learner of approximate exploitability.

How exploitable is a policy on a game too large for an exact best response? Train a fresh learner against it
alone, with the policy frozen, and see how much it wins ("Approximate exploitability: learning a best response",
Timbers et al., IJCAI 2022). This module is that learner; :mod:`training.exploit` runs it, evaluates it and
writes the report.

Why a learner of its own rather than ``truco train ppo``: an exploitability figure is only comparable between
targets if every target faces the same learner with the same budget. So the recipe (:class:`BRArgs`) is fixed:
no warm start, no imitation, no league, no reward term that knows who the target is; only the budget, the seed and
the number of worker processes change. And it must be fast, because the budget is what it can learn.

The learner
-----------
* **Tables.** ``tables`` matches per partition are played at once on the compiled vector environment
  (:class:`truco_env.vector.VectorEnv`), or on reference-engine states (:class:`~truco_env.vector.EngineVectorEnv`)
  when the target needs more than its observation (a tabular CFR policy reads its information-state string,
  served exactly as tournaments serve it). In each table the learner holds one team (both seats of it in 2v2)
  and the target the other; half the tables seat the learner's team first. A finished match restarts at once.
* **Acting.** One batched forward pass per step for every table where the learner is to act; the target acts
  through ``act_batch`` when it can play many tables at once (networks, random), otherwise one ``act`` per table
  with an agent instance per table and seat, reseeded and reset at each match as a tournament does.
* **Trajectories.** Each learner seat of each match is one trajectory. The tables keep playing across updates,
  so a trajectory is shipped to the update once its match has ended, whole (the terminal value is then exactly
  0, nothing is bootstrapped). Its early decisions may have been taken by the previous policy: PPO's ratio
  uses the log-probability each decision was taken with, and the values for GAE are recomputed by the current
  network before each update.
* **Reward.** The match result, +1 or -1, at the seat's last decision. Every closed hand also credits the seat's
  latest decision with ``shaping x`` the hand's point difference / target, and the match end takes the sum back
  (``- shaping x`` final score difference / target): potential-based shaping (Ng et al. 1999), whose return
  from any decision is the match result minus a function of the score when it was taken, so the best response
  is unchanged while each hand's worth reaches its decisions at once. One-hand presets (the research variants)
  have no match: the reward is the hand's point difference / target, the game's own utility.
* **Critic.** The advantages come from a training-only critic that also sees the cards the learner cannot
  (:class:`DealCritic`), which takes the luck of the deal out of them; the policy acts from its observation
  alone, and its own value head learns the same returns for exporters.
* **Update.** Clipped PPO with masked logits (CleanRL's ``ppo.py``): GAE with gamma 1, advantages normalised per
  minibatch, value and entropy terms, gradient clipping. TensorBoard tags are CleanRL's with the learner's
  decisions as the global step, plus ``charts/win_rate_vs_target``.

Reproducibility: the ``partitions`` are fixed and seeded from ``seed``; ``workers`` only decides how many
processes run them, and collection and update run on one torch thread everywhere. A decision budget therefore gives the
same learner for the same seed whatever ``workers`` is; a minutes budget stops at the first update boundary past
the time, so it is reproducible given the number of decisions it reached (recorded in the result).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import time
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import torch
from pydantic import ConfigDict, Field, model_validator

from agents.base import Agent, act_many, make_agent, observation_for
from agents.network import PolicyNet
from truco_env import _kernel as K
from truco_env.config import make_config
from truco_env.vector import EngineVectorEnv, VectorEnv

from .options import Options, PresetName
from .ppo import DealCritic, PositiveInt, advantages, ppo_epochs

logger = logging.getLogger(__name__)

#: The standard budget: learner decisions (see docs/strength.md for why decisions, not minutes).
STANDARD_DECISIONS = 600_000


class BRArgs(Options):
    """The best-response recipe. Only ``preset``, ``target``, the budget, ``seed`` and ``workers`` are set from the
    command line; the rest is the fixed recipe every target faces. Typed and checked on construction (a bad
    budget or size is a one-line ValueError naming it); frozen, since a recipe is a cache key."""

    model_config = ConfigDict(**{**Options.model_config, "frozen": True})

    preset: PresetName
    """Rules preset of the matches."""
    target: str
    """Agent spec of the frozen target (``heuristic``, ``ppo:argentine``, ``cfr:PATH``, ``onnx:PATH``, ...)."""
    decisions: PositiveInt | None = STANDARD_DECISIONS
    """Budget in learner decisions (the reproducible budget); training stops at the first update past it."""
    minutes: Annotated[float, Field(gt=0)] | None = None
    """Budget in wall-clock minutes instead (or as well: whichever comes first)."""
    seed: Annotated[int, Field(ge=0)] = 0
    """Seeds the deals, the learner's initial weights and sampling, and the target's draws."""
    workers: PositiveInt = 2
    """Processes that run the collection partitions (does not change the result)."""
    partitions: PositiveInt = 2
    """Independent collection partitions, each with its own tables and seed."""
    tables: PositiveInt = 128
    """Matches played at once per partition."""
    batch_decisions: PositiveInt = 16_384
    """Learner decisions from finished matches per update (over all partitions)."""
    hidden: tuple[PositiveInt, ...] = (256, 256)
    """Hidden layers of the learner's network (:class:`agents.network.PolicyNet`)."""
    features: str = "card_strength"
    """Input features added to the observation (card strengths under the vira)."""
    learning_rate: Annotated[float, Field(gt=0)] = 1e-3
    """Adam's initial step size, annealed linearly to 0 over the budget (decisions, or minutes if that ends first):
    a best response is read off the final weights, and a step size still large at the end leaves them noisy."""
    update_epochs: PositiveInt = 4
    """Passes over each batch."""
    minibatch_size: PositiveInt = 1024
    """Decisions per gradient step."""
    clip_coef: Annotated[float, Field(gt=0)] = 0.2
    """PPO's ratio clip."""
    ent_coef: Annotated[float, Field(ge=0)] = 0.01
    """Entropy bonus."""
    vf_coef: Annotated[float, Field(ge=0)] = 0.5
    """Weight of the value loss."""
    max_grad_norm: Annotated[float, Field(gt=0)] = 0.5
    """Gradient norm clip."""
    gae_lambda: Annotated[float, Field(ge=0, le=1)] = 0.95
    """GAE's lambda (gamma is 1: a match is short and its result is what counts)."""
    shaping: Annotated[float, Field(ge=0)] = 1.0
    """Weight of the potential-based hand-points shaping (match presets)."""

    @model_validator(mode="after")
    def _has_budget(self) -> BRArgs:
        if self.decisions is None and self.minutes is None:
            raise ValueError("give a budget: decisions or minutes")
        return self


# ------------------------------------------------------------------------------------------------------------
# collection


class Partition:
    """Tables of matches between the learner and the target that keep playing across updates (module docstring).

    ``collect(net, quota)`` steps them until at least ``quota`` learner decisions belong to finished matches, and
    returns those decisions, grouped by trajectory in playing order."""

    def __init__(self, args: BRArgs, index: int):
        config = make_config(args.preset)
        self.seed = int(np.random.SeedSequence([args.seed, index]).generate_state(1)[0])
        self.rng = np.random.default_rng(self.seed)
        self.generator = torch.Generator().manual_seed(self.seed)
        self.n = config.num_players
        self.scale = float(config.target_score)
        self.one_hand = bool(config.single_hand)
        self.shaping = args.shaping
        rows = args.tables
        probe = make_agent(args.target)
        self.wants = bool(probe.wants)
        env_seed = int(self.rng.integers(2 ** 62))
        if self.wants:
            self.env: Any = EngineVectorEnv(args.preset, num_envs=rows, seed=env_seed, reward="points")
        else:
            self.env = VectorEnv(args.preset, num_envs=rows, seed=env_seed, reward="points")
        self.learner_team = np.arange(rows) % 2
        self.learner_seat = (np.arange(self.n)[None, :] % 2) == self.learner_team[:, None]  # [rows, seats]
        if probe.batched:
            probe.seed(int(self.rng.integers(2 ** 31)))
            self.batched_target: Agent | None = probe
            self.targets: dict[tuple[int, int], Agent] = {}
        else:
            self.batched_target = None
            self.targets = {(i, s): make_agent(args.target) for i in range(rows) for s in range(self.n)
                            if not self.learner_seat[i, s]}
        self.obs, self.mask, self.actor = self.env.reset()
        for i in range(rows):
            self._start_match(i)
        # trajectory bookkeeping: ids per (row, seat), each decision's global id, rewards by global id
        self.traj_of = np.arange(rows * self.n, dtype=np.int64).reshape(rows, self.n)
        self.next_traj = rows * self.n
        self.finished = np.zeros(2 * rows * self.n, dtype=bool)  # by trajectory id: its match has ended
        self.count = np.zeros(2 * rows * self.n, dtype=np.int64)  # by trajectory id: its decisions so far
        self.last = np.full((rows, self.n), -1, dtype=np.int64)
        self.rewards = np.zeros(1 << 16, dtype=np.float32)
        self.next_gid = 0
        self.chunks: list[dict[str, np.ndarray]] = []
        self.ready = 0  # learner decisions of finished matches, not yet shipped
        self.results: list[float] = []  # learner's score per finished match (1 win, 0 loss, 0.5 draw)

    def _start_match(self, row: int) -> None:
        """Reseed and reset the target's agents of a table whose match begins (as tournaments do per match)."""
        for seat in range(self.n):
            agent = self.targets.get((row, seat))
            if agent is not None:
                agent.seed(int(self.rng.integers(2 ** 31)))
                agent.reset(seat)

    def collect(self, net: PolicyNet, quota: int) -> dict[str, Any]:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the same float arithmetic in every process
        try:
            while self.ready < quota:
                self._step(net)
            return self._ship()
        finally:
            torch.set_num_threads(threads)

    def _step(self, net: PolicyNet) -> None:
        obs, mask, actor = self.obs, self.mask, self.actor
        rows = np.arange(len(actor))
        mine = self.learner_team == actor % 2
        actions = np.zeros(len(actor), dtype=np.int64)
        learner = rows[mine]
        if learner.size:
            legal = torch.from_numpy(mask[learner].astype(bool))
            with torch.no_grad():
                logits, _ = net(torch.from_numpy(obs[learner]), legal)
                log_probs = torch.log_softmax(logits, -1)
                chosen = torch.multinomial(log_probs.exp(), 1, generator=self.generator).squeeze(-1)
            seats = actor[learner]
            gids = np.arange(self.next_gid, self.next_gid + learner.size)
            self.next_gid += learner.size
            self.chunks.append({"obs": obs[learner].copy(), "hidden": self.env.privileged(learner),
                                "masks": legal.numpy(), "actions": chosen.numpy(),
                                "logprobs": log_probs.gather(1, chosen[:, None]).squeeze(1).numpy(),
                                "traj": self.traj_of[learner, seats], "gid": gids})
            self.last[learner, seats] = gids
            self.count[self.traj_of[learner, seats]] += 1
            actions[learner] = chosen.numpy()
        target = rows[~mine]
        if target.size:
            if self.batched_target is not None:
                actions[target] = self.batched_target.act_batch(obs[target], mask[target])
            elif self.wants:  # extras from each table's engine state, one table at a time
                for i in target:
                    agent = self.targets[(int(i), int(actor[i]))]
                    actions[i] = agent.act(observation_for(agent, self.env.state(int(i)), int(actor[i])))
            else:  # a heuristic target's tables take one compiled call
                actions[target] = act_many([self.targets[(int(i), int(actor[i]))] for i in target], obs[target],
                                           mask[target])
        self.obs, self.mask, points, self.actor, done = self.env.step(actions)
        info = self.env.info
        if len(self.rewards) < self.next_gid:
            self.rewards = _grown(self.rewards, self.next_gid)
        closed = np.flatnonzero(info[:, K.INFO_CLOSED])
        if closed.size:
            weight = 1.0 if self.one_hand else self.shaping
            self._credit(closed, weight * points[closed] / self.scale)
        ended = np.flatnonzero(done)
        if ended.size:
            self._end_matches(ended, info)

    def _credit(self, rows: np.ndarray, value: np.ndarray) -> None:
        """Add ``value`` [rows, seats] to the latest decision of each learner seat of ``rows``."""
        for seat in range(self.n):
            pick = self.learner_seat[rows, seat] & (self.last[rows, seat] >= 0)
            np.add.at(self.rewards, self.last[rows[pick], seat], value[pick, seat])

    def _end_matches(self, rows: np.ndarray, info: np.ndarray) -> None:
        winner = info[rows, K.INFO_WINNER]
        team = self.learner_team[rows]
        score = np.where(winner < 0, 0.5, (winner == team).astype(float))
        if not self.one_hand:
            result = 2.0 * score - 1.0
            diff = (info[rows, K.INFO_SCORE] - info[rows, K.INFO_SCORE + 1]).astype(np.float32)
            own_diff = np.where(team == 0, diff, -diff)
            per_team = result - self.shaping * own_diff / self.scale
            value = np.repeat(per_team[:, None], self.n, axis=1)
            self._credit(rows, value)  # seats of the target's team are skipped by _credit
        self.results.extend(score.tolist())
        for seat in range(self.n):
            trajs = self.traj_of[rows[self.learner_seat[rows, seat]], seat]
            self.finished[trajs] = True
            self.ready += int(self.count[trajs].sum())
        self.traj_of[rows] = self.next_traj + np.arange(len(rows) * self.n).reshape(len(rows), self.n)
        self.next_traj += len(rows) * self.n
        self.last[rows] = -1
        if len(self.finished) < self.next_traj:
            self.finished = _grown(self.finished, self.next_traj)
            self.count = _grown(self.count, self.next_traj)
        for row in rows:
            self._start_match(int(row))

    def _ship(self) -> dict[str, Any]:
        """The finished matches' decisions, grouped by trajectory in playing order; the rest stays pending."""
        merged = {key: np.concatenate([c[key] for c in self.chunks]) for key in self.chunks[0]}
        done = self.finished[merged["traj"]]
        keep = {key: value[~done] for key, value in merged.items()}
        self.chunks = [keep] if len(keep["traj"]) else []
        out = {key: value[done] for key, value in merged.items()}
        order = np.argsort(out["traj"], kind="stable")  # global ids rise with time within a trajectory
        out = {key: value[order] for key, value in out.items()}
        traj = out["traj"]
        out["last"] = np.append(traj[1:] != traj[:-1], True) if len(traj) else np.zeros(0, dtype=bool)
        out["rewards"] = self.rewards[out.pop("gid")].copy()
        del out["traj"]
        out["results"] = np.asarray(self.results, dtype=np.float32)
        self.results = []
        self.ready = 0
        return out

    def close(self) -> None:
        self.env.close()


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` extended with zeros to at least ``size`` entries (doubling, so growth is amortised)."""
    return np.concatenate([array, np.zeros(max(len(array), size - len(array)), dtype=array.dtype)])


# ------------------------------------------------------------------------------------------------------------
# where partitions run


def _serve(conn: Any, args: BRArgs, indices: list[int]) -> None:
    """A worker process: builds its partitions once, then collects on request with the weights it is sent."""
    torch.set_num_threads(1)
    partitions = [Partition(args, i) for i in indices]
    net = new_network(args)
    try:
        while True:
            message = conn.recv()
            if message is None:
                break
            weights, quota = message
            net.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
            conn.send([p.collect(net, quota) for p in partitions])
    except (EOFError, BrokenPipeError):
        pass  # the parent is gone (it left at a second Ctrl-C): nothing to report to
    finally:
        for p in partitions:
            p.close()
        conn.close()


class Collectors:
    """The partitions, in this process (``workers=1``) or spread over worker processes; results come back in
    partition order either way."""

    def __init__(self, args: BRArgs):
        self.quota = -(-args.batch_decisions // args.partitions)
        self.workers = min(args.workers, args.partitions)
        self.local: list[Partition] = []
        self.procs: list[tuple[Any, Any]] = []
        if self.workers == 1:
            self.local = [Partition(args, i) for i in range(args.partitions)]
            return
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # workers leave Ctrl-C to the parent
        try:
            for w in range(self.workers):
                parent, child = ctx.Pipe()
                proc = ctx.Process(target=_serve, args=(child, args, list(range(args.partitions))[w::self.workers]),
                                   daemon=True)
                proc.start()
                child.close()
                self.procs.append((parent, proc))
        finally:
            signal.signal(signal.SIGINT, previous)
        self.partitions = args.partitions

    def collect(self, net: PolicyNet) -> list[dict[str, Any]]:
        if self.local:
            return [p.collect(net, self.quota) for p in self.local]
        weights = {k: v.detach().numpy() for k, v in net.state_dict().items()}
        try:
            for conn, _ in self.procs:
                conn.send((weights, self.quota))
            per_worker = [conn.recv() for conn, _ in self.procs]
        except (EOFError, OSError):
            raise RuntimeError("a best-response collection worker died (its error is printed above)") from None
        out: list[dict[str, Any]] = [{}] * self.partitions
        for w, parts in enumerate(per_worker):
            for k, part in enumerate(parts):
                out[w + k * self.workers] = part
        return out

    def close(self) -> None:
        for p in self.local:
            p.close()
        for conn, proc in self.procs:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()


# ------------------------------------------------------------------------------------------------------------
# the learner


def new_network(args: BRArgs) -> PolicyNet:
    return PolicyNet(hidden=args.hidden, features=args.features)


@dataclass
class Progress:
    """What the learner has done so far; ``curve`` has one row per update."""

    decisions: int = 0
    matches: int = 0
    seconds: float = 0.0
    updates: int = 0
    status: str = "running"  # "complete" or "interrupted"
    curve: list[dict[str, float]] = dataclasses.field(default_factory=list)


class _CtrlC:
    """The first Ctrl-C ends training at the end of the current update; a second one leaves at once."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        logger.warning("\nCtrl-C: stopping after this update (Ctrl-C again to leave at once)")

    def restore(self) -> None:
        signal.signal(signal.SIGINT, self._previous)


def train_best_response(args: BRArgs, logdir: str | None = None, progress: bool = True
                        ) -> tuple[PolicyNet, Progress]:
    """Train the learner against ``args.target`` until the budget is spent (or Ctrl-C); returns it and its
    progress (``status`` says whether the budget was reached)."""
    from torch.utils.tensorboard import SummaryWriter

    from .progress import progress as progress_bar

    torch.manual_seed(int(np.random.SeedSequence([args.seed, 1 << 20]).generate_state(1)[0]))
    net = new_network(args)
    critic = DealCritic(args.hidden)
    params = list(net.parameters()) + list(critic.parameters())
    optimizer = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)
    rng = np.random.default_rng(np.random.SeedSequence([args.seed, 1 << 21]))
    writer = SummaryWriter(logdir) if logdir else None
    state = Progress()
    started = time.perf_counter()
    deadline = None if args.minutes is None else started + 60.0 * args.minutes
    if args.decisions is not None:
        bar = progress_bar(args.decisions, "best response", "dec", progress, unit_scale=True)
    else:
        bar = progress_bar(round(60 * args.minutes), "best response", "s", progress)
    collectors = Collectors(args)
    ctrl_c = _CtrlC()
    threads = torch.get_num_threads()
    # One thread for the update too: a batch of this size gains little from a second one, and torch's threads
    # spin-wait when another process holds a core (an update ran 20x slower next to a busy process); the learner
    # is then also the same whether its partitions ran here or in worker processes.
    torch.set_num_threads(1)
    try:
        while True:
            if ctrl_c.requested:  # first: a Ctrl-C in the last update also stops the run before its evaluation
                state.status = "interrupted"
                break
            if args.decisions is not None and state.decisions >= args.decisions:
                state.status = "complete"
                break
            if deadline is not None and time.perf_counter() >= deadline:
                state.status = "complete"
                break
            tick = time.perf_counter()
            done_share = max(state.decisions / args.decisions if args.decisions is not None else 0.0,
                             (tick - started) / (60.0 * args.minutes) if args.minutes is not None else 0.0)
            optimizer.param_groups[0]["lr"] = args.learning_rate * max(0.0, 1.0 - done_share)
            parts = collectors.collect(net)
            batch = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
            results = batch.pop("results")
            b_obs = torch.from_numpy(batch["obs"])
            b_hidden = torch.from_numpy(batch["hidden"])
            b_masks = torch.from_numpy(batch["masks"])
            b_actions = torch.from_numpy(batch["actions"])
            b_logprobs = torch.from_numpy(batch["logprobs"])
            with torch.no_grad():  # the deal-aware critic's values, recomputed by the current weights
                values = torch.cat([critic(b_obs[i:i + 8192], b_hidden[i:i + 8192])
                                    for i in range(0, len(b_obs), 8192)]).numpy()
            adv = advantages(batch["rewards"], values, batch["last"], args.gae_lambda)
            b_advantages = torch.from_numpy(adv)
            b_returns = torch.from_numpy(adv + values)
            size = len(b_actions)

            # --- clipped PPO epochs ---------------------------------------------------------------------------

            batch = {"obs": b_obs, "hidden": b_hidden, "masks": b_masks, "actions": b_actions,
                     "logprobs": b_logprobs, "advantages": b_advantages, "returns": b_returns}
            stats, clipfracs = ppo_epochs(batch, lambda mb: net(mb["obs"], mb["masks"]),
                                          lambda mb: critic(mb["obs"], mb["hidden"]), optimizer, params, rng, args)

            # --- bookkeeping and CleanRL's TensorBoard tags ------------------------------------------------------
            state.decisions += size
            state.matches += len(results)
            state.updates += 1
            state.seconds = time.perf_counter() - started
            wins = float(results.sum())
            state.curve.append({"update": state.updates, "decisions": state.decisions, "seconds": state.seconds,
                                "matches": len(results), "score": wins})
            var_y = float(np.var(b_returns.numpy()))
            explained = float("nan") if var_y == 0 else 1 - float(np.var(b_returns.numpy() - values)) / var_y
            if writer is not None:
                step = state.decisions
                writer.add_scalar("charts/win_rate_vs_target", wins / max(1, len(results)), step)
                writer.add_scalar("charts/matches", len(results), step)
                writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], step)
                writer.add_scalar("charts/SPS", size / max(time.perf_counter() - tick, 1e-9), step)
                writer.add_scalar("losses/value_loss", stats["value_loss"].item(), step)
                writer.add_scalar("losses/policy_loss", stats["policy_loss"].item(), step)
                writer.add_scalar("losses/entropy", stats["entropy"].item(), step)
                writer.add_scalar("losses/old_approx_kl", stats["old_approx_kl"].item(), step)
                writer.add_scalar("losses/approx_kl", stats["approx_kl"].item(), step)
                writer.add_scalar("losses/clipfrac", float(np.mean(clipfracs)), step)
                writer.add_scalar("losses/explained_variance", explained, step)
            if args.decisions is not None:
                bar.update(min(size, args.decisions - bar.n))
            else:
                bar.update(max(0, min(round(state.seconds), bar.total) - bar.n))
            bar.set_postfix(win=f"{wins / max(1, len(results)):.2f}", sps=f"{state.decisions / state.seconds:.0f}")
    except KeyboardInterrupt:  # a second Ctrl-C: leave at once; the caller writes nothing of this run
        state.status = "interrupted"
        raise
    finally:
        torch.set_num_threads(threads)
        ctrl_c.restore()
        bar.close()
        collectors.close()
        if writer is not None:
            writer.close()
    state.seconds = time.perf_counter() - started
    return net, state


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))
