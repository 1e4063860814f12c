"""The PPO trainer (training/learn/ppo.py): it learns, it resumes exactly, its backends agree, its options are checked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from agents.network import PolicyNet, SparseRows
from training.learn import ppo
from training.learn.ppo import DealCritic, PPOArgs, train_ppo, trajectory_advantages
from training.learn.selfplay import ragged_inputs
from training.measure.statistics import wilson_interval
from training.options import build
from truco_env.encoding import OBS_OFFSETS
from truco_env.vector import VectorEnv

TINY = {"preset": "paulista", "total_decisions": 6000, "batch_decisions": 1500, "tables": 16, "hidden": [32],
        "snapshot_every": 1, "scripted": {"random": 0.3}, "eval_every": 0, "eval_matches": 10,
        "eval_opponents": ["random"], "checkpoint_every": 1}


def tiny(tmp_path, name: str, **changes) -> PPOArgs:
    return build(PPOArgs, {**TINY, "run_dir": str(tmp_path / name), **changes})


def weights(path) -> dict[str, torch.Tensor]:
    return load_file(str(path))


def test_a_short_run_learns_to_beat_random(tmp_path):
    args = build(PPOArgs, {"preset": "paulista", "run_dir": str(tmp_path / "run"), "total_decisions": 40_000,
                           "batch_decisions": 4096, "tables": 64, "hidden": [64], "learning_rate": 1e-3,
                           "snapshot_every": 2, "eval_every": 0, "eval_opponents": []})
    policy = train_ppo(args, progress_bar=False)
    from training.measure.evaluate import run_tournament

    summary, _ = run_tournament([f"ppo:{policy}", "random"], ["paulista"], 200, seed=5)
    rate = summary["pairings"][0]["win_rate_a"]
    low, _ = wilson_interval(rate * 200, 200)
    assert low > 0.5, f"after 40,000 decisions the policy wins {rate:.1%} against random"


@pytest.mark.parametrize("magnet", [{}, {"magnet_coef": 0.5, "magnet_every": 2}], ids=["plain", "magnet"])
def test_resume_after_a_crash_equals_an_uninterrupted_run(magnet, tmp_path, monkeypatch):
    whole = train_ppo(tiny(tmp_path, "whole", **magnet), progress_bar=False)
    calls = {"n": 0}
    real_run = ppo.Backend.run

    def crash_on_third_update(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # the process dies in the middle of the third update
        return real_run(self, *a, **k)

    monkeypatch.setattr(ppo.Backend, "run", crash_on_third_update)
    with pytest.raises(KeyboardInterrupt):
        train_ppo(tiny(tmp_path, "split", **magnet), progress_bar=False)
    monkeypatch.setattr(ppo.Backend, "run", real_run)
    resumed = train_ppo(tiny(tmp_path, "split", **magnet), resume=True, progress_bar=False)
    a, b = weights(whole), weights(resumed)
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    ca, cb = weights(tmp_path / "whole" / "checkpoint.safetensors"), weights(tmp_path / "split" / "checkpoint.safetensors")
    assert ca.keys() == cb.keys() and any(k.startswith("snap.") for k in ca)  # the league came back too
    assert any(k.startswith("magnet.") for k in ca) == bool(magnet)  # and the magnet
    assert all(torch.equal(ca[k], cb[k]) for k in ca)


def test_a_resumed_run_logs_each_step_once(tmp_path, monkeypatch):
    """A run stopped after a logged update its checkpoint does not hold logs that update again when resumed: the
    resumed writer purges the stopped run's later steps, so TensorBoard and the shipped curves (which also drop
    them from logs written before the purge, training.learn.ship.after_resumes) show each step once, as an
    uninterrupted run does."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from training.learn.ship import after_resumes

    def steps(name):
        logs = EventAccumulator(str(tmp_path / name / "tb"))
        logs.Reload()
        return [e.step for e in logs.Scalars("charts/SPS")]

    changes = {"checkpoint_every": 2, "total_decisions": 6000}
    train_ppo(tiny(tmp_path, "whole", **changes), progress_bar=False)
    calls = {"n": 0}
    real_run = ppo.Backend.run

    def crash_on_fourth_update(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 4:  # update 3 was logged, the checkpoint holds update 2
            raise KeyboardInterrupt
        return real_run(self, *a, **k)

    monkeypatch.setattr(ppo.Backend, "run", crash_on_fourth_update)
    with pytest.raises(KeyboardInterrupt):
        train_ppo(tiny(tmp_path, "split", **changes), progress_bar=False)
    monkeypatch.setattr(ppo.Backend, "run", real_run)

    def cpu(name):
        from safetensors import safe_open

        with safe_open(str(tmp_path / name / "checkpoint.safetensors"), "np") as f:
            return json.loads(f.metadata()["json"])["progress"]["cpu_seconds"]

    stopped_at = cpu("split")
    train_ppo(tiny(tmp_path, "split", **changes), resume=True, progress_bar=False)
    assert steps("split") == steps("whole") and len(steps("whole")) >= 4
    assert 0 < stopped_at < cpu("split")  # the CPU time goes on from the stopped part's, as the wall time does

    class Event:
        def __init__(self, step):
            self.step = step

    logged = [Event(s) for s in (1, 2, 3, 4, 3, 4, 5)]  # a resume at 3 in a log written without the purge
    assert [e.step for e in after_resumes(logged)] == [1, 2, 3, 4, 5] and after_resumes(logged)[2] is logged[4]


def test_the_magnet_holds_the_policy_near_where_it_started(tmp_path):
    """Magnetic mirror descent's KL term: two runs from the same weights, one with the term, drift apart from
    their start by different amounts, the regularised one less (KL measured on observations neither trained on)."""
    from agents.network import PolicyNet, load_policy

    changes = {"learning_rate": 1e-2, "ent_coef": 0.0, "total_decisions": 9000}
    free = train_ppo(tiny(tmp_path, "free", **changes), progress_bar=False)
    held = train_ppo(tiny(tmp_path, "held", magnet_coef=20.0, **changes), progress_bar=False)
    start = PolicyNet(hidden=(32,), features="card_strength")  # the magnet: where both runs started (no warm start)
    checkpoint = weights(tmp_path / "held" / "checkpoint.safetensors")
    start.load_state_dict({k[len("magnet."):]: v for k, v in checkpoint.items() if k.startswith("magnet.")})
    env = VectorEnv("paulista", num_envs=256, seed=77)
    obs, mask, _ = env.reset()
    rows_obs, rows_mask = [obs.copy()], [mask.copy()]
    for _ in range(8):
        obs, mask, *_ = env.step(env.random_actions())
        rows_obs.append(obs.copy())
        rows_mask.append(mask.copy())
    env.close()
    x = torch.from_numpy(np.concatenate(rows_obs))
    m = torch.from_numpy(np.concatenate(rows_mask).astype(bool))

    def drift(path) -> float:
        net, _ = load_policy(path)
        with torch.no_grad():
            return float(ppo.masked_kl(net(x, m)[0], start(x, m)[0]).mean())

    assert drift(held) < 0.25 * drift(free), (drift(held), drift(free))


def observations(preset: str, tables: int = 256, steps: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    """Observations and masks of random play, which no tiny run trained on."""
    env = VectorEnv(preset, num_envs=tables, seed=77)
    obs, mask, _ = env.reset()
    rows_obs, rows_mask = [obs.copy()], [mask.copy()]
    for _ in range(steps):
        obs, mask, *_ = env.step(env.random_actions())
        rows_obs.append(obs.copy())
        rows_mask.append(mask.copy())
    env.close()
    return torch.from_numpy(np.concatenate(rows_obs)), torch.from_numpy(np.concatenate(rows_mask).astype(bool))


def test_a_fixed_magnet_holds_the_policy_near_the_blueprint(tmp_path):
    """The KL to a blueprint magnet (cfr:paulista) after a tiny run is smaller with the term on than off, on
    observations of random play neither run trained on (recorded: 0.76 against 1.46)."""
    from agents.base import make_agent
    from agents.network import load_policy

    changes = {"learning_rate": 1e-2, "ent_coef": 0.0, "total_decisions": 9000, "minibatch_size": 256,
               "update_epochs": 4}
    free = train_ppo(tiny(tmp_path, "free", **changes), progress_bar=False)
    held = train_ppo(tiny(tmp_path, "held", magnet="cfr:paulista", magnet_coef=5.0, **changes), progress_bar=False)
    x, m = observations("paulista")
    blueprint = make_agent("cfr:paulista")
    target = np.stack([blueprint.probabilities({"observation": o, "action_mask": k})
                       for o, k in zip(x.numpy(), m.numpy())])
    with np.errstate(divide="ignore"):  # log 0 off the mask: -inf, as masked logits
        reference = torch.from_numpy(np.log(np.where(m.numpy(), 0.99 * target + 0.01 / m.sum(1, keepdims=True).numpy(),
                                                     0.0)).astype(np.float32))

    def distance(path) -> float:
        net, _ = load_policy(path)
        with torch.no_grad():
            return float(ppo.masked_kl(net(x, m)[0], reference).mean())

    assert distance(held) < 0.6 * distance(free), (distance(held), distance(free))


@pytest.mark.parametrize("changes, message", [
    ({"magnet": "cfr:paulista"}, "a fixed magnet needs magnet_coef > 0 and magnet_every = 0"),
    ({"magnet": "cfr:paulista", "magnet_coef": 0.2, "magnet_every": 5}, "magnet_every = 0"),
    ({"magnet": "heuristic", "magnet_coef": 0.2}, "gives no action probabilities"),
    ({"magnet": "cfr:argentine", "magnet_coef": 0.2}, "made for preset(s) ['argentine'], not 'paulista'"),
])
def test_a_fixed_magnet_is_checked(tmp_path, changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        tiny(tmp_path, "run", **changes)


def test_resume_refuses_other_options_and_a_fresh_run_refuses_an_old_checkpoint(tmp_path):
    train_ppo(tiny(tmp_path, "run", total_decisions=1500), progress_bar=False)
    with pytest.raises(ValueError, match="already holds a checkpoint"):
        train_ppo(tiny(tmp_path, "run", total_decisions=1500), progress_bar=False)
    with pytest.raises(ValueError, match="'learning_rate'"):
        train_ppo(tiny(tmp_path, "run", total_decisions=1500, learning_rate=1e-2), resume=True, progress_bar=False)


def rewrite_checkpoint(path: Path, change) -> None:
    """Call ``change(meta, tensors)`` on a checkpoint's metadata and tensors and write them back."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    with safe_open(str(path), "pt") as handle:
        header = handle.metadata()
        tensors = {k: handle.get_tensor(k) for k in handle.keys()}  # noqa: SIM118 (a safetensors file, not a dict)
    meta = json.loads(header["json"])
    change(meta, tensors)
    save_file(tensors, str(path), metadata={**header, "json": json.dumps(meta)})


@pytest.mark.parametrize("break_it", [
    lambda meta, t: meta.update(args=[1]),  # options of the wrong shape
    lambda meta, t: meta["league"].update(ids=["nope"]),  # a snapshot that is not there
    lambda meta, t: meta.update(rng={"state": 5}),  # an RNG state numpy refuses
    lambda meta, t: meta.pop("progress"),
    # the re-probe of issue 30: each of these trained on (silently wrong) or failed mid-run with a traceback
    lambda meta, t: meta["progress"].update(decisions=-5),  # would train past the budget
    lambda meta, t: meta["progress"].update(decisions="x"),
    lambda meta, t: meta["league"].update(next_id=0),  # new snapshots would replace the recorded ones
    lambda meta, t: meta["league"].update(scores={"self": [float("nan")]}),
    lambda meta, t: t.update({k: torch.zeros(3) for k in t if k.startswith("snap.")}),  # workers cannot load it
    lambda meta, t: t.update({k: torch.zeros(7) for k in t if k.endswith(".exp_avg")}),
    lambda meta, t: t.update({k: -torch.ones_like(v) for k, v in t.items() if k.endswith(".exp_avg_sq")}),  # NaN
    lambda meta, t: t.update(bonus=torch.zeros(2)),
], ids=["args", "league", "rng", "progress", "decisions-negative", "decisions-string", "next-id", "scores-nan",
        "snapshot-shape", "adam-shape", "adam-negative", "unknown-tensor"])
def test_resume_from_a_malformed_checkpoint_is_one_line_naming_it(tmp_path, break_it):
    """A checkpoint edited by hand or made by a stranger: one ValueError line naming the file, never a KeyError
    from deep inside, a traceback mid-run or a run on nonsense (issue 30)."""
    train_ppo(tiny(tmp_path, "run", total_decisions=1500), progress_bar=False)
    path = tmp_path / "run" / "checkpoint.safetensors"
    rewrite_checkpoint(path, break_it)
    with pytest.raises(ValueError) as err:
        train_ppo(tiny(tmp_path, "run", total_decisions=1500), resume=True, progress_bar=False)
    message = str(err.value)
    assert str(path) in message and "\n" not in message, message


def test_resume_takes_the_optimizer_settings_from_the_options_not_the_checkpoint(tmp_path):
    """A checkpoint's recorded param_groups (a learning rate of 1e9, a negative eps) are not trusted: the run's own
    settings are used."""
    args = tiny(tmp_path, "run", total_decisions=1500)
    train_ppo(args, progress_bar=False)
    path = tmp_path / "run" / "checkpoint.safetensors"
    rewrite_checkpoint(path, lambda meta, t: [g.update(lr=1e9, eps=-1.0) for g in meta["param_groups"]])
    net = PolicyNet(hidden=args.hidden, features=args.features, tally_film=args.tally_film)
    critic = DealCritic(args.hidden)
    optimizer = torch.optim.Adam(list(net.parameters()) + list(critic.parameters()), lr=args.learning_rate, eps=1e-5)
    ppo.load_checkpoint(str(path), args, net, critic, optimizer, ppo.League(), np.random.default_rng(0))
    assert [(g["lr"], g["eps"]) for g in optimizer.param_groups] == [(args.learning_rate, 1e-5)]
    assert optimizer.state  # the moments did come back


def test_a_policy_plays_greedily_and_a_checkpoint_with_a_retired_option_resumes_only_if_it_behaved_alike(tmp_path):
    """``play`` and ``anneal_lr`` are gone (a policy plays greedily unless its spec says ``,sample``; the learning
    rate always decays): a checkpoint that recorded them resumes when they held today's behaviour, and one that
    did not is refused in one line."""
    from agents.network import load_policy

    args = tiny(tmp_path, "run", total_decisions=3000)
    policy = train_ppo(args, progress_bar=False)
    assert load_policy(policy)[1]["play"] == "greedy"
    path = tmp_path / "run" / "checkpoint.safetensors"
    rewrite_checkpoint(path, lambda meta, t: meta["args"].update(anneal_lr=True, play="greedy"))
    net = PolicyNet(hidden=args.hidden, features=args.features, tally_film=args.tally_film)
    critic = DealCritic(args.hidden)
    optimizer = torch.optim.Adam(list(net.parameters()) + list(critic.parameters()), lr=args.learning_rate, eps=1e-5)
    ppo.load_checkpoint(str(path), args, net, critic, optimizer, ppo.League(), np.random.default_rng(0))
    rewrite_checkpoint(path, lambda meta, t: meta["args"].update(anneal_lr=False))
    with pytest.raises(ValueError, match="anneal_lr=False, an option this truco-rl no longer has"):
        ppo.load_checkpoint(str(path), args, net, critic, optimizer, ppo.League(), np.random.default_rng(0))


def test_the_processes_backend_trains_the_same_weights_as_local(tmp_path):
    local = train_ppo(tiny(tmp_path, "local", total_decisions=3000), progress_bar=False)
    procs = train_ppo(tiny(tmp_path, "procs", total_decisions=3000, backend="processes"), progress_bar=False)
    a, b = weights(local), weights(procs)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_ragged_inputs_give_the_dense_forward_passes():
    env = VectorEnv("paulista-2v2", num_envs=64, seed=3)
    obs, mask, _ = env.reset()
    rows = []
    for _ in range(12):
        obs, mask, _, _, _ = env.step(env.random_actions())
        rows.append((obs.copy(), mask.astype(bool), env.privileged()))
    obs, mask, hidden = (torch.from_numpy(np.concatenate(x)) for x in zip(*rows, strict=True))
    for features, film in (("card_strength", True), ("card_strength", False), ("none", True)):
        torch.manual_seed(1)
        net, critic = PolicyNet(hidden=(32,), features=features, tally_film=film), DealCritic((32,))
        if film:  # the pathway starts as the identity: give it weights so that the tally counts
            torch.nn.init.normal_(net.tally_net[2].weight, std=0.5)
        ragged_policy, ragged_critic = ragged_inputs(obs, hidden, features == "card_strength")
        x_policy, x_critic = ragged_policy.padded(), ragged_critic.padded()
        dense_logits, dense_values = net(obs, mask)
        logits, values = net.from_inputs(x_policy, mask)
        assert torch.equal(torch.isinf(logits), torch.isinf(dense_logits))
        assert torch.allclose(logits[mask], dense_logits[mask], atol=1e-5)
        assert torch.allclose(values, dense_values, atol=1e-5)
        assert torch.allclose(critic.from_inputs(x_critic), critic(obs, hidden), atol=1e-5)
        assert torch.allclose(net.from_inputs(ragged_policy, mask)[1], values)  # collection reads them ragged
        halves = SparseRows.stack([x_policy[:100], x_policy[100:]])
        assert torch.allclose(net.from_inputs(halves, mask)[1], values)
        if film:  # the pathway reads the match tally: another tally, other logits
            other = obs.clone()
            other[:, OBS_OFFSETS["match_tally"][0]:OBS_OFFSETS["match_tally"][1]] = 0.0
            assert not torch.allclose(net(other, mask)[1], dense_values, atol=1e-3)


def test_advantages_follow_each_trajectory_in_playing_order():
    traj = np.array([7, 2, 7, 2, 7])
    rewards = np.array([0, 0, 0, 1, 2], dtype=np.float32)
    values = np.zeros(5, dtype=np.float32)
    assert trajectory_advantages(traj, rewards, values, 1.0).tolist() == [2, 1, 2, 1, 2]
    values = np.array([0.5, 0, 0, 0, 0], dtype=np.float32)  # lambda 0: one-step TD errors
    assert trajectory_advantages(traj, rewards, values, 0.0).tolist() == [-0.5, 0, 0, 1, 2]


@pytest.mark.parametrize(("data", "expected"), [
    ({"learning_rate": "fast"}, "option 'learning_rate' = 'fast' is not allowed: should be a valid number"),
    ({"clip_coef": -1}, "option 'clip_coef' = -1 is not allowed: should be greater than 0"),
    ({"hidden": [0]}, "option 'hidden[0]' = 0 is not allowed: should be greater than or equal to 1"),
    ({"lerning_rate": 0.1}, "unknown option 'lerning_rate'; did you mean 'learning_rate'?"),
    ({"preset": "chess"}, "unknown preset 'chess'"),
    ({"backend": "gpu"}, "option 'backend' = 'gpu' is not allowed: should be 'local', 'processes' or 'ray'"),
    ({"scripted": {"heuristic": 0}}, "option 'scripted.heuristic' = 0 is not allowed: should be greater than 0"),
    ({"scripted": {"wizard": 1}}, "unknown agent kind 'wizard'"),
    ({"self_play": 0, "snapshots": 0}, "the learner has no opponent"),
    ({"eval_matches": 3}, "eval_matches should be even"),
    # issue 30: 0 used to divide by zero after the first update / fail inside torch.set_num_threads
    ({"checkpoint_every": 0}, "option 'checkpoint_every' = 0 is not allowed: should be greater than or equal to 1"),
    ({"torch_threads": 0}, "unknown option 'torch_threads'"),
    # issue 30 re-probe: one YAML line asked for 40 GB, or trained a policy that no loader would read
    ({"hidden": [100000, 100000]}, "option 'hidden': architecture 'hidden' must be 1 to 8 layer widths"),
    ({"hidden": [4096] * 4}, "parameters, more than the 32,000,000 allowed"),
    # issue 30 re-probe: a broken or foreign evaluation opponent ended the run at its first evaluation
    ({"eval_opponents": ["wizard"]}, "unknown agent kind 'wizard'"),
    ({"eval_opponents": ["ppo:paulista"]}, "was made for preset(s) ['paulista'], not 'argentine'"),
    ({"scripted": {"ppo:paulista": 0.3}}, "was made for preset(s) ['paulista'], not 'argentine'"),
    ({"imitation_teacher": "cfr:paulista"}, "was made for preset(s) ['paulista'], not 'argentine'"),
])
def test_every_bad_option_is_one_line_naming_it(data, expected):
    with pytest.raises(ValueError) as err:
        build(PPOArgs, data, source="configs/x.yaml")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("configs/x.yaml: ")
    assert expected in message


def test_a_finished_run_ships_unchanged_with_its_curves_and_an_unfinished_one_does_not(tmp_path):
    from agents.network import load_policy
    from training.learn.ppo import save_policy
    from training.learn.ship import ship

    policy = train_ppo(tiny(tmp_path, "run", total_decisions=3000, eval_every=1), progress_bar=False)
    target, figure = ship(str(tmp_path / "run"), policies=str(tmp_path / "pkg"), images=str(tmp_path / "img"))
    assert target.endswith("ppo_paulista.safetensors")
    assert (tmp_path / "pkg" / "ppo_paulista.safetensors").read_bytes() == Path(policy).read_bytes()
    assert Path(figure).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    net, meta = load_policy(policy)
    save_policy(net, policy, **{**{k: v for k, v in meta.items() if k not in ("format", "format_version",
                                                                              "architecture")}, "complete": False})
    with pytest.raises(ValueError, match="unfinished run"):
        ship(str(tmp_path / "run"), policies=str(tmp_path / "pkg"), images=str(tmp_path / "img"))


def test_the_model_card_says_how_the_policy_was_made_and_what_it_measured():
    from training.measure.model_cards import policy_card as model_card

    interval = {"win_rate_a": 0.61, "ci_low": 0.59, "ci_high": 0.63}
    row = {"preset": "paulista", "exploit": {"abr": {"win_rate": 0.7, "ci_low": 0.68, "ci_high": 0.72}},
           "gauntlet": {"mean": 0.64, "mean_low": 0.62, "mean_high": 0.66,
                        "worst": {"win_rate": 0.52, "ci_low": 0.47, "ci_high": 0.57, "opponent": "tight"}},
           "versus": {"heuristic": interval, "random": interval, "onnx:agents/policies/previous/ppo_paulista.onnx":
                      {"win_rate_a": 0.55, "ci_low": 0.53, "ci_high": 0.57}}}
    meta = {"config": {"hidden": [128, 128], "features": "card_strength"}, "decisions": 1_000_000, "updates": 60,
            "seconds": 3600, "play": "sample", "config_hash": "abc123", "commit": "deadbeef"}
    card = model_card(row, meta, {"finished": "2026-12-01", "decisions": 600_000})
    assert "truco train ppo --config configs/ppo/paulista.yaml" in card
    assert "abc123" in card and "deadbeef" in card and "1,000,000 learner decisions" in card
    assert "| ABR win rate (600,000 decisions; lower is better) | 70.0% [68.0, 72.0] |" in card
    assert "| vs the policy it replaced | 55.0% [53.0, 57.0] |" in card
    assert "52.0% [47.0, 57.0] vs tight" in card
    assert "one draw of the recipe" in card  # the ABR's training-seed spread is stated where the number is shown
    assert "tally_film" not in card  # a plain network says nothing of the pathway; one with it says so
    meta["config"]["tally_film"] = True
    assert "the match tally scaling and shifting its features (`tally_film`)" in model_card(row, meta, {
        "finished": "2026-12-01", "decisions": 600_000})
    assert "blueprint" not in card  # no warm start here; one from a blueprint names it and the file it needs
    meta["config"].update(imitation_decisions=100_000, imitation_teacher="cfr:paulista")
    card = model_card(row, meta, {"finished": "2026-12-01", "decisions": 600_000})
    assert "imitates 100,000 decisions of `cfr:paulista` playing itself" in card
    assert "truco train cfr --config configs/cfr_blueprint_paulista.yaml" in card
    assert "held near" not in card  # no magnet; one names the blueprint, its weight and the file it needs
    meta["config"] = {"hidden": [128, 128], "magnet": "cfr:paulista", "magnet_coef": 0.2}
    card = model_card(row, meta, {"finished": "2026-12-01", "decisions": 600_000})
    assert "held near the blueprint `cfr:paulista` throughout: the loss adds 0.2 times the KL" in card
    assert "Its magnet reads the shipped self-play blueprint `cfr:paulista`" in card


@pytest.mark.parametrize("preset", ["argentine", "argentine-2v2", "paulista", "paulista-2v2"])
def test_each_main_preset_has_a_short_config_that_loads(preset):
    from training.options import load

    path = Path(__file__).resolve().parent.parent / "configs" / "ppo" / f"{preset}.yaml"
    args = load(PPOArgs, str(path))
    assert args.preset == preset and args.run_dir == f"runs/ppo/{preset}"
    options = [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert len(options) <= 10  # a handful of lines over PPOArgs' defaults
    assert "%" not in path.read_text()  # results live in docs/strength.md, not in config comments


def test_the_warm_start_copies_a_teacher_it_is_shown():
    """Imitation fits the network to the teacher's choices on legal actions; here the teacher always takes the
    highest legal action, a rule a network learns exactly, so a weak fit (too few steps, a wrong mask) fails."""
    env = VectorEnv("argentine", num_envs=64, seed=5)
    obs, mask, _ = env.reset()
    rows = []
    for _ in range(48):
        rows.append((obs.copy(), mask.astype(bool)))
        obs, mask, _, _, _ = env.step(env.random_actions())
    obs, mask = (torch.from_numpy(np.concatenate(x)) for x in zip(*rows, strict=True))
    highest = mask.shape[1] - 1 - mask.flip(1).int().argmax(1)
    train_rows, held = slice(0, 2048), slice(2048, None)
    data = {"obs": obs[train_rows], "masks": mask[train_rows], "actions": highest[train_rows]}
    torch.manual_seed(0)
    net = PolicyNet(hidden=(64,), features="card_strength")
    assert ppo.imitate(net, data, seed=1) > 0.95
    with torch.no_grad():
        logits, _ = net(obs[held], mask[held])
    assert float((logits.argmax(1) == highest[held]).float().mean()) > 0.9


def test_the_warm_start_records_the_teacher_it_is_given():
    """The imitation data are the named teacher's own choices: a blueprint (deterministic here) replayed on the
    recorded observations takes every recorded action, and the heuristic's data on the same seed differ."""
    from agents.base import make_agent

    args = PPOArgs(preset="paulista", tables=8, imitation_decisions=400, imitation_teacher="cfr:paulista,greedy=1")
    data = ppo.imitation_data(args)
    assert len(data["actions"]) == 400
    teacher = make_agent("cfr:paulista,greedy=1")
    replayed = [teacher.act({"observation": o.numpy(), "action_mask": m.numpy()})
                for o, m in zip(data["obs"], data["masks"], strict=True)]
    assert replayed == data["actions"].tolist()
    heuristic = ppo.imitation_data(args.model_copy(update={"imitation_teacher": "heuristic"}))
    assert not torch.equal(heuristic["actions"], data["actions"])


def test_ctrl_c_during_the_warm_start_is_a_clean_exit(tmp_path, monkeypatch, capsys):
    from training.cli import main

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(ppo, "imitation_data", interrupted)
    code = main(["train", "ppo", "--run-dir", str(tmp_path / "run"), "--quiet", "--set", "imitation_decisions=100"])
    err = capsys.readouterr().err
    assert code == 130
    assert "Traceback" not in err and "interrupted before the run's first checkpoint: nothing to resume" in err
    assert not (tmp_path / "run" / "checkpoint.safetensors").exists()


@pytest.mark.parametrize("failure", ["safetensors", "oserror"])
def test_a_full_disk_is_one_line_not_a_traceback(failure, tmp_path, monkeypatch, capsys):
    """Writing a checkpoint on a full disk fails in safetensors (or in an ordinary write): one line, exit 2."""
    import errno

    import safetensors.torch
    from safetensors import SafetensorError

    from training.atomic import atomic_save_tensors
    from training.cli import main

    def full_disk_save(*args, **kwargs):
        raise SafetensorError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: '
                              '"No space left on device" })')

    def full(args):
        if failure == "safetensors":  # what safetensors raises, through the writer every checkpoint goes through
            monkeypatch.setattr(safetensors.torch, "save_file", full_disk_save)
            atomic_save_tensors({"x": torch.zeros(1)}, {}, str(tmp_path / "run" / "checkpoint.safetensors"))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ppo, "imitation_data", full)
    code = main(["train", "ppo", "--run-dir", str(tmp_path / "run"), "--quiet", "--set", "imitation_decisions=100"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "Traceback" not in err and "\n" not in err, err
    assert err.startswith("truco train ppo: error: could not write in the run dir") and "No space left" in err


def test_an_opponent_gated_policy_file_is_refused_naming_its_onnx_copy(tmp_path):
    """The gated policies shipped before the PPO rebuild are no longer read (their ONNX copies still play)."""
    import torch

    from agents.network import FORMAT, PolicyFileError, load_policy
    from training.atomic import atomic_save_tensors
    from truco_env.encoding import OBSERVATION_SIZE, OBSERVATION_VERSION

    path = str(tmp_path / "gated.safetensors")
    arch = {"kind": "gated", "obs_size": OBSERVATION_SIZE, "num_actions": 98, "opponents": ["random", "heuristic"]}
    atomic_save_tensors({"gate.0.weight": torch.zeros(2, 2)},
                        {"format": FORMAT, "observation_version": OBSERVATION_VERSION, "architecture": arch}, path)
    with pytest.raises(PolicyFileError, match="opponent-gated policy .* onnx:FILE"):
        load_policy(path)


@pytest.mark.parametrize("preset", ["argentine", "argentine-2v2", "paulista", "paulista-2v2"])
def test_every_shipped_policy_was_made_by_its_config(preset):
    """A model card says `truco train ppo --config configs/ppo/<preset>.yaml` made the shipped policy. Its config
    hash cannot check that once options are added or retired, so compare the options it recorded, read by today's
    trainer (retired options only where they held today's behaviour, added ones at their defaults, as a resumed
    checkpoint is read), with the config's: where they differ, the card is false or the config moved on."""
    from agents.base import make_agent
    from training.learn.ppo import PPOArgs, retired_options_dropped
    from training.options import load

    recorded = PPOArgs(**retired_options_dropped(make_agent(f"ppo:{preset}").metadata["config"]))
    config = load(PPOArgs, str(Path(__file__).resolve().parent.parent / "configs" / "ppo" / f"{preset}.yaml"))
    where = {"run_dir", "backend"}  # where its files went and how it collected: not what it learnt
    assert recorded.model_dump(exclude=where) == config.model_dump(exclude=where)


# ------------------------------------------------------------------------------------------------ the device option


def test_the_device_option_names_what_is_allowed_and_refuses_a_gpu_torch_does_not_see(tmp_path):
    from training.learn.ppo import torch_device

    for bad in ("tpu", "cuda:", "cuda:x", "CPU"):
        with pytest.raises(ValueError, match="not one of auto, cpu, cuda, cuda:N"):
            tiny(tmp_path, "run", device=bad)
    assert torch_device("cpu") == torch.device("cpu")
    assert torch_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="torch sees .* GPU"):
        torch_device("cuda:99")
    with pytest.raises(ValueError, match="cuda:99"):
        train_ppo(tiny(tmp_path, "gpu", device="cuda:99"), progress_bar=False)


def test_the_device_is_no_part_of_the_recipe_and_a_run_resumes_on_another(tmp_path, monkeypatch):
    """Where the update ran is not what was trained: the policy's config hash and a best response's cache key
    leave it out, and a checkpoint resumes under another device value (here both on the CPU: the suite has no
    GPU; the cross-device resume itself is the next test, where torch sees one)."""
    from training.learn.best_response import BRArgs
    from training.learn.ppo import config_hash
    from training.measure.exploit import recipe_key

    assert config_hash(tiny(tmp_path, "a", device="cpu")) == config_hash(tiny(tmp_path, "a", device="auto"))
    assert recipe_key(BRArgs(preset="paulista", target="random", device="cpu")) == \
        recipe_key(BRArgs(preset="paulista", target="random"))
    whole = train_ppo(tiny(tmp_path, "whole", total_decisions=3000), progress_bar=False)
    real_run = ppo.Backend.run
    calls = {"n": 0}

    def crash_on_second_update(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real_run(self, *a, **k)

    monkeypatch.setattr(ppo.Backend, "run", crash_on_second_update)
    with pytest.raises(KeyboardInterrupt):
        train_ppo(tiny(tmp_path, "split", total_decisions=3000, device="auto"), progress_bar=False)
    monkeypatch.setattr(ppo.Backend, "run", real_run)
    split = train_ppo(tiny(tmp_path, "split", total_decisions=3000, device="cpu"), resume=True, progress_bar=False)
    a, b = weights(whole), weights(split)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no GPU here (the suite is CPU-only)")
def test_a_checkpoint_made_on_the_gpu_resumes_on_the_cpu_and_back(tmp_path):
    half, rest = 1500, 3000
    train_ppo(tiny(tmp_path, "gpu", total_decisions=half, device="cuda"), progress_bar=False)
    on_cpu = train_ppo(tiny(tmp_path, "gpu", total_decisions=rest, device="cpu"), resume=True, progress_bar=False)
    train_ppo(tiny(tmp_path, "cpu", total_decisions=half, device="cpu"), progress_bar=False)
    on_gpu = train_ppo(tiny(tmp_path, "cpu", total_decisions=rest, device="cuda"), resume=True, progress_bar=False)
    for path in (on_cpu, on_gpu):  # both finished, with every tensor on the CPU in the file
        assert all(t.device.type == "cpu" and torch.isfinite(t).all() for t in weights(path).values())


def test_a_collector_lost_on_ray_is_one_line_naming_the_resume(tmp_path, monkeypatch, capsys):
    """PPO's Ray collectors are actors without restarts (docs/scaling.md): one lost with its node ends the run
    with one line saying how to go on from the last checkpoint, not Ray's traceback. (Ray stands in here: the
    first update's collection is lost.)"""
    exceptions = pytest.importorskip("ray").exceptions
    from training import workers
    from training.cli import main

    class LostActors:
        exceptions = None

        def remote(self, **options):
            return lambda cls: type("Actor", (), {"remote": staticmethod(lambda: type("A", (), {
                "run": type("M", (), {"remote": staticmethod(lambda *a: None)})})())})

        def put(self, value):
            return value

        def get(self, refs):
            raise exceptions.RayActorError()

        def kill(self, actor):
            pass

    LostActors.exceptions = exceptions
    monkeypatch.setattr(workers, "start_ray", lambda n: LostActors())
    assert main(["train", "ppo", "--set", "preset=paulista", "--set", "total_decisions=1500", "--set", "tables=16",
                 "--set", "batch_decisions=1500", "--set", "hidden=[32]", "--set", "eval_every=0",
                 "--backend", "ray", "--run-dir", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("truco train ppo: error: a collection actor was lost on the Ray cluster (RayActorError)")
    assert "--resume" in err[-1] and "Traceback" not in "\n".join(err)
