"""Every option of every command given a malformed value: one line on stderr naming it, exit 2, no traceback, and no
echo of a long value (issue: reliability, second round).

The sweep walks the command line's own parser, so an option added later is swept too: each option that takes a
typed value (a number, a choice) gets junk and a 5,000-digit number; the options that take names (presets, agent
specs, config files, ``--set``) get a long unknown name. Each case starts from a small valid command line and
changes one option, so a command that accepted the bad value would go on to run: the cases keep to values the
commands must refuse before any work. The other tests here are the single findings of the probe: the AEC env's
edge calls, a run dir that is a file, NUL characters and ``--set`` mistakes in options, nested rules in a record,
and resources that grew without a bound."""
from __future__ import annotations

import argparse
import json

import pytest

from training.cli import build_parser, main

LONG = 100_000  # characters of a long value
#: A small valid command line per command (the bad option is appended: argparse keeps the last value).
BASE = {
    ("demo",): ["--random", "--matches", "1"],
    ("play",): [],
    ("serve",): [],
    ("train", "ppo"): ["--run-dir", "{tmp}/run"],
    ("train", "cfr"): ["--config", "configs/cfr_argentine_mini.yaml"],
    ("export", "ppo"): ["ppo:argentine", "--out", "{tmp}/m.onnx"],
    ("export", "cfr"): ["{tmp}/none.npz", "--out", "{tmp}/s.json"],
    ("eval",): ["--agents", "random", "random", "--matches", "2", "--out", "{tmp}/eval", "--no-progress",
                "--no-plots"],
    ("exploit",): ["random", "--budget-decisions", "1", "--out", "{tmp}/exploit", "--no-progress"],
    ("gauntlet",): ["random", "--matches", "2", "--out", "{tmp}/gauntlet", "--no-progress"],
    ("report",): ["--root", "{tmp}/report", "--runs", "{tmp}/runs", "--no-progress"],
    ("leaks",): ["--agents", "random", "random", "--preset", "argentine", "--matches", "2"],
    ("probe",): ["--policy", "ppo:argentine", "--preset", "argentine", "--answers", "1"],
}
#: Options that take names, with a value every command must refuse before it does anything.
NAMED = {"--preset": "argentin" * (LONG // 8), "--opponent": "nobot:" + "x" * LONG, "--partner": "nobot:" + "x" * LONG,
         "--agents": "nobot:" + "x" * LONG, "--config": "{tmp}/" + "missing" * 20 + ".yaml",
         "--set": "x" * LONG, "--host": "no host " * 20}


def _options() -> list[tuple[tuple[str, ...], str, str]]:
    cases = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))
            elif action.option_strings and action.nargs != 0 and path in BASE:
                option = action.option_strings[-1]
                if action.type is not None or action.choices is not None:
                    cases.extend([(path, option, "junk" * 50), (path, option, "9" * 5000), (path, option, "-5")])
                elif option in NAMED and not (path == ("eval",) and option == "--agents"):
                    cases.append((path, option, NAMED[option]))

    walk(build_parser(), ())
    cases.append((("eval",), "--agents", NAMED["--agents"]))  # appended last: it takes several specs
    return cases


def _valid(path: tuple[str, ...], option: str, value: str) -> bool:
    """The few typed values that are allowed (a seed may be negative; port and seat are checked by their
    command)."""
    return value == "-5" and option in ("--seed",)


CASES = [c for c in _options() if not _valid(*c)]


@pytest.mark.parametrize("path, option, value", CASES,
                         ids=[f"{' '.join(p)} {o} {v[:6]}{'…' if len(v) > 6 else ''}" for p, o, v in CASES])
def test_a_malformed_option_is_one_line_and_exit_2(path, option, value, tmp_path, capsys):
    base = [part.replace("{tmp}", str(tmp_path)) for part in BASE[path]]
    argv = [*path, *base, option, value.replace("{tmp}", str(tmp_path))]
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, (argv[:4], code, err[:300])
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err
    assert len(lines[-1]) < 400, lines[-1][:400]
    assert len(err) < 1200, err[:1200]


# ----------------------------------------------------------------------------------------- the AEC env

def test_the_aec_env_answers_its_edge_calls_in_one_line():
    import truco_env

    env = truco_env.env("argentine")
    env.reset(seed=1)
    with pytest.raises(ValueError, match=r"observe\('player_9'\): no such agent; the agents are"):
        env.observe("player_9")
    for agent in env.agent_iter():  # play the match out
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(obs["action_mask"].nonzero()[0][0]))
    with pytest.raises(RuntimeError, match="the episode is over and every agent has left it; call reset"):
        env.last()
    with pytest.warns(UserWarning, match=r"reset options \['foo'\] are ignored"):
        env.reset(seed=2, options={"foo": 1})
    env.reset(seed=2, options={"score": [3, 4]})  # the keys it reads pass quietly


