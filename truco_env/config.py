"""The rules configuration: every field of docs/rules.md §5, validated once, and the presets.

Why a frozen, validated dataclass: the engine reads the rules from here instead of branching into two copies of
the game, so a bad value must be stopped at construction with a message that names the field and what is
allowed, never deep inside a match. Fields that belong to the other family must keep their default (rejected,
consistently, rather than silently ignored), so that a record's ``rules`` dict always rebuilds the same game.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any

from . import cards
from .cards import ARGENTINE, ENVIDO_FAMILIES, FAMILIES, PAULISTA, URUGUAYAN
from .limits import clip

DEFAULT_FLOR_VALUES = {
    "uncontested_per_flor": 3,
    "contested_per_flor": 3,
    "achico": 4,
    "contraflor_quiero": 6,
    "contraflor_no_quiero": 4,
    "resto_bonus_per_flor": 3,
    "resto_no_quiero_direct": 4,
    "resto_no_quiero_after_contraflor": 6,
}

#: Fields that take one of a fixed set of strings.
CHOICES = {
    "family": FAMILIES,
    "deal_rotation": ("with_play", "against_play"),
    "responder": ("next_opponent", "team_pie"),
    "lead_after_tie": ("same_leader", "first_tied_card", "next_after_leader"),
    "falta_envido": ("leader_needs", "malas_match", "whole_match", "winner_to_buenas", "leader_to_buenas"),
    "envido_tie": ("closest_to_mano", "mano_team"),
    "envido_openers": ("any", "pie_only"),
    "deck": ("dirty", "clean"),
    "all_tricks_tied": ("no_points", "dealer_team", "mao_team"),
    "mao_de_onze_decider": ("first", "any_accepts"),
    "mao_de_onze_truco": ("illegal", "caller_loses_match"),
    "sena_code": ("table", "free"),
    "envido_refusal": ("previous_sum", "previous_sum_plus_one"),
    "pica_pica_until": ("end_of_malas", "target_minus_5"),
    "flor_before_answer": ("declare", "refuse_unsung"),
    "flor_scoring": ("table", "per_flor_refusals"),
    "flor_raise_by": ("either_team", "unsung_holder"),
    "fold_against_unsung_flor": ("score_flor", "flor_lost"),
    "mazo_scope": ("team", "player"),
}

MAX_TARGET = 1000  # far above any real match; keeps scores in records small

#: Fields of the envido families (Argentine and Uruguayan): a Paulista config keeps their defaults.
ARGENTINE_ONLY = (
    "malas_buenas", "falta_envido", "envido_tie", "envido_openers", "envido_after_truco_accepted",
    "envido_primero", "envido_primero_after_played", "flor", "flor_values", "mazo_first_trick_bonus", "pica_pica",
    "senas", "sena_catch", "sena_code",
)
#: Readings of the falta envido stated for Uruguayan Truco alone (rules.md §8.5): to the end of the malas.
URUGUAYAN_FALTAS = ("winner_to_buenas", "leader_to_buenas")
#: Fields of Uruguayan Truco alone (docs/rules.md §8.9).
URUGUAYAN_ONLY = ("plain_flor_base", "envido_refusal", "falta_adds_chain", "pica_pica_until", "flor_before_answer",
                  "trick_tie_to_mano", "flor_scoring", "flor_raise_by", "fold_against_unsung_flor", "mazo_scope")
#: Family defaults of the fields whose default depends on the family (None in the dataclass resolves to these).
FAMILY_DEFAULTS = {
    "target_score": {ARGENTINE: 30, PAULISTA: 12, URUGUAYAN: 40},
    "flor": {ARGENTINE: False, PAULISTA: False, URUGUAYAN: True},
    "falta_envido": {ARGENTINE: "leader_needs", PAULISTA: "leader_needs", URUGUAYAN: "malas_match"},
}
#: The señas fields: a record or a ``to_dict`` leaves them out while ``senas`` is off (they must then keep their
#: defaults), so every game without signals has the record it had before they existed.
SENAS_FIELDS = ("senas", "sena_catch", "sena_code")
PAULISTA_ONLY = (
    "deck", "all_tricks_tied", "mao_de_onze", "mao_de_onze_decider", "mao_de_onze_truco", "mao_de_ferro",
    "mao_de_ferro_blind", "forbid_useless_raise", "covered_card", "paulista_mazo",
)


@dataclass(frozen=True)
class TrucoConfig:
    """Rules of one game (docs/rules.md §5). Build it with :func:`make_config` or ``TrucoConfig.from_dict``."""

    family: str = ARGENTINE
    num_players: int = 2
    target_score: int | None = None  # None: 30 for argentine, 12 for paulista, 40 for uruguayan
    deal_rotation: str = "with_play"
    responder: str = "next_opponent"
    lead_after_tie: str = "same_leader"
    partner_tie_wins_trick: bool = True
    end_match_immediately: bool = True
    # Argentine
    malas_buenas: bool | None = None  # None: on iff target_score is even
    falta_envido: str | None = None  # None: "leader_needs", in uruguayan "malas_match"
    envido_tie: str = "closest_to_mano"
    envido_openers: str = "any"
    envido_after_truco_accepted: bool = False
    envido_primero: bool = True
    envido_primero_after_played: bool = True
    flor: bool | None = None  # None: off, in uruguayan on
    flor_values: dict = field(default_factory=lambda: dict(DEFAULT_FLOR_VALUES))
    mazo_first_trick_bonus: bool = False
    pica_pica: bool = False
    senas: bool = False  # partner signals (team play only)
    # Why a quarter: signals are made to be quick and partners know where to look, so most go unseen; at 1/4
    # an honest team still leaks its best cards about once in four signals, enough that lying can pay.
    sena_catch: float = 0.25
    sena_code: str = "table"
    # Paulista
    deck: str = "dirty"
    all_tricks_tied: str = "no_points"
    mao_de_onze: bool = True
    mao_de_onze_decider: str = "first"
    mao_de_onze_truco: str = "illegal"
    mao_de_ferro: bool = True
    mao_de_ferro_blind: bool = True
    forbid_useless_raise: bool = False
    covered_card: bool = False
    paulista_mazo: bool = False
    # Uruguayan
    plain_flor_base: int = 20  # what a flor without a pieza adds to its three values (pytruco's reading: 0)
    envido_refusal: str = "previous_sum"  # a refused envido chain pays the calls before the refused one (+1: pytruco)
    falta_adds_chain: bool = False  # an accepted falta envido also pays the calls before it (pytruco's reading)
    pica_pica_until: str = "end_of_malas"  # duels stop once a team has half the target ("target_minus_5": 5 from it)
    flor_before_answer: str = "declare"  # a flor holder challenged by a truco declares first ("refuse_unsung": pytruco)
    trick_tie_to_mano: bool = False  # a tied trick goes to the mano's team when it holds a top card ([BAN])
    flor_scoring: str = "table"  # a flor contest pays flor_values ("per_flor_refusals": pytruco's 3 a flor, +1)
    flor_raise_by: str = "either_team"  # who may raise a flor contest ("unsung_holder": a team yet to sing, pytruco)
    fold_against_unsung_flor: str = "score_flor"  # a fold pays the other team's unsung flor ("flor_lost": pytruco)
    mazo_scope: str = "team"  # a fold concedes for the team ("player": the folder alone leaves the hand, pytruco)
    # Research variants (small games solvable exactly; docs/rules.md §5.3)
    deck_ranks: tuple | None = None  # None: the family's whole deck; else the ranks kept, e.g. ("1", "7", "3")
    hand_size: int = 3  # cards dealt to each player, 1..3 (= number of tricks)
    single_hand: bool = False  # the match is one hand; its winner is the team that scored more in it

    def __post_init__(self) -> None:
        if self.family in FAMILIES:
            for name, defaults in FAMILY_DEFAULTS.items():
                if getattr(self, name) is None:
                    object.__setattr__(self, name, defaults[self.family])
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"config field {clip(repr(name))} = {clip(repr(value))} is not allowed; choose one of {list(allowed)}")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.type in ("bool", "bool | None") and not (isinstance(value, bool) or value is None and f.type != "bool"):
                raise ValueError(f"config field {clip(repr(f.name))} must be true or false, got {clip(repr(value))}")
        if type(self.num_players) is not int or self.num_players not in (2, 4, 6):
            raise ValueError(f"config field 'num_players' = {clip(repr(self.num_players))} is not allowed; choose 2, 4 or 6")
        if self.family == PAULISTA and self.num_players == 6:
            raise ValueError("config field 'num_players' = 6 is only for the argentine and uruguayan families; "
                             "paulista allows 2 or 4")
        if (not isinstance(self.target_score, int) or isinstance(self.target_score, bool)
                or not 1 <= self.target_score <= MAX_TARGET):
            raise ValueError(f"config field 'target_score' must be an integer > 0 and <= {MAX_TARGET}, "
                             f"got {clip(repr(self.target_score))}")
        if self.malas_buenas is None:
            object.__setattr__(self, "malas_buenas", self.target_score % 2 == 0)
        self._check_flor_values()
        self._check_research_fields()
        if self.pica_pica and self.num_players != 6:
            raise ValueError("config field 'pica_pica' = True needs num_players = 6 (it is a 3v3 variant)")
        if not self.pica_pica and self.pica_pica_until != "end_of_malas":
            raise ValueError("config field 'pica_pica_until' applies only with pica_pica = True (leave it at its "
                             "default 'end_of_malas')")
        self._check_senas()
        self._check_other_family_defaults()

    def _check_flor_values(self) -> None:
        values = self.flor_values
        if not isinstance(values, dict) or set(values) != set(DEFAULT_FLOR_VALUES):
            got = clip(sorted(values, key=repr)) if isinstance(values, dict) else clip(repr(values))
            raise ValueError(
                f"config field 'flor_values' must be a dict with exactly the keys {sorted(DEFAULT_FLOR_VALUES)}, "
                f"got {got}")
        for key, value in values.items():
            # bounded as the target is: the compiled engine keeps points in 32 bits and a record's scores below 10**6
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_TARGET:
                raise ValueError(f"config field 'flor_values[{clip(repr(key))}]' must be an integer 0..{MAX_TARGET}, "
                                 f"got {clip(repr(value))}")
        object.__setattr__(self, "flor_values", dict(values))

    def _check_senas(self) -> None:
        catch = self.sena_catch
        if not isinstance(catch, (int, float)) or isinstance(catch, bool) or not 0.0 <= catch <= 1.0:
            raise ValueError(f"config field 'sena_catch' must be a probability between 0 and 1, got {clip(repr(catch))}")
        object.__setattr__(self, "sena_catch", float(catch))
        if self.senas and self.num_players == 2:
            raise ValueError("config field 'senas' = True needs a team game (num_players = 4 or 6): signals go "
                             "between partners")
        if not self.senas and (self.sena_catch != 0.25 or self.sena_code != "table"):
            name = "sena_catch" if self.sena_catch != 0.25 else "sena_code"
            raise ValueError(f"config field {name!r} applies only with senas = True (leave it at its default "
                             f"{getattr(TrucoConfig, name)!r})")

    def _check_research_fields(self) -> None:
        if type(self.hand_size) is not int or not 1 <= self.hand_size <= 3:
            raise ValueError(f"config field 'hand_size' = {clip(repr(self.hand_size))} is not allowed; choose 1, 2 or 3")
        if self.deck_ranks is None:
            return
        family_ranks = (cards.PAULISTA_DECK_RANKS[self.deck] if self.family == PAULISTA else cards.SPANISH_RANKS)
        ranks = self.deck_ranks
        if (not isinstance(ranks, (list, tuple)) or not ranks or not all(isinstance(r, str) for r in ranks)
                or len(set(ranks)) != len(ranks)
                or any(r not in family_ranks for r in ranks)):
            raise ValueError(f"config field 'deck_ranks' = {clip(repr(ranks))} is not allowed; give distinct ranks from "
                             f"{list(family_ranks)}")
        needed = self.hand_size * self.num_players + (1 if self.family in cards.TURNED_CARD_FAMILIES else 0)
        if 4 * len(ranks) < needed:
            raise ValueError(f"config field 'deck_ranks' = {list(ranks)} gives {4 * len(ranks)} cards; "
                             f"this game deals {needed}")
        # canonical order: the family's own rank order, stored as a tuple (hashable, JSON as a list)
        object.__setattr__(self, "deck_ranks", tuple(r for r in family_ranks if r in ranks))

    def _check_other_family_defaults(self) -> None:
        owners = {name: (PAULISTA,) for name in PAULISTA_ONLY}
        owners.update({name: ENVIDO_FAMILIES for name in ARGENTINE_ONLY})
        owners.update({name: (URUGUAYAN,) for name in URUGUAYAN_ONLY})
        # señas are specified with the Argentine signal table only (docs/rules.md §3.13), not yet for Uruguayan Truco
        owners.update({name: (ARGENTINE,) for name in SENAS_FIELDS})
        defaults = TrucoConfig.__new__(TrucoConfig)  # raw defaults without validation
        for f in dataclasses.fields(self):
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            object.__setattr__(defaults, f.name, default)
        for name, families in owners.items():
            if self.family in families:
                continue
            value = getattr(self, name)
            default = getattr(defaults, name)
            if name == "malas_buenas":
                default = self.target_score % 2 == 0
            elif name in FAMILY_DEFAULTS:
                default = FAMILY_DEFAULTS[name][self.family]
            if value != default:
                raise ValueError(
                    f"config field {clip(repr(name))} applies only to the {' and '.join(families)} "
                    f"{'family' if len(families) == 1 else 'families'}, not to {clip(repr(self.family))} "
                    f"(leave it at its default {clip(repr(default))})")
        if self.falta_envido in URUGUAYAN_FALTAS and self.family != URUGUAYAN:
            raise ValueError(f"config field 'falta_envido' = {self.falta_envido!r} is a reading of the uruguayan family "
                             f"only (rules.md §8.5); choose one of {list(CHOICES['falta_envido'][:3])}")
        if self.flor_scoring != "table" and self.flor_values != DEFAULT_FLOR_VALUES:
            raise ValueError(f"config field 'flor_values' applies only with flor_scoring = 'table', not with "
                             f"{self.flor_scoring!r} (leave it at its default)")
        if type(self.plain_flor_base) is not int or self.plain_flor_base not in (0, 20):
            raise ValueError(f"config field 'plain_flor_base' = {clip(repr(self.plain_flor_base))} is not allowed; "
                             f"choose 20 (a flor without a pieza is 20 + its three values) or 0 (pytruco's reading)")

    def pica_pica_stop(self) -> int:
        """The score from which no more pica-pica deals are played (docs/rules.md §3.14, §8.8): the target less 5,
        or in Uruguayan Truco by default the end of the malas, half the target ([RSG])."""
        if self.family == URUGUAYAN and self.pica_pica_until == "end_of_malas":
            return self.target_score // 2
        return self.target_score - 5

    # ------------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Every field with its resolved value (JSON-serialisable), as stored in match records."""
        out = dataclasses.asdict(self)
        out["flor_values"] = dict(self.flor_values)
        out["deck_ranks"] = None if self.deck_ranks is None else list(self.deck_ranks)
        if not self.senas:
            for name in SENAS_FIELDS:
                del out[name]
        if self.family != URUGUAYAN:  # so that the records of the other families stay as they were
            for name in URUGUAYAN_ONLY:
                del out[name]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrucoConfig:
        """Rebuild a config from ``to_dict`` output (or a subset of fields); ValueError on unknown fields."""
        if not isinstance(data, dict):
            raise ValueError(f"rules must be a dict of config fields, got {type(data).__name__}")
        _check_field_names(data)
        return cls(**data)

    def replace(self, **overrides: Any) -> TrucoConfig:
        _check_field_names(overrides)
        data = self.to_dict()
        if "target_score" in overrides and "malas_buenas" not in overrides:
            data["malas_buenas"] = None  # re-derive the default from the new target
        data.update(overrides)
        return TrucoConfig(**data)

    @property
    def is_argentine(self) -> bool:
        return self.family == ARGENTINE


