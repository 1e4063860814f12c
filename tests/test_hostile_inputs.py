"""Hostile files for every loader and every command that takes one (issue 30, items 3, 4, 5 and 8).

1. Loaders: policy safetensors, ONNX models and their metadata, CFR checkpoints (.npz), CFR strategy exports,
   YAML options and match records. Each small generated file is refused with one line that names the file and
   the problem; no message echoes a long user-supplied string whole.
2. Bombs: a checkpoint that declares gigabytes, a policy that declares a 20,000-wide network and a YAML alias
   bomb are refused quickly and without allocating what they declare (a slow test measures the memory of a
   fresh process).
3. The CFR agent only ever picks a legal action, also when a table row gives every legal action probability 0.
4. Commands (`truco eval`, `export`, `replay`, `train ppo/cfr --config`, `play`), in-process: exit 2 (replay: 1
   for a readable record that fails its checks, its documented failure code) and one stderr line naming the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from agents.base import make_agent
from agents.cfr import CFRAgent
from agents.cfr.table import Checkpoint, CheckpointError, load_checkpoint
from agents.network import FORMAT, PolicyFileError, PolicyNet, load_policy
from training.cli import main
from training.learn.cfr.checkpoint import save_checkpoint
from training.learn.cfr.policy import load_json
from training.options import read_yaml
from truco_env import PRESETS
from truco_env.encoding import OBSERVATION_SIZE, OBSERVATION_VERSION
from truco_env.limits import MAX_DEPTH, MAX_ECHO
from truco_env.records import ReplayError, load_record, replay_record

LONG = "x" * 5_000_000  # a 5 MB "name"
DEEP_JSON = "[" * 100_000 + "]" * 100_000
BOMB_YAML = ("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
             + "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi")))


def one_line(message: str, path: Path | str) -> str:
    """The failure contract of a message: one line, naming the file, no long echo."""
    assert "\n" not in message.strip(), message[:2000]
    assert str(path) in message, message[:2000]
    assert len(message) < 1000, f"{len(message)} characters: {message[:300]}..."
    return message


# ---------------------------------------------------------------------------------------------------- policies

def policy_meta(**changes) -> dict:
    net = PolicyNet(hidden=(8,))
    meta = {"format": FORMAT, "format_version": 1, "architecture": net.architecture(),
            "observation_version": OBSERVATION_VERSION, "presets": ["argentine"], "play": "sample"}
    meta.update(changes)
    return meta


def write_policy(path: Path, meta: dict | str | None = None, tensors: dict | None = None,
                 scale: float | None = None) -> Path:
    """A small policy file (one hidden layer of 8): ``meta`` replaces the metadata (a str is written as it is),
    ``tensors`` replaces or adds tensors, ``scale`` fills the first layer's weight with that value."""
    torch.manual_seed(0)
    weights = {k: v.clone() for k, v in PolicyNet(hidden=(8,)).state_dict().items()}
    if scale is not None:
        weights["trunk.0.weight"].fill_(scale)
    weights.update(tensors or {})
    text = meta if isinstance(meta, str) else json.dumps(policy_meta() if meta is None else meta)
    save_file(weights, str(path), metadata={"json": text})
    return path


def wide(arch_changes: dict) -> dict:
    arch = PolicyNet(hidden=(8,)).architecture()
    arch.update(arch_changes)
    return policy_meta(architecture=arch)


