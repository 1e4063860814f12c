"""PPO: masking, a short run that learns, exact resume, and checkpoints that are never unpickled."""

import dataclasses
import glob
import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from agents.base import RandomAgent, make_agent, observation_for
from agents.ppo import PPOAgent
from training.ppo_legacy.model import PolicyFileError, PolicyNet, load_policy, masked_entropy
from training.ppo_legacy.selfplay import League, Trajectory, collect_partition
from training.ppo_legacy.train import PPOArgs, train
from truco_env import TrucoState, make_config
from truco_env import actions as A

TINY = {"total_updates": 4, "num_tables": 8, "batch_steps": 512, "minibatch_size": 256, "eval_every": 0,
        "eval_opponents": ("random",), "checkpoint_every": 1, "snapshot_window": 5,
        "league": {"self": 0.5, "snapshot": 0.3, "random": 0.2}}


def test_illegal_actions_have_probability_zero_and_are_never_sampled():
    torch.manual_seed(0)
    net = PolicyNet(hidden=(64,))
    obs = torch.rand(512, net.obs_size)
    mask = torch.rand(512, net.num_actions) < 0.1
    mask[:, 0] = True
    probs = net.probabilities(obs, mask)
    assert torch.all(probs[~mask] == 0.0)
    assert torch.allclose(probs.sum(-1), torch.ones(512))
    logits, _ = net(obs, mask)
    assert torch.isfinite(masked_entropy(logits)).all()
    samples = torch.multinomial(probs, 50, replacement=True)
    assert torch.gather(mask, 1, samples).all()
    # the same holds for every decision a collector records in real self-play
    league = League({"self": 0.5, "snapshot": 0.3, "random": 0.2})
    league.add_snapshot(net)
    for preset in (None, "argentine-2v2"):  # the engine collector and the vector-env collector
        task = league.task(make_config("argentine-2v2"), 8, 500, 0, 0.5, preset=preset)
        trajectories, results = collect_partition(task, net, league.snapshots)
        assert sum(len(t.actions) for t in trajectories) >= 500 and results
        for traj in trajectories:
            assert traj.masks[np.arange(len(traj.actions)), traj.actions].all()
            assert traj.rewards[-1] != 0  # the match result reaches the last decision


def test_advantages_can_be_normalised_per_opponent():
    """advantage_norm: opponent -- each trajectory knows its opponent, in both collectors, and each opponent's
    decisions are scaled on their own, so small-stakes hands (random under an edge) are not drowned out."""
    from training.ppo_legacy.train import normalise_by_opponent

    net = PolicyNet(hidden=(16,))
    league = League({"self": 0.4, "snapshot": 0.3, "random": 0.3})
    league.add_snapshot(net)
    for preset in (None, "argentine"):  # the engine collector and the vector-env collector
        task = league.task(make_config("argentine"), 6, 300, 1, 0.5, preset=preset)
        trajectories, results = collect_partition(task, net, league.snapshots)
        faced = {opponent[0] if opponent[0] != "agent" else opponent[1] for opponent, _ in results}
        assert {t.opponent for t in trajectories} - {"self"} == faced
    short = [Trajectory(*[np.zeros(n)] * 7, opponent=who) for n, who in ((3, "random"), (2, "heuristic"))]
    adv = torch.tensor([1.0, 2.0, 3.0, 10.0, 30.0])
    out = normalise_by_opponent(adv, short)
    assert torch.allclose(out, torch.tensor([-1.0, 0.0, 1.0, -0.70710677, 0.70710677]), atol=1e-6)
    with pytest.raises(ValueError, match=r"'advantage_norm' = 'batch'; choose 'minibatch' or 'opponent'"):
        PPOArgs(advantage_norm="batch").validate()


