"""PPO by population self-play, read top to bottom (in the manner of CleanRL's ``ppo.py``).

``truco train ppo --config configs/ppo/argentine.yaml`` trains one network for one preset. Each update:

1. **Collect** (:mod:`training.learn.selfplay`). ``partitions`` independent sets of ``tables`` matches are played at
   once on the compiled :class:`truco_env.vector.VectorEnv`. Each match draws its opponent from the league: the
   learner itself (``self_play``: both teams are the learner), a frozen past snapshot (``snapshots``: sampled by
   how often it still beats the learner), or a scripted agent (``scripted``, e.g. a small share of the
   heuristic). A table whose match ends starts another until the partition holds its share of
   ``batch_decisions``; then it idles, so an update ends with no match half played.
2. **Advantages.** Each learner seat of each match is one trajectory: its decisions in order, the match result
   (+1/-1) at its last one, and each closed hand's point difference (over the target score, times ``shaping``) at
   its latest decision, taken back at the match end: potential-based shaping, which leaves the best play
   unchanged while each hand's worth reaches its decisions at once. GAE (gamma 1) uses a training-only critic that
   also sees the cards the learner cannot (:class:`DealCritic`): the luck of the deal leaves the advantages, while
   the policy still acts from its observation.
3. **Update.** Clipped PPO epochs with masked logits, advantages normalised per minibatch, value and entropy
   terms, gradient clipping, the learning rate annealed linearly over ``total_decisions``. With ``magnet_coef``,
   a KL term holds the policy near a *magnet* (magnetic mirror descent, Sokota et al. 2023): the policy the run
   starts from (after the warm start), replaced by the current one every ``magnet_every`` updates as in R-NaD
   (Perolat et al. 2022), against the drift of long self-play (pilot K: 20 M decisions of plain self-play ended
   6 points weaker against random and 9 against the heuristic than 5 M).
4. **League, logging, evaluation, checkpoint.** Every ``snapshot_every`` updates the current weights join the
   league. CleanRL's TensorBoard tags are written with the learner's decisions as the global step. Every
   ``eval_every`` updates the policy plays duplicate matches against ``eval_opponents`` (logged, never used to
   pick weights: the shipped policy is the last one). Every ``checkpoint_every`` updates an atomic safetensors
   checkpoint (never a pickle) is written; ``--resume`` continues from it exactly as if never stopped.
   ``policy.safetensors`` is written once, when the budget is spent: a run stopped by Ctrl-C leaves its checkpoint
   and no policy, so a policy file always comes from a finished run. One run at a time holds a run dir.

What the learner is never told: whom it faces. There is no opponent input, no per-opponent expert and no reward
or loss term that depends on the opponent; a warm start by imitation of the heuristic
(``imitation_decisions``) is part of the same run, not a separate stage.

Reproducibility: the partitions are seeded from ``(seed, update, partition)`` and collect on one torch thread,
so ``backend`` (``local``, ``processes``, ``ray``) changes the speed, never the weights. The update runs in this
process on torch's threads.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
import shutil
import signal
import subprocess
import time
from collections import deque
from typing import Annotated, Any, Literal

import numpy as np
import torch
from pydantic import Field, model_validator
from torch import nn

from agents.base import Agent, check_preset, make_agent
from agents.hidden_seeds import hidden_seed
from agents.network import (
    STRENGTH_LEVELS,
    CardStrength,
    PolicyFileError,
    PolicyNet,
    Ragged,
    SparseRows,
    linear,
    load_tensors,
)
from agents.seats import TableSeats
from training.atomic import TEMP_PREFIX, atomic_save_tensors
from training.learn.selfplay import Backend, PartitionPlan, stored_rows
from training.measure.evaluate import plays_program
from training.options import DeviceName, Options, PresetName
from training.outputs import hold
from training.workers import cpu_seconds
from truco_env.actions import num_actions
from truco_env.cards import NUM_CARDS
from truco_env.config import make_config
from truco_env.encoding import (
    OBSERVATION_SIZE,
    OBSERVATION_VERSION,
    PRIVILEGED_SIZE,
    observation_size,
)
from truco_env.limits import clip
from truco_env.vector import VectorEnv

logger = logging.getLogger(__name__)
CHECKPOINT_FORMAT = "truco-rl-ppo-checkpoint-v2"
PositiveInt = Annotated[int, Field(ge=1)]


#: Most tables per partition a league opponent that runs an outside program (``exec:``) may sit at: one program
#: each, so 256 tables of two partitions would start some 500 programs.
PROGRAM_TABLES = 8


class PPOArgs(Options):
    """Every option of a run; ``configs/ppo/<preset>.yaml`` sets a handful, ``--set key=value`` overrides any."""

    preset: PresetName = "argentine"
    """Rules preset to train on."""
    run_dir: str = "runs/ppo"
    """Where TensorBoard logs, the checkpoint and the policy go."""
    seed: Annotated[int, Field(ge=0)] = 1
    """Seeds the weights, the matches and every draw: the same seed gives the same run."""
    total_decisions: PositiveInt = 2_000_000
    """Training budget in learner decisions; the learning rate anneals to 0 over it."""
    batch_decisions: PositiveInt = 16_384
    """Learner decisions per update (whole matches, so slightly more)."""
    partitions: PositiveInt = 2
    """Independent collection partitions per update; the weights depend on this number, not on the backend."""
    tables: PositiveInt = 256
    """Matches played at once per partition."""
    backend: Literal["local", "processes", "ray"] = "local"
    """Where the partitions run: this process, one worker process per partition, or Ray actors."""
    device: DeviceName = "auto"
    """Where the update runs: ``auto`` (the GPU when torch sees one, else the CPU), ``cpu``, ``cuda``, ``cuda:N``.
    Collection stays on the CPU (one row at a time per table, where a GPU's calls cost more than they give). Like
    the backend, not part of the recipe: a checkpoint resumes on another device."""
    hidden: tuple[PositiveInt, ...] = (128, 128)
    """Hidden layer sizes of the policy network and of the critic."""
    tally_film: bool = False
    """A small network of the match tally scales and shifts the trunk's features (``agents.network.PolicyNet``):
    a pathway for reading the opponent's style so far. It won head to head on argentine and lost on paulista,
    so a config opts in."""
    learning_rate: Annotated[float, Field(gt=0)] = 3e-4
    """Adam's initial step size, decayed linearly to 0 over ``total_decisions``."""
    update_epochs: PositiveInt = 2
    """Passes over each batch."""
    minibatch_size: PositiveInt = 2048
    """Decisions per gradient step."""
    clip_coef: Annotated[float, Field(gt=0)] = 0.2
    """PPO's ratio clip."""
    ent_coef: Annotated[float, Field(ge=0)] = 0.03
    """Entropy bonus. Self-play needs it larger than a single-opponent learner: a near-deterministic policy is
    what a best response exploits."""
    vf_coef: Annotated[float, Field(ge=0)] = 0.5
    """Weight of the value losses."""
    max_grad_norm: Annotated[float, Field(gt=0)] = 0.5
    """Gradient norm clip."""
    magnet_coef: Annotated[float, Field(ge=0)] = 0.0
    """Weight of KL(policy || magnet) in the loss (magnetic mirror descent): the update is pulled toward the
    magnet policy, so self-play cannot drift far from it in a direction only its own league rewards. 0: off."""
    magnet: str = ""
    """The magnet as a fixed agent instead of the policy itself: a shipped blueprint such as ``cfr:argentine``,
    whose mixed strategy at each learner decision is stored with it (with ``training.learn.selfplay.MAGNET_FLOOR`` of
    uniform, so that the KL stays finite). Why: a self-refreshed magnet followed the learner into the same
    exploitable style (pilot KM: 62% ABR, against 61% without it), while a blueprint is a fixed point that is hard to exploit.
    Empty: the policy the run starts from."""
    magnet_every: Annotated[int, Field(ge=0)] = 0
    """Updates between replacing the magnet by the current policy (R-NaD's outer loop: each phase regularises
    toward the last phase's result); 0: the magnet stays the policy the run started from."""
    gae_lambda: Annotated[float, Field(ge=0, le=1)] = 0.95
    """GAE's lambda (gamma is 1: a match is short and its result is what counts)."""
    shaping: Annotated[float, Field(ge=0)] = 1.0
    """Weight of the potential-based shaping by hand points (0: the match result alone)."""
    self_play: Annotated[float, Field(ge=0)] = 0.5
    """Share of matches the learner plays against itself (both teams learn)."""
    snapshots: Annotated[float, Field(ge=0)] = 0.5
    """Share of matches against frozen past snapshots (self-play until the first one exists)."""
    scripted: dict[str, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)
    """Share of matches against fixed agents, by agent spec, e.g. ``{heuristic: 0.1}`` (a best response's league
    is its target alone: ``training/learn/best_response.py``)."""
    snapshot_every: PositiveInt = 10
    """Updates between snapshots joining the league."""
    max_snapshots: PositiveInt = 20
    """Snapshots kept (the first, the weakest anchor, and the most recent)."""
    imitation_decisions: Annotated[int, Field(ge=0)] = 0
    """Warm start: decisions of ``imitation_teacher`` playing itself that the network imitates before the first
    update."""
    imitation_teacher: str = "heuristic"
    """The agent spec the warm start imitates, playing itself: the heuristic, or a self-play blueprint such as
    ``cfr:paulista`` (never an opponent the policy is judged against by design: a blueprint knows no opponent)."""
    eval_every: Annotated[int, Field(ge=0)] = 25
    """Updates between evaluations (0: only at the end)."""
    eval_matches: PositiveInt = 100
    """Duplicate matches per evaluation opponent (even)."""
    eval_opponents: tuple[str, ...] = ("random", "heuristic")
    """Agent specs the policy is evaluated against (logged only; never a training opponent by this option)."""
    checkpoint_every: PositiveInt = 10
    """Updates between checkpoints."""

    @property
    def shapes(self) -> dict[str, int]:
        """The network's input and output widths on this preset: the observation and the action space, the señas
        block and signals included where the preset has them."""
        config = make_config(self.preset)
        return {"obs_size": observation_size(config), "num_actions": num_actions(config)}

    @property
    def features(self) -> str:
        """The network's input features: every policy this trainer makes also reads each visible card's trick
        strength under the vira (``agents.network.FEATURES``; ``none`` remains only to read older files)."""
        return "card_strength"

    @model_validator(mode="after")
    def _consistent(self) -> PPOArgs:
        from agents.network import _expected_shapes

        # the limits a policy file is read within (truco_env/limits.py): a bigger network would train for hours
        # into a policy that never loads, and one YAML line such as hidden: [100000, 100000] asked for 40 GB
        _expected_shapes("option 'hidden'", {**self.shapes,
                                             "hidden": list(self.hidden), "features": self.features,
                                             "tally_film": self.tally_film})
        if self.self_play + self.snapshots + sum(self.scripted.values()) <= 0:
            raise ValueError("self_play, snapshots and scripted shares are all 0: the learner has no opponent")
        # league opponents, the evaluation opponents and the warm start's teacher
        for spec in (*self.scripted, *self.eval_opponents, self.imitation_teacher):
            # loaded now: a broken file or another preset's policy ended the run at its first evaluation, and a
            # league opponent made for another preset played this one unnoticed (truco eval refuses it)
            agent = make_agent(spec)
            check_preset(agent, self.preset)
            if spec in self.scripted and agent.starts_program and self.tables > PROGRAM_TABLES:
                raise ValueError(f"league opponent {clip(repr(spec))} starts a program for each table it plays: "
                                 f"set tables to at most {PROGRAM_TABLES} (got {self.tables})")
        if self.magnet:
            agent = make_agent(self.magnet)
            check_preset(agent, self.preset)
            if not callable(getattr(agent, "probabilities", None)) or agent.wants:
                raise ValueError(f"magnet {clip(repr(self.magnet))} gives no action probabilities from the "
                                 "observation alone; a fixed magnet is a CFR blueprint (cfr:<preset>)")
            if self.magnet_coef <= 0 or self.magnet_every:
                raise ValueError("a fixed magnet needs magnet_coef > 0 and magnet_every = 0 (it is never replaced)")
        if self.eval_matches % 2:
            raise ValueError(f"eval_matches should be even (each deal is played twice), got {self.eval_matches}")
        return self


# ------------------------------------------------------------------------------------------------------------
# networks and losses


class DealCritic(nn.Module):
    """A training-only value network that also sees the cards the learner cannot (``encode_privileged``: the other
    seats' unplayed cards), with their trick strengths under the vira.

    Why: most of a hand's outcome is the deal. A value that knows the deal takes that luck out of each decision's
    advantage, so the same number of decisions teaches the policy much more (on argentine-mini against CFR+
    after 10 iterations, 300,000 decisions without it recovered under a tenth of the exact best response's
    value). The policy still reads only its own observation, so it stays a legal player; the critic is never
    saved with it."""

    def __init__(self, hidden: tuple[int, ...], obs_size: int = OBSERVATION_SIZE):
        super().__init__()
        self.strength = CardStrength()
        width = obs_size + PRIVILEGED_SIZE + self.strength.size + (PRIVILEGED_SIZE // NUM_CARDS) * STRENGTH_LEVELS
        layers: list[nn.Module] = []
        for size in hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.mlp = nn.Sequential(*layers, nn.Linear(width, 1))

    def forward(self, obs: torch.Tensor, hidden_cards: torch.Tensor) -> torch.Tensor:
        return self.from_inputs(self.inputs(obs, hidden_cards))

    def inputs(self, obs: torch.Tensor, hidden_cards: torch.Tensor) -> torch.Tensor:
        """What the first layer reads (no weights involved: computed once per batch)."""
        cards = hidden_cards.reshape(len(hidden_cards), -1, NUM_CARDS)
        return torch.cat([obs, hidden_cards, self.strength(obs), self.strength.levels(obs, cards)], 1)

    def from_inputs(self, x: torch.Tensor | SparseRows | Ragged) -> torch.Tensor:
        return self.mlp[1:](linear(self.mlp[0], x)).squeeze(-1)


def masked_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of a masked categorical (the -inf entries contribute 0, not NaN)."""
    log_probs = torch.log_softmax(logits, dim=-1)
    probs = log_probs.exp()
    return -(probs * torch.where(torch.isfinite(log_probs), log_probs, torch.zeros_like(log_probs))).sum(-1)


def masked_kl(logits: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """KL(p || q) per row of two masked categoricals given by their logits (the same -inf entries: they
    contribute 0)."""
    log_p = torch.log_softmax(logits, dim=-1)
    log_q = torch.log_softmax(reference, dim=-1)
    legal = torch.isfinite(log_p) & torch.isfinite(log_q)
    zero = torch.zeros_like(log_p)
    # the -inf entries are replaced before any product: where() alone would still pass their NaN gradients back
    log_p, log_q = torch.where(legal, log_p, zero), torch.where(legal, log_q, zero)
    return torch.where(legal, log_p.exp() * (log_p - log_q), zero).sum(-1)


def clipped_surrogate(logits: torch.Tensor, actions: torch.Tensor, old_logprobs: torch.Tensor,
                      advantages: torch.Tensor, clip: float) -> tuple[torch.Tensor, dict[str, Any]]:
    """PPO's clipped policy loss over one minibatch (advantages standardised within it), and CleanRL's
    diagnostics (``old_approx_kl``, ``approx_kl``, ``clipfrac``)."""
    logprob = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
    log_ratio = logprob - old_logprobs
    ratio = log_ratio.exp()
    with torch.no_grad():
        stats = {"old_approx_kl": (-log_ratio).mean(), "approx_kl": ((ratio - 1) - log_ratio).mean(),
                 "clipfrac": ((ratio - 1.0).abs() > clip).float().mean().item()}
    if len(advantages) > 1:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    loss = torch.max(-advantages * ratio, -advantages * ratio.clamp(1 - clip, 1 + clip)).mean()
    return loss, stats


def ppo_loss(logits: torch.Tensor, values: torch.Tensor, critic_values: torch.Tensor, actions: torch.Tensor,
             old_logprobs: torch.Tensor, advantages: torch.Tensor, returns: torch.Tensor, args: Any,
             magnet_logits: torch.Tensor | None = None) -> tuple[torch.Tensor, dict[str, Any]]:
    """One minibatch's loss: the clipped surrogate, minus the entropy bonus, plus the value losses of the critic
    and of the policy's own value head (kept for exporters), both on the same returns, plus ``magnet_coef`` times
    the KL to the magnet's logits when given; and the diagnostics. ``args`` gives ``clip_coef``, ``ent_coef``,
    ``vf_coef`` (the best-response learner shares it) and, with a magnet, ``magnet_coef``."""
    pg_loss, stats = clipped_surrogate(logits, actions, old_logprobs, advantages, args.clip_coef)
    v_loss = 0.5 * ((critic_values - returns) ** 2).mean() + 0.5 * ((values - returns) ** 2).mean()
    entropy = masked_entropy(logits).mean()
    loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
    stats = {**stats, "policy_loss": pg_loss, "value_loss": v_loss, "entropy": entropy}
    if magnet_logits is not None:
        kl = masked_kl(logits, magnet_logits).mean()
        loss = loss + args.magnet_coef * kl
        stats["magnet_kl"] = kl
    return loss, stats


def ppo_epochs(batch: dict[str, Any], policy_of: Any, value_of: Any, optimizer: torch.optim.Optimizer,
               params: list[torch.Tensor], rng: np.random.Generator, args: Any, magnet_of: Any = None
               ) -> tuple[dict[str, Any], list[float]]:
    """``update_epochs`` passes over ``batch`` (``actions``, ``logprobs``, ``advantages``, ``returns`` and the
    networks' inputs, all sliced by rows) in shuffled minibatches, one clipped gradient step each.
    ``policy_of(minibatch)`` gives the logits and the policy's values, ``value_of(minibatch)`` the critic's and
    ``magnet_of(minibatch)``, when given, the magnet's logits. Returns the last minibatch's diagnostics and every
    minibatch's clip fraction."""
    size, device = len(batch["actions"]), batch["actions"].device
    order = np.arange(size)
    clipfracs = []
    for _epoch in range(args.update_epochs):
        rng.shuffle(order)
        for start in range(0, size, args.minibatch_size):
            mb = torch.from_numpy(order[start:start + args.minibatch_size]).to(device)
            part = {key: value[mb] for key, value in batch.items()}
            logits, values = policy_of(part)
            if magnet_of is not None:
                with torch.no_grad():
                    magnet_logits = magnet_of(part)
            else:
                magnet_logits = None
            loss, stats = ppo_loss(logits, values, value_of(part), part["actions"], part["logprobs"],
                                   part["advantages"], part["returns"], args, magnet_logits)
            clipfracs.append(stats["clipfrac"])
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(params, args.max_grad_norm)
            optimizer.step()
    return stats, clipfracs


def trajectory_advantages(traj: np.ndarray, rewards: np.ndarray, values: np.ndarray, lam: float) -> np.ndarray:
    """:func:`advantages` of decisions in playing order, ``traj`` naming each one's trajectory."""
    order = np.argsort(traj, kind="stable")  # decisions of a trajectory keep their playing order
    sorted_traj = traj[order]
    last = np.append(sorted_traj[1:] != sorted_traj[:-1], True)
    out = np.empty(len(traj), dtype=np.float32)
    out[order] = advantages(rewards[order], values[order], last, lam)
    return out


def advantages(rewards: np.ndarray, values: np.ndarray, last: np.ndarray, lam: float) -> np.ndarray:
    """GAE (gamma 1) over decisions grouped by trajectory; ``last`` marks each trajectory's final decision, after
    which the value is 0 (its match is over)."""
    adv = np.zeros(len(rewards), dtype=np.float32)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        if last[t]:
            next_value, running = 0.0, 0.0
        else:
            next_value = values[t + 1]
        running = rewards[t] + next_value - values[t] + lam * running
        adv[t] = running
    return adv


# ------------------------------------------------------------------------------------------------------------
# the league


@dataclasses.dataclass
class League:
    """Frozen past snapshots (weights by id) and the learner's recent scores against every opponent."""

    weights: dict[int, dict[str, np.ndarray]] = dataclasses.field(default_factory=dict)
    scores: dict[str, deque] = dataclasses.field(default_factory=dict)  # opponent name -> recent learner scores
    next_id: int = 0

    def add(self, net: PolicyNet, keep: int) -> None:
        self.weights[self.next_id] = {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}
        self.next_id += 1
        if len(self.weights) > keep:  # keep the first (the weakest anchor) and the most recent
            ids = sorted(self.weights)
            del self.weights[ids[1]]
            self.scores.pop(f"snapshot:{ids[1]}", None)

    def win_rate(self, name: str) -> float:
        recent = self.scores.get(name)
        return float(np.mean(recent)) if recent else 0.5

    def snapshot_win_rate(self, names: tuple[str, ...]) -> float:
        """The learner's mean recent score against the snapshots among ``names`` that it has finished a match
        against; NaN when there is none (before the first snapshot, with no snapshot share, or while the matches
        against new snapshots are still being played): the 0.5 that :meth:`win_rate` assumes to sample
        opponents is no measurement."""
        measured = [self.win_rate(n) for n in names if n.startswith("snapshot:") and self.scores.get(n)]
        return float(np.mean(measured)) if measured else float("nan")

    def opponents(self, args: PPOArgs) -> tuple[tuple[str, ...], tuple[float, ...]]:
        """Who a new match may face, and how likely: snapshots the learner beats less often come more often
        (prioritised fictitious self-play's ``(1 - win rate)^2``)."""
        names, shares = ["self"], [args.self_play if self.weights else args.self_play + args.snapshots]
        if self.weights:
            snaps = [f"snapshot:{sid}" for sid in sorted(self.weights)]
            hard = np.array([(1.0 - self.win_rate(s)) ** 2 + 0.05 for s in snaps])
            names += snaps
            shares += list(args.snapshots * hard / hard.sum())
        for spec, share in sorted(args.scripted.items()):
            names.append(spec)
            shares.append(share)
        total = float(sum(shares))
        return tuple(names), tuple(s / total for s in shares)

    def record(self, names: tuple[str, ...], results: np.ndarray) -> None:
        for k, score in results:
            self.scores.setdefault(names[int(k)], deque(maxlen=200)).append(float(score))


# ------------------------------------------------------------------------------------------------------------
# warm start by imitation


def imitation_data(args: PPOArgs) -> dict[str, torch.Tensor]:
    """``imitation_decisions`` decisions of the teacher playing itself: observations, masks, its actions."""
    rng = np.random.default_rng(np.random.SeedSequence([args.seed, 1 << 22]))
    env = VectorEnv(args.preset, num_envs=args.tables, seed=int(rng.integers(2 ** 62)), reward="points")

    def teacher(table: int, seat: int) -> Agent:
        agent = make_agent(args.imitation_teacher)
        agent.seed(int(rng.integers(2 ** 31)))
        return agent

    seats = TableSeats(teacher)
    tables = np.arange(env.num_envs)
    obs, mask, actor = env.reset()
    data: dict[str, list[np.ndarray]] = {"obs": [], "masks": [], "actions": []}
    count = 0
    try:
        while count < args.imitation_decisions:
            actions = seats.act(tables, obs, mask, actor)  # the heuristic: one compiled call
            data["obs"].append(obs.copy())
            data["masks"].append(mask.astype(bool))
            data["actions"].append(actions)
            count += env.num_envs
            obs, mask, _, actor, done = env.step(actions)
            seats.matches_ended(np.flatnonzero(done))
    finally:
        env.close()
    return {key: torch.from_numpy(np.concatenate(value)[:args.imitation_decisions]) for key, value in data.items()}


#: The imitation recipe: small minibatches and many passes. The heuristic is stochastic (it bluffs), so no
#: network takes its action every time; on 100,000 Argentine decisions these settings reach about 86% on
#: held-out heuristic decisions, where four passes at the PPO minibatch size reached 61%.
IMITATION_EPOCHS, IMITATION_MINIBATCH, IMITATION_LR = 20, 512, 1e-3


def imitate(net: PolicyNet, data: dict[str, torch.Tensor], seed: int) -> float:
    """Cross-entropy on the heuristic's choices; returns the share of decisions where the net's top action is
    the heuristic's."""
    device = next(net.parameters()).device
    data = {key: value.to(device) for key, value in data.items()}
    optimizer = torch.optim.Adam(net.parameters(), lr=IMITATION_LR, eps=1e-5)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1 << 23]))
    order = np.arange(len(data["actions"]))
    for _ in range(IMITATION_EPOCHS):
        rng.shuffle(order)
        for start in range(0, len(order), IMITATION_MINIBATCH):
            mb = torch.from_numpy(order[start:start + IMITATION_MINIBATCH]).to(device)
            logits, _ = net(data["obs"][mb], data["masks"][mb])
            loss = nn.functional.cross_entropy(logits, data["actions"][mb])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        logits, _ = net(data["obs"], data["masks"])
    return float((logits.argmax(1) == data["actions"]).float().mean())


