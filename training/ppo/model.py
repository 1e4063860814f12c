"""The masked actor-critic network and its safe file format.

Why masking in the logits: an illegal action gets logit -inf, so its probability is exactly 0 both when sampling
and in the PPO loss (no probability mass is wasted on it and no gradient flows through it).

Why safetensors + JSON: policies travel between strangers, and a pickle can run code when loaded. A policy file
is ``NAME.safetensors`` (tensors only) with its metadata (architecture, observation layout version, presets,
training config) stored as JSON inside the safetensors header; nothing is ever unpickled.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from training.atomic import atomic_write
from truco_env import actions as A
from truco_env.encoding import OBSERVATION_SIZE, OBSERVATION_VERSION

FORMAT = "truco-rl-ppo-policy"
FORMAT_VERSION = 1


class PolicyNet(nn.Module):
    """An MLP trunk shared by a policy head over every action and a value head."""

    def __init__(self, obs_size: int = OBSERVATION_SIZE, num_actions: int = A.NUM_ACTIONS,
                 hidden: tuple[int, ...] = (256, 256)):
        super().__init__()
        self.obs_size, self.num_actions, self.hidden = obs_size, num_actions, tuple(hidden)
        layers: list[nn.Module] = []
        width = obs_size
        for size in self.hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, num_actions)
        self.value = nn.Linear(width, 1)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.value.bias)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits (illegal = -inf) and state values."""
        features = self.trunk(obs)
        logits = self.policy(features).masked_fill(~mask, float("-inf"))
        return logits, self.value(features).squeeze(-1)

    def probabilities(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits, _ = self(obs, mask)
        return torch.softmax(logits, dim=-1)

    def architecture(self) -> dict[str, Any]:
        return {"obs_size": self.obs_size, "num_actions": self.num_actions, "hidden": list(self.hidden)}


def masked_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of a masked categorical (the -inf entries contribute 0, not NaN)."""
    log_probs = torch.log_softmax(logits, dim=-1)
    probs = log_probs.exp()
    return -(probs * torch.where(torch.isfinite(log_probs), log_probs, torch.zeros_like(log_probs))).sum(-1)


class PolicyFileError(ValueError):
    """A policy or checkpoint file that is missing, corrupt, of another format, or does not match."""


def atomic_save_tensors(tensors: dict[str, torch.Tensor], metadata: dict[str, Any], path: str) -> None:
    """Write a safetensors file atomically (temp file + rename): an interrupted save never corrupts ``path``."""
    contiguous = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    atomic_write(path, lambda tmp: save_file(contiguous, tmp, metadata={"json": json.dumps(metadata)}),
                 ".safetensors")


def load_tensors(path: str, expected_format: str) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read a safetensors file written by :func:`atomic_save_tensors`; PolicyFileError when it is not one."""
    if not os.path.isfile(path):
        raise PolicyFileError(f"{path}: no such policy or checkpoint file")
    try:
        tensors = load_file(path)
        from safetensors import safe_open

        with safe_open(path, framework="pt") as handle:
            header = handle.metadata() or {}
        metadata = json.loads(header.get("json", "{}"))
    except (SafetensorError, json.JSONDecodeError, OSError, ValueError) as err:
        raise PolicyFileError(f"{path}: not a truco-rl safetensors file ({str(err).splitlines()[0][:100]}); "
                              "policies are never unpickled") from None
    if metadata.get("format") != expected_format:
        raise PolicyFileError(f"{path}: format {metadata.get('format')!r}, expected {expected_format!r}")
    return tensors, metadata


def save_policy(net: PolicyNet, path: str, **metadata: Any) -> None:
    """Save a policy (weights + JSON metadata: architecture, observation version, presets, config)."""
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "architecture": net.architecture(),
            "observation_version": OBSERVATION_VERSION, "action_names_family_independent": True, **metadata}
    atomic_save_tensors(net.state_dict(), meta, path)


def load_policy(path: str) -> tuple[PolicyNet, dict[str, Any]]:
    """Load a policy file; PolicyFileError naming what is wrong (format, layout version, shapes)."""
    tensors, meta = load_tensors(path, FORMAT)
    if meta.get("observation_version") != OBSERVATION_VERSION:
        raise PolicyFileError(f"{path}: observation layout version {meta.get('observation_version')}, "
                              f"this truco-rl uses {OBSERVATION_VERSION}")
    arch = meta.get("architecture", {})
    try:
        net = PolicyNet(arch["obs_size"], arch["num_actions"], tuple(arch["hidden"]))
        net.load_state_dict(tensors)
    except (KeyError, TypeError, RuntimeError) as err:
        raise PolicyFileError(f"{path}: weights do not match the recorded architecture "
                              f"({str(err).splitlines()[0][:120]})") from None
    net.eval()
    return net, meta


def numpy_mask(mask: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(mask, dtype=torch.bool)
