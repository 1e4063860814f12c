"""Imitation warm start: before PPO, the network copies a teacher agent's decisions and learns their values.

Why: PPO from random weights spends most of its budget rediscovering what the heuristic already knows (which
card wins a trick, when a hand is worth a truco), and against random opponents it never quite catches up with
it. Starting from a copy of the heuristic -- cross-entropy on the teacher's choices over the legal actions, plus
the value of each decision under the run's reward -- PPO begins where the heuristic stands and spends its
updates on what the heuristic does not do: exploiting the opponent in front of it. The teacher plays the
learner seats against the run's own league (snapshots excepted: there are none yet), so the states it is
imitated on are the states PPO will meet.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from .model import Critic, PolicyNet
from .selfplay import League, advantages, collect_on_vector_env, critic_inputs


def teacher_data(args: Any, config: Any, rng: np.random.Generator) -> dict[str, torch.Tensor]:
    """``args.teacher_decisions`` decisions of ``args.teacher`` in the learner seats: observations, masks,
    the teacher's actions and the returns that followed them (under ``args.reward``); with a privileged critic
    (``args.critic``) also its inputs."""
    kinds = {k: w for k, w in args.league.items() if k != "snapshot"} or {"self": 1.0}
    league = League(kinds, args.league_sampling)
    task = league.task(config, args.num_tables, args.teacher_decisions, int(rng.integers(2 ** 62)),
                       args.points_reward, args.preset, args.reward, args.equity_edge,
                       args.critic == "privileged")
    generator = torch.Generator().manual_seed(int(rng.integers(2 ** 62)))
    trajectories, _ = collect_on_vector_env(task, None, [], np.random.default_rng(task.seed), generator,
                                            teacher=args.teacher)
    returns = [advantages(t, args.gamma, 1.0)[1] for t in trajectories]  # values are 0: return = advantage
    data = {
        "obs": torch.from_numpy(np.concatenate([t.obs for t in trajectories])),
        "masks": torch.from_numpy(np.concatenate([t.masks for t in trajectories])),
        "actions": torch.from_numpy(np.concatenate([t.actions for t in trajectories])),
        "returns": torch.from_numpy(np.concatenate(returns)),
    }
    if args.critic == "privileged":
        data["privileged"], data["opponent"] = critic_inputs(trajectories)
    return data


def imitate(net: PolicyNet, data: dict[str, torch.Tensor], epochs: int, minibatch: int, learning_rate: float,
            vf_coef: float, rng: np.random.Generator, critic: Critic | None = None,
            index: np.ndarray | None = None) -> dict[str, float]:
    """Fit the policy head to the teacher's actions and the value head (and ``critic``) to the returns, on the
    decisions in ``index`` (default: all); returns the final epoch's mean loss and the share of decisions where
    the network's most likely action is the teacher's. ``data["actions"]`` holds the teacher's action ids, or, as
    floats, one distribution over the actions per decision, fit by soft cross-entropy (``training.ppo_legacy.lookahead``)."""
    params = list(net.parameters()) + (list(critic.parameters()) if critic is not None else [])
    optimizer = torch.optim.Adam(params, lr=learning_rate, eps=1e-5)
    soft = data["actions"].is_floating_point()
    order = np.arange(len(data["actions"])) if index is None else np.array(index)
    count = len(order)
    stats: dict[str, float] = {}
    for _epoch in range(epochs):
        rng.shuffle(order)
        losses, agree = [], 0
        for start in range(0, count, minibatch):
            mb = torch.from_numpy(order[start:start + minibatch])
            logits, values = net(data["obs"][mb], data["masks"][mb])
            target = data["actions"][mb]
            if soft:  # illegal actions: a 0 target times a -inf log-probability, clamped so it stays 0
                policy_loss = -(target * torch.log_softmax(logits, -1).clamp_min(-1e4)).sum(1).mean()
                target = target.argmax(-1)
            else:
                policy_loss = nn.functional.cross_entropy(logits, target)
            value_loss = 0.5 * ((values - data["returns"][mb]) ** 2).mean()
            if critic is not None:
                value_loss = value_loss + 0.5 * ((critic(data["obs"][mb], data["privileged"][mb],
                                                         data["opponent"][mb]) - data["returns"][mb]) ** 2).mean()
            loss = policy_loss + vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            agree += int((logits.argmax(-1) == target).sum())
        stats = {"imitation/loss": float(np.mean(losses)), "imitation/agreement": agree / count,
                 "imitation/decisions": float(count)}
    return stats