# ------------------------------------------------------------------------------------------------------------
# files: the policy and the checkpoint


def config_hash(args: PPOArgs) -> str:
    """Provenance of a policy: a hash of every option except where its files went and how it was collected."""
    options = args.model_dump(exclude={"run_dir", "backend", "device"})
    return hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:16]


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], check=False, capture_output=True, text=True, timeout=5,
                             cwd=os.path.dirname(os.path.abspath(__file__)))
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def save_policy(net: PolicyNet, path: str, **metadata: Any) -> None:
    """Write a policy file (weights + JSON metadata: architecture, observation layout, presets, ...) that
    :func:`agents.network.load_policy` reads."""
    from agents.network import FORMAT, FORMAT_VERSION

    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "architecture": net.architecture(),
            "observation_version": OBSERVATION_VERSION, "action_names_family_independent": True, **metadata}
    atomic_save_tensors(net.state_dict(), meta, path)


@dataclasses.dataclass
class RunState:
    """How far a run is; ``curve`` has a row per update: ``[decisions, seconds, matches, score]``, the matches
    finished against fixed opponents and snapshots in that update and the learner's score in them (1 a win, 0.5
    a draw), so that a best response can plot its win rate against its target as it trains."""

    update: int = 0
    decisions: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's and its workers', summed over every part of a resumed run
    matches: int = 0
    curve: list[list[float]] = dataclasses.field(default_factory=list)
    stopped: bool = False  # Ctrl-C came during the last update (which may have spent the budget); not saved


