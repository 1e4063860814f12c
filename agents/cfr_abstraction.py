"""Information-set abstractions ``v1`` and ``v2`` for MCCFR on the full 1v1 presets (argentine, argentine-flor, paulista).

The full games are far too large for exact tables, so MCCFR learns one strategy per *abstract* information set
of a single hand (the match context enters through a score bucket). The key is built from what the seat knows;
the same function reads it from the engine (training) or from the seat's information-state string (play, via
:func:`key_from_info_string`), and a test checks both agree. It lives in the agents package because playing an
MCCFR checkpoint (:mod:`agents.cfr`) needs the very key that training (:mod:`training.cfr.mccfr`) stored, and
agents must not import training.

Key fields, joined by ``|``:

1. ``m`` / ``p``: the seat is mano (leads the first trick) or pie;
2. score bucket of own and opponent score at the start of the hand: Argentine (target T) ``0`` below T/2,
   ``1`` up to T-6, ``2`` for T-5..T-3, ``z`` for the last two points; Paulista ``0``..``4`` for 0-3, 4-7, 8-9, 10, 11 (11 = mão de onze / ferro);
3. hand-strength bucket: one letter per own unplayed card, strongest first, from the card's trick strength
   (both families use the 1..14 scale of ``truco_env.cards``): 14-13 ``A``, 12-11 ``B``, 10-9 ``C``,
   8-6 ``D``, 5-1 ``E`` (``?`` for a blind mão de ferro);
4. envido bucket (Argentine, first trick only): own envido points 0-4 ``a``, 5-7 ``b``, 20-24 ``c``, 25-27 ``d``,
   28-30 ``e``, 31-33 ``f``; with flor on, ``F`` + flor bucket (<= 28, 29-32, >= 33) when holding one;
5. trick history: per finished trick ``W`` / ``L`` / ``T`` (own side), then, if the opponent has already played
   to the current trick, ``o`` + the letter of that card + how many own cards beat it and tie it;
6. the betting history of the hand: every call and answer as ``<trick><relative seat><abbreviation>``;
7. what was shown: the opponent's announced envido/flor bucket, or ``-`` for "son buenas";
8. the legal abstract actions.

Abstract actions (the table's action codes): ``0..2`` play the own unplayed card of that strength rank
(0 = strongest, ties by card index) or the blind slot of that rank, ``3..5`` cover it (Paulista
``covered_card``), ``10 + i`` the call ``truco_env.actions.CALLS[i]``. Size: 2 x 4^2 (Argentine) or 5^2 (Paulista) score buckets x 35 hand
buckets x 7 envido buckets x the (short) trick and betting histories; ``docs/research.md`` reports how many
abstract information sets training actually touched.

Version ``v2`` (:func:`abstract_key_v2`, the default for new runs) is much coarser: the same hand letters, but
score buckets that only mark the end of the match, the envido bucket only while an envido or flor call is legal
or waits for its answer, the opponent's card on the current trick only through how many own cards beat or tie
it, a compact betting state (ladder level and who made the last ladder call, the pending envido chain) instead
of the whole call sequence, and nothing of what was shown. A checkpoint records its version
(``meta["abstraction"]``) and is read with it, so ``v1`` checkpoints still load and play.

Version ``v3`` (:mod:`agents.cfr_abstraction_v3`) has v2's content but is read from the observation vector by a
compiled function, for the compiled MCCFR walk; ``v1`` and ``v2`` stay here for the Python walk and the
checkpoints trained with them.
"""

from __future__ import annotations

from dataclasses import dataclass

from truco_env import actions as A
from truco_env import cards as C
from truco_env.config import TrucoConfig

