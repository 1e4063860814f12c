"""The JavaScript encoder (frontends/js, docs/frontends.md): its shared tables are current, the seat views it reads
hide what the seat may not know, and Node.js reproduces truco_env's observation and mask exactly on exported
states (skipped, saying why, where ``node`` is not on PATH)."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from truco_env import TrucoState, make_config
from truco_env.encoding import OBSERVATION_VERSION, encode_observation, partner_cards_visible
from truco_env.engine import MAO_DE_FERRO
from truco_env.views import hand_was_blind, seat_view

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "frontends" / "js"
NODE_TEST = JS / "test" / "parity.test.mjs"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"frontends_js_{name}", JS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_tables = _load("make_tables")
export_parity = _load("export_parity")


def _node_major() -> int | None:
    node = shutil.which("node")
    if node is None:
        return None
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60, check=False).stdout
    match = re.match(r"v(\d+)\.", out)
    return int(match.group(1)) if match else None


NODE = _node_major()
needs_node = pytest.mark.skipif(NODE is None or NODE < 18,
                                reason="node (Node.js 18 or newer) is not on PATH: the JavaScript encoder's "
                                       "parity test needs it")


def test_committed_tables_are_what_the_generator_writes_now():
    committed = (JS / "truco_tables.json").read_text(encoding="utf-8")
    assert committed == make_tables.render(), "stale: run python frontends/js/make_tables.py"
    tables = json.loads(committed)
    assert tables["observation"]["version"] == OBSERVATION_VERSION
    assert set(tables["config"]["presets"]) == set(make_tables.PRESETS)


def test_every_preset_is_exported():
    names = {preset for _, preset, _ in export_parity.CONFIGS}
    assert names == set(make_tables.PRESETS)


def _card_texts(hand_view: dict) -> set[str]:
    texts = {c for cards in hand_view["deal"]["hands"] if cards for c in cards}
    for _, name in hand_view["actions"]:
        if ":" in name and not name.startswith("sena:"):  # a signal names a gesture, not a card
            arg = name.split(":", 1)[1]
            texts.add(arg.split("=", 1)[1] if name.startswith("play_slot:") else arg)
    return texts


def _seen_cards(record: dict, seat: int, shown: set[int], blind: bool) -> set[str]:
    """The cards ``seat`` has seen in a hand: its own (not in a blind hand), shown partners', face-up plays."""
    hands = record["deal"]["hands"]
    seen = {c for s in shown for c in hands[s] if not (blind and s == seat)}
    for s, name in record["actions"]:
        kind, _, arg = name.partition(":")
        if kind == "play":
            seen.add(arg)
        elif kind == "play_slot":
            seen.add(hands[s][int(arg)])
        elif kind == "cover" and s in shown:
            seen.add(arg)
    return seen


@pytest.mark.parametrize("name,preset,overrides", export_parity.CONFIGS, ids=[c[0] for c in export_parity.CONFIGS])
def test_a_seat_view_names_no_card_the_seat_has_not_seen(name, preset, overrides):
    config = make_config(preset, **overrides)
    rng = random.Random(name)
    checked = 0
    for match in range(3):
        score = [config.target_score - 1] * 2 if match == 2 and config.family == "paulista" else None
        state = TrucoState.new(config, seed=match, score=score)
        while not state.is_over and checked < 150 * (match + 1):
            seat = state.actor
            view = seat_view(state, seat)
            records = state.hand_records
            for i, (record, hand_view) in enumerate(zip(records, view["hands"])):
                shown = {seat}
                blind = hand_was_blind(config, record["score_before"])
                if i == len(records) - 1:
                    blind = state.special_hand == MAO_DE_FERRO and config.mao_de_ferro_blind
                    if partner_cards_visible(state, seat):
                        shown |= {s for s in range(config.num_players) if s % 2 == seat % 2}
                leaked = _card_texts(hand_view) - _seen_cards(record, seat, shown, blind) - {record["deal"]["vira"]}
                assert not leaked, f"{name}: seat {seat} sees {leaked} in hand {i}: {hand_view}"
                signals = [[s, a] for s, a in record["actions"] if a.startswith("sena:")
                           and (s % 2 == seat % 2 or seat in record["deal"]["catches"][s])]
                assert [e for e in hand_view["actions"] if e[1].startswith("sena:")] == signals, "a signal not seen"
            assert "rules" not in view and view["seat"] == seat
            checked += 1
            state.apply(rng.choice(state.legal_actions()))
    assert checked > 0


