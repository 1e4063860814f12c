"""An interrupted tournament resumes where it stopped: each match's result is appended to a journal file as it
arrives, and a rerun plays only the matches the journal does not hold yet.

Every match draws from its own seeds (:mod:`training.measure.evaluate`), so a result does not depend on which run played
it, and a resumed tournament's results equal an uninterrupted one's. The journal's first line names what it is a
journal of: the tournament's matches, the files its agents read (size and modification time) and the caller's
key (whatever else decides the results, such as the code's fingerprints in ``truco report``). A journal of
anything else is started afresh; a line cut off by a kill, or one that disagrees with its match, ends what is
reused. Nothing is unpickled: lines are JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

#: Lines between two flushes to disk: a kill loses at most these matches.
FLUSH_EVERY = 8


def task_key(task: Any) -> str:
    """One match of a tournament, as the journal names it."""
    return (f"{task.preset}:{task.pairing}:{task.spec_a}:{task.spec_b}:{task.deal}:{int(task.swapped)}:"
            f"{task.match_seed}:{int(task.keep_record)}")


def code_digest() -> str:
    """The source of the three packages that decide a match (the engine, the agents, the measuring code), as 16
    hex digits: a journal written by other code is started afresh rather than mixed with this code's results."""
    import agents
    import training
    import truco_env

    h = hashlib.sha256()
    for package in (truco_env, agents, training):
        root = Path(package.__file__).resolve().parent
        for path in sorted(root.rglob("*.py")):
            h.update(f"{package.__name__}/{path.relative_to(root)}".encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def journal_beside(out: Path) -> MatchJournal:
    """The journal of a ``truco eval`` or ``truco gauntlet`` writing to ``out``: beside it, not in it (the folder
    appears whole only at the end), so a rerun of the same command after a kill plays only the matches still
    missing."""
    out = Path(os.path.abspath(out))
    return MatchJournal(out.parent / f".{out.name}.journal.jsonl", key={"code": code_digest()})


def file_stamp(spec: str) -> tuple[int, int] | None:
    """(modification time, size) of the file a spec like ``ppo:PATH,greedy`` reads, None for other specs."""
    path = spec.partition(":")[2].partition(",")[0]
    try:
        stat = os.stat(path) if path else None
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size) if stat else None


class MatchJournal:
    """The results of one tournament's matches so far, in task order, in ``path`` (JSON lines)."""

    def __init__(self, path: Path | str, key: Any = None):
        self.path = Path(path)
        self.key = key
        self._file: Any = None
        self._pending = 0

    def _header(self, tasks: list[Any]) -> str:
        specs = sorted({t.spec_a for t in tasks} | {t.spec_b for t in tasks})
        what = {"key": self.key, "files": {s: file_stamp(s) for s in specs},
                "tasks": hashlib.sha256("\n".join(map(task_key, tasks)).encode()).hexdigest()}
        return json.dumps({"journal": hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()})

    def resume(self, tasks: list[Any]) -> list[dict[str, Any]]:
        """The results already played of ``tasks`` (a prefix of them), the file cut back to exactly those and
        opened for the next ones."""
        header = self._header(tasks)
        if self.path.is_dir() or (self.path.exists() and not self.path.is_file()):
            raise ValueError(f"{self.path} is in the way of the tournament's journal (it is no file): move it away")
        try:
            lines = self.path.read_bytes().decode("utf-8").split("\n") if self.path.exists() else []
        except UnicodeDecodeError:  # no journal of ours: started afresh, like a journal of anything else
            lines = []
        done: list[dict[str, Any]] = []
        if lines and lines[0] == header:
            for line, task in zip(lines[1:], tasks):
                try:
                    entry = json.loads(line)
                except ValueError:
                    break  # the last line of a killed run
                if (not isinstance(entry, dict) or entry.get("task") != task_key(task)
                        or not isinstance(entry.get("result"), dict)):
                    break
                done.append(entry["result"])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept = [header] + [json.dumps({"task": task_key(t), "result": r}) for t, r in zip(tasks, done)]
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text("\n".join(kept) + "\n")
        os.replace(tmp, self.path)
        self._file = self.path.open("a")
        return done

    def add(self, task: Any, result: dict[str, Any]) -> None:
        self._file.write(json.dumps({"task": task_key(task), "result": result}) + "\n")
        self._pending += 1
        if self._pending >= FLUSH_EVERY:
            self._file.flush()
            self._pending = 0

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def finish(self) -> None:
        """The tournament is over and its results are kept elsewhere: the journal goes."""
        self.close()
        self.path.unlink(missing_ok=True)
