"""A trained best response: the PPO trainer against one frozen agent, the learner of approximate exploitability.

How exploitable is a policy on a game too large for an exact best response? Train a fresh learner against it
alone, with the policy frozen, and see how much it wins ("Approximate exploitability: learning a best response",
Timbers et al., IJCAI 2022). The learner is :func:`training.learn.ppo.train_ppo` itself, with a league of one member, the
target: the same collection, update, checkpoints and exact resume as every self-play run. :mod:`training.measure.exploit`
runs it, evaluates it and writes the report.

Why a recipe of its own (:class:`BRArgs`): an exploitability figure is only comparable between targets if every
target faces the same learner with the same budget. So the recipe is frozen: no warm start, no imitation, no
self-play, no snapshots, no magnet, no reward term that knows who the target is; only the budget, the seed and
the number of worker processes change (and a target that is an outside program plays fewer tables at once).
:meth:`BRArgs.ppo_args` is the whole mapping onto the trainer's options.

What the trainer does with a league of one (training/learn/ppo.py and training/learn/selfplay.py tell the rest): each match
seats the learner's team at random; the target acts through ``act_batch`` when it can play many tables at once
(networks, random), otherwise one instance per table and seat, reseeded and reset at each match as a tournament
does; a target that reads more than its observation (a CFR table's information-state key) is served from
reference-engine tables. The reward is the match result with potential-based hand-points shaping (the game's own
point difference on one-hand presets), the critic sees the cards the learner cannot, and the learning rate
anneals to 0 over the budget, so that the best response read off the final weights is not left noisy.

Reproducibility: as for every PPO run, the ``partitions`` are seeded from ``seed``; ``workers`` only decides how
many processes run them. A run stopped between checkpoints resumes exactly (:func:`train_best_response` resumes
a checkpoint of the same recipe it finds in its run folder).
"""

from __future__ import annotations

import os
from typing import Annotated

import torch
from pydantic import ConfigDict, Field

from agents.base import make_agent
from agents.network import PolicyNet, load_tensors
from training.learn.ppo import (
    CHECKPOINT_FORMAT,
    PROGRAM_TABLES,
    PositiveInt,
    PPOArgs,
    RunState,
    TrainingInterrupted,
    resumable,
    train_run,
)
from training.options import DeviceName, Options, PresetName

#: The standard budget: learner decisions (see docs/strength.md for why decisions, not minutes).
STANDARD_DECISIONS = 600_000
#: Updates between checkpoints: about 65 k decisions, minutes even against the slowest target (a searching
#: CFR blueprint takes some 125 decisions/s on two cores).
CHECKPOINT_EVERY = 4


