"""OpenSpiel adapter: one-hand 1v1 Truco games (the research presets) as pyspiel Python games.

Optional extra: ``pip install -c constraints.txt -e ".[spiel]"`` (open-spiel). Importing this module registers
``truco_argentine_mini`` and ``truco_paulista_mini`` (one per research preset, ``truco_<preset>`` with ``_`` for
``-``), so OpenSpiel's own algorithms run on our rules engine::

    import pyspiel
    import truco_env.spiel  # registers the games
    game = pyspiel.load_game("truco_argentine_mini")                       # the preset as it is
    small = pyspiel.load_game("truco_argentine_mini", {"deck_ranks": "7", "target_score": 3})

Game parameters (all optional): ``deck_ranks`` (comma-separated ranks, e.g. ``"1,7,3"``; empty = the preset's),
``target_score`` (0 = the preset's), ``hand_size`` (0 = the preset's). Or build one from any config:
``TrucoSpielGame.from_config(make_config("paulista-mini", deck_ranks=("K", "A", "2")))``.

Mapping (the same game as :mod:`training.learn.cfr.tree` walks, so policies and values carry over exactly):

* chance: the dealer (outcome 0 or 1, each 1/2), then player 0's hand, then player 1's hand (outcome = index
  of the card combination among those left, in deck order, all equally likely), then the vira (Paulista; the
  card index among those left). Probabilities multiply to the engine's uniform shuffle.
* player actions are the unified action ids of :mod:`truco_env.actions` (98 distinct actions).
* ``information_state_string`` is :func:`truco_env.encoding.information_state_string` (perfect recall);
  ``observation_string`` drops the action history (the current observation only). Tensors are the
  project's encoders: the information-state tensor and the observation tensor.
* returns: ``[d, -d]`` with ``d = hand_points[0] - hand_points[1]`` (zero-sum).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyspiel

from . import actions, cards
from .config import PRESETS, TrucoConfig, make_config
from .encoding import (
    encode_information_state,
    encode_observation,
    information_state_string,
)
from .engine import LADDER_VALUES, TrucoState

RESEARCH_PRESETS = tuple(name for name, cfg in PRESETS.items() if cfg.single_hand and cfg.num_players == 2)
_PARAM_DEFAULTS = {"deck_ranks": "", "target_score": 0, "hand_size": 0}


def game_name(preset: str) -> str:
    return "truco_" + preset.replace("-", "_")


def config_from_params(preset: str, params: dict) -> TrucoConfig:
    """The config of ``preset`` with the game parameters applied (defaults keep the preset's values)."""
    overrides = {}
    ranks = str(params.get("deck_ranks", "") or "").strip()
    if ranks:
        overrides["deck_ranks"] = tuple(r.strip() for r in ranks.split(",") if r.strip())
    if int(params.get("target_score", 0) or 0):
        overrides["target_score"] = int(params["target_score"])
    if int(params.get("hand_size", 0) or 0):
        overrides["hand_size"] = int(params["hand_size"])
    return make_config(preset, **overrides)


def _utility_bound(config: TrucoConfig) -> float:
    """A bound on |hand point difference| of one hand (GameInfo needs one; the exact range is in the tree)."""
    ladder = LADDER_VALUES[config.family][-1]
    if config.family == cards.PAULISTA:
        return float(max(ladder, 3) + config.target_score)
    flor = sum(config.flor_values.values()) if config.flor else 0
    return float(ladder + max(7, config.target_score) + flor)


class TrucoSpielGame(pyspiel.Game):
    """A one-hand 1v1 Truco game for OpenSpiel (see the module docstring)."""

    def __init__(self, params: dict | None = None, preset: str = "argentine-mini",
                 config: TrucoConfig | None = None):
        params = dict(params or {})
        self.preset = preset
        self.config = config if config is not None else config_from_params(preset, params)
        cfg = self.config
        if cfg.num_players != 2 or not cfg.single_hand:
            raise ValueError("the OpenSpiel adapter plays one-hand 1v1 games (single_hand=True, num_players=2)")
        self.deck = cards.deck(cfg.family, cfg.deck, cfg.deck_ranks)
        self.shared = _Shared(cfg, self.deck)
        n, k = len(self.deck), cfg.hand_size
        bound = _utility_bound(cfg)
        game_type = _game_type(game_name(preset))
        info = pyspiel.GameInfo(
            num_distinct_actions=actions.NUM_ACTIONS,
            max_chance_outcomes=max(2, math.comb(n, k), n),
            num_players=2,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=64)
        full = {**_PARAM_DEFAULTS, **{key: params[key] for key in params if key in _PARAM_DEFAULTS}}
        super().__init__(game_type, info, full)

    @classmethod
    def from_config(cls, config: TrucoConfig, preset: str = "custom") -> TrucoSpielGame:
        return cls({}, preset=preset, config=config)

    def new_initial_state(self):
        return TrucoSpielState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return TrucoObserver(perfect_recall, params)


class _Box:
    """Holds the engine state; OpenSpiel clones Python states by deep-copying attributes, and this makes that
    copy the engine's own cheap ``clone()``."""

    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state

    def __deepcopy__(self, memo):
        return _Box(None if self.state is None else self.state.clone())


class _Shared:
    """Read-only data every state of a game shares: deep copies return the same object."""

    __slots__ = ("config", "deck")

    def __init__(self, config, deck):
        self.config, self.deck = config, deck

    def __deepcopy__(self, memo):
        return self


class TrucoSpielState(pyspiel.State):
    def __init__(self, game: TrucoSpielGame):
        super().__init__(game)
        self._shared = game.shared
        self._dealt = ()  # chance outcomes so far: dealer, hand0 (tuple), hand1 (tuple)[, vira]
        self._engine = _Box(None)

    # --- chance -----------------------------------------------------------------------------------------
    def _remaining_deck(self):
        used = set(itertools.chain.from_iterable(h for h in self._dealt[1:]))
        return [c for c in self._shared.deck if c not in used]

    def _chance_options(self):
        stage = len(self._dealt)
        if stage == 0:
            return [0, 1]
        rest = self._remaining_deck()
        if stage in (1, 2):
            return list(itertools.combinations(rest, self._shared.config.hand_size))
        return [(c,) for c in rest]

    def _chance_done(self) -> bool:
        return len(self._dealt) == (4 if self._shared.config.family == cards.PAULISTA else 3)

    def current_player(self):
        if not self._chance_done():
            return pyspiel.PlayerId.CHANCE
        state = self._engine.state
        if state.is_over:
            return pyspiel.PlayerId.TERMINAL
        return state.actor

    def chance_outcomes(self):
        options = self._chance_options()
        p = 1.0 / len(options)
        return [(i, p) for i in range(len(options))]

    def _legal_actions(self, player):
        family = self._shared.config.family
        return sorted(actions.action_id(a, family) for a in self._engine.state.legal_actions())

    def _apply_action(self, action):
        if not self._chance_done():
            options = self._chance_options()
            self._dealt = self._dealt + (options[action],)
            if self._chance_done():
                fam = self._shared.config.family
                hands = [[cards.card_text(c, fam) for c in h] for h in self._dealt[1:3]]
                vira = cards.card_text(self._dealt[3][0], fam) if fam == cards.PAULISTA else None
                self._engine = _Box(TrucoState.new(self._shared.config, seed=0, deal={"hands": hands, "vira": vira,
                                                                             "dealer": self._dealt[0]}))
            return
        self._engine.state.apply(actions.action_name(int(action), self._shared.config.family))

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            stage = len(self._dealt)
            if stage == 0:
                return f"dealer:{action}"
            option = self._chance_options()[action]
            names = ",".join(cards.card_text(c, self._shared.config.family) for c in option)
            return ("vira:" if stage == 3 else f"hand{stage - 1}:") + names
        return actions.action_name(int(action), self._shared.config.family)

    def is_terminal(self):
        return self._chance_done() and self._engine.state.is_over

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0]
        hp = self._engine.state.hand_points
        d = float(hp[0] - hp[1])
        return [d, -d]

    def engine_state(self) -> TrucoState | None:
        """The engine state once the deal is complete (None before)."""
        return self._engine.state

    def __str__(self):
        state = self._engine.state
        if state is None:
            return f"dealing {self._dealt}"
        rec = state.hand_records[-1]
        return f"{rec['deal']} {rec['actions']}"


