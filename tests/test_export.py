"""ONNX export: parity with torch on 10,000 observations per preset, a tournament without torch, and the Node.js
example reproducing the test vectors."""

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("onnxruntime")

from agents.network import PolicyNet
from agents.onnx import OnnxAgent
from training.learn.ppo import save_policy
from training.people.export import (
    export_onnx,
    random_positions,
    torch_probabilities,
    write_test_vectors,
)
from truco_env import PRESETS
from truco_env.encoding import encode_action_mask, encode_observation, observation_size

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A small untrained policy (random weights give varied probabilities), exported with its test vectors."""
    folder = tmp_path_factory.mktemp("export")
    torch.manual_seed(3)
    net = PolicyNet(hidden=(128, 64))
    for param in net.parameters():  # larger weights than the init, so probabilities are far from uniform
        param.data.mul_(4)
    policy = folder / "policy.safetensors"
    save_policy(net, str(policy), presets=["argentine", "paulista-2v2"], training={"note": "test"})
    model, meta = export_onnx(str(policy), str(folder / "policy.onnx"))
    vectors = write_test_vectors(model, str(folder / "policy.test_vectors.json"), ["argentine", "paulista-2v2"], 8)
    return net, model, meta, vectors


@pytest.mark.parametrize("preset", sorted(p for p in PRESETS if not PRESETS[p].senas))  # a 1,086-input policy
def test_onnx_matches_torch_on_10000_observations(exported, preset):
    net, model, _, _ = exported
    positions = random_positions(preset, 10_000, seed=7)
    obs = np.stack([encode_observation(state, seat) for state, seat in positions])
    masks = np.stack([encode_action_mask(state) for state, _ in positions])
    ours = OnnxAgent(model).probabilities(obs, masks)
    reference = torch_probabilities(net, obs, masks)
    assert np.abs(ours - reference).max() <= 1e-5
    assert (ours.argmax(1) == reference.argmax(1)).all()
    assert (ours[masks == 0] == 0).all()


def test_metadata_and_vectors_describe_the_contract(exported):
    _, _, meta_path, vectors_path = exported
    meta = json.loads(Path(meta_path).read_text())
    assert meta["inputs"]["observation"]["shape"] == ["batch", 1086]
    assert meta["observation"]["fields"][0]["name"] == "hand" and meta["actions"]["argentine"][0] == "play:1e"
    assert meta["presets"] == ["argentine", "paulista-2v2"] and meta["training"] == {"note": "test"}
    assert meta["play"]["mode"] == "sample"  # the policy records no mode: sample, as the agent does
    vectors = json.loads(Path(vectors_path).read_text())["vectors"]
    from truco_env.records import replay_record

    for vector in vectors:  # each recorded state rebuilds the recorded observation
        state = replay_record(vector["record"])
        assert state.actor == vector["seat"]
        assert encode_observation(state, vector["seat"]).tolist() == vector["observation"]
        assert sorted(state.legal_actions()) == sorted(vector["legal"])


@pytest.mark.parametrize("film,preset", [(False, "paulista"), (True, "paulista"), (True, "uruguayan-2v2")])
def test_card_strength_network_exports_with_its_feature_layer(tmp_path, film, preset):
    """A Uruguayan network (1,136 inputs, piezas among its 19 card strengths) exports like the others."""
    torch.manual_seed(4)
    net = PolicyNet(obs_size=observation_size(PRESETS[preset]), hidden=(64,), features="card_strength",
                    tally_film=film)
    if film:  # the tally's pathway starts as the identity: give it weights so that the export must carry it
        torch.nn.init.normal_(net.tally_net[2].weight, std=0.5)
    for param in net.parameters():
        param.data.mul_(4)
    save_policy(net, str(tmp_path / "policy.safetensors"), presets=[preset])
    model, meta = export_onnx(str(tmp_path / "policy.safetensors"), str(tmp_path / "policy.onnx"))
    assert json.loads(Path(meta).read_text())["inputs"]["observation"]["shape"] == ["batch", net.obs_size]
    positions = random_positions(preset, 2_000, seed=2)
    obs = np.stack([encode_observation(state, seat) for state, seat in positions])
    masks = np.stack([encode_action_mask(state) for state, _ in positions])
    assert np.abs(OnnxAgent(model).probabilities(obs, masks) - torch_probabilities(net, obs, masks)).max() <= 1e-5
    if net.obs_size > 1086:  # a model of its own kind of game, fed another game's observation: one line
        with pytest.raises(ValueError, match=f"the model reads {net.obs_size} observation values, this game gives 1086"):
            OnnxAgent(model).probabilities(obs[:, :1086], masks)


def test_a_version_1_policy_exports_and_an_old_1068_input_model_still_plays(tmp_path):
    """Layouts only append fields: a version-1 policy exports to a graph over today's observation, and a model
    exported before layout 2 (1,068 inputs) is fed the prefix it knows."""
    from training.people import export

    torch.manual_seed(5)
    net = PolicyNet(obs_size=1068, hidden=(32,), features="none")  # an old file's network
    for param in net.parameters():
        param.data.mul_(4)
    save_policy(net, str(tmp_path / "v1.safetensors"), presets=["argentine"], observation_version=1)
    model, _ = export_onnx(str(tmp_path / "v1.safetensors"), str(tmp_path / "v1.onnx"))
    old_model = str(tmp_path / "old.onnx")
    torch.onnx.export(export._ExportedPolicy(net).eval(), (torch.zeros(2, 1068), torch.ones(2, 98, dtype=torch.int8)),
                      old_model, input_names=list(export.ONNX_INPUTS), output_names=list(export.ONNX_OUTPUTS),
                      dynamic_axes={"observation": {0: "batch"}, "action_mask": {0: "batch"}},
                      opset_version=export.OPSET, dynamo=False)
    positions = random_positions("argentine", 300, seed=4)
    obs = np.stack([encode_observation(state, seat) for state, seat in positions])
    masks = np.stack([encode_action_mask(state) for state, _ in positions])
    assert obs.shape[1] == 1086
    expected = torch_probabilities(net, obs[:, :1068], masks)
    for path in (model, old_model):
        assert np.abs(OnnxAgent(path).probabilities(obs, masks) - expected).max() <= 1e-5


def test_onnx_spec_follows_the_recorded_play_mode(exported, tmp_path):
    from agents.base import make_agent

    _, model, meta_path, _ = exported
    assert not make_agent(f"onnx:{model}").greedy and make_agent(f"onnx:{model},greedy").greedy
    copy = tmp_path / "greedy.onnx"
    copy.write_bytes(Path(model).read_bytes())
    meta = json.loads(Path(meta_path).read_text())
    meta["play"]["mode"] = "greedy"
    (tmp_path / "greedy.json").write_text(json.dumps(meta))
    assert make_agent(f"onnx:{copy}").greedy and not make_agent(f"onnx:{copy},sample").greedy
    with pytest.raises(ValueError, match="'greedy' or 'sample'"):
        make_agent(f"onnx:{copy},fast")


NO_TORCH_TOURNAMENT = r"""
import sys
class BlockTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this test")
sys.meta_path.insert(0, BlockTorch())
try:
    import torch  # noqa: F401
    raise SystemExit("torch imported")
