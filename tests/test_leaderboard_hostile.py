"""``truco leaderboard`` against files and configs it did not expect (issue 72, items 3, 8, 11 and 13).

3. A stored pairing file is believed only when its results are exactly the matches its header and the settings
   make (count, agents, preset, seed, each entry a well-formed result of its deal and seat order): anything else
   is treated as not stored, replayed, and a log line names the file and why.
8. The config bounds the matches per pairing and the entrants: ``matches: 10**12`` or 3,000 entrants are refused
   in one line before anything plays.
11. Pairing files with ``results`` null, a string, garbage entries, a top-level list, 100,000 levels of ``[``,
    invalid or oversized JSON: no traceback, replayed as in item 3, read with the bounded reader.
13. Every error of ``truco leaderboard CONFIG`` is one line, exit 2, echoing at most a clipped piece of the user's
    strings (a 100,000-character entrant spec included).
"""

from __future__ import annotations

import json
import sys

import pytest

from training.cli import main
from training.measure import leaderboard
from training.measure.leaderboard import (
    MAX_ENTRANTS,
    MAX_MATCHES,
    LeaderboardConfig,
    run_leaderboard,
)

ENTRANTS = ["heuristic", "random"]
MATCHES = 2


def config(**changes) -> LeaderboardConfig:
    return LeaderboardConfig(**{"entrants": ENTRANTS, "preset": "paulista", "matches": MATCHES, "seed": 3,
                                **changes})


@pytest.fixture
def counted(monkeypatch):
    """The pairings played (as (spec_a, spec_b, tasks)), the real matches still played."""
    calls = []
    real = leaderboard.play_tasks

    def play(tasks, **kw):
        calls.append((tasks[0].spec_a, tasks[0].spec_b, len(tasks)))
        return real(tasks, **kw)

    monkeypatch.setattr(leaderboard, "play_tasks", play)
    return calls


@pytest.fixture
def nothing_plays(monkeypatch):
    def refuse(*args, **kw):
        raise AssertionError("a refused config must not play or even make its matches")

    monkeypatch.setattr(leaderboard, "play_tasks", refuse)
    monkeypatch.setattr(leaderboard, "make_tasks", refuse)


def run(tmp_path, lines=None, **changes):
    log = [] if lines is None else lines
    return run_leaderboard(config(**changes), tmp_path / "lb", workers=1, progress=False, log=log.append)


def stored_file(tmp_path):
    [path] = (tmp_path / "lb" / "pairings").glob("*.json")
    return path


def assert_replayed(tmp_path, counted, lines, path, words=""):
    """The pairing was played again (once), the log says why in one line naming the file, and the file and the
    board hold exactly the matches of the settings again."""
    assert counted == [("heuristic", "random", MATCHES)], counted
    replay = [line for line in lines if "replay" in line]
    assert len(replay) == 1 and str(path) in replay[0] and words in replay[0], lines
    assert "\n" not in replay[0] and len(replay[0]) < 1000, replay[0][:2000]
    stored = json.loads(path.read_text())
    assert len(stored["results"]) == MATCHES and stored["agent_a"] == "heuristic"


def one_line_error(capsys, text, tmp_path, words=""):
    """``truco leaderboard`` of a config file holding ``text``: exit 2, one stderr line, under 1,000 characters."""
    path = tmp_path / "board.yaml"
    path.write_text(text)
    code = main(["leaderboard", str(path), "--out", str(tmp_path / "out"), "--no-progress", "--workers", "1"])
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 2, (code, err[:500])
    assert "\n" not in err and len(err) < 1000, f"{len(err)} characters: {err[:300]}"
    assert "Traceback" not in captured.err + captured.out
    assert words in err, err
    return err


# ------------------------------------------------------------------------------------------- item 3: own files

