"""The fast engine's compiled core: the rules of :mod:`truco_env.engine` on one flat int32 array per match.

Why a second implementation: training needs millions of decisions a second, which the readable engine (one
Python object per match, action names as strings) cannot give. This module re-states the same rules with
integer cards, precomputed tables (strength per family and manilha rank or muestra, the hand-decided table,
envido and flor points computed once per deal) and no allocation per step, compiled with numba. The readable engine stays
the reference: ``tests/test_fast_engine.py`` plays thousands of seeded matches through both and demands
identical records, legal sets and observations.

Layout: a match is ``st`` (int32, ``STATE_SIZE``) and its rules are ``cfg`` (int32, ``CFG_SIZE``, built by
:func:`truco_env.fast.config_array`). Function names mirror the engine's methods (``_on_truco`` here is
``TrucoState._on_truco`` there) so the two can be read side by side. Phases use the order of
``truco_env.encoding.PHASES``; ``DEAL`` is internal: the hand ended and the driver must deal the next one
(:func:`deal`), from Python's ``random.Random(f"{seed}:{k}")`` (:mod:`truco_env.fast`, reference deals) or
from a per-match counter-based generator (:mod:`truco_env.vector`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

# ---------------------------------------------------------------------------------------------- constants

PLAY, TRUCO, ENVIDO, FLOR_DECLARE, FLOR_CONTEST, ONZE, OVER, DEAL = 0, 1, 2, 3, 4, 5, 6, 7
TIE = -1
ALL_TIED = -2
UNDECIDED = -3
NONE_SPECIAL, MAO_DE_ONZE, MAO_DE_FERRO = 0, 1, 2

# action ids (truco_env.actions)
A_COVER = 40
A_SLOT = 80
A_TRUCO = 83
A_ENVIDO, A_REAL, A_FALTA = 89, 90, 91
A_FLOR, A_CFLOR, A_CFRESTO = 92, 93, 94
A_QUIERO, A_NOQ, A_MAZO = 95, 96, 97
NUM_ACTIONS = 98
A_SENA = 98  # 8 signals (truco_env.senas.GESTURES), only where cfg[C_SENAS]
NUM_SENAS = 8
NUM_ACTIONS_SENAS = 106
NUM_TALLY = 8  # len(truco_env.actions.TALLY_CLASSES)

# ------------------------------------------------------------------------------------------ config layout
_cfg_names = [
    "FAMILY", "N", "TARGET", "ROT", "RESPONDER", "LEAD_TIE", "PARTNER_TIE", "END_IMM", "MALAS", "FALTA",
    "ENV_TIE", "ENV_OPENERS", "ENV_AFTER_TRUCO", "ENV_PRIMERO", "ENV_PRIMERO_PLAYED", "FLOR",
    "FV_UNCONTESTED", "FV_CONTESTED", "FV_ACHICO", "FV_CF_QUIERO", "FV_CF_NOQ", "FV_RESTO_BONUS",
    "FV_RESTO_NOQ_DIRECT", "FV_RESTO_NOQ_AFTER_CF", "MAZO_BONUS", "PICA", "DECK", "ALL_TIED", "ONZE",
    "ONZE_ANY", "ONZE_TRUCO_LOSES", "FERRO", "FERRO_BLIND", "FORBID_USELESS", "COVERED", "PMAZO", "HAND_SIZE",
    "SINGLE", "DECK_LEN", "NLADDER",
]
C_ = {name: i for i, name in enumerate(_cfg_names)}
C_FAMILY, C_N, C_TARGET, C_ROT, C_RESPONDER, C_LEAD_TIE, C_PARTNER_TIE, C_END_IMM, C_MALAS, C_FALTA = range(10)
(C_ENV_TIE, C_ENV_OPENERS, C_ENV_AFTER_TRUCO, C_ENV_PRIMERO, C_ENV_PRIMERO_PLAYED, C_FLOR) = range(10, 16)
C_FV = 16  # 8 flor values in DEFAULT_FLOR_VALUES order
(C_MAZO_BONUS, C_PICA, C_DECK, C_ALL_TIED, C_ONZE, C_ONZE_ANY, C_ONZE_TRUCO_LOSES, C_FERRO, C_FERRO_BLIND,
 C_FORBID_USELESS, C_COVERED, C_PMAZO, C_HAND_SIZE, C_SINGLE, C_DECK_LEN, C_NLADDER) = range(24, 40)
C_DECK_CARDS = 40  # 40 slots: the deck in canonical order
C_LADDER_ACT = 80  # 4 slots: action id of the call proposing level i+1
C_LADDER_VAL = 84  # 5 slots: hand value at level i
C_MANILHA_OF = 89  # 40 slots: manilha rank index for each vira card (-1 if not in the cycle)
C_SENAS = 129  # señas on
C_SENA_CATCH = 130  # sena_catch as a threshold on 30 random bits (round(sena_catch * 2**30))
C_SENA_TABLE = 131  # sena_code == "table"
C_PLAIN_FLOR_BASE = 132  # Uruguayan: what a flor without a pieza adds to its three values
C_ENV_SCALE = 133  # the observation's scale of envido points (truco_env.encoding.ENVIDO_SCALE)
C_FLOR_SCALE = 134  # ... and of flor points (FLOR_SCALE)
C_ENV_REFUSAL_PLUS_ONE = 135  # Uruguayan: envido_refusal == "previous_sum_plus_one"
C_FALTA_ADDS_CHAIN = 136  # Uruguayan: falta_adds_chain
C_PICA_STOP = 137  # the score from which no more pica-pica deals are played (TrucoConfig.pica_pica_stop)
C_PICA_UNTIL_T5 = 138  # Uruguayan: pica_pica_until == "target_minus_5" (its observation bit)
C_REFUSE_UNSUNG = 139  # Uruguayan: flor_before_answer == "refuse_unsung"
C_TIE_TO_MANO = 140  # Uruguayan: trick_tie_to_mano
C_FLOR_PER_FLOR = 141  # Uruguayan: flor_scoring == "per_flor_refusals"
C_FLOR_RAISE_UNSUNG = 142  # Uruguayan: flor_raise_by == "unsung_holder"
C_FOLD_FLOR_LOST = 143  # Uruguayan: fold_against_unsung_flor == "flor_lost"
C_MAZO_PLAYER = 144  # Uruguayan: mazo_scope == "player"
CFG_SIZE = 145

# ------------------------------------------------------------------------------------------- state layout
_state_fields = [
    ("SCORE", 2), ("FIRST_TARGET", 1), ("IS_OVER", 1), ("WINNER", 1), ("DEALER", 1), ("DEAL_NUMBER", 1),
    ("PICA_LEFT", 1), ("PICA_NEXT", 1), ("DEAL_MANO", 1), ("DEALT", 18), ("VIRA", 1), ("STR_ROW", 1),
    ("HAND_COUNT", 1), ("NSEATS", 1), ("SEATS", 6), ("ORDER", 6), ("MANO", 1), ("PLAYED", 6), ("TURN", 1),
    ("LEADER", 1), ("NTDONE", 1), ("TRICK_LEN", 4), ("TRICKS", 4 * 6 * 3), ("TRICK_INDEX", 1),
    ("NRESULTS", 1), ("RESULTS", 3), ("LEVEL", 1), ("HOLDER", 1), ("PENDING", 1), ("PROPOSER", 1),
    ("TRESP", 1), ("ECHAIN_N", 1), ("ECHAIN", 4), ("EOPENED", 1), ("EDONE", 1), ("ECALLER", 1),
    ("EANN_N", 1), ("EANN", 12), ("FANN_N", 1), ("FANN", 12), ("ECALLS_N", 1), ("ECALLS", 8),
    ("ESTATUS", 1), ("FCALLS_N", 1), ("FCALLS", 6), ("FSTATUS", 1), ("FHOLD_N", 1), ("FHOLD", 6),
    ("FDECLARED", 1), ("FCHAIN_N", 1), ("FCHAIN", 3), ("FCALLER", 1), ("HP", 2), ("SPECIAL", 1),
    ("BASEVAL", 1), ("ODEC_N", 1), ("ODEC", 3), ("PHASE", 1), ("ACTOR", 1), ("LAST_HP", 2),
    ("ENV_VAL", 6), ("FLOR_VAL", 6), ("DECISIONS", 1), ("TALLY", 2 * NUM_TALLY),
    ("SIGNAL", 6), ("CATCH", 6),  # señas: per seat its gesture + 1 this hand (0: none); the bit mask of the
    # opponents who catch its signal this deal
]
S_ = {}
_pos = 0
for _name, _size in _state_fields:
    S_[_name] = _pos
    _pos += _size
STATE_SIZE = _pos
(S_SCORE, S_FIRST_TARGET, S_IS_OVER, S_WINNER, S_DEALER, S_DEAL_NUMBER, S_PICA_LEFT, S_PICA_NEXT, S_DEAL_MANO,
 S_DEALT, S_VIRA, S_STR_ROW, S_HAND_COUNT, S_NSEATS, S_SEATS, S_ORDER, S_MANO, S_PLAYED, S_TURN, S_LEADER,
 S_NTDONE, S_TRICK_LEN, S_TRICKS, S_TRICK_INDEX, S_NRESULTS, S_RESULTS, S_LEVEL, S_HOLDER, S_PENDING,
 S_PROPOSER, S_TRESP, S_ECHAIN_N, S_ECHAIN, S_EOPENED, S_EDONE, S_ECALLER, S_EANN_N, S_EANN, S_FANN_N, S_FANN,
 S_ECALLS_N, S_ECALLS, S_ESTATUS, S_FCALLS_N, S_FCALLS, S_FSTATUS, S_FHOLD_N, S_FHOLD, S_FDECLARED,
 S_FCHAIN_N, S_FCHAIN, S_FCALLER, S_HP, S_SPECIAL, S_BASEVAL, S_ODEC_N, S_ODEC, S_PHASE, S_ACTOR,
 S_LAST_HP, S_ENV_VAL, S_FLOR_VAL, S_DECISIONS, S_TALLY, S_SIGNAL, S_CATCH) = [S_[n] for n, _ in _state_fields]

# ----------------------------------------------------------------------------------------------- tables


#: The first STRENGTH row of the Uruguayan family: its row is this plus the muestra's card index.
URUGUAYAN_ROW = 11


def _strength_tables() -> np.ndarray:
    """Row 0 Argentine, 1.. Paulista by manilha rank, ``URUGUAYAN_ROW``.. Uruguayan by muestra."""
    from .cards import ARGENTINE_STRENGTH, NUM_RANKS, PAULISTA_STRENGTH, URUGUAYAN_STRENGTH

    rows = [ARGENTINE_STRENGTH] + [PAULISTA_STRENGTH[m] for m in range(NUM_RANKS)] + list(URUGUAYAN_STRENGTH)
    assert len(rows) == URUGUAYAN_ROW + len(URUGUAYAN_STRENGTH)
    return np.array(rows, dtype=np.int32)


def _uruguayan_tables() -> tuple[np.ndarray, np.ndarray]:
    """UY_VALUE[muestra, card]: a card's reduced envido and flor value; UY_PIEZA[muestra, card]: 1 for a pieza."""
    from .cards import NUM_CARDS, piezas, uruguayan_value

    value = np.array([[uruguayan_value(c, m) for c in range(NUM_CARDS)] for m in range(NUM_CARDS)], dtype=np.int32)
    pieza = np.zeros((NUM_CARDS, NUM_CARDS), dtype=np.int32)
    for m in range(NUM_CARDS):
        pieza[m, list(piezas(m))] = 1
    return value, pieza


