"""Tournaments (training/measure/evaluate.py and `truco eval`): statistics, duplicate deals, reproducibility, errors.

The 2,000-match floors of issue 5 run only with ``-m slow`` (``test_heuristic_beats_random_floors``)."""
from __future__ import annotations

import json
import math

import pytest

from agents import make_agent
from training.cli import main
from training.measure.behaviour import behaviour_counts, weak_hand_cutoff
from training.measure.evaluate import (
    Task,
    agent_seed_for,
    match_seed_for,
    play_match,
    run_tournament,
    validate,
)
from training.measure.statistics import binomial_two_sided_p, wilson_interval
from truco_env import make_config

# ------------------------------------------------------------------------------------------------ statistics


@pytest.mark.parametrize("k, n, low, high", [
    (8, 10, 0.4901625, 0.9433178),  # textbook values of the Wilson score interval (z = 1.96)
    (0, 10, 0.0, 0.2775328),
    (10, 10, 0.7224672, 1.0),
    (50, 100, 0.4038315, 0.5961685),
])
def test_wilson_interval_known_values(k, n, low, high):
    got = wilson_interval(k, n)
    assert got == pytest.approx((low, high), abs=2e-6)


def test_wilson_interval_edge_cases():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(5.5, 11)  # draws counted as halves
    assert low < 0.5 < high


def test_binomial_test():
    assert binomial_two_sided_p(9, 10) == pytest.approx(22 / 1024)
    assert binomial_two_sided_p(5, 10) == 1.0
    assert binomial_two_sided_p(0, 0) == 1.0
    assert binomial_two_sided_p(1000, 2000) == 1.0
    assert binomial_two_sided_p(1100, 2000) < 1e-5


# ------------------------------------------------------------------------------------------------ duplicate deals


@pytest.mark.parametrize("preset", ["argentine", "argentine-2v2", "paulista", "paulista-2v2"])
def test_duplicate_deals_give_both_sides_the_same_cards(preset):
    """Same match seed, agents' seats swapped: in every hand both matches reach, the deal and dealer are the same,
    so each agent held in one match exactly the cards the other held in the other (checked on the records)."""
    config = make_config(preset)
    n = config.num_players
    seed = match_seed_for(0, 3)
    records = []
    for swapped in (False, True):
        agents = [make_agent("heuristic" if (s % 2 == 0) != swapped else "random") for s in range(n)]
        for s, agent in enumerate(agents):
            agent.seed(s)
            agent.reset(s)
        state, _, _ = play_match(config, agents, seed)
        records.append(state.match_record())
    first, second = (r["hands"] for r in records)
    common = min(len(first), len(second))
    assert common >= 1
    for h1, h2 in zip(first[:common], second[:common]):
        assert h1["dealer"] == h2["dealer"]
        assert h1["deal"] == h2["deal"]
        heuristic_cards_1 = [h1["deal"]["hands"][s] for s in range(0, n, 2)]  # heuristic at even seats
        random_cards_2 = [h2["deal"]["hands"][s] for s in range(0, n, 2)]  # random at even seats
        assert heuristic_cards_1 == random_cards_2


def test_match_and_agent_seeds_are_stable():
    assert match_seed_for(0, 0) == match_seed_for(0, 0) != match_seed_for(0, 1)
    task = Task("argentine", 0, "heuristic", "random", 0, False, match_seed_for(0, 0), 0)
    assert agent_seed_for(task, 0) == agent_seed_for(task, 0) != agent_seed_for(task, 1)


# ------------------------------------------------------------------------------------------------ tournaments


def test_identical_results_with_one_and_two_workers():
    args = (["heuristic", "random"], ["argentine", "paulista-2v2"], 4)
    one, _ = run_tournament(*args, seed=3, workers=1)
    two, _ = run_tournament(*args, seed=3, workers=2)
    assert one == two
    assert [m["deal"] for m in one["matches"]] == [0, 0, 1, 1] * 2