# ---------------------------------------------------------------------------------------------- options

@pytest.mark.parametrize("option", ["run_dir", "out"])
def test_a_nul_character_in_an_option_names_the_option(option, tmp_path, capsys):
    if option == "run_dir":
        code = main(["train", "ppo", "--set", 'run_dir="a\\0b"'])
        command = "truco train ppo"
    else:
        code = main(["eval", "--agents", "random", "random", "--matches", "2", "--set", 'out="a\\0b"'])
        command = "truco eval"
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith(f"{command}: error: --set: option {option!r} holds a NUL character"), err


def test_a_set_mistake_names_set_not_the_config_file(capsys):
    assert main(["train", "ppo", "--config", "configs/ppo/argentine.yaml", "--set", "learning_rate=fast"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("truco train ppo: error: --set: option 'learning_rate'"), err
    assert "configs/ppo/argentine.yaml" not in err
    assert main(["train", "ppo", "--config", "configs/ppo/argentine.yaml", "--set", "lerning_rate=0.1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("truco train ppo: error: --set: unknown option 'lerning_rate'; did you mean"), err


def test_a_run_dir_that_is_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    assert main(["train", "ppo", "--run-dir", str(tmp_path / "afile"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("truco train ppo: error: run dir") and "is a file; give a folder" in err, err


def test_a_record_with_nested_deck_ranks_is_refused_in_one_line(tmp_path, capsys):
    from truco_env.config import PRESETS
    from truco_env.engine import TrucoState

    state = TrucoState.new(PRESETS["argentine-mini"], seed=1)
    record = state.match_record()
    record["rules"]["deck_ranks"] = [["1"], ["3"], ["7"]]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record))
    code = main(["replay", str(path)])
    err = capsys.readouterr().err.strip()
    assert code in (1, 2) and "Traceback" not in err and "deck_ranks" in err and "\n" not in err, err


# -------------------------------------------------------------------------------------------- resources

@pytest.mark.parametrize("value", ["-5", "1000000000"])
def test_export_test_vectors_are_bounded(value, tmp_path, capsys):
    assert main(["export", "ppo", "ppo:argentine", "--out", str(tmp_path / "m.onnx"), "--vectors-per-preset",
                 value]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]  # argparse's usage lines, then the error
    assert last.startswith("truco export ppo: error: argument --vectors-per-preset: expected an integer 0..1000"), last
    assert not any(tmp_path.iterdir())


def test_a_tournament_starts_no_more_workers_than_its_work(monkeypatch):
    from training.measure import evaluate

    sizes = []
    real = evaluate.spawn_pool

    def spy(workers, **kwargs):
        sizes.append(workers)
        return real(workers, **kwargs)

    monkeypatch.setattr(evaluate, "spawn_pool", spy)
    tasks = evaluate.make_tasks(["random", "random"], ["argentine"], 2, seed=0)
    results = evaluate.play_tasks(tasks, workers=12)
    assert len(results) == 2 and sizes == [2]


@pytest.mark.parametrize("setting, words", [
    ("learning_rate=.inf", "'learning_rate' = inf is not allowed: should be a finite number"),  # trained NaNs
    ("clip_coef=-.inf", "should be a finite number"),
    ("total_decisions=true", "'total_decisions' = True is not allowed: should be a number, not true or false"),
    ("seed=false", "should be a number, not true or false"),  # ran as seed 0
    ("hidden=[true]", "should be a number, not true or false"),  # made a layer one unit wide
])
def test_an_infinite_number_or_a_boolean_for_a_number_is_refused(setting, words):
    from training.learn.ppo import PPOArgs
    from training.options import load

    with pytest.raises(ValueError) as info:
        load(PPOArgs, None, ["preset=uruguayan", setting])
    assert words in str(info.value) and "\n" not in str(info.value), str(info.value)
    assert load(PPOArgs, None, ["tally_film=true", "learning_rate=0.001"]).tally_film is True  # a flag stays one


@pytest.mark.parametrize("argv", [
    ["train", "ppo", "--set", "device=cuda:999", "--run-dir", "{tmp}/run", "--quiet"],
    ["exploit", "random", "--device", "cuda:999", "--budget-decisions", "1", "--out", "{tmp}/exploit", "--no-progress"],
])
def test_a_gpu_torch_does_not_see_is_refused_before_any_folder_is_made(argv, tmp_path, capsys):
    """The run dir (train) or OUT.training/ (exploit) was made first and left behind empty."""
    assert main([part.replace("{tmp}", str(tmp_path)) for part in argv]) == 2
    err = capsys.readouterr().err
    assert "device 'cuda:999': torch sees" in err and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []
