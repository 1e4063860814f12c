"""The ``truco`` command-line tool.

Subcommands:
  demo     the main job in miniature: train PPO a few minutes, then a tournament (--random: text matches)
  replay   re-simulate a match record (JSON) and report the first disagreement
  play     a person against bots in the terminal
  train    train a policy: truco train ppo --config FILE
  export   export a policy for other front ends: truco export ppo POLICY --out FILE.onnx
  bench    speed of the engine and environments against peer libraries
  eval     tournaments between agents (duplicate deals, intervals, ratings)
  exploit  approximate exploitability of an agent: a trained best response's win rate against it
  gauntlet duplicate matches against a fixed population of held-out opponents
  report   the strength report of every shipped agent (docs/strength.md)
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import sys
from collections.abc import Sequence
from typing import Any, TextIO

DEFAULT_PRESETS = ("argentine", "paulista", "argentine-2v2")
MAX_VECTORS = 1000  # test-vector positions per preset of one export (each holds a record and an observation)

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


def _integer(low: int = -(2 ** 63), high: int = 2 ** 63 - 1, words: str = "an integer"):
    """An argparse type: an integer in ``low..high``; the error echoes at most a few dozen characters of the
    text (a 5,000-digit seed is not repeated back)."""
    def convert(text: str) -> int:
        from truco_env.limits import clip

        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {words}, got {clip(repr(text))}")
        return value

    return convert


_positive_int = _integer(1, 2 ** 63 - 1, "a positive integer")
_int = _integer()


def _positive_float(text: str) -> float:
    from truco_env.limits import clip

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {clip(repr(text))}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {clip(repr(text))}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse with its error line cut to a readable length: an invalid choice would echo a value of any size."""

    def error(self, message: str):  # type: ignore[override]
        from truco_env.limits import clip

        super().error(clip(message, 300))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
        type=_positive_int,
        default=None,
        metavar="N",
        help="tournament matches per pairing (default 200), or with --random matches per preset (default 2)",
    )
    demo.add_argument(
        "--seed",
        type=_int,
        default=0,
        help="tournament seed, or with --random the seed of the first match (default: 0)",
    )
    demo.set_defaults(func=_cmd_demo)

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
    play.add_argument("--seat", type=_int, default=0, help="your seat, 0..n-1 (default: 0)")
    play.add_argument("--seed", type=_int, default=None, help="seed for a reproducible deal")
    play.add_argument("--save", metavar="FILE.json",
                      help="save the match record here when the match ends or you leave (q, Ctrl-C)")
    play.add_argument("--hands", type=_positive_int, default=None, metavar="N",
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
    serve.add_argument("--port", type=_int, default=8000, help="TCP port; 0 picks a free one (default: 8000)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default: 127.0.0.1, this machine only)")
    serve.add_argument("--records", default="runs/web", metavar="DIR",
                       help="where the match records go (default: runs/web)")
    serve.add_argument("--cache", default=None, metavar="DIR",
                       help="where exported policies are kept (default: ~/.cache/truco-rl/web)")
    serve.add_argument("--seed", type=_int, default=None,
                       help="seed of the first match's deals (the next matches count up from it)")
    serve.add_argument("--allow-other-preset", action="store_true",
                       help="play a policy on a preset it was not trained for (refused otherwise)")
    serve.set_defaults(func=_cmd_serve)

    train = sub.add_parser(
        "train",
        help="train a policy (ppo, cfr)",
        description="Train a policy from a YAML config; every long run shows progress and writes checkpoints.",
        epilog="examples:\n  truco train ppo --config configs/ppo/argentine.yaml\n"
               "  truco train ppo --config configs/ppo/argentine.yaml --resume",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    trainers = train.add_subparsers(dest="trainer", metavar="TRAINER")
    trainers.required = True
    ppo = trainers.add_parser(
        "ppo",
        help="PPO by population self-play: one network per preset",
        description="PPO by population self-play on the vector environment (training/ppo.py): the learner plays\n"
                    "itself, frozen past snapshots and optional scripted agents; TensorBoard logs, evaluation and\n"
                    "checkpoints that --resume continues exactly. Ctrl-C stops after the current update with a\n"
                    "checkpoint (exit 130); RUN_DIR/policy.safetensors is written only when the run finishes.\n"
                    "One run at a time holds a run dir (a lock beside it); a second is refused.\n"
                    "Options (YAML file or --set KEY=VALUE):\n\n"
                    + _ppo_options(),
        epilog="examples:\n  truco train ppo --config configs/ppo/argentine.yaml\n"
               "  truco train ppo --config configs/ppo/argentine.yaml --set seed=3 --run-dir runs/ppo/seed3\n"
               "  truco train ppo --config configs/ppo/argentine.yaml --resume",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ppo.add_argument("--config", metavar="FILE.yaml", help="YAML file of options (configs/ppo/<preset>.yaml)")
    ppo.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override one option (YAML value syntax), e.g. --set hidden=[256,256]; repeatable")
    ppo.add_argument("--run-dir", help="where logs, the checkpoint and the policy go (overrides the config)")
    ppo.add_argument("--backend", choices=["local", "processes", "ray"],
                     help="where collection partitions run (overrides the config); the weights do not depend on it")
    start = ppo.add_mutually_exclusive_group()
    start.add_argument("--resume", action="store_true", help="continue from RUN_DIR/checkpoint.safetensors")
    start.add_argument("--overwrite", action="store_true",
                       help="start over in a RUN_DIR that holds a run, deleting its checkpoint, policy and logs "
                            "(refused otherwise)")
    ppo.add_argument("--quiet", action="store_true", help="no progress bar")
    ppo.set_defaults(func=_cmd_train_ppo)
    # other trainers (cfr) add their parser to `trainers` here
    cfr_train = trainers.add_parser(
        "cfr",
        help="CFR: exact CFR+ on research presets, MCCFR with abstraction on full 1v1 presets",
        description=(
            "Train from a YAML config (configs/cfr_*.yaml): trainer 'exact' runs full-traversal CFR+ (or\n"
            "linear/discounted CFR) on a research preset and reports exact NashConv; trainer 'mccfr' runs\n"
            "external-sampling MCCFR with the information-set abstraction on argentine, argentine-flor or\n"
            "paulista. Shows progress, logs to TensorBoard and writes resumable .npz checkpoints (one run\n"
            "at a time per checkpoint; Ctrl-C keeps the last one and names the command that continues it)."
        ),
        epilog=("examples:\n  truco train cfr --config configs/cfr_argentine_mini.yaml\n"
                "  truco train cfr --config configs/cfr_mccfr_paulista.yaml"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cfr_train.add_argument("--config", required=True, metavar="FILE.yaml", help="the run config")
    cfr_train.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                           help="override a config option (repeatable; the value is read as YAML)")
    cfr_train.add_argument("--no-resume", action="store_true", help="start over even if the checkpoint exists")
    cfr_train.add_argument("--no-progress", action="store_true", help="no progress bar")
    cfr_train.set_defaults(func=_cmd_train_cfr)

    export = sub.add_parser(
        "export",
        help="export a trained policy for other front ends (ppo -> ONNX)",
        description="Export a trained policy so that programs without this project can run it.",
        epilog="example:\n  truco export ppo runs/ppo/argentine/policy.safetensors --out exported/argentine.onnx",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    exporters = export.add_subparsers(dest="exporter", metavar="KIND")
    exporters.required = True
    export_ppo = exporters.add_parser(
        "ppo",
        help="PPO policy -> ONNX model + metadata JSON (+ test vectors)",
        description=(
            "Write an ONNX model (inputs: observation, action_mask; outputs: probabilities, value; dynamic\n"
            "batch axis), its metadata JSON beside it, and test vectors that another implementation can\n"
            "reproduce (docs/export.md). The files are made aside and moved into place together at the end;\n"
            "existing ones are replaced only with --overwrite."
        ),
        epilog=("examples:\n  truco export ppo ppo:argentine --out exported/argentine.onnx\n"
                "  truco export ppo runs/ppo/policy.safetensors --out m.onnx --vectors-per-preset 50"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export_ppo.add_argument("policy", help="a policy .safetensors file, ppo:<shipped name> or best:<preset>")
    export_ppo.add_argument("--out", required=True, metavar="FILE.onnx", help="where the ONNX model goes")
    export_ppo.add_argument("--vectors-per-preset", type=_integer(0, MAX_VECTORS, f"an integer 0..{MAX_VECTORS}"),
                            default=20, metavar="N",
                            help=f"test-vector positions per preset, at most {MAX_VECTORS} (0: none; default 20)")
    export_ppo.add_argument("--overwrite", action="store_true",
                            help="replace the files of an earlier export at --out (refused otherwise)")
    export_ppo.set_defaults(func=_cmd_export_ppo)
    # other exporters (cfr) add their parser to `exporters` here
    export_cfr = exporters.add_parser(
        "cfr",
        help="CFR checkpoint -> JSON table of the average strategy (docs/research.md)",
        description=("Write a CFR checkpoint's average strategy as JSON: information-set key -> {action name:\n"
                     "probability}, with the rules and the key format (docs/research.md)."),
        epilog="example:\n  truco export cfr runs/cfr/argentine-mini/checkpoint.npz --out exported/argentine-mini.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export_cfr.add_argument("checkpoint", help="a CFR checkpoint (.npz)")
    export_cfr.add_argument("--out", required=True, metavar="FILE.json", help="where the JSON table goes")
    export_cfr.add_argument("--overwrite", action="store_true", help="replace an existing --out (refused otherwise)")
    export_cfr.set_defaults(func=_cmd_export_cfr)

    bench = sub.add_parser(
        "bench",
        help="speed of the engine and environments against peer libraries",
        description=(
            "Seeded random legal play through the reference and fast engines (per preset),\n"
            "the AEC environment and the vector environment (1 and 2 processes), and the peers\n"
            "pytruco, PettingZoo leduc_holdem_v4 and OpenSpiel leduc_poker, in one process.\n"
            "Prints a table with each ratio ours/peer, the targets, and a final JSON line.\n"
            "Peers come with: pip install -c constraints.txt -e \".[bench]\""
        ),
        epilog="examples:\n  truco bench\n  truco bench --quick",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument("--quick", action="store_true", help="a smoke run, about ten times shorter")
    bench.set_defaults(func=_cmd_bench)

    evaluate = sub.add_parser(
        "eval",
        help="tournaments between agents: duplicate deals, intervals, ratings, behaviour",
        description=(
            "Head-to-head (two agents) or round-robin (more) tournaments on duplicate deals:\n"
            "every deal is played twice with the agents' seats swapped, so both sides get the\n"
            "same cards. Prints Markdown tables (win rate with a 95% Wilson interval, points\n"
            "and hands, a significance verdict, OpenSkill ratings, behaviour statistics) and\n"
            "writes CSV, JSON and PNG files to --out. Same seed, same numbers, whatever --workers.\n"
            "The files appear together when every match is played (with a manifest.json naming the run);\n"
            "an existing --out is replaced only with --overwrite, and one run at a time writes it.\n"
            "Agent specs: random, heuristic, heuristic:bluff=0.3, cfr:PATH, ppo:PATH, ..."
        ),
        epilog=(
            "examples:\n"
            "  truco eval --agents heuristic random --preset argentine --matches 200\n"
            "  truco eval --agents heuristic:bluff=0.3 heuristic:bluff=0 random --preset paulista"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evaluate.add_argument("--agents", nargs="+", metavar="SPEC", help="two or more agent specs")
    evaluate.add_argument("--preset", action="append", metavar="NAME",
                          help="rules preset; repeat for several (default: argentine)")
    evaluate.add_argument("--matches", type=_positive_int, default=None, metavar="N",
                          help="matches per pairing and preset, even: N/2 deals x 2 seatings (default: 200)")
    evaluate.add_argument("--seed", type=_int, default=None, help="tournament seed (default: 0)")
    evaluate.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                          help="worker processes (default: all cores)")
    evaluate.add_argument("--out", default=None, metavar="DIR", help="output folder (default: runs/eval)")
    evaluate.add_argument("--backend", choices=["local", "ray"], default=None,
                          help="local processes (default) or a Ray cluster (pip install 'truco-rl[ray]'); "
                               "same results either way")
    evaluate.add_argument("--allow-other-preset", action="store_true",
                          help="play policies on presets they were not trained for (research; refused otherwise)")
    evaluate.add_argument("--records", metavar="DIR",
                          help="also write every match record here (JSON, replayable with truco replay)")
    evaluate.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    evaluate.add_argument("--overwrite", action="store_true",
                          help="replace an --out (and --records) folder that holds an earlier run (refused otherwise)")
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bar")
    evaluate.add_argument("--config", metavar="FILE.yaml",
                          help="the tournament's options as YAML (agents, presets, matches, seed, workers, out, "
                               "backend, allow_other_preset, records, plots, progress, overwrite); flags override it")
    evaluate.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                          help="override an option of --config (repeatable; the value is read as YAML)")
    evaluate.set_defaults(func=_cmd_eval)

    exploit = sub.add_parser(
        "exploit",
        help="approximate exploitability: train a best response against an agent, report its win rate",
        description=(
            "Freeze TARGET (any agent spec), train a fresh best-response learner against it alone\n"
            "for a budget of learner decisions or minutes (the same fixed PPO recipe for every\n"
            "target), then play duplicate-deal matches of the greedy learner against the target.\n"
            "The learner's win rate with its 95% Wilson interval is the ABR win rate (approximate\n"
            "exploitability). Writes result.json/.csv, curve.csv/.png, learner.safetensors, eval/,\n"
            "tb/ and manifest.json to --out, all together at the end; an existing --out is replaced\n"
            "only with --overwrite. Ctrl-C stops after the current update and writes a partial result\n"
            "marked 'interrupted'; a second Ctrl-C leaves at once and writes nothing."
        ),
        epilog=(
            "examples:\n"
            "  truco exploit ppo:argentine --preset argentine              # the standard budget\n"
            "  truco exploit heuristic --preset paulista --budget-minutes 10 --out runs/x\n"
            "  truco exploit cfr:runs/cfr/argentine-mini/checkpoint.npz --preset argentine-mini"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    exploit.add_argument("target", metavar="TARGET", help="agent spec to exploit (heuristic, ppo:argentine, ...)")
    exploit.add_argument("--preset", default="argentine", help="rules preset (default: argentine)")
    budget = exploit.add_mutually_exclusive_group()
    budget.add_argument("--budget-decisions", type=_positive_int, default=None, metavar="N",
                        help="learner decisions to train on (default: the standard budget, 600,000)")
    budget.add_argument("--budget-minutes", type=_positive_float, default=None, metavar="M",
                        help="wall-clock minutes to train instead")
    exploit.add_argument("--seed", type=_int, default=0, help="seed of the whole run (default: 0)")
    exploit.add_argument("--workers", type=_positive_int, default=2, metavar="N",
                         help="processes for collection and evaluation (default: 2; does not change results)")
    exploit.add_argument("--matches", type=_positive_int, default=2000, metavar="N",
                         help="duplicate matches of the final evaluation, even (default: 2000)")
    exploit.add_argument("--out", default=None, metavar="DIR",
                         help="output folder (default: runs/exploit/PRESET/TARGET)")
    exploit.add_argument("--overwrite", action="store_true",
                         help="replace an --out folder that holds an earlier run (refused otherwise)")
    exploit.add_argument("--no-progress", action="store_true", help="no progress bars")
    exploit.set_defaults(func=_cmd_exploit)

    gauntlet = sub.add_parser(
        "gauntlet",
        help="duplicate matches against a fixed population of held-out opponents",
        description=(
            "Play AGENT against every opponent of the preset's gauntlet: a fixed population in four\n"
            "families (heuristic variants, threshold rules, archetypes, trained best responses) that\n"
            "no training config uses. Reports each win rate with its 95% interval, the mean and the\n"
            "worst case, and writes gauntlet.json/.csv/.png, eval/ and manifest.json to --out, all\n"
            "together once every match is played; an existing --out is replaced only with --overwrite."
        ),
        epilog=("examples:\n"
                "  truco gauntlet ppo:argentine --preset argentine\n"
                "  truco gauntlet --make-opponents --preset paulista     # train and package its networks"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gauntlet.add_argument("agent", nargs="?", metavar="AGENT", help="agent spec to evaluate")
    gauntlet.add_argument("--preset", default="argentine", help="rules preset (default: argentine)")
    gauntlet.add_argument("--matches", type=_positive_int, default=400, metavar="N",
                          help="duplicate matches per opponent, even (default: 400)")
    gauntlet.add_argument("--seed", type=_int, default=0, help="tournament seed (default: 0)")
    gauntlet.add_argument("--workers", type=_positive_int, default=2, metavar="N", help="processes (default: 2)")
    gauntlet.add_argument("--out", default=None, metavar="DIR", help="output folder (default: runs/gauntlet-eval/PRESET)")
    gauntlet.add_argument("--make-opponents", action="store_true",
                          help="train the gauntlet's two networks for --preset and package them")
    gauntlet.add_argument("--overwrite", action="store_true",
                          help="replace an --out folder that holds an earlier run (refused otherwise)")
    gauntlet.add_argument("--no-progress", action="store_true", help="no progress bars")
    gauntlet.set_defaults(func=_cmd_gauntlet)

    report = sub.add_parser(
        "report",
        help="the strength report of every shipped agent (docs/strength.md)",
        description=(
            "For the heuristic and each shipped PPO policy of the four main presets: the ABR win rate\n"
            "at the standard budget, the gauntlet mean and worst case, and the win rates against the\n"
            "heuristic and random. Every stage is stored under --runs and reused when done, so an\n"
            "interrupted report resumes."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument("--preset", action="append", metavar="NAME", help="only this preset (repeatable)")
    report.add_argument("--out", default="docs/strength.md", metavar="FILE.md", help="(default: docs/strength.md)")
    report.add_argument("--runs", default="runs/report", metavar="DIR", help="stage files (default: runs/report)")
    report.add_argument("--budget-decisions", type=_positive_int, default=None, metavar="N",
                        help="ABR budget in learner decisions (default: the standard budget)")
    report.add_argument("--matches", type=_positive_int, default=2000, metavar="N",
                        help="duplicate matches of the ABR and baseline evaluations (default: 2000)")
    report.add_argument("--gauntlet-matches", type=_positive_int, default=400, metavar="N",
                        help="duplicate matches per gauntlet opponent (default: 400)")
    report.add_argument("--seed", type=_int, default=0, help="seed of every stage (default: 0)")
    report.add_argument("--workers", type=_positive_int, default=2, metavar="N", help="processes (default: 2)")
    report.add_argument("--no-progress", action="store_true", help="no progress bars")
    report.set_defaults(func=_cmd_report)
    return parser


def _cmd_eval(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.evaluate import cli_main

    return cli_main(args)


def _cmd_exploit(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.exploit import cli_main

    return cli_main(args)


def _cmd_gauntlet(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.gauntlet import cli_main

    return cli_main(args)


def _cmd_report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.report import cli_main

    return cli_main(args)


def _cmd_bench(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run ``python -m benchmarks.speed`` of the clone this package sits in, as a program: the package never
    imports the scripts around it (the layers' one-way rule), and an installed wheel has no benchmarks."""
    import os
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.path.isfile(os.path.join(root, "benchmarks", "speed.py")):
        print("truco bench: error: the benchmarks/ folder of a clone of the repository is needed (an installed "
              "package has none)", file=sys.stderr)
        return 1
    command = [sys.executable, "-m", "benchmarks.speed", *(["--quick"] if args.quick else [])]
    return subprocess.run(command, cwd=root, check=False).returncode


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``truco`` tool and return its exit code."""
    try:
        parser = build_parser()  # imports torch for train ppo's option list: seconds in which Ctrl-C may come
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
        print(f"{_command_name(args)}: error: {exc}", file=sys.stderr)
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


#: Optional dependencies and the extras (pyproject.toml) that install each, the usual one first: the core install
#: is the engine, the environments, the random and heuristic agents and replay; everything else names its extra
#: when it is missing (the running command's own extra where it is one of them).
EXTRAS = {"torch": ("train",), "tensorboard": ("train",), "safetensors": ("train",), "pydantic": ("train", "eval"),
          "yaml": ("train", "eval"), "tqdm": ("eval", "train"), "matplotlib": ("eval",), "openskill": ("eval",),
          "rich": ("play",), "onnx": ("export",), "onnxruntime": ("export",), "onnxscript": ("export",),
          "ray": ("ray",), "pyspiel": ("spiel",), "werkzeug": ("web",)}
#: The extra a command is installed by, where it has one.
COMMAND_EXTRAS = {"eval": "eval", "train": "train", "play": "play", "export": "export", "serve": "web"}


def extra_for(module: str | None, command: str | None = None) -> str | None:
    """The extra that installs ``module`` (a dotted name is looked up by its top-level package): ``command``'s
    own extra when that one installs it, else the usual one."""
    extras = EXTRAS.get((module or "").split(".")[0])
    if not extras:
        return None
    own = COMMAND_EXTRAS.get(command or "")
    return own if own in extras else extras[0]


# ---------------------------------------------------------------- train


def _ppo_options() -> str:
    try:
        from training.options import describe
        from training.ppo import PPOArgs
    except ModuleNotFoundError as exc:
        if extra_for(exc.name) is None:
            raise
        return "  (the options are listed once the training extra is installed: pip install 'truco-rl[train]')"
    return describe(PPOArgs)


def _cmd_train_ppo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import os
    import shlex

    from agents.network import PolicyFileError
    from training.options import load
    from training.ppo import PPOArgs, TrainingInterrupted, train
    from truco_env.limits import clip

    options = None
    try:
        options = load(PPOArgs, args.config, args.set, run_dir=args.run_dir, backend=args.backend)
        path = train(options, resume=args.resume, progress_bar=not args.quiet, overwrite=args.overwrite)
    except (ValueError, PolicyFileError) as err:
        print(f"truco train ppo: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a full disk, a run dir that became unwritable (training.atomic: safetensors too)
        reason = getattr(err, "strerror", None) or " ".join(str(err).split())
        print(f"truco train ppo: error: could not write in the run dir {options.run_dir if options else ''!r}: "
              f"{clip(reason, 160)} (its last checkpoint, if any, is whole: make room, then --resume)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # the first Ctrl-C (after a checkpoint), a second one, or the warm start's
        checkpoint = None if options is None else os.path.join(options.run_dir, "checkpoint.safetensors")
        if checkpoint is None or not os.path.exists(checkpoint):
            print("\ntruco train ppo: interrupted before the run's first checkpoint: nothing to resume; run the "
                  "same command again to start over", file=sys.stderr)
            return 130
        command = ["truco", "train", "ppo", *(["--config", args.config] if args.config else []),
                   *[part for item in args.set for part in ("--set", item)], "--run-dir", options.run_dir,
                   *(["--backend", args.backend] if args.backend else []), "--resume"]
        where = (f"at {exc.decisions:,} of {exc.total:,} decisions" if isinstance(exc, TrainingInterrupted)
                 else "at once")
        print(f"\ntruco train ppo: interrupted {where}; its state is the checkpoint {checkpoint} (no "
              f"policy.safetensors: only a finished run writes it); continue with: {shlex.join(command)}",
              file=sys.stderr)
        return 130
    print(f"policy written to {path}")
    return 0


def _cmd_train_cfr(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from agents.cfr_table import CheckpointError
    from training.cfr.runconfig import load_config
    from training.cfr.train import train
    from training.options import parse_overrides

    cfg, resumes = None, True
    try:
        cfg = load_config(args.config, parse_overrides(args.set))
        resumes = cfg.resume  # the config's own setting, before --no-resume
        # a copy, not assignments: assignment re-runs the validators, and the before-validator that names keys of
        # the other trainer would see this trainer's defaults for them
        cfg = cfg.model_copy(update={"resume": cfg.resume and not args.no_resume,
                                     "progress": cfg.progress and not args.no_progress})
        train(cfg)
    except CheckpointError as exc:
        print(f"truco train cfr: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"truco train cfr: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        import os
        import shlex

        if cfg is None or not os.path.exists(cfg.checkpoint):
            print("\ntruco train cfr: interrupted before the run's first checkpoint: nothing to resume; run the "
                  "same command again to start over", file=sys.stderr)
            return 130
        command = ["truco", "train", "cfr", "--config", args.config,
                   *[part for item in args.set for part in ("--set", item)],
                   *([] if resumes else ["--set", "resume=true"])]
        print(f"\ntruco train cfr: interrupted; its state is the last checkpoint {cfg.checkpoint}; continue "
              f"with: {shlex.join(command)}", file=sys.stderr)
        return 130
    return 0


# ---------------------------------------------------------------- export


def _cmd_export_cfr(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from pathlib import Path

    from training.cfr.policy import export_json
    from training.outputs import output_files

    try:
        with output_files([args.out], overwrite=args.overwrite) as tmp:
            summary = export_json(args.checkpoint, tmp / Path(args.out).name)
    except (ValueError, OSError) as exc:
        print(f"truco export cfr: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ntruco export cfr: interrupted; nothing was written ({args.out} is as it was)", file=sys.stderr)
        return 130
    print(f"wrote {args.out} ({summary['infosets']} information sets, {summary['bytes']} bytes)")
    return 0



def _cmd_export_ppo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import os

    from agents.network import PolicyFileError, load_policy
    from agents.ppo import policy_path, shipped_policies
    from training.export import export_onnx, write_test_vectors
    from training.outputs import output_files

    path = args.policy
    if path.startswith("best:"):  # the report's choice (agents/best.py), when it is a network
        from agents.best import resolve_best

        try:
            chosen = resolve_best(path[5:])
        except ValueError as exc:
            print(f"truco export ppo: error: {exc}", file=sys.stderr)
            return 2
        if not chosen.startswith("ppo:"):
            print(f"truco export ppo: error: {path} is {chosen}, not a PPO policy; `truco export cfr` writes a CFR "
                  "table as JSON, and the heuristic is code, not a file", file=sys.stderr)
            return 2
        path = chosen
    if path.startswith("ppo:"):
        name = path[4:]
        if name not in shipped_policies():
            print(f"truco export ppo: error: no shipped policy {name!r}; shipped: {shipped_policies()}",
                  file=sys.stderr)
            return 2
        path = policy_path(name)
    stem = os.path.splitext(args.out)[0]
    files = [args.out, stem + ".json", stem + ".test_vectors.json"]  # the model, its metadata, the test vectors
    try:
        if len({os.path.abspath(f) for f in files}) < len(files):
            raise ValueError(f"--out {args.out!r}: the metadata goes to {files[1]!r}; give the model another "
                             "name (FILE.onnx)")
        _, meta = load_policy(path)
        with output_files(files, overwrite=args.overwrite) as tmp:
            model, _ = export_onnx(path, str(tmp / os.path.basename(files[0])))
            if args.vectors_per_preset > 0:
                write_test_vectors(model, str(tmp / os.path.basename(files[2])),
                                   list(meta.get("presets") or ["argentine"]), args.vectors_per_preset)
    except (PolicyFileError, ValueError, OSError) as exc:
        print(f"truco export ppo: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ntruco export ppo: interrupted; nothing was written ({args.out} is as it was)", file=sys.stderr)
        return 130
    print(f"wrote {files[0]} and {files[1]}")
    if args.vectors_per_preset > 0:
        print(f"wrote {files[2]}")
    return 0


# ---------------------------------------------------------------- play


def _cmd_play(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.play import play_match

    try:
        from agents.best import default_spec

        fallback = default_spec(args.preset, "heuristic")
        return play_match(args.preset, args.opponent or fallback, args.partner or fallback, args.seat, args.seed,
                          args.save, args.hands, allow_other_preset=args.allow_other_preset)
    except ValueError as exc:
        print(f"truco play: error: {exc}", file=sys.stderr)
        return 2


def _cmd_serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.serve import serve

    try:
        return serve(args.preset, args.opponent, args.port, args.host, args.records, args.cache, args.seed,
                     args.allow_other_preset)
    except ValueError as exc:
        print(f"truco serve: error: {exc}", file=sys.stderr)
        return 2


# ---------------------------------------------------------------- replay


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

            from training.play import Onlooker
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
    print(f"truco replay: {args.file}: OK, {hands} hand(s) reproduced, score {_format_score(state.score)}, {status}")
    return 0


# ---------------------------------------------------------------- demo


def _cmd_demo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if not args.random:
        if args.preset:
            print("truco demo: error: --preset goes with --random (the main demo trains on argentine)",
                  file=sys.stderr)
            return 2
        import os

        from training.demo import run_demo

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


if __name__ == "__main__":
    sys.exit(main())
