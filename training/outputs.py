"""Output folders that appear whole, one writer per folder at a time, and no litter from killed writers.

Why: ``truco eval`` used to write its files in place one after the other, so a run killed while writing left a
folder that mixed two runs, and two runs on the same ``--out`` both reported success while one run's files were
lost. Every command that writes a folder or a set of files goes through this module:

* **The lock.** The lock of a path ``P`` is the file ``.NAME.lock`` beside it (``runs/eval`` ->
  ``runs/.eval.lock``), held with ``flock`` (exclusive, never waited for: a second writer is refused at once,
  naming the holder's PID, which the holder writes into the file). The kernel lets go of an ``flock`` when its
  process ends, however it ends, so a killed run never blocks the next one; the holder deletes the file when done,
  and a locker re-checks after locking that the file it locked is still the one at that name. The lock sits beside
  the folder, not in it, because one-shot folders are swapped whole.
* **One-shot folders** (``truco eval``, ``exploit``, ``gauntlet``): :func:`output_folder` locks the folder, hands
  out a fresh temporary sibling ``.NAME.tmp-PID-XXXXXXXX`` to write into, writes ``manifest.json`` last (which
  run, which command, which files), then swaps it in: the old folder is renamed aside to ``.NAME.old-PID-...``,
  the new one renamed in, the old one deleted. A reader sees the old folder or the new one (or, for the instant
  between the two renames, none), never a mix. An error or a Ctrl-C deletes the temporary folder and leaves the
  old one as it was. An existing non-empty folder is refused unless ``overwrite``, and even then only when a
  truco command wrote it (it holds ``manifest.json`` or the command's own result file), so a mistyped ``--out``
  never deletes someone's files. :func:`output_files` does the same for a few files beside each other
  (``truco export``): made in a temporary sibling folder, moved into place at the end (one rename each).
* **Training folders** are resumable and hold checkpoints, so they are not swapped: :func:`hold` takes their lock
  for the run and each file in them is written atomically (:mod:`training.atomic`).
* **Stale temporary files.** :mod:`training.atomic` names its temporary files ``.tmp-PID-...``; whenever a lock is
  taken, :func:`clean_stale` removes those of processes that no longer run (and the swap leftovers of such
  processes; a folder renamed aside by a run killed between its two renames is put back).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import secrets
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from training.atomic import TEMP_PREFIX, atomic_write_json

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "truco-rl-output"
#: A temporary file of :mod:`training.atomic` from before it put the PID in the name is removed once it is this
#: old (seconds): no writer takes an hour to write one file.
LEGACY_TEMP_AGE = 3600.0

_TEMP_FILE = re.compile(re.escape(TEMP_PREFIX) + r"(\d+)-")
_SIBLING = re.compile(r"^\.(?P<name>.+)\.(?P<kind>tmp|old)-(?P<pid>\d+)-[0-9a-f]+$")


class FolderBusy(ValueError):
    """Another process holds the lock of the path (a ValueError: the command line reports it as bad input)."""


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (on Windows, where signal 0 would end it, every PID counts as alive)."""
    if pid == os.getpid():
        return True
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it runs under another user
        return True
    return True


# ------------------------------------------------------------------------------------------------------------
# the lock


def lock_path(path: str | os.PathLike) -> Path:
    """The lock file of ``path``: ``.NAME.lock`` beside it."""
    path = Path(os.path.abspath(path))
    return path.parent / f".{path.name}.lock"


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows: a byte-range lock, released with the handle as flock is
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def _acquire(lock: Path, what: str) -> int:
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ValueError(f"{what}: cannot create its lock file {str(lock)!r} ({exc.strerror or exc})") from None
        if not _try_lock(fd):
            try:
                holder = os.read(fd, 32).decode(errors="replace").strip()
            except OSError:
                holder = ""
            os.close(fd)
            who = f"process {holder}" if holder.isdigit() else "another process"
            raise FolderBusy(f"{what} is in use: {who} is writing it (lock {lock}); wait for it to finish, or "
                             "choose another path")
        try:
            mine = os.fstat(fd)
            now = os.stat(lock)
            same = (mine.st_ino, mine.st_dev) == (now.st_ino, now.st_dev)
        except FileNotFoundError:
            same = False
        if same:  # else the holder deleted the file between our open and our lock: lock the new one
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)


