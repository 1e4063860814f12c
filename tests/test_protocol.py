"""``truco-bot/1``: outside programs as agents (``exec:``), this project's agents as programs (``truco bot``), the
messages' seat-safety, and what a program that misbehaves gets: one line naming it, and no process left behind."""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
from pathlib import Path

import pytest

from agents import make_agent
from agents.exec import BotFailure
from training.measure.evaluate import run_tournament
from truco_env import TrucoState, make_config
from truco_env.cards import card_text
from truco_env.protocol import ProtocolError, act_message, read_answer

ROOT = Path(__file__).resolve().parents[1]
TRUCO_BOT = f"{sys.executable} -m training.cli bot"
#: A card's text wherever a message can hold one: a string of its own, or after "play:", "cover:" or "=".
CARD = re.compile(r'[":=]((?:1[0-2]|[1-7AQJK])[ebocsdh])"')


def matches_of(summary: dict) -> list[tuple]:
    return [(m["deal"], m["swapped"], m["score_a"], m["score_b"], m["hands"]) for m in summary["matches"]]


def test_an_agent_through_the_protocol_plays_as_the_agent_itself(monkeypatch):
    """`truco bot heuristic` behind `exec:` gives, deal for deal, the matches of the heuristic played directly. A
    program's deals and seeds are keyed (tests/test_protocol_hostile.py); the keying is switched off here so that
    both tournaments play the same deals with the same seeds."""
    import agents.exec
    import training.measure.evaluate

    monkeypatch.setattr(training.measure.evaluate, "plays_program", lambda specs: False)
    monkeypatch.setattr(agents.exec, "hidden_seed", lambda *parts, **_: parts[-1])
    piped, _ = run_tournament([f"exec:{TRUCO_BOT} heuristic", "random"], ["argentine-2v2"], 6, seed=3, workers=1)
    direct, _ = run_tournament(["heuristic", "random"], ["argentine-2v2"], 6, seed=3, workers=1)
    assert matches_of(piped) == matches_of(direct)


@pytest.mark.parametrize("preset", ["uruguayan", "argentine-2v2-senas"])
def test_truco_bot_plays_the_presets_whose_observation_is_longer(monkeypatch, preset):
    """`truco bot` read only the common observation (1,086 values): on a Uruguayan or señas preset it left at its
    first act message ("an observation of 1136 values; this truco-rl reads 1086") and every match was forfeited."""
    import agents.exec
    import training.measure.evaluate

    monkeypatch.setattr(training.measure.evaluate, "plays_program", lambda specs: False)
    monkeypatch.setattr(agents.exec, "hidden_seed", lambda *parts, **_: parts[-1])
    piped, _ = run_tournament([f"exec:{TRUCO_BOT} heuristic", "random"], [preset], 2, seed=3, workers=1)
    direct, _ = run_tournament(["heuristic", "random"], [preset], 2, seed=3, workers=1)
    assert matches_of(piped) == matches_of(direct)
    assert all(m["hands"] > 1 for m in piped["matches"])


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("javac") is None or shutil.which("java") is None,
                    reason="Node.js or a Java development kit is not installed")
def test_bots_in_javascript_and_java_play_truco_eval_against_the_heuristic(tmp_path, capsys):
    """The two example bots, each in its own language and with no dependency on this project, in one real
    tournament with the heuristic: every match played to its end, none forfeited, the JavaScript bot seeded by the
    match (the same command, the same results)."""
    import subprocess

    from training.cli import main

    subprocess.run(["javac", "-d", str(tmp_path / "java"), str(ROOT / "examples" / "bots" / "FirstCard.java")],
                   check=True, timeout=300)
    node = f"exec:node {ROOT / 'examples' / 'bots' / 'random.mjs'}"
    java = f"exec:java -cp {tmp_path / 'java'} FirstCard"
    runs = []
    for out in ("a", "b"):
        assert main(["eval", "--agents", node, java, "heuristic", "--preset", "argentine", "--matches", "4",
                     "--workers", "1", "--no-plots", "--no-progress", "--out", str(tmp_path / out)]) == 0
        runs.append(json.loads((tmp_path / out / "results.json").read_text())["matches"])
    capsys.readouterr()
    assert len(runs[0]) == 12 and not any("forfeit" in m for m in runs[0])
    assert all(max(m["score_a"], m["score_b"]) >= 30 for m in runs[0])  # every match played to its end
    assert [m["winner"] for m in runs[0]] == [m["winner"] for m in runs[1]]


