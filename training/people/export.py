"""Export trained PPO policies for other front ends: ONNX + a metadata JSON + test vectors.

Why ONNX: web and mobile games run it (onnxruntime-web, onnxruntime-node, mobile runtimes) without Python or
torch. The exported graph takes the observation vector and the action mask and returns masked action
probabilities and the value, with a dynamic batch axis. The metadata JSON beside it says how to build those
inputs (observation layout version and field table, action names of both decks) and what the policy was trained
for. The test vectors (game states in record form with their observations, masks and the model's outputs) let
another implementation check its encoder and runtime against ours. See ``docs/export.md``.
"""

from __future__ import annotations

import os
import random
import warnings
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.network import PolicyNet, load_policy
from training.atomic import atomic_write, atomic_write_json
from truco_env import cards
from truco_env.actions import NUM_ACTIONS, NUM_ACTIONS_SENAS, action_names
from truco_env.config import make_config
from truco_env.encoding import (
    OBS_OFFSETS,
    OBSERVATION_FIELDS,
    OBSERVATION_SIZE,
    OBSERVATION_VERSION,
    OPTION_BITS,
    SENAS_FIELDS,
    SENAS_OFFSETS,
    encode_action_mask,
    encode_observation,
)
from truco_env.engine import TrucoState

ONNX_INPUTS = ("observation", "action_mask")
ONNX_OUTPUTS = ("probabilities", "value")
OPSET = 17


class _ExportedPolicy(nn.Module):
    """The graph that ships: masked softmax over the policy logits, plus the value."""

    def __init__(self, net: PolicyNet):
        super().__init__()
        self.net = net

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits, value = self.net(observation, action_mask > 0)
        return torch.softmax(logits, dim=-1), value


def metadata(net_meta: dict[str, Any], onnx_file: str) -> dict[str, Any]:
    """Everything a front end needs besides the model itself (a network made for señas reads their block too and
    answers for their actions)."""
    arch = net_meta.get("architecture", {})
    obs_size, actions = arch.get("obs_size", OBSERVATION_SIZE), arch.get("num_actions", NUM_ACTIONS)
    senas = actions == NUM_ACTIONS_SENAS
    fields = OBSERVATION_FIELDS + (SENAS_FIELDS if senas else ())
    offsets = {**OBS_OFFSETS, **SENAS_OFFSETS}
    return {
        "format": "truco-rl-onnx-policy",
        "format_version": 1,
        "model": os.path.basename(onnx_file),
        "inputs": {
            "observation": {"dtype": "float32", "shape": ["batch", obs_size]},
            "action_mask": {"dtype": "int8", "shape": ["batch", actions], "meaning": "1 = legal"},
        },
        "outputs": {
            "probabilities": {"dtype": "float32", "shape": ["batch", actions],
                              "meaning": "masked action probabilities; illegal actions are exactly 0"},
            "value": {"dtype": "float32", "shape": ["batch"], "meaning": "the critic's estimate of what is still to come for the acting seat's team: "
                               "the match result in [-1, 1] plus shaping, or, for a policy trained with "
                               "reward match_equity, twice the change of match equity to the hand's end"},
        },
        "observation": {
            "version": OBSERVATION_VERSION,
            "size": obs_size,
            "fields": [{"name": name, "offset": offsets[name][0], "size": size, "meaning": meaning}
                       for name, size, meaning in fields],
            "option_bits": [{"field": name, "value": value} for name, value in OPTION_BITS],
            "card_index": "rank_index * 4 + suit_index; ranks 1 2 3 4 5 6 7 10 11 12 (A 2 3 4 5 6 7 Q J K), "
                          "suits espadas/spades, bastos/clubs, oros/diamonds, copas/hearts",
        },
        "actions": {family: action_names(family, senas) for family in cards.FAMILIES},
        "presets": net_meta.get("presets", []),
        "play": {"mode": net_meta.get("play", "sample"),
                 "meaning": "greedy: take the most probable legal action; sample: draw from the probabilities "
                            "(the mode this policy was measured with)"},
        "training": net_meta.get("training", {}),
        "architecture": net_meta.get("architecture", {}),
    }


def export_onnx(policy_path: str, out_path: str) -> tuple[str, str]:
    """Write ``out_path`` (.onnx) and its metadata JSON beside it; returns both paths."""
    net, net_meta = load_policy(policy_path)
    wrapper = _ExportedPolicy(net).eval()
    example = (torch.zeros(2, net.obs_size), torch.ones(2, net.num_actions, dtype=torch.int8))
    axes = {"observation": {0: "batch"}, "action_mask": {0: "batch"}, "probabilities": {0: "batch"},
            "value": {0: "batch"}}

    def write(tmp: str) -> None:
        # The TorchScript exporter on purpose: it gives a small opset-17 graph that onnxruntime-web and -node run,
        # with no onnxscript dependency and no version conversion. torch warns that it is no longer the default;
        # that is about torch's default, not about this graph, so the warning is not passed on to the user.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*legacy TorchScript-based")
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.onnx")
            torch.onnx.export(wrapper, example, tmp, input_names=list(ONNX_INPUTS), output_names=list(ONNX_OUTPUTS),
                              dynamic_axes=axes, opset_version=OPSET, dynamo=False)

    atomic_write(out_path, write, ".onnx")
    meta_path = os.path.splitext(out_path)[0] + ".json"
    atomic_write_json(meta_path, metadata(net_meta, out_path))
    return out_path, meta_path


def random_positions(preset: str, count: int, seed: int) -> list[tuple[TrucoState, int]]:
    """``count`` decision points from seeded random play of ``preset`` (state clones with the acting seat)."""
    config = make_config(preset)
    rng = random.Random(seed)
    positions: list[tuple[TrucoState, int]] = []
    match = 0
    while len(positions) < count:
        state = TrucoState.new(config, seed=seed * 1_000_003 + match)
        match += 1
        while not state.is_over and len(positions) < count:
            positions.append((state.clone(), state.actor))
            state.apply(rng.choice(state.legal_actions()))
    return positions


def write_test_vectors(onnx_path: str, out_path: str, presets: list[str], per_preset: int = 20,
                       seed: int = 0) -> str:
    """Game states in record form with the observation, mask and the ONNX model's outputs, as JSON."""
    import onnxruntime as ort

    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    vectors = []
    for preset in presets:
        for state, seat in random_positions(preset, per_preset, seed):
            obs = encode_observation(state, seat)
            mask = encode_action_mask(state)
            probs, value = session.run(list(ONNX_OUTPUTS), {"observation": obs[None], "action_mask": mask[None]})
            vectors.append({
                "preset": preset, "record": state.match_record(), "seat": seat,
                "legal": state.legal_actions(),
                "observation": [float(x) for x in obs], "action_mask": [int(x) for x in mask],
                "probabilities": [float(x) for x in probs[0]], "value": float(value[0]),
            })
    atomic_write_json(out_path, {"format": "truco-rl-test-vectors", "observation_version": OBSERVATION_VERSION,
                           "model": os.path.basename(onnx_path), "tolerance": 1e-5, "vectors": vectors})
    return out_path


def torch_probabilities(net: PolicyNet, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return net.probabilities(torch.from_numpy(obs), torch.from_numpy(masks.astype(bool))).numpy()
