"""`truco replay FILE.json` (docs/records.md): good records reproduce, hostile ones fail in one line.

1. Seeded random matches of every preset are dumped to JSON and replayed through `training.cli.main` in-process
   (exit 0) and through `replay_record` (the replayed state writes back the very same record). Records of
   matches still in progress replay too.
2. Malformed or hostile files, each built by editing a good record where that makes sense, are replayed in a real
   subprocess: non-zero exit, exactly one non-empty line on stderr naming the problem, no traceback.
3. The rest of the command line: `--help` texts and the `demo` subcommand.
"""
from __future__ import annotations

import copy
import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from training.cli import main
from truco_env import PRESETS, TrucoState, make_config
from truco_env.records import replay_record

REPO = Path(__file__).resolve().parents[1]
MODULE = [sys.executable, "-m", "training.cli"]
SCRIPT = Path(sys.executable).parent / "truco"  # the console script of an installed checkout
LAUNCHERS = {"module": MODULE, "script": [str(SCRIPT)]}

CONFIGS = {**PRESETS, "argentine-3v3-pica-pica": make_config("argentine-3v3", pica_pica=True)}
SEEDS = (0, 1, 2)
MAX_ACTIONS = 100_000  # a random match still running after this many actions is an engine bug


# ---------------------------------------------------------------------------------------------------- helpers

def play(config: Any, seed: int, stop: Callable[[TrucoState, int], bool] = lambda state, n: False) -> TrucoState:
    """A seeded random match, played until it is over or ``stop(state, actions_so_far)`` says so."""
    state = TrucoState.new(config, seed=seed)
    rng = random.Random(seed)
    for n in range(MAX_ACTIONS):
        if state.is_over or stop(state, n):
            return state
        state.apply(rng.choice(state.legal_actions()))
    raise AssertionError(f"seed {seed}: match not over after {MAX_ACTIONS} actions")


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def run(argv: list[str], launcher: str = "module") -> subprocess.CompletedProcess:
    if launcher == "script" and not SCRIPT.exists():
        pytest.skip(f"console script {SCRIPT} is not installed")
    return subprocess.run([*LAUNCHERS[launcher], *argv], check=False, cwd=REPO, capture_output=True, timeout=120,
                          encoding="utf-8", errors="replace")


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """Check the failure contract (non-zero exit, one stderr line, no traceback); return that line."""
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), f"expected one stderr line, got {proc.stderr[-2000:]!r}"
    assert proc.stdout == ""
    return lines[0]