def win_rate_vs_random(net: PolicyNet, preset: str, matches: int = 200) -> float:
    config = make_config(preset)
    agent, rival = PPOAgent(net), RandomAgent()
    wins = 0
    for match in range(matches):
        seat = match % 2  # each deal stream twice, seats swapped
        state = TrucoState.new(config, seed=match // 2)
        agent.seed(match)
        rival.seed(match)
        while not state.is_over:
            player = agent if state.actor % 2 == seat else rival
            state.apply(A.action_name(player.act(observation_for(player, state, state.actor)), config.family))
        wins += state.winner == seat
    return wins / matches


def test_short_run_learns_to_beat_random(tmp_path):
    torch.manual_seed(1)
    before = win_rate_vs_random(PolicyNet(), "argentine")
    # 24 updates: at 16 the result sat on the 65% line (it passed before, then gave 64% on a new machine with a
    # fresh install, deterministically); at 24 it is about 83% there
    args = PPOArgs(preset="argentine", run_dir=str(tmp_path), total_updates=24, num_tables=32, batch_steps=2048,
                   minibatch_size=512, learning_rate=1e-3, eval_every=0, eval_opponents=("random",),
                   checkpoint_every=100, league={"self": 0.5, "random": 0.5})
    net, meta = load_policy(train(args, progress=False))
    after = win_rate_vs_random(net, "argentine")
    assert after >= 0.65 and after >= before + 0.1, (before, after)
    assert meta["presets"] == ["argentine"] and meta["training"]["total_updates"] == 24
    assert os.listdir(tmp_path / "tb"), "no TensorBoard log written"


def test_each_evaluation_keeps_its_policy_with_the_results(tmp_path):
    """Evaluations during training keep the policy they judged, so a run can ship its best update."""
    args = PPOArgs(preset="paulista", run_dir=str(tmp_path), **{**TINY, "total_updates": 2, "eval_every": 1,
                                                                  "eval_matches": 6})
    train(args, progress=False)
    kept = sorted(os.listdir(tmp_path / "evaluated"))
    assert kept == ["policy_00001.safetensors", "policy_00002.safetensors"]
    _, meta = load_policy(str(tmp_path / "evaluated" / kept[1]))
    rate = meta["evaluation"]["eval/win_rate_vs_random"]
    assert meta["updates"] == 2 and 0.0 <= rate <= 1.0 and rate * 6 == round(rate * 6)  # 6 matches: k/6
    assert same_parameters(str(tmp_path / "evaluated" / kept[1]), str(tmp_path / "policy.safetensors"))


def same_parameters(a: str, b: str) -> bool:
    net_a, _ = load_policy(a)
    net_b, _ = load_policy(b)
    return all(torch.equal(net_a.state_dict()[k], net_b.state_dict()[k]) for k in net_a.state_dict())


def test_resume_after_a_stop_equals_an_uninterrupted_run(tmp_path, monkeypatch):
    import training.ppo_legacy.train as trainer

    whole = train(PPOArgs(preset="paulista", run_dir=str(tmp_path / "whole"), **TINY), progress=False)
    class StopAfterTwo:
        def __init__(self):
            self.calls = 0

        @property
        def requested(self):
            return self.calls >= 2

        def restore(self):
            pass

    stopper = StopAfterTwo()
    monkeypatch.setattr(trainer, "_CtrlC", lambda: stopper)
    original = trainer.save_checkpoint

    def counting_save(*args, **kwargs):
        original(*args, **kwargs)
        stopper.calls += 1

    monkeypatch.setattr(trainer, "save_checkpoint", counting_save)
    stopped = train(PPOArgs(preset="paulista", run_dir=str(tmp_path / "split"), **TINY), progress=False)
    assert stopper.calls == 2  # stopped after the second update, as Ctrl-C would
    assert load_policy(stopped)[1]["updates"] == 2  # the policy says how far it got, not the planned 4
    monkeypatch.undo()
    planned = train(PPOArgs(preset="paulista", run_dir=str(tmp_path / "planned"), stop_after=2, **TINY),
                    progress=False)
    assert load_policy(planned)[1]["updates"] == 2 and same_parameters(stopped, planned)
    with pytest.raises(ValueError, match="'stop_after' must be an integer >= 0"):
        PPOArgs(stop_after=-1).validate()
    resumed = train(PPOArgs(preset="paulista", run_dir=str(tmp_path / "split"), **TINY), resume=True,
                    progress=False)
    assert same_parameters(whole, resumed)


@pytest.mark.parametrize("vector", [True, False])
def test_collectors_record_the_hidden_cards_for_a_privileged_critic(vector):
    """Both collectors: at each learner decision the other seats' unplayed cards, never the learner's own."""
    from truco_env.encoding import OBS_OFFSETS, PRIVILEGED_SIZE

    league = League({"self": 0.5, "random": 0.5})
    preset = "paulista-2v2" if vector else None
    task = league.task(make_config("paulista-2v2"), 4, 64, 0, 0.5, preset, "match_equity", privileged=True)
    trajectories, _ = collect_partition(task, PolicyNet(), [])
    assert trajectories
    for traj in trajectories:
        assert traj.privileged.shape == (len(traj.actions), PRIVILEGED_SIZE)
        hidden = traj.privileged.reshape(len(traj.actions), 5, 40)
        assert not hidden[:, 3:].any()  # four seats: three others
        assert hidden.sum(1).max() <= 1 and hidden.sum(2).max() <= 3 and hidden[0].sum() > 0
        assert not (hidden.sum(1) * traj.obs[:, slice(*OBS_OFFSETS["hand"])]).any()
    plain = league.task(make_config("paulista-2v2"), 4, 64, 0, 0.5, preset, "match_equity")
    assert all(t.privileged is None for t in collect_partition(plain, PolicyNet(), [])[0])


def test_guide_on_envido_weighs_only_the_envido_bets():
    """``guide_on: envido`` keeps the term where an envido call may be made or awaits an answer and the guide
    or the learner bets, answers or folds there; card play on both sides and every later decision weigh 0."""
    from training.ppo_legacy.train import envido_window, guide_targets

    def window_after(*moves):
        state = TrucoState.new(make_config("argentine"), seed=4)
        for move in moves:
            state.apply(move)
        view = observation_for(RandomAgent(), state, state.actor)
        return bool(envido_window(view["observation"][None], view["action_mask"][None].astype(bool))[0])

    assert window_after()  # the first trick: envido may be called
    assert window_after("envido", "falta_envido")  # answering a falta envido: no raise left, still envido
    assert window_after("truco")  # the envido goes first: it may still be called over a truco
    assert not window_after("envido", "quiero")  # envido settled: the truco and the cards are left to PPO
    task = League({"random": 1.0}).task(make_config("argentine"), 8, 400, 3, 0.5, "argentine", "match_equity",
                                        guide="heuristic", guide_against=("random",))
    trajectories, _ = collect_partition(task, PolicyNet(), [])
    window = envido_window(np.concatenate([t.obs for t in trajectories]),
                           np.concatenate([t.masks for t in trajectories]))
    guide = np.concatenate([t.guide for t in trajectories])
    learner = np.concatenate([t.actions for t in trajectories])
    _, weights = guide_targets(trajectories, {"random": 2.0}, on="envido")
    bets = (guide >= A.CALL_BASE) | (learner >= A.CALL_BASE)
    assert (weights.numpy() == np.where(window & bets, 2.0, 0.0)).all()
    assert 0 < (weights > 0).sum() < (window & (guide >= 0)).sum() < len(weights)


def test_guide_until_keeps_the_term_to_the_matchs_first_opponent_decisions():
    """``guide_until: n`` reads the opponents' decision count from ``match_tally`` (checked against the engine's
    own tally over whole random matches) and zeroes the term from their n-th decision on."""
    import random as stdlib_random

    from training.ppo_legacy.train import guide_targets
    from truco_env.encoding import tally_decisions

    rng, most = stdlib_random.Random(0), 0
    for preset, seed in [("argentine-2v2", 0), ("paulista", 1), ("argentine-3v3", 2)]:
        state = TrucoState.new(make_config(preset), seed=seed)
        seen = []
        while not state.is_over:
            seat = state.actor
            view = observation_for(RandomAgent(), state, seat)
            seen.append((int(tally_decisions(view["observation"][None], row=1)[0]),
                         sum(state.match_tally[1 - state.team_of(seat)])))
            state.apply(rng.choice(state.legal_actions()))
        assert all(got == true for got, true in seen), preset
        most = max(most, *(true for _, true in seen))
    assert most > 20  # counts past TALLY_SCALE are read back exactly too
    task = League({"random": 1.0}).task(make_config("argentine-2v2"), 8, 600, 5, 0.5, "argentine-2v2",
                                        "match_equity", guide="heuristic", guide_against=("random",))
    trajectories, _ = collect_partition(task, PolicyNet(), [])
    count = tally_decisions(np.concatenate([t.obs for t in trajectories]), row=1)
    _, everywhere = guide_targets(trajectories, {"random": 2.0}, on="envido")
    _, early = guide_targets(trajectories, {"random": 2.0}, on="envido", until=6)
    assert (early.numpy() == np.where(count < 6, everywhere.numpy(), 0.0)).all()
    assert 0 < (early > 0).sum() < (everywhere > 0).sum()
    with pytest.raises(ValueError, match=r"'guide_until' = -1; use a whole number of opponent decisions >= 0"):
        PPOArgs(guide_until=-1).validate()


@pytest.mark.parametrize("vector", [True, False])
def test_collectors_record_the_guides_choice_only_in_guided_matches(vector):
    """Against ``guide_against`` opponents each learner decision carries the guide's action on that very
    observation (a greedy shipped policy as the guide, so the action can be recomputed); elsewhere -1."""
    from training.ppo_legacy.selfplay import League

    guide = make_agent("ppo:paulista,greedy")
    league = League({"self": 0.5, "random": 0.5})
    task = league.task(make_config("paulista"), 6, 200, 0, 0.5, "paulista" if vector else None, "match_equity",
                       guide="ppo:paulista,greedy", guide_against=("random",))
    trajectories, _ = collect_partition(task, PolicyNet(), [])
    kinds = {t.opponent for t in trajectories}
    assert kinds == {"self", "random"}
    for traj in trajectories:
        assert traj.guide.shape == traj.actions.shape
        if traj.opponent == "self":
            assert (traj.guide == -1).all()
            continue
        expected = [guide.act({"observation": o, "action_mask": m.astype(np.int8)})
                    for o, m in zip(traj.obs, traj.masks)]
        assert traj.guide.tolist() == expected
        assert traj.masks[np.arange(len(traj.guide)), traj.guide].all()


def test_guide_coef_pulls_the_policy_toward_the_guide_against_its_opponents(tmp_path):
    """The same tiny run with and without ``guide_coef``: only the guided one moves toward the guide."""
    from training.ppo_legacy.train import guide_targets

    args = {**TINY, "preset": "paulista", "league": {"random": 1.0}, "learning_rate": 3e-3, "total_updates": 3,
            "update_epochs": 10, "max_grad_norm": 5.0, "anneal_lr": False,
            "guide": "ppo:paulista,greedy"}
    plain = train(PPOArgs(run_dir=str(tmp_path / "plain"), **args), progress=False)
    guided = train(PPOArgs(run_dir=str(tmp_path / "guided"), guide_coef={"random": 5.0}, **args), progress=False)
    task = League({"random": 1.0}).task(make_config("paulista"), 8, 1000, 7, 0.5, "paulista",
                                        guide="ppo:paulista,greedy", guide_against=("random",))
    trajectories, _ = collect_partition(task, PolicyNet(), [])
    targets, weights = guide_targets(trajectories, {"random": 5.0})
    assert (weights == 5.0).all()
    obs = torch.from_numpy(np.concatenate([t.obs for t in trajectories]))
    masks = torch.from_numpy(np.concatenate([t.masks for t in trajectories]))

    def agreement(path):
        net, _ = load_policy(path)
        with torch.no_grad():
            return float((net(obs, masks)[0].argmax(-1) == targets).float().mean())

    assert agreement(guided) > agreement(plain) + 0.1  # measured: +0.14 to +0.23 over seeds 1-3
    no_label = dataclasses.replace(trajectories[0], guide=np.full_like(trajectories[0].guide, -1))
    targets, weights = guide_targets([no_label], {"random": 5.0})
    assert not weights.any() and targets.tolist() == no_label.actions.tolist()  # legal targets weighing nothing
    from truco_env.actions import CALL_BASE

    _, bet_weights = guide_targets(trajectories, {"random": 5.0}, on="bets")
    guided_bets = (np.concatenate([t.guide for t in trajectories]) >= CALL_BASE)
    assert 0 < guided_bets.sum() < len(guided_bets)
    assert (bet_weights.numpy() == np.where(guided_bets, 5.0, 0.0)).all()  # card plays left to PPO
    _, card_weights = guide_targets(trajectories, {"random": 5.0}, on="cards")
    learner_cards = np.concatenate([t.actions for t in trajectories]) < CALL_BASE
    assert 0 < (learner_cards & guided_bets).sum()  # the learner plays a card where the guide bets: not guided
    assert 0 < (~learner_cards & ~guided_bets).sum()  # ... and the converse
    assert (card_weights.numpy() == np.where(learner_cards & ~guided_bets, 5.0, 0.0)).all()  # bets left to PPO
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    log = EventAccumulator(str(tmp_path / "guided" / "tb"))
    log.Reload()
    losses = [event.value for event in log.Scalars("losses/guide_loss")]
    assert len(losses) == 3 and np.isfinite(losses).all()  # unguided decisions' weight 0 never makes a NaN
    with pytest.raises(ValueError, match=r"'guide_coef' names 'heuristic', which is not a league agent; league "
                                         r"agents: \['random'\]"):
        PPOArgs(league={"random": 1.0}, guide_coef={"heuristic": 1.0}).validate()
    with pytest.raises(ValueError, match=r"'guide_coef' for 'random' must be a number >= 0, got -1"):
        PPOArgs(league={"random": 1.0}, guide_coef={"random": -1}).validate()
    with pytest.raises(ValueError, match="unknown agent kind"):
        PPOArgs(league={"random": 1.0}, guide="oracle", guide_coef={"random": 1.0}).validate()
    with pytest.raises(ValueError, match=r"'guide_on' = 'tricks'; choose one of \['all', 'bets', 'cards', "
                                         r"'envido'\]"):
        PPOArgs(guide_on="tricks").validate()


def test_curves_read_the_logs_up_to_the_shipped_update(tmp_path, capsys):
    from torch.utils.tensorboard import SummaryWriter

    from training.ppo_legacy.curves import main, read_scalars

    writer = SummaryWriter(str(tmp_path / "run" / "tb"))
    for step in range(1, 11):
        writer.add_scalar("losses/entropy", 1.0 / step, step)
    writer.close()
    assert [step for step, _ in read_scalars(str(tmp_path / "run"), until=6)["losses/entropy"]] == [1, 2, 3, 4, 5, 6]
    assert len(read_scalars(str(tmp_path / "run"))["losses/entropy"]) == 10
    assert main([str(tmp_path / "run"), "--out", str(tmp_path / "c.png"), "--until", "6"]) == 0
    assert (tmp_path / "c.png").stat().st_size > 0
    assert main([str(tmp_path / "missing"), "--out", str(tmp_path / "d.png")]) == 1
    assert "no such run directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty"), "--out", str(tmp_path / "d.png")]) == 1
    assert "no TensorBoard scalars" in capsys.readouterr().err


