"""The README's shell blocks run as written, in order, in a temporary copy of the repository.

A newcomer copies the blocks one after the other; a block that fails as written (a folder the block before filled,
a renamed option, a file that moved) must fail here first. Cheap commands run exactly as written. Long ones run
as written plus the options of :data:`BUDGETS` that make them tiny and keep them in one process (appended, so the
README's own options are all still parsed and used; worker processes would each start torch again, which cost
the whole suite about a minute); a command this test does not know fails the test until it is listed, so a new long
command cannot slip in unmeasured. The set-up and test scripts are the two commands that are not run here: the
suite is what ``scripts/test.sh`` runs, and the demo it sets up runs as ``truco demo --quick``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TRUCO = Path(sys.executable).with_name("truco")

#: Long commands (by their first words) and what makes them tiny here.
BUDGETS = {
    "truco train ppo --config": ["--set", "total_decisions=2000", "--set", "batch_decisions=1000", "--set",
                                 "tables=8", "--set", "imitation_decisions=200", "--set", "eval_every=0",
                                 "--set", "backend=local", "--quiet"],
    "truco train cfr --config configs/cfr_argentine_mini.yaml": ["--set", "iterations=3", "--no-progress"],
    "truco train cfr --config": ["--set", "iterations=40", "--set", "eval={opponent: heuristic, matches: 2, workers: 1}",
                                 "--no-progress"],
    "truco eval": ["--matches", "4", "--workers", "1", "--no-plots", "--no-progress"],
    "truco gauntlet": ["--matches", "2", "--workers", "1"],
    "truco exploit": ["--budget-decisions", "2000", "--matches", "2", "--workers", "1", "--no-progress"],
    "truco report": ["--preset", "paulista-2v2", "--budget-decisions", "2000", "--matches", "2",
                     "--gauntlet-matches", "2", "--workers", "1", "--no-progress", "--root", "runs/tiny"],
}
#: Commands that run as written.
CHEAP = ("truco train ppo --help", "truco export ppo", "truco play", "truco replay")
#: Not run here (module docstring), with the command that stands for them.
STAND_INS = {"bash scripts/demo.sh": "truco demo --quick --matches 4", "bash scripts/test.sh": None}


def readme_commands() -> list[str]:
    """Every command line of the README's ``bash`` blocks, in order (comments stripped)."""
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if command and not command.startswith("#"):
                lines.append(command)
    return lines


def runnable(command: str) -> list[str] | None:
    """The commands to run for one README line (a line may chain with ``&&``); None for the scripts."""
    if command in STAND_INS:
        stand_in = STAND_INS[command]
        return None if stand_in is None else [stand_in]
    out = []
    for part in (p.strip() for p in command.split("&&")):
        if part.startswith(CHEAP):
            out.append(part)
            continue
        key = max((k for k in BUDGETS if part.startswith(k)), key=len, default=None)
        if key is None:
            pytest.fail(f"README command {part!r} is neither cheap nor given a budget in tests/test_readme.py")
        out.append(part + " " + shlex.join(BUDGETS[key]))
    return out


def test_every_readme_command_is_known():
    commands = readme_commands()
    assert "bash scripts/demo.sh" in commands and "bash scripts/test.sh" in commands
    for command in commands:
        runnable(command)


@pytest.mark.skipif(not TRUCO.exists(), reason="the truco command is not installed beside this Python")
def test_the_readme_blocks_run_in_order_as_written(tmp_path):
    copy = tmp_path / "truco-rl"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", "runs", "exported", "build",
                                                              "node_modules", "__pycache__", "*.egg-info"))
    env = {**os.environ, "PATH": f"{TRUCO.parent}{os.pathsep}{os.environ['PATH']}"}
    for command in readme_commands():
        for part in runnable(command) or []:
            argv = shlex.split(part)
            if argv[:2] == ["truco", "play"]:
                stdin = "q\n"  # a person who leaves at once: the record is still saved
            else:
                stdin = ""
            result = subprocess.run(argv, cwd=copy, env=env, input=stdin, capture_output=True, text=True,
                                    timeout=600, check=False)
            assert result.returncode == 0, (f"README command {command!r} failed as run here ({part!r}):\n"
                                            f"{result.stderr[-2000:]}")
