"""A Gymnasium single-agent view: one learner seat against given agents.

Why: most RL libraries (Stable-Baselines3 and sb3-contrib's ``MaskablePPO``, CleanRL single-agent scripts) expect
``gymnasium.Env``. Here the learner sits at one seat; every other seat is played by agents: objects with
``act(observation) -> int``, ``reset(seat)`` and ``seed(seed)`` (duck typed, such as ``agents.base.Agent``), or
zero-argument callables that make one, so that each seat gets an agent of its own. The environment layer does not
import the agents package, so it takes no spec strings;
``agents.single_agent(preset, opponents="heuristic:bluff=0.3")`` builds this same view from specs.

* engine: the compiled engine (``truco_env.fast.FastState``, the same rules and records as the reference engine;
  ``env.state.reference()`` is the reference ``TrucoState`` of the match), as in the PettingZoo env;
* observation: the learner seat's observation vector (same layout as the AEC env, ``docs/observation.md``);
  ``info["action_mask"]`` and :meth:`action_masks` give the legal actions (what ``MaskablePPO`` reads);
* reward: ``"match"`` (+1/-1 to the learner's team at the end) or ``"points"`` (each hand's point difference);
* an illegal action ends the episode with reward -1 and ``info["illegal_action"] = True`` (Gymnasium's
  ``check_env`` steps random actions, so raising is not an option here; masked learners never trigger it); a
  value that is no action id at all (a float, a string, None, an id outside the preset's action space: 0..97,
  or 0..105 with señas) raises ``ValueError`` (:func:`truco_env.inputs.as_action`).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from . import actions
from .config import make_config
from .encoding import observation_size
from .fast import FastState
from .inputs import as_action, as_reset_options, as_seed
from .limits import clip
from .render import render_text
from .turns import ask_agent, play_turns


class RandomPlayer:
    """Uniform over the legal actions: the view's default opponent, so that ``gymnasium.make(SINGLE_AGENT_ID)``
    works with no arguments (``agents.RandomAgent`` is this player with a batched ``act_batch``)."""

    def __init__(self, seed: int | None = None):
        self._rng = np.random.default_rng(seed)

    def seed(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def reset(self, seat: int | None = None) -> None:
        """Nothing to forget between matches."""

    def act(self, observation: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError(f"{type(self).__name__}.act: the action mask has no legal action")
        return int(legal[self._rng.integers(legal.size)])  # rng.choice's draw, at an eighth of its cost

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One uniformly random legal action per row (the opponents of ``truco_env.gym_vector``)."""
        legal = np.asarray(masks) > 0
        if not legal.any(axis=1).all():
            raise ValueError(f"{type(self).__name__}.act_batch: a row of the action masks has no legal action")
        return sample_rows(legal / legal.sum(axis=1, keepdims=True), self._rng)


