"""``truco train distill --config configs/distill/<preset>.yaml``: a network that plays as a searching agent plays,
at the cost of one forward pass.

Why: ``search:SPEC`` (docs/search.md) thinks for 5 to 25 ms a decision on this project's machine, and a best
response trains against its target for 600,000 decisions: days for the three learners the report trains. The
search's choices are learnable, though (they are a function of the seat's view and a few thousand draws), so a
network fitted to them carries the search's play at a network's speed and can be measured like any policy.

The run, top to bottom:

1. **Collect.** The teacher plays matches against itself at every seat, in chunks of ``chunk_matches``, each match
   seeded from ``seed`` and its chunk's index. At every decision of every seat the seat's observation (its nonzero
   entries), its legal actions and the teacher's action are kept. Each chunk is one task (``workers`` processes)
   and one file ``RUN/chunks/<index>.npz`` written when it finishes: a stopped run goes on from the chunks it
   lacks, and a chunk is the same whichever process plays it.
2. **Train.** The student starts as ``init``'s network (the teacher's own blueprint) and learns the teacher's
   actions by cross-entropy, ``epochs`` passes in minibatches. The last ``holdout`` share of the chunks is kept
   out of training: the student's agreement with the teacher there (and the blueprint's, before training) is the
   run's figure.
3. **Write** ``RUN/policy.safetensors`` (the PPO policy format: ``ppo:RUN/policy.safetensors`` plays it, greedily,
   and ``truco exploit``, ``truco report`` measure it) and ``RUN/distill.json`` with the figures.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import random
import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import torch
from pydantic import Field

from agents.base import Agent, make_agent
from training.atomic import atomic_write_json
from training.measure.evaluate import play_match
from training.options import Options, PresetName
from training.outputs import hold
from training.workers import spawn_pool
from truco_env.config import make_config

logger = logging.getLogger(__name__)


class DistillArgs(Options):
    """One distillation run: the teacher, the student's start, how much to collect and how to fit."""

    preset: PresetName = "paulista"
    """The rules the teacher plays."""
    teacher: str = "search:ppo:paulista"
    """The searching agent whose choices are learnt (docs/search.md)."""
    init: str = "ppo:paulista"
    """The student's starting network, a ``ppo:`` spec (the teacher's blueprint)."""
    matches: Annotated[int, Field(ge=1)] = 4000
    """Matches the teacher plays against itself."""
    chunk_matches: Annotated[int, Field(ge=1)] = 50
    """Matches per chunk: the unit of work, of a file and of resuming."""
    holdout: Annotated[float, Field(gt=0, lt=1)] = 0.1
    """Share of the chunks (the last ones) kept out of training to measure agreement."""
    epochs: Annotated[int, Field(ge=1)] = 3
    """Passes over the training decisions."""
    learning_rate: Annotated[float, Field(gt=0)] = 1e-4
    """Adam's step size (small: the student starts as the blueprint, which agrees with most choices)."""
    minibatch_size: Annotated[int, Field(ge=1)] = 1024
    """Decisions per gradient step."""
    seed: Annotated[int, Field(ge=0)] = 1
    """Seeds the matches, the order of the minibatches and nothing else: the same seed gives the same run."""
    workers: Annotated[int, Field(ge=1)] = 2
    """Processes that collect chunks (the data do not depend on it)."""
    run_dir: str = "runs/distill/paulista"
    """Where the chunks, the policy and distill.json go."""


class Recorder(Agent):
    """Plays as ``agent`` and keeps each decision: the observation's nonzero entries, the mask and the action."""

    def __init__(self, agent: Agent, rows: list):
        self.agent, self.rows, self.wants = agent, rows, agent.wants

    def seed(self, seed: int | None = None) -> None:
        self.agent.seed(seed)

    def reset(self, seat: int | None = None) -> None:
        self.agent.reset(seat)

    def act(self, observation: dict[str, Any]) -> int:
        action = int(self.agent.act(observation))
        obs = np.asarray(observation["observation"], dtype=np.float32)
        index = np.flatnonzero(obs)
        self.rows.append((index.astype(np.int16), obs[index], np.asarray(observation["action_mask"], np.int8), action))
        return action


def collect_chunk(args: dict, index: int) -> dict[str, np.ndarray]:
    """The decisions of chunk ``index`` (module docstring, 1), as flat arrays."""
    options = DistillArgs(**args)
    config = make_config(options.preset)
    rows: list = []
    seats = [Recorder(make_agent(options.teacher), rows) for _ in range(config.num_players)]
    for match in range(options.chunk_matches):
        seed = random.Random(f"truco-distill:{options.seed}:{index}:{match}").getrandbits(48)
        for seat, agent in enumerate(seats):
            agent.seed(random.Random(f"{seed}:{seat}").getrandbits(32))
            agent.reset(seat)
        play_match(config, seats, seed)
    return {"counts": np.array([len(r[0]) for r in rows], dtype=np.int32),
            "index": np.concatenate([r[0] for r in rows]), "value": np.concatenate([r[1] for r in rows]),
            "masks": np.stack([r[2] for r in rows]), "actions": np.array([r[3] for r in rows], dtype=np.int64)}


