"""OnnxAgent: plays an exported policy through onnxruntime and numpy alone (``onnx:PATH.onnx``).

``onnx:PATH.onnx,greedy`` or ``,sample`` chooses how; without either, ``play.mode`` of the metadata JSON beside
the model decides (as ``ppo:`` does with the policy's metadata), and sampling when there is none.

Importing this module never imports torch, so a front end or a tournament host without torch can use it.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from .base import PLAY_MODES, Agent, register_agent, sample_rows


class OnnxAgent(Agent):
    """Samples from (or with ``greedy=True`` takes the argmax of) the exported masked probabilities."""

    batched = True

    def __init__(self, path: str, greedy: bool = False, seed: int | None = None):
        try:
            import onnxruntime as ort
        except ImportError:
            raise ValueError("agent 'onnx' needs onnxruntime: pip install 'truco-rl[export]'") from None
        if not os.path.isfile(path):
            raise ValueError(f"agent 'onnx': no such model file {path!r}")
        try:
            self.session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        except Exception as err:  # noqa: BLE001  # onnxruntime raises its own error types
            raise ValueError(f"agent 'onnx': {path} is not a loadable ONNX model ({str(err)[:120]})") from None
        names = {i.name for i in self.session.get_inputs()}
        if names != {"observation", "action_mask"}:
            raise ValueError(f"agent 'onnx': {path} has inputs {sorted(names)}, expected observation, action_mask")
        width = next(i for i in self.session.get_inputs() if i.name == "observation").shape[-1]
        self._obs_size = width if isinstance(width, int) else None  # an older layout's model reads a prefix
        self.greedy = greedy
        self.presets = tuple(_metadata(path).get("presets") or ()) or None
        self._rng = np.random.default_rng(seed)

    def seed(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Batched masked probabilities for ``[batch, obs]`` observations and ``[batch, actions]`` masks."""
        observations = np.asarray(observations, dtype=np.float32)
        if self._obs_size is not None and observations.shape[-1] > self._obs_size:
            observations = observations[..., :self._obs_size]
        probs, _ = self.session.run(["probabilities", "value"], {
            "observation": observations,
            "action_mask": np.asarray(masks, dtype=np.int8)})
        return probs

    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"], dtype=np.int8)
        if not mask.any():
            raise ValueError("OnnxAgent.act: the action mask has no legal action")
        probs = self.probabilities(np.asarray(observation["observation"])[None], mask[None])[0].astype(np.float64)
        if self.greedy:
            return int(np.argmax(probs))
        probs = np.where(mask > 0, probs, 0.0)
        return int(self._rng.choice(len(probs), p=probs / probs.sum()))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        probs = self.probabilities(observations, masks).astype(np.float64)
        if self.greedy:
            return np.argmax(probs, axis=1)
        return sample_rows(np.where(np.asarray(masks) > 0, probs, 0.0), self._rng)


def _factory(arg: str | None, params: dict[str, str]) -> Agent:
    if arg is None:
        raise ValueError("agent 'onnx' needs a model: onnx:PATH.onnx (made by 'truco export ppo')")
    path, _, option = arg.partition(",")
    mode = option.strip() or _recorded_play_mode(path)
    if mode not in PLAY_MODES:
        raise ValueError(f"agent spec 'onnx:{arg}': the option after the path must be 'greedy' or 'sample'")
    return OnnxAgent(path, greedy=mode == "greedy")


def _metadata(model_path: str) -> dict:
    """The export's metadata JSON beside the model, or {} when it is missing or unreadable."""
    try:
        with open(os.path.splitext(model_path)[0] + ".json", encoding="utf-8") as handle:
            meta = json.load(handle)
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _recorded_play_mode(model_path: str) -> str:
    """``play.mode`` from the export's metadata JSON, or ``sample`` when it is missing or unreadable."""
    play = _metadata(model_path).get("play", {})
    mode = play.get("mode", "sample") if isinstance(play, dict) else "sample"
    return mode if mode in PLAY_MODES else "sample"


register_agent("onnx", _factory)