def save_checkpoint(path: str, args: PPOArgs, net: PolicyNet, critic: DealCritic, optimizer: torch.optim.Optimizer,
                    league: League, progress: RunState, rng: np.random.Generator,
                    magnet_net: PolicyNet | None = None) -> None:
    tensors = {f"net.{k}": v for k, v in net.state_dict().items()}
    if magnet_net is not None:
        tensors.update({f"magnet.{k}": v for k, v in magnet_net.state_dict().items()})
    tensors.update({f"critic.{k}": v for k, v in critic.state_dict().items()})
    opt = optimizer.state_dict()
    for i, state in opt["state"].items():
        tensors.update({f"opt.{i}.{k}": v.reshape(-1) if v.dim() == 0 else v for k, v in state.items()})
    for sid, weights in league.weights.items():
        tensors.update({f"snap.{sid}.{k}": torch.from_numpy(v) for k, v in weights.items()})
    meta = {"format": CHECKPOINT_FORMAT, "args": args.model_dump(mode="json"),
            "progress": {k: v for k, v in dataclasses.asdict(progress).items() if k != "stopped"},
            "param_groups": opt["param_groups"],
            "league": {"next_id": league.next_id, "ids": sorted(league.weights),
                       "scores": {k: list(v) for k, v in league.scores.items()}},
            "rng": rng.bit_generator.state}
    atomic_save_tensors(tensors, meta, path)


