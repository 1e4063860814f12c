"""The fast engine: the same matches as :class:`truco_env.engine.TrucoState`, on the compiled core of
:mod:`truco_env._kernel`.

``FastState`` has the engine's API for playing (``new``, ``legal_actions``, ``apply``, ``actor``, ``phase``,
``score``, ``is_over``, ``winner``, ``hand_index``, ``match_record``, ``clone``) plus integer entry points that
skip action names (``legal_mask``, ``apply_id``, ``encode_observation``). Deals come from the reference procedure
(``random.Random(f"{seed}:{k}")`` shuffling ``cards.deck(...)``), so a seeded match with the same actions is the
same match in both engines: ``tests/test_fast_engine.py`` demands identical records for thousands of matches.

``FastState.reference()`` returns a :class:`TrucoState` of the same match (built once, then kept in step by
applying the new actions), for everything the fast engine does not offer itself (rendering, information states).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

import truco_env.cards

from . import _kernel, senas
from .actions import _IDS, _NAMES, CALL_BASE, CALLS, num_actions
from .cards import (
    FAMILIES,
    NUM_CARDS,
    PAULISTA,
    TURNED_CARD_FAMILIES,
    card_text,
    manilha_rank_index,
)
from .config import CHOICES, DEFAULT_FLOR_VALUES, TrucoConfig
from .engine import (
    LADDER_CALLS,
    LADDER_VALUES,
    TrucoState,
    _check_score,
    _parse_deal,
    check_new_match,
    parse_next_deal,
)

_WORD_BITS = 32 * 160  # generator outputs drawn per deal: a 40-card shuffle needs about 55
PHASE_NAMES = ("play", "truco", "envido", "flor_declare", "flor_contest", "onze", "over", "deal")


def config_array(config: TrucoConfig) -> np.ndarray:
    """The rules as the int32 vector the kernel reads (layout: ``truco_env._kernel.C_*``)."""
    c = config
    cfg = np.zeros(_kernel.CFG_SIZE, dtype=np.int32)
    from .encoding import point_scales

    family = FAMILIES.index(c.family)
    envido_scale, flor_scale = point_scales(c)
    values = {
        _kernel.C_FAMILY: family, _kernel.C_N: c.num_players, _kernel.C_TARGET: c.target_score,
        _kernel.C_ROT: int(c.deal_rotation == "against_play"), _kernel.C_RESPONDER: int(c.responder == "team_pie"),
        _kernel.C_LEAD_TIE: ("same_leader", "first_tied_card", "next_after_leader").index(c.lead_after_tie),
        _kernel.C_PARTNER_TIE: int(c.partner_tie_wins_trick), _kernel.C_END_IMM: int(c.end_match_immediately),
        _kernel.C_MALAS: int(bool(c.malas_buenas)),
        _kernel.C_FALTA: CHOICES["falta_envido"].index(c.falta_envido),
        _kernel.C_ENV_TIE: int(c.envido_tie == "mano_team"), _kernel.C_ENV_OPENERS: int(c.envido_openers == "pie_only"),
        _kernel.C_ENV_AFTER_TRUCO: int(c.envido_after_truco_accepted), _kernel.C_ENV_PRIMERO: int(c.envido_primero),
        _kernel.C_ENV_PRIMERO_PLAYED: int(c.envido_primero_after_played), _kernel.C_FLOR: int(c.flor),
        _kernel.C_MAZO_BONUS: int(c.mazo_first_trick_bonus), _kernel.C_PICA: int(c.pica_pica),
        _kernel.C_DECK: int(c.deck == "clean"),
        _kernel.C_ALL_TIED: ("no_points", "dealer_team", "mao_team").index(c.all_tricks_tied),
        _kernel.C_ONZE: int(c.mao_de_onze), _kernel.C_ONZE_ANY: int(c.mao_de_onze_decider == "any_accepts"),
        _kernel.C_ONZE_TRUCO_LOSES: int(c.mao_de_onze_truco == "caller_loses_match"), _kernel.C_FERRO: int(c.mao_de_ferro),
        _kernel.C_FERRO_BLIND: int(c.mao_de_ferro_blind), _kernel.C_FORBID_USELESS: int(c.forbid_useless_raise),
        _kernel.C_COVERED: int(c.covered_card), _kernel.C_PMAZO: int(c.paulista_mazo), _kernel.C_HAND_SIZE: c.hand_size,
        _kernel.C_SINGLE: int(c.single_hand), _kernel.C_SENAS: int(c.senas), _kernel.C_SENA_CATCH: round(c.sena_catch * 2 ** 30),
        _kernel.C_SENA_TABLE: int(c.sena_code == "table"), _kernel.C_PLAIN_FLOR_BASE: c.plain_flor_base,
        _kernel.C_ENV_REFUSAL_PLUS_ONE: int(c.envido_refusal == "previous_sum_plus_one"),
        _kernel.C_FALTA_ADDS_CHAIN: int(c.falta_adds_chain), _kernel.C_PICA_STOP: c.pica_pica_stop(),
        _kernel.C_PICA_UNTIL_T5: int(c.pica_pica_until == "target_minus_5"),
        _kernel.C_REFUSE_UNSUNG: int(c.flor_before_answer == "refuse_unsung"),
        _kernel.C_TIE_TO_MANO: int(c.trick_tie_to_mano),
        _kernel.C_FLOR_PER_FLOR: int(c.flor_scoring == "per_flor_refusals"),
        _kernel.C_FLOR_RAISE_UNSUNG: int(c.flor_raise_by == "unsung_holder"),
        _kernel.C_FOLD_FLOR_LOST: int(c.fold_against_unsung_flor == "flor_lost"),
        _kernel.C_MAZO_PLAYER: int(c.mazo_scope == "player"),
        _kernel.C_ENV_SCALE: envido_scale, _kernel.C_FLOR_SCALE: flor_scale,
    }
    for index, value in values.items():
        cfg[index] = value
    for i, key in enumerate(DEFAULT_FLOR_VALUES):
        cfg[_kernel.C_FV + i] = c.flor_values[key]
    deck = truco_env.cards.deck(c.family, c.deck, c.deck_ranks)
    cfg[_kernel.C_DECK_LEN] = len(deck)
    cfg[_kernel.C_DECK_CARDS:_kernel.C_DECK_CARDS + len(deck)] = deck
    calls = LADDER_CALLS[c.family]
    cfg[_kernel.C_NLADDER] = len(calls)
    for i, call in enumerate(calls):
        cfg[_kernel.C_LADDER_ACT + i] = CALL_BASE + CALLS.index(call)
    for i, value in enumerate(LADDER_VALUES[c.family]):
        cfg[_kernel.C_LADDER_VAL + i] = value
    for card in range(NUM_CARDS):
        manilha = -1
        if c.family == PAULISTA:
            try:
                manilha = manilha_rank_index(card, c.deck, c.deck_ranks)
            except ValueError:
                manilha = -1
        cfg[_kernel.C_MANILHA_OF + card] = manilha
    return cfg


def options_array(config: TrucoConfig) -> np.ndarray:
    from .encoding import options_vector

    return options_vector(config).astype(np.float32)


_CFG_CACHE: dict[int, tuple[TrucoConfig, np.ndarray, list[int]]] = {}
_OBS_TEMPLATES: dict[int, tuple[TrucoConfig, np.ndarray]] = {}


def _cached_config(config: TrucoConfig) -> tuple[np.ndarray, list[int]]:
    """config_array and deck of a config object, computed once per object (configs are immutable)."""
    entry = _CFG_CACHE.get(id(config))
    if entry is None or entry[0] is not config:
        if len(_CFG_CACHE) > 256:
            _CFG_CACHE.clear()
        entry = (config, config_array(config), list(truco_env.cards.deck(config.family, config.deck, config.deck_ranks)))
        _CFG_CACHE[id(config)] = entry
    return entry[1], entry[2]


class FastState:
    """One match on the fast engine; see the module docstring."""

    __slots__ = (
        "_buf",
        "_cfg",
        "_deck",
        "_first_deal",
        "_first_score",
        "_forced_next",
        "_hands",
        "_legal",
        "_log",
        "_mask",
        "_name_ids",
        "_names",
        "_ref",
        "_ref_done",
        "_st",
        "config",
        "family",
        "num_players",
        "seed",
        "target",
    )

    @classmethod
    def new(cls, config: TrucoConfig, seed: int | None = None, deal: dict | None = None,
            score: list[int] | tuple[int, int] | None = None) -> FastState:
        seed = check_new_match(config, seed)
        self = cls.__new__(cls)
        self.config = config
        self.family = config.family
        self.num_players = config.num_players
        self.target = config.target_score
        self.seed = seed
        start_score = _check_score(score, config.target_score)
        forced = _parse_deal(deal, config) if deal is not None else {}
        self._cfg, self._deck = _cached_config(config)
        self._st = np.zeros(_kernel.STATE_SIZE, dtype=np.int32)
        self._mask = np.zeros(num_actions(config), dtype=np.int8)
        self._buf = np.zeros(num_actions(config), dtype=np.int32)
        self._legal: list[int] = []
        self._names = _NAMES[config.family]
        self._name_ids = _IDS[config.family]
        self._hands: list[list[Any]] = []  # per hand: see _open_hand
        self._log: list[tuple[int, int]] = []  # (seat, action id) of the whole match
        self._forced_next = None
        self._first_deal = deal
        self._first_score = None if score is None else list(score)
        self._ref = None
        self._ref_done = 0
        dealer = forced.get("dealer")
        if dealer is None:
            dealer = random.Random(f"{seed}:dealer").randrange(self.num_players)
        _kernel.new_match(self._st, self._cfg, dealer, start_score[0], start_score[1])
        self._deal(forced.get("hands"), forced.get("vira"), forced.get("catches"))
        return self

    # -- dealing ------------------------------------------------------------------------------------------

    def _deal(self, hands: list[list[int]] | None, vira: int | None, catches: list[list[int]] | None = None) -> None:
        st = self._st
        if self.config.senas:  # who would catch each seat's signal, drawn as TrucoState._deal draws it
            if catches is None:
                catches = senas.draw_catches(self.seed, int(st[_kernel.S_DEAL_NUMBER]), self.num_players, self.config.sena_catch)
            for seat, row in enumerate(catches):
                st[_kernel.S_CATCH + seat] = sum(1 << other for other in row)
        if hands is None:
            # random.Random(f"{seed}:{k}").shuffle(deck), the reference deal, from a batch of the generator's
            # 32-bit outputs (getrandbits(32 * m) returns m successive outputs, the first least significant)
            rng = random.Random(f"{self.seed}:{st[_kernel.S_DEAL_NUMBER]}")
            bits = _WORD_BITS
            words = np.frombuffer(rng.getrandbits(bits).to_bytes(bits // 8, "little"), dtype="<u4")
            count = _kernel.deal_from_words(st, self._cfg, words, self._mask, self._buf)
            if count < 0:  # more rejections than words (practically never): shuffle in Python
                self._deal(*self._python_deal(), catches)
                return
        else:
            cards = [c for h in hands for c in h]
            count = _kernel.deal_and_legal(st, self._cfg, np.array(cards, dtype=np.int32), -1 if vira is None else vira,
                                     self._mask, self._buf)
        self._legal = self._buf[:count].tolist()
        self._open_hand()

    def _python_deal(self) -> tuple[list[list[int]], int | None]:
        """The reference deal, written as TrucoState._deal writes it."""
        st = self._st
        n = self.num_players
        hs = self.config.hand_size
        deck = list(self._deck)
        random.Random(f"{self.seed}:{st[_kernel.S_DEAL_NUMBER]}").shuffle(deck)
        mano = (int(st[_kernel.S_DEALER]) + 1) % n
        hands: list[list[int]] = [[] for _ in range(n)]
        for k in range(hs * n):
            hands[(mano + k) % n].append(deck[k])
        return hands, (deck[hs * n] if self.family in TURNED_CARD_FAMILIES else None)

    def _open_hand(self) -> None:
        st = self._st
        n = self.num_players
        pair = None
        if st[_kernel.S_NSEATS] != n:
            pair = (int(st[_kernel.S_SEATS]), int(st[_kernel.S_SEATS + 1]))
        # [dealer, dealt (per seat), vira, score_before, pair, first log index, legal lists, points, score_after,
        #  catches (señas) or None]
        catches = None
        if self.config.senas:
            catches = [[o for o in range(n) if (st[_kernel.S_CATCH + seat] >> o) & 1] for seat in range(n)]
        self._hands.append([int(st[_kernel.S_DEALER]), st[_kernel.S_DEALT:_kernel.S_DEALT + 3 * n].reshape(n, 3).tolist(),
                            int(st[_kernel.S_VIRA]), (int(st[_kernel.S_SCORE]), int(st[_kernel.S_SCORE + 1])), pair,
                            len(self._log), [], None, None, catches])

    # -- queries --------------------------------------------------------------------------------------------

    @property
    def state_array(self) -> np.ndarray:
        return self._st

    @property
    def config_array(self) -> np.ndarray:
        return self._cfg

    @property
    def actor(self) -> int | None:
        a = int(self._st[_kernel.S_ACTOR])
        return None if a < 0 else a

    @property
    def phase(self) -> str:
        return PHASE_NAMES[self._st[_kernel.S_PHASE]]

    @property
    def is_over(self) -> bool:
        return bool(self._st[_kernel.S_IS_OVER])

    @property
    def winner(self) -> int | None:
        w = int(self._st[_kernel.S_WINNER])
        return None if w < 0 else w

    @property
    def score(self) -> tuple[int, int]:
        return int(self._st[_kernel.S_SCORE]), int(self._st[_kernel.S_SCORE + 1])

    @property
    def hand_index(self) -> int:
        return len(self._hands) - 1

    @property
    def decisions(self) -> int:
        return int(self._st[_kernel.S_DECISIONS])

    def team_of(self, seat: int) -> int:
        return seat % 2

    def hand_points(self, index: int) -> list[int]:
        """Points of hand ``index`` (final once that hand is over)."""
        record = self._hands[index]
        if record[7] is not None:
            return list(record[7])
        return [int(self._st[_kernel.S_HP]), int(self._st[_kernel.S_HP + 1])]

    def legal_mask(self) -> np.ndarray:
        """The actor's legal actions as an int8 mask over the action ids (a view: copy it to keep it)."""
        return self._mask

    def legal_ids(self) -> list[int]:
        """The legal action ids in the engine's order (a new list)."""
        return list(self._legal)

    def legal_actions(self) -> list[str]:
        names = self._names
        return [names[i] for i in self._legal]

    # -- acting ---------------------------------------------------------------------------------------------

    def apply(self, action: str) -> None:
        """Apply an action name; ValueError (the engine's message) if illegal."""
        action_id = self._name_ids.get(action) if isinstance(action, str) else None
        if action_id is None or action_id not in self._legal:
            if self.is_over:
                raise ValueError(f"illegal action {action!r}: the match is over, no action is legal")
            raise ValueError(f"illegal action {action!r} for seat {self.actor} ({self.phase} phase); "
                             f"legal actions: {self.legal_actions()}")
        self._apply_id(action_id)

    def apply_id(self, action_id: int) -> None:
        """Apply an action id; ValueError (the engine's message) if it is not legal."""
        if type(action_id) is not int and isinstance(action_id, (int, np.integer)) and not isinstance(action_id, bool):
            action_id = int(action_id)
        if action_id not in self._legal or type(action_id) is not int:
            name = self._names[action_id] if isinstance(action_id, int) and 0 <= action_id < len(self._mask) \
                else action_id
            self.apply(name)  # raises
        self._apply_id(action_id)

    def _apply_id(self, action_id: int) -> None:
        st = self._st
        hand = self._hands[-1]
        hand[6].append(self._legal)
        self._log.append((int(st[_kernel.S_ACTOR]), action_id))
        result = _kernel.step(st, self._cfg, action_id, self._mask, self._buf)
        if result < _kernel.CLOSED:
            self._legal = self._buf[:result].tolist()
            return
        hand[7] = (int(st[_kernel.S_LAST_HP]), int(st[_kernel.S_LAST_HP + 1]))
        # score_after of the closed hand is the score now: nothing credits between a close and the next start
        hand[8] = (int(st[_kernel.S_SCORE]), int(st[_kernel.S_SCORE + 1]))
        if result & _kernel.NEEDS_DEAL:
            forced, self._forced_next = self._forced_next or {}, None
            self._deal(forced.get("hands"), forced.get("vira"), forced.get("catches"))
        elif result & _kernel.ENDED:
            self._legal = []
        else:  # the next pica-pica duel started inside the kernel
            self._legal = self._buf[:result & 255].tolist()
            self._open_hand()

    def force_next_deal(self, deal: dict) -> None:
        self._forced_next = parse_next_deal(deal, self.config)

    def clone(self) -> FastState:
        other = FastState.__new__(FastState)
        for name in FastState.__slots__:
            setattr(other, name, getattr(self, name))
        other._st = self._st.copy()
        other._mask = self._mask.copy()
        other._buf = self._buf.copy()
        other._hands = [list(h) for h in self._hands]
        other._hands[-1][6] = list(self._hands[-1][6])
        other._log = list(self._log)
        other._ref = None
        other._ref_done = 0
        return other

    # -- observations -----------------------------------------------------------------------------------------

    def encode_observation(self, viewer: int, out: np.ndarray) -> np.ndarray:
        """``truco_env.encoding.encode_observation`` into ``out``, whose static tail must already hold
        ``K.encode_static`` (see :func:`observation_buffer`)."""
        _kernel.encode_obs(self._st, self._cfg, viewer, out)
        return out

    def observation_buffer(self) -> np.ndarray:
        """A fresh observation vector whose static tail (the rules) is filled in: a copy of a template made once
        per config, so that encoding one seat's view costs one kernel call."""
        template = _OBS_TEMPLATES.get(id(self.config))
        if template is None or template[0] is not self.config:
            from .encoding import observation_size

            out = np.zeros(observation_size(self.config), dtype=np.float32)
            _kernel.encode_static(self._cfg, options_array(self.config), out)
            if len(_OBS_TEMPLATES) > 256:
                _OBS_TEMPLATES.clear()
            template = _OBS_TEMPLATES[id(self.config)] = (self.config, out)
        return template[1].copy()

    # -- records --------------------------------------------------------------------------------------------

    def _export_hand(self, index: int, include_legal: bool) -> dict:
        dealer, dealt, vira, score_before, pair, start, legal_lists, points, score_after, catches = self._hands[index]
        hs = self.config.hand_size
        family = self.family
        end = self._hands[index + 1][5] if index + 1 < len(self._hands) else len(self._log)
        names = self._names
        actions = self._log[start:end]
        if include_legal:
            out_actions = []
            for (seat, action), legal in zip(actions, legal_lists):
                out_actions.append([seat, names[action], [names[i] for i in legal]])
        else:
            out_actions = [[seat, names[action]] for seat, action in actions]
        record = {
            "dealer": dealer,
            "deal": {"hands": [[card_text(c, family) for c in h[:hs]] for h in dealt],
                     "vira": None if vira < 0 else card_text(vira, family),
                     **({} if catches is None else {"catches": [list(row) for row in catches]})},
            "score_before": list(score_before),
            "actions": out_actions,
            "points": list(points) if points is not None else [int(self._st[_kernel.S_HP]), int(self._st[_kernel.S_HP + 1])],
            "score_after": list(score_after) if score_after is not None else list(self.score),
        }
        if pair is not None:
            record["pair"] = list(pair)
        return record

    @property
    def hand_records(self) -> list[dict]:
        return [self._export_hand(i, False) for i in range(len(self._hands))]

    def match_record(self, include_legal: bool = False) -> dict:
        return {
            "rules": self.config.to_dict(),
            "hands": [self._export_hand(i, include_legal) for i in range(len(self._hands))],
            "winner": self.winner,
        }

    # -- the reference engine, in step -------------------------------------------------------------------------

    def reference(self) -> TrucoState:
        """A :class:`TrucoState` of this very match (kept in step lazily; read it, do not mutate it)."""
        if self._ref is None:
            self._ref = TrucoState.new(self.config, seed=self.seed, deal=self._first_deal, score=self._first_score)
            self._ref_done = 0
        ref = self._ref
        names = self._names
        log = self._log
        for k in range(self._ref_done, len(log)):
            ref.apply(names[log[k][1]])
        self._ref_done = len(log)
        return ref