def test_small_round_robin_summary():
    summary, meta = run_tournament(["heuristic", "heuristic:bluff=1", "random"], ["argentine"], 2, seed=1)
    assert len(summary["pairings"]) == 3 and meta["matches_per_pairing"] == 2
    for row in summary["pairings"]:
        assert row["matches"] == 2 and row["wins_a"] + row["wins_b"] + row["draws"] == 2
        assert 0 <= row["ci_low"] <= row["win_rate_a"] <= row["ci_high"] <= 1
        assert row["deals_won_both_a"] + row["deals_split"] + row["deals_won_both_b"] == 1
    assert {r["agent"] for r in summary["ratings"]["overall"]} == {"heuristic", "heuristic:bluff=1", "random"}
    by_agent = {r["agent"]: r for r in summary["behaviour"]}
    assert by_agent["heuristic:bluff=1"]["hands"] > 0


def test_behaviour_counts_agree_with_the_records():
    config = make_config("argentine")
    agents = [make_agent("heuristic:bluff=0.5"), make_agent("random")]
    for s, agent in enumerate(agents):
        agent.seed(s)
    state, winners, _ = play_match(config, agents, seed=5)
    record = state.match_record()
    assert len(winners) == len(record["hands"])
    ladder = ("truco", "retruco", "vale_cuatro")
    for team in (0, 1):
        counts = behaviour_counts(config, record, winners, team)
        actions = [(s, a) for h in record["hands"] for s, a in h["actions"]]
        assert counts["truco_calls"] == sum(1 for s, a in actions if a in ladder and s % 2 == team)
        assert counts["mazo"] == sum(1 for s, a in actions if a == "mazo" and s % 2 == team)
        assert counts["hands"] == len(record["hands"])
        assert counts["bluffs"] <= counts["weak_hands"] and counts["bluffs_won"] <= counts["bluffs"]
        assert counts["ladder_folded"] <= counts["ladder_faced"]
        # one per hand in which the team's (only) seat made a ladder call
        calling = sum(1 for h in record["hands"] if any(a in ladder and s % 2 == team for s, a in h["actions"]))
        assert counts["calling_hands"] == calling and counts["bluffs"] <= calling


def test_weak_hand_cutoff_is_a_lower_tertile():
    for preset in ("argentine", "paulista", "paulista-clean", "argentine-mini"):
        cutoff = weak_hand_cutoff(make_config(preset))
        assert 0 < cutoff <= 0.6 * make_config(preset).hand_size


# ------------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize("agents, presets, matches, message", [
    (["heuristic", "wizard"], ["argentine"], 4, r"unknown agent kind 'wizard'; available: \[.*'heuristic'"),
    (["heuristic", "heuristic:depth=3"], ["argentine"], 4, r"allowed: bluff=<a number>"),
    (["heuristic", "random"], ["argentina"], 4, r"unknown preset 'argentina'; did you mean 'argentine'.*\(the presets: "),
    (["heuristic", "random"], ["argentine"], 3, "even number"),
    (["heuristic"], ["argentine"], 4, "at least two"),
    (["random", "random"], ["argentine"], 4, "distinct"),
])
def test_validate_names_what_is_allowed(agents, presets, matches, message):
    with pytest.raises(ValueError, match=message):
        validate(agents, presets, matches)