MISBEHAVING = {
    "silent": ("import sys, time\nfor line in sys.stdin:\n    time.sleep(30)\n", "no answer within 0.5 s"),
    "exits": ("import sys\nsys.stdin.readline()\nsys.exit(3)\n", "exit code 3"),
    "garbage": ("import sys\nfor line in sys.stdin:\n    if '\"act\"' in line: print('hello', flush=True)\n",
                "an answer that is not JSON: 'hello'"),
    "illegal": (("import sys\nfor line in sys.stdin:\n    if '\"act\"' in line: print('{\"action\": \"flor\"}', "
                "flush=True)\n"), "an illegal action 'flor'"),
}


@pytest.mark.parametrize("kind", sorted(MISBEHAVING))
def test_a_misbehaving_program_is_one_line_naming_it_and_is_stopped(kind, tmp_path, monkeypatch):
    import agents.exec
    from truco_env.turns import observation_for

    script, words = MISBEHAVING[kind]
    path = tmp_path / f"{kind}.py"
    path.write_text(script)
    monkeypatch.setattr(agents.exec, "STARTUP_SECONDS", 0.5)  # the first answer's allowance, which includes start-up
    agent = make_agent(f"exec:{sys.executable} {path}")
    agent.reset(0)
    state = TrucoState.new(make_config("argentine"), seed=1)
    with pytest.raises(BotFailure) as failure:
        agent.act(observation_for(agent, state, state.actor))
    message = str(failure.value)
    assert words in message and path.name in message and "\n" not in message, message
    assert agent.process is None and not agent._finalizer.alive  # its process was stopped: none left behind


def test_a_spec_keeps_the_whole_command_and_an_empty_one_is_refused():
    agent = make_agent("exec:python bot.py --depth=3,fast")
    assert agent.argv == ["python", "bot.py", "--depth=3,fast"]
    with pytest.raises(ValueError, match="needs a command"):
        make_agent("exec:")


def test_answers_are_read_by_name_or_id_and_anything_else_is_refused():
    legal = [{"name": "play:1e", "id": 0}, {"name": "truco", "id": 83}]
    assert read_answer('{"action": "truco"}\n', legal) == "truco"
    assert read_answer('{"action": 0}', legal) == "play:1e"
    for line, words in [("nope", "not JSON"), ('{"act": 1}', 'without "action"'), ('{"action": 5}', "illegal"),
                        ('{"action": true}', "illegal"), ("[" * 5000, "characters")]:
        with pytest.raises(ProtocolError, match=words):
            read_answer(line, legal)


@pytest.mark.parametrize("preset,overrides", [("argentine-2v2", {}), ("argentine-flor", {}),
                                              ("paulista-2v2", {"covered_card": True})])
def test_no_message_carries_a_card_its_seat_may_not_see(preset, overrides):
    """Over many deals and every decision: each card named in an act message is the seat's own, the vira, a
    card face up on the table, or a partner's shown by a mão de onze; never another seat's hidden card."""
    rng = random.Random(7)
    family = make_config(preset).family
    for deal in range(40):  # face-down cards (covered_card) are what a careless message would give away
        state = TrucoState.new(make_config(preset, **overrides), seed=deal)
        while not state.is_over and state.hand_index < 3:
            seat = state.actor
            message = act_message(state, seat)
            visible = {card_text(c, family) for c in state.dealt_cards(seat)}
            if state.vira is not None:
                visible.add(card_text(state.vira, family))
            for trick in [*state.tricks, state.current_trick]:
                visible |= {card_text(c, family) for s, c, covered in trick if not covered or s == seat}
            visible |= {card for cards in message["partners"].values() for card in cards}
            for other in message["partners"]:
                assert int(other) % 2 == seat % 2  # only a partner's, and only where the rules show them
            named = set(CARD.findall(json.dumps({k: v for k, v in message.items() if k != "legal"})))
            named |= {e["name"].split(":")[1] for e in message["legal"] if ":" in e["name"]} - {"0", "1", "2"}
            assert named <= visible, (preset, deal, seat, sorted(named - visible))
            state.apply(rng.choice(state.legal_actions()))