def _release(fd: int, lock: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(lock)  # before unlocking: a process that locks the old file then finds it gone and retries
    os.close(fd)


@contextlib.contextmanager
def hold(path: str | os.PathLike, what: str | None = None, recursive: bool = False) -> Iterator[Path]:
    """Hold the lock of ``path`` (a folder or a file, which need not exist yet) while the block runs; FolderBusy
    naming ``what`` (default: the path) when another process holds it. On taking it, the stale temporary files of
    dead processes in and beside ``path`` (everywhere under it when ``recursive``) are removed. Yields the
    absolute path."""
    path = Path(os.path.abspath(path))
    lock = lock_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{what or path}: cannot create its folder {str(path.parent)!r} "
                         f"({exc.strerror or exc})") from None
    fd = _acquire(lock, what or str(path))
    try:
        clean_stale(path, recursive=recursive)
        yield path
    finally:
        _release(fd, lock)


# ------------------------------------------------------------------------------------------------------------
# stale temporary files


def _stale_temp(name: str, folder: Path) -> bool:
    if not name.startswith(TEMP_PREFIX):
        return False
    found = _TEMP_FILE.match(name)
    if found:
        return not pid_alive(int(found.group(1)))
    try:  # a name from before the PID was part of it
        return time.time() - os.lstat(folder / name).st_mtime > LEGACY_TEMP_AGE
    except OSError:
        return False


def clean_stale(path: str | os.PathLike, recursive: bool = False) -> list[Path]:
    """Remove the temporary files of dead writers in ``path`` (when it is a folder; everywhere under it when
    ``recursive``) and beside it, and the temporary and set-aside copies of ``path`` left by dead processes (a
    set-aside copy comes back when ``path`` itself is missing: its run was killed between the two renames of a
    swap). Returns what was removed."""
    path = Path(os.path.abspath(path))
    removed: list[Path] = []
    folders = [path.parent]
    if path.is_dir():
        folders += [Path(root) for root, _, _ in os.walk(path)] if recursive else [path]
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if _stale_temp(name, folder):
                with contextlib.suppress(OSError):
                    (folder / name).unlink()
                    removed.append(folder / name)
    try:
        siblings = os.listdir(path.parent)
    except OSError:
        siblings = []
    for name in sorted(siblings, key=lambda n: ".old-" not in n):  # set-aside copies first
        found = _SIBLING.match(name)
        if not found or found.group("name") != path.name or pid_alive(int(found.group("pid"))):
            continue
        leftover = path.parent / name
        if found.group("kind") == "old" and not path.exists():
            with contextlib.suppress(OSError):
                os.rename(leftover, path)
                logger.warning("%s: put back the previous copy, which a killed run had set aside", path)
                continue
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)
        removed.append(leftover)
    return removed


# ------------------------------------------------------------------------------------------------------------
# one-shot folders and files


def _holds_files(folder: Path) -> bool:
    try:
        return any(folder.iterdir())
    except OSError:
        return False


def written_by_truco(folder: Path, markers: Iterable[str] = ()) -> bool:
    """Whether ``folder`` holds a truco manifest, or one of ``markers`` (glob patterns of the files the command
    wrote before it wrote manifests)."""
    try:
        if json.loads((folder / MANIFEST).read_text()).get("format") == MANIFEST_FORMAT:
            return True
    except (OSError, ValueError, AttributeError):
        pass
    return any(next(folder.glob(pattern), None) is not None for pattern in markers)


def check_replaceable(path: str | os.PathLike, overwrite: bool, option: str = "--out",
                      markers: Iterable[str] = ()) -> None:
    """ValueError unless a new output may go to folder ``path``: it is missing, empty, or (with ``overwrite``) a
    truco output (:func:`written_by_truco`)."""
    folder = Path(path)
    shown = f"{option} {str(path)!r}"
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{shown} is a file; give a folder (it is created if missing)")
    real = Path(os.path.abspath(folder))
    cwd = Path.cwd()
    if real == cwd or real in cwd.parents:
        raise ValueError(f"{shown} is the current folder or holds it; give an output folder of its own")
    if not _holds_files(folder):
        return
    if not overwrite:
        raise ValueError(f"{shown} already holds files of an earlier run; pass --overwrite to replace them, "
                         "or choose another folder")
    if not written_by_truco(folder, markers):
        raise ValueError(f"{shown} holds files that no truco command wrote (no {MANIFEST}); --overwrite "
                         "replaces only truco output folders: remove them yourself or choose another folder")