VERSIONS = ("v1", "v2")
VERSION = "v2"  # the latest; checkpoints store theirs (``meta["abstraction"]``) and are read with it
CALL_BASE = 10
CALL_CODE = {name: CALL_BASE + i for i, name in enumerate(A.CALLS)}
CODE_CALL = {v: k for k, v in CALL_CODE.items()}
ABBR = {"truco": "t", "retruco": "r", "vale_cuatro": "v", "seis": "6", "nove": "9", "doze": "12",
        "envido": "e", "real_envido": "re", "falta_envido": "fe", "flor": "f", "contraflor": "cf",
        "contraflor_al_resto": "cr", "quiero": "q", "no_quiero": "n", "mazo": "m"}


def tier(strength: int) -> str:
    if strength >= 13:
        return "A"
    if strength >= 11:
        return "B"
    if strength >= 9:
        return "C"
    if strength >= 6:
        return "D"
    return "E"


def score_bucket(score: int, config: TrucoConfig) -> str:
    target = config.target_score
    if config.family == C.PAULISTA:
        eleven = target - 1
        if score >= eleven:
            return "4"
        if score == eleven - 1:
            return "3"
        if score >= eleven - 3:
            return "2"
        return "1" if score >= 4 else "0"
    if target - score <= 2:
        return "z"
    if target - score <= 5:
        return "2"
    return "1" if 2 * score >= target else "0"


def envido_bucket(points: int) -> str:
    if points < 20:
        return "a" if points <= 4 else "b"
    if points <= 24:
        return "c"
    if points <= 27:
        return "d"
    return "e" if points <= 30 else "f"


def flor_bucket(points: int) -> str:
    return "0" if points <= 28 else ("1" if points <= 32 else "2")


_STRENGTH_CACHE: dict = {}


def strengths(config: TrucoConfig, vira: int | None) -> tuple[int, ...]:
    key = (config.family, vira, config.deck, config.deck_ranks)
    table = _STRENGTH_CACHE.get(key)
    if table is None:
        table = _STRENGTH_CACHE[key] = C.strength_table(config.family, vira, config.deck, config.deck_ranks)
    return table


@dataclass
class View:
    """What one seat knows of the current hand (enough for the abstraction)."""

    config: TrucoConfig
    mano: bool
    score: tuple[int, int]  # own, opponent at the start of the hand
    dealt: tuple[int, ...] | None  # own dealt cards; None when blind
    remaining: list[int]  # own unplayed cards (dealt order); slots when blind
    vira: int | None
    results: list[str]  # per finished trick: W / L / T
    opp_card: int | None  # opponent's face-up card on the current trick (None: none / covered)
    trick: int
    calls: list[tuple[int, int, str]]  # (trick, relative seat, call)
    shown: str


def _order(view: View) -> list[int]:
    """Own unplayed cards, strongest first (ties by card index); slots in order when blind."""
    if view.dealt is None:
        return list(view.remaining)
    st = strengths(view.config, view.vira)
    return sorted(view.remaining, key=lambda c: (-st[c], c))


def action_code(view: View, name: str) -> int:
    if name in CALL_CODE:
        return CALL_CODE[name]
    kind, _, arg = name.partition(":")
    order = _order(view)
    if kind == "play_slot":
        return order.index(int(arg))
    card = C.parse_card(arg, view.config.family)
    return order.index(card) + (3 if kind == "cover" else 0)


def code_label(code: int) -> str:
    """The name of an abstract action code without a hand to resolve it (every abstraction version shares the
    codes): ``play:1`` / ``cover:1`` for the own unplayed card of strength rank 1 (the strongest; the blind slot of
    that rank in a blind mão de ferro), else the call's name. What ``truco export cfr`` writes for MCCFR tables."""
    code = int(code)
    if code in CODE_CALL:
        return CODE_CALL[code]
    if not 0 <= code < 6:
        raise ValueError(f"abstract action code {code} is not a card code (0..5) or a call code (>= {CALL_BASE})")
    return ("cover:" if code >= 3 else "play:") + str(code % 3 + 1)


def action_name(view: View, code: int) -> str:
    if code >= CALL_BASE:
        return CODE_CALL[code]
    order = _order(view)
    card = order[code % 3]
    if view.dealt is None:
        return f"play_slot:{card}"
    text = C.card_text(card, view.config.family)
    return ("cover:" if code >= 3 else "play:") + text


