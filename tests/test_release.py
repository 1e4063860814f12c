"""Release basics: a license in the tree and the metadata, one version everywhere, a citation file."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import yaml

import truco_env

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_has_one_source():
    out = subprocess.run([sys.executable, "-m", "training.cli", "--version"], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    assert out.strip() == f"truco-rl {truco_env.__version__}"
    assert importlib.metadata.version("truco-rl") == truco_env.__version__
    assert yaml.safe_load((ROOT / "CITATION.cff").read_text())["version"] == truco_env.__version__
    assert 'dynamic = ["version"]' in (ROOT / "pyproject.toml").read_text()


def test_the_license_is_in_the_tree_and_the_metadata():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    meta = importlib.metadata.metadata("truco-rl")
    assert "MIT" in (meta.get("License") or meta.get("License-Expression") or "")
    for package in ("truco_env", "agents", "training"):
        assert (ROOT / package / "py.typed").exists()
