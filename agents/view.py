"""Decode an observation vector (``truco_env.encoding`` layout) into plain Python values.

Why a decoder: rule-based agents must act only on what their seat may know, i.e. on ``obs["observation"]`` and
``obs["action_mask"]``. This module reads every field through ``OBS_OFFSETS`` so that agents never touch the
engine state and never hard-code offsets. Seats are *relative* (0 = the observer, 1 = the next seat in playing
order, ...); relative seats of even parity are the observer's team in every preset.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

import truco_env.cards
from truco_env import actions, senas
from truco_env.cards import (
    ARGENTINE,
    ARGENTINE_STRENGTH,
    FAMILIES,
    NUM_CARDS,
    PAULISTA_STRENGTH,
    URUGUAYAN,
    URUGUAYAN_STRENGTH,
)
from truco_env.config import PRESETS
from truco_env.encoding import (
    ENVIDO_SCALE,
    ENVIDO_STATUS,
    FLOR_CALL_NAMES,
    FLOR_SCALE,
    FLOR_STATUS,
    MAX_SEATS,
    MAX_TRICKS,
    OBS_OFFSETS,
    OBSERVATION_SIZE,
    OBSERVATION_SIZE_URUGUAYAN,
    OPTION_BITS,
    PHASES,
    SENAS_OFFSETS,
    URUGUAYAN_OFFSETS,
    URUGUAYAN_OPTION_BITS,
)

OWN, OPP, TIE = 0, 1, -1  # trick results from the observer's side
ENVIDO_CALL_NAMES = ("envido", "real_envido", "falta_envido")
#: Option names with a boolean meaning, keyed as ``"name"`` or ``"name=value"`` for the string-valued ones.
OPTION_KEYS = tuple(name if value is True else f"{name}={value}" for name, value in OPTION_BITS)


def _slice(obs: np.ndarray, name: str) -> np.ndarray:
    start, end = OBS_OFFSETS[name]
    return obs[start:end]


def _hot(obs: np.ndarray, name: str) -> int | None:
    nz = np.flatnonzero(_slice(obs, name))
    return int(nz[0]) if nz.size else None


def _cards(obs: np.ndarray, name: str) -> list[int]:
    return [int(c) for c in np.flatnonzero(_slice(obs, name))]


@dataclass
class View:
    """Everything one seat knows at a decision, decoded from its observation and mask."""

    family: str
    num_players: int
    hand_size: int
    target: int
    score: tuple[int, int]  # (own team, opponents)
    hand: list[int]  # own unplayed card indices (empty in a blind mão de ferro)
    hand_slots: list[int]  # own unplayed dealt slots
    partner_cards: list[int]  # visible partners' cards (2v2 mão de onze only)
    table: list[dict[int, int]]  # per trick: relative seat -> face-up card index
    covered: list[set[int]]  # per trick: relative seats that played face down
    trick_results: list[int]  # OWN / OPP / TIE per finished trick
    trick_index: int
    trick_leader: int  # relative seat that led the current trick
    vira: int | None
    manilha_rank: int | None
    truco_level: int
    hand_value: int
    raise_holder: str  # "none" | "own" | "opp"
    pending_level: int  # 0 = nothing pending
    pending_by_own: bool
    envido_calls: list[tuple[str, bool]]  # (call, made by own team)
    envido_status: str
    envido_shown: dict[int, int | None]  # relative seat -> announced points (None: son buenas)
    flor_calls: list[tuple[str, bool]]
    flor_status: str
    flor_holders: set[int]
    own_envido: int
    own_flor: int | None
    mano: int
    dealer: int
    participants: list[int]  # relative seats playing this hand, in playing order from seat 0
    phase: str
    mao_de_onze: bool
    mao_de_ferro: bool
    blind: bool
    options: dict[str, bool]
    legal: list[int]  # legal action ids
    legal_names: list[str] = field(default_factory=list)
    signals: dict[int, str] = field(default_factory=dict)  # señas: relative seat -> gesture seen this hand
    sena_table: bool = False  # señas carry the common table's meaning (sena_code = table)

    # ---- derived helpers -------------------------------------------------------------------------------

    @property
    def strength(self) -> tuple[int, ...]:
        """Trick strength of every card index for this hand (Paulista: from the manilha rank; Uruguayan: from the
        muestra)."""
        if self.family == ARGENTINE:
            return ARGENTINE_STRENGTH
        if self.family == URUGUAYAN:
            return URUGUAYAN_STRENGTH[self.vira if self.vira is not None else 0]
        return PAULISTA_STRENGTH[self.manilha_rank if self.manilha_rank is not None else 0]

    def deck(self) -> tuple[int, ...]:
        """The deck in play. ``deck_ranks`` of the research variants is not in the observation; for a one-hand
        match it is taken from the shipped preset with the same family, players and hand size (the rules of a
        game are public), provided every card seen belongs to it; otherwise the family's whole deck."""
        paulista_deck = "clean" if self.options.get("deck=clean") else "dirty"
        full = truco_env.cards.deck(self.family, paulista_deck)
        if not self.options.get("single_hand"):
            return full
        seen = set(self.hand) | set(self.partner_cards) | {c for t in self.table for c in t.values()}
        if self.vira is not None:
            seen.add(self.vira)
        for config in PRESETS.values():
            if (config.single_hand and config.deck_ranks and config.family == self.family
                    and config.num_players == self.num_players and config.hand_size == self.hand_size):
                reduced = truco_env.cards.deck(self.family, paulista_deck, config.deck_ranks)
                if seen <= set(reduced):
                    return reduced
        return full

    def played_by(self, rel: int) -> list[int]:
        """Face-up cards ``rel`` has played in this hand."""
        return [t[rel] for t in self.table if rel in t]

    def num_played(self, rel: int) -> int:
        return sum(1 for t in self.table if rel in t) + sum(1 for c in self.covered if rel in c)

    def current_trick_order(self) -> list[int]:
        """Participants in playing order for the current trick, starting at its leader."""
        seats = self.participants
        i = seats.index(self.trick_leader) if self.trick_leader in seats else 0
        return seats[i:] + seats[:i]

    def is_own(self, rel: int) -> bool:
        return rel % 2 == 0

    def name_of(self, action: int) -> str:
        return actions.action_name(action, self.family)


