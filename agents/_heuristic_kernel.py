"""The heuristic's compiled core: :mod:`agents.heuristic_reference` re-stated on arrays, one decision per row.

Why a second implementation: the heuristic is the project's reference opponent, and in Python each decision
plays 48 sampled deals out one object at a time (about 1 ms in 1v1). This module decodes the observation,
samples the deals, plays them out and weighs the bets in numba, with no Python per sampled deal, and decides for
a whole batch of tables in one call. It must decide *exactly* as the reference: the same arithmetic in the
same order (ties broken alike), and the same numbers drawn from the agent's own Mersenne Twister stream
(:mod:`agents.mersenne`). ``tests/test_heuristic_exact.py`` pins both implementations to the same digests and
``tests/test_heuristic_kernel.py`` compares them decision by decision. Function names mirror the reference's
methods (``_envido_open`` here is ``ReferenceHeuristic._envido_open`` there) so the two read side by side.

Layout: an observation is decoded into ``vw`` (int64, ``VIEW_SIZE``; ``V_*`` offsets below, ``-1`` for None);
every table the decision needs (observation offsets, strength and hand-decided tables, the reduced research
decks) travels in one int64 array ``tab`` built by :func:`tables`, so that a compiled cache never holds a stale
layout. An agent's memory of the match is ``memo`` (int64): ``memo[0]`` entries of (hand key, flags), flags
bit 0 "the opponents called in this hand", bits 1-2 the bluff decision (0 not yet, 1 no, 2 yes).
"""

from __future__ import annotations

import numpy as np
from numba import njit

import truco_env.actions
import truco_env.cards
from truco_env import senas
from truco_env._kernel import DECIDED, STRENGTH, URUGUAYAN_ROW, uy_envido_of, uy_flor_of
from truco_env.actions import CALL_BASE, COVER_BASE, NUM_ACTIONS_SENAS, SENA_BASE, SLOT_BASE
from truco_env.cards import FAMILIES, NUM_CARDS, NUM_RANKS
from truco_env.config import PRESETS
from truco_env.encoding import (
    ENVIDO_SCALE,
    FLOR_SCALE,
    MAX_SEATS,
    MAX_TRICKS,
    OBS_OFFSETS,
    OBSERVATION_SIZE_URUGUAYAN,
    SENAS_OFFSETS,
    URUGUAYAN_OFFSETS,
)

from .mersenne import SAMPLE_SETSIZE, mt_randbelow, mt_random, mt_sample
from .view import OPTION_KEYS

# ------------------------------------------------------------------------------------- the reference's constants
# (tests/test_heuristic_kernel.py checks them against agents.heuristic_reference)
FOLD_SHARE = 0.3
RERAISE_SHARE = 0.2
ENVIDO_SAMPLES = 192
FALTA_FOLD = 0.5
FALTA_MIN = 0.8
BLUFF_BELOW = 0.4
FLOR_ACHICO, FLOR_CF_NOQ, FLOR_RESTO_DIRECT, FLOR_RESTO_AFTER, FLOR_PER, FLOR_CF_QUIERO = 4, 4, 4, 6, 3, 6

# ------------------------------------------------------------------------------------------------- action ids
A_COVER = COVER_BASE
A_SLOT = SLOT_BASE
A_TRUCO, A_RETRUCO, A_VALE4, A_SEIS, A_NOVE, A_DOZE = range(CALL_BASE, CALL_BASE + 6)
A_ENVIDO, A_REAL, A_FALTA, A_FLOR, A_CFLOR, A_CFRESTO, A_QUIERO, A_NOQ, A_MAZO = range(CALL_BASE + 6,
                                                                                      truco_env.actions.NUM_ACTIONS)
NUM_ACTIONS = truco_env.actions.NUM_ACTIONS
A_SENA = SENA_BASE  # señas: 8 gestures after the calls, only in games with them
NUM_GESTURES = len(senas.GESTURES)
LADDER_ARG = np.array([A_TRUCO, A_RETRUCO, A_VALE4], dtype=np.int64)
LADDER_PAU = np.array([A_TRUCO, A_SEIS, A_NOVE, A_DOZE], dtype=np.int64)
VALUES_ARG = np.array([1, 2, 3, 4], dtype=np.int64)
VALUES_PAU = np.array([1, 3, 6, 9, 12], dtype=np.int64)
ENVIDO_CALL_VALUE = np.array([2, 3, 0], dtype=np.int64)  # envido, real_envido, falta_envido (counted apart)

OWN, OPP, TIE, ALL_TIED, UNDECIDED = 0, 1, -1, -2, -3
PH_PLAY, PH_TRUCO, PH_ENVIDO, PH_FLOR_DECLARE, PH_FLOR_CONTEST, PH_ONZE, PH_OVER = range(7)
MAXS, MAXT, NC = MAX_SEATS, MAX_TRICKS, NUM_CARDS
HW = 8  # room for one seat's known cards (a visible partner hand in 3v3 holds two partners' cards)

# --------------------------------------------------------------------------------------------- the tables
#: Observation fields read by the decoder, in the order of the ``L_*`` slots of ``tab``.
_FIELDS = ("hand", "partner_cards", "table", "covered", "trick_results", "trick_index", "trick_leader", "vira",
           "manilha_rank", "truco_level", "hand_value", "pending_truco", "pending_truco_by", "envido_calls",
           "envido_status", "envido_shown", "flor_calls", "flor_status", "flor_holders", "own_points", "score",
           "target", "mano", "dealer", "participants", "phase", "family", "num_players", "hand_size", "options",
           "senas_seen", "sena_code", "uruguayan", "uruguayan_options", "uruguayan_target")
(L_HAND, L_PARTNER, L_TABLE, L_COVERED, L_RESULTS, L_TI, L_LEADER, L_VIRA, L_MANILHA, L_LEVEL, L_HV, L_PENDING,
 L_PBY, L_ECALLS, L_ESTATUS, L_ESHOWN, L_FCALLS, L_FSTATUS, L_FHOLD, L_OWNPTS, L_SCORE, L_TARGET, L_MANO,
 L_DEALER, L_PART, L_PHASE, L_FAMILY, L_NP, L_HS, L_OPTIONS, L_SENAS_SEEN, L_SENA_CODE, L_UY, L_UY_OPTIONS,
 L_UY_TARGET) = range(len(_FIELDS))
ARG_ENVIDO_SCALE, ARG_FLOR_SCALE = float(ENVIDO_SCALE["argentine"]), float(FLOR_SCALE["argentine"])
UY_ENVIDO_SCALE, UY_FLOR_SCALE = float(ENVIDO_SCALE["uruguayan"]), float(FLOR_SCALE["uruguayan"])
UY_SIZE = OBSERVATION_SIZE_URUGUAYAN  # an observation of this length with the Uruguayan flag is that family's
#: Options the decisions read, as slots of ``vw[V_OPT:]``.
_OPTIONS = ("single_hand", "deck=clean", "all_tricks_tied=mao_team", "all_tricks_tied=dealer_team",
            "partner_tie_wins_trick", "lead_after_tie=first_tied_card", "lead_after_tie=next_after_leader", "flor",
            "envido_tie=mano_team", "falta_envido=whole_match", "falta_envido=malas_match", "malas_buenas")
(O_SINGLE, O_CLEAN, O_TIED_MAO, O_TIED_DEALER, O_PARTNER_TIE, O_LEAD_FIRST, O_LEAD_NEXT, O_FLOR, O_ENV_TIE_MANO,
 O_FALTA_WHOLE, O_FALTA_MALAS, O_MALAS) = range(len(_OPTIONS))
T_OPT = len(_FIELDS)  # option bit index of each _OPTIONS entry
T_STR = T_OPT + len(_OPTIONS)  # STRENGTH rows x 40: argentine, paulista by manilha rank, uruguayan by muestra
T_WIN = T_STR + len(STRENGTH) * NC  # 4 x 4 x 27: hand_winner by (hand size, results so far, results coded base 3)
T_SET = T_WIN + 4 * 4 * 27  # random.sample's threshold by k
T_SENA = T_SET + len(SAMPLE_SETSIZE)  # señas: the card mask each card gesture names (6), then the good envido
T_NDECKS = T_SENA + 7
T_DECKS = T_NDECKS + 1  # rows (family, players, hand size, card mask) of the one-hand research decks


