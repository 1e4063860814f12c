"""A Gymnasium vector environment: N single-agent matches stepped at once on the compiled engine.

Why: SB3-style and CleanRL-style learners step a ``gymnasium.vector.VectorEnv`` of many copies of one
environment. Wrapping N single-agent views in ``SyncVectorEnv`` runs Python per match per step; this class keeps
all N matches in one :class:`truco_env.vector.VectorEnv` and lets the opponents answer with one batched call per
step, so a learner gets the vector environment's speed through the standard interface::

    import gymnasium, truco_env
    envs = gymnasium.make_vec(truco_env.SINGLE_AGENT_ID, num_envs=256, preset="paulista")
    obs, info = envs.reset(seed=0)
    obs, reward, terminated, truncated, info = envs.step(policy(obs, info["action_mask"]))

* the learner holds one team of every match (the team is drawn again for every match; ``team=0`` or ``1`` fixes
  it) and decides for each seat of that team, from that seat's observation (one policy for the whole team);
* the ``opponents`` play the other team: an object with ``act_batch(observations, masks) -> actions`` (one
  legal id per row, such as ``agents.RandomAgent`` or a PPO agent; ``agents.vector_env`` takes specs), uniform
  random play when none is given;
* observation: (N, 1086) float32 (1,136 in Uruguayan Truco, 1,141 with señas), the acting learner seat's
  observation (``docs/observation.md``); the legal actions are ``info["action_mask"]`` (N, 98; 106 with señas)
  bool and :meth:`action_masks`;
* reward: the learner team's, ``"match"`` (+1/-1 when a match ends) or ``"points"`` (each hand's point
  difference when it ends); points won before the learner's first decision of a match count at that decision;
* autoreset in the same step (``AutoresetMode.SAME_STEP``): a terminated row already holds the first learner
  observation of its next match, and ``info["won"]`` (with the mask ``info["_won"]``) says whether the finished
  match was won. A match always ends by the rules (``terminated``), never by truncation, so a learner
  never needs the final observation (it is not kept).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

import truco_env.actions

from . import _kernel
from .encoding import observation_size
from .inputs import as_action_batch, as_seed
from .limits import clip
from .single import RandomPlayer
from .vector import SKIP, VectorEnv


class TrucoVectorEnv(gymnasium.vector.VectorEnv):
    """See the module docstring."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012  # Gymnasium's convention

    def __init__(self, preset: str = "argentine", num_envs: int = 64, *, opponents: Any = None,
                 team: int | None = None, reward: str = "match", num_workers: int = 1, **overrides: Any):
        if team not in (None, 0, 1):
            raise ValueError(f"team must be None, 0 or 1, got {clip(repr(team))}")
        self.opponents = RandomPlayer() if opponents is None else opponents
        if not callable(getattr(self.opponents, "act_batch", None)) or getattr(self.opponents, "batched", True) is False:
            # an agent that keeps a match's memory per table (the heuristic) has act_batch only to refuse it, mid-step
            raise TypeError(f"opponents must have act_batch(observations, masks) (one legal id per row; a batched "
                            f"agent such as random, ppo:..., onnx:...), got {clip(repr(self.opponents))}, which plays "
                            "one table at a time; agents.vector_env takes agent specs")
        self.env = VectorEnv(preset, num_envs, num_workers=num_workers, reward=reward, **overrides)
        self.preset, self.fixed_team, self.num_envs = preset, team, num_envs
        self.single_observation_space = spaces.Box(0.0, 1.0, (observation_size(self.env.config),), dtype=np.float32)
        self.single_action_space = spaces.Discrete(truco_env.actions.num_actions(self.env.config))
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._rng = np.random.default_rng()
        self._team = np.zeros(num_envs, dtype=np.int64)
        self._carry = np.zeros(num_envs, dtype=np.float32)  # points of a new match before the learner's turn
        self._obs = self._mask = self._actor = None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        seed = as_seed(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self.opponents.seed(int(self._rng.integers(2 ** 31)))
        self._obs, self._mask, self._actor = self.env.reset(seed=seed)
        self._draw_teams(np.ones(self.num_envs, dtype=bool))
        reward, carry, _, _ = self._play(None)
        self._carry[:] = reward + carry  # all of it belongs to the first step of these matches
        nothing = np.zeros(self.num_envs, dtype=bool)
        return self._obs.copy(), self._info(nothing, nothing)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        acts = as_action_batch(actions, self.num_envs, num_actions=self.single_action_space.n)  # the learner acts in every row: no SKIP here
        reward, carry, done, won = self._play(acts)
        reward += self._carry
        self._carry = carry
        return self._obs.copy(), reward, done, np.zeros(self.num_envs, dtype=bool), self._info(done, won)

    def action_masks(self) -> np.ndarray:
        """The legal actions of every row, (N, 98) bool (the name ``MaskablePPO``-style learners call)."""
        return self._mask.astype(bool)

    def close(self, **kwargs: Any) -> None:
        # gymnasium's ``__del__`` calls this on an instance whose construction was refused before ``env`` existed
        if hasattr(self, "env"):
            self.env.close()

    # -- internals ------------------------------------------------------------------------------------------

    def _play(self, acts: np.ndarray | None) -> tuple[np.ndarray, ...]:
        """Apply the learner's ``acts`` (None: none to apply), then let the opponents act until it is the
        learner's turn in every row. Returns the learner teams' rewards in the match each row was in, the rewards
        of a match that began meanwhile (they count at its first step), which rows ended a match, and whether
        the learner's team won it."""
        n = self.num_envs
        reward, carry = np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32)
        done, won = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        while True:
            if acts is not None:
                team = self._team  # the teams of the matches being played, before new ones are drawn
                self._obs, self._mask, rewards, self._actor, ended = self.env.step(acts)
                r = rewards[np.arange(n), team]  # seats 0 and 1 are teams 0 and 1
                carry += np.where(done, r, 0.0)
                reward += np.where(done, 0.0, r)
                won |= ended & ~done & (self.env.info[:, _kernel.INFO_WINNER] == team)
                done |= ended
                if ended.any():
                    self._draw_teams(ended)
            theirs = (self._actor % 2) != self._team
            if not theirs.any():
                return reward, carry, done, won
            acts = np.full(n, SKIP, dtype=np.int32)
            acts[theirs] = self.opponents.act_batch(self._obs[theirs], self._mask[theirs])

    def _draw_teams(self, rows: np.ndarray) -> None:
        drawn = self._rng.integers(2, size=self.num_envs) if self.fixed_team is None else self.fixed_team
        self._team = np.where(rows, drawn, self._team)

    def _info(self, done: np.ndarray, won: np.ndarray) -> dict[str, Any]:
        return {"action_mask": self._mask.astype(bool), "seat": self._actor.astype(np.int64),
                "won": won, "_won": done.copy()}
