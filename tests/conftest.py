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


#: The test files that take longest (``--durations``: the README's blocks alone take a fifth of the suite's CPU),
#: handed out first: pytest-xdist's ``--dist loadfile`` gives workers whole files in collection order, and one of
#: these collected last kept a single core busy for minutes after the other had finished.
LONGEST_FIRST = ("test_readme.py", "test_ray_cluster.py", "test_abr_validation.py", "test_notebooks.py",
                 "test_web.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: every file's tests stay together
