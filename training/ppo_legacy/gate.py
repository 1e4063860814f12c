"""Fit the gate of an opponent-gated policy (``model.GatedPolicy``): ``truco train gate --config FILE.yaml``.

Each expert is a trained PPO policy meant for one opponent (``experts: {random: FILE, heuristic: FILE}``). Every
expert plays the learner seats on the vector environment against a league of those opponents, weighted by
``prior``; the gate, a small MLP over the observation's ``match_tally``, learns to tell from the tally whom the
table faces (cross-entropy on the opponent of each recorded decision). The experts' weights are not touched.
The recorded seat trajectories (one learner seat's decisions in one match; in 2v2 the two partners' trajectories
of a match may fall on either side) are split into a training and a held-out part; the held-out accuracy, by how
many decisions the opponents have made so far, is printed and kept in the policy's metadata, since the gate's
early mistakes are where the mixture plays the wrong expert.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from truco_env.config import PRESETS
from truco_env.encoding import tally_decisions

from .model import GatedPolicy, PolicyFileError, PolicyNet, load_policy, save_policy
from .selfplay import League, collect_on_vector_env
from .train import reject_unknown_options

#: Held-out accuracy is reported for these ranges of the opponents' decisions in the match so far.
DECISION_BUCKETS = ((0, 3), (3, 10), (10, 25), (25, 50), (50, 10 ** 9))


@dataclass
class GateArgs:
    """Every knob of a gate fit; YAML configs and ``--set key=value`` overrides fill it."""

    preset: str = "argentine"
    """rules preset the experts play"""
    run_dir: str = "runs/gate"
    """where the gated policy (``policy.safetensors``) goes"""
    seed: int = 1
    """seeds the matches, the split and the gate's initialisation"""
    experts: dict[str, str] = field(default_factory=dict)
    """per opponent agent spec, the policy file (or shipped name) that plays against it, e.g.
    ``{random: runs/x/policy.safetensors, heuristic: runs/y/policy.safetensors}``"""
    prior: dict[str, float] = field(default_factory=dict)
    """how often each opponent is met in the gate's data, so its prior where the tally says nothing (empty:
    even). A higher weight on random makes the mixture play the random expert's sound game for longer"""
    decisions: int = 100_000
    """learner decisions recorded per expert"""
    num_tables: int = 64
    """matches played at once while recording"""
    hidden: int = 32
    """width of the gate's hidden layer"""
    epochs: int = 20
    """passes over the training part"""
    minibatch: int = 1024
    """decisions per gradient step"""
    learning_rate: float = 1e-3
    """Adam step size"""
    holdout: float = 0.2
    """share of the recorded seat trajectories kept out of training to measure the gate"""
    torch_threads: int = 1
    """CPU threads for torch (fixed, so that fits are reproducible)"""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GateArgs:
        reject_unknown_options(cls, data, "gate")
        return cls(**data)

    def validate(self) -> None:
        """ValueError naming the option that is wrong and what is allowed."""
        if self.preset not in PRESETS:
            raise ValueError(f"gate option 'preset': {self.preset!r} is not a preset; choose one of {sorted(PRESETS)}")
        if not isinstance(self.experts, dict) or len(self.experts) < 2:
            raise ValueError("gate option 'experts': give at least two, as {opponent spec: policy file}, e.g. "
                             "{random: runs/a/policy.safetensors, heuristic: runs/b/policy.safetensors}")
        if "self" in self.experts or "snapshot" in self.experts:
            raise ValueError("gate option 'experts': the opponents must be agent specs (random, heuristic, ...), "
                             "not 'self' or 'snapshot'")
        if set(self.prior) - set(self.experts) or any(not w > 0 for w in self.prior.values()):
            raise ValueError(f"gate option 'prior': positive weights for some of the experts' opponents "
                             f"{list(self.experts)}, got {self.prior}")
        for name in ("decisions", "num_tables", "hidden", "epochs", "minibatch"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"gate option {name!r} must be a positive integer, got {getattr(self, name)!r}")
        if not 0.0 < self.holdout < 1.0:
            raise ValueError(f"gate option 'holdout' must lie strictly between 0 and 1, got {self.holdout}")
        if not self.learning_rate > 0:
            raise ValueError(f"gate option 'learning_rate' must be positive, got {self.learning_rate}")