def _decided_tables() -> np.ndarray:
    """DECIDED[num_tricks, length, code]: the engine's ``hand_winner`` with results coded base 3 (0, 1, tie=2)."""
    from .engine import _DECIDED

    table = np.full((4, 4, 27), UNDECIDED, dtype=np.int32)
    for num_tricks, mapping in _DECIDED.items():
        for prefix, winner in mapping.items():
            code = 0
            for i, r in enumerate(prefix):
                code += (2 if r == TIE else r) * 3 ** i
            table[num_tricks, len(prefix), code] = UNDECIDED if winner is None else winner
    return table


STRENGTH = _strength_tables()
DECIDED = _decided_tables()
UY_VALUE, UY_PIEZA = _uruguayan_tables()
ENVIDO_RANK_VALUE = np.array([1, 2, 3, 4, 5, 6, 7, 0, 0, 0], dtype=np.int32)

# --------------------------------------------------------------------------------------- small helpers


@njit(cache=True, inline="always")
def _team(s):
    return s & 1


@njit(cache=True)
def _envido_of(st, seat, hand_size):
    best = 0
    base = S_DEALT + 3 * seat
    for i in range(hand_size):
        ci = st[base + i]
        vi = ENVIDO_RANK_VALUE[ci >> 2]
        best = max(best, vi)
        for j in range(i + 1, hand_size):
            cj = st[base + j]
            if (ci & 3) == (cj & 3):
                vj = ENVIDO_RANK_VALUE[cj >> 2]
                # the two best values of a suit: with three of a suit the best pair wins anyway
                best = max(best, 20 + vi + vj)
    return best


@njit(cache=True)
def uy_envido_of(cards, n, muestra):
    """cards.uruguayan_envido_of of ``cards[:n]``: the best pair that goes together (one suit, or a pieza in it),
    else the best single value (a lone pieza's with the 20). Shared with the compiled heuristic."""
    best = 0
    for i in range(n):
        ci = cards[i]
        vi = UY_VALUE[muestra, ci]
        best = max(best, vi + 20 * UY_PIEZA[muestra, ci])
        for j in range(i + 1, n):
            cj = cards[j]
            if (ci & 3) == (cj & 3) or UY_PIEZA[muestra, ci] or UY_PIEZA[muestra, cj]:
                best = max(best, 20 + vi + UY_VALUE[muestra, cj])
    return best


@njit(cache=True)
def uy_flor_of(cards, n, muestra, plain_base):
    """cards.uruguayan_flor_of of ``cards[:n]``, -1 for none: the cards that are not piezas all of one suit; 20
    (``plain_base`` with no pieza) plus the three values. Shared with the compiled heuristic."""
    if n != 3:
        return -1
    suit = -1
    others = 0
    total = 0
    for i in range(3):
        c = cards[i]
        total += UY_VALUE[muestra, c]
        if not UY_PIEZA[muestra, c]:
            others += 1
            if suit >= 0 and (c & 3) != suit:
                return -1
            suit = c & 3
    return total + (plain_base if others == 3 else 20)


@njit(cache=True)
def _flor_of(st, seat, hand_size):
    if hand_size != 3:
        return -1
    base = S_DEALT + 3 * seat
    c0, c1, c2 = st[base], st[base + 1], st[base + 2]
    if (c0 & 3) != (c1 & 3) or (c0 & 3) != (c2 & 3):
        return -1
    return 20 + ENVIDO_RANK_VALUE[c0 >> 2] + ENVIDO_RANK_VALUE[c1 >> 2] + ENVIDO_RANK_VALUE[c2 >> 2]


@njit(cache=True)
def _in_seats(st, seat):
    for i in range(st[S_NSEATS]):
        if st[S_SEATS + i] == seat:
            return True
    return False


@njit(cache=True)
def _next_seat(st, seat):
    ns = st[S_NSEATS]
    for i in range(ns):
        s = st[S_SEATS + i]
        if s > seat:
            return s
    return st[S_SEATS]


@njit(cache=True)
def _team_pie(st, team):
    pie = -1
    for i in range(st[S_NSEATS]):
        s = st[S_ORDER + i]
        if _team(s) == team:
            pie = s
    return pie


@njit(cache=True)
def _responder_for(st, cfg, team, after):
    if cfg[C_RESPONDER] == 1:
        return _team_pie(st, team)
    # first participant of ``team`` in seat order after ``after``
    ns = st[S_NSEATS]
    for i in range(ns):
        s = st[S_SEATS + i]
        if s > after and _team(s) == team:
            return s
    for i in range(ns):
        s = st[S_SEATS + i]
        if s <= after and _team(s) == team:
            return s
    return -1


@njit(cache=True)
def _hand_value(st, cfg):
    level = st[S_LEVEL]
    if level == 0:
        return st[S_BASEVAL]
    return cfg[C_LADDER_VAL + level]


@njit(cache=True)
def _has_played(st, seat):
    if st[S_TRICK_INDEX] > 0:
        return True
    t = st[S_NTDONE]
    base = S_TRICKS + t * 18
    for k in range(st[S_TRICK_LEN + t]):
        if st[base + 3 * k] == seat:
            return True
    return False


@njit(cache=True)
def _undeclared_count(st):
    if st[S_FDECLARED]:
        return 0
    return st[S_FHOLD_N]


@njit(cache=True)
def _is_undeclared_flor(st, seat):
    if st[S_FDECLARED]:
        return False
    for i in range(st[S_FHOLD_N]):
        if st[S_FHOLD + i] == seat:
            return True
    return False


# ------------------------------------------------------------------------------------------ showdown


@njit(cache=True)
def _showdown(st, cfg, values, flor):
    """The engine's ``_showdown``: winning seat; the announcements go to EANN (envido) or FANN (flor)."""
    order = np.empty(6, np.int32)
    count = 0
    for i in range(st[S_NSEATS]):
        s = st[S_ORDER + i]
        if values[s] >= 0:
            order[count] = s
            count += 1
    position = np.full(6, -1, np.int32)
    for i in range(count):
        position[order[i]] = i
    mano_team = _team(st[S_MANO])
    by_team = cfg[C_ENV_TIE] == 1
    ann = S_FANN if flor else S_EANN
    nann = S_FANN_N if flor else S_EANN_N
    best = order[0]
    st[ann] = best
    st[ann + 1] = values[best]
    n_ann = 1
    spoken = np.zeros(6, np.bool_)
    spoken[best] = True
    cursor = 1
    while True:
        found = -1
        for k in range(count):
            s = order[(cursor + k) % count]
            if not spoken[s] and _team(s) != _team(best):
                found = s
                break
        if found < 0:
            st[nann] = n_ann
            return best
        s = found
        spoken[s] = True
        if values[s] != values[best]:
            beats = values[s] > values[best]
        elif by_team:
            beats = _team(s) == mano_team
        else:
            beats = position[s] < position[best]
        st[ann + 2 * n_ann] = s
        if beats:
            best = s
            st[ann + 2 * n_ann + 1] = values[s]
        else:
            st[ann + 2 * n_ann + 1] = -1
        n_ann += 1
        cursor = position[s] + 1


