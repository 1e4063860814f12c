"""Reading a CFR checkpoint and playing its average strategy: the file reader, :class:`StrategyTable` and how a
checkpoint is played by default. The ``cfr:PATH`` agent (:mod:`agents.cfr`) needs exactly this; writing
checkpoints and resuming training stay in :mod:`training.cfr.checkpoint`, which imports the reader from here
(agents must not import training).

A checkpoint is one ``.npz`` of plain numeric arrays plus a JSON header, never a pickle. Why: a policy file from a
stranger must not be able to run code. Every load goes through ``np.load(..., allow_pickle=False)``, which refuses
object arrays and pickled files, and every array is checked for its dtype and shape before use; anything else is a
:class:`CheckpointError` that says what is wrong.

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
* MCCFR checkpoints (full presets): the abstraction key of :mod:`agents.cfr_abstraction`, computed from the
  same information-state string.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from truco_env import actions as A
from truco_env import cards as C
from truco_env.config import TrucoConfig

FORMAT = "truco-cfr-checkpoint"
VERSION = 1
KINDS = ("exact", "mccfr")
ARRAYS = {"meta": np.uint8, "keys": np.uint8, "slot_start": np.int64, "slot_action": np.int16,
          "regrets": np.float64, "cumulative": np.float64}


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
    """Read and validate a checkpoint; :class:`CheckpointError` with the reason when it cannot be used."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic != b"PK\x03\x04":
        if magic[:1] == b"\x80" or magic[:1] in (b"(", b"c", b"]", b"}"):
            raise CheckpointError(f"{path}: refused: the file looks like a Python pickle; checkpoints are plain "
                                  f".npz arrays and are never unpickled")
        raise CheckpointError(f"{path}: corrupt or not an .npz checkpoint (no zip header)")
    try:
        with np.load(path, allow_pickle=False) as data:
            names = set(data.files)
            missing = [n for n in ARRAYS if n not in names]
            if missing:
                raise CheckpointError(f"{path}: not a truco CFR checkpoint (missing arrays {missing})")
            arrays = {}
            for name in names:
                arr = data[name]
                arrays[name] = arr
    except CheckpointError:
        raise
    except ValueError as exc:  # numpy refuses pickled data and object arrays with allow_pickle=False
        raise CheckpointError(f"{path}: refused: {exc} (checkpoints are plain .npz arrays, never pickles)") from None
    except (zipfile.BadZipFile, OSError, EOFError, KeyError) as exc:
        raise CheckpointError(f"{path}: corrupt or not an .npz checkpoint ({type(exc).__name__}: {exc})") from None
    for name, dtype in ARRAYS.items():
        arr = arrays[name]
        if arr.ndim != 1 or arr.dtype != np.dtype(dtype):
            raise CheckpointError(f"{path}: array {name!r} must be 1-D {np.dtype(dtype).name}, "
                                  f"got {arr.ndim}-D {arr.dtype}")
    try:
        meta = json.loads(arrays["meta"].tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: corrupt header ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a truco CFR checkpoint (format {meta.get('format') if isinstance(meta, dict) else None!r})")
    if meta.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {meta.get('version')!r} is not supported "
                              f"(this code reads version {VERSION})")
    if meta.get("kind") not in KINDS:
        raise CheckpointError(f"{path}: unknown checkpoint kind {meta.get('kind')!r}; expected one of {list(KINDS)}")
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
    if len(arrays["regrets"]) != n_slots or len(arrays["cumulative"]) != n_slots:
        raise CheckpointError(f"{path}: regrets/cumulative must have one value per slot ({n_slots})")
    if not (np.all(np.isfinite(arrays["regrets"])) and np.all(np.isfinite(arrays["cumulative"]))
            and np.all(arrays["cumulative"] >= 0)):
        raise CheckpointError(f"{path}: regrets or average weights are not finite and non-negative")
    extra = {name[6:]: arr for name, arr in arrays.items() if name.startswith("extra_")}
    return Checkpoint(meta=meta, keys=keys, slot_start=slot_start, slot_action=arrays["slot_action"],
                      regrets=arrays["regrets"], cumulative=arrays["cumulative"], extra=extra)


#: Probability below which a self-play MCCFR average strategy's action is dropped when playing.
MCCFR_THRESHOLD = 0.2


def default_play(meta: dict) -> dict:
    """How ``cfr:PATH`` plays a checkpoint unless told otherwise (also written into the JSON export, so other
    front ends play it the same way): exact strategies are sampled as they are; self-play MCCFR strategies are
    thresholded (actions under :data:`MCCFR_THRESHOLD` dropped, the rest renormalised); data-biased responses
    (``meta["solver"]["response"]``) take their most likely action."""
    if meta.get("kind") != "mccfr":
        return {"mode": "sample"}
    solver = meta.get("solver")
    if isinstance(solver, dict) and "response" in solver:
        return {"mode": "greedy"}
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
            own = ",".join(sorted(cards, key=lambda c: C.parse_card(c, family)))
        parts.append(own + slash + tail)
    return head + sep + ";".join(parts) + sep2 + shown


_LOADED: dict[tuple, StrategyTable] = {}


class StrategyTable:
    """The average strategy of a checkpoint: ``lookup(key)`` -> (action ids, probabilities) or None."""

    def __init__(self, ckpt: Checkpoint):
        self.meta = ckpt.meta
        self.kind = ckpt.meta["kind"]
        try:
            self.config = TrucoConfig.from_dict(ckpt.meta["rules"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"checkpoint rules are not a valid config: {exc}") from None
        probs = ckpt.average_policy()
        self._index = {key: i for i, key in enumerate(ckpt.keys)}
        self._start = ckpt.slot_start
        self._actions = ckpt.slot_action.astype(np.int64)
        self._probs = probs
        if len(ckpt.slot_action) and (ckpt.slot_action.min() < 0 or ckpt.slot_action.max() >= A.NUM_ACTIONS):
            raise CheckpointError(f"checkpoint has action ids outside 0..{A.NUM_ACTIONS - 1}")

    @classmethod
    def load(cls, path: str | os.PathLike) -> StrategyTable:
        """The table of the checkpoint at ``path``; a file already loaded (same path, size and modification time)
        is shared, not read again: tables are read-only, and a best-response run seats a CFR agent at each of
        its hundreds of tables (one copy each cost 29 MB and 150 ms on argentine-mini)."""
        stat = os.stat(path) if os.path.isfile(path) else None
        key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns) if stat else None
        if key is not None and key in _LOADED:
            return _LOADED[key]
        table = cls(load_checkpoint(path))
        if key is not None:
            _LOADED.clear()  # keep one: the table of the latest file asked for
            _LOADED[key] = table
        return table

    def __len__(self) -> int:
        return len(self._index)

    def keys(self):
        return self._index.keys()

    def lookup(self, key: str) -> tuple[np.ndarray, np.ndarray] | None:
        i = self._index.get(key)
        if i is None:
            return None
        lo, hi = self._start[i], self._start[i + 1]
        return self._actions[lo:hi], self._probs[lo:hi]

    def key_for(self, info_state_string: str) -> str:
        """The table key of a seat's information-state string (exact checkpoints)."""
        return canonical_key(info_state_string, self.config.family)
