"""PPO with action masking and league self-play, read top to bottom (in the manner of CleanRL's ``ppo.py``).

One policy network plays every learner seat. Each update: collect whole matches against the league (the learner
itself, frozen past snapshots, fixed agents such as the heuristic), compute GAE per seat trajectory, run clipped
PPO epochs, log CleanRL's standard TensorBoard tags, evaluate now and then against fixed agents, and write an
atomic checkpoint (safetensors + JSON, never a pickle) from which ``resume=True`` continues exactly.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from truco_env.actions import CALL_BASE, TALLY_CLASS_OF, TALLY_CLASSES
from truco_env.config import make_config
from truco_env.encoding import (
    ENVIDO_STATUS,
    FLOR_STATUS,
    OBS_OFFSETS,
    OBSERVATION_VERSION,
    tally_decisions,
)

from .imitation import imitate, teacher_data
from .lookahead import distil_cards, lookahead_data
from .model import (
    FEATURES,
    Critic,
    PolicyFileError,
    PolicyNet,
    atomic_save_tensors,
    clipped_surrogate,
    load_policy,
    load_tensors,
    masked_entropy,
    save_policy,
)
from .rollouts import BACKENDS, make_rollouts
from .selfplay import REWARDS, League, advantages, critic_inputs

CHECKPOINT_FORMAT = "truco-rl-ppo-checkpoint"
CRITICS = ("shared", "privileged")  # PPOArgs.critic
GUIDE_ON = ("all", "bets", "cards", "envido")  # PPOArgs.guide_on


@dataclass
class PPOArgs:
    """Every knob of a PPO run; YAML configs and ``--set key=value`` overrides fill it."""

    preset: str = "argentine"
    """rules preset to train on (truco_env.PRESETS)"""
    run_dir: str = "runs/ppo"
    """where TensorBoard logs, checkpoints, snapshots and the final policy go"""
    seed: int = 1
    """seeds matches, sampling and initialisation: the same seed gives the same run"""
    total_updates: int = 200
    """number of PPO updates (0: the warm start alone, a `teacher` or `lookahead_card_decisions` stage)"""
    stop_after: int = 0
    """stop after this update, checkpoint and policy written (0, or past ``total_updates``: run to the end); the
    learning rate still anneals over ``total_updates``, so a run stopped early can be reproduced exactly"""
    num_tables: int = 32
    """matches played at once during collection (split over the rollout workers)"""
    rollout_workers: int = 1
    """collection partitions per update; the results depend on this number, not on the backend. On backend
    "local" the partitions run one after another in this process; for speed on several cores, use "processes"
    or "ray"."""
    backend: str = "local"
    """where the partitions run: "local" (this process), "processes" (a worker pool) or "ray" (Ray actors)"""
    vector_env: bool = True
    """collect on the compiled vector environment (faster; league agents must need only observations)"""
    batch_steps: int = 4096
    """learner decisions per update (whole matches, so a little more)"""
    minibatch_size: int = 1024
    """decisions per gradient step"""
    update_epochs: int = 4
    """passes over each batch"""
    learning_rate: float = 3e-4
    """Adam step size"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over the run"""
    gamma: float = 1.0
    """discount per decision (matches are short; 1 keeps the result undiscounted)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_coef: float = 0.2
    """PPO ratio clip"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    target_kl: float | None = None
    """stop an update's epochs early past this approximate KL (None: never)"""
    hidden: tuple[int, ...] = (256, 256)
    """sizes of the shared MLP trunk"""
    features: str = "none"
    """``card_strength``: the trunk also reads each visible card's trick strength (1..14, the vira's manilhas
    included) computed by a fixed layer (``training.ppo_legacy.model.CardStrength``); ``none``: the observation only"""
    points_reward: float = 0.5
    """weight of the per-hand point difference (divided by the target) added to the match result"""
    reward: str = "match"
    """``match``: +1/-1 at the match end plus the ``points_reward`` shaping, advantages over the whole match;
    ``match_equity``: each hand credits twice its change of match-winning probability and advantages stop at
    the hand's end (``training.ppo_legacy.selfplay.REWARDS``)"""
    equity_edge: dict[str, float] = field(default_factory=dict)
    """under ``match_equity``: the learner's assumed edge per hand (0 to 0.5) against league agents, by spec,
    e.g. ``{random: 0.3}``; the equity table then values a hand as it really moves the match against that
    opponent (an even table makes a coin-flip falta envido look fair against random, which it never is)"""
    advantage_norm: str = "minibatch"
    """``minibatch``: advantages normalised per minibatch (CleanRL); ``opponent``: per opponent kind over the
    whole batch, so that hands against an opponent whose hands move the match little (random, under an
    ``equity_edge``) still steer the policy as much as the others"""
    critic: str = "shared"
    """``shared``: the value is a head on the policy's trunk (CleanRL); ``privileged``: a separate training-only
    network that also reads the other seats' hidden cards and whom the learner faces gives the values for GAE
    (less noisy advantages; the policy still plays from its observation alone). The shared head is trained
    either way, so policy files and exports keep their value output."""
    critic_warmup: int = 0
    """with ``critic: privileged``: the first updates that train the critic alone (the policy and its value head
    stay as they are), so that a fine-tune (``init_policy``) does not follow an untrained critic's advantages"""
    init_policy: str = "none"
    """a policy file (``.safetensors``) or shipped name (``argentine``) whose weights the learner starts from,
    or ``none``: fine-tuning a trained policy under another league or reward, without redoing its training"""
    teacher: str = "none"
    """agent spec whose decisions the network imitates before PPO starts (``heuristic``), or ``none``: a warm
    start at the teacher's strength (``training.ppo_legacy.imitation``)"""
    guide: str = "heuristic"
    """agent spec whose choices ``guide_coef`` pulls the policy toward during PPO"""
    guide_coef: dict[str, float] = field(default_factory=dict)
    """per league agent spec, the weight of a cross-entropy term toward ``guide``'s choice at the learner's
    decisions in matches against that agent, e.g. ``{random: 0.5}``: where exploiting the opponent gains nothing
    the guide already gets (against random, the heuristic's soundness), the policy stays near the guide instead
    of drifting to plays that pay only against other opponents; empty: plain PPO"""
    guide_on: str = "all"
    """``all``: every guided decision; ``bets``: only those where the guide calls, answers a call or folds (its
    card play is left to PPO, so the anchor does not undo what PPO learned about playing cards); ``cards``: only
    those where both the guide and the learner play a card (the guide's card play is copied, the bets are left to
    PPO: the Paulista 2v2 heuristic's Monte Carlo card play is better than the policy's, its betting is not);
    ``envido``: only those where an envido (or flor) call is legal and the guide or the learner calls, answers or
    folds (the envido bets alone, where a raise to falta envido loses whole matches to random)"""
    guide_until: int = 0
    """if > 0, the guide's term only at decisions where the opponents have made fewer than this many decisions
    in the match so far (read from the observation's ``match_tally``): the first hands, where the tally cannot
    yet tell one opponent from another, so the anchor does not also reach the later hands in which the policy can
    tell the heuristic from random and exploit it; 0: no limit"""
    lookahead_card_decisions: int = 0
    """if > 0, before the first update the starting policy (``init_policy``) keeps its bets and takes its card
    choice from the heuristic's look-ahead, distilled from this many of its own card decisions against the
    league's agents (``training.ppo_legacy.lookahead``); 0: off"""
    lookahead_samples: int = 128
    """sampled deals per look-ahead (the heuristic plays with 48; more make the values less noisy)"""
    lookahead_temperature: float = 0.03
    """the card target is softmax(value / temperature): cards within about this much hand-win probability of the
    best share the probability, clearly worse ones get almost none"""
    lookahead_epochs: int = 12
    """passes over the recorded decisions"""
    lookahead_learning_rate: float = 3e-4
    """Adam step size of the distillation (``teacher_minibatch`` decisions per step)"""
    teacher_decisions: int = 100_000
    """teacher decisions to imitate (played in the learner seats against the league, snapshots excepted)"""
    teacher_epochs: int = 20
    """passes over the teacher's decisions"""
    teacher_minibatch: int = 256
    """decisions per imitation gradient step"""
    teacher_learning_rate: float = 1e-3
    """Adam step size of the imitation (PPO then uses ``learning_rate``)"""
    league: dict[str, float] = field(default_factory=lambda: {"self": 0.5, "snapshot": 0.3, "heuristic": 0.2})
    """opponent mix: "self", "snapshot", or agent specs, with weights"""
    league_sampling: str = "uniform"
    """how snapshots are picked: "uniform" or "prioritized" (by the learner's losses against them)"""
    snapshot_win_rate: float = 0.55
    """add a snapshot when the learner beats the latest one at this rate..."""
    snapshot_window: int = 100
    """...over this many recent matches against it"""
    max_snapshots: int = 20
    """league size (the first snapshot is always kept)"""
    eval_every: int = 20
    """updates between evaluations against fixed agents (0: never)"""
    eval_matches: int = 200
    """duplicate matches per evaluation opponent"""
    eval_opponents: tuple[str, ...] = ("random", "heuristic")
    """agent specs to evaluate against"""
    checkpoint_every: int = 10
    """updates between checkpoints"""
    torch_threads: int = 1
    """CPU threads for torch (fixed, so that runs are reproducible)"""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PPOArgs:
        reject_unknown_options(cls, data, "PPO")
        values = dict(data)
        for key in ("hidden", "eval_opponents"):
            if key in values and isinstance(values[key], list):
                values[key] = tuple(values[key])
        args = cls(**values)
        args.validate()
        return args

    def validate(self) -> None:
        make_config(self.preset)  # ValueError naming the preset and the allowed ones
        for name in ("num_tables", "batch_steps", "minibatch_size", "update_epochs", "teacher_decisions",
                     "teacher_epochs", "teacher_minibatch", "lookahead_epochs"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"PPO option {name!r} must be a positive integer, got {value!r}")
        for name in ("total_updates", "lookahead_card_decisions"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"PPO option {name!r} must be an integer >= 0, got {value!r}")
        warm_start = self.teacher != "none" or self.lookahead_card_decisions > 0
        if self.total_updates == 0 and not warm_start:
            raise ValueError("PPO option 'total_updates' is 0, which trains nothing without a warm start; give a "
                             "positive number of updates, or a 'teacher' or 'lookahead_card_decisions' stage")
        if self.lookahead_card_decisions:
            if self.init_policy == "none":
                raise ValueError("PPO option 'lookahead_card_decisions' distils the card play of a trained "
                                 "policy: set 'init_policy' to a policy file or shipped name")
            if not any(spec != "snapshot" and w > 0 for spec, w in self.league.items()):
                raise ValueError(f"PPO option 'lookahead_card_decisions' plays the league's agents or 'self'; the "
                                 f"league {self.league} has only snapshots")
            if isinstance(self.lookahead_samples, bool) or not isinstance(self.lookahead_samples, int) or not (
                    8 <= self.lookahead_samples <= 10_000):
                raise ValueError(f"PPO option 'lookahead_samples' must be an integer in 8..10000, got "
                                 f"{self.lookahead_samples!r}")
            for name in ("lookahead_temperature", "lookahead_learning_rate"):
                value = getattr(self, name)
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                    raise ValueError(f"PPO option {name!r} must be a number > 0, got {value!r}")
        if not isinstance(self.stop_after, int) or isinstance(self.stop_after, bool) or self.stop_after < 0:
            raise ValueError(f"PPO option 'stop_after' must be an integer >= 0 (0: run to total_updates), "
                             f"got {self.stop_after!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"PPO option 'backend' = {self.backend!r}; choose one of {list(BACKENDS)}")
        if not isinstance(self.rollout_workers, int) or not 1 <= self.rollout_workers <= self.num_tables:
            raise ValueError(f"PPO option 'rollout_workers' must be 1..num_tables, got {self.rollout_workers!r}")
        if self.features not in FEATURES:
            raise ValueError(f"PPO option 'features' = {self.features!r}; choose one of {list(FEATURES)}")
        if self.reward not in REWARDS:
            raise ValueError(f"PPO option 'reward' = {self.reward!r}; choose one of {list(REWARDS)}")
        if self.league_sampling not in ("uniform", "prioritized"):
            raise ValueError(f"PPO option 'league_sampling' = {self.league_sampling!r}; "
                             "choose 'uniform' or 'prioritized'")
        if not self.league or any(w < 0 for w in self.league.values()) or sum(self.league.values()) <= 0:
            raise ValueError(f"PPO option 'league' needs non-negative weights with a positive sum, got {self.league}")
        if self.equity_edge and self.reward != "match_equity":
            raise ValueError(f"PPO option 'equity_edge' only applies to reward: match_equity (reward is "
                             f"{self.reward!r}); set reward=match_equity or leave equity_edge empty")
        self._check_per_league_agent("equity_edge", lambda edge: 0.0 <= edge < 0.5, "a number in [0, 0.5)")
        if self.advantage_norm not in ("minibatch", "opponent"):
            raise ValueError(f"PPO option 'advantage_norm' = {self.advantage_norm!r}; choose 'minibatch' or "
                             "'opponent'")
        if self.critic not in CRITICS:
            raise ValueError(f"PPO option 'critic' = {self.critic!r}; choose one of {list(CRITICS)}")
        if (isinstance(self.critic_warmup, bool) or not isinstance(self.critic_warmup, int) or self.critic_warmup < 0
                or (self.critic_warmup and self.critic != "privileged")):
            raise ValueError(f"PPO option 'critic_warmup' must be an integer >= 0, and 0 unless critic is "
                             f"'privileged' (critic is {self.critic!r}), got {self.critic_warmup!r}")
        if self.init_policy != "none" and self.teacher != "none":
            raise ValueError(f"PPO options 'init_policy' ({self.init_policy!r}) and 'teacher' ({self.teacher!r}) "
                             "both choose the starting weights; set one of them to 'none'")
        from agents.base import make_agent

        if self.teacher != "none" and (make_agent(self.teacher).wants or not self.vector_env):
            raise ValueError(f"PPO option 'teacher' = {self.teacher!r}: the teacher must play from observations "
                             "alone on the vector env (vector_env: true), like 'heuristic' or 'random'")
        self._check_per_league_agent("guide_coef", lambda coef: coef >= 0, "a number >= 0")
        if self.guide_on not in GUIDE_ON:
            raise ValueError(f"PPO option 'guide_on' = {self.guide_on!r}; choose one of {list(GUIDE_ON)}")
        if isinstance(self.guide_until, bool) or not isinstance(self.guide_until, int) or self.guide_until < 0:
            raise ValueError(f"PPO option 'guide_until' = {self.guide_until!r}; use a whole number of opponent "
                             "decisions >= 0 (0: no limit)")
        if self.guide_coef and make_agent(self.guide).wants and self.vector_env:
            raise ValueError(f"PPO option 'guide' = {self.guide!r}: on the vector env (vector_env: true) the guide "
                             "must play from observations alone, like 'heuristic' or 'random'")
        for spec in [k for k in self.league if k not in ("self", "snapshot")] + list(self.eval_opponents):
            make_agent(spec)  # ValueError naming the spec and the kinds available
        from training.gauntlet import all_gauntlet_specs

        trained_with = set(self.league) | {self.teacher} | ({self.guide} if self.guide_coef else set())
        held_out = sorted(trained_with & all_gauntlet_specs())
        if held_out:
            raise ValueError(f"PPO options name {held_out} as league member, teacher or guide; they are held-out "
                             "gauntlet opponents (training/gauntlet.py), never trained against")


    def _check_per_league_agent(self, name: str, in_range: Callable[[float], bool], allowed: str) -> None:
        """Option ``name`` maps league agent specs to numbers: each key must be a league agent (not ``self`` or
        ``snapshot``) and each value a number that ``in_range`` accepts (``allowed`` says which)."""
        agents = [k for k in self.league if k not in ("self", "snapshot")]
        for spec, value in getattr(self, name).items():
            if spec not in agents:
                raise ValueError(f"PPO option {name!r} names {spec!r}, which is not a league agent; league "
                                 f"agents: {agents}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not in_range(value):
                raise ValueError(f"PPO option {name!r} for {spec!r} must be {allowed}, got {value!r}")


def reject_unknown_options(kind: type, data: dict[str, Any], label: str) -> None:
    """ValueError naming the keys of ``data`` that the arguments dataclass ``kind`` lacks, and those it has."""
    names = {f.name for f in dataclasses.fields(kind)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"unknown {label} option(s) {unknown}; allowed: {sorted(names)}")


def train(args: PPOArgs, resume: bool = False, progress: bool = True) -> str:
    """Run PPO; returns the path of the final policy file. Ctrl-C writes a checkpoint before leaving."""
    from torch.utils.tensorboard import SummaryWriter

    args.validate()
    checkpoint_path = os.path.join(args.run_dir, "checkpoint.safetensors")
    resuming = resume and os.path.exists(checkpoint_path)
    # the starting weights are checked before any work (the file may be another config's output, so not in
    # validate(), which must pass on a fresh clone)
    start_net = initial_weights(args) if args.init_policy != "none" and not resuming else None
    torch.set_num_threads(args.torch_threads)
    config = make_config(args.preset)
    os.makedirs(args.run_dir, exist_ok=True)

    # --- the learner, its optimizer, the league and the random streams ---------------------------------------
    torch.manual_seed(args.seed)
    net = PolicyNet(hidden=args.hidden, features=args.features)
    critic = Critic(hidden=args.hidden, features=args.features) if args.critic == "privileged" else None
    params = list(net.parameters()) + (list(critic.parameters()) if critic is not None else [])
    optimizer = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)
    league = League(dict(args.league), args.league_sampling, args.max_snapshots)
    rng = np.random.default_rng(args.seed)
    start_update, global_step = 0, 0
    if resuming:
        start_update, global_step = load_checkpoint(checkpoint_path, args, net, optimizer, league, rng, critic)
    writer = SummaryWriter(os.path.join(args.run_dir, "tb"), purge_step=start_update or None)
    writer.add_text("config", json.dumps(dataclasses.asdict(args), default=list, indent=1))
    if start_update == 0 and args.teacher != "none":  # warm start: copy the teacher before the first update
        data = teacher_data(args, config, rng)
        stats = imitate(net, data, args.teacher_epochs, args.teacher_minibatch, args.teacher_learning_rate,
                        args.vf_coef, rng, critic)
        for name, value in stats.items():
            writer.add_scalar(name, value, 0)
        if progress:
            print(f"imitated {args.teacher}: {int(stats['imitation/decisions'])} decisions, "
                  f"{stats['imitation/agreement']:.1%} agreement", flush=True)
    if start_net is not None:
        net.load_state_dict(start_net.state_dict())
        if progress:
            print(f"started from the weights of {args.init_policy}", flush=True)
        if args.lookahead_card_decisions:  # the card play from the look-ahead, the bets kept
            data = lookahead_data(net, args.preset, args.league, args.lookahead_card_decisions,
                                  args.lookahead_samples, args.rollout_workers, rng)
            stats = distil_cards(net, data, args.lookahead_temperature, args.lookahead_epochs,
                                 args.teacher_minibatch, args.lookahead_learning_rate, args.vf_coef, 0.1, rng)
            for name, value in stats.items():
                writer.add_scalar(name, value, 0)
            if progress:
                print(f"distilled the look-ahead's card play: {int(stats['lookahead/card_decisions'])} card "
                      f"decisions, held-out regret {stats['lookahead/regret_before']:.4f} -> "
                      f"{stats['lookahead/regret_after']:.4f}", flush=True)
    if not league.snapshots:
        league.add_snapshot(net)  # the starting policy anchors the league
    rollouts = make_rollouts(args.backend, args.rollout_workers)
    if progress and args.backend == "local" and args.rollout_workers > 1:
        print(f"note: {args.rollout_workers} rollout partitions on backend 'local' run one after another in this "
              "process; --set backend=processes runs them in parallel, with the same results", flush=True)
    bar = _progress(args.total_updates, start_update, progress)
    updates_done = start_update
    stop = _CtrlC()
    try:
        for update in range(start_update, min(args.stop_after or args.total_updates, args.total_updates)):
            started = time.time()
            if args.anneal_lr:
                optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - update / args.total_updates)

            # --- collect whole matches, in partitions that may run elsewhere ----------------------------------
            workers = args.rollout_workers
            tasks = [league.task(config, args.num_tables // workers + (i < args.num_tables % workers),
                                 -(-args.batch_steps // workers), int(seed), args.points_reward,
                                 args.preset if args.vector_env else None, args.reward, args.equity_edge,
                                 critic is not None, args.guide, tuple(args.guide_coef))
                     for i, seed in enumerate(rng.integers(2 ** 62, size=workers))]
            results = rollouts.run(tasks, net, league.snapshots)
            trajectories = [t for part, _ in results for t in part]
            match_results = [r for _, part in results for r in part]
            b_obs = torch.from_numpy(np.concatenate([t.obs for t in trajectories]))
            if critic is not None:  # the privileged values replace the shared head's in GAE
                b_priv, b_opp = critic_inputs(trajectories)
                with torch.no_grad():
                    critic_values = critic(b_obs, b_priv, b_opp).numpy()
                for t, part in zip(trajectories, np.split(critic_values, np.cumsum([len(t.actions)
                                                                                    for t in trajectories])[:-1])):
                    t.values = part
            parts = [advantages(t, args.gamma, args.gae_lambda) for t in trajectories]
            b_masks = torch.from_numpy(np.concatenate([t.masks for t in trajectories]))
            b_actions = torch.from_numpy(np.concatenate([t.actions for t in trajectories]))
            b_logprobs = torch.from_numpy(np.concatenate([t.logprobs for t in trajectories]))
            b_values = torch.from_numpy(np.concatenate([t.values for t in trajectories]))
            b_advantages = torch.from_numpy(np.concatenate([p[0] for p in parts]))
            b_returns = torch.from_numpy(np.concatenate([p[1] for p in parts]))
            if args.advantage_norm == "opponent":
                b_advantages = normalise_by_opponent(b_advantages, trajectories)
            b_guide, b_guide_weight = guide_targets(trajectories, args.guide_coef, args.guide_on,
                                                    args.guide_until)
            batch = len(b_actions)
            global_step += batch

            # --- clipped PPO epochs -------------------------------------------------------------------------
            clipfracs, approx_kl, old_approx_kl = [], torch.tensor(0.0), torch.tensor(0.0)
            order = np.arange(batch)
            for _epoch in range(args.update_epochs):
                rng.shuffle(order)
                for start in range(0, batch, args.minibatch_size):
                    mb = torch.from_numpy(order[start:start + args.minibatch_size])
                    logits, values = net(b_obs[mb], b_masks[mb])
                    pg_loss, stats = clipped_surrogate(logits, b_actions[mb], b_logprobs[mb], b_advantages[mb],
                                                       args.clip_coef, args.advantage_norm == "minibatch")
                    old_approx_kl, approx_kl = stats["old_approx_kl"], stats["approx_kl"]
                    clipfracs.append(stats["clipfrac"])
                    v_loss = 0.5 * ((values - b_returns[mb]) ** 2).mean()
                    if critic is not None:  # the shared head keeps learning too (policy files carry it)
                        critic_loss = 0.5 * ((critic(b_obs[mb], b_priv[mb], b_opp[mb]) - b_returns[mb]) ** 2).mean()
                        v_loss = v_loss + critic_loss
                    entropy = masked_entropy(logits).mean()
                    loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
                    if args.guide_coef:  # pull toward the guide's choices where guide_coef says so
                        guide_ce = nn.functional.cross_entropy(logits, b_guide[mb], reduction="none")
                        guide_loss = (b_guide_weight[mb] * guide_ce).mean()
                        loss = loss + guide_loss
                    if update < args.critic_warmup:  # the critic alone: nothing reaches the policy's weights
                        loss = args.vf_coef * critic_loss
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(params, args.max_grad_norm)
                    optimizer.step()
                if args.target_kl is not None and approx_kl > args.target_kl:
                    break

            # --- league: a new snapshot when the learner beats the latest one often enough ------------------
            for opponent, score in match_results:
                if opponent[0] == "snapshot":
                    league.results[opponent[1]].append(score)
            latest = len(league.snapshots) - 1
            if (len(league.results[latest]) >= args.snapshot_window
                    and league.win_rate(latest, args.snapshot_window) >= args.snapshot_win_rate):
                league.add_snapshot(net)

            # --- logging (CleanRL's tags) -----------------------------------------------------------------------
            y_pred, y_true = b_values.numpy(), b_returns.numpy()
            var_y = np.var(y_true)
            explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
            step = updates_done = update + 1
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], step)
            writer.add_scalar("losses/value_loss", v_loss.item(), step)
            writer.add_scalar("losses/policy_loss", pg_loss.item(), step)
            writer.add_scalar("losses/entropy", entropy.item(), step)
            writer.add_scalar("losses/old_approx_kl", old_approx_kl.item(), step)
            writer.add_scalar("losses/approx_kl", approx_kl.item(), step)
            writer.add_scalar("losses/clipfrac", float(np.mean(clipfracs)), step)
            writer.add_scalar("losses/explained_variance", float(explained_var), step)
            writer.add_scalar("charts/SPS", batch / max(time.time() - started, 1e-9), step)
            if args.guide_coef:
                guided = b_guide_weight > 0
                writer.add_scalar("losses/guide_loss", guide_loss.item(), step)
                writer.add_scalar("charts/guide_agreement", float((b_actions[guided] == b_guide[guided])
                                                                  .float().mean()) if guided.any() else np.nan, step)
            writer.add_scalar("charts/global_step", global_step, step)
            writer.add_scalar("league/snapshots", len(league.snapshots), step)
            writer.add_scalar("league/win_rate_vs_latest", league.win_rate(latest, args.snapshot_window), step)
            if args.eval_every and step % args.eval_every == 0:
                evaluation = evaluate_policy(net, args, step, global_step)
                for name, value in evaluation.items():
                    writer.add_scalar(name, value, step)
                bar.write(f"update {step}: " + ", ".join(f"{k.split('/', 1)[-1]} {v:.3f}"
                                                         for k, v in evaluation.items() if "win_rate" in k))
            if (step % args.checkpoint_every == 0 or step in (args.total_updates, args.stop_after)
                    or stop.requested):
                save_checkpoint(checkpoint_path, args, net, optimizer, league, rng, step, global_step, critic)
            bar.update(1)
            bar.set_postfix(sps=int(batch / max(time.time() - started, 1e-9)), snapshots=len(league.snapshots))
            if stop.requested:
                print(f"\nstopped after update {step}: checkpoint {checkpoint_path} (continue with --resume)",
                      flush=True)
                break
    finally:
        rollouts.close()
        stop.restore()
        bar.close()
        writer.close()
    policy_path = os.path.join(args.run_dir, "policy.safetensors")
    save_policy(net, policy_path, presets=[args.preset], training=dataclasses.asdict(args),
                updates=updates_done, global_step=global_step)
    return policy_path