except ImportError:
    pass
from training.measure.evaluate import run_tournament
summary, meta = run_tournament(["onnx:" + sys.argv[1], "random"], ["argentine"], 10, seed=1, workers=1)
assert "torch" not in sys.modules
row = summary["pairings"][0]
print("tournament done", row["matches"], row["wins_a"], row["wins_b"])
"""


def test_tournament_with_onnx_agent_runs_without_torch(exported):
    _, model, _, _ = exported
    result = subprocess.run([sys.executable, "-c", NO_TORCH_TOURNAMENT, model], capture_output=True, text=True,
                            timeout=300, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr
    assert "tournament done" in result.stdout


def _node_example_install(example: Path) -> Path:
    """Folder whose node_modules holds onnxruntime-node, installed outside the working tree.

    The install lives in the user's cache, keyed by the lock file, so it is made once and never lands in the
    repository; without a reachable registry the test is skipped within seconds instead of waiting on npm.
    """
    lock = (example / "package-lock.json").read_bytes()
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "truco-rl"
    folder = cache / f"node-example-{hashlib.sha256(lock).hexdigest()[:12]}"
    if (folder / "node_modules" / "onnxruntime-node").exists():
        return folder
    try:
        socket.create_connection(("registry.npmjs.org", 443), timeout=3).close()
    except OSError as error:
        pytest.skip(f"npm registry unreachable ({error}); the Node example needs onnxruntime-node")
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(example / name, folder / name)
    install = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--fetch-retries=0", "--fetch-timeout=20000"],
                             cwd=folder, env={**os.environ, "ONNXRUNTIME_NODE_INSTALL": "skip"}, capture_output=True,
                             text=True, timeout=600, check=False)
    if install.returncode != 0:
        shutil.rmtree(folder / "node_modules", ignore_errors=True)
        pytest.skip(f"npm could not install onnxruntime-node: {install.stderr[-300:]}")
    return folder


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="node/npm not installed")
def test_node_example_reproduces_the_vectors(exported):
    _, model, _, vectors = exported
    example = ROOT / "examples" / "node"
    modules = _node_example_install(example) / "node_modules"
    result = subprocess.run(["node", str(example / "check_vectors.js"), model, vectors], cwd=example,
                            env={**os.environ, "NODE_PATH": str(modules)}, capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert "vectors reproduced" in result.stdout


def test_export_cli_takes_a_shipped_policy_by_name(tmp_path, capsys):
    """`truco export ppo ppo:NAME` exports the shipped policy; an unknown name is an error listing the shipped."""
    from training.cli import main

    out = tmp_path / "paulista.onnx"
    assert main(["export", "ppo", "ppo:paulista", "--out", str(out)]) == 0
    assert out.exists() and (tmp_path / "paulista.json").exists()
    assert main(["export", "ppo", "ppo:nope", "--out", str(out)]) == 2
    assert "no shipped policy 'nope'; shipped: ['argentine'" in capsys.readouterr().err


def test_export_cli_takes_best_preset_when_it_is_a_network(tmp_path, capsys, monkeypatch):
    """`truco export ppo best:<preset>` exports the report's choice; a choice that is no network is one line."""
    import agents.best
    from training.cli import main

    monkeypatch.setattr(agents.best, "choices", lambda path=None: {"argentine-2v2": "ppo:argentine-2v2",
                                                                  "argentine": "cfr:argentine"})
    out = tmp_path / "best.onnx"
    assert main(["export", "ppo", "best:argentine-2v2", "--out", str(out), "--vectors-per-preset", "0"]) == 0
    assert json.loads((tmp_path / "best.json").read_text())["presets"] == ["argentine-2v2"]
    capsys.readouterr()
    assert main(["export", "ppo", "best:argentine", "--out", str(tmp_path / "x.onnx")]) == 2
    err = capsys.readouterr().err.strip()
    assert "best:argentine is cfr:argentine, not a PPO policy" in err and "\n" not in err


