"""``truco replay``: re-simulate a match record, or watch it (``--show``)."""

from __future__ import annotations

import argparse
import sys

from training.cli.demo import _format_score


def add(sub: argparse._SubParsersAction) -> None:
    """The ``replay`` command."""
    replay = sub.add_parser(
        "replay",
        help="re-simulate a match record and check that it reproduces",
        description=(
            "Re-simulate a match record (the JSON of env.unwrapped.match_record()) through\n"
            "the rules engine. Exits 0 when every deal, action, legal set (if recorded),\n"
            "point and score reproduces; otherwise exits 1 naming the first disagreement."
        ),
        epilog="examples:\n  truco replay match.json\n  truco replay match.json --show",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("file", metavar="FILE.json", help="the match record to replay")
    replay.add_argument("--show", action="store_true",
                        help="watch the match hand by hand, every seat's cards face up (the screen of truco play; "
                             "at a terminal, Enter shows the next hand and q stops)")
    replay.set_defaults(func=_cmd_replay)


def _cmd_replay(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from truco_env.records import ReplayError, StopWatching, load_record, replay_record

    try:
        record = load_record(args.file)
    except ReplayError as exc:  # not a readable record: bad input (2); a record that disagrees is a finding (1)
        print(f"truco replay: {exc}", file=sys.stderr)
        return 2
    watch = None
    if args.show:
        try:
            from rich.console import Console

            from training.people.play import Onlooker
        except ModuleNotFoundError as err:
            print(f"truco replay: error: --show needs {err.name!r}: pip install 'truco-rl[play]'", file=sys.stderr)
            return 2

        def pause(index: int) -> bool:
            try:
                return input("Enter: the next hand, q: stop ").strip().lower() not in ("q", "quit")
            except (EOFError, KeyboardInterrupt):
                return False

        watch = Onlooker(Console(highlight=False, soft_wrap=True), pause if sys.stdin.isatty() else None)
    try:
        state = replay_record(record, watch)
    except StopWatching:
        print("truco replay: stopped watching (the hands shown reproduced)")
        return 0
    except ReplayError as exc:
        print(f"truco replay: {args.file}: {exc}", file=sys.stderr)
        return 1
    except (RecursionError, MemoryError) as exc:
        print(f"truco replay: {args.file}: record too large or too deeply nested ({type(exc).__name__})",
              file=sys.stderr)
        return 1
    hands = len(record["hands"])  # the engine may have dealt one more hand after the last recorded action
    status = f"team {state.winner} won" if state.is_over else "match in progress"
    if record.get("forfeit"):
        status = f"team {record['winner']} won: seat {record['forfeit']['seat']} forfeited"
    print(f"truco replay: {args.file}: OK, {hands} hand(s) reproduced, score {_format_score(state.score)}, {status}")
    return 0
