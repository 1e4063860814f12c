"""PPOAgent: plays a trained PPO policy (``ppo:PATH`` or a shipped policy by name, ``ppo:argentine``).

``ppo:PATH,greedy`` takes the most probable legal action, ``ppo:PATH,sample`` draws from the policy; without
either, the policy's own ``play`` metadata decides (the training config's ``play`` option, recorded in the
policy file), and a policy without it samples. The policy file is safetensors with JSON metadata
(:mod:`agents.network`): loading it never unpickles anything.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from .base import MAX_PATH_ECHO, PLAY_MODES, SHIPPED_DIR, Agent, echo, register_agent, sample_rows
from .network import PolicyFileError, PolicyNet, load_policy


def shipped_policies() -> list[str]:
    """Names of the policies shipped inside the package (``ppo:<name>``)."""
    if not os.path.isdir(SHIPPED_DIR):
        return []
    return sorted(f[4:-12] for f in os.listdir(SHIPPED_DIR) if f.startswith("ppo_") and f.endswith(".safetensors"))


def policy_path(arg: str) -> str:
    """A policy file path as given, or the shipped policy of that name (``argentine`` or, as the agent spec
    writes it, ``ppo:argentine``; ``gauntlet/argentine-br-heuristic`` for the held-out gauntlet's networks)
    when no such file exists."""
    if os.path.exists(arg):
        return arg
    name = arg.removeprefix("ppo:")
    if name in shipped_policies():
        return os.path.join(SHIPPED_DIR, f"ppo_{name}.safetensors")
    packaged = os.path.join(SHIPPED_DIR, f"{name}.safetensors")
    if "/" in name and ".." not in name.split("/") and os.path.isfile(packaged):
        return packaged
    return arg


class PPOAgent(Agent):
    """Samples from (or, with ``greedy=True``, takes the argmax of) the masked policy."""

    batched = True

    def __init__(self, net: PolicyNet, greedy: bool = False, seed: int | None = None, metadata: dict | None = None):
        self.net = net.eval()
        self.greedy = greedy
        self.metadata = metadata or {}
        self.presets = tuple(self.metadata["presets"]) if self.metadata.get("presets") else None
        self.observation_width = net.obs_size
        self._rng = np.random.default_rng(seed)

    def seed(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if not mask.any():
            raise ValueError("PPOAgent.act: the action mask has no legal action")
        with torch.no_grad():
            probs = self.net.probabilities(torch.as_tensor(observation["observation"])[None],
                                           torch.as_tensor(mask)[None])[0].double().numpy()
        if self.greedy:
            return int(np.argmax(probs))
        probs = np.where(mask, probs, 0.0)
        return int(self._rng.choice(len(probs), p=probs / probs.sum()))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        legal = np.asarray(masks) > 0
        with torch.no_grad():
            probs = self.net.probabilities(torch.as_tensor(observations), torch.as_tensor(legal)).double().numpy()
        if self.greedy:
            return np.argmax(probs, axis=1)
        return sample_rows(np.where(legal, probs, 0.0), self._rng)


def _factory(arg: str | None, params: dict[str, str]) -> Agent:
    if arg is None:
        raise ValueError(f"agent 'ppo' needs a policy: ppo:PATH.safetensors or one of the shipped names "
                         f"{shipped_policies()}")
    mode = None
    if "," in arg:
        arg, _, mode = arg.partition(",")
        mode = mode.strip()
        if mode not in PLAY_MODES:
            raise ValueError(f"agent spec {echo('ppo:' + arg, MAX_PATH_ECHO)}: the option after the path must be "
                             f"'greedy' or 'sample', got {echo(mode)}")
    try:
        net, meta = load_policy(policy_path(arg))
    except PolicyFileError as err:
        raise ValueError(f"agent 'ppo': {err}; shipped policies: {shipped_policies()}") from None
    mode = mode or meta.get("play", "sample")
    return PPOAgent(net, greedy=mode == "greedy", metadata=meta)


register_agent("ppo", _factory)
