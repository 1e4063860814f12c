"""A CFR checkpoint's average strategy as a lookup table, and its JSON export (``truco export cfr``).

The table maps an information-set key to ``(action ids, probabilities)``. Keys:

* exact checkpoints (research presets): :func:`truco_env.encoding.information_state_string` of the seat, with
  the own cards of each hand in deck order (:func:`canonical_key`; the engine lists them in dealt order);
* MCCFR checkpoints (full presets): the abstraction key of :mod:`training.cfr.abstraction`, computed from the
  same information-state string.

JSON export format (``docs/research.md``)::

    {"format": "truco-cfr-strategy", "version": 1, "kind": "exact" | "mccfr", "preset": "argentine-mini",
     "rules": {...every rules field...}, "key": "information_state_string" | "abstraction-v1" | "abstraction-v2",
     "iteration": 130, "nash_conv": 0.028, "utility_range": 30.0,
     "play": {"mode": "sample"} | {"mode": "threshold", "threshold": 0.2} | {"mode": "greedy"},
     "strategy": {"<infoset key>": {"<action name>": probability, ...}, ...}}
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from truco_env import actions as A
from truco_env import cards as C
from truco_env.config import TrucoConfig

from ..atomic import atomic_write_json
from .checkpoint import Checkpoint, CheckpointError, load_checkpoint

EXPORT_FORMAT = "truco-cfr-strategy"
EXPORT_VERSION = 1
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


def export_json(checkpoint: str | os.PathLike, out: str | os.PathLike, min_prob: float = 0.0) -> dict:
    """Write a checkpoint's average strategy as the documented JSON table; returns a small summary."""
    ckpt = load_checkpoint(checkpoint)
    table = StrategyTable(ckpt)
    family = table.config.family
    names = A.action_names(family)
    strategy = {}
    for key in ckpt.keys:
        actions, probs = table.lookup(key)
        strategy[key] = {names[a]: round(float(p), 6) for a, p in zip(actions, probs) if p > min_prob}
    meta = ckpt.meta
    doc = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "kind": meta["kind"], "preset": meta.get("preset"),
           "rules": meta.get("rules"),
           "key": "information_state_string" if meta["kind"] == "exact" else "abstraction-" + str(
               meta.get("abstraction", "v1")),
           "iteration": meta.get("iteration"), "nash_conv": meta.get("nash_conv"),
           "utility_range": meta.get("utility_range"), "play": default_play(meta), "strategy": strategy}
    out = Path(out)
    atomic_write_json(out, doc, separators=(",", ":"))
    return {"infosets": len(strategy), "out": str(out), "bytes": out.stat().st_size}


def load_json(path: str | os.PathLike) -> dict:
    """Read an exported strategy table (plain JSON; validated for format and shape)."""
    with open(path) as handle:
        doc = json.load(handle)
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT or doc.get("version") != EXPORT_VERSION:
        raise ValueError(f"{path}: not a truco CFR strategy export (format {EXPORT_FORMAT!r} v{EXPORT_VERSION})")
    if not isinstance(doc.get("strategy"), dict):
        raise ValueError(f"{path}: 'strategy' must be an object of infoset key -> action probabilities")
    return doc
