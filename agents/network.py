"""The policy network that plays a trained policy, and the reader of its safe file format.

Everything needed to *play* a network lives here (the trainer in :mod:`training.ppo` writes these files; this
package only reads them), so a front end that plays ``ppo:argentine`` never imports the training code.

Why masking in the logits: an illegal action gets logit -inf, so its probability is exactly 0 both when sampling
and in the PPO loss (no probability mass is wasted on it and no gradient flows through it).

Why safetensors + JSON: policies travel between strangers, and a pickle can run code when loaded. A policy file
is ``NAME.safetensors`` (tensors only) with its metadata (architecture, observation layout version, presets,
training config) stored as JSON inside the safetensors header; nothing is ever unpickled.
"""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file
from torch import nn

from truco_env import actions as A
from truco_env import cards as C
from truco_env.encoding import OBS_OFFSETS, OBSERVATION_SIZE, OBSERVATION_SIZES, OBSERVATION_VERSION

FORMAT = "truco-rl-ppo-policy"
FORMAT_VERSION = 1


#: Input features a network may add to the observation (``PolicyNet(features=...)``).
FEATURES = ("none", "card_strength")
STRENGTH_LEVELS = 14  # trick strengths 1..14 in both families (cards.ARGENTINE_STRENGTH, PAULISTA_STRENGTH)


class CardStrength(nn.Module):
    """Fixed map from the observation's card one-hots to counts per trick-strength level (1..14).

    Why: in Truco Paulista a card's strength depends on the vira (the manilha rank changes every hand), so an MLP
    would have to learn ``strength(card, manilha)`` from two one-hots; this layer computes it exactly, for the
    own hand, the visible partner cards and each table slot ([trick][relative seat]), in both families. It has
    no weights (constant buffers, not saved) and uses only matmuls, so the ONNX export carries it."""

    def __init__(self):
        super().__init__()
        # one [40 cards x 14 levels] table per case: argentine, then paulista under each manilha rank
        tables = torch.zeros(1 + C.NUM_RANKS, C.NUM_CARDS, STRENGTH_LEVELS)
        for card in range(C.NUM_CARDS):
            tables[0, card, C.ARGENTINE_STRENGTH[card] - 1] = 1.0
            for manilha in range(C.NUM_RANKS):
                tables[1 + manilha, card, C.PAULISTA_STRENGTH[manilha][card] - 1] = 1.0
        self.register_buffer("tables", tables.reshape(1 + C.NUM_RANKS, -1), persistent=False)
        self.hand, self.partner, self.table_cards = (OBS_OFFSETS[k] for k in ("hand", "partner_cards", "table"))
        self.table_slots = (self.table_cards[1] - self.table_cards[0]) // C.NUM_CARDS
        self.size = (2 + self.table_slots) * STRENGTH_LEVELS

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.levels(obs, self.slots(obs))

    def slots(self, obs: torch.Tensor) -> torch.Tensor:
        """``[batch, slots, 40]``: the card one-hots of the own hand, the visible partner cards and each table slot."""
        return torch.cat([obs[:, None, self.hand[0]:self.hand[1]], obs[:, None, self.partner[0]:self.partner[1]],
                          obs[:, self.table_cards[0]:self.table_cards[1]].reshape(-1, self.table_slots, C.NUM_CARDS)],
                         1)

    def table(self, obs: torch.Tensor) -> torch.Tensor:
        """``[batch, 40, 14]``: each card's strength level (one-hot) under the family and manilha ``obs`` shows.
        Built once per row and applied to every slot: far cheaper than an outer product per slot."""
        family = obs[:, OBS_OFFSETS["family"][0]:OBS_OFFSETS["family"][1]]  # [argentine, paulista]
        manilha = obs[:, OBS_OFFSETS["manilha_rank"][0]:OBS_OFFSETS["manilha_rank"][1]]
        weights = torch.cat([family[:, :1], family[:, 1:] * manilha], 1)  # [batch, 1 + ranks]
        return (weights @ self.tables).reshape(-1, C.NUM_CARDS, STRENGTH_LEVELS)  # -1: a traced export keeps the batch free

    def levels(self, obs: torch.Tensor, cards: torch.Tensor) -> torch.Tensor:
        """Strength-level counts ``[batch, slots * 14]`` of card one-hots ``[batch, slots, 40]``, under the
        family and manilha rank that ``obs`` shows."""
        return (cards @ self.table(obs)).flatten(1)


