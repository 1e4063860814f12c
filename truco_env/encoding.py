"""Observation, information-state and mask encoders: one flat layout for every preset.

Why one layout: a single network (and a single exported ONNX model) can play every preset of the three families,
1v1 to 3v3 (Uruguayan Truco appends a block of its own, as señas do). The layout is a list of named fields
(``OBSERVATION_FIELDS``); ``docs/observation.md`` is generated from it, so the documentation cannot drift from the
code. Seats are always *relative* to the observing seat (0 = itself,
1 = the next seat in playing order, ...), and teams are "own" / "opponent".

Nothing hidden from the observer is encoded: its own cards (none in a blind mão de ferro), cards on the table
(face-down ones only as "a covered card was played here"), the vira, public calls and announced points, and the
partner's hand only in a mão de onze where docs/rules.md §4.7 shows it.
"""

from __future__ import annotations

import numpy as np

from . import cards
from .actions import NUM_ACTIONS, TALLY_CLASSES, action_id, num_actions
from .config import TrucoConfig
from .engine import (
    ENVIDO,
    FLOR_CONTEST,
    FLOR_DECLARE,
    MAO_DE_FERRO,
    MAO_DE_ONZE,
    ONZE,
    OVER,
    PLAY,
    TIE,
    TRUCO,
    TrucoState,
)
from .senas import GESTURES, sees

OBSERVATION_VERSION = 2  # 2 appended ``match_tally``; a version-1 policy reads the first 1,068 values unchanged
TALLY_SCALE = 20.0  # decisions d are encoded as d / (d + TALLY_SCALE): about 0.5 after a couple of hands
MAX_SEATS = 6
MAX_TRICKS = 3
MAX_LEVEL = 4  # Paulista doze; Argentine stops at 3
PHASES = (PLAY, TRUCO, ENVIDO, FLOR_DECLARE, FLOR_CONTEST, ONZE, OVER)
ENVIDO_STATUS = ("none", "pending", "accepted", "refused", "void")
FLOR_STATUS = ("none", "pending", "accepted", "refused", "uncontested")
ENVIDO_CALL_SLOTS = 4  # envido envido real_envido falta_envido at most
FLOR_CALL_SLOTS = 3  # flor contraflor contraflor_al_resto
FLOR_CALL_NAMES = ("flor", "contraflor", "contraflor_al_resto")

#: Rule options that change play, as bits: (config field, value that sets the bit).
OPTION_BITS = (
    ("flor", True), ("deck", "clean"), ("covered_card", True), ("paulista_mazo", True),
    ("envido_primero", True), ("envido_primero_after_played", True), ("envido_after_truco_accepted", True),
    ("mazo_first_trick_bonus", True), ("forbid_useless_raise", True), ("mao_de_onze", True),
    ("mao_de_ferro", True), ("mao_de_ferro_blind", True), ("mao_de_onze_truco", "caller_loses_match"),
    ("mao_de_onze_decider", "any_accepts"), ("all_tricks_tied", "dealer_team"), ("all_tricks_tied", "mao_team"),
    ("falta_envido", "malas_match"), ("falta_envido", "whole_match"), ("malas_buenas", True),
    ("envido_tie", "mano_team"), ("envido_openers", "pie_only"), ("responder", "team_pie"),
    ("lead_after_tie", "first_tied_card"), ("lead_after_tie", "next_after_leader"),
    ("partner_tie_wins_trick", True), ("end_match_immediately", True), ("pica_pica", True),
    ("deal_rotation", "against_play"), ("single_hand", True),
)