def abstract_key(view: View, legal: list[str], version: str = VERSION) -> tuple[str, list[int]]:
    """The abstract key and the sorted abstract action codes of ``legal`` (abstraction ``version``)."""
    if version == "v2":
        return abstract_key_v2(view, legal)
    if version != "v1":
        raise ValueError(f"unknown abstraction {version!r}; known: {', '.join(VERSIONS)}")
    cfg = view.config
    st = strengths(cfg, view.vira)
    parts = ["m" if view.mano else "p",
             score_bucket(view.score[0], cfg) + score_bucket(view.score[1], cfg)]
    if view.dealt is None:
        parts.append("?" * len(view.remaining))
    else:
        parts.append("".join(tier(st[c]) for c in _order(view)))
    first_trick_envido = cfg.family == C.ARGENTINE and view.trick == 0 and view.dealt is not None
    parts.append(_envido_part(cfg, view) if first_trick_envido else "")
    trick = "".join(view.results)
    if view.opp_card is not None:
        opp = st[view.opp_card]
        own = [st[c] for c in view.remaining] if view.dealt is not None else []
        trick += f"o{tier(opp)}{sum(s > opp for s in own)}{sum(s == opp for s in own)}"
    parts.append(trick)
    parts.append(".".join(f"{t}{r}{ABBR[c]}" for t, r, c in view.calls))
    parts.append(view.shown)
    codes = sorted(action_code(view, a) for a in legal)
    parts.append(",".join(map(str, codes)))
    return "|".join(parts), codes


# ------------------------------------------------------------------------------------------------------------
# abstraction v2: the same hand-strength letters, coarser score buckets, the envido bucket only while the envido
# is open, and a compact betting state instead of the whole call sequence

ENVIDO_FAMILY = frozenset({"envido", "real_envido", "falta_envido", "flor", "contraflor", "contraflor_al_resto"})
ANSWERS = frozenset({"quiero", "no_quiero", "mazo"})


def score_bucket_v2(score: int, config: TrucoConfig) -> str:
    """:func:`score_bucket` with its ``1`` merged into ``0``, so only the end of the match is marked. Argentine:
    ``0`` more than 5 points to go, ``2`` 3..5 to go, ``z`` the last two points. Paulista: ``0`` for 0-7, ``2``
    for 8-9, ``3`` for 10, ``4`` for 11 (mão de onze / ferro)."""
    bucket = score_bucket(score, config)
    return "0" if bucket == "1" else bucket


def betting_v2(calls: list[tuple[int, int, str]]) -> tuple[str, bool]:
    """Compact betting state: ``L`` + ladder level (number of ladder calls) + relative seat of the last ladder
    call; while an envido/flor call waits for its answer, ``E`` + that chain's calls (relative seat +
    abbreviation). Also whether such an answer is pending."""
    level, last = 0, ""
    chain: list[str] = []
    pending = False
    for _, rel, name in calls:
        if name in ENVIDO_FAMILY:
            if not pending:
                chain = []
            chain.append(f"{rel}{ABBR[name]}")
            pending = True
        elif name in ANSWERS:
            pending = False
        else:  # a ladder call
            level += 1
            last = str(rel)
            pending = False
    text = f"L{level}{last}"
    if pending:
        text += "E" + "".join(chain)
    return text, pending


def abstract_key_v2(view: View, legal: list[str]) -> tuple[str, list[int]]:
    key, codes, _ = abstract_key_names_v2(view, legal)
    return key, codes


def abstract_key_names(view: View, legal: list[str], version: str = VERSION) -> tuple[str, list[int], list[str]]:
    """:func:`abstract_key` plus the engine action name of each code (the trainer's hot path: no reparsing)."""
    if version == "v2":
        return abstract_key_names_v2(view, legal)
    key, codes = abstract_key(view, legal, version)
    return key, codes, [action_name(view, c) for c in codes]