def tables() -> np.ndarray:
    """``tab``: everything the kernel looks up, from the modules that own it."""
    offsets = {**OBS_OFFSETS, **SENAS_OFFSETS, **URUGUAYAN_OFFSETS}
    card_gestures = [sum(1 << c for c in senas.CARDS_OF[g]) for g in senas.GESTURES if g in senas.CARDS_OF]
    parts = [[offsets[name][0] for name in _FIELDS], [OPTION_KEYS.index(o) for o in _OPTIONS],
             STRENGTH.ravel().tolist(), DECIDED.ravel().tolist(), SAMPLE_SETSIZE.tolist(),
             card_gestures + [senas.GOOD_ENVIDO]]
    decks = []
    for config in PRESETS.values():
        if config.single_hand and config.deck_ranks:
            mask = 0
            for c in truco_env.cards.deck(config.family, "dirty", config.deck_ranks):
                mask |= 1 << c
            decks.append([FAMILIES.index(config.family), config.num_players, config.hand_size, mask])
    parts.append([len(decks)])
    parts.extend(decks)
    tab = np.array([x for part in parts for x in part], dtype=np.int64)
    assert len(tab) == T_DECKS + 4 * len(decks)
    return tab


# --------------------------------------------------------------------------------------------- view layout
_view_fields = [
    ("FAMILY", 1), ("NP", 1), ("HS", 1), ("TARGET", 1), ("SCORE", 2), ("NHAND", 1), ("HAND", NC), ("NPARTNER", 1),
    ("PARTNER", NC), ("TABLE", MAXT * MAXS), ("COVERED", MAXT * MAXS), ("NRES", 1), ("RES", MAXT), ("TI", 1),
    ("LEADER", 1), ("VIRA", 1), ("MANILHA", 1), ("LEVEL", 1), ("HV", 1), ("PENDING", 1), ("PBYOWN", 1),
    ("NECALLS", 1), ("ECALL", 4), ("EOWN", 4), ("ESTATUS", 1), ("ESHOWN", MAXS), ("NFCALLS", 1), ("FCALL", 3),
    ("FOWN", 3), ("FSTATUS", 1), ("FHOLD", MAXS), ("OWNENV", 1), ("OWNFLOR", 1), ("MANO", 1), ("DEALER", 1),
    ("NPART", 1), ("PART", MAXS), ("PHASE", 1), ("OPT", len(_OPTIONS)), ("NLEGAL", 1), ("LEGAL", NUM_ACTIONS_SENAS),
    ("SIGNAL", MAXS), ("SENA_TABLE", 1),  # señas: per relative seat the gesture seen + 1 (0: none); table code
    ("PLAIN0", 1),  # Uruguayan plain_flor_base = 0
    ("FALTA_BUENAS", 1),  # Uruguayan falta_envido: 0 neither, 1 winner_to_buenas, 2 leader_to_buenas
    ("REFUSAL1", 1),  # Uruguayan envido_refusal = previous_sum_plus_one
    ("FALTA_CHAIN", 1),  # Uruguayan falta_adds_chain
    ("TIE_MANO", 1),  # Uruguayan trick_tie_to_mano
]
_pos = 0
_V = {}
for _name, _size in _view_fields:
    _V[_name] = _pos
    _pos += _size
VIEW_SIZE = _pos
(V_FAMILY, V_NP, V_HS, V_TARGET, V_SCORE, V_NHAND, V_HAND, V_NPARTNER, V_PARTNER, V_TABLE, V_COVERED, V_NRES,
 V_RES, V_TI, V_LEADER, V_VIRA, V_MANILHA, V_LEVEL, V_HV, V_PENDING, V_PBYOWN, V_NECALLS, V_ECALL, V_EOWN,
 V_ESTATUS, V_ESHOWN, V_NFCALLS, V_FCALL, V_FOWN, V_FSTATUS, V_FHOLD, V_OWNENV, V_OWNFLOR, V_MANO, V_DEALER,
 V_NPART, V_PART, V_PHASE, V_OPT, V_NLEGAL, V_LEGAL, V_SIGNAL, V_SENA_TABLE, V_PLAIN0, V_FALTA_BUENAS, V_REFUSAL1,
 V_FALTA_CHAIN, V_TIE_MANO) = [
    _V[n] for n, _ in _view_fields]
SHOWN_NONE, SHOWN_BUENAS = -2, -1  # envido_shown: nothing shown; "son buenas" (no points)


# ---------------------------------------------------------------------------------------------- decoding

@njit(cache=True)
def _pyround(x):
    """Python's ``round(x)`` of a float: to the nearest integer, halves to even."""
    f = np.floor(x)
    d = x - f
    r = np.int64(f)
    if d > 0.5 or (d == 0.5 and r % 2 == 1):
        r += 1
    return r


@njit(cache=True)
def _hot(obs, start, size):
    for i in range(size):
        if obs[start + i] != 0:
            return i
    return -1


@njit(cache=True)
def _decode(obs, mask, tab, vw):
    """``agents.view.decode`` into ``vw``."""
    vw[:] = 0
    uruguayan = obs.shape[0] == UY_SIZE and obs[tab[L_UY]] > 0
    fam = _hot(obs, tab[L_FAMILY], 2)
    vw[V_FAMILY] = 2 if uruguayan else max(fam, 0)
    np_i = _hot(obs, tab[L_NP], 3)
    vw[V_NP] = 2 * (max(np_i, 0) + 1)
    hs = _hot(obs, tab[L_HS], 3)
    vw[V_HS] = 3 if hs < 0 else hs + 1
    if uruguayan:  # the common field stops at 30, this family's own at 40
        target = max(1, _pyround(np.float64(obs[tab[L_UY_TARGET]]) * 40))
        vw[V_PLAIN0] = 1 if obs[tab[L_UY_OPTIONS]] > 0 else 0  # encoding.URUGUAYAN_OPTION_BITS
        vw[V_FALTA_BUENAS] = 1 if obs[tab[L_UY_OPTIONS] + 1] > 0 else 2 if obs[tab[L_UY_OPTIONS] + 2] > 0 else 0
        vw[V_REFUSAL1] = 1 if obs[tab[L_UY_OPTIONS] + 3] > 0 else 0
        vw[V_FALTA_CHAIN] = 1 if obs[tab[L_UY_OPTIONS] + 4] > 0 else 0
        vw[V_TIE_MANO] = 1 if obs[tab[L_UY_OPTIONS] + 7] > 0 else 0
        envido_scale, flor_scale = UY_ENVIDO_SCALE, UY_FLOR_SCALE
    else:
        target = max(1, _pyround(np.float64(obs[tab[L_TARGET]]) * 30))
        envido_scale, flor_scale = ARG_ENVIDO_SCALE, ARG_FLOR_SCALE
    vw[V_TARGET] = target
    vw[V_SCORE] = _pyround(np.float64(obs[tab[L_SCORE]]) * target)
    vw[V_SCORE + 1] = _pyround(np.float64(obs[tab[L_SCORE] + 1]) * target)
    n = 0
    for c in range(NC):
        if obs[tab[L_HAND] + c] != 0:
            vw[V_HAND + n] = c
            n += 1
    vw[V_NHAND] = n
    n = 0
    for c in range(NC):
        if obs[tab[L_PARTNER] + c] != 0:
            vw[V_PARTNER + n] = c
            n += 1
    vw[V_NPARTNER] = n
    for t in range(MAXT):
        for s in range(MAXS):
            card = -1
            base = tab[L_TABLE] + (t * MAXS + s) * NC
            for c in range(NC):
                if obs[base + c] != 0:
                    card = c
            vw[V_TABLE + t * MAXS + s] = card
            vw[V_COVERED + t * MAXS + s] = 1 if obs[tab[L_COVERED] + t * MAXS + s] != 0 else 0
    n = 0
    for t in range(MAXT):
        r = _hot(obs, tab[L_RESULTS] + 3 * t, 3)
        if r >= 0:
            vw[V_RES + n] = OWN if r == 0 else OPP if r == 1 else TIE
            n += 1
    vw[V_NRES] = n
    vw[V_TI] = max(_hot(obs, tab[L_TI], MAXT), 0)
    vw[V_LEADER] = max(_hot(obs, tab[L_LEADER], MAXS), 0)
    vw[V_VIRA] = _hot(obs, tab[L_VIRA], NC)
    vw[V_MANILHA] = _hot(obs, tab[L_MANILHA], NUM_RANKS)
    vw[V_LEVEL] = max(_hot(obs, tab[L_LEVEL], 5), 0)
    vw[V_HV] = _pyround(np.float64(obs[tab[L_HV]]) * 12)
    vw[V_PENDING] = max(_hot(obs, tab[L_PENDING], 5), 0)
    vw[V_PBYOWN] = 1 if obs[tab[L_PBY]] > 0 else 0
    n = 0
    for i in range(4):
        r = _hot(obs, tab[L_ECALLS] + 5 * i, 3)
        if r >= 0:
            vw[V_ECALL + n] = r
            vw[V_EOWN + n] = 1 if obs[tab[L_ECALLS] + 5 * i + 3] > 0 else 0
            n += 1
    vw[V_NECALLS] = n
    vw[V_ESTATUS] = max(_hot(obs, tab[L_ESTATUS], 5), 0)
    for rel in range(MAXS):
        base = tab[L_ESHOWN] + 3 * rel
        if obs[base] > 0:
            vw[V_ESHOWN + rel] = _pyround(np.float64(obs[base + 1]) * envido_scale)
        elif obs[base + 2] > 0:
            vw[V_ESHOWN + rel] = SHOWN_BUENAS
        else:
            vw[V_ESHOWN + rel] = SHOWN_NONE
    n = 0
    for i in range(3):
        r = _hot(obs, tab[L_FCALLS] + 5 * i, 3)
        if r >= 0:
            vw[V_FCALL + n] = r
            vw[V_FOWN + n] = 1 if obs[tab[L_FCALLS] + 5 * i + 3] > 0 else 0
            n += 1
    vw[V_NFCALLS] = n
    vw[V_FSTATUS] = max(_hot(obs, tab[L_FSTATUS], 5), 0)
    for rel in range(MAXS):
        vw[V_FHOLD + rel] = 1 if obs[tab[L_FHOLD] + rel] != 0 else 0
    vw[V_OWNENV] = _pyround(np.float64(obs[tab[L_OWNPTS]]) * envido_scale)
    flor = np.float64(obs[tab[L_OWNPTS] + 1])
    vw[V_OWNFLOR] = _pyround(flor * flor_scale) if flor > 0 else -1
    vw[V_MANO] = max(_hot(obs, tab[L_MANO], MAXS), 0)
    vw[V_DEALER] = max(_hot(obs, tab[L_DEALER], MAXS), 0)
    n = 0
    for rel in range(MAXS):
        if obs[tab[L_PART] + rel] != 0:
            vw[V_PART + n] = rel
            n += 1
    if n == 0:
        for rel in range(vw[V_NP]):
            vw[V_PART + rel] = rel
        n = vw[V_NP]
    vw[V_NPART] = n
    phase = _hot(obs, tab[L_PHASE], 7)
    vw[V_PHASE] = PH_OVER if phase < 0 else phase
    for i in range(len(_OPTIONS)):
        vw[V_OPT + i] = 1 if obs[tab[L_OPTIONS] + tab[T_OPT + i]] > 0 else 0
    n = 0
    for a in range(mask.shape[0]):
        if mask[a] != 0:
            vw[V_LEGAL + n] = a
            n += 1
    vw[V_NLEGAL] = n
    if obs.shape[0] > tab[L_SENAS_SEEN] and not uruguayan:  # the señas block (games with señas only)
        for rel in range(MAXS):
            for g in range(NUM_GESTURES):
                if obs[tab[L_SENAS_SEEN] + rel * NUM_GESTURES + g] != 0:
                    vw[V_SIGNAL + rel] = g + 1
        vw[V_SENA_TABLE] = 1 if obs[tab[L_SENA_CODE]] > 0 else 0