# ------------------------------------------------------------------------------------------- flow


@njit(cache=True)
def _resume(st, cfg):
    if st[S_PENDING]:
        st[S_PHASE] = TRUCO
        st[S_ACTOR] = st[S_TRESP]
        return
    turn = st[S_TURN]
    st[S_PHASE] = PLAY
    st[S_ACTOR] = turn
    if st[S_TRICK_INDEX] == 0 and _is_undeclared_flor(st, turn) and not _has_played(st, turn):
        st[S_PHASE] = FLOR_DECLARE


@njit(cache=True)
def _credit(st, cfg, team, points):
    st[S_SCORE + team] += points
    st[S_HP + team] += points
    if st[S_FIRST_TARGET] < 0 and st[S_SCORE + team] >= cfg[C_TARGET]:
        st[S_FIRST_TARGET] = team


@njit(cache=True)
def _close_record(st):
    st[S_LAST_HP] = st[S_HP]
    st[S_LAST_HP + 1] = st[S_HP + 1]


@njit(cache=True)
def _finish_match(st, winner):
    st[S_WINNER] = winner
    st[S_IS_OVER] = 1
    st[S_PHASE] = OVER
    st[S_ACTOR] = -1
    _close_record(st)


@njit(cache=True)
def _check_match_end(st, cfg):
    if st[S_FIRST_TARGET] >= 0 and cfg[C_END_IMM]:
        _finish_match(st, st[S_FIRST_TARGET])
        return True
    return False


@njit(cache=True)
def _end_hand(st, cfg):
    if st[S_FIRST_TARGET] >= 0:
        _finish_match(st, st[S_FIRST_TARGET])
        return
    if cfg[C_SINGLE]:
        p0, p1 = st[S_HP], st[S_HP + 1]
        _finish_match(st, -1 if p0 == p1 else (1 if p1 > p0 else 0))
        return
    _close_record(st)
    if st[S_PICA_LEFT] > 0:
        i = st[S_PICA_NEXT]
        st[S_PICA_LEFT] -= 1
        st[S_PICA_NEXT] += 1
        mano = st[S_DEAL_MANO]
        _start_hand(st, cfg, (mano + i) % 6, (mano + i + 3) % 6)
        return
    n = cfg[C_N]
    step = 1 if cfg[C_ROT] == 0 else -1
    st[S_DEALER] = (st[S_DEALER] + step) % n
    st[S_PHASE] = DEAL
    st[S_ACTOR] = -1


@njit(cache=True)
def deal(st, cfg, cards, vira):
    """Hand out a dealt deck (docs/rules.md §2.3): ``cards`` lists, per seat, its hand_size cards (flattened,
    seat-major); ``vira`` is a card or -1. Starts the hand (or the first duel of a pica-pica deal)."""
    n = cfg[C_N]
    hs = cfg[C_HAND_SIZE]
    mano = (st[S_DEALER] + 1) % n
    st[S_DEAL_NUMBER] += 1
    for s in range(6):
        for i in range(3):
            st[S_DEALT + 3 * s + i] = cards[s * hs + i] if (s < n and i < hs) else -1
    st[S_VIRA] = vira
    family = cfg[C_FAMILY]
    if family == 0:
        st[S_STR_ROW] = 0
    elif family == 1:
        st[S_STR_ROW] = 1 + cfg[C_MANILHA_OF + vira]
    else:
        st[S_STR_ROW] = URUGUAYAN_ROW + vira
    for s in range(6):
        if s < n and family == 2:
            hand = st[S_DEALT + 3 * s:S_DEALT + 3 * s + 3]
            st[S_ENV_VAL + s] = uy_envido_of(hand, hs, vira)
            st[S_FLOR_VAL + s] = uy_flor_of(hand, hs, vira, cfg[C_PLAIN_FLOR_BASE])
        elif s < n:
            st[S_ENV_VAL + s] = _envido_of(st, s, hs)
            st[S_FLOR_VAL + s] = _flor_of(st, s, hs)
        else:
            st[S_ENV_VAL + s] = -1
            st[S_FLOR_VAL + s] = -1
    st[S_DEAL_MANO] = mano
    if (cfg[C_PICA] and st[S_DEAL_NUMBER] % 2 == 0
            and max(st[S_SCORE], st[S_SCORE + 1]) < cfg[C_PICA_STOP]):
        st[S_PICA_LEFT] = 2
        st[S_PICA_NEXT] = 1
        _start_hand(st, cfg, mano, (mano + 3) % 6)
    else:
        st[S_PICA_LEFT] = 0
        _start_hand(st, cfg, -1, -1)


@njit(cache=True)
def _start_hand(st, cfg, a, b):
    n = cfg[C_N]
    deal_mano = (st[S_DEALER] + 1) % n
    if a < 0:
        st[S_NSEATS] = n
        for s in range(n):
            st[S_SEATS + s] = s
    else:
        st[S_NSEATS] = 2
        st[S_SEATS] = min(a, b)
        st[S_SEATS + 1] = max(a, b)
    k = 0
    for j in range(n):
        s = (deal_mano + j) % n
        if a < 0 or s == a or s == b:
            st[S_ORDER + k] = s
            k += 1
    mano = st[S_ORDER]
    st[S_MANO] = mano
    for s in range(6):
        st[S_PLAYED + s] = 7
    for i in range(st[S_NSEATS]):
        st[S_PLAYED + st[S_SEATS + i]] = 0
    st[S_TURN] = mano
    st[S_LEADER] = mano
    st[S_NTDONE] = 0
    for t in range(4):
        st[S_TRICK_LEN + t] = 0
    st[S_TRICK_INDEX] = 0
    st[S_NRESULTS] = 0
    st[S_LEVEL] = 0
    st[S_HOLDER] = -1
    st[S_PENDING] = 0
    st[S_PROPOSER] = -1
    st[S_TRESP] = -1
    st[S_ECHAIN_N] = 0
    st[S_EOPENED] = 0
    st[S_EDONE] = 0
    st[S_ECALLER] = -1
    st[S_EANN_N] = 0
    st[S_FANN_N] = 0
    st[S_ECALLS_N] = 0
    st[S_ESTATUS] = 0
    st[S_FCALLS_N] = 0
    st[S_FSTATUS] = 0
    nf = 0
    if cfg[C_FLOR]:
        for i in range(st[S_NSEATS]):
            s = st[S_ORDER + i]
            if st[S_FLOR_VAL + s] >= 0:
                st[S_FHOLD + nf] = s
                nf += 1
    st[S_FHOLD_N] = nf
    st[S_FDECLARED] = 0
    st[S_FCHAIN_N] = 0
    st[S_FCALLER] = -1
    st[S_HP] = 0
    st[S_HP + 1] = 0
    for s in range(6):
        st[S_SIGNAL + s] = 0
    st[S_HAND_COUNT] += 1
    # special hand (docs/rules.md §4.7, 4.8)
    st[S_SPECIAL] = NONE_SPECIAL
    st[S_BASEVAL] = 1
    st[S_ODEC_N] = 0
    if cfg[C_FAMILY] == 1:
        eleven = cfg[C_TARGET] - 1
        at0 = st[S_SCORE] == eleven
        at1 = st[S_SCORE + 1] == eleven
        if cfg[C_FERRO] and at0 and at1:
            st[S_SPECIAL] = MAO_DE_FERRO
        elif cfg[C_ONZE] and at0 != at1:
            t = 0 if at0 else 1
            if st[S_SCORE + 1 - t] < eleven:
                st[S_SPECIAL] = MAO_DE_ONZE
                st[S_BASEVAL] = 3
                nd = 0
                for i in range(st[S_NSEATS]):
                    s = st[S_ORDER + i]
                    if _team(s) == t and (cfg[C_ONZE_ANY] or nd == 0):
                        st[S_ODEC + nd] = s
                        nd += 1
                st[S_ODEC_N] = nd
    if st[S_ODEC_N] > 0:
        st[S_PHASE] = ONZE
        st[S_ACTOR] = st[S_ODEC]
    else:
        _resume(st, cfg)


@njit(cache=True)
def new_match(st, cfg, dealer, score0, score1):
    """Reset ``st`` to a match before its first deal (phase DEAL): the caller then calls :func:`deal`."""
    st[:] = 0
    st[S_SCORE] = score0
    st[S_SCORE + 1] = score1
    st[S_FIRST_TARGET] = -1
    st[S_WINNER] = -1
    st[S_DEALER] = dealer
    st[S_VIRA] = -1
    st[S_PHASE] = DEAL
    st[S_ACTOR] = -1


# ------------------------------------------------------------------------------------------- actions


@njit(cache=True)
def _force_flor_other_team(st, team):
    """``_force_flor`` on the undeclared flor holders not of ``team`` (team -1: all of them)."""
    if st[S_FDECLARED]:
        return False
    for i in range(st[S_FHOLD_N]):
        s = st[S_FHOLD + i]
        if team < 0 or _team(s) != team:
            st[S_PHASE] = FLOR_DECLARE
            st[S_ACTOR] = s
            return True
    return False


