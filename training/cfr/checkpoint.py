"""CFR checkpoints: one ``.npz`` of plain numeric arrays plus a JSON header, written atomically, never a pickle.

Why not pickle: a policy file from a stranger must not be able to run code. Every load goes through
``np.load(..., allow_pickle=False)``, which refuses object arrays and pickled files, and every array is checked
for its dtype and shape before use; anything else is a :class:`CheckpointError` that says what is wrong.

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

Writing goes to a temporary file in the same folder, is flushed and fsync'ed, then ``os.replace``'d over the
target, so a crash never leaves a half-written checkpoint under the real name.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from training.atomic import atomic_write

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


def save_checkpoint(path: str | os.PathLike, ckpt: Checkpoint) -> None:
    """Write ``ckpt`` to ``path`` atomically (temporary file + fsync + os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = dict(ckpt.meta)
    meta.setdefault("format", FORMAT)
    meta.setdefault("version", VERSION)
    arrays = {
        "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8),
        "keys": np.frombuffer("\n".join(ckpt.keys).encode(), dtype=np.uint8),
        "slot_start": np.asarray(ckpt.slot_start, dtype=np.int64),
        "slot_action": np.asarray(ckpt.slot_action, dtype=np.int16),
        "regrets": np.asarray(ckpt.regrets, dtype=np.float64),
        "cumulative": np.asarray(ckpt.cumulative, dtype=np.float64),
    }
    for name, value in ckpt.extra.items():
        arr = np.asarray(value)
        if arr.dtype.kind not in "iufb":
            raise ValueError(f"checkpoint extra {name!r} must be a numeric array, got dtype {arr.dtype}")
        arrays["extra_" + name] = arr
    atomic_write(path, lambda tmp: np.savez_compressed(tmp, **arrays), ".npz")


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


def check_compatible(ckpt: Checkpoint, *, kind: str, rules: dict, fingerprint: str | None = None,
                     solver: dict | None = None, where: str = "checkpoint") -> None:
    """Raise :class:`CheckpointError` when ``ckpt`` belongs to another game, trainer or solver setting."""
    meta = ckpt.meta
    if meta.get("kind") != kind:
        raise CheckpointError(f"{where}: it is a {meta.get('kind')!r} checkpoint, this run is {kind!r}")
    if meta.get("rules") != rules:
        theirs = meta.get("rules") or {}
        diff = sorted(k for k in set(theirs) | set(rules) if theirs.get(k) != rules.get(k))
        raise CheckpointError(f"{where}: it was trained on other rules (preset {meta.get('preset')!r}; "
                              f"fields differ: {diff})")
    if fingerprint is not None and meta.get("fingerprint") != fingerprint:
        raise CheckpointError(f"{where}: its game tree fingerprint {meta.get('fingerprint')!r} does not match "
                              f"this game's {fingerprint!r}")
    if solver is not None and meta.get("solver") != solver:
        raise CheckpointError(f"{where}: solver settings differ (checkpoint {meta.get('solver')}, run {solver}); "
                              f"resume with the same settings or start a new checkpoint")