def _sibling(path: Path, kind: str) -> Path:
    return path.parent / f".{path.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Hold back Ctrl-C while the block runs (a few renames), then raise it: a swap is never left half done."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield
        return
    pending: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pending:
        raise KeyboardInterrupt


def _swap_in(tmp: Path, path: Path) -> None:
    with _interrupts_deferred():
        old = None
        if path.exists():
            old = _sibling(path, "old")
            os.rename(path, old)
        os.rename(tmp, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def manifest(kind: str, folder: Path, command: str | None = None, **extra: Any) -> dict[str, Any]:
    """What ``manifest.json`` says: the kind of output, the run (PID, start and end), the command and the files."""
    files = sorted(str(p.relative_to(folder)).replace(os.sep, "/") for p in folder.rglob("*") if p.is_file())
    if command is None:
        # the truco script, or python -m training.cli (the same command where no script is installed)
        ran = Path(sys.argv[0])
        command = " ".join(["truco", *sys.argv[1:]]) if ran.name == "truco" or ran.parts[-2:] == (
            "cli", "__main__.py") else None
    return {"format": MANIFEST_FORMAT, "version": 1, "kind": kind, "command": command, "pid": os.getpid(),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **extra, "files": files}


@contextlib.contextmanager
def output_folder(path: str | os.PathLike, kind: str, overwrite: bool = False, option: str = "--out",
                  markers: Iterable[str] = (), command: str | None = None, with_manifest: bool = True
                  ) -> Iterator[Path]:
    """Write a one-shot output folder whole: yields an empty temporary sibling of ``path`` to write into; when
    the block ends normally, ``manifest.json`` (``kind``, ``command``, the files; left out when not
    ``with_manifest``, for a folder whose every file is read as data) is written in it and it replaces ``path``
    in one swap; when the block raises (an error, Ctrl-C), it is deleted and ``path`` stays as it was.
    ValueError (before the block runs) when ``path`` is locked by another process, holds files and
    ``overwrite`` is false, or holds files no truco command wrote (see :func:`check_replaceable`)."""
    markers = tuple(markers)
    check_replaceable(path, overwrite, option, markers)
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    with hold(path, f"{option} {str(path)!r}") as real:
        check_replaceable(path, overwrite, option, markers)  # again: it may have changed before the lock
        tmp = _sibling(real, "tmp")
        try:
            tmp.mkdir()
        except OSError as exc:
            raise ValueError(f"{option} {str(path)!r}: cannot create the folder ({exc.strerror or exc})") from None
        try:
            yield tmp
            if with_manifest:
                atomic_write_json(tmp / MANIFEST, manifest(kind, tmp, command, started=started), indent=1)
            _swap_in(tmp, real)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def output_files(paths: list[str | os.PathLike], overwrite: bool = False, option: str = "--out"
                 ) -> Iterator[Path]:
    """Write a few files beside each other as one output (``paths``: the first is the main one, whose lock is
    held): yields an empty temporary folder beside them; write each file there under its final name. When the
    block ends normally each is moved to its place (one rename each) and any of ``paths`` the block did not make
    is deleted, so no file of an earlier run stays beside the new ones; when it raises, nothing is touched.
    ValueError before the block runs when another process holds the lock, or when one of ``paths`` exists and
    ``overwrite`` is false."""
    targets = [Path(os.path.abspath(p)) for p in paths]
    for shown, target in zip(paths, targets, strict=True):
        if target.is_dir():
            raise ValueError(f"{option} {str(shown)!r} is a folder; give a file name")
    with hold(targets[0], f"{option} {str(paths[0])!r}") as main:
        existing = [str(shown) for shown, target in zip(paths, targets, strict=True) if target.exists()]
        if existing and not overwrite:
            raise ValueError(f"{option} {str(paths[0])!r}: {', '.join(existing)} already exist(s); pass "
                             "--overwrite to replace them, or choose another name")
        tmp = _sibling(main, "tmp")
        try:
            tmp.mkdir()
        except OSError as exc:
            raise ValueError(f"{option} {str(paths[0])!r}: cannot write in its folder "
                             f"({exc.strerror or exc})") from None
        try:
            yield tmp
            with _interrupts_deferred():
                for target in reversed(targets):  # the main file last: it appears once the others are there
                    made = tmp / target.name
                    if made.exists():
                        os.replace(made, target)
                    else:
                        target.unlink(missing_ok=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