#: (name, size, meaning) in order. Sizes are fixed for every preset.
OBSERVATION_FIELDS = (
    ("hand", cards.NUM_CARDS, "own unplayed cards (card index); all zero in a blind mão de ferro"),
    ("hand_slots", 3, "own dealt slots not yet played (for play_slot in a blind mão de ferro)"),
    ("partner_cards", cards.NUM_CARDS, "partners' unplayed cards, only where visible (team at 11 in a 2v2 mão de onze)"),
    ("table", MAX_TRICKS * MAX_SEATS * cards.NUM_CARDS,
     "face-up cards played: [trick][relative seat][card index]"),
    ("covered", MAX_TRICKS * MAX_SEATS, "a face-down card was played: [trick][relative seat]"),
    ("trick_results", MAX_TRICKS * 3, "per finished trick: [won by own team, won by opponents, tied]"),
    ("trick_index", MAX_TRICKS, "one-hot: the trick being played"),
    ("trick_leader", MAX_SEATS, "one-hot relative seat that led the current trick"),
    ("vira", cards.NUM_CARDS, "one-hot vira card (Paulista; the muestra in Uruguayan)"),
    ("manilha_rank", cards.NUM_RANKS, "one-hot manilha rank index (Paulista)"),
    ("truco_level", MAX_LEVEL + 1, "one-hot accepted ladder level 0..4"),
    ("hand_value", 1, "current value of the hand / 12"),
    ("raise_holder", 3, "who may raise next: [nobody yet, own team, opponents]"),
    ("pending_truco", MAX_LEVEL + 1, "one-hot proposed level of a pending ladder call (0 = none)"),
    ("pending_truco_by", 2, "pending ladder call made by [own team, opponents]"),
    ("envido_calls", ENVIDO_CALL_SLOTS * 5,
     "per call of the hand's envido chain: [envido, real_envido, falta_envido, by own team, by opponents]"),
    ("envido_status", len(ENVIDO_STATUS), "one-hot " + "/".join(ENVIDO_STATUS)),
    ("envido_shown", MAX_SEATS * 3,
     "per relative seat: [announced, announced points / 33 (Uruguayan: / 39), said son buenas]"),
    ("flor_calls", FLOR_CALL_SLOTS * 5,
     "per call of the flor phase: [flor, contraflor, contraflor_al_resto, by own team, by opponents]"),
    ("flor_status", len(FLOR_STATUS), "one-hot " + "/".join(FLOR_STATUS)),
    ("flor_holders", MAX_SEATS, "relative seats known to hold a flor (public once a flor is declared; own always)"),
    ("flor_shown", MAX_SEATS * 3, "per relative seat: [announced, flor points / 38 (Uruguayan: / 47), said son buenas]"),
    ("own_points", 2, ("own envido points / 33, own flor points / 38 (0 without flor rule or flor; Uruguayan: / 39, "
                       "/ 47)")),
    ("score", 2, "[own team, opponents] score / target (clipped to 1)"),
    ("target", 1, "target score / 30 (clipped to 1)"),
    ("mano", MAX_SEATS, "one-hot relative seat of the hand's mano / mão"),
    ("dealer", MAX_SEATS, "one-hot relative seat of the dealer"),
    ("actor", MAX_SEATS, "one-hot relative seat that must act now (all zero once the match is over)"),
    ("participants", MAX_SEATS, ("relative seats playing this hand (a pair in a pica-pica duel; less a player who "
                                 "folded alone, mazo_scope = player)")),
    ("phase", len(PHASES), "one-hot decision: " + "/".join(PHASES)),
    ("special_hand", 3, "[mão de onze, mão de ferro, cards blind]"),
    ("family", 2, "one-hot argentine/paulista (all zero in Uruguayan: its block says so)"),
    ("num_players", 3, "one-hot 2/4/6 players"),
    ("hand_size", 3, "one-hot 1/2/3 cards dealt (3 except in research variants)"),
    ("options", len(OPTION_BITS), "rule options that change play (docs/observation.md lists them)"),
    ("match_tally", 2 * (len(TALLY_CLASSES) + 1),
     "per team [own, opponents], the match so far: the share of its decisions in each class "
     "[" + ", ".join(TALLY_CLASSES) + "], then decisions / (decisions + 20)"),
)


#: Fields that hold fractions in [0, 1] (points or counts over their maximum, shares of decisions). Every other
#: field holds 0/1 flags, and a field whose meaning starts with "one-hot" has at most one 1 (all zero where it does
#: not apply). Why stated here: a network's input scaling rests on it, and the fuzz test (tests/test_fuzz.py)
#: checks every observation it meets against it.
FRACTION_FIELDS = ("hand_value", "envido_shown", "flor_shown", "own_points", "score", "target", "match_tally",
                   "uruguayan_target")


def _offsets(fields):
    offsets, start = {}, 0
    for name, size, _ in fields:
        offsets[name] = (start, start + size)
        start += size
    return offsets, start


OBS_OFFSETS, OBSERVATION_SIZE = _offsets(OBSERVATION_FIELDS)