def _tricks(obs: np.ndarray) -> tuple[list[dict[int, int]], list[set[int]], list[str]]:
    """Per trick: the face-up cards by relative seat, the seats that played face down; the finished tricks'
    results."""
    table_raw = _slice(obs, "table").reshape(MAX_TRICKS, MAX_SEATS, NUM_CARDS)
    covered_raw = _slice(obs, "covered").reshape(MAX_TRICKS, MAX_SEATS)
    table: list[dict[int, int]] = []
    covered: list[set[int]] = []
    for t in range(MAX_TRICKS):
        seats, cards = np.nonzero(table_raw[t])
        table.append({int(s): int(c) for s, c in zip(seats, cards)})
        covered.append({int(s) for s in np.flatnonzero(covered_raw[t])})
    results = []
    for row in _slice(obs, "trick_results").reshape(MAX_TRICKS, 3):
        nz = np.flatnonzero(row)
        if nz.size:
            results.append((OWN, OPP, TIE)[int(nz[0])])
    return table, covered, results


def _calls(obs: np.ndarray, name: str, names: tuple[str, ...], slots: int) -> list[tuple[str, bool]]:
    """A chain of calls: (call, made by the viewer's side) in order."""
    out = []
    for row in _slice(obs, name).reshape(slots, 5):
        nz = np.flatnonzero(row[:3])
        if nz.size:
            out.append((names[int(nz[0])], bool(row[3] > 0)))
    return out


def _shown(obs: np.ndarray, name: str, scale: float) -> dict[int, int | None]:
    """Points shown (or declined: None) by relative seat."""
    out: dict[int, int | None] = {}
    for rel, row in enumerate(_slice(obs, name).reshape(MAX_SEATS, 3)):
        if row[0] > 0:
            out[rel] = round(float(row[1]) * scale)
        elif row[2] > 0:
            out[rel] = None
    return out


