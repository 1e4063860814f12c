"""The ``truco`` command-line tool.

Subcommands:
  demo         the main job in miniature: train PPO a few minutes, then a tournament (--random: text matches)
  replay       re-simulate a match record (JSON) and report the first disagreement
  play         a person against bots in the terminal
  serve        a person against a policy in the browser (a local web table)
  train        train a policy: truco train ppo|cfr|distill --config FILE
  ship         a finished run into the package: truco ship RUN_DIR (ppo:<preset>) or CONFIG.yaml (cfr:<preset>)
  export       export a policy for other front ends: truco export ppo POLICY --out FILE.onnx (cfr: a JSON table)
  bench        speed of the engine and environments against peer libraries
  eval         tournaments between agents (duplicate deals, intervals, ratings)
  exploit      approximate exploitability of an agent: a trained best response's win rate against it
  gauntlet     duplicate matches against a fixed population of held-out opponents
  report       the strength report of every shipped agent (docs/strength.md)
  leaderboard  a leaderboard over a YAML list of entrants: every pairing once, new entrants play only theirs
  leaks        where one agent's points go against another, by how each hand's betting went
  probe        does a policy read its opponents? its refusals to calls with the opponents' tally swapped
  bot          an agent as a program speaking the truco-bot/1 line protocol, for outside arenas (docs/protocol.md)

This room holds the command line and nothing else: each command a module of its own here (its parser and its
handler), turning flags into calls of the other rooms (``learn``, ``measure``, ``people``); this module holds what
they share: the parser they hang on, logging, and the exit codes of interrupts and errors.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence
from typing import Any

from training.cli import bench, bot, demo, diagnose, export, measure, play, replay, ship, train
from training.cli.args import COMMAND_EXTRAS, EXTRAS, Parser, extra_for  # noqa: F401  (the tests and the docs name them here)
from truco_env.limits import one_line

#: The commands, one module each (or per group): each module's ``add(sub)`` adds its parser and handler; in the
#: order ``truco --help`` lists them.
COMMANDS = (demo, replay, play, train, ship, export, bench, measure, diagnose, bot)

#: The packages whose modules report progress and status through ``logging.getLogger(__name__)``: the command
#: line shows their messages; a program that imports them sees nothing unless it configures logging.
LOGGED_PACKAGES = ("truco_env", "agents", "training")


@contextlib.contextmanager
def cli_logging(level: int = logging.INFO):
    """Show the library's log messages (``level`` and above, the message text alone) on stderr while a command
    runs, once each (they do not also reach the root logger's handlers); the loggers are put back afterwards."""
    handler = logging.StreamHandler()  # sys.stderr as it is now (pytest's capsys swaps it per test)
    handler.setFormatter(logging.Formatter("%(message)s"))
    saved = []
    for name in LOGGED_PACKAGES:
        log = logging.getLogger(name)
        saved.append((log, log.level, log.propagate))
        log.addHandler(handler)
        log.setLevel(level)
        log.propagate = False
    try:
        yield handler
    finally:
        for log, old_level, propagate in saved:
            log.removeHandler(handler)
            log.setLevel(old_level)
            log.propagate = propagate


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="truco",
        description="truco-rl: a research environment for the card game Truco.",
        epilog=("examples:\n"
                "  truco demo                                   # train PPO a few minutes, then a tournament\n"
                "  truco demo --random --preset paulista --matches 1 --seed 7\n"
                "  truco eval --agents heuristic random --preset argentine --matches 200"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from truco_env import __version__

    parser.add_argument("--version", action="version", version=f"truco-rl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    for command in COMMANDS:
        command.add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``truco`` tool and return its exit code."""
    try:
        parser = build_parser()
    except KeyboardInterrupt:
        print("\ntruco: interrupted", file=sys.stderr)
        return 130
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed by argparse
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    terminated: list[bool] = []
    try:
        with cli_logging(), _sigterm_as_ctrl_c(terminated):
            code = args.func(args, parser)
        return 143 if terminated else code
    except ModuleNotFoundError as exc:
        extra = extra_for(exc.name, getattr(args, "command", None))
        if extra is None:
            raise
        command = " ".join(part for part in ("truco", getattr(args, "command", None),
                                             getattr(args, "trainer", None)) if part)
        print(f"{command}: error: this command needs {exc.name.split('.')[0]!r}, which the core install leaves "
              f"out: pip install 'truco-rl[{extra}]'", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C in a command without its own message: one line, no traceback
        print(f"\n{_command_name(args)}: interrupted", file=sys.stderr)
        return 143 if terminated else 130
    except OSError as exc:  # a path the system refuses (too long, not a folder, no permission, ...): bad input
        print(f"{_command_name(args)}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # an option that asks for more than this machine has (--set tables=10**12)
        detail = str(exc).splitlines()[0][:160] if str(exc) else "MemoryError"
        print(f"{_command_name(args)}: error: not enough memory for what the options ask ({detail})",
              file=sys.stderr)
        return 2


@contextlib.contextmanager
def _sigterm_as_ctrl_c(terminated: list[bool]):
    """SIGTERM (a stop from a service manager or ``kill``) handled as Ctrl-C is: the command stops its worker
    processes itself, keeps what Ctrl-C keeps and says so, instead of dying with its workers left writing to a
    closed pipe. ``terminated`` gets an entry when it fires (the exit code is then 143, 128 + SIGTERM)."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        terminated.append(True)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (a program that calls main() from a thread): leave SIGTERM alone
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _command_name(args: argparse.Namespace) -> str:
    """``truco COMMAND [TRAINER or EXPORTER]``, as the running command's messages start."""
    return " ".join(part for part in ("truco", getattr(args, "command", None),
                                      getattr(args, "trainer", None) or getattr(args, "exporter", None)) if part)
