"""OnnxAgent: plays an exported policy through onnxruntime and numpy alone (``onnx:PATH.onnx``).

``onnx:PATH.onnx,greedy`` or ``,sample`` chooses how; without either, ``play.mode`` of the metadata JSON beside
the model decides (as ``ppo:`` does with the policy's metadata), and sampling when there is none.

Importing this module never imports torch, so a front end or a tournament host without torch can use it.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from truco_env.actions import NUM_ACTIONS, NUM_ACTIONS_SENAS
from truco_env.encoding import (
    OBSERVATION_SIZE,
    OBSERVATION_SIZE_SENAS,
    OBSERVATION_SIZE_URUGUAYAN,
    OBSERVATION_SIZES,
    reads_layout,
)
from truco_env.limits import MAX_METADATA_BYTES, clip, read_json

from .base import MAX_PATH_ECHO, PLAY_MODES, Agent, echo, register_agent, sample_rows


class OnnxAgent(Agent):
    """Samples from (or with ``greedy=True`` takes the argmax of) the exported masked probabilities."""

    batched = True

    def __init__(self, path: str, greedy: bool = False, seed: int | None = None):
        try:
            import onnxruntime as ort
        except ImportError:
            raise ValueError("agent 'onnx' needs onnxruntime: pip install 'truco-rl[export]'") from None
        if not os.path.isfile(path):
            raise ValueError(f"agent 'onnx': no such model file {echo(path, MAX_PATH_ECHO)}")
        try:
            options = ort.SessionOptions()
            options.log_severity_level = 3  # no onnxruntime warnings on stderr (a stranger's model: one error line)
            self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        except Exception as err:  # noqa: BLE001  # onnxruntime raises its own error types
            raise ValueError(f"agent 'onnx': {path} is not a loadable ONNX model "
                             f"({clip(str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__, 120)})"
                             ) from None
        # an older layout's model reads a prefix; a model without señas plays a game with them, never signalling
        self._obs_size, self._actions = _check_signature(path, self.session)
        self.observation_width = self._obs_size
        self.greedy = greedy
        self.presets = tuple(_metadata(path).get("presets") or ()) or None
        self._rng = np.random.default_rng(seed)

    def seed(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Batched masked probabilities for ``[batch, obs]`` observations and ``[batch, actions]`` masks."""
        observations = np.asarray(observations, dtype=np.float32)
        masks = np.asarray(masks, dtype=np.int8)
        if self._obs_size is not None and not reads_layout(self._obs_size, observations.shape[-1]):
            raise ValueError(f"agent 'onnx': the model reads {self._obs_size} observation values, this game gives "
                             f"{observations.shape[-1]} (a model made for señas or Uruguayan Truco plays only its "
                             "own kind of game)")
        observations = observations[..., :self._obs_size]
        probs, _ = self.session.run(["probabilities", "value"], {
            "observation": observations, "action_mask": masks[..., :self._actions]})
        extra = masks.shape[-1] - probs.shape[-1]
        return np.pad(probs, ((0, 0), (0, extra))) if extra > 0 else probs

    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"], dtype=np.int8)
        if not mask.any():
            raise ValueError("OnnxAgent.act: the action mask has no legal action")
        legal = mask[None] > 0
        probs = self.probabilities(np.asarray(observation["observation"])[None], mask[None]).astype(np.float64)
        probs = _legal_weights(probs, legal)[0]
        if self.greedy:
            return int(np.argmax(np.where(legal[0], probs, -1.0)))
        return int(self._rng.choice(len(probs), p=probs / probs.sum()))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        legal = np.asarray(masks) > 0
        probs = _legal_weights(self.probabilities(observations, masks).astype(np.float64), legal)
        if self.greedy:
            return np.argmax(np.where(legal, probs, -1.0), axis=1)
        return sample_rows(probs, self._rng)