POLICY_CASES = {
    "garbage": (lambda p: p.write_bytes(b"not a policy at all" * 10), "not a truco-rl safetensors file"),
    "pickle": (lambda p: p.write_bytes(b"\x80\x04\x95" + b"\0" * 40), "never unpickled"),
    "metadata-list": (lambda p: write_policy(p, [1]), "metadata must be a JSON object"),
    "metadata-deep": (lambda p: write_policy(p, DEEP_JSON), "nested too deeply"),
    "metadata-not-json": (lambda p: write_policy(p, "{'format': 1"), "not valid JSON"),
    "architecture-5": (lambda p: write_policy(p, policy_meta(architecture=5)), "'architecture' must be"),
    "hidden-bomb": (lambda p: write_policy(p, wide({"hidden": [20000, 20000]})), "'hidden' must be"),
    "hidden-strings": (lambda p: write_policy(p, wide({"hidden": ["8"]})), "'hidden' must be"),
    "hidden-empty": (lambda p: write_policy(p, wide({"hidden": []})), "'hidden' must be"),
    "hidden-too-many": (lambda p: write_policy(p, wide({"hidden": [8] * 50})), "'hidden' must be"),
    "parameters-over-limit": (lambda p: write_policy(p, wide({"hidden": [4096] * 8})), "parameters"),
    "num-actions-5": (lambda p: write_policy(p, wide({"num_actions": 5})), "'num_actions' must be 98"),
    "features-unknown": (lambda p: write_policy(p, wide({"features": "magic"})), "features"),
    "tally-film-string": (lambda p: write_policy(p, wide({"tally_film": "yes"})), "'tally_film' must be true or false"),
    "tally-film-without-tally": (lambda p: write_policy(p, {**wide({"tally_film": True, "obs_size": 1068}),
                                                            "observation_version": 1}),
                                 "'tally_film' must be true or false"),
    "obs-size-float": (lambda p: write_policy(p, wide({"obs_size": float(OBSERVATION_SIZE)})), "layout"),
    "version-list": (lambda p: write_policy(p, policy_meta(observation_version=[2])), "observation layout"),
    "presets-5": (lambda p: write_policy(p, policy_meta(presets=5)), "'presets' must be"),
    "play-fast": (lambda p: write_policy(p, policy_meta(play="fast")), "'play' must be"),
    "long-format": (lambda p: write_policy(p, policy_meta(format=LONG)), "…"),
    "wrong-shape": (lambda p: write_policy(p, tensors={"policy.bias": torch.zeros(7)}), "do not match"),
    "extra-tensor": (lambda p: write_policy(p, tensors={"bonus": torch.zeros(3)}), "do not match"),
    "nan-weight": (lambda p: write_policy(p, scale=float("nan")), "NaN or infinite"),
    "inf-weight": (lambda p: write_policy(p, scale=float("inf")), "NaN or infinite"),
    "overflowing-weights": (lambda p: write_policy(p, scale=3e38), "not finite"),
    "int-tensor": (lambda p: write_policy(p, tensors={"policy.bias": torch.zeros(98, dtype=torch.int8)}),
                   "dtype"),
}


@pytest.mark.parametrize("case", sorted(POLICY_CASES))
def test_a_hostile_policy_is_refused_in_one_line(case, tmp_path):
    path = tmp_path / f"{case}.safetensors"
    make, words = POLICY_CASES[case]
    make(path)
    with pytest.raises(PolicyFileError) as info:
        load_policy(str(path))
    assert words in one_line(str(info.value), path)
    with pytest.raises(ValueError) as info:  # the ppo: agent says the same, naming the file
        make_agent(f"ppo:{path}")
    one_line(str(info.value), path)


def test_a_sound_small_policy_loads_and_the_shipped_ones_still_do(tmp_path):
    net, meta = load_policy(str(write_policy(tmp_path / "ok.safetensors")))
    assert net.hidden == (8,) and meta["presets"] == ["argentine"]
    for name in ("argentine", "paulista-2v2"):
        make_agent(f"ppo:{name}")


def test_the_hidden_size_bomb_is_refused_before_the_network_is_built(tmp_path):
    """20,000 x 20,000 would be 1.6 GB of weights built and initialised (seconds) before the shapes disagree."""
    path = write_policy(tmp_path / "bomb.safetensors", wide({"hidden": [20000, 20000]}))
    start = time.perf_counter()
    with pytest.raises(PolicyFileError, match="'hidden' must be"):
        load_policy(str(path))
    assert time.perf_counter() - start < 1.0


# ---------------------------------------------------------------------------------------------------- ONNX

try:
    import onnx
    import onnxruntime  # noqa: F401
except ImportError:  # the export extra: only the ONNX cases need it
    onnx = None
needs_onnx = pytest.mark.skipif(onnx is None, reason="needs onnx and onnxruntime (pip install 'truco-rl[export]')")


