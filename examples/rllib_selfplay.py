"""Self-play PPO on Truco with RLlib: the AEC environment through RLlib's PettingZoo wrapper.

What it shows
-------------
* ``truco_env.env(preset)`` (a PettingZoo AEC environment) runs in RLlib through
  ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``.
* The legal-action mask is handed to RLlib's action-masking module
  (``ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule``), which expects each
  observation as ``{"observations": <the features>, "action_mask": <1.0 legal, 0.0 illegal>}``.
  :class:`RLlibObservations` renames ``"observation"`` to ``"observations"`` and turns the int8 mask into float32.
  The module adds ``log(mask)`` (clamped) to the logits, so an illegal action is never sampled.
* Self-play: every seat (``player_0``, ``player_1``, and all four or six in 2v2/3v3) maps to one shared policy,
  ``"shared"``, so the policy learns from both sides of every match.
* After training, the learned module plays ``--eval-matches`` matches against a random player, seats alternating.

Install and run (Ray's RLlib is an optional extra)::

    pip install -c constraints.txt -e ".[rllib]"
    python examples/rllib_selfplay.py --iterations 2                # about a minute on 2 CPUs
    python examples/rllib_selfplay.py --preset paulista --iterations 50 --batch 4000 --num-env-runners 4

``RAY_ADDRESS=auto`` (or ``ray://host:10001``) runs it on an existing Ray cluster instead of a local instance.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

import truco_env

POLICY = "shared"


class RLlibObservations(BaseWrapper):
    """Observations in the form RLlib's action-masking module expects.

    ``{"observation": float32[1086], "action_mask": int8[98]}`` becomes
    ``{"observations": float32[1086], "action_mask": float32[98]}``; everything else passes through."""

    def __init__(self, env):
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])
        self._space = spaces.Dict({
            "observations": inner["observation"],
            "action_mask": spaces.Box(0.0, 1.0, inner["action_mask"].shape, dtype=np.float32),
        })

    def observation_space(self, agent):
        return self._space

    def observe(self, agent):
        obs = self.env.observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"].astype(np.float32)}


def make_env(config: dict):
    """The environment RLlib builds in every env runner (``config`` is the algorithm's ``env_config``)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(RLlibObservations(truco_env.env(config.get("preset", "argentine"))))


def build_config(args: argparse.Namespace):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    register_env("truco", make_env)
    return (
        PPOConfig()
        # RLlib's environment check steps with an unmasked random action, which Truco refuses as illegal
        .environment("truco", env_config={"preset": args.preset}, disable_env_checking=True)
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=1)
        .multi_agent(
            policies={POLICY},
            # self-play: every seat of every match is played by the same policy
            policy_mapping_fn=lambda agent_id, episode, **kwargs: POLICY,
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            POLICY: RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                 model_config={"fcnet_hiddens": [256, 256], "head_fcnet_hiddens": [128],
                                               "vf_share_layers": False}),
        }))
        .training(train_batch_size_per_learner=args.batch, minibatch_size=min(256, args.batch),
                  num_epochs=args.epochs, lr=3e-4, gamma=1.0, lambda_=0.95, entropy_coeff=0.01)
        .debugging(seed=args.seed)
    )


def greedy_action(module, obs: dict) -> int:
    """The module's most probable legal action for one observation dict of the wrapped environment."""
    import torch
    from ray.rllib.core.columns import Columns

    batch = {Columns.OBS: {"observations": torch.as_tensor(obs["observations"][None]),
                           "action_mask": torch.as_tensor(obs["action_mask"][None])}}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
    logits = np.where(obs["action_mask"] > 0, logits, -np.inf)  # the module masks already; be explicit
    return int(np.argmax(logits))


def play_against_random(module, preset: str, matches: int, seed: int) -> tuple[int, int]:
    """Matches won by the learned module (greedy) against uniform random play; seats alternate."""
    env = RLlibObservations(truco_env.env(preset))
    rng = np.random.default_rng(seed)
    wins = 0
    for match in range(matches):
        env.reset(seed=seed + match)
        learner_team = match % 2
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                action = None
            elif int(agent.rsplit("_", 1)[1]) % 2 == learner_team:
                action = greedy_action(module, obs)
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
        wins += env.unwrapped.game.winner == learner_team
    return wins, matches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="example: python examples/rllib_selfplay.py --iterations 2")
    parser.add_argument("--preset", default="argentine", choices=sorted(truco_env.PRESETS))
    parser.add_argument("--iterations", type=int, default=10, help="PPO training iterations (default 10)")
    parser.add_argument("--batch", type=int, default=2000, help="agent steps per iteration (default 2000)")
    parser.add_argument("--epochs", type=int, default=4, help="passes over each batch (default 4)")
    parser.add_argument("--num-env-runners", type=int, default=1,
                        help="Ray actors collecting matches (0: collect in this process)")
    parser.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray instance (default 2)")
    parser.add_argument("--eval-matches", type=int, default=20,
                        help="matches against a random player after training (0: skip)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", default=None, help="folder to save the trained algorithm to")
    args = parser.parse_args(argv)
    if args.iterations < 1 or args.batch < 1:
        parser.error("--iterations and --batch must be at least 1")

    try:
        import ray
        import ray.rllib
    except ImportError as exc:
        print(f"this example needs RLlib: pip install -c constraints.txt -e '.[rllib]' ({exc})",
              file=sys.stderr)
        return 2

    if os.environ.get("RAY_ADDRESS"):
        ray.init(log_to_driver=False)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    try:
        algo = build_config(args).build_algo()
        for i in range(1, args.iterations + 1):
            result = algo.train()
            runners = result.get("env_runners", {})
            learner = result.get("learners", {}).get(POLICY, {})
            print(f"iteration {i}: {int(runners.get('num_env_steps_sampled_lifetime', 0)):,} agent steps, "
                  f"{int(runners.get('num_episodes_lifetime', 0))} matches, "
                  f"mean match length {runners.get('episode_len_mean', float('nan')):.1f}, "
                  f"policy loss {learner.get('policy_loss', float('nan')):.4f}, "
                  f"entropy {learner.get('entropy', float('nan')):.3f}", flush=True)
        if args.checkpoint:
            path = algo.save_to_path(os.path.abspath(args.checkpoint))
            print("saved the algorithm to", path)
        if args.eval_matches > 0:
            wins, n = play_against_random(algo.get_module(POLICY), args.preset, args.eval_matches, args.seed)
            print(f"against random: {wins}/{n} matches won by the self-play policy (greedy)")
        algo.stop()
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
