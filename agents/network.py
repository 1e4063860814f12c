"""The policy network that plays a trained policy, and the reader of its safe file format.

Everything needed to *play* a network lives here (the trainer in :mod:`training.learn.ppo` writes these files; this
package only reads them), so a front end that plays ``ppo:argentine`` never imports the training code.

Why masking in the logits: an illegal action gets logit -inf, so its probability is exactly 0 both when sampling
and in the PPO loss (no probability mass is wasted on it and no gradient flows through it).

Why safetensors + JSON: policies travel between strangers, and a pickle can run code when loaded. A policy file
is ``NAME.safetensors`` (tensors only) with its metadata (architecture, observation layout version, presets,
training config) stored as JSON inside the safetensors header; nothing is ever unpickled.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file
from torch import nn

from truco_env.actions import NUM_ACTIONS, NUM_ACTIONS_SENAS
from truco_env.cards import ARGENTINE_STRENGTH, NUM_CARDS, PAULISTA_STRENGTH, URUGUAYAN_STRENGTH
from truco_env.encoding import (
    OBS_OFFSETS,
    OBSERVATION_SIZE,
    OBSERVATION_SIZE_SENAS,
    OBSERVATION_SIZE_URUGUAYAN,
    OBSERVATION_SIZES,
    OBSERVATION_VERSION,
    URUGUAYAN_OFFSETS,
)
from truco_env.limits import (
    MAX_HIDDEN_LAYERS,
    MAX_HIDDEN_WIDTH,
    MAX_METADATA_BYTES,
    MAX_POLICY_PARAMETERS,
    clip,
    loads_json,
)

from .base import MAX_PATH_ECHO, PLAY_MODES

FORMAT = "truco-rl-ppo-policy"
FORMAT_VERSION = 1


#: Input features a network may add to the observation (``PolicyNet(features=...)``).
FEATURES = ("none", "card_strength")
TALLY_HIDDEN = 64  # hidden units of the match tally's pathway (``PolicyNet(tally_film=True)``)
STRENGTH_LEVELS = 14  # trick strengths 1..14 in two families (cards.ARGENTINE_STRENGTH, PAULISTA_STRENGTH)
URUGUAYAN_LEVELS = 19  # ... and 1..19 with the Uruguayan piezas (cards.URUGUAYAN_STRENGTH)


class CardStrength(nn.Module):
    """Fixed map from the observation's card one-hots to counts per trick-strength level (1..14).

    Why: in Truco Paulista a card's strength depends on the vira (the manilha rank changes every hand), so an MLP
    would have to learn ``strength(card, manilha)`` from two one-hots; this layer computes it exactly, for the
    own hand, the visible partner cards and each table slot ([trick][relative seat]), in both families. It has
    no weights (constant buffers, not saved) and uses only matmuls, so the ONNX export carries it.

    A network of Uruguayan Truco (``uruguayan``: it reads the family's block) counts 19 levels and adds a table per
    muestra; every other network is exactly the 14-level layer it always was."""

    def __init__(self, uruguayan: bool = False):
        super().__init__()
        self.uruguayan = uruguayan
        self.num_levels = URUGUAYAN_LEVELS if uruguayan else STRENGTH_LEVELS
        # one [40 cards x levels] table per case: argentine, then paulista under each manilha rank, then (a
        # Uruguayan network) uruguayan under each muestra
        rows = [ARGENTINE_STRENGTH, *PAULISTA_STRENGTH] + (list(URUGUAYAN_STRENGTH) if uruguayan else [])
        tables = torch.zeros(len(rows), NUM_CARDS, self.num_levels)
        for row, strength in enumerate(rows):
            for card in range(NUM_CARDS):
                tables[row, card, strength[card] - 1] = 1.0
        self.register_buffer("tables", tables.reshape(len(rows), -1), persistent=False)
        self.hand, self.partner, self.table_cards = (OBS_OFFSETS[k] for k in ("hand", "partner_cards", "table"))
        self.table_slots = (self.table_cards[1] - self.table_cards[0]) // NUM_CARDS
        self.size = (2 + self.table_slots) * self.num_levels

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.levels(obs, self.slots(obs))

    def slots(self, obs: torch.Tensor) -> torch.Tensor:
        """``[batch, slots, 40]``: the card one-hots of the own hand, the visible partner cards and each table slot."""
        return torch.cat([obs[:, None, self.hand[0]:self.hand[1]], obs[:, None, self.partner[0]:self.partner[1]],
                          obs[:, self.table_cards[0]:self.table_cards[1]].reshape(-1, self.table_slots, NUM_CARDS)],
                         1)

    def table(self, obs: torch.Tensor) -> torch.Tensor:
        """``[batch, 40, 14]``: each card's strength level (one-hot) under the family and manilha ``obs`` shows.
        Built once per row and applied to every slot: far cheaper than an outer product per slot."""
        family = obs[:, OBS_OFFSETS["family"][0]:OBS_OFFSETS["family"][1]]  # [argentine, paulista]
        manilha = obs[:, OBS_OFFSETS["manilha_rank"][0]:OBS_OFFSETS["manilha_rank"][1]]
        parts = [family[:, :1], family[:, 1:] * manilha]  # [batch, 1 + ranks]
        if self.uruguayan:  # ... + [batch, 40]: the muestra, where the family's flag is on
            flag = obs[:, URUGUAYAN_OFFSETS["uruguayan"][0]:URUGUAYAN_OFFSETS["uruguayan"][1]]
            parts.append(flag * obs[:, OBS_OFFSETS["vira"][0]:OBS_OFFSETS["vira"][1]])
        weights = torch.cat(parts, 1)
        return (weights @ self.tables).reshape(-1, NUM_CARDS, self.num_levels)  # -1: a traced export keeps the batch free

    def levels(self, obs: torch.Tensor, cards: torch.Tensor) -> torch.Tensor:
        """Strength-level counts ``[batch, slots * levels]`` of card one-hots ``[batch, slots, 40]``, under the
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

    def to(self, device: torch.device | str) -> SparseRows:
        """The same rows on ``device`` (a trainer's update may run on a GPU)."""
        return SparseRows(self.index.to(device), self.value.to(device))


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
    the trunk also reads :class:`CardStrength` of the observation.

    With ``tally_film`` a small network of the observation's ``match_tally`` scales and shifts the trunk's last
    features (FiLM, Perez et al. 2018) before the heads read them. Why: reading an opponent means playing the same
    position differently by how the opponent has played so far. In a plain MLP the 18 tally inputs only add to
    the first layer beside 1,068 others; as a multiplicative pathway they can reweight every feature the heads use.
    It won head to head against the plain network on argentine and lost on paulista, so a config opts in. It
    starts as the identity (scale 1, shift 0)."""

    def __init__(self, obs_size: int = OBSERVATION_SIZE, num_actions: int = NUM_ACTIONS,
                 hidden: tuple[int, ...] = (256, 256), features: str = "card_strength", tally_film: bool = False):
        super().__init__()
        if features not in FEATURES:
            raise ValueError(f"network features {features!r} are not known; choose one of {list(FEATURES)}")
        self.obs_size, self.num_actions, self.hidden, self.features = obs_size, num_actions, tuple(hidden), features
        self.strength = (CardStrength(uruguayan=obs_size == OBSERVATION_SIZE_URUGUAYAN)
                         if features == "card_strength" else None)
        layers, width = _relu_layers(obs_size + (self.strength.size if self.strength is not None else 0), self.hidden)
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, num_actions)
        self.value = nn.Linear(width, 1)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.value.bias)
        self.tally_net = None
        if tally_film:
            lo, hi = OBS_OFFSETS["match_tally"]
            if obs_size < hi:
                raise ValueError(f"tally_film needs the observation's match_tally (layout version 2, {hi} inputs); "
                                 f"this network reads {obs_size}")
            self.tally_net = nn.Sequential(nn.Linear(hi - lo, TALLY_HIDDEN), nn.ReLU(),
                                           nn.Linear(TALLY_HIDDEN, 2 * width))
            nn.init.zeros_(self.tally_net[2].weight)  # starts as the plain MLP: scale 1, shift 0
            nn.init.zeros_(self.tally_net[2].bias)

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
        if self.tally_net is not None:
            scale, shift = self.tally_net(_tally_of(x)).chunk(2, -1)
            features = features * (1 + scale) + shift
        logits = self.policy(features)
        # a game with actions this network was not made for (señas' signals): never chosen (an exported graph
        # has the network's own width, so a trace skips this)
        if not torch.jit.is_tracing() and mask.shape[-1] > self.num_actions:
            logits = torch.nn.functional.pad(logits, (0, mask.shape[-1] - self.num_actions), value=float("-inf"))
        return logits.masked_fill(~mask, float("-inf")), self.value(features).squeeze(-1)

    def probabilities(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits, _ = self(obs, mask)
        return torch.softmax(logits, dim=-1)

    @property
    def tally_film(self) -> bool:
        """Whether the match tally has its own pathway (see the class docstring)."""
        return self.tally_net is not None

    def architecture(self) -> dict[str, Any]:
        return {"obs_size": self.obs_size, "num_actions": self.num_actions, "hidden": list(self.hidden),
                "features": self.features, "tally_film": self.tally_film}


def _tally_of(x: torch.Tensor | SparseRows | Ragged) -> torch.Tensor:
    """The ``match_tally`` columns of a batch of inputs, dense, whichever of the three forms the batch takes."""
    lo, hi = OBS_OFFSETS["match_tally"]
    if isinstance(x, torch.Tensor):
        return x[:, lo:hi]
    if isinstance(x, Ragged):
        rows = torch.repeat_interleave(torch.arange(len(x.counts)), x.counts)
        index, value, size = x.index.long(), x.value, len(x.counts)
    else:
        rows = torch.arange(len(x.index))[:, None].expand_as(x.index).reshape(-1)
        index, value, size = x.index.reshape(-1), x.value.reshape(-1), len(x.index)
    inside = (index >= lo) & (index < hi)
    out = torch.zeros(size, hi - lo, dtype=torch.float32)
    out.index_put_((rows[inside], index[inside] - lo), value[inside].float(), accumulate=True)
    return out


class PolicyFileError(ValueError):
    """A policy or checkpoint file that is missing, corrupt, of another format, or does not match."""


#: Tensor dtypes a policy or checkpoint may hold (what safetensors names them); the network reads float32.
TENSOR_DTYPES = ("F16", "BF16", "F32", "F64", "I64")


def read_header(path: str, expected_format: str) -> tuple[dict[str, Any], dict[str, tuple[tuple[int, ...], str]]]:
    """The JSON metadata of a safetensors file and each tensor's declared shape and dtype, read from its header
    alone (no tensor is loaded); PolicyFileError when it is not a file of ``expected_format``. The metadata is
    bounded (:data:`~truco_env.limits.MAX_METADATA_BYTES`, :data:`~truco_env.limits.MAX_DEPTH`) and must be an
    object."""
    if not os.path.isfile(path):
        raise PolicyFileError(f"{clip(path, MAX_PATH_ECHO)}: no such policy or checkpoint file")
    try:
        with safe_open(path, framework="pt") as handle:
            header = handle.metadata() or {}
            shapes = {name: (tuple(handle.get_slice(name).get_shape()), handle.get_slice(name).get_dtype())
                      for name in handle.keys()}  # noqa: SIM118  # a safe_open handle is no dict
    except (SafetensorError, OSError, ValueError) as err:
        raise PolicyFileError(f"{path}: not a truco-rl safetensors file ({clip(str(err).splitlines()[0], 100)}); "
                              "policies are never unpickled") from None
    metadata = loads_json(header.get("json", "{}"), f"{path}: metadata", MAX_METADATA_BYTES, PolicyFileError)
    if not isinstance(metadata, dict):
        raise PolicyFileError(f"{path}: metadata must be a JSON object, got {type(metadata).__name__}")
    if metadata.get("format") != expected_format:
        raise PolicyFileError(f"{path}: format {clip(repr(metadata.get('format')))}, expected {expected_format!r}")
    odd = sorted(name for name, (_, dtype) in shapes.items() if dtype not in TENSOR_DTYPES)
    if odd:
        raise PolicyFileError(f"{path}: tensor {clip(odd[0])!r} has dtype {shapes[odd[0]][1]}; allowed: "
                              f"{', '.join(TENSOR_DTYPES)}")
    return metadata, shapes


def _read_tensors(path: str) -> dict[str, torch.Tensor]:
    """Every tensor of a file whose header :func:`read_header` accepted, all finite (a NaN or infinite weight
    would load, then fail mid-match or train on NaN)."""
    try:
        tensors = load_file(path)
    except (SafetensorError, OSError, ValueError, RuntimeError) as err:
        raise PolicyFileError(f"{path}: tensors not readable ({clip(str(err).splitlines()[0], 100)})") from None
    for name, tensor in tensors.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise PolicyFileError(f"{path}: tensor {clip(name)!r} holds NaN or infinite values")
    return tensors


def load_tensors(path: str, expected_format: str) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read a safetensors file written by :func:`atomic_save_tensors`; PolicyFileError when it is not one or
    holds a non-finite value."""
    metadata, _ = read_header(path, expected_format)
    return _read_tensors(path), metadata


def load_policy(path: str) -> tuple[PolicyNet, dict[str, Any]]:
    """Load a policy file; PolicyFileError naming what is wrong (format, layout version, architecture, shapes,
    non-finite weights, metadata). The recorded architecture is checked against the limits of
    :mod:`truco_env.limits` and the tensors' declared shapes against it before the network is built: a few
    bytes of metadata could otherwise ask for gigabytes."""
    meta, shapes = read_header(path, FORMAT)
    version = meta.get("observation_version")
    arch = meta.get("architecture", {})
    if not isinstance(arch, dict):
        raise PolicyFileError(f"{path}: 'architecture' must be a JSON object, got {type(arch).__name__}")
    if arch.get("kind") == "gated":
        raise PolicyFileError(f"{path}: an opponent-gated policy (experts under a gate, shipped before the PPO "
                              "rebuild) is no longer read; its ONNX copy in agents/policies/previous/ plays as "
                              "onnx:FILE")
    # with señas' block or the Uruguayan one
    senas = version == OBSERVATION_VERSION and arch.get("obs_size") in (OBSERVATION_SIZE_SENAS, OBSERVATION_SIZE_URUGUAYAN)
    if not senas and (not _is_int(version) or version not in OBSERVATION_SIZES or not _is_int(arch.get("obs_size"))
                      or arch.get("obs_size") != OBSERVATION_SIZES[version]):
        raise PolicyFileError(f"{path}: observation layout version {clip(repr(version))} with "
                              f"{clip(repr(arch.get('obs_size')))} inputs; this truco-rl reads versions "
                              f"{sorted(OBSERVATION_SIZES)} (sizes {OBSERVATION_SIZES}), current {OBSERVATION_VERSION}")
    _check_play_metadata(path, meta)
    expected = _expected_shapes(path, arch)
    for name in sorted(set(expected) | set(shapes)):
        if name not in shapes or name not in expected or shapes[name][0] != expected[name]:
            have = "missing" if name not in shapes else f"shape {list(shapes[name][0])}"
            need = "no such tensor" if name not in expected else f"shape {list(expected[name])}"
            raise PolicyFileError(f"{path}: weights do not match the recorded architecture (tensor {clip(name)!r}: "
                                  f"{have}; the architecture needs {need})")
    tensors = _read_tensors(path)
    net = _network_of(arch)
    net.load_state_dict(tensors)
    net.eval()
    with torch.no_grad():  # finite weights can still overflow: one all-ones observation must give probabilities
        probe = net.probabilities(torch.ones(1, net.obs_size), torch.ones(1, net.num_actions, dtype=torch.bool))
    if not bool(torch.isfinite(probe).all()):
        raise PolicyFileError(f"{path}: the network's outputs are not finite (weights too large)")
    return net, meta


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_play_metadata(path: str, meta: dict[str, Any]) -> None:
    """The metadata fields the agents read: ``presets`` (names) and ``play`` (a mode)."""
    presets = meta.get("presets", [])
    if not isinstance(presets, list) or not all(isinstance(p, str) for p in presets):
        raise PolicyFileError(f"{path}: 'presets' must be a list of preset names, got {clip(repr(presets))}")
    play = meta.get("play", "sample")
    if play not in PLAY_MODES:
        raise PolicyFileError(f"{path}: 'play' must be one of {list(PLAY_MODES)}, got {clip(repr(play))}")


def _expected_shapes(path: str, arch: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The tensor shapes a recorded architecture needs, after checking it against the limits (the network is
    built on the meta device: no memory)."""
    hidden = arch.get("hidden")
    if (not isinstance(hidden, list) or not 1 <= len(hidden) <= MAX_HIDDEN_LAYERS
            or not all(_is_int(h) and 1 <= h <= MAX_HIDDEN_WIDTH for h in hidden)):
        raise PolicyFileError(f"{path}: architecture 'hidden' must be 1 to {MAX_HIDDEN_LAYERS} layer widths, each "
                              f"1..{MAX_HIDDEN_WIDTH}; got {clip(repr(hidden))}")
    actions = NUM_ACTIONS_SENAS if arch.get("obs_size") == OBSERVATION_SIZE_SENAS else NUM_ACTIONS
    if arch.get("num_actions") != actions or not _is_int(arch.get("num_actions")):
        raise PolicyFileError(f"{path}: architecture 'num_actions' must be {actions} (with {clip(repr(arch.get('obs_size')))} "
                              f"inputs), got {clip(repr(arch.get('num_actions')))}")
    if arch.get("features", "none") not in FEATURES or arch.get("kind", "mlp") != "mlp":
        raise PolicyFileError(f"{path}: architecture kind {clip(repr(arch.get('kind', 'mlp')))} with features "
                              f"{clip(repr(arch.get('features', 'none')))}; this truco-rl builds kind 'mlp' with "
                              f"features {list(FEATURES)}")
    film = arch.get("tally_film", False)
    if not isinstance(film, bool) or film and arch.get("obs_size") not in (OBS_OFFSETS["match_tally"][1],
                                                                           OBSERVATION_SIZE_URUGUAYAN):
        raise PolicyFileError(f"{path}: architecture 'tally_film' must be true or false (true only with the "
                              f"match tally, layout version 2), got {clip(repr(film))}")
    with torch.device("meta"):
        net = _network_of(arch)
    count = sum(p.numel() for p in net.parameters())
    if count > MAX_POLICY_PARAMETERS:
        raise PolicyFileError(f"{path}: the architecture has {count:,} parameters, more than the "
                              f"{MAX_POLICY_PARAMETERS:,} allowed")
    return {name: tuple(t.shape) for name, t in net.state_dict().items()}


def _network_of(arch: dict[str, Any]) -> PolicyNet:
    """An untrained network of a recorded architecture."""
    if arch.get("kind", "mlp") != "mlp":
        raise ValueError(f"architecture kind {arch.get('kind')!r} is not known (mlp)")
    return PolicyNet(arch["obs_size"], arch["num_actions"], tuple(arch["hidden"]), arch.get("features", "none"),
                     arch.get("tally_film", False))