@njit(cache=True)
def _propose(st, cfg, seat, level):
    if st[S_SPECIAL] != NONE_SPECIAL:
        loser = _team(seat)
        other = 1 - loser
        _credit(st, cfg, other, max(0, cfg[C_TARGET] - st[S_SCORE + other]))
        _finish_match(st, other)
        return
    st[S_PENDING] = level
    proposer = _team(seat)
    st[S_PROPOSER] = proposer
    st[S_TRESP] = _responder_for(st, cfg, 1 - proposer, seat)
    st[S_PHASE] = TRUCO
    st[S_ACTOR] = st[S_TRESP]
    if st[S_TRICK_INDEX] == 0:
        _force_flor_other_team(st, proposer)


@njit(cache=True)
def _open_envido(st, cfg, seat, call):
    st[S_EOPENED] = 1
    k = st[S_ECALLS_N]
    if k < 4:
        st[S_ECALLS + 2 * k] = seat
        st[S_ECALLS + 2 * k + 1] = call
    st[S_ECALLS_N] = k + 1
    if _force_flor_other_team(st, -1):
        st[S_ESTATUS] = 4
        return
    st[S_ESTATUS] = 1
    st[S_ECHAIN] = call
    st[S_ECHAIN_N] = 1
    _envido_call(st, cfg, seat)


@njit(cache=True)
def _envido_call(st, cfg, seat):
    st[S_ECALLER] = seat
    st[S_PHASE] = ENVIDO
    st[S_ACTOR] = _responder_for(st, cfg, 1 - _team(seat), seat)


@njit(cache=True)
def _falta(st, cfg, winner):
    target = cfg[C_TARGET]
    leader = max(st[S_SCORE], st[S_SCORE + 1])
    mode = cfg[C_FALTA]
    if mode == 2 or (mode == 1 and cfg[C_MALAS] and 2 * leader <= target):
        return target - st[S_SCORE + winner]
    if mode >= 3 and cfg[C_MALAS] and leader < target // 2:  # winner_to_buenas (3), leader_to_buenas (4)
        return target // 2 - (st[S_SCORE + winner] if mode == 3 else leader)
    return target - leader


@njit(cache=True)
def _chain_has(st, start, count, call):
    for i in range(st[count]):
        if st[start + i] == call:
            return True
    return False


@njit(cache=True)
def _envido_chain_points(st, cfg, accepted):
    """engine.envido_chain_points of the pending chain: accepted (without the falta's own value) or refused."""
    n_chain = st[S_ECHAIN_N]
    before = 0
    for i in range(n_chain - 1):
        before += 2 if st[S_ECHAIN + i] == A_ENVIDO else 3
    last = st[S_ECHAIN + n_chain - 1]
    if not accepted:
        return before + 1 if cfg[C_ENV_REFUSAL_PLUS_ONE] else (1 if n_chain == 1 else before)
    if last == A_FALTA:
        return before if cfg[C_FALTA_ADDS_CHAIN] else 0
    return before + (2 if last == A_ENVIDO else 3)


@njit(cache=True)
def _on_envido(st, cfg, seat, action):
    n_chain = st[S_ECHAIN_N]
    if action == A_QUIERO:
        values = np.full(6, -1, np.int32)
        for i in range(st[S_NSEATS]):
            s = st[S_SEATS + i]
            values[s] = st[S_ENV_VAL + s]
        winner = _team(_showdown(st, cfg, values, False))
        points = _envido_chain_points(st, cfg, True)
        if _chain_has(st, S_ECHAIN, S_ECHAIN_N, A_FALTA):
            points += _falta(st, cfg, winner)
        st[S_ECHAIN_N] = 0
        st[S_EDONE] = 1
        st[S_ESTATUS] = 2
        _credit(st, cfg, winner, points)
    elif action == A_NOQ:
        points = _envido_chain_points(st, cfg, False)
        st[S_ECHAIN_N] = 0
        st[S_EDONE] = 1
        st[S_ESTATUS] = 3
        _credit(st, cfg, _team(st[S_ECALLER]), points)
    else:
        st[S_ECHAIN + n_chain] = action
        st[S_ECHAIN_N] = n_chain + 1
        k = st[S_ECALLS_N]
        if k < 4:
            st[S_ECALLS + 2 * k] = seat
            st[S_ECALLS + 2 * k + 1] = action
        st[S_ECALLS_N] = k + 1
        _envido_call(st, cfg, seat)
        return
    if not _check_match_end(st, cfg):
        _resume(st, cfg)


@njit(cache=True)
def _on_flor_declare(st, cfg, seat):
    st[S_FDECLARED] = 1
    st[S_EDONE] = 1
    st[S_ECHAIN_N] = 0
    k = st[S_FCALLS_N]
    st[S_FCALLS + 2 * k] = seat
    st[S_FCALLS + 2 * k + 1] = A_FLOR
    st[S_FCALLS_N] = k + 1
    nf = st[S_FHOLD_N]
    one_team = True
    t0 = _team(st[S_FHOLD])
    for i in range(nf):
        if _team(st[S_FHOLD + i]) != t0:
            one_team = False
    if one_team:
        st[S_FSTATUS] = 4
        _credit(st, cfg, _team(seat), _uncontested_points(cfg, nf))
        if not _check_match_end(st, cfg):
            _resume(st, cfg)
        return
    st[S_FCHAIN] = A_FLOR
    st[S_FCHAIN_N] = 1
    st[S_FSTATUS] = 1
    _flor_call(st, cfg, seat)


@njit(cache=True)
def _flor_call(st, cfg, seat):
    st[S_FCALLER] = seat
    other = 1 - _team(seat)
    st[S_PHASE] = FLOR_CONTEST
    ns = st[S_NSEATS]
    for pass_ in range(2):
        for i in range(ns):
            s = st[S_SEATS + i]
            after = s > seat if pass_ == 0 else s <= seat
            if after and _team(s) == other:
                for j in range(st[S_FHOLD_N]):
                    if st[S_FHOLD + j] == s:
                        st[S_ACTOR] = s
                        return


@njit(cache=True)
def _on_flor_contest(st, cfg, seat, action):
    n_chain = st[S_FCHAIN_N]
    if action == A_QUIERO:
        values = np.full(6, -1, np.int32)
        for i in range(st[S_FHOLD_N]):
            s = st[S_FHOLD + i]
            values[s] = st[S_FLOR_VAL + s]
        winner = _team(_showdown(st, cfg, values, True))
        st[S_FSTATUS] = 2
        _credit(st, cfg, winner, _contest_points(st, cfg, action, winner))
    elif action == A_NOQ:
        st[S_FSTATUS] = 3
        team = _team(st[S_FCALLER])
        _credit(st, cfg, team, _contest_points(st, cfg, action, team))
    else:
        st[S_FCHAIN + n_chain] = action
        st[S_FCHAIN_N] = n_chain + 1
        k = st[S_FCALLS_N]
        st[S_FCALLS + 2 * k] = seat
        st[S_FCALLS + 2 * k + 1] = action
        st[S_FCALLS_N] = k + 1
        _flor_call(st, cfg, seat)
        return
    st[S_FCHAIN_N] = 0
    if not _check_match_end(st, cfg):
        _resume(st, cfg)


@njit(cache=True)
def _contest_points(st, cfg, answer, team):
    """engine.TrucoState._contest_points: the flor_values table, or pytruco's reading (flor_scoring)."""
    count = st[S_FHOLD_N]
    last = st[S_FCHAIN + st[S_FCHAIN_N] - 1]
    has_cf = _chain_has(st, S_FCHAIN, S_FCHAIN_N, A_CFLOR)
    has_resto = _chain_has(st, S_FCHAIN, S_FCHAIN_N, A_CFRESTO)
    if cfg[C_FLOR_PER_FLOR]:
        if answer == A_NOQ:
            return 3 * count + (1 if last != A_FLOR else 0)
        if has_resto:
            return _falta(st, cfg, team)
        return 4 if has_cf else 3 * count
    if answer == A_QUIERO:
        if has_resto:
            return _falta(st, cfg, team) + cfg[C_FV + 5] * count
        return cfg[C_FV + 3] if has_cf else cfg[C_FV + 1] * count
    if last == A_FLOR:
        return cfg[C_FV + 2]
    if last == A_CFLOR:
        return cfg[C_FV + 4]
    return cfg[C_FV + 7] if has_cf else cfg[C_FV + 6]


@njit(cache=True, inline="always")
def _uncontested_points(cfg, flors):
    """engine.TrucoState._uncontested_points."""
    return (3 if cfg[C_FLOR_PER_FLOR] else cfg[C_FV]) * flors


@njit(cache=True)
def _on_onze(st, cfg, seat, action):
    nd = st[S_ODEC_N]
    for i in range(nd - 1):
        st[S_ODEC + i] = st[S_ODEC + i + 1]
    nd -= 1
    st[S_ODEC_N] = nd
    if action == A_QUIERO:
        st[S_ODEC_N] = 0
        _resume(st, cfg)
    elif nd > 0:
        st[S_ACTOR] = st[S_ODEC]
    else:
        _credit(st, cfg, 1 - _team(seat), 1)
        _end_hand(st, cfg)


