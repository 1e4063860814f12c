"""A tournament interrupted mid-way resumes from its journal (training/measure/match_journal.py): the matches already
played are not played again, and the results equal an uninterrupted run's."""
from __future__ import annotations

import json

import pytest

from training.measure import evaluate
from training.measure.evaluate import run_tournament
from training.measure.match_journal import MatchJournal

AGENTS, PRESET, MATCHES = ["heuristic", "random"], "argentine", 8
REAL_RUN_TASK = evaluate.run_task


class Stop(Exception):
    pass


def counting(monkeypatch, stop_after=None, stop=Stop):
    """Count the matches played; raise ``stop`` (an interruption; KeyboardInterrupt is Ctrl-C in a command) after
    ``stop_after`` of them."""
    played = []

    def run_task(task):
        if stop_after is not None and len(played) == stop_after:
            raise stop
        played.append(task)
        return REAL_RUN_TASK(task)

    monkeypatch.setattr(evaluate, "run_task", run_task)
    return played


def tournament(journal=None, seed=3, workers=1):
    summary, _meta = run_tournament(AGENTS, [PRESET], MATCHES, seed=seed, workers=workers, journal=journal)
    return json.dumps(summary, sort_keys=True)


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupted_tournament_resumes_where_it_stopped_and_ends_as_an_uninterrupted_one(tmp_path, monkeypatch,
                                                                                             workers):
    whole = tournament()
    path = tmp_path / "stage.jsonl"
    counting(monkeypatch, stop_after=5)
    with pytest.raises(Stop):
        tournament(MatchJournal(path, key="k"))
    assert len(path.read_text().splitlines()) == 1 + 5  # the header and every match played
    if workers == 1:
        played = counting(monkeypatch)
        assert tournament(MatchJournal(path, key="k")) == whole
        assert len(played) == MATCHES - 5
    else:  # worker processes play the rest (uncounted: they import the module afresh)
        monkeypatch.setattr(evaluate, "run_task", REAL_RUN_TASK)
        assert tournament(MatchJournal(path, key="k"), workers=2) == whole
    assert not path.exists()  # summarised: the journal goes


def _cut(lines: list[str]) -> str:
    return "\n".join(lines[:3]) + "\n" + lines[3][:40]  # two whole matches, the third cut mid-line by a kill


def _without_result(lines: list[str]) -> str:
    # the third match's line is JSON with its task but no result (an edited or garbled journal): a KeyError once
    return "\n".join([*lines[:3], json.dumps({"task": json.loads(lines[3])["task"]}), *lines[4:]]) + "\n"


@pytest.mark.parametrize("damage", [_cut, _without_result])
def test_a_damaged_line_ends_what_is_reused(tmp_path, monkeypatch, damage):
    whole = tournament()
    path = tmp_path / "stage.jsonl"
    counting(monkeypatch, stop_after=4)
    with pytest.raises(Stop):
        tournament(MatchJournal(path, key="k"))
    path.write_text(damage(path.read_text().splitlines()))
    played = counting(monkeypatch)
    assert tournament(MatchJournal(path, key="k")) == whole
    assert len(played) == MATCHES - 2


@pytest.mark.parametrize("change", ["key", "seed"])
def test_a_journal_of_anything_else_starts_afresh(tmp_path, monkeypatch, change):
    key, seed = {"key": ("other", 3), "seed": ("k", 4)}[change]
    whole = tournament(seed=seed)
    path = tmp_path / "stage.jsonl"
    counting(monkeypatch, stop_after=6)
    with pytest.raises(Stop):
        tournament(MatchJournal(path, key="k"))
    played = counting(monkeypatch)
    assert tournament(MatchJournal(path, key=key), seed=seed) == whole
    assert len(played) == MATCHES


def test_a_changed_agent_file_starts_the_journal_afresh(tmp_path, monkeypatch):
    """A policy rewritten between the interruption and the resume plays differently: nothing of it is reused."""
    import torch

    from agents.network import PolicyNet
    from training.learn.ppo import save_policy

    policy = tmp_path / "policy.safetensors"
    net = PolicyNet(hidden=(8,))
    save_policy(net, str(policy), presets=[PRESET], play="greedy")
    agents = [f"ppo:{policy}", "random"]
    path = tmp_path / "stage.jsonl"
    counting(monkeypatch, stop_after=3)
    with pytest.raises(Stop):
        run_tournament(agents, [PRESET], MATCHES, seed=1, journal=MatchJournal(path, key="k"))
    with torch.no_grad():
        net.policy.bias[0] = 50.0
    save_policy(net, str(policy), presets=[PRESET], play="greedy")
    played = counting(monkeypatch)
    run_tournament(agents, [PRESET], MATCHES, seed=1, journal=MatchJournal(path, key="k"))
    assert len(played) == MATCHES


