"""``truco demo``: the main job in miniature, or seeded random matches as text (``--random``)."""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any, TextIO

from training.cli.args import any_integer, positive_int

DEFAULT_PRESETS = ("argentine", "paulista", "argentine-2v2")


def add(sub: argparse._SubParsersAction) -> None:
    """The ``demo`` command."""
    demo = sub.add_parser(
        "demo",
        help="the main job in miniature: train PPO a few minutes, then a tournament with tables and plots",
        description=(
            "Train a PPO policy for a few minutes on an embedded default config (Argentine Truco,\n"
            "self-play and random opponents), then play a duplicate-deal tournament of it against\n"
            "the heuristic and random agents. Prints the Markdown table and writes CSV, JSON and PNG\n"
            "files to --out. With --random: print seeded random matches as text instead."
        ),
        epilog=(
            "examples:\n"
            "  truco demo                                   # train, evaluate, write runs/demo/eval\n"
            "  truco demo --out runs/demo2 --matches 400\n"
            "  truco demo --random --preset paulista --matches 1 --seed 7"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("--out", default="runs/demo", metavar="DIR",
                      help="folder for the trained policy and the tournament files (default: runs/demo)")
    demo.add_argument("--quick", action="store_true", help="a tiny run (for smoke tests)")
    demo.add_argument("--random", action="store_true", help="only print seeded random matches as text")
    demo.add_argument(
        "--preset",
        action="append",
        metavar="NAME",
        help=(f"with --random: rules preset to play; repeat for several (default: {', '.join(DEFAULT_PRESETS)})"),
    )
    demo.add_argument(
        "--matches",
        type=positive_int,
        default=None,
        metavar="N",
        help="tournament matches per pairing (default 200), or with --random matches per preset (default 2)",
    )
    demo.add_argument(
        "--seed",
        type=any_integer,
        default=0,
        help="tournament seed, or with --random the seed of the first match (default: 0)",
    )
    demo.set_defaults(func=_cmd_demo)


def _cmd_demo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if not args.random:
        if args.preset:
            print("truco demo: error: --preset goes with --random (the main demo trains on argentine)",
                  file=sys.stderr)
            return 2
        import os

        from training.people.demo import run_demo

        matches = args.matches or 200
        if matches % 2:
            print(f"truco demo: error: --matches must be even (each deal is played twice), got {matches}",
                  file=sys.stderr)
            return 2
        result = run_demo(args.out, matches, args.seed, args.quick)
        print(result["report"])
        print(f"truco demo: policy {result['policy']}; tournament files in {result['eval']}: "
              + ", ".join(os.path.basename(str(f)) for f in result["files"]))
        return 0
    args.matches = args.matches or 2
    try:
        from truco_env.config import PRESETS, make_config
        from truco_env.engine import TrucoState
    except ImportError as exc:
        print(f"truco: error: the rules engine could not be imported: {exc}", file=sys.stderr)
        return 1

    presets = args.preset or list(DEFAULT_PRESETS)
    unknown = [name for name in presets if name not in PRESETS]
    if unknown:
        from truco_env.config import unknown_preset

        print(f"truco demo: error: {unknown_preset(unknown[0])}", file=sys.stderr)
        return 2

    out = sys.stdout
    for preset in presets:
        config = make_config(preset)
        for i in range(args.matches):
            seed = args.seed + i
            try:
                _play_match(TrucoState, config, preset, i, args.matches, seed, out)
            except Exception as exc:  # noqa: BLE001  # an engine bug: report it in one line
                print(
                    f"truco demo: error: {preset} match seed {seed}: {type(exc).__name__}: {exc}",
                    file=sys.stderr,
                )
                return 1
    return 0


def _play_match(
    state_cls: Any,
    config: Any,
    preset: str,
    index: int,
    total: int,
    seed: int,
    out: TextIO,
) -> None:
    from truco_env.turns import play_turns

    rng = random.Random(seed)
    state = state_cls.new(config, seed=seed)

    def random_legal(seat: int) -> str:
        legal = state.legal_actions()
        if not legal:
            raise RuntimeError(f"seat {seat} has no legal action")
        return rng.choice(legal)

    play_turns(state, random_legal)

    print(f"== {preset}  match {index + 1}/{total}  seed {seed} ==", file=out)
    for number, record in enumerate(state.hand_records, start=1):
        print(_format_hand(number, record), file=out)
    print(f"winner: team {state.winner}  final {_format_score(state.score)}", file=out)


def _format_hand(number: int, record: dict) -> str:
    deal = record["deal"]
    hands = "  ".join(
        f"{seat}[{' '.join(str(card) for card in cards)}]"
        for seat, cards in enumerate(deal["hands"])
    )
    vira = deal.get("vira")
    if vira is not None:
        hands += f"  vira {vira}"
    moves = " ".join(f"{seat}:{name}" for seat, name in record["actions"])
    return (
        f"hand {number:>2}  dealer {record['dealer']}  {hands}  |  {moves}  |  "
        f"{_format_score(record['score_after'])}"
    )


def _format_score(score: Any) -> str:
    try:
        a, b = score
    except (TypeError, ValueError):
        return str(score)
    return f"{a}-{b}"