def write_onnx(path: Path, width: int = 98, obs: int = OBSERVATION_SIZE, weight: float = 0.0,
               hidden_width: bool = False) -> Path:
    """A tiny model with the export's inputs and outputs: softmax(observation @ W) of ``width`` entries (W filled
    with ``weight``; 0 gives uniform probabilities). ``hidden_width``: the width is sliced out of 98 by an end
    computed from the mask's values, so no static shape says it (only running the model shows it)."""
    from onnx import TensorProto, helper, numpy_helper

    def const(name, value, dtype=np.int64):
        return numpy_helper.from_array(np.asarray(value, dtype), name)

    inits = [const("W", np.full((obs, 98 if hidden_width else width), weight), np.float32), const("axes", [1]),
             const("zero", [0]), const("width", [width])]
    nodes = [helper.make_node("MatMul", ["observation", "W"], ["logits"]),
             helper.make_node("ReduceSum", ["observation", "axes"], ["value"], keepdims=0)]
    if hidden_width:  # end = max(mask) * width: data-dependent
        nodes += [helper.make_node("Cast", ["action_mask"], ["mask64"], to=TensorProto.INT64),
                  helper.make_node("ReduceMax", ["mask64"], ["top"], keepdims=1, axes=[0, 1]),
                  helper.make_node("Reshape", ["top", "axes"], ["top1"]),
                  helper.make_node("Mul", ["top1", "width"], ["end"]),
                  helper.make_node("Slice", ["logits", "zero", "end", "axes"], ["cut"]),
                  helper.make_node("Softmax", ["cut"], ["probabilities"], axis=-1)]
    else:
        nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], axis=-1))
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", obs]),
         helper.make_tensor_value_info("action_mask", TensorProto.INT8, ["batch", 98])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", "n" if hidden_width else width]),
         helper.make_tensor_value_info("value", TensorProto.FLOAT, ["batch"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


ONNX_CASES = {
    "garbage": (lambda p: p.write_bytes(b"\0garbage" * 100), "not a loadable ONNX model"),
    "output-width-5": (lambda p: write_onnx(p, width=5), "probabilities has shape"),
    "hidden-width-5": (lambda p: write_onnx(p, width=5, hidden_width=True), "(1, 98)"),
    "observation-width-100": (lambda p: write_onnx(p, obs=100), "observation has shape"),
    "nan-weights": (lambda p: write_onnx(p, weight=float("nan")), "not finite"),
}


@needs_onnx
@pytest.mark.parametrize("case", sorted(ONNX_CASES))
def test_a_hostile_onnx_model_is_refused_in_one_line(case, tmp_path):
    path = tmp_path / f"{case}.onnx"
    make, words = ONNX_CASES[case]
    make(path)
    with pytest.raises(ValueError) as info:
        make_agent(f"onnx:{path}")
    assert words in one_line(str(info.value), path)


@pytest.mark.parametrize("text, words", [(DEEP_JSON, "nested too deeply"), ("[1]", "must be a JSON object"),
                                         ('{"presets": 5}', "'presets' must be"), ('{"play": "x"}', "'play'"),
                                         ("{", "not valid JSON")],
                         ids=["deep", "list", "presets-5", "play-string", "truncated"])
@needs_onnx
def test_hostile_onnx_metadata_is_refused_in_one_line(text, words, tmp_path):
    model = write_onnx(tmp_path / "m.onnx")
    make_agent(f"onnx:{model}")  # without metadata: plays, sampling
    (tmp_path / "m.json").write_text(text)
    with pytest.raises(ValueError) as info:
        make_agent(f"onnx:{model}")
    assert words in one_line(str(info.value), tmp_path / "m.json")


@needs_onnx
def test_loading_a_model_prints_no_onnxruntime_warnings(tmp_path, capfd):
    """onnxruntime printed two coloured warning lines per session (here: initializers no node uses) before the
    one line that refuses a model, and on every load of one it accepts."""
    make_agent(f"onnx:{write_onnx(tmp_path / 'ok.onnx')}")
    with pytest.raises(ValueError):
        make_agent(f"onnx:{write_onnx(tmp_path / 'narrow.onnx', width=5)}")
    assert capfd.readouterr().err == ""


# ---------------------------------------------------------------------------------------------------- CFR

def small_checkpoint(**meta_changes) -> Checkpoint:
    """Two information sets of argentine-mini: "A" (actions 0 and 1, all weight on 0) and "B"."""
    meta = {"kind": "exact", "preset": "argentine-mini", "rules": PRESETS["argentine-mini"].to_dict(),
            "iteration": 1}
    meta.update(meta_changes)
    return Checkpoint(meta=meta, keys=["A", "B"], slot_start=np.asarray([0, 2, 4]),
                      slot_action=np.asarray([0, 1, 0, 2]), regrets=np.zeros(4),
                      cumulative=np.asarray([5.0, 0.0, 1.0, 1.0]))


def good_arrays(ckpt: Checkpoint | None = None) -> dict[str, np.ndarray]:
    ckpt = ckpt or small_checkpoint()
    meta = dict(ckpt.meta, format="truco-cfr-checkpoint", version=1)
    return {"meta": np.frombuffer(json.dumps(meta).encode(), np.uint8),
            "keys": np.frombuffer("\n".join(ckpt.keys).encode(), np.uint8),
            "slot_start": ckpt.slot_start.astype(np.int64), "slot_action": ckpt.slot_action.astype(np.int16),
            "regrets": ckpt.regrets.astype(np.float64), "cumulative": ckpt.cumulative.astype(np.float64)}


def npy_header(shape: tuple[int, ...], dtype: str = "<f8") -> bytes:
    """The .npy header of an array of ``shape`` (what np.load allocates for before it reads any data)."""
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def write_npz(path: Path, arrays: dict[str, np.ndarray], raw: dict[str, bytes] | None = None) -> Path:
    """An .npz of ``arrays`` plus members given as raw bytes (``raw``: name -> content)."""
    np.savez_compressed(path, **arrays)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive:
        for name, content in (raw or {}).items():
            archive.writestr(name, content)
    return path


def declared_bomb(shape=(300_000_000,)) -> bytes:
    """A member that declares ``shape`` float64 (2.4 GB for the default) and holds a little of it."""
    return npy_header(shape) + bytes(1 << 16)


def with_meta(text: str) -> dict[str, np.ndarray]:
    arrays = good_arrays()
    arrays["meta"] = np.frombuffer(text.encode(), np.uint8)
    return arrays


CFR_CASES = {
    "extra-member-bomb": (lambda p: write_npz(p, good_arrays(), {"zeros.npy": declared_bomb()}),
                          "unexpected member 'zeros.npy'"),
    "known-member-bomb": (lambda p: write_npz(p, {k: v for k, v in good_arrays().items() if k != "regrets"},
                                              {"regrets.npy": declared_bomb()}), "declare more than"),
    "allowed-extra-bomb": (lambda p: write_npz(p, good_arrays(), {"extra_rng_state.npy": declared_bomb()}),
                           "declare more than"),
    "not-npy-member": (lambda p: write_npz(p, good_arrays(), {"notes.txt": b"hello"}), "unexpected member"),
    "two-d-regrets": (lambda p: write_npz(p, {**good_arrays(), "regrets": np.zeros((2, 2))}), "must be 1-D"),
    "regrets-per-slot": (lambda p: write_npz(p, {**good_arrays(), "regrets": np.zeros(3)}), "one value per slot"),
    "meta-deep": (lambda p: write_npz(p, with_meta(DEEP_JSON)), "nested too deeply"),
    "meta-list": (lambda p: write_npz(p, with_meta("[1]")), "not a truco CFR checkpoint"),
    "meta-long-format": (lambda p: write_npz(p, with_meta(json.dumps({"format": LONG}))), "…"),
    "meta-long-kind": (lambda p: write_npz(p, with_meta(json.dumps({"format": "truco-cfr-checkpoint",
                                                                      "version": 1, "kind": LONG}))), "…"),
    "nan-regrets": (lambda p: write_npz(p, {**good_arrays(), "regrets": np.full(4, np.nan)}), "not finite"),
    "folder": (lambda p: p.mkdir(), "is a folder"),
    "bad-header": (lambda p: write_npz(p, {k: v for k, v in good_arrays().items() if k != "keys"},
                                       {"keys.npy": b"\x93NUMPY\x09\x00garbage"}), "no readable header"),
}


@pytest.mark.parametrize("case", sorted(CFR_CASES))
def test_a_hostile_cfr_checkpoint_is_refused_in_one_line(case, tmp_path):
    path = tmp_path / f"{case}.npz"
    make, words = CFR_CASES[case]
    make(path)
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(path)
    assert words in one_line(str(info.value), path)


def test_a_checkpoint_with_bad_rules_names_its_file(tmp_path):
    path = tmp_path / "rules.npz"
    save_checkpoint(path, small_checkpoint(rules={"family": LONG}))
    with pytest.raises(ValueError) as info:
        make_agent(f"cfr:{path}")
    assert "rules" in one_line(str(info.value), path)


@pytest.mark.parametrize("case", ["extra-member-bomb", "meta-deep", "other-preset"])
def test_a_hostile_checkpoint_to_resume_is_refused_before_the_game_tree_is_built(case, tmp_path, monkeypatch):
    """`truco train cfr` resuming from a broken or foreign checkpoint used to build the game tree first (20 s for
    argentine-mini) and only then read the file."""
    from training.learn.cfr import train as cfr_train
    from training.learn.cfr.runconfig import RunConfig

    path = tmp_path / "ck.npz"
    if case == "other-preset":
        save_checkpoint(path, small_checkpoint(preset="paulista-mini", rules=PRESETS["paulista-mini"].to_dict()))
    else:
        CFR_CASES[case][0](path)
    monkeypatch.setattr(cfr_train, "tree_for", lambda rules: pytest.fail("the tree was built"))
    cfg = RunConfig(trainer="exact", preset="argentine-mini", checkpoint=str(path), logdir=None, progress=False)
    with pytest.raises(CheckpointError) as info:
        cfr_train.train_cfr(cfg)
    one_line(str(info.value), path)


def test_the_npz_zero_bomb_is_refused_with_little_memory(tmp_path):
    """np.load allocates what a member's header declares before reading its data: 2.4 GB here."""
    path = write_npz(tmp_path / "bomb.npz", {k: v for k, v in good_arrays().items() if k != "regrets"},
                     {"regrets.npy": declared_bomb()})
    assert path.stat().st_size < 100_000
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(CheckpointError, match="declare more than"):
            load_checkpoint(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20 and time.perf_counter() - start < 1.0


def test_a_written_checkpoint_still_loads_and_unknown_extras_are_not_written(tmp_path):
    save_checkpoint(tmp_path / "ok.npz", small_checkpoint())
    assert load_checkpoint(tmp_path / "ok.npz").keys == ["A", "B"]
    bad = small_checkpoint()
    bad.extra = {"payload": np.zeros(3)}
    with pytest.raises(ValueError, match="not one of"):
        save_checkpoint(tmp_path / "bad.npz", bad)


@pytest.mark.parametrize("greedy", [True, False], ids=["greedy", "sample"])
def test_the_cfr_agent_picks_a_legal_action_when_every_legal_entry_has_probability_0(greedy, tmp_path):
    """Row "A" puts all its weight on action 0; with only action 1 legal the argmax used to land on 0."""
    path = tmp_path / "ck.npz"
    save_checkpoint(path, small_checkpoint())
    agent = CFRAgent(str(path), seed=0, greedy=greedy)
    mask = np.zeros(98, np.int8)
    mask[1] = 1
    for _ in range(20):
        assert agent.act({"action_mask": mask, "info_state_string": "A"}) == 1
    mask[[1, 5]] = 1  # 5 is legal but not in the row: still one of the row's legal entries
    assert {agent.act({"action_mask": mask, "info_state_string": "A"}) for _ in range(20)} == {1}
    if greedy:  # the weighted action legal again: the argmax is it
        mask[0] = 1
        assert agent.act({"action_mask": mask, "info_state_string": "A"}) == 0


@pytest.mark.parametrize("text, words", [(DEEP_JSON, "nested too deeply"), ("[1]", "not a truco CFR strategy"),
                                         ('{"format": "truco-cfr-strategy", "version": 1, "strategy": 5}',
                                          "'strategy' must be"), (b"\xff\xfe", "not UTF-8")],
                         ids=["deep", "list", "strategy-5", "not-utf8"])
def test_a_hostile_strategy_export_is_refused_in_one_line(text, words, tmp_path):
    path = tmp_path / "s.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError) as info:
        load_json(path)
    assert words in one_line(str(info.value), path)


# ---------------------------------------------------------------------------------------------------- YAML

YAML_CASES = {
    "alias-bomb": (BOMB_YAML, "aliases"),
    "deep": ("a: " + "[" * 10_000 + "]" * 10_000, f"more than {MAX_DEPTH} levels"),
    "list": ("- 1\n- 2\n", "expected a mapping"),
    "python-tag": ("a: !!python/object/apply:os.system [echo pwned]\n", "not valid YAML"),
    "huge-integer": ("a: " + "9" * 5000 + "\n", "not usable YAML"),
    "too-large": ("# " + "x" * (1 << 20) + "\n", "larger than the"),
    "not-utf8": (b"a: \xff\xfe\n", "not valid YAML"),
    # PyYAML keeps the last of two equal keys: the first preset of a run was dropped without a word
    "duplicate-key": ("preset: uruguayan\nrun_dir: /x\npreset: paulista\n", "key 'preset' is given twice at line 3"),
    "duplicate-nested-key": ("scripted: {random: 0.1, random: 0.2}\n", "key 'random' is given twice"),
    # an empty file ran every default (a PPO run into runs/ppo) as if it were a config
    "empty": ("", "holds no options"),
    "comments-only": ("# preset: uruguayan\n", "holds no options"),
}


@pytest.mark.parametrize("case", sorted(YAML_CASES))
def test_a_hostile_yaml_file_is_refused_in_one_line(case, tmp_path):
    path = tmp_path / f"{case}.yaml"
    text, words = YAML_CASES[case]
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError) as info:
        read_yaml(str(path))
    assert words in one_line(str(info.value), path)


def test_the_yaml_alias_bomb_is_refused_at_once(tmp_path):
    """9**9 copies of 'lol' (387 million) from a file of 495 bytes: it took 131 s and 1 GB before."""
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB_YAML)
    assert path.stat().st_size < 600
    start = time.perf_counter()
    with pytest.raises(ValueError, match="aliases"):
        read_yaml(str(path))
    assert time.perf_counter() - start < 0.2


def test_a_long_option_name_or_value_is_echoed_cut(tmp_path):
    from training.learn.cfr.runconfig import load_config
    from training.measure.evaluate import TournamentOptions
    from training.options import load

    name = "y" * 1000  # a YAML key has at most 1024 characters
    for text in (f"{name}: 1\n", f"trainer: {name * 500}\n"):
        (tmp_path / "c.yaml").write_text(text)
        with pytest.raises(ValueError) as info:
            load_config(tmp_path / "c.yaml")
        assert "…" in one_line(str(info.value), tmp_path / "c.yaml")
    with pytest.raises(ValueError) as info:
        load(TournamentOptions, None, ["agents=[random, heuristic]", f"matches={name * 500}"])
    assert "…" in info.value.args[0] and len(info.value.args[0]) < 400


# ---------------------------------------------------------------------------------------------------- records

def a_record() -> dict:
    from truco_env import TrucoState, make_config

    state = TrucoState.new(make_config("argentine"), seed=0)
    state.apply(state.legal_actions()[0])
    return state.match_record()


@pytest.mark.parametrize("where", ["card", "vira", "action", "legal-name", "rules-key"])
def test_a_5mb_name_in_a_record_is_echoed_cut(where, tmp_path):
    record = a_record()
    hand = record["hands"][0]
    if where == "card":
        hand["deal"]["hands"][0][0] = LONG
    elif where == "vira":
        hand["deal"]["vira"] = LONG
    elif where == "action":
        hand["actions"][0][1] = LONG
    elif where == "legal-name":
        hand["actions"][0].append([LONG])
    else:
        record["rules"][LONG] = 1
    with pytest.raises(ReplayError) as info:
        replay_record(record)
    message = str(info.value)
    assert len(message) < 6 * MAX_ECHO + 200 and "…" in message, message[:300]


@pytest.mark.parametrize("text, words", [(DEEP_JSON, "nested too deeply"), ("", "not valid JSON"),
                                         (" " * (16 * 2**20 + 1), "larger than")],
                         ids=["deep", "empty", "too-large"])
def test_a_hostile_record_file_is_refused_in_one_line(text, words, tmp_path):
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(ReplayError) as info:
        load_record(str(path))
    assert words in one_line(str(info.value), path)


# ---------------------------------------------------------------------------------------------------- commands

def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-2000:]
    return code, lines[0]


