"""`truco play` end to end through a pseudo-terminal: a scripted person plays a whole hand with envido and truco
calls, and the final score on screen equals the saved match record's."""

import json
import re
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

PROMPT = r"Your choice \[1-(\d+), q, \?\]: "
OPTION = re.compile(r"\[(\d+)\] ([^\r\n]+)")
#: The person reads words, not engine ids: the Spanish a player says for the calls the script makes.
SAID = {"Envido": "envido", "¡Truco!": "truco", "Quiero": "quiero"}


def scripted_choice(options: dict[str, int], said: set[str]) -> int:
    """The person: sing envido and truco once each when allowed, accept every call, else play the first card."""
    for call in ("envido", "truco", "quiero"):
        if call in options and (call == "quiero" or call not in said):
            said.add(call)
            return options[call]
    return min(options.values())


@pytest.mark.parametrize("preset,extra", [("argentine", []), ("argentine-2v2", ["--partner", "random:seed=5"])])
def test_person_plays_a_hand_with_calls(tmp_path: Path, preset, extra):
    record_path = tmp_path / "match.json"
    child = pexpect.spawn(sys.executable, ["-m", "training.cli", "play", "--preset", preset, "--opponent",
                                           "random:seed=1", "--seed", "12", "--hands", "1",
                                           "--save", str(record_path), *extra],
                          encoding="utf-8", timeout=30, dimensions=(60, 160))
    said: set[str] = set()
    transcript = []
    while True:
        index = child.expect([PROMPT, r"Final score us (\d+) - them (\d+)", pexpect.EOF])
        transcript.append(child.before)
        if index == 0:
            options = {SAID.get(label.strip(), label.strip()): int(key) for key, label in OPTION.findall(child.before)}
            assert options, child.before
            child.sendline("x")  # a bad key re-prompts
            child.expect("is not a choice")
            child.expect(PROMPT)
            child.sendline(str(scripted_choice(options, said)))
        elif index == 1:
            shown = [int(child.match.group(1)), int(child.match.group(2))]
            child.expect(pexpect.EOF)
            break
        else:
            pytest.fail("truco play ended without a final score:\n" + "".join(transcript))
    assert {"envido", "truco"} <= said, f"the scripted person did not get to call: {said}"
    record = json.loads(record_path.read_text())
    assert len(record["hands"]) == 1, "--hands 1 --save keeps exactly the hand played"
    assert record["hands"][0]["score_after"] == shown
    screen = "".join(transcript) + child.before
    split = re.search(r"points by source: (.*)", screen)
    assert split and "envido us" in split.group(1), screen[-600:]
    assert re.search(r"last trick: (you|the opponent|opponent \(seat 1\)): ", screen), screen[-600:]
    assert "(envido)" not in screen and "(truco)" not in screen  # no engine ids beside the words
    assert "calls: seat" not in screen and "team 0" not in screen  # the table in words, not the engine's drawing
    assert re.search(r"your hand: [^\n]* de (espadas|bastos|oros|copas)", screen), screen[-600:]
    actions = [name for seat, name in record["hands"][0]["actions"] if seat == 0]
    assert "envido" in actions and "truco" in actions
    from truco_env.records import replay_record

    replay_record(record)


def test_bad_arguments_give_one_line(tmp_path: Path):
    from training.cli import main

    assert main(["play", "--preset", "nope", "--seed", "1"]) == 2
    assert main(["play", "--opponent", "wizard"]) == 2


@pytest.mark.parametrize("where", ["folder", "long-name", "file-as-folder"])
def test_a_save_path_that_cannot_be_written_is_refused_before_the_match(where, tmp_path: Path, capsys):
    """It used to be found out when the match ended: a traceback, and the match's record lost."""
    from training.cli import main

    (tmp_path / "afile").write_text("")
    save = {"folder": tmp_path, "long-name": tmp_path / ("d" * 300 + ".json"),
            "file-as-folder": tmp_path / "afile" / "m.json"}[where]

    def no_input(prompt: str) -> str:
        raise AssertionError("the match started")

    from training.people import play

    with pytest.raises(ValueError) as err:
        play.play_match("argentine", "random", "random", 0, 1, str(save), read=no_input)
    assert "--save" in str(err.value) and "\n" not in str(err.value)
    assert main(["play", "--seed", "1", "--save", str(save)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("truco play: error: --save"), lines


def test_ctrl_c_at_the_prompt_leaves_the_table_with_exit_code_130_and_saves_the_record(tmp_path: Path):
    """Ctrl-C left the table with exit code 0, as the end of the input does (issue 30: 130 for an interrupt)."""
    import io

    from training.people.play import play_match

    def ctrl_c(prompt: str) -> str:
        raise KeyboardInterrupt

    out = io.StringIO()
    save = tmp_path / "m.json"
    assert play_match("argentine", "random", "random", 0, 1, str(save), read=ctrl_c, out=out) == 130
    assert "Leaving the table" in out.getvalue() and "rules" in json.loads(save.read_text())

    def end_of_input(prompt: str) -> str:
        raise EOFError

    assert play_match("argentine", "random", "random", 0, 1, None, read=end_of_input, out=io.StringIO()) == 0


def test_q_leaves_the_table_and_keeps_the_record_and_question_mark_shows_the_keys(tmp_path: Path):
    import io

    from training.people.play import play_match

    answers = iter(["?", "1", "q"])
    screen = io.StringIO()
    save = tmp_path / "left.json"
    assert play_match("argentine", "random:seed=1", "random", 0, 7, str(save), read=lambda prompt: next(answers),
                      out=screen) == 0
    text = screen.getvalue()
    assert text.count("q leaves the table") == 2 and "ancho de espadas" in text  # the start and the '?'
    assert "Leaving the table. Score us 0 - them 0" in text and save.exists()
    from truco_env.records import replay_record

    record = json.loads(save.read_text())
    assert len(record["hands"]) == 1 and record["hands"][0]["actions"][0][0] == 0  # the hand left, as played
    replay_record(record)


@pytest.mark.parametrize("text,family,manilha,name", [
    ("1e", "argentine", None, "ancho de espadas"), ("7o", "argentine", None, "siete de oros"),
    ("12c", "argentine", None, "rey de copas"), ("4c", "paulista", "4", "zap (4 de paus)"),
    ("Ad", "paulista", "A", "pica-fumo (ás de ouros)"), ("Ad", "paulista", "K", "ás de ouros"),
    ("Qh", "paulista", None, "dama de copas")])
def test_cards_have_the_names_players_use(text, family, manilha, name):
    from training.people.labels import card_name

    assert card_name(text, family, manilha) == name