def test_a_failing_program_forfeits_its_match_and_the_tournament_plays_on(tmp_path):
    """A bot that plays quietly (a card, or no to a call) and names an illegal action at its third decision of every
    match: each match stops there as its
    forfeit (the other side wins), with the reason in the results and the record, which replays; the program is
    started afresh for the next match, and the tournament finishes."""
    from training.measure.evaluate import make_tasks, play_tasks
    from truco_env.records import replay_record

    path = tmp_path / "third.py"
    path.write_text("import json, sys\nn = 0\nfor line in sys.stdin:\n    m = json.loads(line)\n"
                    "    if m['type'] == 'match': n = 0\n    if m['type'] != 'act': continue\n    n += 1\n"
                    "    names = [e['name'] for e in m['legal']]\n"
                    "    quiet = [x for x in names if x.startswith('play') or x == 'no_quiero'] or names\n"
                    "    name = quiet[0] if n < 3 else 'not-an-action'\n"
                    "    print(json.dumps({'action': name}), flush=True)\n")
    bot = f"exec:{sys.executable} {path}"
    tasks = make_tasks([bot, "random"], ["argentine"], 4, seed=1, pairs=[(bot, "random")], keep_records=True)
    results = play_tasks(tasks, workers=1)
    assert len(results) == 4
    for result in results:
        forfeit = result["forfeit"]
        assert result["winner"] == "b" and forfeit["side"] == "a" and "not-an-action" in forfeit["reason"]
        record = result["record"]
        assert record["forfeit"]["seat"] == forfeit["seat"] and record["winner"] != record["forfeit"]["team"]
        replay_record(record)  # the record of a forfeited match replays, up to the forfeit
    record = dict(results[0]["record"], winner=results[0]["record"]["forfeit"]["team"])
    from truco_env.records import ReplayError

    with pytest.raises(ReplayError, match="forfeited"):
        replay_record(record)


def test_every_message_follows_its_published_schema():
    """docs/protocol/*.schema.json are what a stranger codes against: real messages of every kind of hand
    (Argentine with flor, Paulista teams with its mão de onze and blind mão de ferro) follow them."""
    jsonschema = pytest.importorskip("jsonschema")
    from truco_env.encoding import encode_observation
    from truco_env.protocol import match_message

    schemas = {name: json.loads((ROOT / "docs" / "protocol" / f"{name}.schema.json").read_text())
               for name in ("match", "act", "answer")}
    rng = random.Random(3)
    special = set()
    for preset in ("argentine-flor", "paulista-2v2", "argentine-3v3"):
        for deal in range(6):
            state = TrucoState.new(make_config(preset), seed=deal, score=[10, 10] if preset == "paulista-2v2" else None)
            jsonschema.validate(match_message(state, 1, seed=7), schemas["match"])
            while not state.is_over:
                message = act_message(state, state.actor, encode_observation(state, state.actor))
                jsonschema.validate(json.loads(json.dumps(message)), schemas["act"])
                special.add(message["special_hand"])
                name = rng.choice(state.legal_actions())
                jsonschema.validate({"action": name}, schemas["answer"])
                state.apply(name)
    assert {"mao_de_onze", None} <= special


def test_a_best_response_against_a_program_starts_a_few_programs_not_hundreds(tmp_path):
    """The learner seats one target instance per table and seat, and each ``exec:`` instance is a process: the
    recipe plays a program at ``PROGRAM_TABLES`` tables per partition (it started some 500 at 128 tables), and a
    training league that would start more is refused in one line."""
    from training.learn.best_response import BRArgs, train_best_response
    from training.learn.ppo import PROGRAM_TABLES, PPOArgs

    started = tmp_path / "started"
    path = tmp_path / "first_legal.py"
    path.write_text("import json, os, sys\n"
                    f"open({str(started)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
                    "for line in sys.stdin:\n    m = json.loads(line)\n"
                    "    if m['type'] == 'act': print(json.dumps({'action': m['legal'][0]['id']}), flush=True)\n")
    bot = f"exec:{sys.executable} {path}"
    args = BRArgs(preset="argentine", target=bot, decisions=300, workers=1, batch_decisions=300,
                  minibatch_size=100, update_epochs=1, hidden=(8,))
    assert args.ppo_args(str(tmp_path / "run")).tables == PROGRAM_TABLES < args.tables
    assert BRArgs(preset="argentine", target="random").ppo_args(str(tmp_path / "r")).tables == args.tables
    _, progress, status = train_best_response(args, str(tmp_path / "run"), progress=False)
    programs = set(started.read_text().split())
    assert status == "complete" and progress.decisions >= 300
    assert PROGRAM_TABLES <= len(programs) <= args.partitions * PROGRAM_TABLES
    with pytest.raises(ValueError, match=f"starts a program for each table it plays: set tables to at most "
                                         f"{PROGRAM_TABLES} \\(got 16\\)"):
        PPOArgs(preset="argentine", scripted={bot: 1.0}, self_play=0.0, snapshots=0.0, tables=16)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_league_program_that_will_not_start_is_one_line_in_either_backend(tmp_path, workers):
    """In worker processes the program's failure used to end in each worker's traceback and "a collection worker
    died"; now the trainer raises the worker's one-line error itself, as the in-process backend does."""
    from training.learn.best_response import BRArgs, train_best_response

    args = BRArgs(preset="argentine", target=f"exec:{tmp_path / 'no-such-bot'}", decisions=100, workers=workers,
                  batch_decisions=100, minibatch_size=50, update_epochs=1, hidden=(8,))
    with pytest.raises(ValueError, match=r"^bot '.*no-such-bot' at seat \d: cannot start \(No such file"):
        train_best_response(args, str(tmp_path / "run"), progress=False)


