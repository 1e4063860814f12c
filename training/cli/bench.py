"""``truco bench``: the speed benchmark of the clone the command is run in."""

from __future__ import annotations

import argparse
import sys


def add(sub: argparse._SubParsersAction) -> None:
    """The ``bench`` command."""
    bench = sub.add_parser(
        "bench",
        help="speed of the engine and environments against peer libraries",
        description=(
            "Seeded random legal play through the reference and fast engines (per preset),\n"
            "the AEC environment and the vector environment (1 and 2 processes), and the peers\n"
            "pytruco, PettingZoo leduc_holdem_v4 and OpenSpiel leduc_poker, in one process.\n"
            "Prints a table with each ratio ours/peer, the targets, and a final JSON line.\n"
            "Peers come with: pip install -c constraints.txt -e \".[bench]\"\n"
            "Run it from the root of a clone of the repository: it runs that clone's benchmarks/speed.py."
        ),
        epilog="examples:\n  truco bench\n  truco bench --quick",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument("--quick", action="store_true", help="a smoke run, about ten times shorter")
    bench.set_defaults(func=_cmd_bench)


def _cmd_bench(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run ``python -m benchmarks.speed`` of the clone in the current directory, as a program: the package never
    imports the scripts around it (the layers' one-way rule), and an installed wheel has no benchmarks."""
    import os
    import subprocess

    if not os.path.isfile(os.path.join("benchmarks", "speed.py")):
        print("truco bench: error: no benchmarks/speed.py here: run it from the root of a clone of the repository "
              "(an installed package has no benchmarks)", file=sys.stderr)
        return 1
    command = [sys.executable, "-m", "benchmarks.speed", *(["--quick"] if args.quick else [])]
    return subprocess.run(command, check=False).returncode
