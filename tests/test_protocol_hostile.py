"""Outside programs as a hostile author writes them (issue 72, items 1, 5, 6, 7, 10): a program that tries to
compute the deals from everything it receives, and programs that would hang a tournament, eat its memory, leave
processes behind or crash it with an answer. Each finds nothing or forfeits in one line, within the protocol's
time."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

import agents.exec
import training.measure.evaluate
from agents import make_agent
from agents.exec import BotFailure
from agents.hidden_seeds import hidden_seed
from training.measure.evaluate import run_tournament
from truco_env import PRESETS, TrucoState, make_config
from truco_env.protocol import ProtocolError, read_answer
from truco_env.turns import observation_for

FINDER = Path(__file__).parent / "bots" / "deal_finder.py"


def attack(tmp_path: Path, presets: list[str], matches: int, seed: int) -> dict[str, int]:
    """What the deal finder logged over a tournament against random: matches, hands it could check, finds."""
    log = tmp_path / "finder.log"
    summary, _ = run_tournament([f"exec:{sys.executable} {FINDER} {log}", "random"], presets, matches, seed=seed,
                                workers=1, progress=False)
    assert not any("forfeit" in m for m in summary["matches"])
    words = log.read_text().split("\n")
    return {kind: sum(1 for w in words if w.startswith(kind)) for kind in ("match", "hand", "found")}


def test_the_deal_finder_finds_the_deals_when_nothing_hides_them(tmp_path, monkeypatch):
    """The control: with the keying switched off (public match seeds, the seed passed on as it is), the finder
    computes the deals of nearly every match, so the test below would see a leak."""
    monkeypatch.setattr(training.measure.evaluate, "plays_program", lambda specs: False)
    monkeypatch.setattr(agents.exec, "hidden_seed", lambda *parts, **_: parts[-1])
    seen = attack(tmp_path, ["argentine", "paulista-2v2"], 4, seed=2)
    assert seen["hand"] >= 12 and seen["found"] >= seen["match"] // 2, seen


@pytest.mark.parametrize("matches", [pytest.param(2, id="2"), pytest.param(20, id="20", marks=pytest.mark.slow)])
def test_no_program_computes_the_deals_from_what_it_receives(tmp_path, matches):
    """Every preset, a guessable tournament seed: the finder checks its cards against every candidate seed at
    every hand it can, and finds none."""
    seen = attack(tmp_path, sorted(PRESETS), matches, seed=2)
    assert seen["match"] >= matches * len(PRESETS) and seen["hand"] >= 2 * seen["match"], seen
    assert seen["found"] == 0, seen


def test_the_same_tournament_reproduces_for_whoever_holds_the_key(tmp_path, monkeypatch):
    """Hidden deals are the same run after run under one key, and other deals under another key."""
    bot = f"exec:{sys.executable} {FINDER} {tmp_path / 'log'}"

    def scores():
        summary, _ = run_tournament([bot, "random"], ["argentine"], 4, seed=5, workers=1, progress=False)
        return [(m["match_seed"], m["score_a"], m["score_b"]) for m in summary["matches"]]

    first = scores()
    assert scores() == first
    monkeypatch.setenv("TRUCO_DEAL_KEY_FILE", str(tmp_path / "another-key"))
    assert [s for s, _, _ in scores()] != [s for s, _, _ in first]
    assert hidden_seed("x", 1) != hidden_seed("x", 2)


def test_a_damaged_key_is_one_line(tmp_path, monkeypatch):
    key = tmp_path / "key"
    key.write_text("not hex at all\n")
    monkeypatch.setenv("TRUCO_DEAL_KEY_FILE", str(key))
    with pytest.raises(ValueError, match=r"^deal key '.*key': not the 64 hexadecimal digits") as failure:
        hidden_seed(1)
    assert "\n" not in str(failure.value)


# ------------------------------------------------------------------------------------------------------------
# programs that would hang, flood, fork or crash


def first_decision(tmp_path: Path, script: str, seconds: float = 2.0) -> tuple[str, float]:
    """Ask the program ``script`` its first decision (``seconds`` allowed) in a thread, so that a hang fails the
    test instead of stopping the suite; the failure's message and how long it took."""
    path = tmp_path / "bot.py"
    path.write_text(script)
    agent = make_agent(f"exec:{sys.executable} {path}")
    agent.reset(0)
    state = TrucoState.new(make_config("argentine"), seed=1)
    outcome: dict = {}

    def run():
        start = time.monotonic()
        try:
            agent.act(observation_for(agent, state, state.actor))
        except BotFailure as exc:
            outcome["message"] = str(exc)
        outcome["seconds"] = time.monotonic() - start

    thread = threading.Thread(target=run, daemon=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(agents.exec, "STARTUP_SECONDS", seconds)
        thread.start()
        thread.join(timeout=30)
    assert not thread.is_alive(), "the match waited on the program for more than 30 s"
    assert agent.process is None
    return outcome.get("message", ""), outcome["seconds"]


@pytest.mark.parametrize("line", [b"\\xff\\xfe binary\\n", b"caf\\xe9 latin-1, not UTF-8\\n"])
def test_a_binary_answer_forfeits_at_once_though_the_program_keeps_its_pipe_open(tmp_path, line):
    """It used to hang the tournament: the reader died on the bytes and the match waited for the program's exit."""
    script = ("import sys, time\nsys.stdin.readline()\nsys.stdout.buffer.write(" + f'b"{line.decode()}"' + ")\n"
              "sys.stdout.flush()\ntime.sleep(60)\n")
    message, seconds = first_decision(tmp_path, script, seconds=5.0)
    assert "not JSON" in message and seconds < 5, (message, seconds)


def test_a_program_that_closes_its_output_and_sleeps_is_stopped_not_waited_for(tmp_path):
    script = "import os, sys, time\nsys.stdin.readline()\nos.close(1)\ntime.sleep(60)\n"
    message, seconds = first_decision(tmp_path, script, seconds=5.0)
    assert "output closed" in message and seconds < 2 * agents.exec.EXIT_SECONDS + 2, (message, seconds)


def test_a_line_without_end_is_cut_at_the_cap(tmp_path):
    """A program that writes 200 MB with no newline used to be read whole into memory."""
    script = ("import sys, time\nsys.stdin.readline()\nchunk = b'7' * (1 << 20)\n"
              "for _ in range(200): sys.stdout.buffer.write(chunk)\nsys.stdout.flush()\ntime.sleep(60)\n")
    message, seconds = first_decision(tmp_path, script, seconds=5.0)
    assert "a line longer than 4,096 bytes" in message and seconds < 5, (message, seconds)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, left where no init reaps it in a container, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("then", ["exits", "illegal"])
def test_a_program_that_forks_leaves_no_process_behind(tmp_path, then):
    """A program that starts a child (which lets go of the pipes and sleeps), then exits or names an illegal
    action: the child used to outlive the tournament; it is in the program's process group, ended with it."""
    pids = tmp_path / "pids"
    script = ("import os, sys, time\n"
              "child = os.fork()\n"
              "if child == 0:\n    os.close(0)\n    os.close(1)\n    time.sleep(60)\n    os._exit(0)\n"
              f"open({str(pids)!r}, 'w').write(str(child))\n"
              "sys.stdin.readline()\n"
              + ("sys.exit(0)\n" if then == "exits" else
                 "sys.stdin.readline()\nprint('{\"action\": \"flor\"}', flush=True)\ntime.sleep(60)\n"))
    message, _ = first_decision(tmp_path, script)
    assert ("output closed" if then == "exits" else "illegal action 'flor'") in message, message
    child = int(pids.read_text())
    deadline = time.monotonic() + 3
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)


