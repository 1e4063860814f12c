"""``truco play`` and ``truco serve``: a person at the table, in the terminal or in the browser."""

from __future__ import annotations

import argparse
import sys

from training.cli.args import any_integer, positive_int
from truco_env.limits import one_line


def add(sub: argparse._SubParsersAction) -> None:
    """The ``play`` and ``serve`` commands."""
    play = sub.add_parser(
        "play",
        help="play a match against bots in the terminal",
        description=(
            "Play Truco in the terminal against any agents. You see your hand, the vira and\n"
            "manilhas, the table, the score and the bots' calls; choose actions by number.\n"
            "In 2v2 presets a bot (--partner) plays your partner's seat."
        ),
        epilog=(
            "examples:\n"
            "  truco play --preset argentine --opponent heuristic\n"
            "  truco play --preset paulista-2v2 --partner heuristic --opponent random --seed 3 --save m.json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    play.add_argument("--preset", default="argentine", help="rules preset (default: argentine)")
    play.add_argument("--opponent", default=None, metavar="SPEC",
                      help="agent spec of the opponents, e.g. random, heuristic:bluff=0.3 (default: best:<preset>, "
                           "the strongest shipped agent by docs/strength.md; heuristic on presets without one)")
    play.add_argument("--partner", default=None, metavar="SPEC",
                      help="agent spec of your partner(s) in team presets (default: as --opponent)")
    play.add_argument("--seat", type=any_integer, default=0, help="your seat, 0..n-1 (default: 0)")
    play.add_argument("--seed", type=any_integer, default=None, help="seed for a reproducible deal")
    play.add_argument("--save", metavar="FILE.json",
                      help="save the match record here when the match ends or you leave (q, Ctrl-C); an "
                           "existing file is replaced only with --overwrite")
    play.add_argument("--overwrite", action="store_true",
                      help="let --save replace an existing file (never a folder, device, fifo or link)")
    play.add_argument("--hands", type=positive_int, default=None, metavar="N",
                      help="stop after N hands (default: play the whole match)")
    play.add_argument("--allow-other-preset", action="store_true",
                      help="let bots play presets their policy was not trained for (refused otherwise)")
    play.set_defaults(func=_cmd_play)

    serve = sub.add_parser(
        "serve",
        help="play a match against an exported policy in the browser (a local web table)",
        description=(
            "Start a local web server with a page where you play a whole match against a policy. The\n"
            "policy runs in the browser (onnxruntime-web, installed once with 'npm ci --prefix\n"
            "frontends/web'); the server keeps the match on the Python engine, refuses illegal moves and\n"
            "saves the match record after every move (replayable with truco replay). A ppo: policy is\n"
            "exported to ONNX once into --cache. The page plays it greedy unless the spec ends in ,sample."
        ),
        epilog=(
            "examples:\n"
            "  truco serve                                  # argentine against best:argentine, port 8000\n"
            "  truco serve --preset paulista --port 8080 --records runs/web/paulista\n"
            "  truco serve --opponent onnx:exported/argentine.onnx,sample"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--preset", default="argentine", help="rules preset (default: argentine)")
    serve.add_argument("--opponent", default=None, metavar="SPEC",
                       help="the bot: ppo:<name>, ppo:PATH.safetensors, onnx:PATH.onnx or best:<preset>, "
                            "optionally ,greedy or ,sample (default: best:<preset> when that is a network, else "
                            "ppo:<preset>; greedy)")
    serve.add_argument("--port", type=any_integer, default=8000, help="TCP port; 0 picks a free one (default: 8000)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default: 127.0.0.1, this machine only)")
    serve.add_argument("--records", default="runs/web", metavar="DIR",
                       help="where the match records go (default: runs/web)")
    serve.add_argument("--cache", default=None, metavar="DIR",
                       help="where exported policies are kept (default: ~/.cache/truco-rl/web)")
    serve.add_argument("--seed", type=any_integer, default=None,
                       help="seed of the first match's deals (the next matches count up from it)")
    serve.add_argument("--allow-other-preset", action="store_true",
                       help="play a policy on a preset it was not trained for (refused otherwise)")
    serve.add_argument("--frontends", default="frontends", metavar="DIR",
                       help="the repository's frontends/ folder, the page's files (default: frontends, from the "
                            "current directory: run it from the repository's root)")
    serve.set_defaults(func=_cmd_serve)


def _cmd_play(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.people.play import play_match
    from truco_env.config import PRESETS

    try:
        from agents.best import default_spec

        fallback = default_spec(args.preset, "heuristic")
        if args.partner is not None and args.preset in PRESETS and PRESETS[args.preset].num_players == 2:
            raise ValueError(f"--partner is for the team presets; {args.preset} is one against one, with no "
                             "partner to play it (give --opponent alone)")
        return play_match(args.preset, args.opponent or fallback, args.partner, args.seat, args.seed,
                          args.save, args.hands, allow_other_preset=args.allow_other_preset,
                          overwrite=args.overwrite)
    except ValueError as exc:
        print(f"truco play: error: {one_line(exc)}", file=sys.stderr)
        return 2


def _cmd_serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.people.serve import serve

    try:
        return serve(args.preset, args.opponent, args.port, args.host, args.records, args.cache, args.seed,
                     args.allow_other_preset, args.frontends)
    except ValueError as exc:
        print(f"truco serve: error: {one_line(exc)}", file=sys.stderr)
        return 2