def _collect_one(job: tuple[dict, int, str]) -> int:
    args, index, path = job
    data = collect_chunk(args, index)
    temporary = f"{path}.{os.getpid()}.tmp.npz"
    np.savez_compressed(temporary, **data)
    os.replace(temporary, path)
    return index


def collect(options: DistillArgs, progress: bool = True) -> list[Path]:
    """Every chunk's file, playing those missing (module docstring, 1)."""
    folder = Path(options.run_dir) / "chunks"
    folder.mkdir(parents=True, exist_ok=True)
    count = -(-options.matches // options.chunk_matches)
    paths = [folder / f"{index:05d}.npz" for index in range(count)]
    jobs = [(options.model_dump(), index, str(path)) for index, path in enumerate(paths) if not path.exists()]
    if jobs:
        started = time.monotonic()
        say = logger.info if progress else (lambda *a, **k: None)
        say(f"distill: collecting {len(jobs)} of {count} chunks of {options.chunk_matches} matches "
            f"({options.teacher} against itself, {options.workers} worker(s))")
        if options.workers == 1:
            done = map(_collect_one, jobs)
        else:
            pool = spawn_pool(options.workers)
            done = pool.imap_unordered(_collect_one, jobs)
        for k, index in enumerate(done, 1):
            say(f"  chunk {index} done ({k}/{len(jobs)}, {time.monotonic() - started:.0f} s)")
        if options.workers > 1:
            pool.close()
            pool.join()
    return paths


def load_chunks(paths: list[Path], obs_size: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Dense observations, boolean masks and actions of the decisions in ``paths``."""
    parts = [np.load(path) for path in paths]
    counts = np.concatenate([p["counts"] for p in parts])
    obs = np.zeros((len(counts), obs_size), dtype=np.float32)
    rows = np.repeat(np.arange(len(counts)), counts)
    obs[rows, np.concatenate([p["index"] for p in parts]).astype(np.int64)] = np.concatenate([p["value"] for p in parts])
    masks = np.concatenate([p["masks"] for p in parts]) > 0
    actions = np.concatenate([p["actions"] for p in parts])
    return torch.from_numpy(obs), torch.from_numpy(masks), torch.from_numpy(actions)


def agreement(net: torch.nn.Module, obs: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor) -> float:
    """The share of decisions where the network's most probable action is the teacher's."""
    with torch.no_grad():
        logits, _ = net(obs, masks)
    return float((logits.argmax(1) == actions).float().mean())


def train_distill(options: DistillArgs, progress: bool = True) -> dict[str, Any]:
    """The whole run (module docstring); returns what ``distill.json`` holds."""
    from agents.network import PolicyNet
    from training.learn.ppo import save_policy

    if not options.teacher.startswith("search:"):
        raise ValueError(f"teacher {options.teacher[:80]!r} is no searching agent; give a search:SPEC")
    make_agent(options.teacher)  # a teacher that cannot play is refused before anything is written
    start = make_agent(options.init)
    if not isinstance(getattr(start, "net", None), PolicyNet):
        raise ValueError(f"init {options.init!r} is no network to start from; give a ppo: policy")
    with hold(options.run_dir, f"the distillation run {options.run_dir!r}"):
        paths = collect(options, progress)
        kept = max(1, round(len(paths) * options.holdout))
        if kept >= len(paths):
            raise ValueError(f"{len(paths)} chunk(s) leave none to train on after holding {kept} out; collect more "
                             "matches or smaller chunks")
        net = copy.deepcopy(start.net).train()
        obs, masks, actions = load_chunks(paths[:-kept], net.obs_size)
        test = load_chunks(paths[-kept:], net.obs_size)
        before = agreement(net, *test)
        generator = torch.Generator().manual_seed(options.seed)
        optimizer = torch.optim.Adam(net.parameters(), lr=options.learning_rate)
        for epoch in range(options.epochs):
            order = torch.randperm(len(actions), generator=generator)
            for lo in range(0, len(order), options.minibatch_size):
                batch = order[lo:lo + options.minibatch_size]
                logits, _ = net(obs[batch], masks[batch])
                loss = torch.nn.functional.cross_entropy(logits, actions[batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            if progress:
                logger.info(f"  epoch {epoch + 1}: loss {loss.item():.4f}, held-out agreement "
                            f"{agreement(net, *test):.4f}")
        net.eval()
        summary = {"teacher": options.teacher, "init": options.init, "decisions": len(actions),
                   "held_out_decisions": len(test[2]), "agreement_before": before,
                   "agreement_after": agreement(net, *test), "config": options.model_dump()}
        save_policy(net, os.path.join(options.run_dir, "policy.safetensors"), presets=[options.preset],
                    play="greedy", config=options.model_dump(), distilled=summary)
        atomic_write_json(Path(options.run_dir) / "distill.json", summary)
    if progress:
        logger.info(json.dumps({k: v for k, v in summary.items() if k != "config"}))
    return summary