def guide_targets(trajectories: list, guide_coef: dict[str, float], on: str = "all", until: int = 0
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """Per decision of the batch: the guide's action and the weight of its cross-entropy term (``guide_coef``
    of the opponent faced, kept where ``on`` and ``until`` say: see ``PPOArgs.guide_on`` and ``guide_until``).
    Where no guide action was recorded the target is the learner's own action with weight 0: a legal target keeps
    the term finite (an illegal one has log-probability -inf, and 0 x inf is NaN)."""
    recorded = np.concatenate([t.guide for t in trajectories])
    actions = np.concatenate([t.actions for t in trajectories])
    weights = np.concatenate([np.full(len(t.actions), guide_coef.get(t.opponent, 0.0), dtype=np.float32)
                              for t in trajectories])
    weights[recorded < 0] = 0.0
    obs = np.concatenate([t.obs for t in trajectories]) if on == "envido" or until else None
    if on == "bets":
        weights[recorded < CALL_BASE] = 0.0  # card plays (and unrecorded decisions)
    elif on == "cards":
        weights[(recorded >= CALL_BASE) | (actions >= CALL_BASE)] = 0.0  # a call, answer or fold on either side
    elif on == "envido":
        window = envido_window(obs, np.concatenate([t.masks for t in trajectories]))
        weights[~window | ((recorded < CALL_BASE) & (actions < CALL_BASE))] = 0.0
    if until:
        weights[tally_decisions(obs, row=1) >= until] = 0.0
    targets = np.where(recorded < 0, actions, recorded)
    return torch.from_numpy(targets), torch.from_numpy(weights)


#: Action ids of the envido and flor calls, and where the observation says such a call awaits an answer.
_ENVIDO_CALLS = [action for action, kind in enumerate(TALLY_CLASS_OF)
                 if TALLY_CLASSES[kind] in ("envido_call", "falta_envido", "flor_call")]
_ENVIDO_PENDING = [OBS_OFFSETS["envido_status"][0] + ENVIDO_STATUS.index("pending"),
                   OBS_OFFSETS["flor_status"][0] + FLOR_STATUS.index("pending")]


def envido_window(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Per decision: may an envido or flor call be made, or does one await an answer (``guide_on: envido``)."""
    return masks[:, _ENVIDO_CALLS].any(axis=1) | (obs[:, _ENVIDO_PENDING] > 0).any(axis=1)


def normalise_by_opponent(adv: torch.Tensor, trajectories: list) -> torch.Tensor:
    """Advantages scaled to mean 0, deviation 1 within each opponent kind's decisions of the batch."""
    labels = np.concatenate([[t.opponent] * len(t.actions) for t in trajectories])
    out = adv.clone()
    for label in np.unique(labels):
        rows = torch.from_numpy(np.flatnonzero(labels == label))
        if len(rows) > 1:
            out[rows] = (adv[rows] - adv[rows].mean()) / (adv[rows].std() + 1e-8)
    return out


def initial_weights(args: PPOArgs) -> PolicyNet:
    """The network named by ``init_policy``; ValueError naming the file and what differs from ``args``."""
    from agents.ppo import policy_path, shipped_policies

    path = policy_path(args.init_policy)
    try:
        net, _ = load_policy(path)
    except PolicyFileError as err:
        raise ValueError(f"PPO option 'init_policy': {err}; give a policy file (another run's output: run "
                         f"its config first) or a shipped name {shipped_policies()}") from None
    wanted = PolicyNet(hidden=args.hidden, features=args.features).architecture()
    if net.architecture() != wanted:
        raise ValueError(f"PPO option 'init_policy': {path} has the architecture {net.architecture()}, the run "
                         f"asks for {wanted} (options hidden, features; the current observation layout)")
    return net


# ------------------------------------------------------------------------------------------------------------
# Evaluation during training


def evaluate_policy(net: PolicyNet, args: PPOArgs, step: int, global_step: int = 0) -> dict[str, float]:
    """Duplicate-deal tournament of the current policy against ``eval_opponents`` (TensorBoard ``eval/*``):
    match win rate with its Wilson interval, and the behaviour statistics of the policy (bluff, fold and call
    rates) as ``behaviour/*``. The evaluated policy stays in ``RUN_DIR/evaluated/policy_UPDATE.safetensors``
    with its results in the metadata, so that a run can be judged, and shipped, at its best update."""
    path = os.path.join(args.run_dir, "evaluated", f"policy_{step:05d}.safetensors")  # a new name per update:
    meta = {"presets": [args.preset], "training": dataclasses.asdict(args), "updates": step,
            "global_step": global_step}
    save_policy(net, path, **meta)  # agents are cached by spec
    results = _tournament_stats(f"ppo:{path}", args, step)
    save_policy(net, path, **meta, evaluation=results)
    return results


def _tournament_stats(spec: str, args: PPOArgs, step: int) -> dict[str, float]:
    from training.evaluate import run_tournament

    results: dict[str, float] = {}
    for opponent in args.eval_opponents:
        summary, _ = run_tournament([spec, opponent], [args.preset], args.eval_matches, seed=10_000 + step,
                                    workers=1)
        name = opponent.split(":")[0]
        row = summary["pairings"][0]
        results[f"eval/win_rate_vs_{name}"] = row["win_rate_a"]
        results[f"eval/win_rate_low_vs_{name}"] = row["ci_low"]
        results[f"eval/points_per_hand_vs_{name}"] = row["points_per_hand_a"] - row["points_per_hand_b"]
        behaviour = next(b for b in summary["behaviour"] if b["agent"] == spec)
        for key in ("bluff_rate", "fold_rate", "envido_call_rate", "truco_call_rate"):
            if behaviour.get(key) is not None:
                results[f"behaviour/{key}_vs_{name}"] = behaviour[key]
    return results


# ------------------------------------------------------------------------------------------------------------
# Checkpoints: tensors in safetensors, everything else as JSON in its header


def save_checkpoint(path: str, args: PPOArgs, net: PolicyNet, optimizer: torch.optim.Optimizer, league: League,
                    rng: np.random.Generator, update: int, global_step: int, critic: Critic | None = None) -> None:
    tensors = {f"net.{k}": v for k, v in net.state_dict().items()}
    if critic is not None:
        tensors.update({f"critic.{k}": v for k, v in critic.state_dict().items()})
    optim = optimizer.state_dict()
    for index, state in optim["state"].items():
        for key, value in state.items():
            tensors[f"optim.{index}.{key}"] = value if torch.is_tensor(value) else torch.tensor(value)
    for i, snapshot in enumerate(league.snapshots):
        tensors.update({f"snapshot.{i}.{k}": v for k, v in snapshot.state_dict().items()})
    meta = {
        "format": CHECKPOINT_FORMAT, "args": dataclasses.asdict(args), "update": update, "global_step": global_step,
        "param_groups": optim["param_groups"], "league_results": league.results,
        "numpy_rng": rng.bit_generator.state, "snapshots": len(league.snapshots),
        "observation_version": OBSERVATION_VERSION,
    }
    atomic_save_tensors(tensors, meta, path)


def load_checkpoint(path: str, args: PPOArgs, net: PolicyNet, optimizer: torch.optim.Optimizer, league: League,
                    rng: np.random.Generator, critic: Critic | None = None) -> tuple[int, int]:
    """Restore a checkpoint into the given objects; PolicyFileError when it is corrupt or from another run."""
    tensors, meta = load_tensors(path, CHECKPOINT_FORMAT)
    saved = meta.get("args", {})
    version = meta.get("observation_version", 1)  # checkpoints before the field existed were version 1
    if version != OBSERVATION_VERSION:
        raise PolicyFileError(f"{path}: checkpoint was trained on observation layout version {version}; this "
                              f"truco-rl trains on version {OBSERVATION_VERSION} (docs/observation.md): start a new "
                              "run, or keep its last policy.safetensors, which still loads and plays")
    for key in ("preset", "hidden", "features", "critic"):
        recorded = saved.get(key, {"features": "none", "critic": "shared"}.get(key))  # older runs lack these
        if list(np.atleast_1d(recorded)) != list(np.atleast_1d(getattr(args, key))):
            raise PolicyFileError(f"{path}: checkpoint was trained with {key}={recorded!r}, "
                                  f"this run has {getattr(args, key)!r}")
    try:
        net.load_state_dict({k[4:]: v for k, v in tensors.items() if k.startswith("net.")})
        if critic is not None:
            critic.load_state_dict({k[7:]: v for k, v in tensors.items() if k.startswith("critic.")})
        state: dict[int, dict[str, torch.Tensor]] = {}
        for key, value in tensors.items():
            if key.startswith("optim."):
                _, index, name = key.split(".", 2)
                state.setdefault(int(index), {})[name] = value
        optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
        for i in range(meta["snapshots"]):
            prefix = f"snapshot.{i}."
            league.add_snapshot(net)
            league.snapshots[-1].load_state_dict({k[len(prefix):]: v for k, v in tensors.items()
                                                  if k.startswith(prefix)})
        league.results = [list(r) for r in meta["league_results"]]
        rng.bit_generator.state = meta["numpy_rng"]
    except (KeyError, RuntimeError, ValueError, TypeError) as err:
        raise PolicyFileError(f"{path}: checkpoint is incomplete or does not match this run "
                              f"({str(err).splitlines()[0][:120]})") from None
    return int(meta["update"]), int(meta["global_step"])


class _CtrlC:
    """The first Ctrl-C lets the current update finish and be checkpointed (so a resumed run continues exactly
    as an uninterrupted one); a second Ctrl-C leaves at once."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nCtrl-C: finishing this update and saving a checkpoint (Ctrl-C again to leave at once)", flush=True)

    def restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _progress(total: int, initial: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc="PPO updates", unit="upd", disable=not enabled,
                dynamic_ncols=True)