#: Options this trainer no longer has, with the one behaviour left: a checkpoint made with that value resumes
#: (the option is dropped from its record); one made with another value is refused, since it cannot go on alike.
RETIRED_OPTIONS = {"anneal_lr": True, "play": "greedy", "features": "card_strength"}


def retired_options_dropped(recorded: dict[str, Any]) -> dict[str, Any]:
    """``recorded`` options without the retired ones; ValueError when one held a value the trainer cannot keep."""
    if not isinstance(recorded, dict):
        raise TypeError("the recorded options are not a mapping")
    for name, kept in RETIRED_OPTIONS.items():
        if name in recorded and recorded[name] != kept:
            raise ValueError(f"it was trained with {name}={clip(repr(recorded[name]))}, an option this truco-rl no "
                             f"longer has (it always behaves as {name}={kept!r})")
    return {k: v for k, v in recorded.items() if k not in RETIRED_OPTIONS}


def _recorded_options(path: str, meta: dict[str, Any]) -> PPOArgs:
    try:
        return PPOArgs(**retired_options_dropped(meta["args"]))
    except (KeyError, TypeError, ValueError) as exc:  # a checkpoint from a stranger, or edited by hand
        raise ValueError(f"{path}: the checkpoint's recorded options are unusable "
                         f"({clip(str(exc).splitlines()[0], 120)})") from None


