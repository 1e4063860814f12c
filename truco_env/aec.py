"""# Truco (PettingZoo AEC environment)

| | |
|---|---|
| Import | `import truco_env; env = truco_env.env(preset="argentine")` |
| Registered as | `truco/Truco-v1` (where PettingZoo has `pettingzoo.register`) |
| Actions | Discrete, one space for every preset (`truco_env.actions.NUM_ACTIONS` = 98; 106 with señas) |
| Parallel API | no (turn-based: exactly one seat acts at a time) |
| Agents | `player_0` ... `player_{n-1}`, n = 2, 4 or 6; team of `player_i` is `i % 2` |
| Observation shape | `{"observation": (1086,) float32 in [0, 1], "action_mask": (98,) int8}`; with señas (1141,), (106,) |

Argentine Truco and Truco Paulista, 1v1, 2v2 and (Argentine) 3v3, exactly as `docs/rules.md` states. The rules live
in the engine (`truco_env.engine`); this module is a thin face over it.

## Arguments

`truco_env.env(preset="argentine", episode="match", reward="match", illegal_action="raise", render_mode=None,
**overrides)`

- `preset`: one of `truco_env.PRESETS` (`argentine`, `argentine-flor`, `argentine-2v2`, `argentine-3v3`,
  `paulista`, `paulista-2v2`, `paulista-clean`). `overrides`: any docs/rules.md §5 field (`target_score=15`,
  `flor=True`, ...). Unknown names or bad values raise `ValueError` naming them and what is allowed.
- `episode`: `"match"` (default: an episode is a whole match) or `"hand"` (an episode is one hand; `reset()`
  without a seed or options continues the same match with its next hand, a new match once it is over or
  forfeited).
- `reward`: `"match"` (default: +1 to the winning team's agents and -1 to the others when the match ends) or
  `"points"` (when a hand ends, each agent receives its team's points of that hand minus the opponents').
- `illegal_action`: `"raise"` (default: `ValueError` naming the action and the legal ones, state unchanged) or
  `"terminate"` (PettingZoo's `TerminateIllegalWrapper` convention: the offender's team gets -1, the other team
  +1, and the episode ends; the match is forfeited, so the next `reset()` starts a new one). This is for ids the
  rules do not allow now; an action that is no id at all (a float, a string, None, a bool, an id outside the
  preset's action space: 0..97, or 0..105 with señas) always raises `ValueError` (`truco_env.inputs.as_action`: a
  Python int, numpy integer or 0-d integer array).
- `render_mode`: `"ansi"` (`render()` returns the table as text) or `"human"` (prints it).

`reset(seed=None, options=None)`: `seed` is None or an integer >= 0 (Python or numpy). `options` may hold
`"deal": {"hands": [[card, ...], ...one list per seat], "vira": card or None, "dealer": seat}` to fix the first
hand's deal (a bad deal raises `ValueError`; the dealer alone may be given), and `"score": [team0, team1]` to
start from that score (each below the target). Other keys are ignored with a warning that names them (PettingZoo's
`api_test` passes one). Cards are written as in `docs/rules.md`
§1.2.

## Observation

`observe(agent)` returns `{"observation", "action_mask"}`. The observation is drawn from that agent's seat: its own
cards, the table, the vira and manilha rank, the bet ladder, envido/flor calls and the points shown, scores,
relative seats of mano and dealer, trick results, the preset's family, player count and options, a per-team
tally of the match's public decisions so far, and (only for the team at 11 in a 2v2 mão de onze) the partner's
cards. Hidden information never leaks. Field by field:
`docs/observation.md`. The mask marks the legal actions of the agent to act (all zero for the others).

`env.unwrapped.state()` is the full state for centralised critics: seat 0's observation followed by every seat's
unplayed cards (6 x 40).

With señas (`senas=True`, Argentine team play, docs/rules.md §3.13) the observation has a block of 55 more values
(the signals the seat saw this hand, who caught its own) and the actions `sena:<gesture>` (ids 98-105); an
opponent's signal is in an observation only when that seat caught it.

## Actions

`env.unwrapped.action_names[i]` names action `i`; `env.unwrapped.action_id("play:1e")` is the reverse. Cards are
`play:<card>` (`cover:<card>` face down, `play_slot:<i>` in a blind mão de ferro); calls are `truco retruco
vale_cuatro seis nove doze envido real_envido falta_envido flor contraflor contraflor_al_resto quiero no_quiero
mazo`. See `docs/actions.md`.

## Rewards

Zero-sum between teams: the agents of one team always receive the same reward, and the two teams' rewards sum to
zero.

## Records

`env.unwrapped.match_record(include_legal=False)` returns the JSON-serialisable match record of `docs/records.md`;
`truco replay FILE.json` re-simulates one.

## Version history

- v1: observation layout version 2: `match_tally` appended (per team, the shares of its decisions so far in the
  match that were card plays, ladder calls, envido calls, falta envido, flor calls, quiero, no quiero and mazo).
- v0: first release (observation layout version 1).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from . import _kernel, actions, cards
from .config import make_config
from .encoding import (
    encode_information_state,
    encode_observation,
    information_state_string,
    observation_size,
)
from .engine import TrucoState
from .fast import FastState, options_array
from .inputs import as_action, as_reset_options, as_seed
from .limits import clip
from .render import render_text

EPISODES = ("match", "hand")
REWARDS = ("match", "points")
ILLEGAL = ("raise", "terminate")
RENDER_MODES = ("ansi", "human")
STATE_HANDS = 6 * cards.NUM_CARDS  # every seat's unplayed cards, after seat 0's observation


def _choice(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"{name}={clip(repr(value))} is not allowed; choose one of {list(allowed)}")


class TrucoEnv(AECEnv):
    """The unwrapped AEC environment (``truco_env.raw_env``); see the module docstring."""

    metadata: ClassVar[dict] = {
        "render_modes": list(RENDER_MODES), "name": "truco_v1", "is_parallelizable": False}

    def __init__(self, preset: str = "argentine", episode: str = "match", reward: str = "match",
                 illegal_action: str = "raise", render_mode: str | None = None, **overrides: Any):
        super().__init__()
        _choice("episode", episode, EPISODES)
        _choice("reward", reward, REWARDS)
        _choice("illegal_action", illegal_action, ILLEGAL)
        if render_mode is not None:
            _choice("render_mode", render_mode, RENDER_MODES)
        self.preset = preset
        self.config = make_config(preset, **overrides)
        self.episode = episode
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.family = self.config.family
        n = self.config.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = []
        self.action_names = actions.action_names(self.family, self.config.senas)
        self._num_actions = actions.num_actions(self.config)
        self._action_spaces = {a: spaces.Discrete(self._num_actions) for a in self.possible_agents}
        obs_size = observation_size(self.config)
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (obs_size,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (self._num_actions,), dtype=np.int8),
        })
        self._observation_spaces = {a: obs_space for a in self.possible_agents}
        self._seats = {a: i for i, a in enumerate(self.possible_agents)}
        self.state_space = spaces.Box(0.0, 1.0, (obs_size + STATE_HANDS,), dtype=np.float32)
        self._game: FastState | None = None  # the match, on the fast engine (same rules, same records)
        self._seed_rng: random.Random | None = None
        # the observation fields fixed by the rules, written once; observe() copies this and fills in the rest
        self._obs_template = np.zeros(obs_size, dtype=np.float32)
        self._cfg_array = None

    # -- spaces and names ---------------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def action_id(self, name: str) -> int:
        """Index of an action name (``"play:1e"``, ``"truco"``); ValueError naming it when unknown."""
        return actions.action_id(name, self.family)

    @property
    def game(self) -> TrucoState:
        """The engine state of the current match (read it, do not mutate it): a reference-engine
        :class:`TrucoState` kept in step with the fast engine that plays the match."""
        if self._game is None:
            raise RuntimeError("call reset() before using the environment")
        return self._game.reference()

    # -- the AEC cycle ------------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        options = as_reset_options(options)
        seed = as_seed(seed)
        if seed is not None:
            self._seed_rng = random.Random(seed)
        # a forfeit (illegal_action="terminate") ends the match, whichever team forfeited (team 0 included)
        continuing = (self.episode == "hand" and seed is None and not options
                      and self._game is not None and not self._game.is_over and self._forfeit is None)
        if not continuing:
            match_seed = seed
            if seed is None:
                match_seed = (self._seed_rng or random.SystemRandom()).randrange(2 ** 63)
            self._game = FastState.new(self.config, seed=match_seed, deal=options.get("deal"),
                                       score=options.get("score"))
            if self._cfg_array is None:
                self._cfg_array = self._game.config_array
                _kernel.encode_static(self._cfg_array, options_array(self.config), self._obs_template)
        self._forfeit = None
        self._episode_hand = self._game.hand_index
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self._game.actor]

    _forfeit: int | None = None

    def last(self, observe: bool = True) -> tuple:
        """PettingZoo's ``last()``. Once every agent has left the finished episode (where ``agent_iter`` stops)
        there is no current agent: a RuntimeError that says so, not a KeyError."""
        if self.agent_selection not in self._cumulative_rewards:
            raise RuntimeError("last(): the episode is over and every agent has left it; call reset() to start "
                               "another")
        return super().last(observe)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seats.get(agent)
        if seat is None:
            if agent not in self.possible_agents:
                raise ValueError(f"observe({clip(repr(agent))}): no such agent; the agents are {self.possible_agents}")
            seat = self.possible_agents.index(agent)
        game = self._game
        if game is None:
            raise RuntimeError("call reset() before using the environment")
        obs = self._obs_template.copy()
        _kernel.encode_obs(game._st, self._cfg_array, seat, obs)
        if game._st[_kernel.S_ACTOR] == seat and not self.terminations.get(agent, True) and self._forfeit is None:
            mask = game._mask.copy()
        else:
            mask = np.zeros(self._num_actions, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._game
        seat = game.actor
        action_id = as_action(action, self._num_actions)  # a wrong type or an id out of range raises, whatever illegal_action says
        illegal = action_id not in game._legal
        if illegal and self.illegal_action == "raise":
            game.apply(self.action_names[action_id])  # raises ValueError naming the action and the legal ones
        # (only now, so that a refused action leaves the rewards that last() reports as they were)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if illegal:
            self._forfeit = game.team_of(seat)
            self._team_rewards(-1.0 if game.team_of(seat) == 0 else 1.0)
            self._end_episode()
            return
        hand_before = game.hand_index
        game._apply_id(action_id)
        hand_ended = game.is_over or game.hand_index != hand_before
        if self.reward_mode == "points" and hand_ended:
            points = game.hand_points(hand_before)
            self._team_rewards(float(points[0] - points[1]))
        if game.is_over and self.reward_mode == "match" and game.winner is not None:
            self._team_rewards(1.0 if game.winner == 0 else -1.0)
        if game.is_over or (self.episode == "hand" and hand_ended):
            self._end_episode()
        else:
            self.agent_selection = self.possible_agents[game.actor]
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _team_rewards(self, team0_reward: float) -> None:
        for i, agent in enumerate(self.possible_agents):
            if agent in self.rewards:
                self.rewards[agent] = team0_reward if i % 2 == 0 else -team0_reward

    def _end_episode(self) -> None:
        for agent in self.agents:
            self.terminations[agent] = True
        self._accumulate_rewards()

    # -- views ----------------------------------------------------------------------------------------------

    def state(self) -> np.ndarray:
        """Full state for centralised critics: seat 0's observation and every seat's unplayed cards."""
        game = self.game
        size = observation_size(self.config)
        out = np.zeros(size + STATE_HANDS, dtype=np.float32)
        encode_observation(game, 0, out[:size])
        hands = out[size:].reshape(6, cards.NUM_CARDS)
        for seat in range(game.num_players):
            for card in game.remaining_cards(seat):
                hands[seat, card] = 1.0
        return out

    def information_state(self, agent: str) -> np.ndarray:
        """Observation plus the hand's public action history (perfect recall within a hand)."""
        return encode_information_state(self.game, self.possible_agents.index(agent))

    def information_state_string(self, agent: str) -> str:
        return information_state_string(self.game, self.possible_agents.index(agent))

    def match_record(self, include_legal: bool = False) -> dict:
        """The match so far in the record form of docs/records.md (JSON-serialisable)."""
        if self._game is None:
            raise RuntimeError("call reset() before using the environment")
        return self._game.match_record(include_legal=include_legal)

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        viewer = self.possible_agents.index(self.agent_selection) if self.agents else None
        text = render_text(self.game, viewer)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def raw_env(preset: str = "argentine", **kwargs: Any) -> TrucoEnv:
    """The unwrapped environment."""
    return TrucoEnv(preset, **kwargs)


def _forwarded(name: str) -> property:
    """A wrapper attribute read straight from the environment once reset (PettingZoo's wrappers find it through
    ``__getattr__``, which first fails a normal lookup: the slowest path of an AEC loop)."""

    def get(self: Any) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    def set_(self: Any, value: Any) -> None:
        setattr(self.env, name, value)

    return property(get, set_)


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order-enforcing wrapper with the same checks and errors, minus its per-access overhead:
    the attributes an AEC loop reads every step are properties, and ``last()`` reads the environment once."""

    agents = _forwarded("agents")
    agent_selection = _forwarded("agent_selection")
    rewards = _forwarded("rewards")
    terminations = _forwarded("terminations")
    truncations = _forwarded("truncations")
    infos = _forwarded("infos")

    def last(self, observe: bool = True) -> tuple:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)

    def __str__(self) -> str:
        return str(self.env)


def env(preset: str = "argentine", **kwargs: Any) -> AECEnv:
    """The environment wrapped in PettingZoo's order-enforcing wrapper (actions are checked by the env itself,
    so a bad one raises ``ValueError`` rather than an assertion)."""
    return _OrderEnforcing(raw_env(preset, **kwargs))