def test_empty_results_are_replayed_not_dropped_from_the_board(tmp_path, counted):
    run(tmp_path)
    path = stored_file(tmp_path)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "results": []}))
    counted.clear()
    lines: list[str] = []
    summary = run(tmp_path, lines)
    assert_replayed(tmp_path, counted, lines, path, "0 results for its 2 matches")
    assert [row["matches"] for row in summary["pairings"]] == [MATCHES]


def test_doubled_results_are_replayed_not_counted_twice(tmp_path, counted):
    run(tmp_path)
    path = stored_file(tmp_path)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "results": data["results"] * 2}))
    counted.clear()
    lines: list[str] = []
    summary = run(tmp_path, lines)
    assert_replayed(tmp_path, counted, lines, path, "4 results")
    assert [row["matches"] for row in summary["pairings"]] == [MATCHES]


def _header(data, key, value):
    return {**data, key: value}


def _entry(index, key, value):
    def change(data):
        results = [dict(r) for r in data["results"]]
        if value is KeyError:
            del results[index][key]
        else:
            results[index][key] = value
        return {**data, "results": results}
    return change


MISMATCHES = {
    "count in the header": lambda d: _header(d, "matches", 4),
    "agent_a": lambda d: _header(d, "agent_a", "threshold"),
    "agents swapped": lambda d: {**d, "agent_a": d["agent_b"], "agent_b": d["agent_a"]},
    "preset": lambda d: _header(d, "preset", "argentine"),
    "seed": lambda d: _header(d, "seed", 4),
    "seed as text": lambda d: _header(d, "seed", "3"),
    "matches as true": lambda d: _header(d, "matches", True),
    "no header": lambda d: {"results": d["results"]},
    "results in the other order": lambda d: {**d, "results": d["results"][::-1]},
    "one result twice": lambda d: {**d, "results": [d["results"][0]] * 2},
    "deal": _entry(1, "deal", 7),
    "seat order": _entry(1, "swapped", False),
    "match seed": _entry(0, "match_seed", 12345),
    "pairing index": _entry(0, "pairing", 1),
    "other preset in a result": _entry(0, "preset", "argentine"),
    "winner": _entry(0, "winner", "c"),
    "no winner": _entry(0, "winner", KeyError),
    "negative score": _entry(0, "score_a", -1),
    "score as text": _entry(0, "score_a", "12"),
    "hands as true": _entry(0, "hands", True),
    "no points": _entry(1, "points_b", KeyError),
    "behaviour not a table": _entry(0, "behaviour_a", [1, 2]),
    "behaviour of text": _entry(0, "behaviour_b", {"hands": "many"}),
    "forfeit garbage": _entry(0, "forfeit", "yes"),
    "forfeit of no side": _entry(0, "forfeit", {"side": "c", "seat": 0, "reason": "x"}),
}


def test_a_pairing_file_whose_results_do_not_match_its_header_or_settings_is_replayed(tmp_path, counted):
    run(tmp_path)
    path = stored_file(tmp_path)
    good = json.loads(path.read_text())
    for name, change in MISMATCHES.items():
        path.write_text(json.dumps(change(good)))
        counted.clear()
        lines: list[str] = []
        summary = run(tmp_path, lines)
        try:
            assert_replayed(tmp_path, counted, lines, path)
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}") from None
        assert [row["matches"] for row in summary["pairings"]] == [MATCHES], name
        assert json.loads(path.read_text())["results"] == good["results"], name  # deterministic: the same again


def test_well_formed_files_are_reused_forfeits_included(tmp_path, counted):
    """The checks refuse nothing this command writes: a bot that forfeits every match (a program that exits at
    once) leaves results with a ``forfeit``, and those are reused as they are."""
    quitter = f"exec:{sys.executable} -c pass"
    lines: list[str] = []
    run(tmp_path, lines, entrants=["random", quitter])
    stored = json.loads(stored_file(tmp_path).read_text())
    assert all("forfeit" in r for r in stored["results"]), stored["results"][0]
    counted.clear()
    lines.clear()
    run(tmp_path, lines, entrants=["random", quitter])
    assert counted == [] and [line.split()[0] for line in lines] == ["reuse"], lines