def test_privileged_critic_trains_resumes_exactly_and_stays_out_of_policy_files(tmp_path):
    from training.ppo_legacy.model import FORMAT, load_tensors
    from training.ppo_legacy.train import CHECKPOINT_FORMAT

    args = {"preset": "paulista-2v2", "critic": "privileged", "reward": "match_equity", **TINY}
    whole = train(PPOArgs(run_dir=str(tmp_path / "whole"), **args), progress=False)
    train(PPOArgs(run_dir=str(tmp_path / "split"), **{**args, "stop_after": 2}), progress=False)
    checkpoint = tmp_path / "split" / "checkpoint.safetensors"
    tensors, meta = load_tensors(str(checkpoint), CHECKPOINT_FORMAT)
    assert any(k.startswith("critic.") for k in tensors) and meta["update"] == 2
    resumed = train(PPOArgs(run_dir=str(tmp_path / "split"), **args), resume=True, progress=False)
    assert same_parameters(whole, resumed)
    policy, _ = load_tensors(whole, FORMAT)
    assert set(policy) == set(PolicyNet().state_dict())  # the policy file holds the player only
    with pytest.raises(PolicyFileError, match="trained with critic='privileged', this run has 'shared'"):
        train(PPOArgs(run_dir=str(tmp_path / "split"), **{**args, "critic": "shared"}), resume=True,
              progress=False)
    with pytest.raises(ValueError, match=r"'critic' = 'oracle'; choose one of \['shared', 'privileged'\]"):
        PPOArgs(critic="oracle").validate()


