"""Ship a trained PPO policy inside the package, loadable as ``ppo:<preset>``.

``python -m training.ppo_legacy.ship runs/ppo_argentine/policy.safetensors argentine --play greedy``

Why a step of its own: the shipped file is the run's policy plus one decision made after training, how it is
played by default (``play``: ``greedy`` takes the most probable legal action, ``sample`` draws from the policy),
chosen by evaluation. The training config and update count are already in the policy's metadata.
"""

from __future__ import annotations

import argparse
import os
import sys

from agents.base import PLAY_MODES
from truco_env.config import PRESETS

from .model import PolicyFileError, load_policy, save_policy


def ship(policy: str, preset: str, play: str, directory: str | None = None) -> str:
    """Copy ``policy`` to ``agents/policies/ppo_<preset>.safetensors`` with ``play`` in its metadata."""
    from agents.ppo import SHIPPED_DIR

    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}")
    if play not in PLAY_MODES:
        raise ValueError(f"play must be one of {list(PLAY_MODES)}, got {play!r}")
    net, meta = load_policy(policy)
    if preset not in meta.get("presets", []):
        raise ValueError(f"{policy} was trained on {meta.get('presets')}, not on {preset!r}")
    out_dir = directory or SHIPPED_DIR
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, f"ppo_{preset}.safetensors")
    extra = {k: v for k, v in meta.items() if k not in ("format", "format_version", "architecture",
                                                         "observation_version", "action_names_family_independent")}
    save_policy(net, out, **{**extra, "play": play, "shipped_from": os.path.basename(os.path.dirname(policy))})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.ppo_legacy.ship", description=__doc__.split("\n\n")[0])
    parser.add_argument("policy", help="a policy file written by truco train ppo (RUN_DIR/policy.safetensors)")
    parser.add_argument("preset", help="the preset it plays; it becomes ppo:<preset>")
    parser.add_argument("--play", default="sample", help="default way to play it: greedy or sample")
    parser.add_argument("--dir", default=None, help="where to write it (default: agents/policies)")
    args = parser.parse_args(argv)
    try:
        print(ship(args.policy, args.preset, args.play, args.dir))
    except (ValueError, PolicyFileError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