#: Fields appended after ``OBSERVATION_FIELDS`` only where ``senas`` is on (docs/rules.md §3.13). Why only there:
#: every game without signals keeps its observation value for value, and the policies trained on it play on.
SENAS_FIELDS = (
    ("senas_seen", MAX_SEATS * len(GESTURES),
     ("[relative seat][gesture]: the seat's signal this hand, where the viewer saw it (its own and its partners' "
     "always, an opponent's only when caught)")),
    ("sena_caught_by", MAX_SEATS, "relative seats of the opponents who caught the viewer's own signal this hand"),
    ("sena_code", 1, "signals carry the common table's meaning (sena_code = table)"),
)
_SENAS_OFFSETS, SENAS_SIZE = _offsets(SENAS_FIELDS)
OBSERVATION_SIZE_SENAS = OBSERVATION_SIZE + SENAS_SIZE  # what a network made for señas reads (106 actions)
SENAS_OFFSETS = {name: (OBSERVATION_SIZE + a, OBSERVATION_SIZE + b) for name, (a, b) in _SENAS_OFFSETS.items()}


#: The family's own rule options as bits (the common ``options`` field keeps its size for every preset).
URUGUAYAN_OPTION_BITS = (("plain_flor_base", 0), ("falta_envido", "winner_to_buenas"),
                         ("falta_envido", "leader_to_buenas"), ("envido_refusal", "previous_sum_plus_one"),
                         ("falta_adds_chain", True), ("pica_pica_until", "target_minus_5"),
                         ("flor_before_answer", "refuse_unsung"), ("trick_tie_to_mano", True))
#: Fields appended after ``OBSERVATION_FIELDS`` only in Uruguayan Truco. Why a block of its own, as for señas: the
#: observations of the other families stay value for value, and the policies trained on them play on.
URUGUAYAN_FIELDS = (
    ("uruguayan", 1, "the game is Uruguayan Truco (the third family's flag)"),
    ("piezas", cards.NUM_CARDS, "the hand's five piezas (card index): what the muestra makes of the deck"),
    ("uruguayan_options", len(URUGUAYAN_OPTION_BITS),
     "rule options of the family: " + ", ".join(f"{name} = {value}" for name, value in URUGUAYAN_OPTION_BITS)),
    ("uruguayan_target", 1, "target score / 40 (clipped to 1): the common `target` stops at 30, this game's is 40"),
)
_URUGUAYAN_OFFSETS, URUGUAYAN_SIZE = _offsets(URUGUAYAN_FIELDS)
OBSERVATION_SIZE_URUGUAYAN = OBSERVATION_SIZE + URUGUAYAN_SIZE  # what a network made for Uruguayan Truco reads
URUGUAYAN_OFFSETS = {name: (OBSERVATION_SIZE + a, OBSERVATION_SIZE + b) for name, (a, b) in _URUGUAYAN_OFFSETS.items()}
#: Scales of envido and flor points in the observation (the family's largest value, so that fractions stay <= 1).
ENVIDO_SCALE = {cards.ARGENTINE: 33, cards.PAULISTA: 33, cards.URUGUAYAN: 39}
FLOR_SCALE = {cards.ARGENTINE: 38, cards.PAULISTA: 38, cards.URUGUAYAN: 47}


def point_scales(config: TrucoConfig) -> tuple[int, int]:
    """The envido and flor scales of ``config``'s observation."""
    return ENVIDO_SCALE[config.family], FLOR_SCALE[config.family]


def observation_size(config: TrucoConfig) -> int:
    """The observation's length for ``config``: ``OBSERVATION_SIZE``, and the señas or the Uruguayan block after it
    where they apply (señas are not specified for Uruguayan Truco, so the two never meet)."""
    if config.family == cards.URUGUAYAN:
        return OBSERVATION_SIZE_URUGUAYAN
    return OBSERVATION_SIZE + (SENAS_SIZE if config.senas else 0)
#: Observation size of every layout version; each version only appends, so an older policy reads a prefix.
OBSERVATION_SIZES = {1: OBS_OFFSETS["match_tally"][0], 2: OBSERVATION_SIZE}