@pytest.fixture
def hostile(tmp_path) -> dict[str, Path]:
    """One hostile file of each kind."""
    files = {
        "policy": write_policy(tmp_path / "wide.safetensors", wide({"hidden": [20000, 20000]})),
        "nan-policy": write_policy(tmp_path / "nan.safetensors", scale=float("nan")),
        "checkpoint": write_npz(tmp_path / "bomb.npz", good_arrays(), {"zeros.npy": declared_bomb()}),
        "onnx": write_onnx(tmp_path / "narrow.onnx", width=5) if onnx is not None else None,
        "yaml": tmp_path / "bomb.yaml",
        "record": tmp_path / "record.json",
    }
    files["yaml"].write_text(BOMB_YAML)
    record = a_record()
    record["hands"][0]["deal"]["hands"][0][0] = LONG
    files["record"].write_text(json.dumps(record))
    files["truncated-record"] = tmp_path / "truncated.json"
    files["truncated-record"].write_text(json.dumps(record)[:200])
    return files


@pytest.mark.parametrize("kind, argv", [
    ("policy", ["eval", "--agents", "ppo:{}", "heuristic", "--matches", "2"]),
    ("nan-policy", ["eval", "--agents", "ppo:{}", "heuristic", "--matches", "2"]),
    ("checkpoint", ["eval", "--agents", "cfr:{}", "heuristic", "--matches", "2"]),
    ("onnx", ["eval", "--agents", "onnx:{}", "heuristic", "--matches", "2"]),
    ("yaml", ["eval", "--config", "{}"]),
    ("nan-policy", ["export", "ppo", "{}", "--out", "OUT/m.onnx"]),
    ("policy", ["export", "ppo", "{}", "--out", "OUT/m.onnx"]),
    ("checkpoint", ["export", "cfr", "{}", "--out", "OUT/s.json"]),
    ("yaml", ["train", "ppo", "--config", "{}", "--run-dir", "OUT/run"]),
    ("yaml", ["train", "cfr", "--config", "{}"]),
    ("policy", ["play", "--opponent", "ppo:{}", "--seed", "1"]),
    ("record", ["replay", "{}"]),
    ("truncated-record", ["replay", "{}"]),
], ids=lambda v: v if isinstance(v, str) else " ".join(v[:2]))
def test_a_command_given_a_hostile_file_fails_in_one_line(kind, argv, hostile, tmp_path, capsys):
    path = hostile[kind]
    if path is None or (argv[:2] == ["export", "ppo"] and onnx is None):
        pytest.skip("needs onnx and onnxruntime")
    out = tmp_path / "out"
    argv = [a.replace("{}", str(path)).replace("OUT", str(out)) for a in argv]
    code, line = run_cli(argv, capsys)
    # replay: 1 for a record that is read but fails its checks, 2 for a file that is no record (docs/records.md)
    assert code == (1 if kind == "record" else 2), line
    assert str(path) in line and len(line) < 1000, line[:300]
    assert not out.exists() or not any(out.rglob("*.onnx")) and not any(out.rglob("*.json"))


