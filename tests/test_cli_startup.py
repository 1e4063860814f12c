"""The ``truco`` tool starts without torch: only a command that runs a network imports it.

Why: every ``truco`` process paid torch's import (seconds) just to build the parser, because ``train ppo --help``
lists the PPO options and that listing imports the trainer. The bot protocol, replay and the tests spawn many
short ``truco`` processes; each paid it again. The listing is now made when the help is shown.
"""

from __future__ import annotations

import subprocess
import sys

from training.cli import build_parser


def test_building_the_parser_imports_no_torch():
    code = ("import sys; from training.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('torch', 'training.learn.ppo') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_the_trainers_help_still_lists_their_options(capsys):
    parser = build_parser()
    for argv, option in ((["train", "ppo", "--help"], "seed (int; default 1)"),
                         (["train", "distill", "--help"], "matches")):
        try:
            parser.parse_args(argv)
        except SystemExit as exc:
            assert exc.code == 0
        text = capsys.readouterr().out
        assert "Options (YAML file or --set" in text and option in text, argv