class Ragged(NamedTuple):
    """The nonzero entries of each row of a batch, row after row: ``counts`` per row, then each entry's column
    ``index`` and ``value``.

    Why: an observation has about 50 nonzero entries out of 1,086, and the first layer of a network over it holds
    most of its arithmetic. Read as sparse rows (:func:`linear`) it costs a twentieth of the multiplications, and
    stored this way a batch takes a twentieth of the bytes."""

    counts: torch.Tensor
    index: torch.Tensor
    value: torch.Tensor

    @classmethod
    def from_dense(cls, x: torch.Tensor) -> Ragged:
        rows, cols = x.nonzero(as_tuple=True)  # row-major: each row's entries together, in column order
        return cls(torch.bincount(rows, minlength=len(x)), cols, x[rows, cols])

    def padded(self) -> SparseRows:
        rows = torch.repeat_interleave(torch.arange(len(self.counts)), self.counts)
        position = torch.arange(len(rows)) - (torch.cumsum(self.counts, 0) - self.counts)[rows]
        width = max(1, int(self.counts.max())) if len(rows) else 1
        index = torch.zeros(len(self.counts), width, dtype=torch.long)
        value = torch.zeros(len(self.counts), width, dtype=self.value.dtype)
        index[rows, position] = self.index.long()
        value[rows, position] = self.value
        return SparseRows(index, value)


class SparseRows(NamedTuple):
    """:class:`Ragged` rows padded to one width with (0, 0.0): ``index`` and ``value`` ``[batch, width]``, so that
    a trainer slices minibatches out of them by row."""

    index: torch.Tensor
    value: torch.Tensor

    @classmethod
    def stack(cls, parts: list[SparseRows]) -> SparseRows:
        """The rows of ``parts`` one after another (padded to the widest)."""
        width = max(p.index.shape[1] for p in parts)

        def pad(t: torch.Tensor) -> torch.Tensor:
            return nn.functional.pad(t, (0, width - t.shape[1]))

        return cls(torch.cat([pad(p.index) for p in parts]), torch.cat([pad(p.value) for p in parts]))

    def __getitem__(self, rows: Any) -> SparseRows:  # type: ignore[override]
        return SparseRows(self.index[rows], self.value[rows])


def linear(layer: nn.Linear, x: torch.Tensor | SparseRows | Ragged) -> torch.Tensor:
    """``layer(x)`` for a dense batch or sparse rows (a weighted sum of the weight's columns per row)."""
    if isinstance(x, torch.Tensor):
        return layer(x)
    weight = _transposed(layer)
    if isinstance(x, Ragged):
        offsets = torch.cumsum(x.counts, 0) - x.counts
        out = nn.functional.embedding_bag(x.index, weight, offsets, mode="sum", per_sample_weights=x.value)
    else:
        out = nn.functional.embedding_bag(x.index, weight, mode="sum", per_sample_weights=x.value)
    return out + layer.bias


def _transposed(layer: nn.Linear) -> torch.Tensor:
    """The weight as ``[in, out]`` (one row per input feature), kept while the weight is unchanged: a frozen
    network transposes once, not at every step."""
    key = (layer.weight._version, layer.weight.data_ptr())
    cached = getattr(layer, "_transposed_cache", None)
    if torch.is_grad_enabled() and layer.weight.requires_grad or cached is None or cached[0] != key:
        weight = layer.weight.t().contiguous()
        if torch.is_grad_enabled() and layer.weight.requires_grad:
            return weight  # in the autograd graph: never cached
        layer._transposed_cache = (key, weight)
        return weight
    return cached[1]


def _relu_layers(width: int, hidden: tuple[int, ...]) -> tuple[list[nn.Module], int]:
    """Linear + ReLU layers of the given sizes from ``width`` inputs, and the width they end with."""
    layers: list[nn.Module] = []
    for size in hidden:
        layers += [nn.Linear(width, size), nn.ReLU()]
        width = size
    return layers, width