def test_a_deeply_nested_answer_is_refused_not_a_recursion_error(tmp_path):
    legal = [{"name": "truco", "id": 83}]
    with pytest.raises(ProtocolError, match="nested 2000 levels deep"):
        read_answer("[" * 2000 + "]" * 2000, legal)
    script = ("import sys\nsys.stdin.readline()\nsys.stdin.readline()\n"
              "print('{\"action\": ' + '[' * 2000 + ']' * 2000 + '}', flush=True)\n")
    message, _ = first_decision(tmp_path, script)
    assert "nested 2001 levels deep" in message and "\n" not in message, message


@pytest.mark.parametrize("hidden", [True, False], ids=["keyed", "control"])
def test_truco_play_gives_a_program_nothing_that_leads_to_the_persons_cards(tmp_path, monkeypatch, hidden):
    """`truco play --seed 3` against a program: it used to receive ``seed * 100 + seat`` and the deal was the
    seed's own, so the program printed the person's hand. The control (keying off) shows the finder would see it."""
    import io

    import training.people.play

    if not hidden:
        monkeypatch.setattr(agents.exec, "hidden_seed", lambda *parts, **_: parts[-1])
        monkeypatch.setattr(training.people.play, "hidden_seed", lambda *parts, **_: parts[-1])
    log = tmp_path / "finder.log"
    for seed in (3, 4, 5, 6):  # a hand the person ends before the program acts gives it nothing to check
        training.people.play.play_match("argentine", f"exec:{sys.executable} {FINDER} {log}", "random", 0, seed, None,
                                 max_hands=4, read=lambda prompt: "1", out=io.StringIO())
    words = log.read_text().split("\n")
    assert sum(w == "hand" for w in words) >= 6
    assert (sum(w.startswith("found") for w in words) == 0) == hidden, words