@njit(cache=True)
def _play_card(st, cfg, seat, card, covered):
    base = S_DEALT + 3 * seat
    for i in range(3):
        if st[base + i] == card and not (st[S_PLAYED + seat] >> i) & 1:
            st[S_PLAYED + seat] |= 1 << i
            break
    t = st[S_NTDONE]
    k = st[S_TRICK_LEN + t]
    p = S_TRICKS + t * 18 + 3 * k
    st[p] = seat
    st[p + 1] = card
    st[p + 2] = 1 if covered else 0
    st[S_TRICK_LEN + t] = k + 1
    if k + 1 < st[S_NSEATS]:
        st[S_TURN] = _next_seat(st, seat)
        _resume(st, cfg)
        return
    _finish_trick(st, cfg)


@njit(cache=True)
def _finish_trick(st, cfg):
    t = st[S_NTDONE]
    base = S_TRICKS + t * 18
    k = st[S_TRICK_LEN + t]
    row = st[S_STR_ROW]
    top = -1
    for i in range(k):
        if not st[base + 3 * i + 2]:
            v = STRENGTH[row, st[base + 3 * i + 1]]
            top = max(top, v)
    n_tops = 0
    first_top = -1
    mano_team = _team(st[S_MANO])
    mano_top = -1  # the mano's team's first top card (trick_tie_to_mano)
    team_mask = 0
    for i in range(k):
        if not st[base + 3 * i + 2] and STRENGTH[row, st[base + 3 * i + 1]] == top:
            s = st[base + 3 * i]
            if first_top < 0:
                first_top = s
            if mano_top < 0 and _team(s) == mano_team:
                mano_top = s
            n_tops += 1
            team_mask |= 1 << _team(s)
    leader = st[S_LEADER]
    if (team_mask == 1 or team_mask == 2) and (n_tops == 1 or cfg[C_PARTNER_TIE]):
        result = _team(first_top)
        next_leader = first_top
    elif cfg[C_TIE_TO_MANO] and mano_top >= 0:  # engine.trick_winner with mano_team
        result = mano_team
        next_leader = mano_top
    else:
        result = TIE
        rule = cfg[C_LEAD_TIE]
        if rule == 0:
            next_leader = leader
        elif rule == 1:
            next_leader = first_top
        else:
            next_leader = _next_seat(st, leader)
    st[S_NTDONE] = t + 1
    nr = st[S_NRESULTS]
    st[S_RESULTS + nr] = result
    nr += 1
    st[S_NRESULTS] = nr
    code = 0
    mult = 1
    for i in range(nr):
        r = st[S_RESULTS + i]
        code += (2 if r == TIE else r) * mult
        mult *= 3
    winner = DECIDED[cfg[C_HAND_SIZE], nr, code]
    if winner == UNDECIDED:
        st[S_TRICK_INDEX] += 1
        st[S_LEADER] = next_leader
        st[S_TURN] = next_leader
        _resume(st, cfg)
    elif winner == ALL_TIED:
        _all_tricks_tied(st, cfg)
    else:
        _credit(st, cfg, winner, _hand_value(st, cfg))
        _end_hand(st, cfg)


@njit(cache=True)
def _all_tricks_tied(st, cfg):
    winner = -1
    if cfg[C_FAMILY] != 1:
        winner = _team(st[S_MANO])
    else:
        rule = cfg[C_ALL_TIED]
        if rule == 1:
            winner = _team(st[S_DEALER])
        elif rule == 2:
            winner = _team(st[S_MANO])
    if winner >= 0:
        _credit(st, cfg, winner, _hand_value(st, cfg))
    _end_hand(st, cfg)


@njit(cache=True)
def _fold(st, cfg, seat):
    team = _team(seat)
    if cfg[C_MAZO_PLAYER]:
        for i in range(st[S_NSEATS]):
            s = st[S_SEATS + i]
            if s != seat and _team(s) == team:
                _leave_hand(st, cfg, seat)
                return
    bonus = (cfg[C_MAZO_BONUS] and st[S_TRICK_INDEX] == 0 and not st[S_EOPENED] and not st[S_FDECLARED]
             and st[S_LEVEL] == 0)
    value = 2 if bonus else _hand_value(st, cfg)
    their = 0
    if not st[S_FDECLARED]:
        for i in range(st[S_FHOLD_N]):
            if _team(st[S_FHOLD + i]) != team:
                their += 1
    if their and not cfg[C_FOLD_FLOR_LOST]:
        st[S_FDECLARED] = 1
        st[S_FSTATUS] = 4
        _credit(st, cfg, 1 - team, _uncontested_points(cfg, their))
    _credit(st, cfg, 1 - team, value)
    _end_hand(st, cfg)


@njit(cache=True)
def _leave_hand(st, cfg, seat):
    """engine.TrucoState._leave_hand (mazo_scope="player"): the seat leaves the hand's seats and order."""
    ns = st[S_NSEATS]
    for base in (S_SEATS, S_ORDER):
        k = 0
        for i in range(ns):
            s = st[base + i]
            if s != seat:
                st[base + k] = s
                k += 1
    st[S_NSEATS] = ns - 1
    t = st[S_NTDONE]
    if st[S_TRICK_LEN + t] == 0 and st[S_LEADER] == seat:
        st[S_LEADER] = _next_seat(st, seat)
    if st[S_TRICK_LEN + t] < st[S_NSEATS]:
        st[S_TURN] = _next_seat(st, seat)
        _resume(st, cfg)
    else:
        _finish_trick(st, cfg)


@njit(cache=True, inline="always")
def _tally_class(action):
    """Index into truco_env.actions.TALLY_CLASSES (checked against TALLY_CLASS_OF by a test)."""
    if action < A_TRUCO:
        return 0
    if action < A_ENVIDO:
        return 1
    if action < A_FALTA:
        return 2
    if action == A_FALTA:
        return 3
    if action < A_QUIERO:
        return 4
    return 5 + action - A_QUIERO


@njit(cache=True)
def _refuse_truco(st, cfg):
    """The pending truco refused: its proposer scores the level below, the hand ends."""
    _credit(st, cfg, st[S_PROPOSER], cfg[C_LADDER_VAL + st[S_PENDING] - 1])
    _end_hand(st, cfg)


@njit(cache=True)
def apply(st, cfg, action):
    """Apply a LEGAL action id of the actor (the caller checks legality). The phase may then be DEAL."""
    seat = st[S_ACTOR]
    phase = st[S_PHASE]
    st[S_DECISIONS] += 1
    if action >= A_SENA:  # a signal: no public decision (no tally), and the seat acts again
        st[S_SIGNAL + seat] = action - A_SENA + 1
        return
    st[S_TALLY + NUM_TALLY * _team(seat) + _tally_class(action)] += 1
    if phase == PLAY:
        if action < A_COVER:
            _play_card(st, cfg, seat, action, False)
        elif action < A_SLOT:
            _play_card(st, cfg, seat, action - A_COVER, True)
        elif action < A_TRUCO:
            _play_card(st, cfg, seat, st[S_DEALT + 3 * seat + action - A_SLOT], False)
        elif action == A_ENVIDO or action == A_REAL or action == A_FALTA:
            _open_envido(st, cfg, seat, action)
        elif action == A_MAZO:
            _fold(st, cfg, seat)
        else:
            _propose(st, cfg, seat, st[S_LEVEL] + 1)
    elif phase == TRUCO:
        if action == A_QUIERO:
            st[S_LEVEL] = st[S_PENDING]
            st[S_HOLDER] = _team(seat)
            st[S_PENDING] = 0
            _resume(st, cfg)
        elif action == A_NOQ:
            _refuse_truco(st, cfg)
        elif action == A_ENVIDO or action == A_REAL or action == A_FALTA:
            _open_envido(st, cfg, seat, action)
        else:
            st[S_LEVEL] = st[S_PENDING]
            st[S_HOLDER] = _team(seat)
            _propose(st, cfg, seat, st[S_PENDING] + 1)
    elif phase == ENVIDO:
        _on_envido(st, cfg, seat, action)
    elif phase == FLOR_DECLARE:
        if action == A_NOQ:  # flor_before_answer="refuse_unsung": the truco refused, the flor never scored
            _refuse_truco(st, cfg)
        else:
            _on_flor_declare(st, cfg, seat)
    elif phase == FLOR_CONTEST:
        _on_flor_contest(st, cfg, seat, action)
    elif phase == ONZE:
        _on_onze(st, cfg, seat, action)


# ------------------------------------------------------------------------------------------ legal actions


@njit(cache=True)
def _may_raise(st, cfg, team, pending):
    if not cfg[C_FORBID_USELESS] or cfg[C_FAMILY] != 1:
        return True
    value = _hand_value(st, cfg) if pending < 0 else cfg[C_LADDER_VAL + pending]
    return st[S_SCORE + team] + value < cfg[C_TARGET]


@njit(cache=True)
def _can_open_envido(st, cfg, seat):
    if (cfg[C_FAMILY] == 1 or st[S_EOPENED] or st[S_EDONE] or st[S_FDECLARED] or st[S_TRICK_INDEX] != 0):
        return False
    if st[S_LEVEL] > 0 and not cfg[C_ENV_AFTER_TRUCO]:
        return False
    if cfg[C_ENV_OPENERS] == 1 and seat != _team_pie(st, _team(seat)):
        return False
    phase = st[S_PHASE]
    if phase == PLAY:
        return not _has_played(st, seat)
    if phase == TRUCO:
        return (cfg[C_ENV_PRIMERO] != 0 and st[S_PENDING] == 1
                and (cfg[C_ENV_PRIMERO_PLAYED] != 0 or not _has_played(st, seat)))
    return False


