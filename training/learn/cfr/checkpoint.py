"""Writing CFR checkpoints, and checking that one on disk belongs to the run that resumes it.

The format (one ``.npz`` of plain numeric arrays plus a JSON header, never a pickle) and its reader live in
:mod:`agents.cfr.table`, because playing a checkpoint (the ``cfr:PATH`` agent) needs the reader and agents must not
import training. Writing goes to a temporary file in the same folder, is flushed and fsync'ed, then
``os.replace``'d over the target, so a crash never leaves a half-written checkpoint under the real name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from agents.cfr.table import EXTRAS, FORMAT, VERSION, Checkpoint, CheckpointError, load_checkpoint
from training.atomic import atomic_write
from truco_env import TrucoConfig

# load_checkpoint is re-exported: training/measure/abr_validation.py reads checkpoints through this module
__all__ = ["check_compatible", "load_checkpoint", "save_checkpoint"]


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
        if name not in EXTRAS:  # the reader refuses any other member
            raise ValueError(f"checkpoint extra {name!r} is not one of {list(EXTRAS)} (agents/cfr/table.py)")
        arr = np.asarray(value)
        if arr.dtype.kind not in "iufb":
            raise ValueError(f"checkpoint extra {name!r} must be a numeric array, got dtype {arr.dtype}")
        arrays["extra_" + name] = arr
    atomic_write(path, lambda tmp: np.savez_compressed(tmp, **arrays), ".npz")


def _resolved(rules):
    """Every field of ``rules`` with its value, defaults filled in: a checkpoint written before a field existed
    (stored without it) resumes under the field's default, which is the game it was trained on. Rules that are not
    a valid config are compared as they are (and then differ)."""
    try:
        return TrucoConfig.from_dict(rules).to_dict()
    except (ValueError, TypeError):
        return rules


def check_compatible(ckpt: Checkpoint, *, kind: str, rules: dict, fingerprint: str | None = None,
                     solver: dict | None = None, where: str = "checkpoint") -> None:
    """Raise :class:`CheckpointError` when ``ckpt`` belongs to another game, trainer or solver setting."""
    meta = ckpt.meta
    if meta.get("play_only"):
        raise CheckpointError(f"{where}: a shipped play-only table (its regrets were dropped); train from the run's "
                              "own checkpoint instead")
    if meta.get("kind") != kind:
        raise CheckpointError(f"{where}: it is a {meta.get('kind')!r} checkpoint, this run is {kind!r}")
    if _resolved(meta.get("rules")) != _resolved(rules):
        theirs = _resolved(meta.get("rules")) or {}
        rules = _resolved(rules)
        diff = sorted(k for k in set(theirs) | set(rules) if theirs.get(k) != rules.get(k))
        raise CheckpointError(f"{where}: it was trained on other rules (preset {meta.get('preset')!r}; "
                              f"fields differ: {diff})")
    if fingerprint is not None and meta.get("fingerprint") != fingerprint:
        raise CheckpointError(f"{where}: its game tree fingerprint {meta.get('fingerprint')!r} does not match "
                              f"this game's {fingerprint!r}")
    if solver is not None and meta.get("solver") != solver:
        raise CheckpointError(f"{where}: solver settings differ (checkpoint {meta.get('solver')}, run {solver}); "
                              f"resume with the same settings or start a new checkpoint")