def _changed_option(saved: PPOArgs, args: PPOArgs) -> str | None:
    """The first option of ``args`` a run of ``saved`` did not have (where it runs aside), or None."""
    for name in PPOArgs.model_fields:
        if name not in ("backend", "run_dir", "device") and getattr(saved, name) != getattr(args, name):
            return name
    return None


def resumable(args: PPOArgs) -> bool:
    """Whether ``args.run_dir`` holds a checkpoint of a run of ``args``, which ``resume=True`` continues exactly
    (False for no checkpoint, another run's or an unreadable one)."""
    path = os.path.join(args.run_dir, "checkpoint.safetensors")
    if not os.path.isfile(path):
        return False
    try:
        _, meta = load_tensors(path, CHECKPOINT_FORMAT)
        return _changed_option(_recorded_options(path, meta), args) is None
    except (PolicyFileError, ValueError, OSError):
        return False


def load_checkpoint(path: str, args: PPOArgs, net: PolicyNet, critic: DealCritic, optimizer: torch.optim.Optimizer,
                    league: League, rng: np.random.Generator, magnet_net: PolicyNet | None = None) -> RunState:
    tensors, meta = load_tensors(path, CHECKPOINT_FORMAT)
    saved = _recorded_options(path, meta)
    changed = _changed_option(saved, args)
    if changed is not None:
        raise ValueError(f"--resume: option {changed!r} is {getattr(args, changed)!r} but the checkpoint was trained "
                         f"with {getattr(saved, changed)!r}; resume with the same options")
    try:
        return _restore(tensors, meta, net, critic, optimizer, league, rng, magnet_net)
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError) as exc:
        raise ValueError(f"{path}: not a usable checkpoint of this run ({type(exc).__name__}: "
                         f"{clip(str(exc).splitlines()[0] if str(exc) else '', 120)})") from None


