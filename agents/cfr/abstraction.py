"""The information-set abstractions of MCCFR, ``v4`` (1v1) and ``v5`` (team play), and the ``lossless`` key of the
research presets: keys and abstract actions read from the observation vector and the legal mask, by compiled
functions. (Earlier abstractions, ``v1`` and ``v2`` keyed from information-state strings and ``v3``, the first 60
bits below trained alone, are retired: no shipped table uses them.)

Why from the observation: the same function then runs inside the compiled MCCFR walk
(:mod:`training.learn.cfr.mccfr_kernel`, on the kernel's own ``encode_obs``) and at play time in :mod:`agents.cfr` (on
the observation every environment already hands an agent), so the training and the playing key agree by
construction, and a checkpoint plays from ``{"observation", "action_mask"}`` alone: no
information-state string and no reference engine. ``tests/test_mccfr_kernel.py`` still checks that the key of
the walk equals the key of the environment's observation for the same decision.

The base key (:func:`key_base`), packed into one int64 (60 bits), field by field:

========  ====  ====================================================================================
bits      size  field
========  ====  ====================================================================================
0-11      12    legal actions: play a card (any), cover a card (any), the next ladder call, then one bit per
                envido, real_envido, falta_envido, flor, contraflor, contraflor_al_resto, quiero, no_quiero,
                mazo (whether cards may be played fixes which card codes: every unplayed card is legal then)
12        1     mano
13-16     4     score buckets own, opponent (Argentine >5 to go / 3-5 / last two; Paulista 0-7 / 8-9 /
                10 / 11), from the *current* score (the observation shows the score after any envido of this
                hand was paid)
17-25     9     own unplayed cards: three base-7 digits, strongest first, 1-5 the letters A-E by trick
                strength, 6 an unseen card of a blind mão de ferro
26-30     5     envido bucket (Argentine, first trick, while an envido or flor call is legal or waits for its
                answer): 1 + 4 x envido bucket + (flor bucket + 1 when holding a flor)
31-36     6     finished tricks: base-4 digits, 1 won, 2 lost, 3 tied
37-41     5     the opponent's face-up card on the current trick: 1 + 4 x (own cards that beat it) + (own
                cards that tie it); 0 when it has not played or played face down
42-45     4     ladder: 3 x (calls so far: the pending level, else the accepted one) + who made the last
                (0 nobody, 1 own side, 2 the opponent)
46-59     14    the chain waiting for an answer: 1 envido, 2 flor (2 bits), then per call (up to four)
                1 + call (0-2) + 3 x (0 own, 1 opponent's)
========  ====  ====================================================================================

Letters by the card's trick strength (1-14): A 13+, B 11-12, C 9-10, D 6-8, E below. Envido buckets by points:
0-4, 5-19, 20-24, 25-27, 28-30, 31+; flor buckets: up to 28, 29-32, 33+.

``v4`` is the base key plus one field, bits 60-62: the seat's own card on the current trick (0 before it plays
there, 1-5 the card's letter, 6 face down). The base key forgets a card once it leaves the hand, so a seat that has
led a trick would answer a raise without knowing what it led: after leading the last trick, not even whether it
wins. In Paulista the heuristic raises on such spots, and a blueprint on the base key alone (``v3``) paid for it.

``v5`` is ``v4`` in 1v1. In team play (2v2) bits 37-41, which in 1v1 rate the opponent's card on the trick
and in team play would see only the next seat's, hold the whole current trick instead (:func:`key_v5`): how many
cards are on it, whether the best of them is the partner's or an opponent's, and whether an own card beats or
ties it. Each seat's key is read from its own observation, so partners, who never see each other's cards, keep
rows of their own.

Abstract actions (the table's codes): ``0..2`` play the own unplayed card of that strength rank
(0 = strongest, ties by card index; in a blind mão de ferro the unplayed slots in order), ``3..5`` cover it,
``10 + i`` the call ``truco_env.actions.CALLS[i]``. :func:`legal_codes` lists the codes of the legal actions with
their engine ids, so the walk applies them and an agent maps a table row back to legal engine actions.

``lossless``: a 64-bit hash of the whole observation, the legal mask and the hand's public action history
(relative seat and action, another seat's face-down card hidden: what ``encode_information_state`` holds), so a
perfect-recall key within a hand. The observation alone is not one: a raise answered at once and a raise after an
accept leave the same ladder state. It is meant for the research presets, whose exact NashConv
(:mod:`training.learn.cfr.solver`) checks the MCCFR walk; on a full preset its table grows with every hand history.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from truco_env import _kernel
from truco_env.actions import CALLS

VERSIONS = ("v4", "v5", "lossless")
#: The compiled walk's key kinds (the ``kind`` of :func:`abstract_key` and of the walk), by abstraction name (0 was
#: the retired ``v3``, :func:`key_base` trained alone).
KINDS = {"lossless": 1, "v4": 2, "v5": 3}
LOSSLESS = KINDS["lossless"]
CALL_BASE = 10  # the abstract code of truco_env.actions.CALLS[0]
MAX_LEGAL = 24  # more than any decision's legal actions (3 cards, 3 covers, a ladder call, 9 others)

_STRENGTH = _kernel.STRENGTH


@njit(cache=True)
def _strength_row(obs, cfg):
    if cfg[_kernel.C_FAMILY] == 0:
        return 0
    if cfg[_kernel.C_FAMILY] == 2:  # a row per muestra (the top tier holds the piezas with the matas)
        for c in range(40):
            if obs[_kernel.O_VIRA + c] > 0.5:
                return _kernel.URUGUAYAN_ROW + c
        return _kernel.URUGUAYAN_ROW
    for m in range(10):
        if obs[_kernel.O_MANILHA + m] > 0.5:
            return 1 + m
    return 1


@njit(cache=True)
def _own_order(obs, row):
    """Own unplayed cards, strongest first (ties by card index), or the unplayed slots in order when blind:
    (count, blind, first, second, third), -1 past the count (scalars: an array per call cost more than the
    rest of the key)."""
    o0 = -1
    o1 = -1
    o2 = -1
    n = 0
    if obs[_kernel.O_SPECIAL + 2] > 0.5:
        for i in range(3):
            if obs[_kernel.O_SLOTS + i] > 0.5:
                if n == 0:
                    o0 = i
                elif n == 1:
                    o1 = i
                else:
                    o2 = i
                n += 1
        return n, True, o0, o1, o2
    for c in range(40):
        if obs[_kernel.O_HAND + c] > 0.5:
            # cards arrive by index, so a card goes ahead of the weaker ones only
            s = _STRENGTH[row, c]
            if n == 0:
                o0 = c
            elif n == 1:
                if _STRENGTH[row, o0] < s:
                    o1 = o0
                    o0 = c
                else:
                    o1 = c
            else:
                if _STRENGTH[row, o0] < s:
                    o2 = o1
                    o1 = o0
                    o0 = c
                elif _STRENGTH[row, o1] < s:
                    o2 = o1
                    o1 = c
                else:
                    o2 = c
            n += 1
    return n, False, o0, o1, o2


@njit(cache=True)
def legal_codes(obs, mask, cfg, codes, ids):
    """The abstract codes of the legal actions (ascending) into ``codes`` and their engine action ids into
    ``ids``; returns how many."""
    n_own, blind, o0, o1, o2 = _own_order(obs, _strength_row(obs, cfg))
    n = 0
    for r in range(n_own):
        card = o0 if r == 0 else (o1 if r == 1 else o2)
        a = _kernel.A_SLOT + card if blind else card
        if mask[a]:
            codes[n] = r
            ids[n] = a
            n += 1
    if not blind:
        for r in range(n_own):
            a = _kernel.A_COVER + (o0 if r == 0 else (o1 if r == 1 else o2))
            if mask[a]:
                codes[n] = 3 + r
                ids[n] = a
                n += 1
    for a in range(_kernel.A_TRUCO, _kernel.NUM_ACTIONS):
        if mask[a]:
            codes[n] = CALL_BASE + a - _kernel.A_TRUCO
            ids[n] = a
            n += 1
    return n


@njit(cache=True, inline="always")
def _tier(s):
    if s >= 13:
        return 1
    if s >= 11:
        return 2
    if s >= 9:
        return 3
    if s >= 6:
        return 4
    return 5


@njit(cache=True)
def _score_bucket(score, target, family):
    if family == 1:
        eleven = target - 1
        if score >= eleven:
            return 3
        if score == eleven - 1:
            return 2
        return 1 if score >= eleven - 3 else 0
    if target - score <= 2:
        return 2
    return 1 if target - score <= 5 else 0


@njit(cache=True)
def _envido_bucket(points):
    if points < 20:
        return 0 if points <= 4 else 1
    if points <= 24:
        return 2
    if points <= 27:
        return 3
    return 4 if points <= 30 else 5


@njit(cache=True)
def _argmax(obs, start, size):
    for i in range(size):
        if obs[start + i] > 0.5:
            return i
    return 0


@njit(cache=True)
def key_base(obs, mask, cfg):
    """The packed base key (60 bits) of the seat whose observation is ``obs`` (layout: the module docstring)."""
    family = cfg[_kernel.C_FAMILY]
    target = cfg[_kernel.C_TARGET]
    phase = _argmax(obs, _kernel.O_PHASE, 7)
    # legal actions: whether cards (and covers) may be played, and which calls
    row = _strength_row(obs, cfg)
    n_own, blind, o0, o1, o2 = _own_order(obs, row)
    legal = 0
    if n_own > 0:
        if mask[_kernel.A_SLOT + o0 if blind else o0]:
            legal |= 1
        if not blind and mask[_kernel.A_COVER + o0]:
            legal |= 2
    for a in range(_kernel.A_TRUCO, _kernel.A_ENVIDO):
        if mask[a]:
            legal |= 4
    for a in range(_kernel.A_ENVIDO, _kernel.NUM_ACTIONS):
        if mask[a]:
            legal |= 8 << (a - _kernel.A_ENVIDO)
    key = np.int64(legal)
    key |= np.int64(1 if obs[_kernel.O_MANO] > 0.5 else 0) << 12
    own = int(obs[_kernel.O_SCORE] * target + 0.5)
    opp = int(obs[_kernel.O_SCORE + 1] * target + 0.5)
    key |= np.int64(_score_bucket(own, target, family) + 4 * _score_bucket(opp, target, family)) << 13
    # own cards
    hand = 0
    for r in range(n_own):
        card = o0 if r == 0 else (o1 if r == 1 else o2)
        hand = hand * 7 + (6 if blind else _tier(_STRENGTH[row, card]))
    key |= np.int64(hand) << 17
    # finished tricks
    n_results = 0
    results = 0
    for t in range(3):
        base = _kernel.O_RESULTS + 3 * t
        for k in range(3):
            if obs[base + k] > 0.5:
                results = results * 4 + 1 + k
                n_results += 1
    key |= np.int64(results) << 31
    # envido bucket while the envido is live
    live = phase == _kernel.ENVIDO or phase == _kernel.FLOR_CONTEST or (legal & (63 << 3)) != 0
    if family != 1 and n_results == 0 and not blind and live:
        env = 1 + 4 * _envido_bucket(int(obs[_kernel.O_OWN_POINTS] * cfg[_kernel.C_ENV_SCALE] + 0.5))
        if cfg[_kernel.C_FLOR] and obs[_kernel.O_OWN_POINTS + 1] > 0.0:
            flor = int(obs[_kernel.O_OWN_POINTS + 1] * cfg[_kernel.C_FLOR_SCALE] + 0.5)
            env += 1 + (0 if flor <= 28 else (1 if flor <= 32 else 2))
        key |= np.int64(env) << 26
    # the opponent's face-up card on the current trick
    if n_results < 3:
        base = _kernel.O_TABLE + (n_results * 6 + 1) * 40
        for c in range(40):
            if obs[base + c] > 0.5:
                s = _STRENGTH[row, c]
                beats = 0
                ties = 0
                if not blind:
                    for r in range(n_own):
                        o = _STRENGTH[row, o0 if r == 0 else (o1 if r == 1 else o2)]
                        if o > s:
                            beats += 1
                        elif o == s:
                            ties += 1
                key |= np.int64(1 + 4 * beats + ties) << 37
                break
    # ladder: calls so far and who made the last
    pending = _argmax(obs, _kernel.O_PENDING, 5)
    if pending > 0:
        calls = pending
        last = 1 if obs[_kernel.O_PENDING_BY] > 0.5 else 2
    else:
        calls = _argmax(obs, _kernel.O_LEVEL, 5)
        holder = _argmax(obs, _kernel.O_RAISE_HOLDER, 3)
        last = 0 if calls == 0 else (2 if holder == 1 else 1)
    key |= np.int64(3 * calls + last) << 42
    # the chain waiting for an answer
    if phase == _kernel.ENVIDO or phase == _kernel.FLOR_CONTEST:
        start = _kernel.O_ECALLS if phase == _kernel.ENVIDO else _kernel.O_FCALLS
        slots = 4 if phase == _kernel.ENVIDO else 3
        chain = 1 if phase == _kernel.ENVIDO else 2
        for i in range(slots):
            entry = start + 5 * i
            call = -1
            for k in range(3):
                if obs[entry + k] > 0.5:
                    call = k
            if call < 0:
                break
            chain |= (1 + call + 3 * (1 if obs[entry + 4] > 0.5 else 0)) << (2 + 3 * i)
        key |= np.int64(chain) << 46
    return key


@njit(cache=True)
def key_v4(obs, mask, cfg):
    """The packed ``v4`` key: the base key plus the seat's own card on the current trick (bits 60-62: 0 none, 1-5 its
    tier, 6 face down). Why: the base key drops a card once it leaves the hand, so a seat that has led a trick
    answers a raise without knowing what it led (after leading the last trick, not even whether it wins),
    which an opponent that reads its face-up card exploits."""
    key = key_base(obs, mask, cfg)
    t = 0  # the current trick: the number of finished ones
    for i in range(9):
        if obs[_kernel.O_RESULTS + i] > 0.5:
            t += 1
    if t >= 3:
        return key
    own = 0
    if obs[_kernel.O_COVERED + 6 * t] > 0.5:
        own = 6
    else:
        base = _kernel.O_TABLE + t * 6 * 40
        for c in range(40):
            if obs[base + c] > 0.5:
                own = _tier(_STRENGTH[_strength_row(obs, cfg), c])
                break
    return key | (np.int64(own) << 60)


@njit(cache=True)
def key_v5(obs, mask, cfg):
    """The ``v5`` key: ``v4`` in 1v1; in team play ``v4`` with bits 37-41 (in 1v1 the opponent's card on the
    current trick, in team play only the next seat's) holding the whole current trick instead: 0 when no one has
    played on it, else 1 + (cards on it - 1) + 3 x (the best of them is an opponent's) + 6 x (0: no own card
    beats or ties it, 1: one ties it, 2: one beats it); a tie with the partner's card counts as the partner's.
    Why: a team seat must know whether to beat the trick or leave it to its partner, and how many seats are
    still to play; the coarse rating keeps the table small enough to learn and to ship."""
    key = key_v4(obs, mask, cfg)
    n = cfg[_kernel.C_N]
    if n == 2:
        return key
    t = 0  # the current trick: the number of finished ones
    for i in range(9):
        if obs[_kernel.O_RESULTS + i] > 0.5:
            t += 1
    key &= ~(np.int64(31) << 37)
    if t >= 3:
        return key
    row = _strength_row(obs, cfg)
    n_own, blind, o0, _o1, _o2 = _own_order(obs, row)
    played = 0
    best = -1
    theirs = 0
    for rel in range(1, n):
        if obs[_kernel.O_COVERED + 6 * t + rel] > 0.5:
            played += 1
            continue
        base = _kernel.O_TABLE + (t * 6 + rel) * 40
        for c in range(40):
            if obs[base + c] > 0.5:
                played += 1
                strength = _STRENGTH[row, c]
                if strength > best or (strength == best and rel % 2 == 0):
                    best = strength
                    theirs = rel % 2
                break
    if played == 0:
        return key
    rating = 0
    if best >= 0 and not blind and n_own > 0:
        top = _STRENGTH[row, o0]  # the own cards in strength order: the first is the strongest
        rating = 2 if top > best else (1 if top == best else 0)
    field = 1 + min(played, 3) - 1 + 3 * theirs + 6 * rating
    return key | (np.int64(field) << 37)


@njit(cache=True)
def abstract_key(obs, mask, cfg, kind):
    """The ``v4`` or ``v5`` key (``kind``: :data:`KINDS`)."""
    if kind == 3:
        return key_v5(obs, mask, cfg)
    return key_v4(obs, mask, cfg)


@njit(cache=True, inline="always")
def _mix(h, v):
    z = (h ^ np.uint64(v)) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def key_lossless(obs, mask, hist_rel, hist_act, n_hist):
    """The ``lossless`` key: a hash of the observation's dynamic part (the rules' static tail left out), the
    legal mask and the public history (``hist_rel``: relative seat, ``hist_act``: action id or -1 for another
    seat's face-down card)."""
    bits = obs.view(np.uint32)
    h = np.uint64(0x243F6A8885A308D3)
    for i in range(_kernel.O_FAMILY):
        if bits[i] != 0:
            h = _mix(h, (np.uint64(i) << np.uint64(32)) | np.uint64(bits[i]))
    for a in range(_kernel.NUM_ACTIONS):
        if mask[a]:
            h = _mix(h, np.uint64(1 << 40) + np.uint64(a))
    for i in range(n_hist):
        h = _mix(h, np.uint64(2 << 40) + np.uint64(i * 1024 + hist_rel[i] * 128 + hist_act[i] + 1))
    return np.int64(h >> np.uint64(1))  # non-negative: decimal text without a sign


def key_from_observation(obs: np.ndarray, mask: np.ndarray, cfg: np.ndarray, abstraction: str = "v4",
                         info_state: np.ndarray | None = None) -> int:
    """The table key of one decision from what the environment shows the seat: ``obs`` and ``mask``, plus (for
    ``lossless``) ``info_state`` (``encode_information_state``, whose tail holds the hand's public history).
    ``cfg``: :func:`truco_env.fast.config_array` of the rules."""
    obs = np.ascontiguousarray(obs, dtype=np.float32)
    mask = np.ascontiguousarray(mask, dtype=np.int8)
    if abstraction in ("v4", "v5"):
        return int(abstract_key(obs, mask, cfg, KINDS[abstraction]))
    if abstraction != "lossless":
        raise ValueError(f"unknown compiled-engine abstraction {abstraction!r}; known: {', '.join(VERSIONS)}")
    if info_state is None:
        raise ValueError("the lossless key needs the information-state tensor (observation['info_state'])")
    rel, act = history_from_info_state(info_state)
    return int(key_lossless(obs, mask, rel, act, len(rel)))


def history_from_info_state(info_state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(relative seat, public action id or -1) of each action of the hand, from an information-state tensor."""
    from truco_env.encoding import HISTORY_SLOT_SIZE, MAX_SEATS, OBSERVATION_SIZE

    slots = np.asarray(info_state)[OBSERVATION_SIZE:].reshape(-1, HISTORY_SLOT_SIZE)
    used = slots[:, :MAX_SEATS].max(axis=1) > 0.5
    n = int(np.argmin(used)) if not used.all() else len(used)
    rel = np.argmax(slots[:n, :MAX_SEATS], axis=1).astype(np.int32)
    actions = slots[:n, MAX_SEATS:]
    act = np.where(actions.max(axis=1) > 0.5, np.argmax(actions, axis=1), -1).astype(np.int32)
    return rel, act


def codes_and_ids(obs: np.ndarray, mask: np.ndarray, cfg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`legal_codes` as two arrays (abstract codes ascending, engine ids)."""
    codes = np.empty(MAX_LEGAL, np.int32)
    ids = np.empty(MAX_LEGAL, np.int32)
    n = legal_codes(np.ascontiguousarray(obs, dtype=np.float32), np.ascontiguousarray(mask, dtype=np.int8), cfg,
                    codes, ids)
    return codes[:n].copy(), ids[:n].copy()



def code_label(code: int) -> str:
    """The name of an abstract action code without a hand to resolve it: ``play:1`` / ``cover:1`` for the own
    unplayed card of strength rank 1 (the strongest; the blind slot of that rank in a blind mão de ferro), else the
    call's name. What ``truco export cfr`` writes for MCCFR tables."""
    code = int(code)
    if CALL_BASE <= code < CALL_BASE + len(CALLS):
        return CALLS[code - CALL_BASE]
    if not 0 <= code < 6:
        raise ValueError(f"abstract action code {code} is not a card code (0..5) or a call code "
                         f"({CALL_BASE}..{CALL_BASE + len(CALLS) - 1})")
    return ("cover:" if code >= 3 else "play:") + str(code % 3 + 1)

_LETTERS = "?ABCDE?"
_CALL_NAMES = (("e", "re", "fe"), ("f", "cf", "cr"))
_LEGAL_NAMES = ("play", "cover", "ladder", "e", "re", "fe", "f", "cf", "cr", "q", "n", "m")


def describe(key: int, family: str = "argentine") -> str:
    """A readable form of a ``v4`` key, ``|``-joined fields (for exports and debugging; the own card on the current
    trick is ``c`` and its letter, ``cx`` face down, in the tricks part)."""
    key = int(key)

    def field(shift: int, bits: int) -> int:
        return (key >> shift) & ((1 << bits) - 1)

    paulista = family == "paulista"
    buckets = ("0", "2", "3", "4") if paulista else ("0", "2", "z", "?")
    score = field(13, 4)
    hand, letters = field(17, 9), ""
    while hand:
        hand, digit = divmod(hand, 7)
        letters = ("?" if digit == 6 else _LETTERS[digit]) + letters
    env = field(26, 5)
    envido = "" if env == 0 else "abcdef"[(env - 1) // 4] + ("" if (env - 1) % 4 == 0 else f"F{(env - 1) % 4 - 1}")
    results, tricks = field(31, 6), ""
    while results:
        results, digit = divmod(results, 4)
        tricks = "WLT"[digit - 1] + tricks
    own = field(60, 3)
    if own:  # v4: the own card on the current trick
        tricks += "c" + ("?ABCDEx"[own])
    opp = field(37, 5)
    if opp:
        tricks += f"o{(opp - 1) // 4}{(opp - 1) % 4}"
    ladder = field(42, 4)
    betting = f"L{ladder // 3}{('', '0', '1')[ladder % 3]}"
    chain = field(46, 14)
    if chain & 3:
        names = _CALL_NAMES[(chain & 3) - 1]
        betting += "E" if chain & 3 == 1 else "F"
        for i in range(4):
            entry = (chain >> (2 + 3 * i)) & 7
            if entry:
                betting += f"{(entry - 1) // 3}{names[(entry - 1) % 3]}"
    legal = ",".join(name for i, name in enumerate(_LEGAL_NAMES) if field(0, 12) >> i & 1)
    return "|".join(["m" if field(12, 1) else "p", buckets[score & 3] + buckets[score >> 2], letters, envido,
                     tricks, betting, legal])


def state_key(state, seat: int, cfg: np.ndarray, abstraction: str = "v4") -> tuple[int, np.ndarray, np.ndarray]:
    """(key, codes, engine ids) of ``seat``'s decision on a reference engine state, from the observation the
    environment shows that seat (the research presets' exact trees, and tests)."""
    from truco_env.encoding import encode_action_mask, encode_information_state, encode_observation

    info = encode_information_state(state, seat) if abstraction == "lossless" else None
    obs = encode_observation(state, seat) if info is None else info[:_kernel.OBS_SIZE]
    mask = encode_action_mask(state)
    codes, ids = codes_and_ids(obs, mask, cfg)
    return key_from_observation(obs, mask, cfg, abstraction, info), codes, ids