def assert_replays(record: dict, path: Path, capsys: pytest.CaptureFixture, include_legal: bool) -> None:
    write(path, json.dumps(record))
    assert main(["replay", str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert f"OK, {len(record['hands'])} hand(s) reproduced" in out
    assert ("match in progress" in out) == (record["winner"] is None)
    replayed = replay_record(json.loads(path.read_text(encoding="utf-8")))
    assert replayed.match_record(include_legal=include_legal) == record


# ---------------------------------------------------------------------------------------------------- 1. good

@pytest.mark.parametrize("include_legal", [False, True], ids=["plain", "with-legal"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_finished_match_replays(name: str, include_legal: bool, tmp_path: Path, capsys) -> None:
    for seed in SEEDS:
        state = play(CONFIGS[name], seed)
        assert state.winner in (0, 1)
        assert_replays(state.match_record(include_legal), tmp_path / f"seed{seed}.json", capsys, include_legal)


STOPS: dict[str, Callable[[TrucoState, int], bool]] = {
    "before-any-action": lambda state, n: n == 0,
    "after-1-action": lambda state, n: n == 1,
    "after-9-actions": lambda state, n: n == 9,
    "at-start-of-hand-2": lambda state, n: state.hand_index == 1,
    "mid-hand-3": lambda state, n: state.hand_index == 2 and len(state.hand_records[2]["actions"]) == 2,
}


@pytest.mark.parametrize("stop", sorted(STOPS))
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_match_in_progress_replays(name: str, stop: str, tmp_path: Path, capsys) -> None:
    for seed in SEEDS:
        state = play(CONFIGS[name], seed, STOPS[stop])
        if stop == "before-any-action":
            assert not state.is_over and state.hand_records[0]["actions"] == []
        for include_legal in (False, True):
            record = state.match_record(include_legal)
            assert_replays(record, tmp_path / f"seed{seed}-{include_legal}.json", capsys, include_legal)


def test_largest_target_replays_and_larger_is_refused(tmp_path: Path, capsys) -> None:
    state = play(make_config("argentine", target_score=1000), seed=0)
    assert_replays(state.match_record(), tmp_path / "big.json", capsys, include_legal=False)
    with pytest.raises(ValueError, match="target_score"):
        make_config("argentine", target_score=10**7)


# ---------------------------------------------------------------------------------------------------- 2. hostile

@pytest.fixture(scope="module")
def base_records() -> dict[str, dict]:
    """Finished matches with recorded legal sets and at least three hands, to be vandalised."""
    records = {}
    for preset in ("argentine", "paulista"):
        states = (play(PRESETS[preset], seed) for seed in range(100))
        state = next(s for s in states if len(s.hand_records) >= 3)
        records[preset] = state.match_record(include_legal=True)
    return records


def facts(record: dict) -> dict[str, Any]:
    """Values of a base record that the cases below edit in and expect to see named back."""
    first = record["hands"][0]
    actor, name = first["actions"][0][:2]
    other = (actor + 1) % len(first["deal"]["hands"])
    return {"actor": actor, "other": other, "name": name, "opp_card": first["deal"]["hands"][other][0],
            "seat1_card": first["deal"]["hands"][1][0],
            "last": len(record["hands"]) - 1, "n_hands": len(record["hands"]), "winner": record["winner"]}


def put(path: tuple, value: Any) -> Callable[[dict], None]:
    """An edit setting ``record[path[0]][path[1]]...`` to ``value`` (or to ``value(facts(record))``)."""
    def edit(record: dict) -> None:
        *parents, last = path
        target = record
        for key in parents:
            target = target[key]
        target[last] = value(facts(record)) if callable(value) else value
    return edit


def remove(key: str) -> Callable[[dict], None]:
    def edit(record: dict) -> None:
        del record[key]
    return edit


def drop_last_action(record: dict) -> None:
    record["hands"][0]["actions"].pop()


def drop_last_legal_name(record: dict) -> None:
    record["hands"][0]["actions"][0][2].pop()


def repeat_last_hand(record: dict) -> None:
    record["hands"].append(copy.deepcopy(record["hands"][-1]))


def bump_points(record: dict) -> None:
    record["hands"][0]["points"][0] += 1


@dataclass(frozen=True)
class Hostile:
    id: str
    edit: Callable[[dict], Any] | None  # edits a deep copy in place, or returns the file content (str/bytes)
    expect: tuple[str, ...]  # words the reason must contain; "{key}" is filled from facts(base record)
    preset: str = "argentine"
    bug: str | None = None  # a known bug: the case is a strict xfail until it is fixed

    def content(self, base: dict) -> str | bytes:
        record = copy.deepcopy(base)
        out = self.edit(record)
        return out if isinstance(out, (str, bytes)) else json.dumps(record)


A0 = ("hands", 0, "actions", 0)  # first action of the first hand
DEAL0 = ("hands", 0, "deal", "hands")  # cards of the first hand
NOT_UTF8 = b"\xff\xfe" + bytes(random.Random(0).randrange(256) for _ in range(512))
DEEP = "[" * 100_000 + "]" * 100_000

HOSTILE = [
    Hostile("truncated-json", lambda r: json.dumps(r)[: len(json.dumps(r)) // 2], ("not valid JSON",)),
    Hostile("empty-file", lambda r: "", ("not valid JSON", "line 1 column 1")),
    Hostile("not-utf8", lambda r: NOT_UTF8, ("not UTF-8",)),
    Hostile("json-list", lambda r: json.dumps([r]), ("expected a JSON object", "list")),
    Hostile("deeply-nested", lambda r: DEEP, ("nested too deeply",)),
    Hostile("deeply-nested-hands", lambda r: '{"rules": {}, "hands": ' + DEEP + "}", ("nested too deeply",)),
    Hostile("huge-integer-literal", lambda r: '{"rules": {}, "hands": [{"dealer": ' + "9" * 5000 + "}]}", ("not usable JSON", "digits")),
    Hostile("missing-file", None, ("cannot read", "No such file")),
    Hostile("missing-hands", remove("hands"), ("missing field 'hands'",)),
    Hostile("hands-empty", put(("hands",), []), ("record.hands", "[]")),
    Hostile("hand-null", put(("hands", 0), None), ("hands[0]", "expected an object")),
    Hostile("rules-list", put(("rules",), []), ("record.rules",)),
    Hostile("dealer-string", put(("hands", 0, "dealer"), "1"), ("hands[0].dealer",)),
    Hostile("dealer-negative", put(("hands", 0, "dealer"), -1), ("hands[0].dealer",)),
    Hostile("score-before-dict", put(("hands", 0, "score_before"), {"team0": 3}),
            ("hands[0].score_before", "{{'team0': 3}}")),
    Hostile("score-before-1e9", put(("hands", 0, "score_before"), [1e9, 0]),
            ("hands[0].score_before", "1000000000")),
    Hostile("action-string", put(A0, lambda f: f["name"]), ("hands[0].actions[0]", "'{name}'")),
    Hostile("action-seat-999", put(A0 + (0,), 999), ("hands[0].actions[0]", "999")),
    Hostile("card-number", put(DEAL0 + (0, 0), 7), ("hands[0].deal.hands", "7")),
    Hostile("action-play-99z", put(A0 + (1,), "play:99z"), ("'play:99z'", "not legal")),
    Hostile("action-bluff", put(A0 + (1,), "bluff"), ("'bluff'", "not legal")),
    Hostile("unknown-card", put(DEAL0 + (0, 0), "13e"), ("'13e'", "unknown card")),
    Hostile("french-card-in-argentine", put(DEAL0 + (0, 0), "Kd"), ("'Kd'",)),
    Hostile("spanish-card-in-paulista", put(DEAL0 + (0, 0), "1e"), ("'1e'",), preset="paulista"),
    Hostile("paulista-without-vira", put(("hands", 0, "deal", "vira"), None), ("vira",), preset="paulista"),
    Hostile("duplicate-card", put(DEAL0 + (0, 0), lambda f: f["seat1_card"]), ("duplicate", "'{seat1_card}'")),
    Hostile("huge-target-score", put(("rules", "target_score"), 10**100), ("target_score", "<= 1000")),
    Hostile("float-target-score", put(("rules", "target_score"), 1e308), ("target_score",)),
    Hostile("unknown-rules-field", put(("rules", "bogus_rule"), 1), ("'bogus_rule'",)),
    Hostile("wrong-seat", put(A0 + (0,), lambda f: f["other"]), ("seat {actor} is to act", "not seat {other}")),
    Hostile("illegal-action", put(A0 + (1,), lambda f: f"play:{f['opp_card']}"),
            ("'play:{opp_card}'", "not legal")),
    Hostile("unfinished-hand", drop_last_action, ("hands[0]", "do not finish the hand")),
    Hostile("tampered-points", bump_points, ("hands[0].points",)),
    Hostile("tampered-score-after", put(("hands", -1, "score_after"), [0, 0]), ("hands[{last}].score_after",)),
    Hostile("tampered-legal-set", drop_last_legal_name, ("hands[0].actions[0]", "legal set")),
    Hostile("wrong-winner", put(("winner",), lambda f: 1 - f["winner"]), ("record.winner",)),
    Hostile("winner-string", put(("winner",), "0"), ("record.winner", "'0'")),
    Hostile("hand-after-match-over", repeat_last_hand, ("hands[{n_hands}]", "already over")),
]


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=True, reason=c.bug)] if c.bug else [])
    for c in HOSTILE
])
def test_hostile_record_fails_in_one_line(case: Hostile, base_records: dict, tmp_path: Path) -> None:
    base = base_records[case.preset]
    path = tmp_path / "record.json"
    if case.edit is not None:
        write(path, case.content(base))
    line = one_line_error(run(["replay", str(path)]))
    prefix = f"truco replay: {path}: "
    assert line.startswith(prefix), line
    reason = line[len(prefix):]  # the path holds the test id: look for the words after it only
    for word in case.expect:
        assert word.format(**facts(base)) in reason, line


def test_hostile_cases_are_distinct(base_records: dict) -> None:
    """Every edit really changes the record (a no-op edit would test nothing)."""
    originals = {preset: json.dumps(record) for preset, record in base_records.items()}
    for case in HOSTILE:
        if case.edit is not None:
            assert case.content(base_records[case.preset]) != originals[case.preset], case.id


# ---------------------------------------------------------------------------------------------------- 3. cli

@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
@pytest.mark.parametrize("argv, words", [
    (["--help"], ["usage: truco", "replay", "demo", "example"]),
    (["replay", "--help"], ["usage: truco replay", "FILE.json", "example", "truco replay match.json"]),
    (["demo", "--help"], ["usage: truco demo", "--random", "--preset", "--matches", "--seed", "--out", "example"]),
], ids=["truco", "replay", "demo"])
def test_help(argv: list[str], words: list[str], launcher: str) -> None:
    proc = run(argv, launcher)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    for word in words:
        assert word in proc.stdout


def test_demo_prints_a_winner_and_is_deterministic() -> None:
    argv = ["demo", "--random", "--matches", "1", "--preset", "paulista"]
    first, second = run(argv), run(argv)
    assert first.returncode == 0 and first.stderr == "", first.stderr
    assert first.stdout == second.stdout and second.returncode == 0
    lines = first.stdout.splitlines()
    assert lines[0].startswith("== paulista  match 1/1")
    winners = [line for line in lines if re.fullmatch(r"winner: team [01]  final \d+-\d+", line)]
    assert len(winners) == 1 and lines[-1] == winners[0]


def test_demo_unknown_preset() -> None:
    proc = run(["demo", "--random", "--preset", "nope"])
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert "'nope'" in line
    for name in PRESETS:
        assert name in line


def test_replay_without_file_is_a_usage_error(capsys) -> None:
    assert main(["replay"]) == 2
    assert "FILE.json" in capsys.readouterr().err


def test_replay_show_walks_a_record_hand_by_hand_with_every_hand_face_up(tmp_path, capsys):
    """--show: each hand's deal for every seat by name, every action in words, each hand's result; then the
    same verdict as a plain replay (nothing to answer when the input is no terminal)."""
    import json

    from training.cli import main
    from training.people.labels import card_name
    from truco_env import env as make_env

    env = make_env("paulista-2v2")
    env.reset(seed=4)
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(obs["action_mask"].nonzero()[0][0]))
    record = env.unwrapped.match_record()
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record))
    assert main(["replay", str(path), "--show"]) == 0
    out = capsys.readouterr().out
    first = record["hands"][0]
    assert out.count("== hand ") == len(record["hands"]) and "OK," in out
    from truco_env import cards

    manilha = cards.manilha_rank(first["deal"]["vira"])
    expected = ", ".join(card_name(card, "paulista", manilha) for card in first["deal"]["hands"][3])
    assert f"seat 3 (team 1): {expected}\n" in out  # a seat's cards as a player names them, on one line
    assert "seat 0 plays " in out