def test_cli_errors_exit_2_with_one_clear_line(tmp_path, capsys):
    assert main(["eval", "--agents", "heuristic", "bogus", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown agent kind 'bogus'" in err and "'random'" in err
    assert main(["eval", "--agents", "heuristic", "random", "--preset", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown preset 'nope'" in capsys.readouterr().err
    assert main(["eval", "--agents", "heuristic", "random", "--preset", "argentin", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err  # the closest names, and no internal field path ("presets[0]")
    assert "did you mean 'argentine'" in err and "presets[" not in err and len(err.strip().splitlines()) == 1
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert main(["eval", "--agents", "heuristic", "random", "--out", str(a_file)]) == 2
    assert "is a file; give a folder" in capsys.readouterr().err
    assert main(["eval", "--agents", "heuristic", "random", "--matches", "0"]) == 2  # argparse usage error
    capsys.readouterr()


def test_the_tournament_options_are_typed_and_shared_by_yaml_set_and_flags(tmp_path, capsys):
    """--config FILE, then --set, then the flags; every wrong value is one line naming the option."""
    config = tmp_path / "t.yaml"
    config.write_text(f"agents: [random, heuristic]\nmatches: 6\nworkers: 1\nout: {tmp_path / 'out'}\n"
                      "plots: false\nprogress: false\n")
    for extra, message in [(["--set", "matches=3"], "option 'matches' = 3 is not allowed: should be even"),
                           (["--set", "matchs=4"], "unknown option 'matchs'; did you mean 'matches'?"),
                           (["--set", "seed=-1"], "option 'seed' = -1 is not allowed: should be greater than"),
                           (["--set", "plots=maybe"], "option 'plots' = 'maybe' is not allowed: should be a valid"),
                           (["--agents", "random"], "option 'agents' = ['random'] is not allowed")]:
        assert main(["eval", "--config", str(config), *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
    assert main(["eval"]) == 2
    assert "option 'agents' is required" in capsys.readouterr().err
    assert main(["eval", "--config", str(config), "--set", "matches=4", "--matches", "2"]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [p["matches"] for p in results["pairings"]] == [2]  # the flag over --set over the file
    assert not list((tmp_path / "out").glob("*.png"))  # plots: false from the file


def test_a_policy_is_refused_on_a_preset_it_was_not_trained_for(tmp_path, capsys):
    """`eval` and `play` name the presets a policy was made for; --allow-other-preset is the explicit override."""
    args = ["eval", "--agents", "ppo:argentine", "random", "--preset", "paulista", "--matches", "2",
            "--workers", "1", "--out", str(tmp_path), "--no-progress", "--no-plots"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "made for preset(s) ['argentine'], not 'paulista'" in err and "--allow-other-preset" in err
    assert len(err.strip().splitlines()) == 1
    assert main(args + ["--allow-other-preset"]) == 0
    capsys.readouterr()
    assert main(["play", "--preset", "paulista", "--opponent", "ppo:argentine", "--seed", "1"]) == 2
    assert "made for preset(s) ['argentine'], not 'paulista'" in capsys.readouterr().err


@pytest.mark.parametrize("agent", ["ppo:uruguayan-2v2", "search:ppo:uruguayan-2v2"])
def test_a_uruguayan_network_reads_no_other_game_even_when_allowed(tmp_path, capsys, agent):
    """--allow-other-preset plays a policy on another game whose observation starts with the layout it reads; a
    Uruguayan network reads 1,136 values, of which another game has 1,086 (it failed mid-match with a torch
    traceback) or a señas block in the place of its piezas (it played on it silently): one line before any match."""
    for preset in ("argentine-2v2", "argentine-2v2-senas"):
        assert main(["eval", "--agents", agent, "random", "--preset", preset, "--allow-other-preset", "--matches",
                     "2", "--workers", "1", "--out", str(tmp_path / preset), "--no-progress", "--no-plots"]) == 2
        err = capsys.readouterr().err
        assert f"reads observations of 1136 values and '{preset}' gives" in err and len(err.strip().splitlines()) == 1
        assert "--allow-other-preset plays it anyway" not in err
    assert main(["play", "--preset", "argentine-2v2", "--opponent", agent, "--allow-other-preset", "--seed", "1"]) == 2
    assert "reads observations of 1136 values" in capsys.readouterr().err


def test_progress_is_a_line_per_tenth_when_stderr_is_not_a_terminal(tmp_path, capsys):
    """Logs of background runs get no bar frames, but a plain line each tenth of the work (training/progress.py),
    so a run in a log or behind a pipe is not silent; a terminal still gets its bar."""
    assert main(["eval", "--agents", "heuristic", "random", "--matches", "20", "--workers", "1",
                 "--out", str(tmp_path), "--no-plots"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("truco eval: ")]
    assert "\r" not in err and 1 <= len(lines) <= 10 and lines[-1].startswith("truco eval: 20 of 20 match (100%)")
    assert main(["eval", "--agents", "heuristic", "random", "--matches", "2", "--workers", "1",
                 "--out", str(tmp_path / "quiet"), "--no-plots", "--no-progress"]) == 0
    assert "truco eval: " not in capsys.readouterr().err


def test_the_table_shows_draws(tmp_path, capsys):
    """One-hand research presets can end level: the table counts draws beside the wins (a draw scores half)."""
    assert main(["eval", "--agents", "random", "random:seed=1", "--preset", "argentine-mini", "--matches", "60",
                 "--workers", "1", "--out", str(tmp_path), "--no-progress", "--no-plots"]) == 0
    printed = capsys.readouterr().out
    assert "| A wins / draws / B wins |" in printed
    row = json.loads((tmp_path / "results.json").read_text())["pairings"][0]
    assert row["draws"] > 0 and row["wins_a"] + row["draws"] + row["wins_b"] == 60
    assert f"| {row['wins_a']} / {row['draws']} / {row['wins_b']} |" in printed
    assert row["win_rate_a"] == (row["wins_a"] + row["draws"] / 2) / 60


def test_records_are_written_and_replay(tmp_path, capsys):
    """`--records DIR` writes every match of the tournament, each naming who sat where, and each replays."""
    from truco_env.records import replay_record

    records = tmp_path / "records"
    assert main(["eval", "--agents", "heuristic", "random", "--matches", "4", "--workers", "1", "--out",
                 str(tmp_path / "eval"), "--records", str(records), "--no-progress", "--no-plots"]) == 0
    files = sorted(records.glob("*.json"))
    assert len(files) == 4
    results = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert all("record" not in m for m in results["matches"])
    for path in files:
        record = json.loads(path.read_text())
        assert sorted(record["players"]) == ["heuristic", "random"]
        state = replay_record(record)
        assert state.winner == record["winner"] is not None
    capsys.readouterr()


def test_cli_smoke_writes_tables_files_and_plots(tmp_path, capsys):
    out = tmp_path / "eval"
    code = main(["eval", "--agents", "heuristic", "random", "--preset", "argentine", "--matches", "4",
                 "--workers", "1", "--out", str(out), "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| argentine | `heuristic` | `random` | 4 |" in printed and "bluff rate" in printed
    for name in ("pairings.csv", "behaviour.csv", "ratings.csv", "results.json", "report.md",
                 "winrate_heatmap.png", "ratings.png"):
        assert (out / name).stat().st_size > 0
    data = json.loads((out / "results.json").read_text())
    assert data["meta"]["agents"] == ["heuristic", "random"]
    row = data["pairings"][0]
    assert row["matches"] == 4 and not math.isnan(row["win_rate_a"])
    assert (out / "winrate_heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------------------------------------ the floors


@pytest.mark.slow
@pytest.mark.parametrize("preset, floor", [
    ("argentine", 0.97), ("argentine-2v2", 0.97), ("paulista", 0.90), ("paulista-2v2", 0.88)])
def test_heuristic_beats_random_floors(preset, floor):
    """Issue 5: 2,000 matches (1,000 deals, seats swapped) against RandomAgent (several minutes each)."""
    summary, _ = run_tournament(["heuristic", "random"], [preset], 2000, seed=0, workers=2)
    assert summary["pairings"][0]["win_rate_a"] >= floor


@pytest.mark.parametrize("runner", ["in_process", "ray_chunk"])
def test_matches_run_torch_on_one_thread_and_restore_it(monkeypatch, runner):
    """Two single-worker evaluations side by side ran 5.6x slower with torch's default thread count; the
    in-process path and each Ray task's chunk use one thread, like the workers, and give the caller's setting
    back afterwards."""
    import torch

    from training.measure import evaluate

    def play(tasks):
        return evaluate.play_tasks(tasks, workers=1) if runner == "in_process" else evaluate._run_chunk(tasks)

    seen = []
    monkeypatch.setattr(evaluate, "run_task", lambda task: seen.append(torch.get_num_threads()) or {"task": task})
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert play(["a", "b"]) == [{"task": "a"}, {"task": "b"}]
        assert seen == [1, 1]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_tournament_reads_a_policy_file_again_once_it_changed(tmp_path):
    """A trainer evaluates its latest policy under one spec: the second tournament must play the new weights."""
    import torch

    from agents.network import PolicyNet
    from training.learn.ppo import save_policy
    from training.measure.evaluate import _AGENT_CACHE

    path = tmp_path / "policy.safetensors"
    net = PolicyNet(hidden=(8,))
    for bias in (50.0, -50.0):
        with torch.no_grad():
            net.policy.bias[0] = bias
        save_policy(net, str(path), presets=["argentine"], play="greedy")
        run_tournament([f"ppo:{path}", "random"], ["argentine"], 2, seed=1)
    played = [agent for (spec, _), (_, agent) in _AGENT_CACHE.items() if spec == f"ppo:{path}"]
    assert played and all(agent.net.policy.bias[0].item() == -50.0 for agent in played)