# ---------------------------------------------------------------------------------------------------- memory

MEASURE = r"""
import resource, sys
from agents.cfr.table import load_checkpoint
from agents.network import load_policy
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for load, path in ((load_policy, sys.argv[1]), (load_checkpoint, sys.argv[2])):
    try:
        load(path)
    except ValueError as err:
        print(type(err).__name__, str(err)[:80])
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


def write_real_zero_bomb(path: Path, gigabytes: float = 2.4) -> Path:
    """A valid .npz (sizes and CRCs right) of a good checkpoint's arrays plus a member of ``gigabytes`` of float64
    zeros, about 2.4 MB in all: deflate blocks of zeros repeat, so one 16 MiB block is compressed once and its
    output repeated. The zip is written by hand (each member deflated, then the central directory)."""
    import io
    import struct
    import zlib

    def deflated(parts) -> tuple[bytes, int, int]:
        compressor, out, crc, size = zlib.compressobj(9, zlib.DEFLATED, -15), [], 0, 0
        for part in parts:
            out.append(compressor.compress(part))
            crc, size = zlib.crc32(part, crc), size + len(part)
        out.append(compressor.flush())
        return b"".join(out), crc, size

    members = {}
    for name, array in good_arrays().items():
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, array)
        members[name + ".npy"] = deflated([buffer.getvalue()])
    block = bytes(16 << 20)
    count = int(gigabytes * 1e9) // len(block)
    header = npy_header((count * len(block) // 8,))
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = compressor.compress(header) + compressor.flush(zlib.Z_FULL_FLUSH)
    unit = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH) == unit  # the repeating unit
    crc = zlib.crc32(header)
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    members["zeros.npy"] = (head + unit * count + compressor.flush(), crc, len(header) + count * len(block))
    with open(path, "wb") as out:
        central = []
        for name, (data, crc, size) in members.items():
            fields = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0x21, crc, len(data), size)  # deflate, 1980-01-01
            central.append(b"PK\x01\x02" + struct.pack("<H", 20) + fields
                           + struct.pack("<HHHHHII", len(name), 0, 0, 0, 0, 0, out.tell()) + name.encode())
            out.write(b"PK\x03\x04" + fields + struct.pack("<HH", len(name), 0) + name.encode() + data)
        start = out.tell()
        out.write(b"".join(central))
        out.write(b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, len(central), len(central), out.tell() - start,
                                                start, 0))
    return path


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="resource.getrusage is Unix-only")
def test_the_bombs_cost_a_fresh_process_little_memory(tmp_path):
    """A fresh process loads the hidden-size bomb and a real 2.4 GB zero bomb (a ~2 MB file): its peak memory
    grows by well under 200 MB."""
    policy = write_policy(tmp_path / "wide.safetensors", wide({"hidden": [20000, 20000]}))
    bomb = write_real_zero_bomb(tmp_path / "bomb.npz")
    assert bomb.stat().st_size < 5_000_000
    with zipfile.ZipFile(bomb) as archive:
        assert archive.getinfo("zeros.npy").file_size > 2_000_000_000
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(policy), str(bomb)], check=False, capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[1],
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("PolicyFileError") and lines[1].startswith("CheckpointError"), proc.stdout
    assert int(lines[-1]) < 200 * 2**20, proc.stdout


@pytest.mark.parametrize("output", ["illegal-only", "nan"])
def test_the_onnx_agent_plays_a_legal_action_whatever_the_model_outputs(output):
    """A model that passes the load check may still, on some input, put no weight on any legal action (or give
    NaN): the agent then plays uniformly over the legal actions instead of an illegal one or a division by 0."""
    from agents.onnx import OnnxAgent

    agent = OnnxAgent.__new__(OnnxAgent)  # the model's forward pass is replaced below
    mask = np.zeros(98, dtype=np.int8)
    mask[[3, 7]] = 1
    row = np.full(98, np.nan) if output == "nan" else np.eye(98)[0]
    agent.probabilities = lambda obs, masks: np.repeat(row[None], len(masks), axis=0)
    for greedy in (True, False):
        agent.greedy = greedy
        agent.seed(0)
        picks = {agent.act({"observation": np.zeros(8), "action_mask": mask}) for _ in range(40)}
        picks |= set(agent.act_batch(np.zeros((40, 8)), np.repeat(mask[None], 40, axis=0)).tolist())
        assert picks <= {3, 7} and (greedy or picks == {3, 7}), picks


@pytest.mark.parametrize("kind, action", [("mccfr", 83), ("exact", 200)])
def test_export_of_a_table_whose_actions_its_kind_lacks_is_one_line(kind, action, tmp_path, capsys):
    """A checkpoint whose metadata claims a kind its action codes do not fit: one line, exit 2, nothing written."""
    ckpt = small_checkpoint(kind=kind)
    ckpt.slot_action = np.asarray([0, action, 0, 2])
    ckpt.cumulative = np.ones(4)  # the action has weight: the export must name it
    save_checkpoint(tmp_path / "ck.npz", ckpt)
    assert main(["export", "cfr", str(tmp_path / "ck.npz"), "--out", str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("truco export cfr: error: ") and "\n" not in err, err
    assert str(action) in err or "action ids outside 0..97" in err, err  # the loader refuses an exact table's
    assert not (tmp_path / "s.json").exists()
