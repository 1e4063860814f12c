"""Reading a CFR checkpoint and playing its average strategy: the file reader, :class:`StrategyTable` and how a
checkpoint is played by default. The ``cfr:PATH`` agent (:mod:`agents.cfr`) needs exactly this; writing
checkpoints and resuming training stay in :mod:`training.learn.cfr.checkpoint`, which imports the reader from here
(agents must not import training).

A checkpoint is one ``.npz`` of plain numeric arrays plus a JSON header, never a pickle. Why: a policy file from a
stranger must not be able to run code. Every load first reads each member's header from the zip
(:func:`truco_env.limits.npz_headers`): unknown members, object arrays, wrong dtypes or shapes and arrays that
declare more than :data:`~truco_env.limits.MAX_TABLE_BYTES` together are refused before anything is allocated.
Then ``np.load(..., allow_pickle=False)`` reads the arrays; anything wrong is a :class:`CheckpointError` that
names the file and says what is wrong.

Contents (all arrays 1-D):

==================  =========  ==================================================================
name                dtype      meaning
==================  =========  ==================================================================
``meta``            uint8      UTF-8 JSON header (format, version, kind, preset, rules, iteration, ...)
``keys``            uint8      UTF-8 infoset keys joined by newlines (in infoset order)
``slot_start``      int64      infoset ``i`` owns slots ``slot_start[i] .. slot_start[i+1]-1``
``slot_action``     int16      unified action id of each slot (``truco_env.actions``)
``regrets``         float64    cumulative regret of each slot
``cumulative``      float64    average-strategy weight of each slot
==================  =========  ==================================================================

The strategy table maps an information-set key to ``(action ids, probabilities)``. Keys:

* exact checkpoints (research presets): :func:`truco_env.encoding.information_state_string` of the seat, with
  the own cards of each hand in deck order (:func:`canonical_key`; the engine lists them in dealt order);
* MCCFR checkpoints: the int64 key of :mod:`agents.cfr.abstraction` in decimal, computed from the observation
  (``v4``, ``v5``, ``lossless``); ``slot_action`` then holds abstract codes.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from truco_env import actions
from truco_env.cards import parse_card
from truco_env.config import TrucoConfig
from truco_env.limits import MAX_METADATA_BYTES, MAX_TABLE_BYTES, clip, loads_json, npz_headers

from ..base import MAX_PATH_ECHO

FORMAT = "truco-cfr-checkpoint"
VERSION = 1
KINDS = ("exact", "mccfr")
ARRAYS = {"meta": np.uint8, "keys": np.uint8, "slot_start": np.int64, "slot_action": np.int16,
          "regrets": np.float64, "cumulative": np.float64}
#: The extra array an MCCFR run stores (``extra_<name>`` in the file, 1-D numeric): its random state. Any other
#: member is refused.
EXTRAS = ("rng_state",)


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: corrupt, not ours, or of another game or run."""


@dataclass
class Checkpoint:
    meta: dict
    keys: list[str]
    slot_start: np.ndarray
    slot_action: np.ndarray
    regrets: np.ndarray
    cumulative: np.ndarray
    extra: dict = field(default_factory=dict)

    @property
    def iteration(self) -> int:
        return int(self.meta.get("iteration", 0))

    def average_policy(self) -> np.ndarray:
        """The normalised average strategy per slot (uniform where an infoset has no weight)."""
        counts = np.diff(self.slot_start)
        owner = np.repeat(np.arange(len(counts)), counts)
        totals = np.add.reduceat(self.cumulative, self.slot_start[:-1])[owner] if len(owner) else self.cumulative
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(totals > 0, self.cumulative / np.where(totals > 0, totals, 1.0), 1.0 / counts[owner])