def abstract_key_names_v2(view: View, legal: list[str]) -> tuple[str, list[int], list[str]]:
    """Key fields, joined by ``|``: mano/pie; the v2 score buckets (own, opponent); the hand-strength letters
    of v1; the envido bucket (Argentine, first trick) only while an envido or flor call is legal or waits for
    its answer; the trick results (W/L/T) and, when the opponent has played to the current trick, ``o`` + how
    many own cards beat it and tie it; :func:`betting_v2`; the legal codes. Nothing of what was shown."""
    cfg = view.config
    st = strengths(cfg, view.vira)
    order = list(view.remaining) if view.dealt is None else sorted(view.remaining, key=lambda c: (-st[c], c))
    parts = ["m" if view.mano else "p",
             score_bucket_v2(view.score[0], cfg) + score_bucket_v2(view.score[1], cfg)]
    if view.dealt is None:
        parts.append("?" * len(view.remaining))
    else:
        parts.append("".join(tier(st[c]) for c in order))
    betting, pending_envido = betting_v2(view.calls)
    envido_live = pending_envido or any(a in ENVIDO_FAMILY for a in legal)
    first_trick_envido = cfg.family == C.ARGENTINE and view.trick == 0 and view.dealt is not None
    parts.append(_envido_part(cfg, view) if first_trick_envido and envido_live else "")
    trick = "".join(view.results)
    if view.opp_card is not None:
        opp = st[view.opp_card]
        own = [st[c] for c in view.remaining] if view.dealt is not None else []
        trick += f"o{sum(s > opp for s in own)}{sum(s == opp for s in own)}"
    parts.append(trick)
    parts.append(betting)
    family = cfg.family
    pairs = sorted((_code(family, order, a), a) for a in legal)
    codes = [c for c, _ in pairs]
    parts.append(",".join(map(str, codes)))
    return "|".join(parts), codes, [a for _, a in pairs]


_PARSED: dict[tuple[str, str], tuple[str, int]] = {}


def _code(family: str, order: list[int], name: str) -> int:
    """The abstract code of engine action ``name`` given the own unplayed cards ``order`` (strongest first)."""
    code = CALL_CODE.get(name)
    if code is not None:
        return code
    parsed = _PARSED.get((family, name))
    if parsed is None:
        kind, _, arg = name.partition(":")
        parsed = _PARSED[(family, name)] = (kind, int(arg) if kind == "play_slot" else C.parse_card(arg, family))
    kind, card = parsed
    return order.index(card) + (3 if kind == "cover" else 0)


# ------------------------------------------------------------------------------------------------------------
# views from the engine (training) and from an information-state string (play)

def view_from_state(state, seat: int, start_score: tuple[int, int], calls: list) -> View:
    """``calls``: (trick, seat, call) of the current hand, absolute seats (tracked by the trainer)."""
    cfg = state.config
    from truco_env.engine import MAO_DE_FERRO, TIE

    blind = state.special_hand == MAO_DE_FERRO and cfg.mao_de_ferro_blind
    dealt = state.dealt_cards(seat)
    remaining = state.remaining_cards(seat)
    team = seat % 2
    results = ["T" if r == TIE else ("W" if r == team else "L") for r in state.trick_results]
    opp_card = None
    for s, card, covered in state.current_trick:
        if s != seat and not covered:
            opp_card = card
    shown = _shown(cfg, [(s - seat) % 2 for s, _ in state.envido_announcements],
                   [v for _, v in state.envido_announcements],
                   [(s - seat) % 2 for s, _ in state.flor_announcements], [v for _, v in state.flor_announcements])
    return View(config=cfg, mano=state.mano == seat, score=(start_score[team], start_score[1 - team]),
                dealt=None if blind else tuple(dealt),
                remaining=[i for i, c in enumerate(dealt) if c in remaining] if blind else list(remaining),
                vira=state.vira, results=results, opp_card=opp_card, trick=state.trick_index,
                calls=[(t, (s - seat) % 2, c) for t, s, c in calls], shown=shown)