# -------------------------------------------------------------------------------------------- view helpers

@njit(cache=True)
def _legal(vw, action):
    for i in range(vw[V_NLEGAL]):
        if vw[V_LEGAL + i] == action:
            return True
    return False


@njit(cache=True)
def _first_legal_of(vw, actions):
    """The first legal action (in id order) among ``actions``, or -1."""
    for i in range(vw[V_NLEGAL]):
        a = vw[V_LEGAL + i]
        for b in actions:
            if a == b:
                return a
    return -1


@njit(cache=True)
def _is_participant(vw, rel):
    for i in range(vw[V_NPART]):
        if vw[V_PART + i] == rel:
            return True
    return False


@njit(cache=True)
def _played_by(vw, rel, out):
    """Face-up cards ``rel`` has played in this hand, in trick order, into ``out``; returns their count."""
    n = 0
    for t in range(MAXT):
        c = vw[V_TABLE + t * MAXS + rel]
        if c >= 0:
            out[n] = c
            n += 1
    return n


@njit(cache=True)
def _num_played(vw, rel):
    n = 0
    for t in range(MAXT):
        if vw[V_TABLE + t * MAXS + rel] >= 0:
            n += 1
        if vw[V_COVERED + t * MAXS + rel]:
            n += 1
    return n


@njit(cache=True)
def _strength_row(vw, tab):
    if vw[V_FAMILY] == 0:
        return tab[T_STR:T_STR + NC]
    if vw[V_FAMILY] == 2:
        row = URUGUAYAN_ROW + max(vw[V_VIRA], 0)
        return tab[T_STR + row * NC:T_STR + (row + 1) * NC]
    m = max(vw[V_MANILHA], 0)
    return tab[T_STR + (1 + m) * NC:T_STR + (2 + m) * NC]


@njit(cache=True)
def _seen_mask(vw, with_vira):
    seen = 0
    for i in range(vw[V_NHAND]):
        seen |= 1 << vw[V_HAND + i]
    for i in range(vw[V_NPARTNER]):
        seen |= 1 << vw[V_PARTNER + i]
    for i in range(MAXT * MAXS):
        if vw[V_TABLE + i] >= 0:
            seen |= 1 << vw[V_TABLE + i]
    if with_vira and vw[V_VIRA] >= 0:
        seen |= 1 << vw[V_VIRA]
    return seen


@njit(cache=True)
def _deck_mask(vw, tab):
    """``View.deck()`` as a card mask: the family's deck, or a one-hand research deck holding every card seen."""
    full = 0
    for c in range(NC):
        rank = c // 4
        if vw[V_FAMILY] == 1 and vw[V_OPT + O_CLEAN] and not (rank <= 2 or rank >= 7):
            continue
        full |= 1 << c
    if not vw[V_OPT + O_SINGLE]:
        return full
    seen = _seen_mask(vw, True)
    for i in range(tab[T_NDECKS]):
        row = T_DECKS + 4 * i
        if (tab[row] == vw[V_FAMILY] and tab[row + 1] == vw[V_NP] and tab[row + 2] == vw[V_HS]
                and seen & ~tab[row + 3] == 0):
            return tab[row + 3]
    return full


@njit(cache=True)
def _envido_of(cards, n):
    """``cards.envido_of(cards[:n])``."""
    best = 0
    for i in range(n):
        r = cards[i] // 4
        v = r + 1 if r < 7 else 0
        best = max(best, v)
    for suit in range(4):
        a = -1
        b = -1
        for i in range(n):
            if cards[i] % 4 == suit:
                r = cards[i] // 4
                v = r + 1 if r < 7 else 0
                if v > a:
                    b = a
                    a = v
                elif v > b:
                    b = v
        if b >= 0 and 20 + a + b > best:
            best = 20 + a + b
    return best


@njit(cache=True)
def _flor_of(cards, n):
    """``cards.flor_of(cards[:n])``, -1 for None."""
    if n != 3 or cards[0] % 4 != cards[1] % 4 or cards[0] % 4 != cards[2] % 4:
        return -1
    total = 20
    for i in range(3):
        r = cards[i] // 4
        total += r + 1 if r < 7 else 0
    return total


@njit(cache=True)
def _points_envido(vw, cards, n):
    """The envido of ``cards[:n]`` in the view's game: ``_envido_of``, or Uruguayan under the muestra."""
    if vw[V_FAMILY] != 2:
        return _envido_of(cards, n)
    return uy_envido_of(cards, n, max(vw[V_VIRA], 0))


@njit(cache=True)
def _points_flor(vw, cards, n):
    """The flor of ``cards[:n]`` in the view's game, -1 for none: ``_flor_of``, or Uruguayan under the muestra."""
    if vw[V_FAMILY] != 2:
        return _flor_of(cards, n)
    return uy_flor_of(cards, n, max(vw[V_VIRA], 0), 0 if vw[V_PLAIN0] else 20)


@njit(cache=True)
def _names_something(g, cards, n, tab):
    """Whether the hand ``cards[:n]`` holds what gesture ``g`` < 7 names: a card of its set, or good envido."""
    if g == 6:
        return _envido_of(cards, n) >= tab[T_SENA + 6]
    for i in range(n):
        if (tab[T_SENA + g] >> cards[i]) & 1:
            return True
    return False


