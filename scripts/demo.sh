#!/usr/bin/env bash
# Set up .venv if needed, then play a few seeded random matches as text.
# Arguments go to `truco demo`, e.g.:
#   bash scripts/demo.sh --preset paulista --matches 1 --seed 7
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
exec "$root/.venv/bin/truco" demo "$@"
