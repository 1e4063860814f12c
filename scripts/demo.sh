#!/usr/bin/env bash
# Set up .venv if needed, then run `truco demo`: a short PPO training run on an embedded config and a
# tournament of the trained policy against the heuristic and random (runs/demo/eval).
# Arguments go to `truco demo`, e.g.:
#   bash scripts/demo.sh --out runs/demo2 --matches 400
#   bash scripts/demo.sh --random --preset paulista      # seeded random matches as text instead
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
exec "$root/.venv/bin/truco" demo "$@"
