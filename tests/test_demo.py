"""The README's demo command runs the main job in miniature: train, then a tournament with tables and plots."""

import re

from agents import make_agent
from training.cli import main


def test_quick_demo_trains_and_writes_the_tournament(tmp_path, capsys):
    assert main(["demo", "--quick", "--matches", "4", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "`ppo (demo)`" in out and "`heuristic`" in out and "A win rate" in out
    # the last word: the short run beside the shipped full run, against the same opponents
    table = out[out.index("What a short run and a full run reach"):]
    shipped = make_agent("ppo:argentine").metadata["decisions"]
    assert re.search(r"\| `ppo \(demo\)` \| [23],\d{3} \|", table) and f"| `ppo:argentine` | {shipped:,} |" in table
    assert (tmp_path / "train" / "policy.safetensors").exists()
    for name in ("pairings.csv", "results.json", "report.md", "winrate_heatmap.png", "ratings.png"):
        assert (tmp_path / "eval" / name).exists(), name


def test_demo_rejects_bad_options(capsys):
    assert main(["demo", "--matches", "3"]) == 2
    assert main(["demo", "--preset", "paulista"]) == 2
    assert "--random" in capsys.readouterr().err