def test_truco_bot_refuses_an_outside_program_in_one_line(capsys):
    """`truco bot exec:...` would put a pipe behind a pipe; it used to be refused as wanting the protocol."""
    from training.cli import main

    assert main(["bot", "exec:node bot.mjs"]) == 2
    err = capsys.readouterr().err
    assert "'exec:node bot.mjs' is an outside program already; truco bot serves this project's" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("overrides", [{}, {"deck_ranks": ("1", "10", "11", "12")}])
def test_a_uruguayan_act_message_names_the_muestra_and_no_manilhas(overrides):
    """The muestra goes in ``vira`` and makes piezas, not manilhas: ``manilhas`` read the muestra as a Paulista
    vira ('3' under the 2 of espadas, a rank no card there is raised to), and with a research deck of Spanish ranks
    the message could not be made at all (ValueError: vira 'Qh' is not in the dirty deck)."""
    config = make_config("uruguayan", **overrides)
    for seed in range(20):
        state = TrucoState.new(config, seed=seed)
        message = act_message(state, state.actor)
        assert message["vira"] == card_text(state.vira, "uruguayan") and message["manilhas"] is None


def _uruguayan_messages() -> tuple[dict, dict]:
    from truco_env.encoding import encode_observation
    from truco_env.protocol import match_message

    state = TrucoState.new(make_config("uruguayan"), seed=3)
    seat = state.actor
    return match_message(state, seat, 5), act_message(state, seat, encode_observation(state, seat))


@pytest.mark.parametrize("change, named", [
    (lambda m, a: a["observation"]["nonzero"].__setitem__(0, [float("inf"), 1.0]), "an observation.nonzero index"),
    (lambda m, a: a["observation"]["nonzero"].__setitem__(0, [-1, 1.0]), "an observation.nonzero index"),
    (lambda m, a: a["observation"]["nonzero"].__setitem__(0, [0, float("nan")]), "observation.nonzero values"),
    (lambda m, a: a["observation"]["nonzero"].__setitem__(0, [1, 2, 3]), "[index, value] pairs"),
    (lambda m, a: a["legal"].__setitem__(0, {**a["legal"][0], "id": -1}), "a legal action's id"),
    (lambda m, a: a["legal"].__setitem__(0, {**a["legal"][0], "id": float("inf")}), "a legal action's id"),
    (lambda m, a: m.__setitem__("seed", 1.5), "a match's seed"),
    (lambda m, a: m.__setitem__("seat", "x"), "a match's seat"),
])
def test_truco_bot_refuses_a_message_whose_indices_are_not_indices_in_one_line(monkeypatch, capsys, change, named):
    """An index of Infinity (valid JSON for Python) stopped `truco bot` with an OverflowError traceback, and a
    negative one was read from the end: -1 marked the last observation entry or the last action (mazo) instead of
    being refused. Each is one line naming the field, and no answer is given."""
    import io

    from training.cli import main

    match, act = _uruguayan_messages()
    change(match, act)
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{json.dumps(match)}\n{json.dumps(act)}\n"))
    assert main(["bot", "heuristic"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and named in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_truco_bot_answers_the_same_message_unchanged(monkeypatch, capsys):
    """The control of the test above: the messages it breaks get an answer as they are."""
    import io

    from training.cli import main

    match, act = _uruguayan_messages()
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{json.dumps(match)}\n{json.dumps(act)}\n"))
    assert main(["bot", "heuristic"]) == 0
    assert json.loads(capsys.readouterr().out)["action"] in [entry["name"] for entry in act["legal"]]
