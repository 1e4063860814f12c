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


#: The files whose tests run longest (measured in a fresh clone, 2026-12-07: the README's blocks 148 s, the ABR
#: validation 110 s, the demo 69 s of one core), collected first. Why: ``--dist loadfile`` hands files to the
#: workers in collection order, and one of these collected late ran alone at the end while the other core idled.
LONGEST_FIRST = ("test_readme.py", "test_abr_validation.py", "test_demo.py")


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: every other file in its order