def _restore(tensors: dict[str, torch.Tensor], meta: dict[str, Any], net: PolicyNet, critic: DealCritic,
             optimizer: torch.optim.Optimizer, league: League, rng: np.random.Generator,
             magnet_net: PolicyNet | None = None) -> RunState:
    """Put a checkpoint's state into the run's objects; any malformed part raises (reported in one line above)."""

    def part(prefix: str) -> dict[str, torch.Tensor]:
        return {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}

    net.load_state_dict(part("net."))
    critic.load_state_dict(part("critic."))
    if magnet_net is not None:
        magnet_net.load_state_dict(part("magnet."))
    params = [p for group in optimizer.param_groups for p in group["params"]]
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in part("opt.").items():
        index, name = key.split(".", 1)
        param = params[int(index)] if index.isdigit() and int(index) < len(params) else None
        if name == "step":  # Adam's count of steps: a scalar >= 0
            fits = value.numel() == 1 and value.item() >= 0
            value = value.reshape(())
        else:  # its moments: the parameter's shape, the second one >= 0 (its square root is taken)
            fits = (name in ("exp_avg", "exp_avg_sq") and param is not None and value.shape == param.shape
                    and (name == "exp_avg" or bool((value >= 0).all())))
        if param is None or not fits:
            raise ValueError(f"optimizer state {clip(key)!r} (shape {clip(list(value.shape))}) does not fit the "
                             "network's parameters")
        state.setdefault(int(index), {})[name] = value
    # the hyperparameters are the run's own (the options are checked equal, and the learning rate is set before
    # every update when it is annealed): a checkpoint's recorded param_groups are not trusted
    optimizer.load_state_dict({"state": state, "param_groups": optimizer.state_dict()["param_groups"]})
    recorded = meta["league"]
    ids, next_id = recorded["ids"], recorded["next_id"]
    if (not isinstance(ids, list) or not all(type(sid) is int and sid >= 0 for sid in ids) or len(set(ids)) < len(ids)
            or type(next_id) is not int or next_id <= max(ids, default=-1)):
        raise ValueError("the league's snapshot ids must be distinct integers >= 0, each below its next id")
    shapes = {k: v.shape for k, v in net.state_dict().items()}
    for sid in ids:
        weights = part(f"snap.{sid}.")
        if {k: v.shape for k, v in weights.items()} != shapes:
            raise ValueError(f"the league's snapshot {sid} does not have the network's tensors and shapes")
    parts = ("net", "critic", "opt") + (("magnet",) if magnet_net is not None else ())
    unknown = sorted(set(tensors) - {k for k in tensors if k.split(".", 1)[0] in parts}
                     - {f"snap.{sid}.{k}" for sid in ids for k in shapes})
    if unknown:
        raise ValueError(f"tensor {clip(unknown[0])!r} is no part of the network, optimizer, league or magnet")
    scores = recorded["scores"]
    if not isinstance(scores, dict) or not all(
            isinstance(v, list) and all(type(x) in (int, float) and 0 <= x <= 1 for x in v) for v in scores.values()):
        raise ValueError("the league's scores must be lists of match scores 0..1 per opponent")
    progress = meta["progress"]
    if not isinstance(progress, dict) or not all(
            type(progress.get(k)) is int and progress[k] >= 0 for k in ("update", "decisions")) or not (
            type(progress.get("seconds")) in (int, float) and 0 <= progress["seconds"] < float("inf")):
        raise ValueError("progress must give update and decisions as integers >= 0 and seconds >= 0")
    curve = progress.get("curve", [])
    if type(progress.get("cpu_seconds", 0.0)) not in (int, float) or not 0 <= progress.get("cpu_seconds", 0.0) < float("inf"):
        raise ValueError("progress must give cpu_seconds as a number >= 0")
    if set(progress) - {"update", "decisions", "seconds", "cpu_seconds", "matches", "curve"} or type(progress.get("matches", 0)) is not int or not isinstance(curve, list) or not all(
            isinstance(row, list) and len(row) == 4 and all(type(x) in (int, float) and 0 <= x < float("inf")
                                                            for x in row) for row in curve):
        raise ValueError("progress must give matches as an integer and its curve as rows of four numbers >= 0")
    league.next_id = next_id
    league.weights = {sid: {k: v.numpy() for k, v in part(f"snap.{sid}.").items()} for sid in ids}
    league.scores = {k: deque(v, maxlen=200) for k, v in scores.items()}
    rng.bit_generator.state = meta["rng"]
    return RunState(**progress)


# ------------------------------------------------------------------------------------------------------------
# the loop


def evaluate_file(args: PPOArgs, path: str, update: int, keep: bool) -> dict[str, float]:
    """:func:`evaluate`'s win rates as TensorBoard tags; the file is deleted afterwards unless ``keep``."""
    try:
        return {f"eval/win_rate_vs_{spec}": rate for spec, rate in evaluate(args, path, update).items()}
    finally:
        if not keep:
            os.remove(path)


def evaluate(args: PPOArgs, policy: str, update: int) -> dict[str, float]:
    """The policy's win rate against each ``eval_opponents`` spec over duplicate matches (for the logs)."""
    from training.measure.evaluate import run_tournament

    rates = {}
    for spec in args.eval_opponents:
        summary, _ = run_tournament([f"ppo:{policy}", spec], [args.preset], args.eval_matches,
                                    seed=int(np.random.SeedSequence([args.seed, update, 1 << 24]).generate_state(1)[0]))
        rates[spec] = summary["pairings"][0]["win_rate_a"]
    return rates


class TrainingInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C before its budget was spent: ``checkpoint`` holds its resumable state (None when
    it stopped before the first one), ``decisions`` how far it got; no policy file was written."""

    def __init__(self, checkpoint: str | None, decisions: int, total: int, progress: RunState | None = None):
        super().__init__(f"interrupted at {decisions:,} of {total:,} decisions")
        self.checkpoint, self.decisions, self.total, self.progress = checkpoint, decisions, total, progress


def train_ppo(args: PPOArgs, resume: bool = False, progress_bar: bool = True, overwrite: bool = False) -> str:
    """Run PPO until ``total_decisions`` and return the path of the policy file, which only a finished run
    writes (:func:`train_run` returns the run's :class:`RunState` as well). Ctrl-C stops after the current update with a checkpoint and raises :class:`TrainingInterrupted`;
    ``resume=True`` continues it. ``run_dir`` is held for the run (:func:`training.outputs.hold`: a second run on
    it is refused); a fresh run into a ``run_dir`` that already holds a run is refused unless ``overwrite``, which
    deletes that run's checkpoint, policy and logs first."""
    return train_run(args, resume, progress_bar, overwrite)[0]


def train_run(args: PPOArgs, resume: bool = False, progress_bar: bool = True, overwrite: bool = False
              ) -> tuple[str, RunState]:
    """:func:`train_ppo`, returning the policy's path and the run's progress (its ``stopped`` says whether a Ctrl-C
    came during the last update); :class:`TrainingInterrupted` carries the progress too."""
    with hold(args.run_dir, f"run dir {args.run_dir!r}"):
        return _train(args, resume, progress_bar, overwrite)


def _start_fresh(run_dir: str, overwrite: bool) -> None:
    """Check that a fresh run may start in ``run_dir``, and clear the files of the run there when ``overwrite``."""
    found = [name for name in ("checkpoint.safetensors", "policy.safetensors")
             if os.path.exists(os.path.join(run_dir, name))]
    if found and not overwrite:
        what = "a checkpoint" if "checkpoint.safetensors" in found else "a finished run's policy"
        raise ValueError(f"{run_dir} already holds {what}: pass --resume to continue it, --overwrite to start "
                         "over (deleting it), or choose another --run-dir")
    for name in found:
        os.remove(os.path.join(run_dir, name))
    logs = os.path.join(run_dir, "tb")
    if os.path.isdir(logs):  # a fresh run's curves must not continue an earlier run's
        shutil.rmtree(logs)


@dataclasses.dataclass
class Learner:
    """What a run learns with: the policy, the training-only critic, their optimizer, the update's minibatch
    draws, the league, and the magnet network (None without a magnet, or with a fixed agent as the magnet)."""

    net: PolicyNet
    critic: DealCritic
    params: list[torch.Tensor]
    optimizer: torch.optim.Optimizer
    rng: np.random.Generator
    league: League
    magnet_net: PolicyNet | None


def new_learner(args: PPOArgs) -> Learner:
    """Fresh weights and state, seeded from ``args.seed`` (the order of creation is part of the seeding)."""
    torch.manual_seed(int(np.random.SeedSequence([args.seed, 1 << 20]).generate_state(1)[0]))
    shapes = args.shapes
    device = torch_device(args.device)
    net = PolicyNet(**shapes, hidden=args.hidden, features=args.features, tally_film=args.tally_film).to(device)
    critic = DealCritic(args.hidden, shapes["obs_size"]).to(device)
    params = list(net.parameters()) + list(critic.parameters())
    optimizer = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)
    rng = np.random.default_rng(np.random.SeedSequence([args.seed, 1 << 21]))
    # the magnet: a frozen copy of the policy the run starts from (after the warm start), or the checkpoint's
    magnet_net = PolicyNet(**shapes, hidden=args.hidden, features=args.features, tally_film=args.tally_film
                           ).to(device) if args.magnet_coef > 0 and not args.magnet else None
    return Learner(net, critic, params, optimizer, rng, League(), magnet_net)