def test_a_long_exec_command_is_an_entrant_not_an_os_error(tmp_path, counted):
    """A command line whose words run past 255 characters names no file (its hash is None): it plays (here it
    forfeits, the program ignoring its arguments and exiting) instead of ending in ``File name too long``."""
    long_command = f"exec:{sys.executable} -c pass {'x' * 300}"
    summary = run(tmp_path, entrants=["random", long_command])
    assert counted == [("random", long_command, MATCHES)] and summary["pairings"][0]["wins_a"] == MATCHES


# ------------------------------------------------------------------------------------------- item 11: garbage

DEEP = "[" * 100_000 + "]" * 100_000  # 200 kB: over the size allowed for 2 matches
DEEP_SMALL = "[" * 30_000 + "]" * 30_000  # 60 kB: within the size, refused for its depth

HOSTILE_FILES = {
    "results null": ("results", None),
    "results a string": ("results", "all of them"),
    "results garbage": ("results", [1, "x", None]),
    "results of lists": ("results", [[], []]),
    "results deep": ("results", "deep"),
    "no results": ("results", KeyError),
}


def test_hostile_pairing_files_are_replayed_without_a_traceback(tmp_path, counted):
    run(tmp_path)
    path = stored_file(tmp_path)
    good = json.loads(path.read_text())
    texts = {}
    for name, (key, value) in HOSTILE_FILES.items():
        data = dict(good)
        if value is KeyError:
            del data[key]
        elif value == "deep":
            texts[name] = json.dumps({**good, "results": "@"}).replace('"@"', DEEP)
            continue
        else:
            data[key] = value
        texts[name] = json.dumps(data)
    texts["top-level list"] = json.dumps([good])
    texts["top-level null"] = "null"
    texts["100,000 levels of ["] = DEEP
    texts["30,000 levels of ["] = DEEP_SMALL
    texts["unclosed brackets"] = "[" * 100_000
    texts["not JSON"] = "results: all"
    texts["empty"] = ""
    texts["huge number"] = "9" * 10_000
    texts["larger than allowed"] = json.dumps(good) + " " * leaderboard.max_pairing_bytes(MATCHES)
    for name, text in texts.items():
        path.write_text(text)
        counted.clear()
        lines: list[str] = []
        run(tmp_path, lines)
        try:
            assert_replayed(tmp_path, counted, lines, path)
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}") from None
    path.write_bytes(b'{"results": "\xff\xfe"}')
    counted.clear()
    lines = []
    run(tmp_path, lines)
    assert_replayed(tmp_path, counted, lines, path, "UTF-8")


def test_the_command_replays_a_deeply_nested_pairing_file_and_exits_0(tmp_path, capsys):
    board = tmp_path / "board.yaml"
    board.write_text("entrants: [heuristic, random]\npreset: paulista\nmatches: 2\nseed: 3\n")
    argv = ["leaderboard", str(board), "--out", str(tmp_path / "lb"), "--no-progress", "--workers", "1"]
    assert main(argv) == 0
    path = stored_file(tmp_path)
    path.write_text(DEEP_SMALL)
    capsys.readouterr()
    assert main(argv) == 0
    captured = capsys.readouterr()  # the command shows the log on stderr
    assert "Traceback" not in captured.err + captured.out
    replay = [line for line in captured.err.splitlines() if "replay" in line]
    assert len(replay) == 1 and str(path) in replay[0] and "nested too deeply" in replay[0], replay
    assert len(json.loads(path.read_text())["results"]) == 2


# ------------------------------------------------------------------------------------------- item 8: bounds

def test_a_trillion_matches_or_3000_entrants_are_refused_before_anything_plays(tmp_path, capsys, nothing_plays):
    err = one_line_error(capsys, "entrants: [heuristic, random]\nmatches: 1000000000000\n", tmp_path, "matches")
    assert f"{MAX_MATCHES}" in err
    many = ", ".join(f"'random:seed={i}'" for i in range(3000))
    err = one_line_error(capsys, f"entrants: [{many}]\nmatches: 2\n", tmp_path, "entrants")
    assert f"at most {MAX_ENTRANTS}" in err
    one_line_error(capsys, f"entrants: [{many}]\nmatches: {MAX_MATCHES + 2}\n", tmp_path)
    assert not (tmp_path / "out").exists()


