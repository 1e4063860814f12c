"""The JSON export of a CFR checkpoint's average strategy (``truco export cfr``) and its reader.

The strategy table itself (:class:`agents.cfr.table.StrategyTable`) and how a checkpoint is played by default
(:func:`agents.cfr.table.default_play`) live in the agents package, which plays checkpoints; this module only
writes them out for other front ends.

JSON export format::

    {"format": "truco-cfr-strategy", "version": 1, "kind": "exact" | "mccfr", "preset": "argentine-mini",
     "rules": {...every rules field...}, "key": "information_state_string" | "abstraction-v4" | "abstraction-v5" | ...,
     "iteration": 130, "nash_conv": 0.028, "utility_range": 30.0,
     "play": {"mode": "sample"} | {"mode": "threshold", "threshold": 0.2},
     "strategy": {"<infoset key>": {"<action name>": probability, ...}, ...}}
"""

from __future__ import annotations

import os
from pathlib import Path

from agents.cfr.abstraction import code_label
from agents.cfr.table import StrategyTable, default_play, load_checkpoint
from training.atomic import atomic_write_json
from truco_env.actions import action_names
from truco_env.limits import MAX_TABLE_BYTES, read_json

EXPORT_FORMAT = "truco-cfr-strategy"
EXPORT_VERSION = 1


def export_json(checkpoint: str | os.PathLike, out: str | os.PathLike, min_prob: float = 0.0) -> dict:
    """Write a checkpoint's average strategy as the documented JSON table; returns a small summary."""
    ckpt = load_checkpoint(checkpoint)
    table = StrategyTable(ckpt, str(checkpoint))
    if ckpt.meta["kind"] == "exact":  # the table holds engine action ids
        names = action_names(table.config.family)

        def label(action: int) -> str:
            if not 0 <= action < len(names):
                raise ValueError(f"action id {action} is out of range 0..{len(names) - 1}")
            return names[action]
    else:  # MCCFR tables hold abstract action codes, which name no card until a hand resolves them
        label = code_label
    strategy = {}
    for key in ckpt.keys:
        actions, probs = table.lookup(key)
        try:
            strategy[key] = {label(int(a)): round(float(p), 6) for a, p in zip(actions, probs) if p > min_prob}
        except ValueError as err:  # a table whose actions its kind does not have: a damaged or forged file
            raise ValueError(f"{checkpoint}: a {ckpt.meta['kind']} table, but {err}") from None
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
    """Read an exported strategy table (plain JSON, at most :data:`~truco_env.limits.MAX_TABLE_BYTES` and
    :data:`~truco_env.limits.MAX_DEPTH` deep; validated for format and shape); ValueError naming the file."""
    doc = read_json(path, MAX_TABLE_BYTES)
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT or doc.get("version") != EXPORT_VERSION:
        raise ValueError(f"{path}: not a truco CFR strategy export (format {EXPORT_FORMAT!r} v{EXPORT_VERSION})")
    if not isinstance(doc.get("strategy"), dict):
        raise ValueError(f"{path}: 'strategy' must be an object of infoset key -> action probabilities")
    return doc