def torch_device(name: str) -> torch.device:
    """The torch device of a ``device`` option; ValueError when it names a GPU torch does not see."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(name[5:]) if name.startswith("cuda:") else 0
        if index >= count:
            raise ValueError(f"device {name!r}: torch sees {count} GPU(s) here; use device=auto or device=cpu")
    return torch.device(name)


def start(args: PPOArgs, resume: bool) -> tuple[Learner, RunState]:
    """The learner and progress of a run: from its checkpoint, or fresh (with the warm start, if any)."""
    learner, state = new_learner(args), RunState()
    if resume:
        state = load_checkpoint(os.path.join(args.run_dir, "checkpoint.safetensors"), args, learner.net,
                                learner.critic, learner.optimizer, learner.league, learner.rng, learner.magnet_net)
    else:
        if args.imitation_decisions:
            accuracy = imitate(learner.net, imitation_data(args), args.seed)
            logger.info("warm start: the network takes %s's action at %.1f%% of %s decisions",
                        args.imitation_teacher, 100 * accuracy, f"{args.imitation_decisions:,}")
        if learner.magnet_net is not None:
            learner.magnet_net.load_state_dict(learner.net.state_dict())
    if learner.magnet_net is not None:
        learner.magnet_net.requires_grad_(False)
    return learner, state


def collect(args: PPOArgs, learner: Learner, backend: Backend, update: int
            ) -> tuple[list[dict[str, Any]], tuple[str, ...], int, float]:
    """One update's decisions, from every partition (:mod:`training.learn.selfplay`); the league records the results.
    Returns the partitions' batches, the league's names then, and the matches against fixed opponents and
    snapshots with the learner's score in them."""
    names, weights = learner.league.opponents(args)
    quota = -(-args.batch_decisions // args.partitions)
    seeds = [int(np.random.SeedSequence([args.seed, update, p]).generate_state(1)[0]) for p in range(args.partitions)]
    if plays_program(args.scripted):  # an outside program at the tables: deals it cannot compute
        seeds = [hidden_seed("ppo", seed, bits=63) for seed in seeds]
    tasks = [PartitionPlan(args.preset, seed, args.tables, quota, args.shaping, names, weights, args.magnet) for seed in seeds]
    parts = backend.run(learner.net, learner.league.weights, tasks)
    matches, score = 0, 0.0
    for p, part in enumerate(parts):
        results = part.pop("results")
        learner.league.record(names, results)
        matches, score = matches + len(results), score + float(results[:, 1].sum())
        part["traj"] = part["traj"] + (p << 40)  # trajectory ids unique over the partitions
    return parts, names, matches, score


def learn(args: PPOArgs, learner: Learner, parts: list[dict[str, Any]]
          ) -> tuple[dict[str, Any], list[float], np.ndarray, np.ndarray]:
    """Advantages from the deal-aware critic's values (recomputed by the current weights), then the clipped PPO
    epochs, with the magnet's KL term if there is one. Returns the diagnostics, the clip fractions, the values
    and the returns."""
    net, critic = learner.net, learner.critic
    x_policy, x_critic = (SparseRows.stack([stored_rows(p, key) for p in parts]) for key in ("policy", "critic"))
    keys = ("masks", "actions", "logprobs", "traj", "rewards") + (("magnet_logits",) if args.magnet else ())
    arrays = {key: np.concatenate([p[key] for p in parts]) for key in keys}
    size = len(arrays["actions"])
    device = next(net.parameters()).device
    x_policy, x_critic = x_policy.to(device), x_critic.to(device)
    with torch.no_grad():
        values = torch.cat([critic.from_inputs(x_critic[i:i + 8192]) for i in range(0, size, 8192)]).cpu().numpy()
    adv = trajectory_advantages(arrays["traj"], arrays["rewards"], values, args.gae_lambda)
    returns = adv + values
    batch = {"policy": x_policy, "critic": x_critic, "advantages": torch.from_numpy(adv).to(device),
             "returns": torch.from_numpy(returns).to(device),
             **{key: torch.from_numpy(arrays[key]).to(device) for key in ("masks", "actions", "logprobs")}}
    magnet_of: Any = None
    if args.magnet:  # a fixed agent's log-probabilities, stored with each decision
        batch["magnet_logits"] = torch.from_numpy(arrays["magnet_logits"]).to(device)
        magnet_of = lambda mb: mb["magnet_logits"]
    elif learner.magnet_net is not None:
        magnet_net = learner.magnet_net
        magnet_of = lambda mb: magnet_net.from_inputs(mb["policy"], mb["masks"])[0]
    stats, clipfracs = ppo_epochs(
        batch, lambda mb: net.from_inputs(mb["policy"], mb["masks"]),
        lambda mb: critic.from_inputs(mb["critic"]), learner.optimizer, learner.params, learner.rng, args, magnet_of)
    return stats, clipfracs, values, returns


def renew(args: PPOArgs, learner: Learner, update: int) -> None:
    """After an update: a self-refreshed magnet becomes the current policy every ``magnet_every`` updates, and the
    league takes a snapshot every ``snapshot_every`` (none without a snapshot share)."""
    if learner.magnet_net is not None and args.magnet_every and update % args.magnet_every == 0:
        learner.magnet_net.load_state_dict(learner.net.state_dict())
    if args.snapshots > 0 and update % args.snapshot_every == 0:
        learner.league.add(learner.net, args.max_snapshots)


def scalars_of(args: PPOArgs, learner: Learner, names: tuple[str, ...], stats: dict[str, Any],
               clipfracs: list[float], values: np.ndarray, returns: np.ndarray, seconds: float,
               collect_seconds: float) -> dict[str, float]:
    """CleanRL's TensorBoard tags for one update, and the league's."""
    size, league = len(values), learner.league
    var_y = float(np.var(returns))
    explained = float("nan") if var_y == 0 else 1 - float(np.var(returns - values)) / var_y
    scalars = {"charts/learning_rate": learner.optimizer.param_groups[0]["lr"],
               "charts/SPS": size / max(seconds, 1e-9),
               "charts/collect_SPS": size / max(collect_seconds, 1e-9),
               **{f"losses/{key}": stats[key].item()
                  for key in ("value_loss", "policy_loss", "entropy", "old_approx_kl", "approx_kl")},
               "losses/clipfrac": float(np.mean(clipfracs)),
               "losses/explained_variance": explained,
               "league/snapshot_win_rate": league.snapshot_win_rate(names)}
    scalars.update({f"league/win_rate_vs_{spec}": league.win_rate(spec) for spec in args.scripted})
    if "magnet_kl" in stats:
        scalars["losses/magnet_kl"] = stats["magnet_kl"].item()
    return scalars


def progress_fields(scalars: dict[str, float]) -> dict[str, str]:
    """What the progress line shows after an update (docs/training.md, "The progress line"): ``sps``, learner
    decisions per second, and ``snap``, the learner's recent win rate against the league's snapshots in play, or
    ``-`` while there is no such measurement (``league/snapshot_win_rate`` is NaN)."""
    snap = scalars["league/snapshot_win_rate"]
    return {"sps": f"{scalars['charts/SPS']:.0f}", "snap": f"{snap:.2f}" if math.isfinite(snap) else "-"}


def _train(args: PPOArgs, resume: bool, progress_bar: bool, overwrite: bool) -> tuple[str, RunState]:
    from torch.utils.tensorboard import SummaryWriter

    from training.progress import progress_meter

    if os.path.exists(args.run_dir) and not os.path.isdir(args.run_dir):
        raise ValueError(f"run dir {clip(repr(args.run_dir), 120)} is a file; give a folder for the run")
    os.makedirs(args.run_dir, exist_ok=True)
    checkpoint = os.path.join(args.run_dir, "checkpoint.safetensors")
    policy_path = os.path.join(args.run_dir, "policy.safetensors")
    eval_path = os.path.join(args.run_dir, f"{TEMP_PREFIX}{os.getpid()}-evaluated.safetensors")
    if not resume:
        _start_fresh(args.run_dir, overwrite)
    learner, state = start(args, resume)
    net = learner.net
    # a policy plays greedily by default (`ppo:PATH,sample` to draw): the entropy bonus keeps the training policy
    # mixed so that its league can punish it, and its most probable action is the stronger one to play
    meta = {"presets": [args.preset], "play": "greedy", "config": args.model_dump(mode="json"),
            "config_hash": config_hash(args), "commit": git_commit()}
    # a resumed run purges the steps the stopped one logged after its checkpoint, which it logs again
    writer = SummaryWriter(os.path.join(args.run_dir, "tb"), purge_step=state.decisions + 1 if resume else None)
    # processes: no more than this machine's cores; Ray: one actor per partition, placed by the cluster
    workers = args.partitions if args.backend == "ray" else min(args.partitions, max(1, os.cpu_count() or 1))
    backend = Backend(args.backend, workers)
    bar = progress_meter(args.total_decisions, "ppo", "dec", progress_bar, initial=state.decisions, unit_scale=True)
    stop = {"requested": False}

    def on_sigint(signum: int, frame: Any) -> None:
        if stop["requested"]:
            raise KeyboardInterrupt
        stop["requested"] = True
        logger.warning("Ctrl-C: stopping after this update (Ctrl-C again to leave at once)")

    previous = signal.signal(signal.SIGINT, on_sigint)
    started, cpu_started = time.perf_counter() - state.seconds, cpu_seconds() - state.cpu_seconds
    try:
        while state.decisions < args.total_decisions and not stop["requested"]:
            tick = time.perf_counter()
            state.update += 1
            learner.optimizer.param_groups[0]["lr"] = \
                args.learning_rate * (1.0 - state.decisions / args.total_decisions)
            parts, names, matches, score = collect(args, learner, backend, state.update)
            collected = time.perf_counter()
            stats, clipfracs, values, returns = learn(args, learner, parts)
            renew(args, learner, state.update)
            state.decisions += len(values)
            state.matches += matches
            state.seconds = time.perf_counter() - started
            state.cpu_seconds = cpu_seconds() - cpu_started
            state.curve.append([state.decisions, round(state.seconds, 3), matches, score])
            scalars = scalars_of(args, learner, names, stats, clipfracs, values, returns,
                                 time.perf_counter() - tick, collected - tick)
            complete = state.decisions >= args.total_decisions
            done = complete or stop["requested"]
            state.stopped = stop["requested"]
            if complete or (args.eval_every and state.update % args.eval_every == 0 and not done):
                # the finished run's policy file, or one deleted after its evaluation
                evaluated = policy_path if complete else eval_path
                save_policy(net, evaluated, **meta, decisions=state.decisions, updates=state.update,
                            seconds=round(time.perf_counter() - started), complete=complete)
                scalars.update(evaluate_file(args, evaluated, state.update, keep=complete))
            for tag, value in scalars.items():
                writer.add_scalar(tag, value, state.decisions)
            if done or state.update % args.checkpoint_every == 0:
                save_checkpoint(checkpoint, args, net, learner.critic, learner.optimizer, learner.league, state,
                                learner.rng, learner.magnet_net)
            bar.set_postfix(**progress_fields(scalars))  # before update(), where a plain line prints: this update's
            bar.update(min(len(values), args.total_decisions - bar.n))
    finally:
        signal.signal(signal.SIGINT, previous)
        bar.close()
        backend.close()
        writer.close()
    if state.decisions < args.total_decisions:
        raise TrainingInterrupted(checkpoint if os.path.exists(checkpoint) else None, state.decisions,
                                  args.total_decisions, state)
    if not os.path.exists(policy_path):  # a finished checkpoint whose run was killed before writing the policy
        save_policy(net, policy_path, **meta, decisions=state.decisions, updates=state.update,
                    seconds=round(state.seconds), complete=True)
    return policy_path, state