FIELD_NAMES = tuple(f.name for f in dataclasses.fields(TrucoConfig))


def _check_field_names(data: dict[str, Any]) -> None:
    unknown = [k for k in data if k not in FIELD_NAMES]
    if unknown:
        raise ValueError(f"unknown config field(s) {clip(unknown)}; allowed fields: {list(FIELD_NAMES)}")


PRESETS: dict[str, TrucoConfig] = {
    "argentine": TrucoConfig(family=ARGENTINE, num_players=2, target_score=30, flor=False),
    "argentine-flor": TrucoConfig(family=ARGENTINE, num_players=2, target_score=30, flor=True),
    "argentine-2v2": TrucoConfig(family=ARGENTINE, num_players=4, target_score=30, flor=False),
    "argentine-3v3": TrucoConfig(family=ARGENTINE, num_players=6, target_score=30, flor=False, pica_pica=False),
    # argentine-2v2 with partner signals (docs/rules.md §3.13)
    "argentine-2v2-senas": TrucoConfig(family=ARGENTINE, num_players=4, target_score=30, flor=False, senas=True),
    # ... with gestures that mean nothing until a team gives them a meaning: learned communication
    "argentine-2v2-senas-free": TrucoConfig(family=ARGENTINE, num_players=4, target_score=30, flor=False, senas=True,
                                            sena_code="free"),
    "paulista": TrucoConfig(family=PAULISTA, num_players=2, target_score=12, deck="dirty"),
    "paulista-2v2": TrucoConfig(family=PAULISTA, num_players=4, target_score=12, deck="dirty"),
    "paulista-clean": TrucoConfig(family=PAULISTA, num_players=2, target_score=12, deck="clean"),
    # Uruguayan Truco: the muestra and its piezas, 40 points, flor on (docs/rules.md §8.9)
    "uruguayan": TrucoConfig(family=URUGUAYAN, num_players=2),
    "uruguayan-2v2": TrucoConfig(family=URUGUAYAN, num_players=4),
    "uruguayan-3v3": TrucoConfig(family=URUGUAYAN, num_players=6, pica_pica=False),
    # Research variants: one hand, one card each, a small deck; solvable exactly (docs/rules.md §5.3).
    "argentine-mini": TrucoConfig(family=ARGENTINE, num_players=2, target_score=15, deck_ranks=("1", "3", "7"),
                                  hand_size=1, single_hand=True),
    "paulista-mini": TrucoConfig(family=PAULISTA, num_players=2, target_score=12, deck_ranks=("K", "A", "2"),
                                 hand_size=1, single_hand=True),
}