class PolicyNet(nn.Module):
    """An MLP trunk shared by a policy head over every action and a value head; with ``features="card_strength"``
    the trunk also reads :class:`CardStrength` of the observation."""

    def __init__(self, obs_size: int = OBSERVATION_SIZE, num_actions: int = A.NUM_ACTIONS,
                 hidden: tuple[int, ...] = (256, 256), features: str = "none"):
        super().__init__()
        if features not in FEATURES:
            raise ValueError(f"network features {features!r} are not known; choose one of {list(FEATURES)}")
        self.obs_size, self.num_actions, self.hidden, self.features = obs_size, num_actions, tuple(hidden), features
        self.strength = CardStrength() if features == "card_strength" else None
        layers, width = _relu_layers(obs_size + (self.strength.size if self.strength is not None else 0), self.hidden)
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, num_actions)
        self.value = nn.Linear(width, 1)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.value.bias)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits (illegal = -inf) and state values."""
        return self.from_inputs(self.inputs(obs), mask)

    def inputs(self, obs: torch.Tensor) -> torch.Tensor:
        """What the first layer reads: the observation (a network of an older layout reads the prefix it was
        trained on; layouts only ever append fields), then its card strengths. No weights are involved, so a
        trainer computes this once per batch."""
        obs = obs[:, :self.obs_size]  # unconditional: a no-op on a layout this size, and nothing for a tracer to warn on
        if self.strength is not None:
            obs = torch.cat([obs, self.strength(obs)], 1)
        return obs

    def from_inputs(self, x: torch.Tensor | SparseRows | Ragged, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`forward` from :meth:`inputs`, dense or as :class:`SparseRows`."""
        features = self.trunk[1:](linear(self.trunk[0], x))
        logits = self.policy(features).masked_fill(~mask, float("-inf"))
        return logits, self.value(features).squeeze(-1)

    def probabilities(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits, _ = self(obs, mask)
        return torch.softmax(logits, dim=-1)

    def architecture(self) -> dict[str, Any]:
        return {"obs_size": self.obs_size, "num_actions": self.num_actions, "hidden": list(self.hidden),
                "features": self.features}


class PolicyFileError(ValueError):
    """A policy or checkpoint file that is missing, corrupt, of another format, or does not match."""



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



def load_policy(path: str) -> tuple[PolicyNet, dict[str, Any]]:
    """Load a policy file; PolicyFileError naming what is wrong (format, layout version, shapes)."""
    tensors, meta = load_tensors(path, FORMAT)
    version = meta.get("observation_version")
    arch = meta.get("architecture", {})
    if version not in OBSERVATION_SIZES or arch.get("obs_size") != OBSERVATION_SIZES[version]:
        raise PolicyFileError(f"{path}: observation layout version {version!r} with {arch.get('obs_size')!r} "
                              f"inputs; this truco-rl reads versions {sorted(OBSERVATION_SIZES)} "
                              f"(sizes {OBSERVATION_SIZES}), current {OBSERVATION_VERSION}")
    if arch.get("kind") == "gated":
        raise PolicyFileError(f"{path}: an opponent-gated policy (experts under a gate, shipped before the PPO "
                              "rebuild) is no longer read; its ONNX copy in agents/policies/previous/ plays as "
                              "onnx:FILE")
    try:
        net = _network_of(arch)
        net.load_state_dict(tensors)
    except (KeyError, TypeError, RuntimeError, ValueError) as err:
        raise PolicyFileError(f"{path}: weights do not match the recorded architecture "
                              f"({str(err).splitlines()[0][:120]})") from None
    net.eval()
    return net, meta


def _network_of(arch: dict[str, Any]) -> PolicyNet:
    """An untrained network of a recorded architecture."""
    if arch.get("kind", "mlp") != "mlp":
        raise ValueError(f"architecture kind {arch.get('kind')!r} is not known (mlp)")
    return PolicyNet(arch["obs_size"], arch["num_actions"], tuple(arch["hidden"]), arch.get("features", "none"))
