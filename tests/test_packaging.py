"""The wheel carries every package of the project, not only what an editable install happens to find."""

from pathlib import Path

import pytest
import setuptools

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the check needs to run on one version only

ROOT = Path(__file__).resolve().parent.parent
TOP = ("truco_env", "agents", "training")


def test_every_package_of_the_project_goes_into_the_wheel():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set(setuptools.find_packages(str(ROOT), include=config["packages"]["find"]["include"]))
    on_disk = {".".join(path.parent.relative_to(ROOT).parts) for top in TOP for path in (ROOT / top).rglob("__init__.py")}
    assert {"training.cfr"} <= on_disk
    assert on_disk == found  # nothing missing, and nothing outside the three top-level packages (tests, notebooks)
    assert "policies/*.safetensors" in config["package-data"]["agents"]  # the shipped policies ride along as data