def unknown_preset(name: Any, allowed: Any = None) -> ValueError:
    """The one-line error for a preset name that is none of ``allowed`` (default: every preset): the name cut to a
    readable length, the closest names, and the allowed ones."""
    allowed = sorted(allowed if allowed is not None else PRESETS)
    close = (difflib.get_close_matches(name, allowed, n=2, cutoff=0.6)
             if isinstance(name, str) and len(name) <= 40 else [])
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return ValueError(f"unknown preset {clip(repr(name))}{hint} (the presets: {', '.join(allowed)})")


def make_config(preset: str = "argentine", **overrides: Any) -> TrucoConfig:
    """The config of ``preset`` with ``overrides`` applied; ValueError naming an unknown preset or field."""
    if not isinstance(preset, str):  # a list or a dict here is a misplaced argument; `in PRESETS` would TypeError
        raise ValueError(f"preset must be a preset name (a string), one of {sorted(PRESETS)}; got {clip(repr(preset))}")
    if preset not in PRESETS:
        raise unknown_preset(preset)
    if "family" in overrides and overrides["family"] != PRESETS[preset].family:
        raise ValueError(
            f"config field 'family' cannot be overridden ({clip(repr(overrides['family']))}) on preset {clip(repr(preset))}: "
            f"pick a preset of that family instead")
    return PRESETS[preset].replace(**overrides)