def _legal_weights(probs: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """The model's weights on the legal actions; a row whose legal weights are all 0 (or not finite) becomes
    uniform over its legal actions. Why: a model from a stranger must never make the agent play an illegal action
    or divide by zero, whatever it outputs."""
    weights = np.where(legal, probs, 0.0)
    total = weights.sum(axis=1)
    broken = ~(np.isfinite(total) & (total > 0))
    weights[broken] = legal[broken]
    return weights


def _factory(arg: str | None, params: dict[str, str]) -> Agent:
    if arg is None:
        raise ValueError("agent 'onnx' needs a model: onnx:PATH.onnx (made by 'truco export ppo')")
    path, _, option = arg.partition(",")
    mode = option.strip() or _recorded_play_mode(path)
    if mode not in PLAY_MODES:
        raise ValueError(f"agent spec {echo('onnx:' + path, MAX_PATH_ECHO)}: the option after the path must be "
                         f"'greedy' or 'sample', got {echo(mode)}")
    return OnnxAgent(path, greedy=mode == "greedy")


def _check_signature(path: str, session: Any) -> tuple[int | None, int]:
    """The observation width the model reads (None: any) and its number of actions, after checking its inputs
    and outputs against this truco-rl: ``observation`` of a known layout's width, ``action_mask`` of one entry per
    action, and ``probabilities`` of one per action (checked on one probe row too, since a width can be
    symbolic), finite and summing to 1; 1,141 inputs and 106 actions for a model made for señas, 1,136 inputs for
    one made for Uruguayan Truco. Why at load: a
    model of another width would otherwise fail mid-match in numpy."""
    inputs = {i.name: i for i in session.get_inputs()}
    outputs = {o.name: o for o in session.get_outputs()}
    if set(inputs) != {"observation", "action_mask"}:
        raise ValueError(f"agent 'onnx': {path} has inputs {clip(sorted(inputs), 80)}, expected observation, "
                         "action_mask")
    if not {"probabilities", "value"} <= set(outputs):
        raise ValueError(f"agent 'onnx': {path} has outputs {clip(sorted(outputs), 80)}, expected probabilities, "
                         "value")
    width = inputs["observation"].shape[1] if len(inputs["observation"].shape or []) == 2 else None
    actions = NUM_ACTIONS_SENAS if width == OBSERVATION_SIZE_SENAS else NUM_ACTIONS
    widths = sorted({*OBSERVATION_SIZES.values(), OBSERVATION_SIZE_SENAS, OBSERVATION_SIZE_URUGUAYAN})
    expected = {"observation": widths, "action_mask": [actions], "probabilities": [actions]}
    for name, allowed in expected.items():
        shape = (inputs.get(name) or outputs[name]).shape
        if not isinstance(shape, list) or len(shape) != 2 or (isinstance(shape[1], int) and shape[1] not in allowed):
            raise ValueError(f"agent 'onnx': {path}: {name} has shape {clip(shape, 60)}, expected [batch, "
                             f"{' or '.join(map(str, allowed))}]")
    obs_size = width if isinstance(width, int) else None
    try:
        probs, value = session.run(["probabilities", "value"], {
            "observation": np.ones((1, obs_size or OBSERVATION_SIZE), np.float32),
            "action_mask": np.ones((1, actions), np.int8)})
    except Exception as err:  # noqa: BLE001  # onnxruntime raises its own error types
        raise ValueError(f"agent 'onnx': {path} does not run on one observation "
                         f"({clip(str(err).splitlines()[0] if str(err) else type(err).__name__, 120)})") from None
    probs = np.asarray(probs)
    if probs.shape != (1, actions):
        raise ValueError(f"agent 'onnx': {path} gives probabilities of shape {clip(probs.shape, 60)} for one "
                         f"observation, expected (1, {actions})")
    if not (np.all(np.isfinite(probs)) and np.all(probs >= 0) and abs(float(probs.sum()) - 1.0) < 1e-3
            and np.all(np.isfinite(np.asarray(value, dtype=np.float64)))):
        raise ValueError(f"agent 'onnx': {path} gives probabilities that are not finite, non-negative and "
                         "summing to 1 (or a non-finite value)")
    return obs_size, actions


def _metadata(model_path: str) -> dict:
    """The export's metadata JSON beside the model, or {} when there is none; ValueError naming that file when
    it is not a bounded JSON object whose ``presets`` and ``play`` are of the exported shape."""
    path = os.path.splitext(model_path)[0] + ".json"
    if not os.path.isfile(path):
        return {}
    meta = read_json(path, MAX_METADATA_BYTES)
    if not isinstance(meta, dict):
        raise ValueError(f"agent 'onnx': {path}: metadata must be a JSON object, got {type(meta).__name__}")
    presets, play = meta.get("presets", []), meta.get("play", {})
    if presets is not None and (not isinstance(presets, list) or not all(isinstance(p, str) for p in presets)):
        raise ValueError(f"agent 'onnx': {path}: 'presets' must be a list of preset names, "
                         f"got {clip(repr(presets))}")
    if not isinstance(play, dict):
        raise ValueError(f"agent 'onnx': {path}: 'play' must be an object such as {{\"mode\": \"sample\"}}, "
                         f"got {clip(repr(play))}")
    return meta


def _recorded_play_mode(model_path: str) -> str:
    """``play.mode`` from the export's metadata JSON, or ``sample`` when it is missing or unreadable."""
    play = _metadata(model_path).get("play", {})
    mode = play.get("mode", "sample") if isinstance(play, dict) else "sample"
    return mode if mode in PLAY_MODES else "sample"


register_agent("onnx", _factory)
