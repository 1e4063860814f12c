"""The compiled kernels' cache is keyed on every source file that uses numba (truco_env/_numba_cache.py): numba
alone checks a cached function against its own file only, so a kernel calling an edited kernel of another module
kept running the old code (an MCCFR blueprint of Uruguayan Truco trained on the pre-family kernel that way, at
random play strength, before this existed)."""

import os
import subprocess
import sys
from pathlib import Path

from truco_env._numba_cache import PACKAGES, package_folders, source_digest

ROOT = Path(__file__).resolve().parent.parent


def _tree(tmp_path: Path, kernel: str, plain: str) -> list[Path]:
    for package in PACKAGES:
        (tmp_path / package).mkdir(exist_ok=True)
    (tmp_path / "truco_env" / "_kernel.py").write_text(f"from numba import njit\n{kernel}\n")
    (tmp_path / "agents" / "walk.py").write_text("import numba\n")
    (tmp_path / "training" / "plain.py").write_text(plain)
    return [tmp_path / package for package in PACKAGES]


def test_the_digest_moves_with_any_compiled_module_and_only_with_them(tmp_path):
    before = source_digest(_tree(tmp_path, "X = 1", "Y = 1"))
    assert source_digest(_tree(tmp_path, "X = 2", "Y = 1")) != before  # a callee edited: a fresh cache for all
    assert source_digest(_tree(tmp_path, "X = 1", "Y = 2")) == before  # no kernel in it: the cache stays
    assert [folder.name for folder in package_folders()] == list(PACKAGES)
    assert package_folders()[0] == ROOT / "truco_env" and len(source_digest(package_folders())) == 16


def test_importing_the_package_points_numba_at_this_source_versions_folder(tmp_path):
    code = "import os, truco_env, numba.core.config as c; print(os.environ['NUMBA_CACHE_DIR']); print(c.CACHE_DIR)"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"XDG_CACHE_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    expected = str(tmp_path / "truco-rl" / f"numba-{source_digest(package_folders())}")
    assert out == [expected, expected]
    for stale in ("numba-0", "numba-1", "numba-2", "numba-3"):  # other source versions: the newest three kept
        (tmp_path / "truco-rl" / stale).mkdir()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, check=True)
    assert len(list((tmp_path / "truco-rl").glob("numba-*"))) == 4
    chosen = {**env, "NUMBA_CACHE_DIR": str(tmp_path / "mine")}  # a folder the user chose is left alone
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=chosen, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [str(tmp_path / "mine")] * 2
