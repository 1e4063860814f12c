"""Where numba keeps its compiled kernels: a folder per version of the project's compiled source.

Why: numba checks a cached function against its own file only. A kernel that calls another module's kernels
(the search, the CFR walk and the MCCFR trainer all call ``truco_env._kernel``) keeps running the old machine code
of its callees after they change, with no error: an edit of the rules then trains and measures the old game. Keying
the whole cache on a digest of every source file that uses numba makes any such edit start from a fresh cache.

Set ``NUMBA_CACHE_DIR`` yourself to choose the folder (this module then leaves it alone). It runs when
``truco_env`` is imported, before any of the project's modules imports numba.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from pathlib import Path

#: The packages whose modules may hold compiled kernels.
PACKAGES = ("truco_env", "agents", "training")
#: Cache folders of other source versions kept beside the current one (the newest first), the rest removed.
KEEP = 3


def package_folders() -> list[Path]:
    """The folders of :data:`PACKAGES` as Python finds them (a clone or an installed wheel alike; none imported)."""
    folders = []
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            folders.append(Path(next(iter(spec.submodule_search_locations))))
    return folders


def source_digest(folders: list[Path]) -> str:
    """sha256 (16 hex digits) of the path and bytes of every ``.py`` file in ``folders`` that mentions numba."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            data = path.read_bytes()
            if b"numba" in data:
                name = f"{folder.name}/{path.relative_to(folder).as_posix()}"
                digest.update(name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()[:16]


def configure() -> str | None:
    """Point ``NUMBA_CACHE_DIR`` at this source version's folder (under ``$XDG_CACHE_HOME`` or ``~/.cache``) unless
    it is set already or numba is imported; returns the folder, or None when left alone."""
    import sys

    if "NUMBA_CACHE_DIR" in os.environ or "numba" in sys.modules:
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "truco-rl"
    folder = base / f"numba-{source_digest(package_folders())}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)  # the newest in use, for the pruning below
        others = sorted((p for p in base.glob("numba-*") if p != folder), key=lambda p: p.stat().st_mtime,
                        reverse=True)
        for old in others[KEEP:]:
            shutil.rmtree(old, ignore_errors=True)
    except OSError:  # an unwritable home: numba's default (beside the sources) as before
        return None
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    return str(folder)