def test_a_long_command_or_a_doubled_long_spec_is_one_short_line(capsys):
    """A word of a command longer than a file name may be was looked up as a file (ENAMETOOLONG); a spec given
    twice was echoed whole (100 kB)."""
    from training.cli import main
    from training.measure.exploit import agent_file_hash

    assert agent_file_hash("exec:" + "x" * 300) is None
    spec = "random:seed=" + "1" * 100_000
    assert main(["eval", "--agents", spec, spec, "--matches", "2", "--no-progress", "--no-plots"]) == 2
    err = capsys.readouterr().err.strip()
    assert "given more than once" in err and "\n" not in err and len(err) < 1000, err[:300]


def test_a_line_nobody_asked_for_is_a_forfeit_not_the_next_answer(tmp_path):
    """A program that answers twice: its second line used to be read as its answer to the next decision."""
    from truco_env.turns import observation_for as view

    path = tmp_path / "twice.py"
    path.write_text("import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n"
                    "    if m['type'] == 'act':\n        a = m['legal'][0]['id']\n"
                    "        print(json.dumps({'action': a}), flush=True)\n"
                    "        print(json.dumps({'action': a}), flush=True)\n")
    agent = make_agent(f"exec:{sys.executable} {path}")
    agent.reset(0)
    state = TrucoState.new(make_config("argentine"), seed=1)
    agent.act(view(agent, state, state.actor))
    time.sleep(0.5)  # the second line arrives
    with pytest.raises(BotFailure, match="wrote a line it was not asked for"):
        agent.act(view(agent, state, state.actor))


def test_the_agents_beside_a_program_draw_keyed_seeds_too():
    """A program that guessed the tournament seed could replay a sampling opponent's draws and read its cards
    from its actions: where the deals are hidden, so are the other agents' seeds."""
    from training.measure.evaluate import agent_seed_for, make_tasks

    bot = f"exec:{sys.executable} {FINDER} /dev/null"
    hidden = make_tasks([bot, "random"], ["argentine"], 2, seed=0)
    public = make_tasks(["heuristic", "random"], ["argentine"], 2, seed=0)
    assert all(t.hidden for t in hidden) and not any(t.hidden for t in public)
    assert agent_seed_for(hidden[0], 1) != agent_seed_for(public[0], 1)
    assert agent_seed_for(public[0], 1) == agent_seed_for(public[0], 1)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_programs_that_fork_leave_nothing_behind_when_worker_processes_play_them(tmp_path):
    """A pool ends its workers with SIGTERM, which skips the clean-up that stops each program's process group;
    the workers now stop their programs first."""
    pids = tmp_path / "pids"
    path = tmp_path / "forks.py"
    path.write_text("import json, os, sys, time\n"
                    "child = os.fork()\n"
                    "if child == 0:\n    os.close(0)\n    os.close(1)\n    time.sleep(60)\n    os._exit(0)\n"
                    f"open({str(pids)!r}, 'a').write(f'{{child}}\\n')\n"
                    "for line in sys.stdin:\n    m = json.loads(line)\n"
                    "    if m['type'] == 'act': print(json.dumps({'action': m['legal'][0]['id']}), flush=True)\n")
    summary, _ = run_tournament([f"exec:{sys.executable} {path}", "random"], ["argentine"], 4, seed=0, workers=2,
                                progress=False)
    assert not any("forfeit" in m for m in summary["matches"])
    children = [int(p) for p in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert children and not [p for p in children if alive(p)]