def load_experts(args: GateArgs) -> dict[str, tuple[PolicyNet, dict[str, Any]]]:
    """Each opponent's expert network and metadata; ValueError naming a file that is missing or not a plain
    policy (a gated policy cannot be an expert)."""
    from agents.ppo import policy_path, shipped_policies

    experts = {}
    for opponent, path in args.experts.items():
        try:
            net, meta = load_policy(policy_path(path))
        except PolicyFileError as err:
            raise ValueError(f"gate option 'experts' ({opponent}): {err}; give a policy file (run its config "
                             f"first) or a shipped name {shipped_policies()}") from None
        if not isinstance(net, PolicyNet):
            raise ValueError(f"gate option 'experts' ({opponent}): {path} is itself a gated policy; experts are "
                             "plain policies")
        if args.preset not in meta.get("presets", []):
            raise ValueError(f"gate option 'experts' ({opponent}): {path} was trained on {meta.get('presets')}, "
                             f"not on {args.preset!r}")
        experts[opponent] = (net, meta)
    return experts


def record_tallies(args: GateArgs, experts: dict[str, PolicyNet], rng: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations of every expert's decisions against the league of the experts' opponents, the index of the
    opponent faced at each, and the seat trajectory each belongs to (a running number, for the held-out split)."""
    from truco_env.config import make_config

    config = make_config(args.preset)
    opponents = list(args.experts)
    league = League({o: args.prior.get(o, 1.0) for o in opponents}, "uniform")
    obs, labels, matches = [], [], []
    for net in experts.values():
        task = league.task(config, args.num_tables, args.decisions, int(rng.integers(2 ** 62)), 0.0, args.preset)
        generator = torch.Generator().manual_seed(int(rng.integers(2 ** 62)))
        trajectories, _ = collect_on_vector_env(task, net, [], np.random.default_rng(task.seed), generator)
        for t in trajectories:
            obs.append(t.obs)
            labels.append(np.full(len(t.obs), opponents.index(t.opponent)))
            matches.append(np.full(len(t.obs), len(matches)))
    return np.concatenate(obs), np.concatenate(labels), np.concatenate(matches)


def fit_gate(net: GatedPolicy, obs: np.ndarray, labels: np.ndarray, args: GateArgs,
             rng: np.random.Generator) -> None:
    """Cross-entropy of the gate's opponent logits on ``labels``; only the gate's weights move."""
    optimizer = torch.optim.Adam(net.gate.parameters(), lr=args.learning_rate)
    x, y = torch.from_numpy(obs), torch.from_numpy(labels)
    order = np.arange(len(y))
    for _epoch in range(args.epochs):
        rng.shuffle(order)
        for start in range(0, len(order), args.minibatch):
            mb = torch.from_numpy(order[start:start + args.minibatch])
            loss = nn.functional.cross_entropy(net.gate_logits(x[mb]), y[mb])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def gate_accuracy(net: GatedPolicy, obs: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Share of decisions whose most likely opponent is the real one: overall and per ``DECISION_BUCKETS`` of
    the opponents' decisions so far."""
    with torch.no_grad():
        guess = net.gate_logits(torch.from_numpy(obs)).argmax(-1).numpy()
    right = guess == labels
    decisions = tally_decisions(obs, row=1)
    report = {"all": float(right.mean())}
    for low, high in DECISION_BUCKETS:
        rows = (decisions >= low) & (decisions < high)
        if rows.any():
            report[f"{low}-{high - 1}" if high < 10 ** 9 else f"{low}+"] = float(right[rows].mean())
    return report


def train_gate(args: GateArgs, progress: bool = True) -> str:
    """Record, fit, measure and write ``run_dir/policy.safetensors``; returns its path."""
    args.validate()
    loaded = load_experts(args)
    torch.set_num_threads(args.torch_threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    experts = {o: net for o, (net, _) in loaded.items()}
    net = GatedPolicy(experts, args.hidden)
    obs, labels, matches = record_tallies(args, experts, rng)
    held_out = np.isin(matches, rng.permutation(matches.max() + 1)[:max(1, int(args.holdout * (matches.max() + 1)))])
    fit_gate(net, obs[~held_out], labels[~held_out], args, rng)
    accuracy = gate_accuracy(net, obs[held_out], labels[held_out])
    if progress:
        print(f"gate over {list(experts)}: {len(labels)} decisions; held-out accuracy by the opponents' decisions "
              "so far: " + ", ".join(f"{k} {v:.1%}" for k, v in accuracy.items()), flush=True)
    os.makedirs(args.run_dir, exist_ok=True)
    path = os.path.join(args.run_dir, "policy.safetensors")
    save_policy(net.eval(), path, presets=[args.preset], training=dataclasses.asdict(args), gate_accuracy=accuracy,
                experts={o: {"training": meta.get("training", {}), "updates": meta.get("updates")}
                         for o, (_, meta) in loaded.items()})
    return path
