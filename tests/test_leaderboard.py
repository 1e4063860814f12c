"""``truco leaderboard``: every pairing once, a new entrant plays only its own pairings, an interrupted run goes on
where it stopped, and the same entrants give the same board."""

from __future__ import annotations

import json

import pytest

from training.cli import main
from training.measure import leaderboard
from training.measure.leaderboard import LeaderboardConfig, run_leaderboard


def board(tmp_path, entrants):
    config = LeaderboardConfig(entrants=entrants, preset="paulista", matches=4, seed=2)
    return run_leaderboard(config, tmp_path / "lb", workers=1, progress=False, log=lambda line: None)


def test_a_new_entrant_plays_only_its_pairings_and_the_board_is_the_same_for_the_same_entrants(tmp_path,
                                                                                             monkeypatch):
    calls = []
    real = leaderboard.play_tasks
    monkeypatch.setattr(leaderboard, "play_tasks", lambda tasks, **kw: calls.append(
        (tasks[0].spec_a, tasks[0].spec_b)) or real(tasks, **kw))
    first = board(tmp_path, ["heuristic", "random"])
    assert calls == [("heuristic", "random")] and len(first["pairings"]) == 1
    grown = board(tmp_path, ["heuristic", "random", "threshold"])
    assert calls[1:] == [("heuristic", "threshold"), ("random", "threshold")]  # the old pairing is not replayed
    assert grown["pairings"][0] == first["pairings"][0] and len(grown["pairings"]) == 3
    again = board(tmp_path, ["heuristic", "random", "threshold"])
    assert len(calls) == 3 and again["ratings"] == grown["ratings"]  # nothing played, the same board
    written = json.loads((tmp_path / "lb" / "board" / "results.json").read_text())
    assert [r["agent"] for r in written["ratings"]["overall"]] and (tmp_path / "lb" / "board" / "report.md").exists()


def test_an_interrupted_run_keeps_the_pairings_it_played(tmp_path, monkeypatch):
    real = leaderboard.play_tasks
    played = []

    def stop_at_the_second(tasks, **kw):
        if played:
            raise KeyboardInterrupt
        played.append(1)
        return real(tasks, **kw)

    monkeypatch.setattr(leaderboard, "play_tasks", stop_at_the_second)
    with pytest.raises(KeyboardInterrupt):
        board(tmp_path, ["heuristic", "random", "threshold"])
    assert len(list((tmp_path / "lb" / "pairings").glob("*.json"))) == 1
    monkeypatch.setattr(leaderboard, "play_tasks", real)
    assert len(board(tmp_path, ["heuristic", "random", "threshold"])["pairings"]) == 3


def test_bad_configs_are_one_line(tmp_path, capsys):
    cases = [("entrants: [heuristic]\n", "entrants"), ("entrants: [heuristic, random]\nmatches: 3\n", "even"),
             ("entrants: [heuristic, wizard]\n", "unknown agent kind 'wizard'"),
             ("entrants: [heuristic, random]\npreset: argentin\n", "did you mean 'argentine'")]
    for text, words in cases:
        path = tmp_path / "board.yaml"
        path.write_text(text)
        assert main(["leaderboard", str(path), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and "\n" not in err, err