def test_truco_eval_killed_mid_way_resumes_when_run_again(tmp_path, monkeypatch, capsys):
    """``truco eval`` keeps its journal beside ``--out``: Ctrl-C leaves the folder as it was, the same command
    again plays only the matches still missing, ends as an uninterrupted run, and the journal goes."""
    from training.cli import main

    out = tmp_path / "eval"
    command = ["eval", "--agents", *AGENTS, "--preset", PRESET, "--matches", str(MATCHES), "--seed", "3",
               "--workers", "1", "--no-plots", "--no-progress", "--out", str(out)]
    counting(monkeypatch, stop_after=5, stop=KeyboardInterrupt)
    assert main(command) == 130
    assert not out.exists()
    journal = tmp_path / ".eval.journal.jsonl"
    assert len(journal.read_text().splitlines()) == 1 + 5
    played = counting(monkeypatch)
    assert main(command) == 0
    assert len(played) == MATCHES - 5
    assert not journal.exists()
    results = json.loads((out / "results.json").read_text())
    assert json.dumps(results["pairings"], sort_keys=True) == json.dumps(json.loads(tournament())["pairings"],
                                                                          sort_keys=True)


def test_a_garbled_journal_starts_afresh_and_a_folder_in_its_way_is_named(tmp_path, monkeypatch, capsys):
    """What lies where the journal goes is never a traceback: bytes that are no text start the tournament afresh
    (as a journal of anything else does); a folder there is one line naming it."""
    from training.cli import main

    path = tmp_path / "stage.jsonl"
    path.write_bytes(b"\xff\xfe\x00 not a journal")
    played = counting(monkeypatch)
    assert tournament(MatchJournal(path, key="k")) == tournament()
    assert len(played) == 2 * MATCHES and not path.exists()
    out = tmp_path / "eval"
    (tmp_path / ".eval.journal.jsonl").mkdir()
    assert main(["eval", "--agents", *AGENTS, "--matches", "2", "--no-plots", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ".eval.journal.jsonl is in the way of the tournament's journal" in err[0]


def test_a_chunk_lost_on_ray_keeps_the_matches_before_it_and_the_rerun_goes_on(tmp_path, monkeypatch, capsys):
    """``truco eval --backend ray``: each chunk's matches go to the journal as the chunk arrives; a chunk Ray
    gives up on (a node lost more often than its retries) is one line, not Ray's traceback, and the same command
    then plays only what is missing and ends as an uninterrupted run. (Ray stands in here: chunks run in this
    process, the second one lost.)"""
    exceptions = pytest.importorskip("ray").exceptions
    from training import workers
    from training.cli import main

    class LosingRay:
        def __init__(self, lose):
            self.lose, self.calls, self.exceptions = lose, [], exceptions

        def remote(self, **options):
            def task(function):
                def remote(chunk):
                    self.calls.append(len(chunk))
                    if len(self.calls) == self.lose:
                        return exceptions.WorkerCrashedError()
                    return "node-1", evaluate._run_chunk(chunk)
                return type("Task", (), {"remote": staticmethod(remote)})
            return task

        def get(self, future):
            if isinstance(future, BaseException):
                raise future
            return future

    def command(folder, *backend):
        return ["eval", "--agents", *AGENTS, "--preset", PRESET, "--matches", "32", "--seed", "3", "--workers", "1",
                *backend, "--no-plots", "--no-progress", "--out", str(tmp_path / folder)]

    out = tmp_path / "eval"
    losing = LosingRay(lose=2)
    monkeypatch.setattr(workers, "start_ray", lambda n: losing)
    assert main(command("eval", "--backend", "ray")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lost on the Ray cluster" in err[0] and "Traceback" not in err[0]
    first = losing.calls[0]
    assert len((tmp_path / ".eval.journal.jsonl").read_text().splitlines()) == 1 + first
    whole = LosingRay(lose=0)
    monkeypatch.setattr(workers, "start_ray", lambda n: whole)
    assert main(command("eval", "--backend", "ray")) == 0
    assert sum(whole.calls) == 32 - first  # only what the journal did not hold
    assert main(command("local")) == 0
    pairings = [json.loads((folder / "results.json").read_text())["pairings"] for folder in (out, tmp_path / "local")]
    assert pairings[0] == pairings[1]


def test_truco_gauntlet_killed_mid_way_resumes_when_run_again(tmp_path, monkeypatch):
    """``truco gauntlet --out`` journals as ``truco eval`` does: a rerun after Ctrl-C plays only what is missing
    (a gauntlet of a searching agent is hours of play)."""
    from training.cli import main

    out = tmp_path / "gauntlet"
    command = ["gauntlet", "random", "--preset", PRESET, "--matches", "2", "--seed", "3", "--workers", "1",
               "--no-progress", "--out", str(out)]
    counting(monkeypatch, stop_after=7, stop=KeyboardInterrupt)
    assert main(command) == 130
    assert not out.exists() and len((tmp_path / ".gauntlet.journal.jsonl").read_text().splitlines()) == 1 + 7
    played = counting(monkeypatch)
    assert main(command) == 0
    result = json.loads((out / "gauntlet.json").read_text())
    assert len(played) == 2 * len(result["opponents"]) - 7 and not (tmp_path / ".gauntlet.journal.jsonl").exists()