def test_critic_warmup_trains_the_critic_alone_then_the_policy(tmp_path):
    """A fine-tune's first updates fit its new critic without touching the policy it starts from."""
    args = {"preset": "paulista", "critic": "privileged", "reward": "match_equity", **TINY, "total_updates": 2}
    start = train(PPOArgs(run_dir=str(tmp_path / "start"), **{**args, "critic": "shared", "total_updates": 1}),
                  progress=False)
    warm = train(PPOArgs(run_dir=str(tmp_path / "warm"), init_policy=start, critic_warmup=2, **args),
                 progress=False)
    assert same_parameters(start, warm)
    half = train(PPOArgs(run_dir=str(tmp_path / "half"), init_policy=start, critic_warmup=1, **args),
                 progress=False)
    assert not same_parameters(start, half)
    with pytest.raises(ValueError, match=r"'critic_warmup' must be an integer >= 0, and 0 unless critic is "
                                         r"'privileged' \(critic is 'shared'\), got 3"):
        PPOArgs(critic_warmup=3).validate()


@pytest.mark.parametrize("backend", ["local", "processes"])
def test_ctrl_c_saves_a_checkpoint_that_resumes(tmp_path, backend):
    """Ctrl-C in a terminal signals the whole process group, rollout workers included."""
    run_dir = tmp_path / "run"
    base = [sys.executable, "-m", "training.cli", "train", "ppo", "--run-dir", str(run_dir), "--quiet",
            "--backend", backend, "--workers", "2"]
    options = ["batch_steps=512", "eval_every=0", "checkpoint_every=1000", "league={self: 1.0}",
               "eval_opponents=[random]"]
    sets = [arg for option in options for arg in ("--set", option)]
    child = subprocess.Popen(base + sets + ["--set", "total_updates=200"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
    deadline = time.time() + 60
    while not (run_dir / "tb").exists() and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    os.killpg(child.pid, signal.SIGINT)
    output, _ = child.communicate(timeout=60)
    assert child.returncode == 0, output
    assert "stopped after update" in output and "Traceback" not in output
    assert (run_dir / "checkpoint.safetensors").exists()
    done = int(output.split("stopped after update ")[1].split(":")[0])
    resumed = subprocess.run(base + sets + ["--set", f"total_updates={done + 1}", "--resume"], capture_output=True,
                             text=True, timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert (run_dir / "policy.safetensors").exists()


@pytest.mark.parametrize("critic", ["shared", "privileged"])
def test_worker_processes_give_the_same_parameters_as_one_process(tmp_path, critic):
    split = {**TINY, "total_updates": 2, "rollout_workers": 2, "critic": critic}
    local = train(PPOArgs(preset="argentine-2v2", run_dir=str(tmp_path / "local"), **split), progress=False)
    pool = train(PPOArgs(preset="argentine-2v2", run_dir=str(tmp_path / "pool"), backend="processes", **split),
                 progress=False)
    assert same_parameters(local, pool)


def test_crafted_pickle_and_corrupt_files_are_refused(tmp_path):
    evil = tmp_path / "policy.safetensors"

    class Payload:
        def __reduce__(self):
            return (os.system, ("echo pwned > " + str(tmp_path / "pwned"),))

    evil.write_bytes(pickle.dumps({"weights": Payload()}))
    with pytest.raises(PolicyFileError, match="never unpickled"):
        load_policy(str(evil))
    with pytest.raises(ValueError, match="ppo"):
        make_agent(f"ppo:{evil}")
    assert not (tmp_path / "pwned").exists()
    torch.save({"net": PolicyNet(hidden=(8,)).state_dict()}, tmp_path / "torch.pt")  # a pickle-based torch file
    with pytest.raises(PolicyFileError):
        load_policy(str(tmp_path / "torch.pt"))
    run_dir = tmp_path / "run"
    train(PPOArgs(preset="argentine", run_dir=str(run_dir), **{**TINY, "total_updates": 1}), progress=False)
    checkpoint = run_dir / "checkpoint.safetensors"
    data = checkpoint.read_bytes()
    checkpoint.write_bytes(data[: len(data) // 2])
    with pytest.raises(PolicyFileError, match="checkpoint"):
        train(PPOArgs(preset="argentine", run_dir=str(run_dir), **TINY), resume=True, progress=False)
    checkpoint.write_bytes(data)
    with pytest.raises(PolicyFileError, match="preset"):
        train(PPOArgs(preset="paulista", run_dir=str(run_dir), **TINY), resume=True, progress=False)
    with pytest.raises(PolicyFileError, match="no such"):
        load_policy(str(tmp_path / "missing.safetensors"))


def test_bad_options_name_the_problem(tmp_path):
    from training.ppo_legacy.cli import load_args

    with pytest.raises(ValueError, match="unknown PPO option"):
        load_args(None, ["learning_rat=0.1"], None)
    with pytest.raises(ValueError, match="unknown preset"):
        load_args(None, ["preset=mineiro"], None)
    with pytest.raises(ValueError, match="KEY=VALUE"):
        load_args(None, ["total_updates"], None)
    with pytest.raises(ValueError, match="does not exist"):
        load_args(str(tmp_path / "nope.yaml"), [], None)
    with pytest.raises(ValueError, match="unknown agent kind"):
        load_args(None, ["league={self: 1, wizard: 1}"], None)
    with pytest.raises(ValueError, match=r"'reward' = 'elo'; choose one of \['match', 'match_equity'\]"):
        load_args(None, ["reward=elo"], None)
    with pytest.raises(ValueError, match=r"'equity_edge' names 'self', which is not a league agent; league agents: "
                                         r"\['random'\]"):
        load_args(None, ["league={self: 1, random: 1}", "reward=match_equity", "equity_edge={self: 0.1}"], None)
    with pytest.raises(ValueError, match=r"'equity_edge' only applies to reward: match_equity \(reward is 'match'\)"):
        load_args(None, ["league={self: 1, random: 1}", "equity_edge={random: 0.25}"], None)
    with pytest.raises(ValueError, match=r"'equity_edge' for 'random' must be a number in \[0, 0.5\), got 0.5"):
        load_args(None, ["league={self: 1, random: 1}", "reward=match_equity", "equity_edge={random: 0.5}"], None)
    args = load_args(None, ["total_updates=7", "hidden=[32, 32]"], str(tmp_path))
    assert args.total_updates == 7 and args.hidden == (32, 32) and args.run_dir == str(tmp_path)


def test_init_policy_starts_the_learner_from_a_policy_file(tmp_path):
    """Fine-tuning: with a zero learning rate the run ends on exactly the weights it started from."""
    start = tmp_path / "start.safetensors"
    base = train(PPOArgs(preset="paulista", run_dir=str(tmp_path / "base"), **{**TINY, "total_updates": 1}),
                 progress=False)
    os.replace(base, start)
    tuned = train(PPOArgs(preset="paulista", run_dir=str(tmp_path / "tuned"), init_policy=str(start),
                          learning_rate=0.0, **{**TINY, "total_updates": 1}), progress=False)
    started, _ = load_policy(str(start))
    ended, meta = load_policy(tuned)
    fresh = PolicyNet()
    for name, tensor in ended.state_dict().items():
        assert torch.equal(tensor, started.state_dict()[name]), name
    assert not torch.equal(fresh.state_dict()["policy.weight"], started.state_dict()["policy.weight"])
    assert meta["training"]["init_policy"] == str(start)
    with pytest.raises(ValueError, match=r"'init_policy': .*nope.safetensors: no such policy or checkpoint file; "
                                         r"give a policy file \(another run's output: run its config first\) or a shipped name"):
        train(PPOArgs(init_policy=str(tmp_path / "nope.safetensors"), run_dir=str(tmp_path / "x")), progress=False)
    with pytest.raises(ValueError, match=r"'init_policy': .* has the architecture .*'hidden': \[256, 256\].* the "
                                         r"run asks for .*'hidden': \[32\]"):
        train(PPOArgs(init_policy=str(start), hidden=(32,), run_dir=str(tmp_path / "x")), progress=False)
    assert not os.path.exists(tmp_path / "x")  # refused before any work
    with pytest.raises(ValueError, match=r"'init_policy' .* and 'teacher' \('heuristic'\) both choose the starting "
                                         r"weights"):
        PPOArgs(init_policy=str(start), teacher="heuristic").validate()


def test_match_equity_reward_credits_each_hand_and_cuts_the_advantages():
    from agents.heuristic import match_equity_table
    from training.ppo_legacy.selfplay import advantages, credit_hand

    league = League({"self": 1.0})
    task = league.task(make_config("argentine"), 1, 1, 0, 0.5, reward="match_equity")
    me = match_equity_table(30, "argentine")

    def traj(decisions: int) -> dict:
        return {"actions": [0] * decisions, "rewards": [0.0] * decisions, "ends": [False] * decisions}

    trajs = {0: traj(2), 1: traj(1)}
    credit_hand(trajs, task, (0, 0), (3, 1), False, None)  # team 0 scored 3, team 1 scored 1
    assert trajs[0]["rewards"] == [0.0, pytest.approx(2 * (me[3][1] - 0.5))] and trajs[0]["ends"] == [False, True]
    assert trajs[1]["rewards"] == [pytest.approx(2 * (me[1][3] - 0.5))] and trajs[1]["ends"] == [True]
    trajs[1]["actions"].append(0), trajs[1]["rewards"].append(0.0), trajs[1]["ends"].append(False)
    credit_hand(trajs, task, (3, 1), (3, 30), True, 1)  # seat 0 made no decision in this hand: no credit
    assert trajs[0]["rewards"][-1] == pytest.approx(2 * (me[3][1] - 0.5))
    assert trajs[1]["rewards"][-1] == pytest.approx(2 * (1.0 - me[1][3]))
    assert sum(trajs[1]["rewards"]) == pytest.approx(1.0)  # the hands' credits add up to the match result
    # GAE stops at a hand's end: the first hand's advantage ignores what the second hand was worth
    t = Trajectory(np.zeros((3, 1)), np.ones((3, 1), bool), np.zeros(3, np.int64), np.zeros(3, np.float32),
                   np.array([0.1, 0.2, 0.3], np.float32), np.array([0.5, 0.0, -1.0], np.float32),
                   np.array([True, False, True]))
    adv, returns = advantages(t, gamma=1.0, lam=1.0)
    assert adv.tolist() == pytest.approx([0.4, -1.2, -1.3]) and returns.tolist() == pytest.approx([0.5, -1.0, -1.0])
    # against a league agent given an edge, the hand is valued by the edged table; self-play stays even
    task = league.task(make_config("argentine"), 1, 1, 0, 0.5, reward="match_equity",
                       equity_edge={"random": 0.25})
    edged = match_equity_table(30, "argentine", 0.25)
    assert edged[0][0] > 0.99  # against random the match is all but won at 0-0...
    trajs = {0: traj(1)}
    credit_hand(trajs, task, (0, 0), (0, 30), True, 1, ("agent", "random"))  # ...so losing it on one hand
    assert trajs[0]["rewards"] == [pytest.approx(-2 * edged[0][0])]  # costs nearly the full -2, not -1
    trajs = {0: traj(1)}
    credit_hand(trajs, task, (0, 0), (3, 0), False, None, ("agent", "random"))
    assert trajs[0]["rewards"] == [pytest.approx(2 * (edged[3][0] - edged[0][0]))]
    trajs = {0: traj(1)}
    credit_hand(trajs, task, (0, 0), (3, 0), False, None, ("snapshot", 0))
    assert trajs[0]["rewards"] == [pytest.approx(2 * (me[3][0] - 0.5))]
    # the match reward keeps one credit chain over the whole match
    task = league.task(make_config("argentine"), 1, 1, 0, 0.5, reward="match")
    trajs = {0: traj(1)}
    credit_hand(trajs, task, (0, 0), (2, 0), False, None)
    credit_hand(trajs, task, (2, 0), (30, 0), True, 0)
    assert trajs[0]["rewards"] == [pytest.approx(0.5 * 30 / 30 + 1.0)] and trajs[0]["ends"] == [False]


def test_ship_records_the_play_mode_that_the_spec_then_follows(tmp_path):
    from training.ppo_legacy.model import save_policy
    from training.ppo_legacy.ship import main as ship_main
    from training.ppo_legacy.ship import ship

    torch.manual_seed(0)
    source = tmp_path / "run" / "policy.safetensors"
    source.parent.mkdir()
    save_policy(PolicyNet(hidden=(16,)), str(source), presets=["paulista"], updates=3)
    shipped = ship(str(source), "paulista", "greedy", str(tmp_path / "policies"))
    _, meta = load_policy(shipped)
    assert meta["play"] == "greedy" and meta["presets"] == ["paulista"] and meta["updates"] == 3
    assert make_agent(f"ppo:{shipped}").greedy and not make_agent(f"ppo:{shipped},sample").greedy
    assert not make_agent(f"ppo:{source}").greedy  # no recorded mode: sample
    with pytest.raises(ValueError, match="must be 'greedy' or 'sample'"):
        make_agent(f"ppo:{shipped},argmax")
    with pytest.raises(ValueError, match="not on 'argentine'"):
        ship(str(source), "argentine", "greedy", str(tmp_path / "policies"))
    assert ship_main([str(source), "paulista", "--play", "fast", "--dir", str(tmp_path)]) == 2


SHIPPED = ("argentine", "argentine-2v2", "paulista", "paulista-2v2")


@pytest.mark.parametrize("preset", SHIPPED)
def test_shipped_policy_loads_by_name_and_plays_its_preset(preset):
    from agents.ppo import shipped_policies
    from training.evaluate import run_tournament

    assert set(SHIPPED) <= set(shipped_policies())
    agent = make_agent(f"ppo:{preset}")
    assert agent.metadata["presets"] == [preset] and agent.metadata["play"] in ("greedy", "sample")
    assert agent.metadata["training"]["preset"] == preset
    summary, _ = run_tournament([f"ppo:{preset}", "random"], [preset], 10, seed=3, workers=1)
    assert summary["pairings"][0]["wins_a"] >= 7  # a trained policy; the 2,000-match figures are in the README


def test_policy_path_resolves_a_shipped_name_in_both_spellings(tmp_path):
    """`init_policy: paulista` and `init_policy: ppo:paulista` (as `truco eval` writes it) name the same file; a
    file of that name wins over the shipped one; anything else is returned as given for the loader to refuse."""
    from agents.ppo import SHIPPED_DIR, policy_path

    shipped = os.path.join(SHIPPED_DIR, "ppo_paulista.safetensors")
    assert policy_path("paulista") == policy_path("ppo:paulista") == shipped
    local = tmp_path / "paulista"
    local.write_bytes(b"")
    assert policy_path(str(local)) == str(local)
    assert policy_path("ppo:nope") == "ppo:nope"


def _configs_by_output() -> dict[str, str]:
    """Every PPO or gate config in configs/, by the policy file its run writes."""
    from training.ppo_legacy.cli import read_options

    folder = os.path.join(os.path.dirname(__file__), "..", "configs")
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.startswith("ppo_") and name.endswith(".yaml"):
            data = read_options(os.path.join(folder, name), [])
            out[os.path.join(data["run_dir"], "policy.safetensors")] = os.path.join(folder, name)
    return out


def _run_relative(key: str, value):
    """A policy path as ``runs/RUN/FILE``: scripts/train_paulista_2v2.sh runs a chain's configs under another runs
    folder (``runs/c2/RUN/FILE``), which changes where the stages start from, not the recipe."""
    def relative(path):
        return "/".join(["runs", *path.split("/")[-2:]]) if path.endswith(".safetensors") else path

    if key == "init_policy":
        return relative(value)
    if key == "experts":
        return {opponent: relative(path) for opponent, path in value.items()}
    return value


def _assert_made_by(config: str, meta: dict) -> None:
    """``meta`` (a policy's metadata) records the arguments of ``config``; the policies it starts from (a
    fine-tune's ``init_policy``, a gate's experts) are made by configs too, with the arguments their files record."""
    from training.ppo_legacy.cli import load_args, load_gate_args, read_options
    from training.ppo_legacy.gate import GateArgs

    gated = "experts" in read_options(config, [])
    args = dataclasses.asdict(load_gate_args(config, []) if gated else load_args(config, [], None))
    recorded, defaults = meta["training"], dataclasses.asdict(GateArgs() if gated else PPOArgs())
    for key, value in args.items():
        if key in ("run_dir", "stop_after"):
            continue
        value = list(value) if isinstance(value, tuple) else value
        expected = recorded.get(key, defaults[key])  # a field newer than the run: the run had its default
        expected = list(expected) if isinstance(expected, tuple) else expected
        assert _run_relative(key, value) == _run_relative(key, expected), (config, key, value, expected)
    made_by = _configs_by_output()
    if gated:  # each expert: some config makes it, and the expert's recorded arguments are that config's
        for opponent, path in args["experts"].items():
            assert path in made_by, (config, opponent, path)
            _assert_made_by(made_by[path], {**meta["experts"][opponent], "experts": {}})
        return
    assert meta["updates"] == (args["stop_after"] or args["total_updates"])
    if args["init_policy"] != "none":  # a fine-tune: some config in configs/ must make the policy it starts from
        assert args["init_policy"] in made_by, (config, args["init_policy"])


def test_every_ppo_and_gate_config_validates():
    from training.ppo_legacy.cli import load_args, load_gate_args, read_options

    configs = sorted(set(_configs_by_output().values()))
    assert len(configs) == len(glob.glob(os.path.join(os.path.dirname(__file__), "..", "configs", "ppo_*.yaml")))
    gates = 0
    for config in configs:
        if "experts" in read_options(config, []):
            load_gate_args(config, []).validate()
            gates += 1
        else:
            load_args(config, [], None).validate()
    assert gates == 3  # paulista, argentine-2v2 and paulista-2v2 ship gated policies


def test_paulista_2v2_chain_script_runs_every_stage_in_the_order_the_configs_name():
    """scripts/train_paulista_2v2.sh is the recipe end to end: it must run every paulista-2v2 config, and each
    stage after the first must start from the stage its config's ``init_policy`` names."""
    import re
    import subprocess

    from training.ppo_legacy.cli import read_options

    root = os.path.join(os.path.dirname(__file__), "..")
    script = os.path.join(root, "scripts", "train_paulista_2v2.sh")
    subprocess.run(["bash", "-n", script], check=True)  # parses
    with open(script, encoding="utf-8") as file:
        text = file.read()
    stages = re.findall(r"^stage (\w+) (configs/\S+\.yaml) ?(\w*)$", text, flags=re.MULTILINE)
    configs = {os.path.join("configs", name) for name in os.listdir(os.path.join(root, "configs"))
               if name.startswith("ppo_paulista_2v2_")}
    assert {config for _, config, _ in stages} == configs
    done = set()
    for name, config, init in stages:
        options = read_options(os.path.join(root, config), [])
        assert options["run_dir"] == f"runs/ppo_paulista_2v2_{name}", config
        expected = options.get("init_policy", "none")
        assert (f"runs/ppo_paulista_2v2_{init}/policy.safetensors" if init else "none") == expected, config
        assert not init or init in done, (name, init)  # a stage starts from one that ran before it
        done.add(name)
    gate = read_options(os.path.join(root, "configs", "ppo_paulista_2v2.yaml"), [])
    assert {path.split("/")[1].removeprefix("ppo_paulista_2v2_") for path in gate["experts"].values()} <= done
    assert "configs/ppo_paulista_2v2.yaml" in text
    for opponent, path in gate["experts"].items():  # the script's gate uses the config's experts
        assert f"{opponent}: $runs/{path.removeprefix('runs/')}" in text, (opponent, path)


@pytest.mark.parametrize("preset", SHIPPED)
def test_each_shipped_policy_was_made_by_its_config(preset):
    """The README says each config is the recipe that made its policy: the recorded arguments must agree."""
    config = os.path.join(os.path.dirname(__file__), "..", "configs", f"ppo_{preset.replace('-', '_')}.yaml")
    _assert_made_by(config, make_agent(f"ppo:{preset}").metadata)


@pytest.mark.parametrize("preset", ["argentine", "paulista", "paulista-clean", "paulista-2v2", "paulista-mini"])
def test_card_strength_features_are_the_engines_trick_strengths(preset):
    import random

    from training.ppo_legacy.model import STRENGTH_LEVELS, CardStrength
    from truco_env import cards as C
    from truco_env.encoding import OBS_OFFSETS, encode_observation

    layer = CardStrength()
    config = make_config(preset)
    rng = random.Random(5)
    checked = 0
    for match in range(25):
        state = TrucoState.new(config, seed=match)
        for _ in range(rng.randrange(12)):
            if state.is_over:
                break
            state.apply(rng.choice(state.legal_actions()))
        if state.is_over:
            continue
        strength = C.strength_table(config.family, state.vira, config.deck, config.deck_ranks)
        obs = encode_observation(state, state.actor)
        levels = layer(torch.from_numpy(obs)[None])[0].reshape(-1, STRENGTH_LEVELS).numpy()
        starts = [OBS_OFFSETS["hand"][0], OBS_OFFSETS["partner_cards"][0]] + list(
            range(OBS_OFFSETS["table"][0], OBS_OFFSETS["table"][1], C.NUM_CARDS))
        for slot, start in enumerate(starts):
            expected = np.zeros(STRENGTH_LEVELS)
            for card in np.flatnonzero(obs[start:start + C.NUM_CARDS]):
                expected[strength[card] - 1] += 1
            assert levels[slot].tolist() == expected.tolist(), (match, slot)
            checked += int(expected.sum())
    assert checked > 10


def test_card_strength_network_saves_loads_and_guards_its_checkpoint(tmp_path):
    torch.manual_seed(0)
    net = PolicyNet(hidden=(32,), features="card_strength")
    assert net.trunk[0].in_features == net.obs_size + 20 * 14
    from training.ppo_legacy.model import save_policy

    save_policy(net, str(tmp_path / "p.safetensors"), presets=["paulista"])
    loaded, meta = load_policy(str(tmp_path / "p.safetensors"))
    assert meta["architecture"]["features"] == "card_strength" and loaded.features == "card_strength"
    obs, mask = torch.rand(4, net.obs_size), torch.ones(4, net.num_actions, dtype=torch.bool)
    assert torch.equal(net.probabilities(obs, mask), loaded.probabilities(obs, mask))
    with pytest.raises(ValueError, match="'features' = 'cards'"):
        PPOArgs(features="cards").validate()
    run_dir = tmp_path / "run"
    train(PPOArgs(preset="argentine", run_dir=str(run_dir), **{**TINY, "total_updates": 1}), progress=False)
    with pytest.raises(PolicyFileError, match="features"):
        train(PPOArgs(preset="argentine", run_dir=str(run_dir), features="card_strength", **TINY), resume=True,
              progress=False)


def test_a_version_1_policy_reads_the_prefix_and_a_version_1_checkpoint_is_refused(tmp_path):
    from training.ppo_legacy.model import atomic_save_tensors, load_tensors, save_policy
    from truco_env.encoding import OBSERVATION_SIZE, OBSERVATION_SIZES

    torch.manual_seed(0)
    old = PolicyNet(obs_size=OBSERVATION_SIZES[1], hidden=(16,))
    save_policy(old, str(tmp_path / "v1.safetensors"), observation_version=1)
    loaded, meta = load_policy(str(tmp_path / "v1.safetensors"))
    assert meta["observation_version"] == 1 and loaded.obs_size == 1068 < OBSERVATION_SIZE
    obs, mask = torch.rand(4, OBSERVATION_SIZE), torch.ones(4, old.num_actions, dtype=torch.bool)
    assert torch.equal(loaded.probabilities(obs, mask), old.probabilities(obs[:, :1068], mask))
    save_policy(old, str(tmp_path / "mislabelled.safetensors"))  # says version 2 but has 1,068 inputs
    with pytest.raises(PolicyFileError, match="version 2 with 1068 inputs"):
        load_policy(str(tmp_path / "mislabelled.safetensors"))

    run_dir = tmp_path / "run"
    train(PPOArgs(preset="argentine", run_dir=str(run_dir), **{**TINY, "total_updates": 1}), progress=False)
    checkpoint = str(run_dir / "checkpoint.safetensors")
    tensors, meta = load_tensors(checkpoint, "truco-rl-ppo-checkpoint")
    del meta["observation_version"]  # as written before layout version 2
    atomic_save_tensors(tensors, meta, checkpoint)
    with pytest.raises(PolicyFileError, match="observation layout version 1; this truco-rl trains on version 2"):
        train(PPOArgs(preset="argentine", run_dir=str(run_dir), **TINY), resume=True, progress=False)


def test_imitation_warm_start_copies_the_teacher_and_learns_its_returns():
    from training.ppo_legacy.imitation import imitate, teacher_data
    from training.ppo_legacy.model import Critic

    args = PPOArgs(preset="argentine", num_tables=16, teacher="heuristic", teacher_decisions=3000,
                   reward="match_equity", league={"random": 0.5, "heuristic": 0.5, "snapshot": 1.0},
                   critic="privileged")
    data = teacher_data(args, make_config("argentine"), np.random.default_rng(0))
    count = len(data["actions"])
    assert count >= 3000 and data["obs"].shape == (count, 1086)
    assert data["masks"][torch.arange(count), data["actions"]].all()  # the teacher only chose legal actions
    assert data["returns"].abs().max() <= 2.0 and data["returns"].abs().sum() > 0  # equity changes, doubled
    torch.manual_seed(0)
    net = PolicyNet(hidden=(128,))
    with torch.no_grad():
        logits, values = net(data["obs"], data["masks"])
    before = float((logits.argmax(-1) == data["actions"]).float().mean())
    value_error = float(((values - data["returns"]) ** 2).mean())
    critic = Critic(hidden=(128,))
    critic_inputs = (data["obs"], data["privileged"], data["opponent"])
    with torch.no_grad():
        critic_error = float(((critic(*critic_inputs) - data["returns"]) ** 2).mean())
    stats = imitate(net, data, epochs=60, minibatch=256, learning_rate=1e-3, vf_coef=0.5,
                    rng=np.random.default_rng(0), critic=critic)
    with torch.no_grad():
        logits, values = net(data["obs"], data["masks"])
    after = float((logits.argmax(-1) == data["actions"]).float().mean())
    assert before < 0.4 and after > 0.8 and stats["imitation/agreement"] > 0.75
    assert float(((values - data["returns"]) ** 2).mean()) < value_error
    with torch.no_grad():
        assert float(((critic(*critic_inputs) - data["returns"]) ** 2).mean()) < critic_error
    with pytest.raises(ValueError, match="teacher must play from observations alone"):
        PPOArgs(teacher="heuristic", vector_env=False).validate()
    with pytest.raises(ValueError, match="'teacher_decisions' must be a positive integer"):
        PPOArgs(teacher="heuristic", teacher_decisions=0).validate()


def test_heuristic_card_values_rank_its_own_card_choice_first():
    """``card_values`` is the look-ahead the heuristic plays by: with the same seed its best value is the card
    the heuristic plays, and every legal card action (face up or down) has a value."""
    from agents.base import observation_for
    from agents.heuristic import HeuristicAgent
    from truco_env.actions import SLOT_BASE

    config = make_config("paulista-2v2")
    checked = 0
    for match in range(6):
        state = TrucoState.new(config, seed=100 + match)
        rng = np.random.default_rng(match)
        while not state.is_over and checked < 40:
            seat = state.actor
            player, looker = HeuristicAgent(seed=match), HeuristicAgent(seed=match)
            observation = observation_for(player, state, seat)
            values = looker.card_values(observation)
            action = player.act(observation)
            legal_cards = [a for a in np.flatnonzero(observation["action_mask"]) if a < SLOT_BASE]
            if values:
                assert sorted(values) == sorted(int(a) for a in legal_cards) and len(legal_cards) > 1
                assert all(0.0 - 0.01 <= v <= 1.0 + 0.01 for v in values.values())
                if action < SLOT_BASE:  # it played a card: the best value is that card
                    assert max(values, key=values.get) == action
                    checked += 1
            else:
                assert len(legal_cards) < 2 or observation["action_mask"][SLOT_BASE:SLOT_BASE + 3].any()
            state.apply(str(rng.choice(state.legal_actions())))
    assert checked >= 20


def test_lookahead_targets_keep_the_bets_and_share_the_card_mass_by_value():
    from training.ppo_legacy.lookahead import distillation_targets
    from truco_env.actions import CALL_BASE, NUM_ACTIONS

    probs = torch.zeros(2, NUM_ACTIONS)
    probs[0, [3, 7, CALL_BASE]] = torch.tensor([0.5, 0.2, 0.3])  # a card decision: cards 3, 7; a truco call
    probs[1, [5, CALL_BASE + 1]] = torch.tensor([0.6, 0.4])  # no card values recorded: kept as it is
    cards = torch.full((2, NUM_ACTIONS), float("nan"))
    cards[0, 3], cards[0, 7] = 0.40, 0.40 + 0.03 * np.log(3.0)  # card 7 three times as likely at T = 0.03
    target = distillation_targets({"probs": probs, "card_values": cards}, temperature=0.03)
    assert target[0, CALL_BASE] == pytest.approx(0.3)  # the bet keeps its probability
    assert target[0, 3] == pytest.approx(0.7 * 0.25, abs=1e-5) and target[0, 7] == pytest.approx(0.7 * 0.75, abs=1e-5)
    assert torch.equal(target[1], probs[1])
    assert target.sum(1).tolist() == pytest.approx([1.0, 1.0])


def test_lookahead_distillation_moves_the_card_play_toward_the_look_ahead_and_keeps_the_bets():
    from training.ppo_legacy.lookahead import card_regret, distil_cards, lookahead_data
    from truco_env.actions import CALL_BASE

    torch.manual_seed(0)
    net = PolicyNet(hidden=(64,), features="card_strength")
    data = lookahead_data(net, "paulista", {"heuristic": 1.0, "snapshot": 1.0}, card_decisions=400, samples=16,
                          workers=2, rng=np.random.default_rng(0))  # two processes, 200 card decisions each
    carded = ~torch.isnan(data["card_values"]).all(1)
    assert int(carded.sum()) >= 400 and len(carded) > int(carded.sum())  # bets and answers are recorded too
    legal_cards = data["masks"][:, :CALL_BASE]
    assert torch.equal(~torch.isnan(data["card_values"][carded, :CALL_BASE]), legal_cards[carded])
    assert torch.isnan(data["card_values"][:, CALL_BASE:]).all()
    everything = torch.arange(len(carded))[carded]
    before = card_regret(net, data, everything)
    stats = distil_cards(net, data, temperature=0.01, epochs=40, minibatch=64, learning_rate=1e-3, vf_coef=0.5,
                         holdout=0.1, rng=np.random.default_rng(0))
    assert card_regret(net, data, everything) < 0.5 * before  # fit on (most of) these decisions
    assert stats["lookahead/card_decisions"] == int(carded.sum()) and stats["lookahead/decisions"] == len(carded)
    assert stats["lookahead/regret_after"] < stats["lookahead/regret_before"]  # on the held-out tenth too
    with torch.no_grad():
        after = net.probabilities(data["obs"], data["masks"])
    moved = 0.5 * (after - data["probs"]).abs().sum(1)  # total variation from the starting policy
    assert float(moved[~carded].mean()) < 0.1  # elsewhere the policy stays as it was
    bets = slice(CALL_BASE, None)
    card_mass_moved = (after[carded, bets].sum(1) - data["probs"][carded, bets].sum(1)).abs()
    assert float(card_mass_moved.mean()) < 0.1  # whether to bet rather than play a card, too


def test_lookahead_options_are_checked():
    with pytest.raises(ValueError, match="'lookahead_card_decisions' distils the card play of a trained policy: "
                                         "set 'init_policy'"):
        PPOArgs(lookahead_card_decisions=10).validate()
    with pytest.raises(ValueError, match="'total_updates' is 0, which trains nothing without a warm start"):
        PPOArgs(total_updates=0).validate()
    with pytest.raises(ValueError, match="'lookahead_temperature' must be a number > 0, got 0"):
        PPOArgs(lookahead_card_decisions=10, init_policy="paulista", lookahead_temperature=0).validate()
    with pytest.raises(ValueError, match="'lookahead_samples' must be an integer in 8..10000, got 4"):
        PPOArgs(lookahead_card_decisions=10, init_policy="paulista", lookahead_samples=4).validate()
    with pytest.raises(ValueError, match="has only snapshots"):
        PPOArgs(lookahead_card_decisions=10, init_policy="paulista", league={"snapshot": 1.0}).validate()
    PPOArgs(preset="paulista", total_updates=0, lookahead_card_decisions=10, init_policy="paulista").validate()
