"""``truco ship``: a finished training run into the package, as the agent its preset names."""

from __future__ import annotations

import argparse
import sys

from truco_env.limits import one_line


def add(sub: argparse._SubParsersAction) -> None:
    """The ``ship`` command."""
    ship = sub.add_parser(
        "ship",
        help="ship a finished run as ppo:<preset> (a PPO run dir) or cfr:<preset> (a blueprint's config)",
        description=(
            "RUN_DIR, a finished truco train ppo run: copies RUN_DIR/policy.safetensors unchanged to\n"
            "agents/policies/ppo_<preset>.safetensors in the package and draws the run's training curves\n"
            "into docs/img/ppo_<preset>_training.png (under the current directory: run it from the\n"
            "repository's root), the figure its model card shows.\n"
            "CONFIG.yaml, the config of a finished self-play MCCFR run (trainer: mccfr): writes its average\n"
            "strategy, play only, to agents/policies/cfr_<preset>.npz.\n"
            "Only a complete run ships, never a checkpoint picked along the way; truco report then measures\n"
            "it and writes its model card."
        ),
        epilog=("examples:\n"
                "  truco ship runs/ppo/argentine\n"
                "  truco ship configs/cfr_blueprint_paulista.yaml"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ship.add_argument("run", metavar="RUN_DIR|CONFIG.yaml",
                      help="a finished truco train ppo run, or the YAML config of a finished self-play MCCFR run")
    ship.set_defaults(func=_cmd_ship)


def _cmd_ship(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from agents.network import PolicyFileError
    from training.learn.ship import ship, ship_blueprint

    try:
        written = ([ship_blueprint(args.run)] if args.run.endswith((".yaml", ".yml")) else list(ship(args.run)))
    except (ValueError, PolicyFileError) as err:
        print(f"truco ship: error: {one_line(err)}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    return 0
