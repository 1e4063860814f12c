"""Atomic file writes: write a temporary file beside the target, then rename it over the target.

Why: checkpoints, policies, exports and match records must never be left half-written by a crash or a Ctrl-C;
``os.replace`` is atomic on the same filesystem, so readers see the old file or the new one, never a mix.
A temporary file is named ``.tmp-PID-XXXXXXXX.SUFFIX`` after the process writing it, so that one left behind by a
killed writer can be told from one being written: :func:`training.outputs.clean_stale` removes those whose
process is gone.
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
from collections.abc import Callable
from typing import Any

#: Every temporary file of this module starts with this, then the writer's PID and a dash.
TEMP_PREFIX = ".tmp-"


def atomic_write(path: str | os.PathLike, write: Callable[[str], None], suffix: str = ".tmp") -> None:
    """Call ``write(tmp_path)`` to produce the file, then move it to ``path`` (removing the temp file on error)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb+") as handle:  # the bytes reach the disk before the rename makes them the file
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file ordinary permissions
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def atomic_write_json(path: str | os.PathLike, data: Any, indent: int | None = None,
                      separators: tuple[str, str] | None = None) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=indent, separators=separators)

    atomic_write(path, write, ".json")


def atomic_write_csv(path: str | os.PathLike, rows: list[dict[str, Any]]) -> None:
    """``rows`` as a CSV file with a header, whole or not at all; the columns are every key of any row, in order of
    first appearance (rows of games with señas have more). No rows: no file."""
    import csv

    if not rows:
        return
    fields = list(dict.fromkeys(key for row in rows for key in row))

    def write(tmp: str) -> None:
        with open(tmp, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)

    atomic_write(path, write, ".csv")


def atomic_save_tensors(tensors: dict[str, Any], metadata: dict[str, Any], path: str) -> None:
    """Write a safetensors file atomically (temp file + rename): an interrupted save never corrupts ``path``. A
    failed write (a full disk, say) is an OSError, as for every other file: safetensors reports it as its own
    error type, which callers would otherwise have to know."""
    from safetensors import SafetensorError
    from safetensors.torch import save_file  # torch only where tensors are saved

    contiguous = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}

    def write(tmp: str) -> None:
        try:
            save_file(contiguous, tmp, metadata={"json": json.dumps(metadata)})
        except SafetensorError as err:  # "... IoError(Os { code: 28, kind: StorageFull, message: \"No space...\" })"
            text = " ".join(str(err).split())
            code, message = re.search(r"code: (\d+)", text), re.search(r'message: "([^"]*)"', text)
            raise OSError(int(code.group(1)) if code else errno.EIO, message.group(1) if message else text,
                          path) from None

    atomic_write(path, write, ".safetensors")