@njit(cache=True)
def legal_mask(st, cfg, mask):
    """Write the actor's legal actions into the int8 ``mask`` (98, or 106 with señas); returns how many."""
    mask[:] = 0
    phase = st[S_PHASE]
    if phase == OVER or phase == DEAL:
        return 0
    seat = st[S_ACTOR]
    count = 0
    if phase == PLAY:
        played = st[S_PLAYED + seat]
        hs = cfg[C_HAND_SIZE]
        base = S_DEALT + 3 * seat
        if st[S_SPECIAL] == MAO_DE_FERRO and cfg[C_FERRO_BLIND]:
            for i in range(hs):
                if not (played >> i) & 1:
                    mask[A_SLOT + i] = 1
                    count += 1
        else:
            cover = False
            if cfg[C_COVERED] and cfg[C_FAMILY] == 1 and st[S_TRICK_LEN + st[S_NTDONE]] > 0:
                nr = st[S_NRESULTS]
                cover = nr > 0 and st[S_RESULTS + nr - 1] != TIE
            for i in range(hs):
                if not (played >> i) & 1:
                    mask[st[base + i]] = 1
                    count += 1
                    if cover:
                        mask[A_COVER + st[base + i]] = 1
                        count += 1
        team = _team(seat)
        level = st[S_LEVEL]
        if level < cfg[C_NLADDER] and (level == 0 or st[S_HOLDER] == team):
            special_ok = st[S_SPECIAL] == NONE_SPECIAL or cfg[C_ONZE_TRUCO_LOSES]
            if special_ok and _may_raise(st, cfg, team, -1):
                mask[cfg[C_LADDER_ACT + level]] = 1
                count += 1
        if _can_open_envido(st, cfg, seat):
            mask[A_ENVIDO] = 1
            mask[A_REAL] = 1
            mask[A_FALTA] = 1
            count += 3
        if cfg[C_FAMILY] != 1 or (cfg[C_PMAZO] and st[S_SPECIAL] != MAO_DE_FERRO):
            mask[A_MAZO] = 1
            count += 1
        if cfg[C_SENAS] and st[S_NSEATS] > 2 and st[S_SIGNAL + seat] == 0 and not _has_played(st, seat):
            for g in range(NUM_SENAS):
                mask[A_SENA + g] = 1
            count += NUM_SENAS
        return count
    if phase == FLOR_DECLARE:
        mask[A_FLOR] = 1
        if cfg[C_REFUSE_UNSUNG] and st[S_PENDING] > 0 and _team(seat) != st[S_PROPOSER]:
            mask[A_NOQ] = 1
            return 2
        return 1
    mask[A_QUIERO] = 1
    mask[A_NOQ] = 1
    count = 2
    if phase == TRUCO:
        pending = st[S_PENDING]
        if pending < cfg[C_NLADDER] and _may_raise(st, cfg, _team(seat), pending):
            mask[cfg[C_LADDER_ACT + pending]] = 1
            count += 1
        if _can_open_envido(st, cfg, seat):
            mask[A_ENVIDO] = 1
            mask[A_REAL] = 1
            mask[A_FALTA] = 1
            count += 3
    elif phase == ENVIDO:
        n_chain = st[S_ECHAIN_N]
        last = st[S_ECHAIN + n_chain - 1]
        n_env = 0
        has_real = False
        has_falta = False
        for i in range(n_chain):
            c = st[S_ECHAIN + i]
            if c == A_ENVIDO:
                n_env += 1
            elif c == A_REAL:
                has_real = True
            else:
                has_falta = True
        if last == A_ENVIDO and n_env < 2:
            mask[A_ENVIDO] = 1
            count += 1
        if not has_real and not has_falta:
            mask[A_REAL] = 1
            count += 1
        if not has_falta:
            mask[A_FALTA] = 1
            count += 1
    elif phase == FLOR_CONTEST and (st[S_FCHAIN_N] == 1 or not cfg[C_FLOR_RAISE_UNSUNG]):
        if st[S_FCHAIN_N] == 1:
            mask[A_CFLOR] = 1
            count += 1
        if not _chain_has(st, S_FCHAIN, S_FCHAIN_N, A_CFRESTO):
            mask[A_CFRESTO] = 1
            count += 1
    return count


# -------------------------------------------------------------------------------------------- observation
# Offsets of truco_env.encoding.OBS_OFFSETS (checked against it by a test).
O_HAND, O_SLOTS, O_PARTNER, O_TABLE, O_COVERED, O_RESULTS = 0, 40, 43, 83, 803, 821
O_TRICK_INDEX, O_TRICK_LEADER, O_VIRA, O_MANILHA, O_LEVEL, O_HAND_VALUE = 830, 833, 839, 879, 889, 894
O_RAISE_HOLDER, O_PENDING, O_PENDING_BY, O_ECALLS, O_ESTATUS, O_ESHOWN = 895, 898, 903, 905, 925, 930
O_FCALLS, O_FSTATUS, O_FHOLDERS, O_FSHOWN, O_OWN_POINTS, O_SCORE, O_TARGET = 948, 963, 968, 974, 992, 994, 996
O_MANO, O_DEALER, O_ACTOR, O_PARTICIPANTS, O_PHASE, O_SPECIAL = 997, 1003, 1009, 1015, 1021, 1028
O_FAMILY, O_NUM_PLAYERS, O_HAND_SIZE, O_OPTIONS, O_TALLY = 1031, 1033, 1036, 1039, 1068
OBS_SIZE = 1086
O_SENAS_SEEN, O_SENA_CAUGHT_BY, O_SENA_CODE = 1086, 1134, 1140  # truco_env.encoding.SENAS_OFFSETS
OBS_SIZE_SENAS = 1141
O_UY_FLAG, O_PIEZAS, O_UY_OPTIONS, O_UY_TARGET = 1086, 1087, 1127, 1135  # truco_env.encoding.URUGUAYAN_OFFSETS
OBS_SIZE_UY = 1136
#: A buffer this wide holds the observation of any preset (señas' block or the Uruguayan one after the common part).
OBS_SIZE_MAX = max(OBS_SIZE_SENAS, OBS_SIZE_UY)
TALLY_SCALE = 20.0


@njit(cache=True)
def encode_static(cfg, options, out):
    """The fields fixed by the rules (family, players, hand size, options): written once per buffer."""
    if out.shape[0] < (OBS_SIZE_UY if cfg[C_FAMILY] == 2 else OBS_SIZE_SENAS if cfg[C_SENAS] else OBS_SIZE):
        raise ValueError("encode_static: the observation buffer is narrower than this game's observation")
    if cfg[C_FAMILY] == 2:
        out[O_UY_FLAG] = 1.0
        out[O_UY_OPTIONS] = 1.0 if cfg[C_PLAIN_FLOR_BASE] == 0 else 0.0  # encoding.URUGUAYAN_OPTION_BITS
        out[O_UY_OPTIONS + 1] = 1.0 if cfg[C_FALTA] == 3 else 0.0
        out[O_UY_OPTIONS + 2] = 1.0 if cfg[C_FALTA] == 4 else 0.0
        out[O_UY_OPTIONS + 3] = 1.0 if cfg[C_ENV_REFUSAL_PLUS_ONE] else 0.0
        out[O_UY_OPTIONS + 4] = 1.0 if cfg[C_FALTA_ADDS_CHAIN] else 0.0
        out[O_UY_OPTIONS + 5] = 1.0 if cfg[C_PICA_UNTIL_T5] else 0.0
        out[O_UY_OPTIONS + 6] = 1.0 if cfg[C_REFUSE_UNSUNG] else 0.0
        out[O_UY_OPTIONS + 7] = 1.0 if cfg[C_TIE_TO_MANO] else 0.0
        out[O_UY_TARGET] = min(cfg[C_TARGET] / 40.0, 1.0)
    else:
        out[O_FAMILY + cfg[C_FAMILY]] = 1.0
    n = cfg[C_N]
    out[O_NUM_PLAYERS + (0 if n == 2 else (1 if n == 4 else 2))] = 1.0
    out[O_HAND_SIZE + cfg[C_HAND_SIZE] - 1] = 1.0
    for i in range(options.shape[0]):
        out[O_OPTIONS + i] = options[i]


