"""Stages: a measurement made once per key and kept, so that a stopped or repeated command redoes only what changed.

A stage is a **key** (everything its result depends on: settings, an agent file's hash, code fingerprints), a
**run** (the function that measures it) and a **stored result** (one JSON file, written whole or not at all by
:mod:`training.atomic`). :func:`run_stage` reuses the stored result only when it is complete and was made with a
key equal to today's, and stores a new one only when its run completed: a run that stopped half-way is handed
back as it is (its ``status`` says so), never kept as a finished stage.

``truco report`` keeps each of its stages so (:class:`training.measure.report.ReportStage`), and ``truco exploit``'s cache
of best responses is one kind of stage too (:func:`training.measure.exploit.cached_exploit`, which the gauntlet's trained
opponents and the report's ABR figures share).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training.atomic import atomic_write_json
from training.workers import cpu_seconds
from truco_env.limits import MAX_METADATA_BYTES, loads_json

#: The ``status`` of a finished stage; any other (``"interrupted"``) is a stage to run again.
COMPLETE = "complete"


def safe_name(text: str) -> str:
    """``text`` (an agent spec) as a file or folder name: every character but letters, digits, ``-``, ``_`` and
    ``.`` becomes ``_``, so that ``ppo:runs/x,greedy`` names one folder, not a path."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def read_json(path: Path) -> Any:
    """A JSON file of at most :data:`MAX_METADATA_BYTES`, :data:`MAX_DEPTH <truco_env.limits.MAX_DEPTH>` levels
    deep (:func:`truco_env.limits.loads_json`); ValueError for anything else (a stored result is read back only
    within limits, whoever edited it)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_METADATA_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read it ({exc.strerror or exc})") from None
    return loads_json(data, max_bytes=MAX_METADATA_BYTES)


@dataclass(frozen=True)
class Stage:
    """One measurement: ``run()`` makes its result, kept at ``path`` and reused while ``key`` stays the same.

    The methods say how a kind of stage stores its result and reads its key back; this base keeps the key in the
    result's ``"settings"`` and dates the result (``"measured"``) when it stores it."""

    path: Path
    key: Any
    run: Callable[[], dict[str, Any]]

    def key_of(self, result: dict[str, Any]) -> Any:
        """The key a stored result was made with."""
        return result.get("settings")

    def read(self) -> Any:
        """The stored JSON, None when there is no file; ValueError (without the path: the caller names it) when
        it is no JSON."""
        return read_json(self.path) if self.path.is_file() else None

    def reusable(self, result: Any) -> bool:
        """Whether a stored result stands for a new run: complete, and made with today's key."""
        return isinstance(result, dict) and result.get("status") == COMPLETE and self.key_of(result) == self.key

    def stored(self) -> tuple[dict[str, Any], str] | None:
        """The reusable stored result and a few words on where it was found; None when there is none."""
        found = self.read()
        return (found, str(self.path)) if self.reusable(found) else None

    def store(self, result: dict[str, Any], seconds: float | None = None,
              cpu_seconds: float | None = None) -> dict[str, Any]:
        """Keep a finished result, marked complete, with its key, the day it was measured, the seconds its run
        took and the CPU seconds it used (the run that finished it: a stage resumed after a stop counts its last
        part); returns what is kept."""
        kept = {**result, "status": COMPLETE, "settings": self.key, "measured": time.strftime("%Y-%m-%d"),
                **({"seconds": round(seconds, 1)} if seconds is not None else {}),
                **({"cpu_seconds": round(cpu_seconds, 1)} if cpu_seconds is not None else {})}
        atomic_write_json(self.path, kept, indent=1)
        return kept


def run_stage(stage: Stage, log: Callable[[str], Any] = lambda line: None) -> dict[str, Any]:
    """The stage's result: the stored one when it is complete and was made with today's key, else a new run's,
    stored when it completed. A run whose result has a ``status`` other than ``"complete"`` stopped half-way: it
    is returned as it is and not stored. ``log`` is told which of the two happened."""
    found = stage.stored()
    if found is not None:
        result, where = found
        log(f"  reuse {where}")
        return result
    log(f"  run   {stage.path.parent.name}/{stage.path.name}")
    started, cpu_started = time.perf_counter(), cpu_seconds()
    made = stage.run()
    if made.get("status", COMPLETE) != COMPLETE:
        return made
    return stage.store(made, time.perf_counter() - started, cpu_seconds() - cpu_started)