def reads_layout(model_width: int, game_width: int) -> bool:
    """Whether a network made for observations of ``model_width`` values reads a game's of ``game_width``: its own
    layout, or a base layout (:data:`OBSERVATION_SIZES`, which the señas and Uruguayan blocks only append to) as
    the prefix of a wider one. A señas or Uruguayan network reads no other game: the prefix of another's
    observation would put one block's values where it learnt the other's."""
    return model_width == game_width or (model_width in OBSERVATION_SIZES.values() and model_width < game_width)


#: Public action history appended for the information-state tensor: per slot [relative seat] + [action id].
HISTORY_SLOTS = 64
HISTORY_SLOT_SIZE = MAX_SEATS + NUM_ACTIONS
INFO_STATE_SIZE = OBSERVATION_SIZE + HISTORY_SLOTS * HISTORY_SLOT_SIZE


def information_state_size(config: TrucoConfig) -> int:
    return observation_size(config) + HISTORY_SLOTS * HISTORY_SLOT_SIZE


def _view(obs: np.ndarray, name: str) -> np.ndarray:
    start, end = OBS_OFFSETS.get(name) or SENAS_OFFSETS.get(name) or URUGUAYAN_OFFSETS[name]
    return obs[start:end]


def _rel(seat: int, viewer: int, n: int) -> int:
    return (seat - viewer) % n


def partner_cards_visible(state: TrucoState, viewer: int) -> bool:
    """docs/rules.md §4.7: in a mão de onze each player of the team at 11 sees his partners' cards."""
    return (state.special_hand == MAO_DE_ONZE and state.num_players > 2
            and state.score[state.team_of(viewer)] == state.target - 1)


def options_vector(config: TrucoConfig) -> np.ndarray:
    return np.array([float(getattr(config, name) == value) for name, value in OPTION_BITS], dtype=np.float32)