class BRArgs(Options):
    """The best-response recipe. Only ``preset``, ``target``, the budget, ``seed`` and ``workers`` are set from the
    command line; the rest is the fixed recipe every target faces. Typed and checked on construction (a bad
    budget or size is a one-line ValueError naming it); frozen, since a recipe is a cache key."""

    model_config = ConfigDict(**{**Options.model_config, "frozen": True})

    preset: PresetName
    """Rules preset of the matches."""
    target: str
    """Agent spec of the frozen target (``heuristic``, ``ppo:argentine``, ``cfr:PATH``, ``onnx:PATH``, ...)."""
    decisions: PositiveInt = STANDARD_DECISIONS
    """Budget in learner decisions; training stops at the first update past it."""
    seed: Annotated[int, Field(ge=0)] = 0
    """Seeds the deals, the learner's initial weights and sampling, and the target's draws."""
    workers: PositiveInt = 2
    """Processes that run the collection partitions (does not change the result)."""
    device: DeviceName = "auto"
    """Where the learner's update runs (:attr:`training.learn.ppo.PPOArgs.device`); not part of the recipe's key."""
    partitions: PositiveInt = 2
    """Independent collection partitions, each with its own tables and seed."""
    tables: PositiveInt = 128
    """Matches played at once per partition."""
    batch_decisions: PositiveInt = 16_384
    """Learner decisions per update (whole matches, so slightly more)."""
    hidden: tuple[PositiveInt, ...] = (256, 256)
    """Hidden layers of the learner's network and of its critic (:class:`agents.network.PolicyNet`)."""
    learning_rate: Annotated[float, Field(gt=0)] = 1e-3
    """Adam's initial step size, annealed linearly to 0 over the budget."""
    update_epochs: PositiveInt = 4
    """Passes over each batch."""
    minibatch_size: PositiveInt = 1024
    """Decisions per gradient step."""
    clip_coef: Annotated[float, Field(gt=0)] = 0.2
    """PPO's ratio clip."""
    ent_coef: Annotated[float, Field(ge=0)] = 0.01
    """Entropy bonus: smaller than self-play's, since a best response may be near-deterministic."""
    vf_coef: Annotated[float, Field(ge=0)] = 0.5
    """Weight of the value losses."""
    max_grad_norm: Annotated[float, Field(gt=0)] = 0.5
    """Gradient norm clip."""
    gae_lambda: Annotated[float, Field(ge=0, le=1)] = 0.95
    """GAE's lambda (gamma is 1: a match is short and its result is what counts)."""
    shaping: Annotated[float, Field(ge=0)] = 1.0
    """Weight of the potential-based hand-points shaping (match presets)."""

    def ppo_args(self, run_dir: str) -> PPOArgs:
        """The trainer's options for this recipe: a league of the target alone, nothing else. A target that runs
        an outside program sits at :data:`~training.learn.ppo.PROGRAM_TABLES` tables per partition, one program each:
        the same updates of the same size, collected from fewer matches at once."""
        programs = make_agent(self.target).starts_program
        return PPOArgs(
            preset=self.preset, run_dir=run_dir, seed=self.seed, total_decisions=self.decisions,
            batch_decisions=self.batch_decisions, partitions=self.partitions,
            tables=min(self.tables, PROGRAM_TABLES) if programs else self.tables,
            backend="local" if self.workers == 1 else "processes", device=self.device, hidden=self.hidden,
            learning_rate=self.learning_rate, update_epochs=self.update_epochs, minibatch_size=self.minibatch_size,
            clip_coef=self.clip_coef, ent_coef=self.ent_coef, vf_coef=self.vf_coef,
            max_grad_norm=self.max_grad_norm, gae_lambda=self.gae_lambda, shaping=self.shaping,
            self_play=0.0, snapshots=0.0, scripted={self.target: 1.0}, eval_every=0, eval_opponents=(),
            checkpoint_every=CHECKPOINT_EVERY)


def train_best_response(args: BRArgs, run_dir: str, progress: bool = True) -> tuple[PolicyNet, RunState, str]:
    """Train the learner of ``args`` in ``run_dir`` (its checkpoint and TensorBoard logs) until the budget is
    spent, or Ctrl-C ends it after the current update. A checkpoint of the same recipe already in ``run_dir`` is
    resumed, exactly; any other run there is replaced. Returns the learner, its progress and ``"complete"`` or
    ``"interrupted"``; a second Ctrl-C raises KeyboardInterrupt."""
    options = args.ppo_args(run_dir)
    resume = resumable(options)
    # One torch thread for the update as for collection: a batch of this size gains little from a second one,
    # and torch's threads spin-wait when another process holds a core (beside two other runs on two cores: 3,511
    # decisions/s on one thread, 2,541 on two); the learner is also the same on a machine of any core count.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _, state = train_run(options, resume=resume, progress_bar=progress, overwrite=not resume)
    except TrainingInterrupted as stopped:
        if stopped.checkpoint is None or stopped.progress is None:
            raise KeyboardInterrupt from None  # stopped before its first update ended: nothing to show
        state = stopped.progress
    finally:
        torch.set_num_threads(threads)
    # a Ctrl-C in the last update stops the measurement too, before its evaluation (it may have spent the budget)
    status = "complete" if state.decisions >= args.decisions and not state.stopped else "interrupted"
    return read_checkpoint(options), state, status


def read_checkpoint(options: PPOArgs) -> PolicyNet:
    """The learner's network in the checkpoint the trainer of ``options`` wrote last (at its last update)."""
    tensors, _ = load_tensors(os.path.join(options.run_dir, "checkpoint.safetensors"), CHECKPOINT_FORMAT)
    net = PolicyNet(**options.shapes, hidden=options.hidden, features=options.features, tally_film=options.tally_film)
    net.load_state_dict({k[len("net."):]: v for k, v in tensors.items() if k.startswith("net.")})
    return net.eval()

