"""Settings every test shares."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _deal_key(tmp_path_factory):
    """The deal key that hides the deals from outside programs (agents/hidden_seeds.py) lives in the session's
    temporary folder, not in the home of whoever runs the tests; worker processes inherit it."""
    os.environ["TRUCO_DEAL_KEY_FILE"] = str(tmp_path_factory.mktemp("deal-key") / "deal-key")
    yield