@njit(cache=True)
def encode_obs(st, cfg, viewer, out):
    """The observation of ``viewer`` (truco_env.encoding.encode_observation), writing only the dynamic fields:
    ``out[:O_FAMILY]`` is cleared and rewritten, the static tail (:func:`encode_static`) is left as it is.
    ``out`` must be as wide as the game's observation: compiled code checks no bounds, so a buffer of the common
    width would let the Uruguayan or the señas block spill into the memory after it."""
    if out.shape[0] < (OBS_SIZE_UY if cfg[C_FAMILY] == 2 else OBS_SIZE_SENAS if cfg[C_SENAS] else OBS_SIZE):
        raise ValueError("encode_obs: the observation buffer is narrower than this game's observation")
    out[:O_FAMILY] = 0.0
    n = cfg[C_N]
    team = _team(viewer)
    special = st[S_SPECIAL]
    blind = special == MAO_DE_FERRO and cfg[C_FERRO_BLIND] != 0
    hs = cfg[C_HAND_SIZE]
    played = st[S_PLAYED + viewer]
    for i in range(hs):
        if not (played >> i) & 1:
            out[O_SLOTS + i] = 1.0
            if not blind:
                out[O_HAND + st[S_DEALT + 3 * viewer + i]] = 1.0
    if special == MAO_DE_ONZE and n > 2 and st[S_SCORE + team] == cfg[C_TARGET] - 1:
        for seat in range(n):
            if seat != viewer and _team(seat) == team:
                p = st[S_PLAYED + seat]
                for i in range(hs):
                    if not (p >> i) & 1:
                        out[O_PARTNER + st[S_DEALT + 3 * seat + i]] = 1.0
    last = min(st[S_NTDONE], 3)
    for t in range(last + 1):
        if t >= 3:
            break
        base = S_TRICKS + t * 18
        for k in range(st[S_TRICK_LEN + t]):
            rel = (st[base + 3 * k] - viewer) % n
            if st[base + 3 * k + 2]:
                out[O_COVERED + t * 6 + rel] = 1.0
            else:
                out[O_TABLE + (t * 6 + rel) * 40 + st[base + 3 * k + 1]] = 1.0
    for t in range(st[S_NRESULTS]):
        r = st[S_RESULTS + t]
        out[O_RESULTS + 3 * t + (2 if r == TIE else (0 if r == team else 1))] = 1.0
    over = st[S_IS_OVER] != 0
    if not over:
        out[O_TRICK_INDEX + min(st[S_TRICK_INDEX], 2)] = 1.0
        out[O_TRICK_LEADER + (st[S_LEADER] - viewer) % n] = 1.0
    vira = st[S_VIRA]
    if vira >= 0:
        out[O_VIRA + vira] = 1.0
        if cfg[C_FAMILY] == 1:
            out[O_MANILHA + cfg[C_MANILHA_OF + vira]] = 1.0
        else:  # the Uruguayan block: what the muestra makes of the deck
            for c in range(40):
                out[O_PIEZAS + c] = UY_PIEZA[vira, c]
    level = st[S_LEVEL]
    out[O_LEVEL + level] = 1.0
    out[O_HAND_VALUE] = _hand_value(st, cfg) / 12.0
    holder = st[S_HOLDER]
    out[O_RAISE_HOLDER + (0 if holder < 0 else (1 if holder == team else 2))] = 1.0
    pending = st[S_PENDING]
    if pending:
        out[O_PENDING + pending] = 1.0
        out[O_PENDING_BY + (0 if st[S_PROPOSER] == team else 1)] = 1.0
    else:
        out[O_PENDING] = 1.0
    for i in range(min(st[S_ECALLS_N], 4)):
        seat = st[S_ECALLS + 2 * i]
        call = st[S_ECALLS + 2 * i + 1]
        out[O_ECALLS + 5 * i + call - A_ENVIDO] = 1.0
        out[O_ECALLS + 5 * i + (3 if _team(seat) == team else 4)] = 1.0
    out[O_ESTATUS + st[S_ESTATUS]] = 1.0
    for i in range(st[S_EANN_N]):
        rel = (st[S_EANN + 2 * i] - viewer) % n
        value = st[S_EANN + 2 * i + 1]
        if value < 0:
            out[O_ESHOWN + 3 * rel + 2] = 1.0
        else:
            out[O_ESHOWN + 3 * rel] = 1.0
            out[O_ESHOWN + 3 * rel + 1] = value / cfg[C_ENV_SCALE]
    for i in range(min(st[S_FCALLS_N], 3)):
        seat = st[S_FCALLS + 2 * i]
        call = st[S_FCALLS + 2 * i + 1]
        out[O_FCALLS + 5 * i + call - A_FLOR] = 1.0
        out[O_FCALLS + 5 * i + (3 if _team(seat) == team else 4)] = 1.0
    fstatus = st[S_FSTATUS]
    out[O_FSTATUS + fstatus] = 1.0
    for i in range(st[S_FHOLD_N]):
        seat = st[S_FHOLD + i]
        if seat == viewer or fstatus != 0:
            out[O_FHOLDERS + (seat - viewer) % n] = 1.0
    for i in range(st[S_FANN_N]):
        rel = (st[S_FANN + 2 * i] - viewer) % n
        value = st[S_FANN + 2 * i + 1]
        if value < 0:
            out[O_FSHOWN + 3 * rel + 2] = 1.0
        else:
            out[O_FSHOWN + 3 * rel] = 1.0
            out[O_FSHOWN + 3 * rel + 1] = value / cfg[C_FLOR_SCALE]
    if cfg[C_FAMILY] != 1:
        out[O_OWN_POINTS] = st[S_ENV_VAL + viewer] / cfg[C_ENV_SCALE]
        flor = st[S_FLOR_VAL + viewer]
        if cfg[C_FLOR] and flor >= 0:
            out[O_OWN_POINTS + 1] = flor / cfg[C_FLOR_SCALE]
    target = cfg[C_TARGET]
    out[O_SCORE] = min(st[S_SCORE + team] / target, 1.0)
    out[O_SCORE + 1] = min(st[S_SCORE + 1 - team] / target, 1.0)
    out[O_TARGET] = min(target / 30.0, 1.0)
    out[O_MANO + (st[S_MANO] - viewer) % n] = 1.0
    out[O_DEALER + (st[S_DEALER] - viewer) % n] = 1.0
    actor = st[S_ACTOR]
    if actor >= 0:
        out[O_ACTOR + (actor - viewer) % n] = 1.0
    for i in range(st[S_NSEATS]):
        out[O_PARTICIPANTS + (st[S_SEATS + i] - viewer) % n] = 1.0
    out[O_PHASE + st[S_PHASE]] = 1.0
    out[O_SPECIAL] = 1.0 if special == MAO_DE_ONZE else 0.0
    out[O_SPECIAL + 1] = 1.0 if special == MAO_DE_FERRO else 0.0
    out[O_SPECIAL + 2] = 1.0 if blind else 0.0
    out[O_TALLY:O_TALLY + 2 * (NUM_TALLY + 1)] = 0.0
    for row in range(2):
        base = S_TALLY + NUM_TALLY * (team if row == 0 else 1 - team)
        total = 0
        for k in range(NUM_TALLY):
            total += st[base + k]
        if total > 0:
            for k in range(NUM_TALLY):
                out[O_TALLY + (NUM_TALLY + 1) * row + k] = st[base + k] / total
            out[O_TALLY + (NUM_TALLY + 1) * row + NUM_TALLY] = total / (total + TALLY_SCALE)
    if cfg[C_SENAS]:
        _encode_senas(st, cfg, viewer, out)


@njit(cache=True)
def _encode_senas(st, cfg, viewer, out):
    """truco_env.encoding._encode_senas: the signals the viewer saw, who caught its own, the code."""
    n = cfg[C_N]
    out[O_SENAS_SEEN:OBS_SIZE_SENAS] = 0.0
    for seat in range(n):
        g = st[S_SIGNAL + seat]
        if g > 0 and (_team(seat) == _team(viewer) or (st[S_CATCH + seat] >> viewer) & 1):
            out[O_SENAS_SEEN + NUM_SENAS * ((seat - viewer) % n) + g - 1] = 1.0
    if st[S_SIGNAL + viewer] > 0:
        for other in range(n):
            if (st[S_CATCH + viewer] >> other) & 1:
                out[O_SENA_CAUGHT_BY + (other - viewer) % n] = 1.0
    out[O_SENA_CODE] = 1.0 if cfg[C_SENA_TABLE] else 0.0


@njit(cache=True)
def encode_privileged(st, cfg, viewer, out):
    """truco_env.encoding.encode_privileged on a kernel state: the other seats' unplayed cards, seat ``k``
    places after ``viewer`` in block ``k - 1``."""
    out[:] = 0.0
    n = cfg[C_N]
    for seat in range(n):
        if seat == viewer:
            continue
        block = ((seat - viewer) % n - 1) * 40
        played = st[S_PLAYED + seat]
        for i in range(cfg[C_HAND_SIZE]):
            if not (played >> i) & 1:
                out[block + st[S_DEALT + 3 * seat + i]] = 1.0


@njit(cache=True)
def encode_privileged_rows(states, cfg, actors, rows, out):
    """:func:`encode_privileged` of each env in ``rows`` for its actor, into ``out[k]`` (one call per batch: a
    Python loop of per-row calls cost more than the rest of a training step's environment work)."""
    for k in range(len(rows)):
        encode_privileged(states[rows[k]], cfg, actors[rows[k]], out[k])


# ------------------------------------------------------------------------------------------ driver entry points
CLOSED = 256  # step() flag: the hand ended (LAST_HP holds its points)
NEEDS_DEAL = 512  # step() flag: a new deal is needed (phase DEAL)
ENDED = 1024  # step() flag: the match is over