def decode(observation: dict[str, Any]) -> View:
    """Decode ``{"observation", "action_mask"}`` into a :class:`View`."""
    obs = np.asarray(observation["observation"])
    mask = np.asarray(observation["action_mask"])
    uruguayan = len(obs) == OBSERVATION_SIZE_URUGUAYAN and obs[URUGUAYAN_OFFSETS["uruguayan"][0]] > 0
    family = URUGUAYAN if uruguayan else FAMILIES[_hot(obs, "family") or 0]
    num_players = (2, 4, 6)[_hot(obs, "num_players") or 0]
    size_index = _hot(obs, "hand_size")
    hand_size = 3 if size_index is None else size_index + 1
    if uruguayan:  # the common field stops at 30, this family's own at 40
        target = max(1, round(float(obs[URUGUAYAN_OFFSETS["uruguayan_target"][0]]) * 40))
    else:
        target = max(1, round(float(_slice(obs, "target")[0]) * 30))
    envido_scale = ENVIDO_SCALE[family]
    flor_scale = FLOR_SCALE[family]
    score_raw = _slice(obs, "score")
    score = (round(float(score_raw[0]) * target), round(float(score_raw[1]) * target))

    table, covered, results = _tricks(obs)

    pending = _hot(obs, "pending_truco") or 0
    holder = ("none", "own", "opp")[_hot(obs, "raise_holder") or 0]

    own_points = _slice(obs, "own_points")
    special = _slice(obs, "special_hand")
    options = {key: bool(v > 0) for key, v in zip(OPTION_KEYS, _slice(obs, "options"))}
    if uruguayan:  # the family's own options, keyed as the common ones ("name=value")
        start = URUGUAYAN_OFFSETS["uruguayan_options"][0]
        for i, (name, value) in enumerate(URUGUAYAN_OPTION_BITS):
            options[f"{name}={value}"] = bool(obs[start + i] > 0)
    participants = [int(s) for s in np.flatnonzero(_slice(obs, "participants"))] or list(range(num_players))
    phase_index = _hot(obs, "phase")
    legal = [int(a) for a in np.flatnonzero(mask)]
    vira = _hot(obs, "vira")
    view = View(
        family=family,
        num_players=num_players,
        hand_size=hand_size,
        target=target,
        score=score,
        hand=_cards(obs, "hand"),
        hand_slots=_cards(obs, "hand_slots"),
        partner_cards=_cards(obs, "partner_cards"),
        table=table,
        covered=covered,
        trick_results=results,
        trick_index=_hot(obs, "trick_index") or 0,
        trick_leader=_hot(obs, "trick_leader") or 0,
        vira=vira,
        manilha_rank=_hot(obs, "manilha_rank"),
        truco_level=_hot(obs, "truco_level") or 0,
        hand_value=round(float(_slice(obs, "hand_value")[0]) * 12),
        raise_holder=holder,
        pending_level=pending,
        pending_by_own=bool(_slice(obs, "pending_truco_by")[0] > 0),
        envido_calls=_calls(obs, "envido_calls", ENVIDO_CALL_NAMES, 4),
        envido_status=ENVIDO_STATUS[_hot(obs, "envido_status") or 0],
        envido_shown=_shown(obs, "envido_shown", envido_scale),
        flor_calls=_calls(obs, "flor_calls", FLOR_CALL_NAMES, 3),
        flor_status=FLOR_STATUS[_hot(obs, "flor_status") or 0],
        flor_holders={int(s) for s in np.flatnonzero(_slice(obs, "flor_holders"))},
        own_envido=round(float(own_points[0]) * envido_scale),
        own_flor=round(float(own_points[1]) * flor_scale) if own_points[1] > 0 else None,
        mano=_hot(obs, "mano") or 0,
        dealer=_hot(obs, "dealer") or 0,
        participants=participants,
        phase=PHASES[phase_index] if phase_index is not None else "over",
        mao_de_onze=bool(special[0] > 0),
        mao_de_ferro=bool(special[1] > 0),
        blind=bool(special[2] > 0),
        options=options,
        legal=legal,
    )
    view.legal_names = [view.name_of(a) for a in legal]
    if len(obs) > OBSERVATION_SIZE and not uruguayan:  # the señas block (games with señas only)
        start, end = SENAS_OFFSETS["senas_seen"]
        for rel, gesture in zip(*np.nonzero(obs[start:end].reshape(MAX_SEATS, len(senas.GESTURES)))):
            view.signals[int(rel)] = senas.GESTURES[int(gesture)]
        view.sena_table = bool(obs[SENAS_OFFSETS["sena_code"][0]] > 0)
    return view
