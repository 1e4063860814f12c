#!/usr/bin/env bash
# Create .venv and install truco-rl into it (editable, with the dev extras), and onnxruntime-web for the web
# table where npm exists.
#
# Idempotent: the install is skipped while .venv holds a stamp matching the
# current pyproject.toml and constraints.txt (and set of package __init__.py
# files), so repeated runs take well under a second. Delete .venv (or just .venv/.installed-*) to force a reinstall.
#
# Environment:
#   PYTHON          interpreter used to create .venv (default: python3)
#   TRUCO_PIP_ARGS  extra arguments for pip install, e.g. on machines without a
#                   local torch wheel:
#                   TRUCO_PIP_ARGS="--extra-index-url https://download.pytorch.org/whl/cpu"
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-python3}"
VENV=.venv

# The web table (truco serve, docs/web.md) serves onnxruntime-web from frontends/web/node_modules: npm ci installs
# the locked version when npm is here and the lock changed since the last install. Node.js is optional: without
# it everything but the web table works, and its browser test skips.
web_stamp="frontends/web/node_modules/.installed-$(sha256sum frontends/web/package-lock.json | cut -c1-16)"
if [[ ! -f "$web_stamp" ]]; then
    if command -v npm >/dev/null 2>&1; then
        echo "setup: installing onnxruntime-web for the web table (npm ci in frontends/web)" >&2
        if npm ci --prefix frontends/web --no-audit --no-fund --loglevel=error >&2; then
            touch "$web_stamp"
        else
            echo "setup: npm ci failed: truco serve needs it (npm ci --prefix frontends/web; docs/web.md)" >&2
        fi
    else
        echo "setup: npm not found: skipped onnxruntime-web, which only truco serve needs (docs/web.md)" >&2
    fi
fi

# The stamp also covers which top-level packages have an __init__.py: the
# editable install records a package that lacks one as a namespace package, and
# only a reinstall picks up an __init__.py added later.
stamp_hash="$({ cat pyproject.toml constraints.txt; LC_ALL=C ls -1 -- */__init__.py 2>/dev/null || true; } \
    | sha256sum | cut -c1-16)"
stamp="$VENV/.installed-$stamp_hash"

if [[ -x "$VENV/bin/python" && -f "$stamp" ]]; then
    exit 0
fi

if [[ ! -x "$VENV/bin/python" ]]; then
    echo "setup: creating $VENV" >&2
    "$PYTHON" -m venv "$VENV"
fi

pip_args=(-c constraints.txt)
if [[ -d /opt/wheels ]]; then
    # Local CPU torch wheel (see constraints.txt).
    pip_args+=(--find-links /opt/wheels)
fi
if [[ -n "${TRUCO_PIP_ARGS:-}" ]]; then
    # shellcheck disable=SC2206  # word splitting is intended here
    pip_args+=($TRUCO_PIP_ARGS)
fi

echo "setup: installing truco-rl[dev] into $VENV (first run takes a few minutes)" >&2
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# setuptools tells every editable install of a flat layout to beware of same-named folders (11 lines); the
# project's folders are the packages themselves, so that notice alone is silenced
PYTHONWARNINGS="ignore:Editable installation" \
    "$VENV/bin/python" -m pip install --quiet "${pip_args[@]}" -e ".[dev,spiel]"

rm -f "$VENV"/.installed-*
touch "$stamp"
echo "setup: done" >&2