def sample_rows(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row of a [batch, actions] probability array (inverse CDF with one uniform per row)."""
    cdf = np.cumsum(probs, axis=1)
    draws = rng.random(len(probs))[:, None] * cdf[:, -1:]
    chosen = np.minimum((cdf <= draws).sum(axis=1), probs.shape[1] - 1)
    rounded = probs[np.arange(len(probs)), chosen] <= 0  # a draw that rounded onto the top of the cdf
    chosen[rounded] = np.argmax(probs[rounded], axis=1)
    return chosen.astype(np.int64)


class TrucoSingleAgentEnv(gymnasium.Env):
    """See the module docstring. ``seat=None`` draws the learner's seat at every reset."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}  # noqa: RUF012  # Gymnasium's convention

    def __init__(self, preset: str = "argentine", *, opponents: Any = RandomPlayer, partners: Any = None,
                 seat: int | None = None, reward: str = "match", render_mode: str | None = None, **overrides: Any):
        self.config = make_config(preset, **overrides)
        n = self.config.num_players
        if seat is not None and (not isinstance(seat, int) or not 0 <= seat < n):
            raise ValueError(f"seat must be None or 0..{n - 1}, got {clip(repr(seat))}")
        if reward not in ("match", "points"):
            raise ValueError(f"reward={clip(repr(reward))} is not allowed; choose 'match' or 'points'")
        if render_mode not in (None, "ansi", "human"):
            raise ValueError(f"render_mode={clip(repr(render_mode))} is not allowed; choose None, 'ansi' or 'human'")
        self.preset, self.fixed_seat, self.reward_mode, self.render_mode = preset, seat, reward, render_mode
        self._opponents, self._partners = opponents, partners if partners is not None else opponents
        self.observation_space = spaces.Box(0.0, 1.0, (observation_size(self.config),), dtype=np.float32)
        self.action_space = spaces.Discrete(actions.num_actions(self.config))
        self._build(self._opponents)  # a bad argument fails here, saying what is allowed
        self._build(self._partners)
        self._cache: dict[tuple[int, bool], Any] = {}
        self._carry = 0.0
        self.state: FastState | None = None
        self.seat = 0

    @staticmethod
    def _build(given: Any):
        """The agent for one seat: ``given`` itself, or what calling it makes (a class or a function)."""
        if isinstance(given, str):
            raise ValueError(f"opponents/partners={clip(repr(given))}: truco_env takes agent objects, not specs; use "
                             f"agents.single_agent(preset, opponents={clip(repr(given))}) or pass objects with act()")
        makes_agents = isinstance(given, type) or (callable(given) and not hasattr(given, "act"))
        agent = given() if makes_agents else given
        if not all(hasattr(agent, method) for method in ("act", "reset", "seed")):
            raise ValueError(f"opponents/partners must be agents (act, reset and seed methods) or callables that "
                             f"make one, got {clip(repr(given))}")
        return agent

    def _agent_for(self, seat: int):
        same_team = seat % 2 == self.seat % 2
        key = (seat, same_team)
        if key not in self._cache:
            self._cache[key] = self._build(self._partners if same_team else self._opponents)
        return self._cache[key]

    # -- Gymnasium API -------------------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=as_seed(seed))
        options = as_reset_options(options)
        n = self.config.num_players
        self.seat = self.fixed_seat if self.fixed_seat is not None else int(self.np_random.integers(n))
        self._cache: dict[tuple[int, bool], Any] = {}
        while True:
            self.state = FastState.new(self.config, seed=int(self.np_random.integers(2 ** 62)),
                                        deal=options.get("deal"), score=options.get("score"))
            for seat in range(n):
                if seat != self.seat:
                    agent = self._agent_for(seat)
                    agent.seed(int(self.np_random.integers(2 ** 31)))
                    agent.reset(seat)
            # points scored before the learner's first decision are paid with its first step's reward, so that
            # an episode's rewards always add up to the final point difference
            self._carry = self._play_others()
            if not self.state.is_over:  # rarely the others finish a whole match without the learner: redeal
                return self._observe(), self._info()
            options = {}

    def step(self, action: Any):
        state = self.state
        if state is None:
            raise RuntimeError("call reset() before step()")
        if state.is_over:
            raise RuntimeError("the episode is over: call reset()")
        action = as_action(action, self.action_space.n)  # a wrong type or an id out of range raises: a bug, not a move
        if not state.legal_mask()[action]:
            return self._observe(), -1.0, True, False, {**self._info(), "illegal_action": True}
        hand = state.hand_index
        state.apply_id(action)
        reward, self._carry = self._hand_reward(hand) + self._carry, 0.0
        reward += self._play_others()
        if state.is_over and self.reward_mode == "match" and state.winner is not None:
            reward = 1.0 if state.winner == self.seat % 2 else -1.0
        if self.render_mode == "human":
            self.render()
        return self._observe(), float(reward), state.is_over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (sb3-contrib's ``MaskablePPO`` calls this)."""
        if self.state is None or self.state.is_over:
            return np.ones(self.action_space.n, dtype=bool)  # nothing is legal; avoid an all-False distribution
        return self._mask().astype(bool)

    def render(self) -> str | None:
        if self.state is None or self.render_mode is None:
            return None
        text = render_text(self.state.reference(), self.seat)
        if self.render_mode == "human":  # Gymnasium's convention: human mode shows, ansi returns
            print(text)
            return None
        return text

    # -- internals ---------------------------------------------------------------------------------------------

    def _play_others(self) -> float:
        """Let the other seats act until the learner must act or the match ends; the points they cause."""
        state = self.state
        rewards: list[float] = []
        play_turns(state, lambda seat: ask_agent(self._agent_for(seat), state, seat),
                   until=lambda s: s.actor == self.seat,
                   on_hand_end=lambda hand, before: rewards.append(self._hand_reward(hand)))
        return float(sum(rewards))

    def _hand_reward(self, hand: int) -> float:
        state = self.state
        if self.reward_mode != "points" or (state.hand_index == hand and not state.is_over):
            return 0.0
        team = self.seat % 2
        points = state.hand_points(hand)
        return float(points[team] - points[1 - team])

    def _observe(self) -> np.ndarray:
        return self.state.encode_observation(self.seat, self.state.observation_buffer())

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._mask(), "seat": self.seat, "score": self.state.score}

    def _mask(self) -> np.ndarray:
        """The learner's legal actions (all zero once the match is over)."""
        if self.state.is_over or self.state.actor != self.seat:
            return np.zeros(self.action_space.n, dtype=np.int8)
        return self.state.legal_mask().copy()


def single_agent(preset: str = "argentine", *, opponents: Any = RandomPlayer, **kwargs: Any) -> TrucoSingleAgentEnv:
    """``truco_env.single_agent(preset, opponents=AGENT, **overrides)``: the Gymnasium single-agent view."""
    return TrucoSingleAgentEnv(preset, opponents=opponents, **kwargs)