class TrucoObserver:
    """PyObserver: the information state (perfect recall) or the observation of one player."""

    def __init__(self, perfect_recall: bool, params):
        if params:
            raise ValueError(f"observation parameters not supported; passed {params}")
        self.perfect_recall = perfect_recall
        from .encoding import INFO_STATE_SIZE, OBSERVATION_SIZE
        size = INFO_STATE_SIZE if perfect_recall else OBSERVATION_SIZE
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"info_state" if perfect_recall else "observation": self.tensor}

    def set_from(self, state, player):
        engine = state.engine_state()
        self.tensor.fill(0.0)
        if engine is None:
            return
        if self.perfect_recall:
            self.tensor[:] = encode_information_state(engine, player)
        else:
            encode_observation(engine, player, self.tensor)

    def string_from(self, state, player):
        engine = state.engine_state()
        if engine is None:
            return f"p{player}|dealing"
        key = information_state_string(engine, player)
        if self.perfect_recall:
            return key
        head, _, shown = key.rpartition("|")
        return head.split(":", 1)[0] + "|" + shown  # own cards, vira, score, dealer and the shown points


def _game_type(short_name: str) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=short_name,
        long_name="Truco " + short_name.removeprefix("truco_"),
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(_PARAM_DEFAULTS),
    )


def _preset_class(preset: str) -> type:
    """A subclass per preset (OpenSpiel calls the registered class with the parameters only)."""

    def __init__(self, params=None):
        TrucoSpielGame.__init__(self, params, preset=preset)

    name = "TrucoSpielGame_" + preset.replace("-", "_")
    cls = type(name, (TrucoSpielGame,), {"__init__": __init__, "__module__": __name__})
    globals()[name] = cls
    return cls


def register_all() -> list[str]:
    """Register every research preset with OpenSpiel (idempotent); returns the game names."""
    names = []
    registered = set(pyspiel.registered_names())
    for preset in RESEARCH_PRESETS:
        name = game_name(preset)
        names.append(name)
        if name not in registered:
            pyspiel.register_game(_game_type(name), _preset_class(preset))
    return names


register_all()
