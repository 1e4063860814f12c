"""Opponent-gated policies: the mixture, its file and ONNX export, the gate's fit and its errors."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from agents.base import make_agent
from training.ppo_legacy.gate import GateArgs, gate_accuracy, train_gate
from training.ppo_legacy.model import GatedPolicy, PolicyNet, load_policy, save_policy
from truco_env.encoding import OBS_OFFSETS, encode_action_mask, encode_observation


def _experts(seed=0):
    torch.manual_seed(seed)
    experts = {"random": PolicyNet(hidden=(32,)), "heuristic": PolicyNet(hidden=(32,), features="card_strength")}
    for net in experts.values():  # larger weights than the init: the experts disagree clearly
        for param in net.parameters():
            param.data.mul_(4)
    return experts


def _positions(preset="argentine-2v2", count=300, seed=4):
    from training.export import random_positions

    positions = random_positions(preset, count, seed=seed)
    obs = torch.as_tensor(np.stack([encode_observation(state, seat) for state, seat in positions]))
    masks = torch.as_tensor(np.stack([encode_action_mask(state) for state, _ in positions])).bool()
    return obs, masks


def test_the_mixture_weighs_each_experts_probabilities_by_the_gate():
    experts = _experts()
    net = GatedPolicy(experts, hidden=8)
    obs, masks = _positions()
    with torch.no_grad():
        weights = torch.softmax(net.gate_logits(obs), -1)
        expected = sum(weights[:, k:k + 1] * e.probabilities(obs, masks) for k, e in enumerate(experts.values()))
        probs = net.probabilities(obs, masks)
        assert torch.allclose(probs, expected, atol=1e-6)
        assert torch.all(probs[~masks] == 0) and torch.allclose(probs.sum(-1), torch.ones(len(obs)))
        # a gate sure of the opponent plays that opponent's expert exactly
        net.gate[-1].weight.zero_()
        net.gate[-1].bias.copy_(torch.tensor([0.0, 50.0]))
        assert torch.allclose(net.probabilities(obs, masks), experts["heuristic"].probabilities(obs, masks), atol=1e-6)
        # the gate reads the match tally and nothing else
        other = obs.clone()
        start = OBS_OFFSETS["match_tally"][0]
        other[:, :start] = torch.rand(len(obs), start)
        assert torch.equal(net.gate_logits(other), net.gate_logits(obs))


def test_a_gated_policy_file_loads_plays_and_exports_to_onnx(tmp_path):
    pytest.importorskip("onnxruntime")
    from agents.onnx import OnnxAgent
    from training.export import export_onnx, torch_probabilities

    net = GatedPolicy(_experts(1), hidden=8)
    for param in net.gate.parameters():
        param.data.normal_(0, 2)
    path = str(tmp_path / "policy.safetensors")
    save_policy(net, path, presets=["argentine-2v2"])
    loaded, meta = load_policy(path)
    assert isinstance(loaded, GatedPolicy) and meta["architecture"]["kind"] == "gated"
    assert loaded.opponents == ("random", "heuristic")
    obs, masks = _positions()
    with torch.no_grad():
        assert torch.equal(loaded.probabilities(obs, masks), net.probabilities(obs, masks))
    model, _ = export_onnx(path, str(tmp_path / "policy.onnx"))
    ours = OnnxAgent(model).probabilities(obs.numpy(), masks.numpy().astype(np.int8))
    reference = torch_probabilities(net, obs.numpy(), masks.numpy().astype(np.int8))
    assert np.abs(ours - reference).max() <= 1e-5 and (ours[~masks.numpy()] == 0).all()
    agent = make_agent(f"ppo:{path},greedy")
    assert isinstance(agent.net, GatedPolicy)


def test_gate_learns_to_tell_random_from_the_heuristic_and_leaves_the_experts_alone(tmp_path):
    experts = _experts(2)
    files = {}
    for name, net in experts.items():
        files[name] = str(tmp_path / f"{name}.safetensors")
        save_policy(net, files[name], presets=["argentine"], training={"seed": 7})
    args = GateArgs(preset="argentine", run_dir=str(tmp_path / "gated"), experts=files, decisions=3000,
                    num_tables=16, epochs=30, minibatch=256)
    path = train_gate(args, progress=False)
    net, meta = load_policy(path)
    for name, expert in experts.items():  # the experts' weights are copied, not trained
        mine = net.experts[net.opponents.index(name)].state_dict()
        assert all(torch.equal(mine[k], v) for k, v in expert.state_dict().items())
    accuracy = meta["gate_accuracy"]
    # random's mazos and refusals show in the tally as the match goes on, and cannot before the opponents play
    assert accuracy["all"] > 0.65 and accuracy["25-49"] > accuracy["0-2"] + 0.15
    assert meta["training"]["experts"] == files and meta["experts"]["random"]["training"] == {"seed": 7}


def test_gate_accuracy_counts_by_the_opponents_decisions_so_far():
    net = GatedPolicy(_experts(), hidden=4)
    with torch.no_grad():
        net.gate[-1].weight.zero_()
        net.gate[-1].bias.copy_(torch.tensor([1.0, 0.0]))  # always guesses "random"
    obs, _ = _positions(count=200)
    labels = np.zeros(len(obs), dtype=np.int64)
    labels[::4] = 1
    report = gate_accuracy(net, obs.numpy(), labels)
    assert report["all"] == pytest.approx(0.75, abs=0.01)


@pytest.mark.parametrize("change, message", [
    ({"experts": {"random": "a.safetensors"}}, "at least two"),
    ({"experts": {"self": "a", "random": "b"}}, "not 'self'"),
    ({"prior": {"heuristic": 0.0}}, "positive weights"),
    ({"prior": {"cfr": 1.0}}, "positive weights"),
    ({"preset": "argentine-9v9"}, "is not a preset"),
    ({"holdout": 1.0}, "strictly between 0 and 1"),
    ({"decisions": 0}, "'decisions' must be a positive integer"),
])
def test_bad_gate_options_name_the_problem(change, message):
    data = {"preset": "argentine", "experts": {"random": "a.safetensors", "heuristic": "b.safetensors"}, **change}
    with pytest.raises(ValueError, match=message):
        GateArgs.from_dict(data).validate()
    with pytest.raises(ValueError, match="unknown gate option"):
        GateArgs.from_dict({"expert": {}})


def test_gate_refuses_a_missing_file_a_gated_expert_and_another_presets_policy(tmp_path):
    gated = str(tmp_path / "gated.safetensors")
    save_policy(GatedPolicy(_experts(), hidden=4), gated, presets=["argentine"])
    plain = str(tmp_path / "plain.safetensors")
    save_policy(PolicyNet(hidden=(8,)), plain, presets=["paulista"])
    for experts, message in [({"random": str(tmp_path / "none.safetensors"), "heuristic": gated}, "no such"),
                             ({"random": gated, "heuristic": gated}, "itself a gated policy"),
                             ({"random": plain, "heuristic": plain}, "not on 'argentine'")]:
        with pytest.raises(ValueError, match=message):
            train_gate(GateArgs(preset="argentine", run_dir=str(tmp_path / "out"), experts=experts), progress=False)
    experts = f"experts={{random: {gated}, heuristic: {gated}}}"
    cli = subprocess.run([sys.executable, "-m", "training.cli", "train", "gate", "--set", experts],
                         check=False, capture_output=True, text=True)
    assert cli.returncode == 2 and "truco train gate: error:" in cli.stderr and "itself a gated" in cli.stderr
    assert "Traceback" not in cli.stderr