@njit(cache=True)
def legal_ids(st, cfg, mask, ids):
    """The actor's legal action ids in the engine's order (quiero/no_quiero first; cards, then covered cards,
    in dealt-slot order; the rest by id) into ``ids``; the mask into ``mask``. Returns how many."""
    count = legal_mask(st, cfg, mask)
    if count == 0:
        return 0
    k = 0
    if mask[A_QUIERO]:
        ids[0] = A_QUIERO
        ids[1] = A_NOQ
        k = 2
        for a in range(A_QUIERO):
            if mask[a]:
                ids[k] = a
                k += 1
        return k
    seat = st[S_ACTOR]
    base = S_DEALT + 3 * seat
    hs = cfg[C_HAND_SIZE]
    for i in range(hs):
        c = st[base + i]
        if mask[c]:
            ids[k] = c
            k += 1
    for i in range(hs):
        c = st[base + i]
        if mask[A_COVER + c]:
            ids[k] = A_COVER + c
            k += 1
    for a in range(A_SLOT, mask.shape[0]):
        if mask[a]:
            ids[k] = a
            k += 1
    return k


@njit(cache=True)
def step(st, cfg, action, mask, ids):
    """Apply a legal ``action``; then the next legal ids as :func:`legal_ids` (none when a deal is needed or the
    match is over). Returns their count plus the flags CLOSED, NEEDS_DEAL, ENDED."""
    count = st[S_HAND_COUNT]
    apply(st, cfg, action)
    phase = st[S_PHASE]
    if phase == DEAL:
        mask[:] = 0
        return CLOSED | NEEDS_DEAL
    if phase == OVER:
        mask[:] = 0
        return CLOSED | ENDED
    flags = CLOSED if st[S_HAND_COUNT] != count else 0
    return flags | legal_ids(st, cfg, mask, ids)


@njit(cache=True)
def deal_and_legal(st, cfg, cards, vira, mask, ids):
    deal(st, cfg, cards, vira)
    return legal_ids(st, cfg, mask, ids)


# ------------------------------------------------------------------------------------------ batched driver
# (truco_env.vector) Deals come from a per-match splitmix64 generator, not from the reference's
# random.Random(f"{seed}:{k}"): records still replay, because a record carries its deals.

INFO_CLOSED, INFO_HP, INFO_SCORE, INFO_WINNER, INFO_DONE = 0, 1, 3, 5, 6
INFO_SIZE = 7
SKIP = -1  # the action that leaves an env of ``vec_step`` untouched (a batch where only some envs move)


@njit(cache=True, inline="always")
def _splitmix(rng, i):
    z = rng[i] + np.uint64(0x9E3779B97F4A7C15)
    rng[i] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _below(rng, i, n):
    return np.int64((_splitmix(rng, i) >> np.uint64(11)) % np.uint64(n))


@njit(cache=True)
def _rng_deal(st, cfg, rng, i):
    """Shuffle the deck with the env's generator and deal it by docs/rules.md §2.3 (as TrucoState._deal does)."""
    n = cfg[C_N]
    hs = cfg[C_HAND_SIZE]
    length = cfg[C_DECK_LEN]
    deck = np.empty(40, np.int32)
    for k in range(length):
        deck[k] = cfg[C_DECK_CARDS + k]
    for k in range(length - 1, 0, -1):
        j = _below(rng, i, k + 1)
        tmp = deck[k]
        deck[k] = deck[j]
        deck[j] = tmp
    mano = (st[S_DEALER] + 1) % n
    cards = np.empty(18, np.int32)
    for k in range(hs * n):
        seat = (mano + k) % n
        cards[seat * hs + k // n] = deck[k]
    vira = deck[hs * n] if cfg[C_FAMILY] != 0 else -1
    deal(st, cfg, cards, vira)
    if cfg[C_SENAS]:  # who would catch each seat's signal: one draw per signaller and opponent, every deal
        for seat in range(n):
            caught = 0
            for other in range(n):
                if _team(other) != _team(seat) and np.int64(_splitmix(rng, i) >> np.uint64(34)) < cfg[C_SENA_CATCH]:
                    caught |= 1 << other
            st[S_CATCH + seat] = caught


@njit(cache=True)
def _new_rng_match(st, cfg, rng, i):
    new_match(st, cfg, _below(rng, i, cfg[C_N]), 0, 0)
    _rng_deal(st, cfg, rng, i)


@njit(cache=True)
def vec_reset(states, cfg, rng, obs, masks, actors, rewards, info):
    for i in range(states.shape[0]):
        st = states[i]
        _new_rng_match(st, cfg, rng, i)
        actor = st[S_ACTOR]
        actors[i] = actor
        encode_obs(st, cfg, actor, obs[i])
        legal_mask(st, cfg, masks[i])
        rewards[i, :] = 0.0
        info[i, :] = 0


@njit(cache=True)
def vec_check(masks, actions):
    """Index of the first env whose action is neither legal nor ``SKIP``, else -1."""
    for i in range(actions.shape[0]):
        a = actions[i]
        if a == SKIP:
            continue
        if a < 0 or a >= masks.shape[1] or masks[i, a] == 0:
            return i
    return -1


@njit(cache=True)
def vec_step(states, cfg, rng, actions, obs, masks, actors, rewards, info, points_reward):
    """Step every env with its (legal) action; finished matches restart at once (``info`` keeps the result).
    An env whose action is ``SKIP`` stays as it is (no reward, not closed, not done)."""
    n = cfg[C_N]
    for i in range(states.shape[0]):
        if actions[i] == SKIP:
            rewards[i, :] = 0.0
            info[i, INFO_CLOSED] = 0
            info[i, INFO_DONE] = 0
            continue
        st = states[i]
        count = st[S_HAND_COUNT]
        apply(st, cfg, actions[i])
        rewards[i, :] = 0.0
        phase = st[S_PHASE]
        closed = phase == DEAL or phase == OVER or st[S_HAND_COUNT] != count
        info[i, INFO_CLOSED] = 1 if closed else 0
        info[i, INFO_DONE] = 0
        if closed:
            hp0 = st[S_LAST_HP]
            hp1 = st[S_LAST_HP + 1]
            info[i, INFO_HP] = hp0
            info[i, INFO_HP + 1] = hp1
            info[i, INFO_SCORE] = st[S_SCORE]
            info[i, INFO_SCORE + 1] = st[S_SCORE + 1]
            if points_reward:
                for s in range(n):
                    rewards[i, s] = (hp0 - hp1) if s % 2 == 0 else (hp1 - hp0)
            if phase == OVER:
                winner = st[S_WINNER]
                info[i, INFO_WINNER] = winner
                info[i, INFO_DONE] = 1
                if not points_reward and winner >= 0:
                    for s in range(n):
                        rewards[i, s] = 1.0 if s % 2 == winner else -1.0
                _new_rng_match(st, cfg, rng, i)
            elif phase == DEAL:
                _rng_deal(st, cfg, rng, i)
        actor = st[S_ACTOR]
        actors[i] = actor
        encode_obs(st, cfg, actor, obs[i])
        legal_mask(st, cfg, masks[i])


@njit(cache=True)
def random_legal(masks, rng, out):
    """A uniformly random legal action per row of ``masks`` (for random play and benchmarks)."""
    for i in range(masks.shape[0]):
        count = 0
        for a in range(masks.shape[1]):
            count += masks[i, a]
        k = _below(rng, 0, count)
        for a in range(masks.shape[1]):
            if masks[i, a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


@njit(cache=True)
def playout(st, cfg, rng, matches, mask, ids):
    """Random legal play of ``matches`` whole matches from fresh states, entirely compiled (the raw engine's
    ceiling: no Python per decision). Returns (decisions, hands)."""
    decisions = 0
    hands = 0
    for _ in range(matches):
        _new_rng_match(st, cfg, rng, 0)
        while True:
            count = legal_ids(st, cfg, mask, ids)
            a = ids[_below(rng, 0, count)]
            apply(st, cfg, a)
            decisions += 1
            phase = st[S_PHASE]
            if phase == DEAL:
                _rng_deal(st, cfg, rng, 0)
            elif phase == OVER:
                break
        hands += st[S_HAND_COUNT]
    return decisions, hands


@njit(cache=True)
def deal_from_words(st, cfg, words, mask, ids):
    """The reference deal from the Mersenne Twister outputs of ``random.Random(f"{seed}:{k}")``: the shuffle of
    ``random.shuffle`` (``_randbelow`` by rejection on the top bits of each 32-bit word) of the canonical deck,
    dealt by docs/rules.md §2.3. Returns the legal count, or -1 (nothing changed) if ``words`` ran out."""
    length = cfg[C_DECK_LEN]
    deck = np.empty(40, np.int32)
    for k in range(length):
        deck[k] = cfg[C_DECK_CARDS + k]
    w = 0
    nwords = words.shape[0]
    for i in range(length - 1, 0, -1):
        n = i + 1
        bits = 0
        while (1 << bits) <= n:
            bits += 1
        while True:
            if w >= nwords:
                return -1
            r = np.int64(words[w] >> np.uint32(32 - bits))
            w += 1
            if r < n:
                break
        tmp = deck[i]
        deck[i] = deck[r]
        deck[r] = tmp
    n = cfg[C_N]
    hs = cfg[C_HAND_SIZE]
    mano = (st[S_DEALER] + 1) % n
    cards = np.empty(18, np.int32)
    for k in range(hs * n):
        seat = (mano + k) % n
        cards[seat * hs + k // n] = deck[k]
    vira = deck[hs * n] if cfg[C_FAMILY] != 0 else -1
    deal(st, cfg, cards, vira)
    return legal_ids(st, cfg, mask, ids)
