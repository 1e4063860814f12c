#!/usr/bin/env bash
# Set up .venv if needed, then run pytest with any arguments given, e.g.
#   bash scripts/test.sh                 # default suite (slow tests skipped)
#   bash scripts/test.sh -m slow         # only the slow training checks
#   bash scripts/test.sh -m ""           # everything
#   bash scripts/test.sh tests/test_rules_argentine.py -x
#   bash scripts/test.sh -n 0            # in one process (pytest-xdist off)
# Test paths are relative to the repository root (the script runs from there).
# A run that collects no tests (pytest exit code 5) counts as a failure.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh

rc=0
# -n auto: one pytest worker per core (pytest-xdist); --dist loadfile keeps a file's module fixtures on one worker.
.venv/bin/python -m pytest -n auto --dist loadfile "$@" || rc=$?

if [[ $rc -eq 5 ]]; then
    echo "test.sh: FAILED: pytest collected no tests (exit code 5)" >&2
    exit 1
fi
exit "$rc"