def _run_parity(tmp_path: Path, states: int) -> str:
    triples = tmp_path / "triples.json"
    exported = subprocess.run([sys.executable, str(JS / "export_parity.py"), "--out", str(triples),
                               "--states", str(states)], cwd=ROOT, capture_output=True, text=True,
                              timeout=1800, check=False)
    assert exported.returncode == 0, exported.stderr
    data = json.loads(triples.read_text(encoding="utf-8"))
    assert len(data["triples"]) == states
    covered = export_parity.coverage(data)
    missing = [feature for feature, count in covered.items() if count == 0 and feature != "phase over"]
    assert not missing, f"no exported state exercises {missing}"
    result = subprocess.run(["node", "--test", str(NODE_TEST)], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "TRUCO_PARITY_TRIPLES": str(triples)}, timeout=1800, check=False)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert f"parity: {states} states reproduced exactly" in result.stdout, result.stdout[-2000:]
    assert "# skipped 0" in result.stdout and "# fail 0" in result.stdout
    return result.stdout


@needs_node
def test_javascript_encoder_reproduces_observation_and_mask(tmp_path):
    """A few thousand states over every preset and the option variants (the full check below is slow)."""
    _run_parity(tmp_path, 3_000)


@pytest.mark.slow
@needs_node
def test_javascript_encoder_reproduces_12000_states(tmp_path):
    _run_parity(tmp_path, 12_000)


NODE_ENCODE = """
import { readFileSync } from "node:fs";
import { TrucoEncoder } from "./frontends/js/truco_encoder.mjs";
const encoder = new TrucoEncoder(JSON.parse(readFileSync("frontends/js/truco_tables.json", "utf8")));
const out = encoder.encode(JSON.parse(readFileSync(0, "utf8")));
console.log(JSON.stringify({ observation: [...out.observation], legal: out.legalActions }));
"""


@needs_node
def test_the_docs_example_view_encodes_as_python_does():
    """docs/frontends.md's seat view is the records doc's first hand seen by seat 0: the JavaScript encoder gives
    the observation and legal actions of the Python engine in that position."""
    text = (ROOT / "docs" / "frontends.md").read_text(encoding="utf-8")
    view = json.loads(re.search(r"```json\n(.*?)```", text, re.DOTALL).group(1))
    result = subprocess.run(["node", "--input-type=module", "-e", NODE_ENCODE], cwd=ROOT, input=json.dumps(view),
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)

    hand = view["hands"][0]
    state = TrucoState.new(make_config("argentine"), deal={
        "hands": [["7c", "6c", "3e"], ["2o", "1b", "4b"]], "vira": None, "dealer": hand["dealer"]})
    for seat, name in hand["actions"]:
        assert state.actor == seat
        state.apply(name)
    assert [list(a) for a in state.envido_announcements] == hand["envido_shown"]
    assert got["legal"] == state.legal_actions() == ["play:6c", "retruco", "mazo"]
    assert "`play:6c`, `retruco` and `mazo`" in text
    expected = encode_observation(state, view["seat"])
    assert np.array_equal(np.array(got["observation"], dtype=np.float64), expected.astype(np.float64))


@needs_node
def test_a_flor_refused_unsung_by_a_holder_the_viewer_never_saw_replays():
    """``flor_before_answer="refuse_unsung"`` (rules.md §8.10 row 18) in team play: seat 3 holds a flor nobody else
    knows of, seat 0's truco makes him declare, and he refuses unsung, acting where the others expected the
    responder, seat 1; the hand ends there, so no seat decides again in it. The full seat view of the next hand
    (the refused hand counts only in the match tally) encodes as Python does."""
    config = make_config("uruguayan-2v2", flor_before_answer="refuse_unsung")
    hands = [["1e", "1b", "7o"], ["4o", "5b", "6e"], ["2o", "3b", "10e"], ["7c", "6c", "3c"]]
    state = TrucoState.new(config, seed=3, deal={"hands": hands, "vira": "12e", "dealer": 3})
    state.apply("truco")
    assert state.phase == "flor_declare" and state.actor == 3 and state.legal_actions() == ["flor", "no_quiero"]
    state.apply("no_quiero")
    assert state.hand_index == 1 and state.score == (1, 0)
    seat = state.actor
    view = {**seat_view(state, seat), "rules": config.to_dict()}
    assert len(view["hands"]) == 2 and "flor_holders" not in view["hands"][0]
    result = subprocess.run(["node", "--input-type=module", "-e", NODE_ENCODE], cwd=ROOT, input=json.dumps(view),
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got["legal"] == state.legal_actions()
    expected = encode_observation(state, seat)
    assert np.array_equal(np.array(got["observation"], dtype=np.float64), expected.astype(np.float64))