def test_the_caps_themselves_are_allowed():
    assert LeaderboardConfig(entrants=ENTRANTS, matches=MAX_MATCHES).matches == MAX_MATCHES
    entrants = [f"random:seed={i}" for i in range(MAX_ENTRANTS)]
    assert LeaderboardConfig(entrants=entrants).entrants == entrants
    for bad in ({"matches": MAX_MATCHES + 2}, {"entrants": entrants + ["heuristic"]}):
        with pytest.raises(ValueError):
            LeaderboardConfig(**{"entrants": ENTRANTS, **bad})


# ------------------------------------------------------------------------------------------- item 13: echoes

LONG = "x" * 100_000

BAD_CONFIGS = {
    "a 100k-character entrant": (f"entrants: [heuristic, {LONG}]\n", "entrants"),
    "a 100k-character exec entrant": (f"entrants: [heuristic, 'exec:{LONG}']\n", "entrants"),
    "a 100k-character ppo path": (f"entrants: [heuristic, 'ppo:{LONG}']\n", "entrants"),
    "entrants a string": (f"entrants: {LONG}\n", "should be a valid list"),
    "entrants a mapping": ("entrants: {heuristic: 1, random: 2}\n", "should be a valid list"),
    "entrants of numbers": ("entrants: [1, 2]\n", "should be a valid string"),
    "an empty entrant": ("entrants: [heuristic, '']\n", "entrants"),
    "duplicate entrants": ("entrants: [heuristic, random, heuristic]\n", "listed twice"),
    "long duplicate entrants": (f"entrants: ['random:{LONG[:900]}', 'random:{LONG[:900]}']\n", "listed twice"),
    "unknown spec": ("entrants: [heuristic, wizard]\n", "unknown agent kind 'wizard'"),
    "long unknown spec": (f"entrants: [heuristic, 'wizard:{LONG[:900]}']\n", "unknown agent kind"),
    "long missing policy": (f"entrants: [heuristic, 'ppo:{LONG[:900]}.safetensors']\n", "ppo"),
    "long preset": (f"entrants: [heuristic, random]\npreset: {LONG}\n", "unknown preset"),
    "long seed": (f"entrants: [heuristic, random]\nseed: {LONG}\n", "seed"),
    "odd matches": ("entrants: [heuristic, random]\nmatches: 3\n", "even"),
    "a list, not a mapping": ("[heuristic, random]\n", "mapping"),
}


def test_every_bad_config_is_one_short_line_with_exit_2(tmp_path, capsys, nothing_plays):
    for name, (text, words) in BAD_CONFIGS.items():
        try:
            one_line_error(capsys, text, tmp_path, words)
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}") from None


def test_an_out_that_is_a_file_is_one_line(tmp_path, capsys, nothing_plays):
    board = tmp_path / "board.yaml"
    board.write_text("entrants: [heuristic, random]\nmatches: 2\n")
    out = tmp_path / ("o" * 200)
    out.write_text("")
    assert main(["leaderboard", str(board), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "is a file" in err and "\n" not in err and len(err) < 1000, err


def test_an_entrant_made_for_another_preset_names_no_flag_the_leaderboard_lacks(tmp_path, capsys, nothing_plays):
    """The refusal said '(--allow-other-preset plays it anyway)', a flag of truco eval that truco leaderboard lacks."""
    err = one_line_error(capsys, "entrants: [ppo:paulista, random]\npreset: uruguayan\nmatches: 2\n", tmp_path,
                         "agent 'ppo:paulista' was made for preset(s) ['paulista'], not 'uruguayan'")
    assert "--allow-other-preset" not in err, err