@njit(cache=True)
def _true_to_table(g, cards, n, tab):
    """``senas.true_to_table(GESTURES[g], cards[:n])``; the last gesture (eyes closed): none of the others."""
    if g < NUM_GESTURES - 1:
        return _names_something(g, cards, n, tab)
    for k in range(NUM_GESTURES - 1):
        if _names_something(k, cards, n, tab):
            return False
    return True


@njit(cache=True)
def _honest_gesture(vw, tab):
    """``senas.honest_gesture`` of the own hand (before its first card: the whole hand)."""
    for g in range(NUM_GESTURES):
        if _true_to_table(g, vw[V_HAND:V_HAND + vw[V_NHAND]], vw[V_NHAND], tab):
            return g
    return NUM_GESTURES - 1


@njit(cache=True)
def _rotation(vw, start, out):
    """The participants in playing order from ``start`` (from the first one when ``start`` does not play)."""
    n = vw[V_NPART]
    i0 = 0
    for i in range(n):
        if vw[V_PART + i] == start:
            i0 = i
    for i in range(n):
        out[i] = vw[V_PART + (i0 + i) % n]
    return n


@njit(cache=True)
def _sort_small(row, n):
    """Sort ``row[:n]`` ascending in place (a hand: a few entries)."""
    for i in range(1, n):
        x = row[i]
        j = i - 1
        while j >= 0 and row[j] > x:
            row[j + 1] = row[j]
            j -= 1
        row[j + 1] = x


# ---------------------------------------------------------------------------------------------- match equity

@njit(cache=True)
def _me(vw, me, own, opp):
    if vw[V_OPT + O_SINGLE]:
        return 1.0 if own > opp else 0.0 if own < opp else 0.5
    if own >= vw[V_TARGET]:
        return 1.0
    if opp >= vw[V_TARGET]:
        return 0.0
    return me[own, opp]


@njit(cache=True)
def _ev(vw, me, p, win, lose):
    a = vw[V_SCORE]
    b = vw[V_SCORE + 1]
    return p * _me(vw, me, a + win, b) + (1.0 - p) * _me(vw, me, a, b + lose)


# ------------------------------------------------------------------------------------------ sampling deals

@njit(cache=True)
def _agrees(vw, kind, target, cards, m, tab):
    """``heuristic_reference._agrees``: kind 1 envido points, 0 a declared flor (target 0/1), 2 a signal."""
    if kind == 1:
        return _points_envido(vw, cards, m) == target
    if kind == 0:
        return (_points_flor(vw, cards, m) >= 0) == (target != 0)
    return _true_to_table(target, cards, m, tab)


