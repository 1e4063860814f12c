"""``truco eval``, ``exploit``, ``gauntlet`` and ``report``: how strong agents are."""

from __future__ import annotations

import argparse

from training.cli.args import any_integer, positive_int


def add(sub: argparse._SubParsersAction) -> None:
    """The measuring commands."""
    _add_evaluate(sub)
    _add_exploit(sub)
    _add_gauntlet(sub)
    _add_report(sub)
    _add_leaderboard(sub)


def _add_evaluate(sub: argparse._SubParsersAction) -> None:
    """``truco eval``."""
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
    evaluate.add_argument("--matches", type=positive_int, default=None, metavar="N",
                          help="matches per pairing and preset, even: N/2 deals x 2 seatings (default: 200)")
    evaluate.add_argument("--seed", type=any_integer, default=None, help="tournament seed (default: 0)")
    evaluate.add_argument("--workers", type=positive_int, default=None, metavar="N",
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


def _add_exploit(sub: argparse._SubParsersAction) -> None:
    """``truco exploit``."""
    exploit = sub.add_parser(
        "exploit",
        help="approximate exploitability: train a best response against an agent, report its win rate",
        description=(
            "Freeze TARGET (any agent spec), train a fresh best-response learner against it alone\n"
            "for a budget of learner decisions (the PPO trainer with the same fixed recipe for every\n"
            "target), then play duplicate-deal matches of the greedy learner against the target.\n"
            "The learner's win rate with its 95% Wilson interval is the ABR win rate (approximate\n"
            "exploitability). Writes result.json/.csv, curve.csv/.png, learner.safetensors, eval/,\n"
            "tb/ and manifest.json to --out, all together at the end; an existing --out is replaced\n"
            "only with --overwrite. Ctrl-C stops after the current update and writes a partial result\n"
            "marked 'interrupted', keeping the learner's checkpoint in OUT.training/, which the same\n"
            "command with --overwrite resumes; a second Ctrl-C leaves at once and writes nothing."
        ),
        epilog=(
            "examples:\n"
            "  truco exploit ppo:argentine --preset argentine              # the standard budget\n"
            "  truco exploit heuristic --preset paulista --budget-decisions 100000 --out runs/x\n"
            "  truco exploit cfr:runs/cfr/argentine-mini/checkpoint.npz --preset argentine-mini"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    exploit.add_argument("target", metavar="TARGET", help="agent spec to exploit (heuristic, ppo:argentine, ...)")
    exploit.add_argument("--preset", default="argentine", help="rules preset (default: argentine)")
    exploit.add_argument("--budget-decisions", type=positive_int, default=None, metavar="N",
                         help="learner decisions to train on (default: the standard budget, 600,000)")
    exploit.add_argument("--seed", type=any_integer, default=0, help="seed of the whole run (default: 0)")
    exploit.add_argument("--workers", type=positive_int, default=2, metavar="N",
                         help="processes for collection and evaluation (default: 2; does not change results)")
    exploit.add_argument("--device", default="auto", metavar="DEVICE",
                         help="where the learner's update runs: auto (the GPU when torch sees one, else the CPU), "
                              "cpu, cuda, cuda:N (default: auto)")
    exploit.add_argument("--matches", type=positive_int, default=2000, metavar="N",
                         help="duplicate matches of the final evaluation, even (default: 2000)")
    exploit.add_argument("--out", default=None, metavar="DIR",
                         help="output folder (default: runs/exploit/PRESET/TARGET)")
    exploit.add_argument("--overwrite", action="store_true",
                         help="replace an --out folder that holds an earlier run (refused otherwise)")
    exploit.add_argument("--no-progress", action="store_true", help="no progress bars")
    exploit.set_defaults(func=_cmd_exploit)


def _add_gauntlet(sub: argparse._SubParsersAction) -> None:
    """``truco gauntlet``."""
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
    gauntlet.add_argument("--matches", type=positive_int, default=400, metavar="N",
                          help="duplicate matches per opponent, even (default: 400)")
    gauntlet.add_argument("--seed", type=any_integer, default=0, help="tournament seed (default: 0)")
    gauntlet.add_argument("--workers", type=positive_int, default=2, metavar="N", help="processes (default: 2)")
    gauntlet.add_argument("--out", default=None, metavar="DIR", help="output folder (default: runs/gauntlet-eval/PRESET)")
    gauntlet.add_argument("--make-opponents", action="store_true",
                          help="train the gauntlet's two networks for --preset and package them")
    gauntlet.add_argument("--overwrite", action="store_true",
                          help="replace an --out folder that holds an earlier run (refused otherwise)")
    gauntlet.add_argument("--no-progress", action="store_true", help="no progress bars")
    gauntlet.set_defaults(func=_cmd_gauntlet)


def _add_report(sub: argparse._SubParsersAction) -> None:
    """``truco report``."""
    report = sub.add_parser(
        "report",
        help="the strength report of every shipped agent (docs/strength.md)",
        description=(
            "For the heuristic and each shipped PPO policy and CFR blueprint of every report preset (the four main\n"
            "presets and uruguayan, uruguayan-2v2): the ABR win rate\n"
            "at the standard budget, the gauntlet mean and worst case, and the win rates against the\n"
            "heuristic and random. Every stage is stored under --runs and reused when done, so an\n"
            "interrupted report resumes.\n"
            "Writes, under --root: docs/strength.md (the page), docs/strength.json (its data, which the\n"
            "next report reuses), docs/img/strength.png, and agents/policies/ (the model card of each\n"
            "measured policy and blueprint, and best.json, the choice of best:<preset>)."
        ),
        epilog=("examples:\n"
                "  truco report                                # from the repository's root: its own report\n"
                "  truco report --preset paulista              # one preset measured; the page keeps the others\n"
                "  truco report --root runs/trial --budget-decisions 20000   # a trial, outside the repository's docs"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument("--preset", action="append", metavar="NAME",
                        help="measure only this preset (repeatable); the page keeps the others' stored rows")
    report.add_argument("--root", default=".", metavar="DIR",
                        help="the folder the report is written into, laid out as the repository (DIR/docs/, "
                             "DIR/agents/policies/) and read back from (DIR/docs/strength.json) "
                             "(default: the current directory: run it from the repository's root)")
    report.add_argument("--runs", default="runs/report", metavar="DIR",
                        help="stage files; the best responses are kept in exploit/ beside it (default: runs/report, "
                             "so runs/exploit)")
    report.add_argument("--budget-decisions", type=positive_int, default=None, metavar="N",
                        help="ABR budget in learner decisions (default: the standard budget)")
    report.add_argument("--matches", type=positive_int, default=2000, metavar="N",
                        help="duplicate matches of the ABR and baseline evaluations (default: 2000)")
    report.add_argument("--gauntlet-matches", type=positive_int, default=400, metavar="N",
                        help="duplicate matches per gauntlet opponent (default: 400)")
    report.add_argument("--seed", type=any_integer, default=0, help="seed of every stage (default: 0)")
    report.add_argument("--workers", type=positive_int, default=2, metavar="N", help="processes (default: 2)")
    report.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="where the stages run: one after another here, or each a Ray task (RAY_ADDRESS joins a "
                             "cluster; --runs must be a folder every node sees) (default: local)")
    report.add_argument("--no-progress", action="store_true", help="no progress bars")
    report.set_defaults(func=_cmd_report)


def _cmd_eval(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.measure.evaluate import cli_main

    return cli_main(args)


def _cmd_exploit(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.measure.exploit import cli_main

    return cli_main(args)


def _cmd_gauntlet(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.measure.gauntlet import cli_main

    return cli_main(args)


def _cmd_report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.measure.report import cli_main

    return cli_main(args)


def _add_leaderboard(sub: argparse._SubParsersAction) -> None:
    """``truco leaderboard``."""
    board = sub.add_parser(
        "leaderboard",
        help="a leaderboard over a YAML list of entrants: every pairing once, new entrants play only theirs",
        description=("Play duplicate matches between every pair of the entrants listed in CONFIG.yaml (any agent\n"
                     "specs, outside programs as exec:COMMAND included), store each pairing's results under\n"
                     "OUT/pairings, and write the board (OUT/board: report.md, results.json, CSV, plots) with\n"
                     "win rates, 95% intervals and OpenSkill ratings. A new entrant plays only its new pairings;\n"
                     "Ctrl-C keeps the pairings already played."),
        epilog=("example CONFIG.yaml:\n  entrants: [heuristic, random, \"exec:node examples/bots/random.mjs\"]\n"
                "  preset: argentine\n  matches: 200\n\nexample:\n  truco leaderboard board.yaml --out runs/board"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    board.add_argument("config", metavar="CONFIG.yaml", help="entrants, preset, matches, seed")
    board.add_argument("--out", default="runs/leaderboard", metavar="DIR",
                       help="where the pairings and the board go (default: runs/leaderboard)")
    board.add_argument("--workers", type=positive_int, default=2, metavar="N", help="processes (default: 2)")
    board.add_argument("--no-progress", action="store_true", help="no progress bars")
    board.set_defaults(func=_cmd_leaderboard)


def _cmd_leaderboard(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.measure.leaderboard import cli_main

    return cli_main(args)