def encode_observation(state: TrucoState, viewer: int, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``viewer`` as a float32 vector of ``observation_size(state.config)`` (layout above)."""
    obs = np.zeros(observation_size(state.config), dtype=np.float32) if out is None else out
    if out is not None:
        obs.fill(0.0)
    _encode_cards(obs, state, viewer)
    _encode_betting(obs, state, viewer)
    _encode_match(obs, state, viewer)
    if state.config.senas:
        _encode_senas(obs, state, viewer)
    if state.config.family == cards.URUGUAYAN:
        _encode_uruguayan(obs, state)
    return obs


def _encode_cards(obs: np.ndarray, state: TrucoState, viewer: int) -> None:
    """The cards: own hand and slots, a partner's shown cards, the table, tricks, the vira."""
    cfg = state.config
    n = state.num_players
    team = state.team_of(viewer)
    blind = state.special_hand == MAO_DE_FERRO and cfg.mao_de_ferro_blind
    hand = _view(obs, "hand")
    slots = _view(obs, "hand_slots")
    remaining = state.remaining_cards(viewer)
    for i, card in enumerate(state.dealt_cards(viewer)):
        if card in remaining:
            slots[i] = 1.0
            if not blind:
                hand[card] = 1.0
    if partner_cards_visible(state, viewer):
        partner = _view(obs, "partner_cards")
        for seat in range(n):
            if seat != viewer and state.team_of(seat) == team:
                for card in state.remaining_cards(seat):
                    partner[card] = 1.0

    table = _view(obs, "table").reshape(MAX_TRICKS, MAX_SEATS, cards.NUM_CARDS)
    covered = _view(obs, "covered").reshape(MAX_TRICKS, MAX_SEATS)
    for t, trick in enumerate([*state.tricks, state.current_trick]):
        for seat, card, face_down in trick:
            rel = _rel(seat, viewer, n)
            if face_down:
                covered[t, rel] = 1.0
            else:
                table[t, rel, card] = 1.0
    results = _view(obs, "trick_results").reshape(MAX_TRICKS, 3)
    for t, result in enumerate(state.trick_results):
        results[t, 2 if result == TIE else (0 if result == team else 1)] = 1.0
    if not state.is_over:
        _view(obs, "trick_index")[min(state.trick_index, MAX_TRICKS - 1)] = 1.0
        _view(obs, "trick_leader")[_rel(state.trick_leader, viewer, n)] = 1.0

    if state.vira is not None:
        _view(obs, "vira")[state.vira] = 1.0
        if cfg.family == cards.PAULISTA:
            _view(obs, "manilha_rank")[cards.manilha_rank_index(state.vira, cfg.deck, cfg.deck_ranks)] = 1.0


def _encode_betting(obs: np.ndarray, state: TrucoState, viewer: int) -> None:
    """The bets: the truco ladder, the envido and flor chains, what was shown, the viewer's own points."""
    cfg = state.config
    n = state.num_players
    team = state.team_of(viewer)
    _view(obs, "truco_level")[state.truco_level] = 1.0
    _view(obs, "hand_value")[0] = state.hand_value / 12.0
    holder = state.raise_holder
    _view(obs, "raise_holder")[0 if holder is None else (1 if holder == team else 2)] = 1.0
    pending = state.pending_truco
    if pending is not None:
        _view(obs, "pending_truco")[pending[0]] = 1.0
        _view(obs, "pending_truco_by")[0 if pending[1] == team else 1] = 1.0
    else:
        _view(obs, "pending_truco")[0] = 1.0

    _encode_calls(_view(obs, "envido_calls"), state.envido_calls, ("envido", "real_envido", "falta_envido"),
                  ENVIDO_CALL_SLOTS, state, team)
    _view(obs, "envido_status")[ENVIDO_STATUS.index(state.envido_status)] = 1.0
    envido_scale, flor_scale = point_scales(cfg)
    _encode_shown(_view(obs, "envido_shown"), state.envido_announcements, viewer, n, envido_scale)
    _encode_calls(_view(obs, "flor_calls"), state.flor_calls, FLOR_CALL_NAMES, FLOR_CALL_SLOTS, state, team)
    _view(obs, "flor_status")[FLOR_STATUS.index(state.flor_status)] = 1.0
    holders = _view(obs, "flor_holders")
    for seat in state.flor_holders:
        if seat == viewer or state.flor_status != "none":
            holders[_rel(seat, viewer, n)] = 1.0
    _encode_shown(_view(obs, "flor_shown"), state.flor_announcements, viewer, n, flor_scale)
    own = _view(obs, "own_points")
    if cfg.family in cards.ENVIDO_FAMILIES:
        envido, flor = cards.hand_points(cfg.family, state.dealt_cards(viewer), state.vira, cfg.plain_flor_base)
        own[0] = envido / envido_scale
        own[1] = flor / flor_scale if cfg.flor and flor is not None else 0.0


def _encode_match(obs: np.ndarray, state: TrucoState, viewer: int) -> None:
    """The match: score, seats, phase, special hands, the rules, the public tally of decisions."""
    cfg = state.config
    n = state.num_players
    team = state.team_of(viewer)
    blind = state.special_hand == MAO_DE_FERRO and cfg.mao_de_ferro_blind
    target = state.target
    score = _view(obs, "score")
    score[0] = min(state.score[team] / target, 1.0)
    score[1] = min(state.score[1 - team] / target, 1.0)
    _view(obs, "target")[0] = min(target / 30.0, 1.0)
    _view(obs, "mano")[_rel(state.mano, viewer, n)] = 1.0
    _view(obs, "dealer")[_rel(state.dealer, viewer, n)] = 1.0
    if state.actor is not None:
        _view(obs, "actor")[_rel(state.actor, viewer, n)] = 1.0
    participants = _view(obs, "participants")
    for seat in state.participants:
        participants[_rel(seat, viewer, n)] = 1.0
    _view(obs, "phase")[PHASES.index(state.phase)] = 1.0
    special = _view(obs, "special_hand")
    special[0] = float(state.special_hand == MAO_DE_ONZE)
    special[1] = float(state.special_hand == MAO_DE_FERRO)
    special[2] = float(blind)
    if cfg.family != cards.URUGUAYAN:
        _view(obs, "family")[cards.FAMILIES.index(cfg.family)] = 1.0
    _view(obs, "num_players")[(2, 4, 6).index(n)] = 1.0
    _view(obs, "hand_size")[cfg.hand_size - 1] = 1.0
    _view(obs, "options")[:] = options_vector(cfg)
    tally = _view(obs, "match_tally").reshape(2, len(TALLY_CLASSES) + 1)
    tallies = state.match_tally
    for row, counts in enumerate((tallies[team], tallies[1 - team])):
        total = sum(counts)
        if total:
            for k, count in enumerate(counts):
                tally[row, k] = count / total
            tally[row, -1] = total / (total + TALLY_SCALE)


def _encode_senas(obs: np.ndarray, state: TrucoState, viewer: int) -> None:
    """The signals of the hand that the viewer saw, who caught its own, and whether gestures carry the table."""
    n = state.num_players
    seen = _view(obs, "senas_seen").reshape(MAX_SEATS, len(GESTURES))
    for seat, gesture in state.signals_seen(viewer).items():
        seen[_rel(seat, viewer, n), GESTURES.index(gesture)] = 1.0
    if viewer in state.signals:
        caught = _view(obs, "sena_caught_by")
        for other in state.catches[viewer]:
            caught[_rel(other, viewer, n)] = 1.0
    _view(obs, "sena_code")[0] = float(state.config.sena_code == "table")


def _encode_uruguayan(obs: np.ndarray, state: TrucoState) -> None:
    """The Uruguayan block: the family's flag, the hand's piezas, its options."""
    _view(obs, "uruguayan")[0] = 1.0
    if state.vira is not None:
        _view(obs, "piezas")[list(cards.piezas(state.vira))] = 1.0
    _view(obs, "uruguayan_options")[:] = [float(getattr(state.config, name) == value)
                                          for name, value in URUGUAYAN_OPTION_BITS]
    _view(obs, "uruguayan_target")[0] = min(state.target / 40.0, 1.0)


def tally_decisions(obs: np.ndarray, row: int) -> np.ndarray:
    """Per observation (rows of ``obs``): how many decisions team ``row`` (0: the viewer's, 1: the opponents')
    has made in the match so far, read back from ``match_tally``'s d / (d + TALLY_SCALE). Why here: the
    encoder owns the formula, so its inverse lives beside it."""
    width = len(TALLY_CLASSES) + 1
    x = obs[:, OBS_OFFSETS["match_tally"][0] + width * row + width - 1].astype(np.float64)
    return np.rint(TALLY_SCALE * x / (1.0 - x)).astype(np.int64)


def _encode_calls(view, calls, names, slots, state, team):
    per = view.reshape(slots, 5)
    for i, (seat, call) in enumerate(calls[:slots]):
        per[i, names.index(call)] = 1.0
        per[i, 3 if state.team_of(seat) == team else 4] = 1.0


def _encode_shown(view, announcements, viewer, n, scale):
    per = view.reshape(MAX_SEATS, 3)
    for seat, value in announcements:
        rel = _rel(seat, viewer, n)
        if value is None:
            per[rel, 2] = 1.0
        else:
            per[rel, 0] = 1.0
            per[rel, 1] = value / scale


#: Hidden information for a training critic only (``PPOArgs.critic: privileged``), never for a policy: the
#: unplayed cards of every other seat, seat ``k`` places after the viewer in block ``k - 1`` (40 floats each).
#: Why: a value estimate that knows the deal separates the luck of the cards from the worth of a decision, so
#: advantages are far less noisy; the policy still sees only its observation, and plays without this.
PRIVILEGED_SIZE = (MAX_SEATS - 1) * cards.NUM_CARDS


def encode_privileged(state: TrucoState, viewer: int, out: np.ndarray | None = None) -> np.ndarray:
    """float32 [``PRIVILEGED_SIZE``]: the other seats' unplayed cards as seen from ``viewer`` (see above)."""
    priv = np.zeros(PRIVILEGED_SIZE, dtype=np.float32) if out is None else out
    if out is not None:
        priv.fill(0.0)
    n = state.num_players
    for seat in range(n):
        if seat != viewer:
            block = (_rel(seat, viewer, n) - 1) * cards.NUM_CARDS
            for card in state.remaining_cards(seat):
                priv[block + card] = 1.0
    return priv


def encode_action_mask(state: TrucoState, out: np.ndarray | None = None) -> np.ndarray:
    """int8 mask over ``actions.num_actions(config)`` of the actor's legal actions (all zero once the match is
    over)."""
    mask = np.zeros(num_actions(state.config), dtype=np.int8) if out is None else out
    if out is not None:
        mask.fill(0)
    family = state.family
    for name in state.legal_actions():
        mask[action_id(name, family)] = 1
    return mask


def public_action_name(state: TrucoState, seat: int, action: str, viewer: int,
                       catches: list[list[int]] | None = None) -> str | None:
    """How ``viewer`` saw ``seat``'s action: a face-down card is only "cover" to the others, and a signal it did
    not see is nothing at all (None). ``catches``: the deal's (default: the current one's)."""
    if action.startswith("cover:") and seat != viewer:
        return "cover"
    if action.startswith("sena:") and not sees(state.catches if catches is None else catches, seat, viewer):
        return None
    return action


def encode_information_state(state: TrucoState, viewer: int) -> np.ndarray:
    """Observation plus the current hand's public action sequence (perfect recall within a hand).

    Each history slot holds the acting relative seat and the action id; a face-down card of another seat is
    encoded as the covered bit of the observation only (its slot marks the seat and no action). Signals take no
    slot: the observation's señas block holds the ones the viewer saw."""
    size = observation_size(state.config)
    info = np.zeros(information_state_size(state.config), dtype=np.float32)
    encode_observation(state, viewer, info[:size])
    history = info[size:].reshape(HISTORY_SLOTS, HISTORY_SLOT_SIZE)
    n = state.num_players
    actions = [(seat, action) for seat, action in state.hand_records[-1]["actions"] if not action.startswith("sena:")]
    if len(actions) > HISTORY_SLOTS:
        raise ValueError(f"hand history of {len(actions)} actions exceeds {HISTORY_SLOTS} slots")
    for i, (seat, action) in enumerate(actions):
        history[i, _rel(seat, viewer, n)] = 1.0
        if public_action_name(state, seat, action, viewer) == action:
            history[i, MAX_SEATS + action_id(action, state.family)] = 1.0
    return info


def information_state_string(state: TrucoState, viewer: int) -> str:
    """A perfect-recall key for tabular methods: own cards of every hand so far plus every public action.

    Format: ``"p<seat>|<hand>;<hand>...|<shown>"`` where each hand is
    ``"<own dealt cards>/<vira>/<score before>/d<relative dealer>:<actions>"``, actions are
    ``<relative seat><public action name>`` joined by spaces (a blind ``play_slot:<i>`` shows the card it revealed,
    another seat's face-down card shows as ``cover``, a signal shows only where the viewer saw it, its own as
``sena:<gesture>^<relative seats that caught it>``), and ``<shown>`` lists the envido and flor points announced
    in the current hand. Points announced in earlier hands are not part of the key."""
    n = state.num_players
    cfg = state.config
    eleven = [cfg.target_score - 1] * 2
    parts = []
    for record in state.hand_records:
        blind = (cfg.family == cards.PAULISTA and cfg.mao_de_ferro and cfg.mao_de_ferro_blind
                 and record["score_before"] == eleven)
        hands = record["deal"]["hands"]
        own = "?" if blind else ",".join(hands[viewer])
        moves = []
        for seat, action in record["actions"]:
            name = public_action_name(state, seat, action, viewer, record["deal"].get("catches"))
            if name is None:
                continue
            if action.startswith("sena:") and seat == viewer:  # who caught its own signal
                name += "^" + "".join(str(_rel(o, viewer, n)) for o in record["deal"]["catches"][seat])
            if action.startswith("play_slot:"):
                name += "=" + hands[seat][int(action.rsplit(":", 1)[1])]
            moves.append(f"{_rel(seat, viewer, n)}{name}")
        before = record["score_before"]
        parts.append(f"{own}/{record['deal']['vira']}/{before[0]}-{before[1]}"
                     f"/d{_rel(record['dealer'], viewer, n)}:{' '.join(moves)}")
    shown = ",".join(f"{kind}{_rel(seat, viewer, n)}={'-' if value is None else value}"
                     for kind, announced in (("e", state.envido_announcements), ("f", state.flor_announcements))
                     for seat, value in announced)
    return f"p{viewer}|" + ";".join(parts) + "|" + shown


def observation_markdown() -> str:
    """The field table of ``docs/observation.md``."""
    lines = ["| field | offset | size | meaning |", "|---|---|---|---|"]
    for name, size, meaning in OBSERVATION_FIELDS:
        start, _ = OBS_OFFSETS[name]
        lines.append(f"| `{name}` | {start} | {size} | {meaning} |")
    lines.append("")
    lines.append("`options` bits, in order:")
    lines.append("")
    for i, (name, value) in enumerate(OPTION_BITS):
        lines.append(f"{i}. `{name} == {value!r}`")
    lines += ["", "## Señas", "",
              (f"Only where `senas` is on ([rules.md §3.13](rules.md#313-two-against-two)) the observation has "
              f"{SENAS_SIZE} more values after these, {OBSERVATION_SIZE + SENAS_SIZE} in all "
              "(`truco_env.encoding.observation_size(config)`); every other game's observation is unchanged. "
              "Gestures in the order of `truco_env.senas.GESTURES`."), "",
              "| field | offset | size | meaning |", "|---|---|---|---|"]
    for name, size, meaning in SENAS_FIELDS:
        lines.append(f"| `{name}` | {SENAS_OFFSETS[name][0]} | {size} | {meaning} |")
    lines += ["", "## Uruguayan Truco", "",
              (f"Only in the Uruguayan family ([rules.md §8](rules.md#8-uruguayan-truco)) the observation "
               f"has {URUGUAYAN_SIZE} more values after the common ones, {OBSERVATION_SIZE_URUGUAYAN} in all; there "
               "`vira` holds the muestra, `manilha_rank` and `family` stay zero, and envido and flor points are "
               f"scaled by the family's largest values ({ENVIDO_SCALE['uruguayan']} and {FLOR_SCALE['uruguayan']}). "
               "Señas are not specified for this family, so the two blocks never meet. Like `flor_values` in "
               "every family, the flor contest's fields `flor_scoring`, `flor_raise_by` (which the action mask "
               "shows) and `fold_against_unsung_flor` have no bits: what a flor pays is learnt as the table's "
               "values are."), "",
              "| field | offset | size | meaning |", "|---|---|---|---|"]
    for name, size, meaning in URUGUAYAN_FIELDS:
        lines.append(f"| `{name}` | {URUGUAYAN_OFFSETS[name][0]} | {size} | {meaning} |")
    return "\n".join(lines)


OBSERVATION_DOC_HEADER = """# Observation layout (version {version})

`env.observe(agent)["observation"]` is a float32 vector of {size} values in [0, 1], the same layout for every
preset (every family, 2, 4 and 6 players); a game with señas appends {senas} more ([below](#señas)), a game of
Uruguayan Truco {uruguayan} ([below](#uruguayan-truco)).
It is drawn from the observing seat: "relative seat" 0 is the observer, 1 the next seat in playing order, and so
on; "own team" is the observer's team. Fields that a preset
does not use stay zero (no vira in Argentine Truco, seats 2-5 in 1v1).

Ranges: these fields hold fractions in [0, 1]: {fractions}.
Every other field holds 0/1 flags, and a "one-hot" field has at most one 1.

Only what the observer may know is encoded: its own unplayed cards (none in a blind mão de ferro, where only the
slots are known), face-up cards on the table, the mere fact that a face-down card was played, the vira, public
calls and the points announced after an accepted envido or flor, and, in a 2v2 mão de onze, the partner's cards
for the team at 11 ([rules.md §4.7](rules.md#47-mão-de-onze)). Envido and flor points of the observer's own
hand are included for convenience (they follow from its cards).

`action_mask` (int8, {actions} values) marks the legal actions of the agent to act; see [actions.md](actions.md).
The information-state tensor (`env.unwrapped.information_state(agent)`, {info} values) appends the current hand's
public action history: {slots} slots of [relative seat (6)] + [action id ({actions})]; another seat's face-down card
marks only its seat. `env.unwrapped.information_state_string(agent)` is a perfect-recall key over the whole match.

This page is generated from `truco_env/encoding.py` (`python -m truco_env.encoding > docs/observation.md`);
a test fails when it is stale.

## Reading an observation

```python
from truco_env.encoding import OBS_OFFSETS
start, end = OBS_OFFSETS["score"]
own_score, their_score = obs["observation"][start:end] * target   # target = env.unwrapped.config.target_score
```

## Fields

"""


if __name__ == "__main__":
    print(OBSERVATION_DOC_HEADER.format(version=OBSERVATION_VERSION, size=OBSERVATION_SIZE, senas=SENAS_SIZE,
                                        uruguayan=URUGUAYAN_SIZE, actions=NUM_ACTIONS,
                                        info=INFO_STATE_SIZE, slots=HISTORY_SLOTS,
                                        fractions=", ".join(f"`{f}`" for f in FRACTION_FIELDS))
          + observation_markdown())