def test_a_plain_export_prints_no_warnings(tmp_path):
    """`truco export ppo ppo:NAME` is quiet: no tracer or exporter warnings for a user to puzzle over."""
    result = subprocess.run([sys.executable, "-W", "always", "-m", "training.cli", "export", "ppo", "ppo:argentine",
                             "--out", str(tmp_path / "a.onnx")], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert "warn" not in result.stderr.lower(), result.stderr


@pytest.mark.parametrize("name", ["uruguayan", "uruguayan-2v2"])
def test_the_shipped_uruguayan_networks_export_and_match_torch(tmp_path, name):
    """The Uruguayan networks read 1,136 values (the piezas block): their ONNX graphs take that input, say so in the
    metadata, give torch's probabilities on 2,000 positions of their preset, and read no wider layout's prefix."""
    from agents.network import load_policy
    from agents.ppo import policy_path

    model, meta_path = export_onnx(policy_path(name), str(tmp_path / f"{name}.onnx"))
    meta = json.loads(Path(meta_path).read_text())
    assert meta["presets"] == [name] and meta["observation"]["size"] == observation_size(PRESETS[name]) == 1136
    net, _ = load_policy(policy_path(name))
    positions = random_positions(name, 2_000, seed=11)
    obs = np.stack([encode_observation(state, seat) for state, seat in positions])
    masks = np.stack([encode_action_mask(state) for state, _ in positions])
    ours = OnnxAgent(model).probabilities(obs, masks)
    assert np.abs(ours - torch_probabilities(net, obs, masks)).max() <= 1e-5
    # a señas game's 1,141 values hold its señas block where the piezas were: not a prefix this graph reads
    with pytest.raises(ValueError, match="plays only its own kind of game"):
        OnnxAgent(model).probabilities(np.zeros((1, 1141), np.float32), np.ones((1, 106), np.int8))