def load_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read and validate a checkpoint; :class:`CheckpointError` with the reason when it cannot be used. Every
    member's header is checked first (names, dtypes, 1-D, equal slot counts, and the total size against
    :data:`~truco_env.limits.MAX_TABLE_BYTES`), so nothing larger than that is ever allocated."""
    path = Path(path)
    if not os.path.isfile(path):  # os.path's checks, unlike Path's, also answer False for a name too long
        what = "is a folder, not a checkpoint file" if os.path.isdir(path) else "does not exist"
        raise CheckpointError(f"checkpoint {clip(repr(str(path)), MAX_PATH_ECHO)} {what}")
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed by the with below; opening gets its own error)
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with handle:
        magic = handle.read(4)
    if magic != b"PK\x03\x04":
        if magic[:1] == b"\x80" or magic[:1] in (b"(", b"c", b"]", b"}"):
            raise CheckpointError(f"{path}: refused: the file looks like a Python pickle; checkpoints are plain "
                                  f".npz arrays and are never unpickled")
        raise CheckpointError(f"{path}: corrupt or not an .npz checkpoint (no zip header)")
    try:
        declared = npz_headers(path, set(ARRAYS), {"extra_" + name for name in EXTRAS}, "truco CFR checkpoint",
                               MAX_TABLE_BYTES, CheckpointError)
        _check_declared(path, declared)
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in declared}
    except CheckpointError:
        raise
    except ValueError as exc:  # numpy refuses pickled data and object arrays with allow_pickle=False
        raise CheckpointError(f"{path}: refused: {clip(exc, 120)} (checkpoints are plain .npz arrays, never "
                              "pickles)") from None
    except (zipfile.BadZipFile, OSError, EOFError, KeyError, NotImplementedError, RuntimeError) as exc:
        raise CheckpointError(f"{path}: corrupt or not an .npz checkpoint ({type(exc).__name__}: "
                              f"{clip(exc, 120)})") from None
    meta = loads_json(arrays["meta"].tobytes(), f"{path}: header", MAX_METADATA_BYTES, CheckpointError)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise CheckpointError(f"{path}: not a truco CFR checkpoint (format {clip(repr(found))})")
    if meta.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {clip(repr(meta.get('version')))} is not supported "
                              f"(this code reads version {VERSION})")
    if meta.get("kind") not in KINDS:
        raise CheckpointError(f"{path}: unknown checkpoint kind {clip(repr(meta.get('kind')))}; expected one of "
                              f"{list(KINDS)}")
    try:
        text = arrays["keys"].tobytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"{path}: corrupt infoset keys ({exc})") from None
    keys = text.split("\n") if text else []
    slot_start = arrays["slot_start"]
    n_slots = len(arrays["slot_action"])
    if (len(slot_start) != len(keys) + 1 or (len(slot_start) and slot_start[0] != 0)
            or (len(slot_start) and slot_start[-1] != n_slots) or np.any(np.diff(slot_start) <= 0)):
        raise CheckpointError(f"{path}: inconsistent tables ({len(keys)} infosets, {len(slot_start)} slot offsets, "
                              f"{n_slots} slots)")
    if not (np.all(np.isfinite(arrays["regrets"])) and np.all(np.isfinite(arrays["cumulative"]))
            and np.all(arrays["cumulative"] >= 0)):
        raise CheckpointError(f"{path}: regrets or average weights are not finite and non-negative")
    extra = {name[6:]: arr for name, arr in arrays.items() if name.startswith("extra_")}
    return Checkpoint(meta=meta, keys=keys, slot_start=slot_start, slot_action=arrays["slot_action"],
                      regrets=arrays["regrets"], cumulative=arrays["cumulative"], extra=extra)


def _check_declared(path: Path, declared: dict[str, tuple[tuple[int, ...], np.dtype]]) -> None:
    """The arrays' headers against the format: every table array 1-D, of its dtype, one regret and one weight per
    slot; extras 1-D numeric."""
    for name, (shape, dtype) in declared.items():
        want = ARRAYS.get(name)
        if len(shape) != 1 or (np.dtype(want) != dtype if want is not None else dtype.kind not in "iufb"):
            kind = np.dtype(want).name if want is not None else "numeric"
            raise CheckpointError(f"{path}: array {name!r} must be 1-D {kind}, got {len(shape)}-D {dtype}")
    slots = declared["slot_action"][0][0]
    if declared["regrets"][0][0] != slots or declared["cumulative"][0][0] != slots:
        raise CheckpointError(f"{path}: regrets/cumulative must have one value per slot ({slots})")
    if declared["slot_start"][0][0] > slots + 1:
        raise CheckpointError(f"{path}: inconsistent tables ({declared['slot_start'][0][0]} slot offsets for "
                              f"{slots} slots)")


#: Probability below which a self-play MCCFR average strategy's action is dropped when playing.
MCCFR_THRESHOLD = 0.2


def default_play(meta: dict) -> dict:
    """How ``cfr:PATH`` plays a checkpoint unless told otherwise (also written into the JSON export, so other
    front ends play it the same way): exact strategies are sampled as they are; self-play MCCFR strategies are
    thresholded (actions under :data:`MCCFR_THRESHOLD` dropped, the rest renormalised)."""
    if meta.get("kind") != "mccfr":
        return {"mode": "sample"}
    return {"mode": "threshold", "threshold": MCCFR_THRESHOLD}


def canonical_key(key: str, family: str) -> str:
    """Sort the own cards of every hand segment of an information-state string into deck order."""
    head, sep, rest = key.partition("|")
    if not sep:
        return key
    hands, sep2, shown = rest.rpartition("|")
    parts = []
    for part in hands.split(";"):
        own, slash, tail = part.partition("/")
        if slash and own not in ("", "?") and "," in own:
            cards = own.split(",")
            own = ",".join(sorted(cards, key=lambda c: parse_card(c, family)))
        parts.append(own + slash + tail)
    return head + sep + ";".join(parts) + sep2 + shown


_LOADED: dict[tuple, StrategyTable] = {}


class StrategyTable:
    """The average strategy of a checkpoint: ``lookup(key)`` -> (action ids, probabilities) or None."""

    def __init__(self, ckpt: Checkpoint, where: str = "checkpoint"):
        """``where`` names the checkpoint in errors (its path)."""
        self.meta = ckpt.meta
        self.kind = ckpt.meta["kind"]
        try:
            self.config = TrucoConfig.from_dict(ckpt.meta["rules"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{where}: its rules are not a valid config ({clip(exc, 160)})") from None
        if len(ckpt.slot_action) and (ckpt.slot_action.min() < 0 or ckpt.slot_action.max() >= actions.NUM_ACTIONS):
            raise CheckpointError(f"{where}: action ids outside 0..{actions.NUM_ACTIONS - 1}")
        probs = ckpt.average_policy()
        self._index = {key: i for i, key in enumerate(ckpt.keys)}
        self._start = ckpt.slot_start
        self._actions = ckpt.slot_action.astype(np.int64)
        self._probs = probs

    @classmethod
    def load(cls, path: str | os.PathLike) -> StrategyTable:
        """The table of the checkpoint at ``path``; a file already loaded (same path, size and modification time)
        is shared, not read again: tables are read-only, and a best-response run seats a CFR agent at each of
        its hundreds of tables (one copy each cost 29 MB and 150 ms on argentine-mini)."""
        stat = os.stat(path) if os.path.isfile(path) else None
        key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns) if stat else None
        if key is not None and key in _LOADED:
            return _LOADED[key]
        table = cls(load_checkpoint(path), str(path))
        if key is not None:
            _LOADED.clear()  # keep one: the table of the latest file asked for
            _LOADED[key] = table
        return table

    def __len__(self) -> int:
        return len(self._index)

    def keys(self):
        return self._index.keys()

    def rows(self) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
        """(keys in row order, row starts, actions, probabilities): the whole table, for a compiled lookup."""
        return list(self._index), self._start, self._actions, self._probs

    def lookup(self, key: str) -> tuple[np.ndarray, np.ndarray] | None:
        i = self._index.get(key)
        if i is None:
            return None
        lo, hi = self._start[i], self._start[i + 1]
        return self._actions[lo:hi], self._probs[lo:hi]

    def key_for(self, info_state_string: str) -> str:
        """The table key of a seat's information-state string (exact checkpoints)."""
        return canonical_key(info_state_string, self.config.family)