@njit(cache=True)
def _draw(vw, tab, st, n, slot_rel, slot_off, slot_k, fixed_n, fixed_cards):
    """``_draw``: ``n`` deals of the unseen cards to the hidden seats, each redrawn up to 25 times until it agrees
    with the public information. Fills the slots (relative seat, offset, count) and the known hands; returns
    (number of slots, the draws ``[n, need]``)."""
    seen = _seen_mask(vw, True)
    deck = _deck_mask(vw, tab)
    pool = np.empty(NC, dtype=np.int64)
    npool = 0
    for c in range(NC):
        if (deck >> c) & 1 and not (seen >> c) & 1:
            pool[npool] = c
            npool += 1
    partner_visible = vw[V_NPARTNER] > 0
    ns = 0
    need = 0
    for i in range(vw[V_NPART]):
        rel = vw[V_PART + i]
        if rel == 0 or (partner_visible and rel % 2 == 0):
            continue
        slot_rel[ns] = rel
        slot_k[ns] = max(0, vw[V_HS] - _num_played(vw, rel))
        need += slot_k[ns]
        ns += 1
    if need > npool:  # a reduced research deck we cannot see: deal what there is
        need = 0
        for i in range(ns):
            slot_k[i] = min(slot_k[i], npool // max(1, ns))
            need += slot_k[i]
    fixed_n[:] = -1  # -1: not a known hand
    fixed_n[0] = vw[V_NHAND]
    for i in range(vw[V_NHAND]):
        fixed_cards[0, i] = vw[V_HAND + i]
    if partner_visible:
        for i in range(vw[V_NPART]):
            rel = vw[V_PART + i]
            if rel != 0 and rel % 2 == 0:
                fixed_n[rel] = vw[V_NPARTNER]
                for j in range(vw[V_NPARTNER]):
                    fixed_cards[rel, j] = vw[V_PARTNER + j]
                break
    off = 0
    for i in range(ns):
        slot_off[i] = off
        off += slot_k[i]
    for i in range(vw[V_NPART]):
        rel = vw[V_PART + i]
        if fixed_n[rel] < 0:
            sampled = False
            for j in range(ns):
                if slot_rel[j] == rel:
                    sampled = True
            if not sampled:
                fixed_n[rel] = 0
    # the public information a deal must agree with: announced envido points, declared flors and (señas, read as
    # honest) the signals seen (Argentine); kinds 1 envido, 0 flor, 2 signal
    const_ok = True
    nchecks = 0
    chk = np.empty((3 * MAXS, 4), dtype=np.int64)  # (kind, target, slot offset, slot count)
    chk_played = np.empty((3 * MAXS, MAXT), dtype=np.int64)
    chk_nplayed = np.empty(3 * MAXS, dtype=np.int64)
    cards = np.empty(16, dtype=np.int64)
    if vw[V_FAMILY] != 1:
        nspecs = 0
        spec = np.empty((3 * MAXS, 3), dtype=np.int64)
        for rel in range(MAXS):
            value = vw[V_ESHOWN + rel]
            if rel != 0 and value >= 0 and _is_participant(vw, rel):
                spec[nspecs, 0] = 1
                spec[nspecs, 1] = rel
                spec[nspecs, 2] = value
                nspecs += 1
        if vw[V_OPT + O_FLOR] and vw[V_FSTATUS] != 0:
            for i in range(vw[V_NPART]):
                rel = vw[V_PART + i]
                if rel != 0:
                    spec[nspecs, 0] = 0
                    spec[nspecs, 1] = rel
                    spec[nspecs, 2] = vw[V_FHOLD + rel]
                    nspecs += 1
        if vw[V_SENA_TABLE]:
            for rel in range(1, MAXS):
                if vw[V_SIGNAL + rel] > 0 and _is_participant(vw, rel):
                    spec[nspecs, 0] = 2
                    spec[nspecs, 1] = rel
                    spec[nspecs, 2] = vw[V_SIGNAL + rel] - 1
                    nspecs += 1
        for q in range(nspecs):
            rel = spec[q, 1]
            if fixed_n[rel] >= 0:
                m = _played_by(vw, rel, cards)
                for j in range(fixed_n[rel]):
                    cards[m] = fixed_cards[rel, j]
                    m += 1
                const_ok = const_ok and _agrees(vw, spec[q, 0], spec[q, 2], cards, m, tab)
            else:
                j = 0
                while slot_rel[j] != rel:
                    j += 1
                chk[nchecks, 0] = spec[q, 0]
                chk[nchecks, 1] = spec[q, 2]
                chk[nchecks, 2] = slot_off[j]
                chk[nchecks, 3] = slot_k[j]
                chk_nplayed[nchecks] = _played_by(vw, rel, chk_played[nchecks])
                nchecks += 1
    draws = np.empty((n, max(need, 1)), dtype=np.int64)
    scratch = np.empty(NC, dtype=np.int64)
    setsize = tab[T_SET:T_SET + 64]
    for d in range(n):
        row = draws[d]
        if const_ok and nchecks == 0:
            mt_sample(st, pool, npool, need, row, scratch, setsize)
            continue
        for _attempt in range(25):
            mt_sample(st, pool, npool, need, row, scratch, setsize)
            if const_ok:
                good = True
                for q in range(nchecks):
                    m = chk_nplayed[q]
                    for j in range(m):
                        cards[j] = chk_played[q, j]
                    for j in range(chk[q, 3]):
                        cards[m] = row[chk[q, 2] + j]
                        m += 1
                    if not _agrees(vw, chk[q, 0], chk[q, 1], cards, m, tab):
                        good = False
                        break
                if good:
                    break
    return ns, draws


# ------------------------------------------------------------------------------------------ playing hands out

@njit(cache=True, inline="always")
def _join_trick(best, fh, count, has_own, has_opp, seat, s):
    """The trick's state after ``seat`` plays strength ``s``: the best strength so far (-1: none), the first seat
    to play it, how many played it, and whether the own team and the opponents are among them."""
    if best < 0 or s > best:
        return s, seat, 1, seat % 2 == 0, seat % 2 != 0
    if s == best:
        return best, fh, count + 1, has_own or seat % 2 == 0, has_opp or seat % 2 != 0
    return best, fh, count, has_own, has_opp


@njit(cache=True)
def _rollout(hands, hn, tr_seat, tr_s, tr_n, leader, t, res, nres, vw, tab, partner_tie, lead_rule, all_tied,
             first, rot):
    """``_rollout``: play the hand out by the simple policy; 1.0 if the observer's team wins it, 0.0 if it
    loses, ``all_tied`` if every trick ties. ``hands[seat, :hn[seat]]`` are sorted trick strengths (modified);
    the current trick's (seat, strength) pairs are ``tr_seat, tr_s`` (modified); ``rot[leader]`` is the playing
    order of a trick that ``leader`` leads."""
    hs = vw[V_HS]
    n = vw[V_NPART]
    while True:
        order = rot[leader]
        best = -1
        count = 0
        fh = 0
        has_own = False
        has_opp = False
        played = 0
        for i in range(tr_n):
            r = tr_seat[i]
            s = tr_s[i]
            played |= 1 << r
            best, fh, count, has_own, has_opp = _join_trick(best, fh, count, has_own, has_opp, r, s)
        for oi in range(n):
            seat = order[oi]
            if (played >> seat) & 1:
                continue
            k = hn[seat]
            if k == 0:
                continue
            pick = -1  # index into the hand
            if first >= 0 and seat == 0:
                for j in range(k):
                    if hands[seat, j] == first:
                        pick = j
                        break
                if pick >= 0:
                    first = -1
            if pick < 0:
                if k == 1:
                    pick = 0
                elif best < 0:
                    pick = k // 2 if t == 0 else k - 1
                elif (has_own and not has_opp) if seat % 2 == 0 else (has_opp and not has_own):
                    pick = 0
                else:
                    for j in range(k):
                        if hands[seat, j] > best:
                            pick = j
                            break
                    if pick < 0:
                        pick = 0
                        for j in range(k):
                            if hands[seat, j] == best:
                                pick = j
                                break
            s = hands[seat, pick]
            for j in range(pick, k - 1):
                hands[seat, j] = hands[seat, j + 1]
            hn[seat] = k - 1
            tr_seat[tr_n] = seat
            tr_s[tr_n] = s
            tr_n += 1
            best, fh, count, has_own, has_opp = _join_trick(best, fh, count, has_own, has_opp, seat, s)
        if tr_n == 0:
            return all_tied
        if has_own != has_opp and (count == 1 or partner_tie):
            res[nres] = OWN if fh % 2 == 0 else OPP
            leader = fh
        elif vw[V_TIE_MANO] and (has_own if vw[V_MANO] % 2 == 0 else has_opp):  # trick_tie_to_mano
            res[nres] = OWN if vw[V_MANO] % 2 == 0 else OPP
            leader = fh
        else:
            res[nres] = TIE
            if lead_rule == 1:
                leader = fh
            elif lead_rule == 2:
                leader = order[1 % n]
        nres += 1
        if nres <= hs:
            code = 0
            p3 = 1
            for i in range(nres):
                code += (2 if res[i] == TIE else res[i]) * p3
                p3 *= 3
            winner = tab[T_WIN + (hs * 4 + nres) * 27 + code]
        else:
            winner = ALL_TIED
        if winner != UNDECIDED:
            if winner == ALL_TIED:
                return all_tied
            return 1.0 if winner == OWN else 0.0
        if nres >= hs:
            return all_tied
        t += 1
        tr_n = 0


@njit(cache=True)
def _all_tied_value(vw):
    if vw[V_FAMILY] != 1 or vw[V_OPT + O_TIED_MAO]:
        return 1.0 if vw[V_MANO] % 2 == 0 else 0.0
    if vw[V_OPT + O_TIED_DEALER]:
        return 1.0 if vw[V_DEALER] % 2 == 0 else 0.0
    return 0.5


@njit(cache=True)
def _evaluate(vw, tab, st, firsts, n):
    """``_evaluate``: rollout outcomes ``[candidate, sample]`` and each sample's opponents' hand strength. A
    candidate is the strength of a card the observer plays now, or -1 (everybody follows the rollout policy)."""
    strength = _strength_row(vw, tab)
    t = min(vw[V_TI], MAXT - 1)
    rot = np.empty((MAXS, MAXS), dtype=np.int64)
    for leader in range(MAXS):
        _rotation(vw, leader, rot[leader])
    order = rot[vw[V_LEADER]]
    no = vw[V_NPART]
    now_seat = np.empty(MAXS, dtype=np.int64)
    now_s = np.empty(MAXS, dtype=np.int64)
    now_n = 0
    for i in range(no):
        rel = order[i]
        c = vw[V_TABLE + t * MAXS + rel]
        if c >= 0:
            now_seat[now_n] = rel
            now_s[now_n] = strength[c]
            now_n += 1
        elif vw[V_COVERED + t * MAXS + rel]:
            now_seat[now_n] = rel
            now_s[now_n] = 0
            now_n += 1
    partner_tie = vw[V_OPT + O_PARTNER_TIE] != 0
    lead_rule = 1 if vw[V_OPT + O_LEAD_FIRST] else 2 if vw[V_OPT + O_LEAD_NEXT] else 0
    all_tied = _all_tied_value(vw)
    slot_rel = np.empty(MAXS, dtype=np.int64)
    slot_off = np.empty(MAXS, dtype=np.int64)
    slot_k = np.empty(MAXS, dtype=np.int64)
    fixed_n = np.empty(MAXS, dtype=np.int64)
    fixed_cards = np.empty((MAXS, HW), dtype=np.int64)
    ns, draws = _draw(vw, tab, st, n, slot_rel, slot_off, slot_k, fixed_n, fixed_cards)
    cards = np.empty(MAXT, dtype=np.int64)
    played_strength = np.zeros(MAXS, dtype=np.int64)
    for rel in range(MAXS):
        m = _played_by(vw, rel, cards)
        for j in range(m):
            played_strength[rel] += strength[cards[j]]
    base_hands = np.zeros((MAXS, HW), dtype=np.int64)
    base_n = np.zeros(MAXS, dtype=np.int64)
    have_fixed_opp = False
    fixed_opp = 0
    for rel in range(MAXS):
        if fixed_n[rel] >= 0:
            total = 0
            for j in range(fixed_n[rel]):
                base_hands[rel, j] = strength[fixed_cards[rel, j]]
                total += base_hands[rel, j]
            _sort_small(base_hands[rel], fixed_n[rel])
            base_n[rel] = fixed_n[rel]
            if rel % 2 == 1:
                value = played_strength[rel] + total
                if not have_fixed_opp or value > fixed_opp:
                    fixed_opp = value
                have_fixed_opp = True
    ncand = len(firsts)
    outcomes = np.empty((ncand, n), dtype=np.float64)
    opp_strength = np.empty(n, dtype=np.int64)
    hands = np.empty((MAXS, HW), dtype=np.int64)
    hn = np.empty(MAXS, dtype=np.int64)
    tr_seat = np.empty(MAXS, dtype=np.int64)
    tr_s = np.empty(MAXS, dtype=np.int64)
    res = np.empty(MAXT + 4, dtype=np.int64)
    sampled_hands = np.empty((MAXS, HW), dtype=np.int64)
    for d in range(n):
        row = draws[d]
        have = have_fixed_opp
        best = fixed_opp
        for i in range(ns):
            rel = slot_rel[i]
            k = slot_k[i]
            total = 0
            for j in range(k):
                sampled_hands[i, j] = strength[row[slot_off[i] + j]]
                total += sampled_hands[i, j]
            _sort_small(sampled_hands[i], k)
            if rel % 2 == 1:
                value = played_strength[rel] + total
                if not have or value > best:
                    best = value
                have = True
        opp_strength[d] = best if have else 0
        for ci in range(ncand):
            for rel in range(MAXS):
                hn[rel] = base_n[rel]
                for j in range(base_n[rel]):
                    hands[rel, j] = base_hands[rel, j]
            for i in range(ns):
                rel = slot_rel[i]
                hn[rel] = slot_k[i]
                for j in range(slot_k[i]):
                    hands[rel, j] = sampled_hands[i, j]
            for i in range(now_n):
                tr_seat[i] = now_seat[i]
                tr_s[i] = now_s[i]
            for i in range(vw[V_NRES]):
                res[i] = vw[V_RES + i]
            outcomes[ci, d] = _rollout(hands, hn, tr_seat, tr_s, now_n, vw[V_LEADER], t, res, vw[V_NRES], vw,
                                       tab, partner_tie, lead_rule, all_tied, firsts[ci], rot)
    return outcomes, opp_strength


@njit(cache=True)
def _envido_samples(vw, tab, st, n):
    """``_envido_samples``: per sampled deal, (own team wins the envido, the opponents' best envido)."""
    order = np.empty(MAXS, dtype=np.int64)
    no = _rotation(vw, vw[V_MANO], order)
    tie_to_mano_team = vw[V_OPT + O_ENV_TIE_MANO] != 0
    slot_rel = np.empty(MAXS, dtype=np.int64)
    slot_off = np.empty(MAXS, dtype=np.int64)
    slot_k = np.empty(MAXS, dtype=np.int64)
    fixed_n = np.empty(MAXS, dtype=np.int64)
    fixed_cards = np.empty((MAXS, HW), dtype=np.int64)
    ns, draws = _draw(vw, tab, st, n, slot_rel, slot_off, slot_k, fixed_n, fixed_cards)
    const = np.empty(MAXS, dtype=np.int64)
    slot_of = np.full(MAXS, -1, dtype=np.int64)
    cards = np.empty(16, dtype=np.int64)
    played = np.empty((MAXS, MAXT), dtype=np.int64)
    nplayed = np.empty(MAXS, dtype=np.int64)
    for i in range(no):
        rel = order[i]
        nplayed[i] = _played_by(vw, rel, played[i])
        for j in range(ns):
            if slot_rel[j] == rel:
                slot_of[i] = j
        if slot_of[i] < 0:
            m = _played_by(vw, rel, cards)
            for j in range(max(fixed_n[rel], 0)):
                cards[m] = fixed_cards[rel, j]
                m += 1
            const[i] = _points_envido(vw, cards, m)
    won = np.empty(n, dtype=np.bool_)
    opp_best = np.empty(n, dtype=np.int64)
    mano_parity = vw[V_MANO] % 2
    for d in range(n):
        best_seat = -1
        best = -1
        ob = 0
        for i in range(no):
            rel = order[i]
            j = slot_of[i]
            if j < 0:
                value = const[i]
            else:
                m = nplayed[i]
                for q in range(m):
                    cards[q] = played[i, q]
                for q in range(slot_k[j]):
                    cards[m] = draws[d, slot_off[j] + q]
                    m += 1
                value = _points_envido(vw, cards, m)
            if rel % 2 == 1:
                ob = max(ob, value)
            if value > best:
                best_seat = rel
                best = value
            elif (value == best and tie_to_mano_team and rel % 2 == mano_parity
                  and best_seat % 2 != rel % 2):
                best_seat = rel
        won[d] = best_seat % 2 == 0
        opp_best[d] = ob
    return won, opp_best


@njit(cache=True)
def _p(outcomes):
    if len(outcomes) == 0:
        return 0.5
    total = 0.0
    for x in outcomes:
        total += x
    return total / len(outcomes)


@njit(cache=True)
def _p_top(outcomes, opp_strength, share):
    """Win probability against the opponents' strongest ``share`` of sampled hands."""
    n = len(outcomes)
    if n == 0:
        return 0.5
    order = np.argsort(-opp_strength, kind="mergesort")
    keep = max(1, _pyround(share * n))
    total = 0.0
    for i in range(keep):
        total += outcomes[order[i]]
    return total / keep


@njit(cache=True)
def _envido_p(won, opp_best, share):
    n = len(won)
    if n == 0:
        return 0.5
    order = np.argsort(-opp_best, kind="mergesort")
    keep = max(1, _pyround(share * n))
    total = 0.0
    for i in range(keep):
        if won[order[i]]:
            total += 1.0
    return total / keep


# ------------------------------------------------------------------------------------------------- memory

@njit(cache=True)
def _hand_key(vw):
    """``_hand_key``: the dealt cards (own hand and own face-up cards), dealer, vira and participants."""
    cards = 0
    for i in range(vw[V_NHAND]):
        cards |= 1 << vw[V_HAND + i]
    for t in range(MAXT):
        c = vw[V_TABLE + t * MAXS]
        if c >= 0:
            cards |= 1 << c
    part = 0
    for i in range(vw[V_NPART]):
        part |= 1 << vw[V_PART + i]
    return cards | (vw[V_DEALER] << 40) | ((vw[V_VIRA] + 1) << 43) | (part << 49)


@njit(cache=True)
def _memo_slot(memo, key):
    """The index of ``key``'s flags in ``memo``, added (flags 0) when new."""
    n = memo[0]
    for i in range(n):
        if memo[1 + 2 * i] == key:
            return 2 + 2 * i
    memo[1 + 2 * n] = key
    memo[2 + 2 * n] = 0
    memo[0] = n + 1
    return 2 + 2 * n


@njit(cache=True)
def _respect_now(memo, respect):
    hands = memo[0]
    called = 0
    for i in range(hands):
        called += memo[2 + 2 * i] & 1
    rate = (called + 1.5) / (hands + 5)
    return respect * min(1.0, max(0.0, (0.7 - rate) / 0.4))


@njit(cache=True)
def _bluffing(memo, slot, st, bluff, p):
    """Whether this hand is a bluff (decided once per hand, the first time the hand is weak)."""
    if bluff <= 0.0:
        return False
    state = memo[slot] >> 1
    if state == 0:
        if p >= BLUFF_BELOW:
            return False
        state = 2 if mt_random(st) < bluff else 1
        memo[slot] = (memo[slot] & 1) | (state << 1)
    return state == 2


# ------------------------------------------------------------------------------------------------- choosing

@njit(cache=True)
def _pick(values, names, count):
    """``max(options, key=lambda name: (options[name], name == "quiero"))`` over the first ``count`` options in
    insertion order."""
    best = 0
    for i in range(1, count):
        if values[i] > values[best] or (values[i] == values[best] and names[i] == A_QUIERO
                                        and names[best] != A_QUIERO):
            best = i
    return names[best]


@njit(cache=True)
def _ladder(vw):
    return (LADDER_PAU, VALUES_PAU) if vw[V_FAMILY] == 1 else (LADDER_ARG, VALUES_ARG)


@njit(cache=True)
def _ladder_ev(vw, me, k, p_accept, p_reraise):
    _, values = _ladder(vw)
    a = vw[V_SCORE]
    b = vw[V_SCORE + 1]
    fold = FOLD_SHARE
    reraise = RERAISE_SHARE if k + 1 < len(values) else 0.0
    ev = fold * _me(vw, me, a + values[k - 1], b) + (1 - fold - reraise) * _ev(vw, me, p_accept, values[k],
                                                                                values[k])
    if reraise:
        ev += reraise * max(_me(vw, me, a, b + values[k]), _ev(vw, me, p_reraise, values[k + 1], values[k + 1]))
    return ev


@njit(cache=True)
def _falta(vw, own_wins):
    a = vw[V_SCORE]
    b = vw[V_SCORE + 1]
    leader = max(a, b)
    winner = a if own_wins else b
    whole = vw[V_OPT + O_FALTA_WHOLE] != 0
    malas = vw[V_OPT + O_FALTA_MALAS] != 0 and vw[V_OPT + O_MALAS] != 0 and leader <= vw[V_TARGET] / 2
    if whole or malas:
        return vw[V_TARGET] - winner
    if vw[V_FALTA_BUENAS] and vw[V_OPT + O_MALAS] != 0 and leader < vw[V_TARGET] // 2:  # rules.md §8.5
        return vw[V_TARGET] // 2 - (winner if vw[V_FALTA_BUENAS] == 1 else leader)
    return vw[V_TARGET] - leader


@njit(cache=True)
def _falta_ok(vw, me, p):
    return (p >= FALTA_MIN or _me(vw, me, vw[V_SCORE], vw[V_SCORE + 1]) < 0.25 or vw[V_OPT + O_SINGLE] != 0
            or max(_falta(vw, True), _falta(vw, False)) <= 4)


@njit(cache=True)
def _chain_points(vw, chain, nchain):
    """truco_env.engine.envido_chain_points of ``chain[:nchain]`` (call indices 0 envido, 1 real, 2 falta)
    under the table's options: (accepted, besides a falta's own value; refused, to the last caller)."""
    before = 0
    for i in range(nchain - 1):
        before += ENVIDO_CALL_VALUE[chain[i]]
    last = chain[nchain - 1]
    refused = before + 1 if vw[V_REFUSAL1] else (1 if nchain == 1 else before)
    if last == 2:
        return (before if vw[V_FALTA_CHAIN] else 0), refused
    return before + ENVIDO_CALL_VALUE[last], refused


@njit(cache=True)
def _envido_ev(vw, me, p, chain, nchain):
    """Expected match equity of an accepted envido chain (call indices 0 envido, 1 real, 2 falta) won with
    probability ``p``."""
    accepted, _ = _chain_points(vw, chain, nchain)
    a = vw[V_SCORE]
    b = vw[V_SCORE + 1]
    if chain[nchain - 1] == 2:
        return (p * _me(vw, me, a + accepted + _falta(vw, True), b)
                + (1 - p) * _me(vw, me, a, b + accepted + _falta(vw, False)))
    return _ev(vw, me, p, accepted, accepted)


@njit(cache=True)
def _envido_open(vw, tab, st, me):
    """Open an envido (own turn, or envido va primero) when its equity beats staying quiet; -1 for none."""
    if vw[V_FAMILY] == 1:
        return -1
    won, opp_best = _envido_samples(vw, tab, st, ENVIDO_SAMPLES)
    p = _envido_p(won, opp_best, 1.0)
    a = vw[V_SCORE]
    b = vw[V_SCORE + 1]
    best_name = -1
    best_ev = _me(vw, me, a, b)
    chain = np.empty(1, dtype=np.int64)
    for call in range(3):
        name = A_ENVIDO + call
        if not _legal(vw, name):
            continue
        fold = FALTA_FOLD if call == 2 else FOLD_SHARE
        p_acc = _envido_p(won, opp_best, 1 - fold)
        chain[0] = call
        ev = fold * _me(vw, me, a + 1, b) + (1 - fold) * _envido_ev(vw, me, p_acc, chain, 1)
        if call == 2 and not _falta_ok(vw, me, p_acc):
            continue
        if p >= 0.55 and ev > best_ev + 1e-4:
            best_name = name
            best_ev = ev
    return best_name


@njit(cache=True)
def _envido_answer(vw, tab, st, me, memo, respect):
    nchain = vw[V_NECALLS]
    chain = np.empty(nchain + 1, dtype=np.int64)
    for i in range(nchain):
        chain[i] = vw[V_ECALL + i]
    last = chain[nchain - 1] if nchain else 0
    base = 0.55 if last == 0 else 0.4 if last == 1 else 0.35
    share = base ** (1 + 0.5 * (nchain - 1))
    won, opp_best = _envido_samples(vw, tab, st, ENVIDO_SAMPLES)
    p = _envido_p(won, opp_best, 1.0)
    lam = _respect_now(memo, respect)
    p_c = (1 - lam) * p + lam * _envido_p(won, opp_best, share)
    refused = _chain_points(vw, chain, nchain)[1]
    a = vw[V_SCORE]
    b = vw[V_SCORE + 1]
    falta_in_chain = False
    for i in range(nchain):
        falta_in_chain = falta_in_chain or chain[i] == 2
    values = np.empty(5, dtype=np.float64)
    names = np.empty(5, dtype=np.int64)
    count = 0
    values[count] = _me(vw, me, a, b + refused)
    names[count] = A_NOQ
    count += 1
    if not (falta_in_chain and not _falta_ok(vw, me, p_c)):
        values[count] = _envido_ev(vw, me, p_c, chain, nchain)
        names[count] = A_QUIERO
        count += 1
    if p_c >= 0.6:
        p_c2 = (1 - lam) * p + lam * _envido_p(won, opp_best, share * 0.7)
        for call in range(3):
            name = A_ENVIDO + call
            if _legal(vw, name) and (call != 2 or _falta_ok(vw, me, p_c2)):
                fold = 0.35
                chain[nchain] = call
                refuse_pts = _chain_points(vw, chain, nchain + 1)[1]
                values[count] = (fold * _me(vw, me, a + refuse_pts, b)
                                 + (1 - fold) * _envido_ev(vw, me, p_c2, chain, nchain + 1))
                names[count] = name
                count += 1
    return _pick(values, names, count)


@njit(cache=True)
def _flor_p(vw, tab, mine):
    """Share of possible opposing flors (consistent with the cards they played) that ours beats."""
    rel = -1
    for i in range(vw[V_NPART]):
        r = vw[V_PART + i]
        if r % 2 == 1 and vw[V_FHOLD + r]:
            rel = r
            break
    if rel < 0:
        for i in range(vw[V_NPART]):
            r = vw[V_PART + i]
            if r % 2 == 1:
                rel = r
                break
    if rel < 0:
        return 1.0
    played = np.empty(MAXT, dtype=np.int64)
    nplayed = _played_by(vw, rel, played)
    played_mask = 0
    for i in range(nplayed):
        played_mask |= 1 << played[i]
    seen = _seen_mask(vw, False)
    deck = _deck_mask(vw, tab)
    order = np.empty(MAXS, dtype=np.int64)
    no = _rotation(vw, vw[V_MANO], order)
    i_own = -1
    i_rel = -1
    for i in range(no):
        if order[i] == 0 and i_own < 0:
            i_own = i
        if order[i] == rel and i_rel < 0:
            i_rel = i
    i_win_ties = i_own < i_rel
    wins = 0
    total = 0
    cards = np.empty(NC, dtype=np.int64)
    combo = np.empty(3, dtype=np.int64)
    uruguayan = vw[V_FAMILY] == 2  # a flor need not be of one suit: every hand of the pool that is one
    for suit in range(1 if uruguayan else 4):
        m = 0
        for c in range(0 if uruguayan else suit, NC, 1 if uruguayan else 4):
            in_pool = (deck >> c) & 1 and (not (seen >> c) & 1 or (played_mask >> c) & 1)
            if in_pool and not (uruguayan and c == vw[V_VIRA]):
                cards[m] = c
                m += 1
        for x in range(m):
            for y in range(x + 1, m):
                for z in range(y + 1, m):
                    mask = (1 << cards[x]) | (1 << cards[y]) | (1 << cards[z])
                    if played_mask & ~mask:
                        continue
                    combo[0] = cards[x]
                    combo[1] = cards[y]
                    combo[2] = cards[z]
                    value = _points_flor(vw, combo, 3)
                    if value < 0:
                        continue
                    total += 1
                    if value < mine or (value == mine and i_win_ties):
                        wins += 1
    return wins / total if total else 1.0


@njit(cache=True)
def _flor_contest(vw, tab, me, respect):
    mine = max(0, vw[V_OWNFLOR])
    p = _flor_p(vw, tab, mine)
    a = vw[V_SCORE]
    b = vw[V_SCORE + 1]
    last = vw[V_FCALL + vw[V_NFCALLS] - 1] if vw[V_NFCALLS] else 0  # 0 flor, 1 contraflor, 2 al resto
    any_cf = False
    for i in range(vw[V_NFCALLS]):
        any_cf = any_cf or vw[V_FCALL + i] == 1
    if last == 0:
        refused = FLOR_ACHICO
    elif last == 1:
        refused = FLOR_CF_NOQ
    else:
        refused = FLOR_RESTO_AFTER if any_cf else FLOR_RESTO_DIRECT
    if last == 2:
        win_pts = _falta(vw, True) + 2 * FLOR_PER
        lose_pts = _falta(vw, False) + 2 * FLOR_PER
    elif last == 1:
        win_pts = FLOR_CF_QUIERO
        lose_pts = FLOR_CF_QUIERO
    else:
        win_pts = 2 * FLOR_PER
        lose_pts = 2 * FLOR_PER
    p_c = (1 - respect) * p + respect * max(0.0, p - 0.15)
    values = np.empty(4, dtype=np.float64)
    names = np.empty(4, dtype=np.int64)
    values[0] = _me(vw, me, a, b + refused)
    names[0] = A_NOQ
    values[1] = _ev(vw, me, p_c, win_pts, lose_pts)
    names[1] = A_QUIERO
    count = 2
    if _legal(vw, A_CFRESTO) and p_c >= 0.8:
        values[count] = _ev(vw, me, p_c - 0.1, _falta(vw, True) + 6, _falta(vw, False) + 6)
        names[count] = A_CFRESTO
        count += 1
    if _legal(vw, A_CFLOR) and p_c >= 0.65:
        values[count] = 0.3 * _me(vw, me, a + 4, b) + 0.7 * _ev(vw, me, p_c - 0.1, 6, 6)
        names[count] = A_CFLOR
        count += 1
    return _pick(values, names, count)


@njit(cache=True)
def _truco_answer(vw, tab, st, me, memo, slot, bluff, samples, respect):
    if _legal(vw, A_ENVIDO) or _legal(vw, A_REAL) or _legal(vw, A_FALTA):  # envido va primero
        call = _envido_open(vw, tab, st, me)
        if call >= 0:
            return call
    ladder, values = _ladder(vw)
    k = vw[V_PENDING]
    firsts = np.full(1, -1, dtype=np.int64)
    outcomes, opp_strength = _evaluate(vw, tab, st, firsts, samples)
    p = _p(outcomes[0])
    lam = _respect_now(memo, respect)
    p_c = (1 - lam) * p + lam * _p_top(outcomes[0], opp_strength, 0.5)
    a = vw[V_SCORE]
    b = vw[V_SCORE + 1]
    opts = np.empty(3, dtype=np.float64)
    names = np.empty(3, dtype=np.int64)
    opts[0] = _me(vw, me, a, b + values[k - 1])
    names[0] = A_NOQ
    opts[1] = _ev(vw, me, p_c, values[k], values[k])
    names[1] = A_QUIERO
    count = 2
    raise_name = _first_legal_of(vw, ladder)
    if raise_name >= 0:
        if p_c >= 0.6:
            p_c2 = (1 - lam) * p + lam * _p_top(outcomes[0], opp_strength, 0.5 * (1 - FOLD_SHARE))
            p_c3 = (1 - lam) * p + lam * _p_top(outcomes[0], opp_strength, 0.5 * RERAISE_SHARE)
            opts[2] = _ladder_ev(vw, me, k + 1, p_c2, p_c3)
            names[2] = raise_name
            count = 3
        elif k == 1 and _bluffing(memo, slot, st, bluff, p):
            opts[2] = max(opts[0], opts[1]) + 1.0
            names[2] = raise_name
            count = 3
    return _pick(opts, names, count)


@njit(cache=True)
def _onze(vw, tab, st, me, samples):
    firsts = np.full(1, -1, dtype=np.int64)
    outcomes, _ = _evaluate(vw, tab, st, firsts, samples)
    p = _p(outcomes[0])
    hv = vw[V_HV] if vw[V_HV] else 3
    play = _ev(vw, me, p, hv, hv)
    run = _me(vw, me, vw[V_SCORE], vw[V_SCORE + 1] + 1)
    return A_QUIERO if play >= run else A_NOQ


@njit(cache=True)
def _should_fold(vw, p):
    """Mazo only as the first to act in trick 1 with a hopeless hand and a poor envido, or when the hand is
    certainly lost."""
    if p <= 0.0:
        return True
    first_to_act = vw[V_TI] == 0
    if first_to_act:
        for s in range(MAXS):
            if vw[V_TABLE + s] >= 0 or vw[V_COVERED + s]:
                first_to_act = False
    poor_envido = vw[V_FAMILY] == 1 or vw[V_OWNENV] < 25
    return first_to_act and vw[V_LEVEL] == 0 and vw[V_ESTATUS] == 0 and poor_envido and p < 0.12


@njit(cache=True)
def _play(vw, tab, st, me, memo, slot, bluff, samples):
    nslots = 0
    for i in range(vw[V_NLEGAL]):
        a = vw[V_LEGAL + i]
        if A_SLOT <= a < A_SLOT + 3:
            nslots += 1
    if nslots:  # blind mão de ferro: nothing to know
        j = mt_randbelow(st, nslots)
        for i in range(vw[V_NLEGAL]):
            a = vw[V_LEGAL + i]
            if A_SLOT <= a < A_SLOT + 3:
                if j == 0:
                    return a
                j -= 1
    if _legal(vw, A_ENVIDO) or _legal(vw, A_REAL) or _legal(vw, A_FALTA):
        call = _envido_open(vw, tab, st, me)
        if call >= 0:
            return call
    strength = _strength_row(vw, tab)
    # _card_candidates: one card (the lowest index) of each distinct strength, weakest first
    nh = vw[V_NHAND]
    sort_key = np.empty(nh, dtype=np.int64)
    for i in range(nh):
        sort_key[i] = strength[vw[V_HAND + i]] * 64 + vw[V_HAND + i]
    by_strength = np.argsort(sort_key)
    cands = np.empty(nh, dtype=np.int64)
    firsts = np.empty(nh, dtype=np.int64)
    ncand = 0
    for i in range(nh):
        c = vw[V_HAND + by_strength[i]]
        if ncand == 0 or strength[cands[ncand - 1]] != strength[c]:
            cands[ncand] = c
            firsts[ncand] = strength[c]
            ncand += 1
    if ncand == 0:
        return -1
    outcomes, opp_strength = _evaluate(vw, tab, st, firsts[:ncand], samples)
    best = 0
    best_key = _p(outcomes[0])
    for i in range(1, ncand):
        key = _p(outcomes[i]) - 1e-3 * i
        if key > best_key:
            best = i
            best_key = key
    p = _p(outcomes[best])
    ladder, _ = _ladder(vw)
    call = _first_legal_of(vw, ladder)
    if call >= 0:
        p_accept = _p_top(outcomes[best], opp_strength, 1 - FOLD_SHARE)
        p_reraise = _p_top(outcomes[best], opp_strength, RERAISE_SHARE)
        # _should_call
        ev_play = _ev(vw, me, p, vw[V_HV], vw[V_HV])
        ev_call = _ladder_ev(vw, me, vw[V_LEVEL] + 1, p_accept, p_reraise)
        if (p >= 0.55 and ev_call > ev_play) or _bluffing(memo, slot, st, bluff, p):
            return call
    if _legal(vw, A_MAZO) and _should_fold(vw, p):
        return A_MAZO
    card = cands[best]
    # _card_action: face down when the rules allow it and the card can neither win nor tie the trick
    if _legal(vw, A_COVER + card):
        t = min(vw[V_TI], 2)
        top = -1
        for s in range(MAXS):
            c = vw[V_TABLE + t * MAXS + s]
            if c >= 0 and strength[c] > top:
                top = strength[c]
        if top >= 0 and strength[card] < top:
            return A_COVER + card
    return card


@njit(cache=True)
def _fallback(vw):
    if _legal(vw, A_QUIERO):
        return A_QUIERO
    if _legal(vw, A_FLOR):
        return A_FLOR
    for i in range(vw[V_NLEGAL]):
        if vw[V_LEGAL + i] < A_SLOT + 3:  # play:, cover: and play_slot: names all start so
            return vw[V_LEGAL + i]
    return vw[V_LEGAL]


@njit(cache=True)
def _decide(vw, tab, st, me, memo, slot, bluff, samples, respect, signal):
    if vw[V_NLEGAL] == 1:
        return vw[V_LEGAL]
    if signal and vw[V_SENA_TABLE] and _legal(vw, A_SENA):  # señas: tell the partner, honestly, by the table
        return A_SENA + _honest_gesture(vw, tab)
    phase = vw[V_PHASE]
    if phase == PH_FLOR_DECLARE:  # a flor pays; refusing a truco unsung (rules.md §8.10 row 18) forfeits it
        return A_FLOR
    if phase == PH_ONZE:
        return _onze(vw, tab, st, me, samples)
    if phase == PH_FLOR_CONTEST:
        return _flor_contest(vw, tab, me, respect)
    if phase == PH_ENVIDO:
        return _envido_answer(vw, tab, st, me, memo, respect)
    if phase == PH_TRUCO:
        return _truco_answer(vw, tab, st, me, memo, slot, bluff, samples, respect)
    return _play(vw, tab, st, me, memo, slot, bluff, samples)


@njit(cache=True)
def act_rows(obs, masks, rows, st, memo, params, me, me_index, tab, out):
    """Decide for every row ``i`` in ``rows``: observation ``obs[i]``, mask ``masks[i]``, the agent's generator
    ``st[i]`` and memory ``memo[i]`` (both updated), its (bluff, samples, respect, signal) ``params[i]`` and match-equity
    table ``me[me_index[i]]``; the action goes to ``out[i]`` (-1 when the mask has no legal action)."""
    vw = np.empty(VIEW_SIZE, dtype=np.int64)
    for i in rows:
        _decode(obs[i], masks[i], tab, vw)
        if vw[V_NLEGAL] == 0:
            out[i] = -1
            continue
        slot = _memo_slot(memo[i], _hand_key(vw))
        called = vw[V_PENDING] > 0 and not vw[V_PBYOWN]
        for j in range(vw[V_NECALLS]):
            called = called or not vw[V_EOWN + j]
        if called:
            memo[i, slot] |= 1
        bluff = params[i, 0]
        samples = np.int64(params[i, 1])
        respect = params[i, 2]
        signal = params[i, 3] != 0
        action = _decide(vw, tab, st[i], me[me_index[i]], memo[i], slot, bluff, samples, respect, signal)
        if action < 0 or not _legal(vw, action):  # defensive: never return an illegal action
            action = _fallback(vw)
        out[i] = action