def _shown(cfg, env_rel, env_val, flor_rel, flor_val) -> str:
    out = []
    for rel, val in zip(env_rel, env_val):
        if rel == 1:
            out.append("e-" if val is None else "e" + envido_bucket(val))
    for rel, val in zip(flor_rel, flor_val):
        if rel == 1:
            out.append("f-" if val is None else "f" + flor_bucket(val))
    return "".join(out)


def view_from_info_string(info: str, config: TrucoConfig) -> View:
    """Parse :func:`truco_env.encoding.information_state_string` (1v1) into the view of its seat."""
    family = config.family
    head, _, rest = info.partition("|")
    hands, _, shown_text = rest.rpartition("|")
    seat = int(head[1:])
    last = hands.split(";")[-1]
    own_text, vira_text, score_text, tail = last.split("/", 3)
    dealer_text, _, moves_text = tail.partition(":")
    rel_dealer = int(dealer_text[1:])
    s0, s1 = (int(x) for x in score_text.split("-"))
    score = (s0, s1) if seat % 2 == 0 else (s1, s0)
    vira = None if vira_text == "None" else C.parse_card(vira_text, family)
    st = strengths(config, vira)
    blind = own_text == "?"
    dealt = None if blind else tuple(C.parse_card(c, family) for c in own_text.split(","))
    remaining = list(range(config.hand_size)) if blind else list(dealt)
    results: list[str] = []
    trick: list[tuple[int, int | None]] = []  # (rel, strength or None if covered)
    opp_card = None
    calls = []
    for move in (moves_text.split(" ") if moves_text else []):
        rel, name = int(move[0]), move[1:]
        kind, _, arg = name.partition(":")
        if kind in ("play", "cover", "play_slot") or name == "cover":
            if kind == "play_slot":
                slot_text, _, card_text = arg.partition("=")
                card = C.parse_card(card_text, family)
                if rel == 0:
                    remaining.remove(int(slot_text))
            elif name == "cover":
                card = None
            else:
                card = C.parse_card(arg, family)
                if rel == 0:
                    remaining.remove(card)
            face_up = kind != "cover" and name != "cover"
            trick.append((rel, st[card] if face_up and card is not None else None))
            opp_card = card if rel == 1 and face_up else opp_card
            if len(trick) == 2:
                (ra, sa), (rb, sb) = trick
                sa = -1 if sa is None else sa
                sb = -1 if sb is None else sb
                if sa == sb:
                    results.append("T")
                else:
                    winner = ra if sa > sb else rb
                    results.append("W" if winner == 0 else "L")
                trick = []
                opp_card = None
        else:
            calls.append((len(results), rel, name))
    env_rel, env_val, flor_rel, flor_val = [], [], [], []
    for item in (shown_text.split(",") if shown_text else []):
        kind, rel_text, value = item[0], item[1:].split("=")[0], item.split("=")[1]
        val = None if value == "-" else int(value)
        if kind == "e":
            env_rel.append(int(rel_text))
            env_val.append(val)
        else:
            flor_rel.append(int(rel_text))
            flor_val.append(val)
    return View(config=config, mano=rel_dealer == 1, score=score, dealt=dealt, remaining=remaining, vira=vira,
                results=results, opp_card=opp_card, trick=len(results), calls=calls,
                shown=_shown(config, env_rel, env_val, flor_rel, flor_val))


def key_from_info_string(info: str, config: TrucoConfig, legal: list[str],
                         version: str = VERSION) -> tuple[str, View]:
    view = view_from_info_string(info, config)
    key, _ = abstract_key(view, legal, version)
    return key, view


def _envido_part(cfg, view) -> str:
    """The envido bucket of the dealt hand, with the flor bucket when flor is played and held."""
    part = envido_bucket(C.envido_of(view.dealt))
    flor = C.flor_of(view.dealt) if cfg.flor else None
    return part if flor is None else part + "F" + flor_bucket(flor)
