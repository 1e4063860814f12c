"""Training-side pieces of the legacy PPO trainer: its critic, losses and the policy writer.

The network and the policy file reader moved to :mod:`agents.network`; they are imported here for the legacy
modules that still read them from this place.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from agents.network import (  # noqa: F401  (re-exported for the legacy modules)
    FEATURES,
    FORMAT,
    FORMAT_VERSION,
    STRENGTH_LEVELS,
    CardStrength,
    GatedPolicy,
    PolicyFileError,
    PolicyNet,
    _relu_layers,
    load_policy,
    load_tensors,
)
from training.atomic import atomic_save_tensors, atomic_write  # noqa: F401
from truco_env import cards as C
from truco_env.encoding import OBSERVATION_SIZE, OBSERVATION_VERSION, PRIVILEGED_SIZE

#: Whom the learner faces, as a privileged critic reads it (one slot each; other league agents share the last).
OPPONENT_KINDS = ("self", "snapshot", "random", "heuristic", "other")


def opponent_codes(labels: list[str]) -> torch.Tensor:
    """One-hot ``[len(labels), len(OPPONENT_KINDS)]`` of trajectory opponent labels (``Trajectory.opponent``)."""
    index = [OPPONENT_KINDS.index(x) if x in OPPONENT_KINDS else len(OPPONENT_KINDS) - 1 for x in labels]
    return nn.functional.one_hot(torch.tensor(index, dtype=torch.long), len(OPPONENT_KINDS)).float()


class Critic(nn.Module):
    """A training-only value network that also reads what the policy cannot: the other seats' unplayed cards
    (``encoding.encode_privileged``, with their strength levels) and whom the learner faces.

    Why: in a card game most of a hand's outcome is the deal; a value that knows the deal takes that luck out of
    each decision's advantage, so the policy gradient is much less noisy (the policy still reads only its own
    observation, so it stays a legal, exportable player). It lives in checkpoints, never in policy files."""

    def __init__(self, obs_size: int = OBSERVATION_SIZE, hidden: tuple[int, ...] = (256, 256),
                 features: str = "none"):
        super().__init__()
        self.obs_size = obs_size
        self.strength = CardStrength() if features == "card_strength" else None
        width = obs_size + PRIVILEGED_SIZE + len(OPPONENT_KINDS)
        if self.strength is not None:
            width += self.strength.size + (PRIVILEGED_SIZE // C.NUM_CARDS) * STRENGTH_LEVELS
        layers, width = _relu_layers(width, hidden)
        self.mlp = nn.Sequential(*layers, nn.Linear(width, 1))

    def forward(self, obs: torch.Tensor, privileged: torch.Tensor, opponent: torch.Tensor) -> torch.Tensor:
        obs = obs[:, :self.obs_size]
        parts = [obs, privileged, opponent]
        if self.strength is not None:
            hidden = privileged.reshape(len(privileged), -1, C.NUM_CARDS)
            parts += [self.strength(obs), self.strength.levels(obs, hidden)]
        return self.mlp(torch.cat(parts, 1)).squeeze(-1)


def masked_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of a masked categorical (the -inf entries contribute 0, not NaN)."""
    log_probs = torch.log_softmax(logits, dim=-1)
    probs = log_probs.exp()
    return -(probs * torch.where(torch.isfinite(log_probs), log_probs, torch.zeros_like(log_probs))).sum(-1)


def clipped_surrogate(logits: torch.Tensor, actions: torch.Tensor, old_logprobs: torch.Tensor,
                      advantages: torch.Tensor, clip: float, normalise: bool = True
                      ) -> tuple[torch.Tensor, dict[str, torch.Tensor | float]]:
    """PPO's clipped policy loss over one minibatch, and CleanRL's diagnostics of it (``old_approx_kl``,
    ``approx_kl``, ``clipfrac``); with ``normalise`` the advantages are standardised within the minibatch."""
    logprob = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
    log_ratio = logprob - old_logprobs
    ratio = log_ratio.exp()
    with torch.no_grad():
        stats = {"old_approx_kl": (-log_ratio).mean(), "approx_kl": ((ratio - 1) - log_ratio).mean(),
                 "clipfrac": ((ratio - 1.0).abs() > clip).float().mean().item()}
    if normalise and len(advantages) > 1:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    loss = torch.max(-advantages * ratio, -advantages * ratio.clamp(1 - clip, 1 + clip)).mean()
    return loss, stats


def save_policy(net: PolicyNet | GatedPolicy, path: str, **metadata: Any) -> None:
    """Save a policy (weights + JSON metadata: architecture, observation version, presets, config)."""
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "architecture": net.architecture(),
            "observation_version": OBSERVATION_VERSION, "action_names_family_independent": True, **metadata}
    atomic_save_tensors(net.state_dict(), meta, path)


def numpy_mask(mask: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(mask, dtype=torch.bool)
