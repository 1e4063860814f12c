"""The heuristic's readable statement: :class:`ReferenceHeuristic` decides exactly as ``HeuristicAgent``.

Why kept: :mod:`agents.heuristic` runs every decision in compiled code (:mod:`agents._heuristic_kernel`), which
is fast but dense. This module says the same decisions in plain Python, one method per idea (the module
docstring of :mod:`agents.heuristic` explains them), and stays their reference, as :mod:`truco_env.engine` is for
the compiled engine: ``tests/test_heuristic_kernel.py`` plays thousands of decisions through both and demands the
same actions and the same generator states, and ``benchmarks/heuristic.py`` measures the compiled agent against
it. It draws from a ``random.Random``; the compiled agent draws the same numbers from an
:class:`agents.mersenne.MersenneStream`. It is no agent spec: ``heuristic`` is the compiled one.
"""

from __future__ import annotations

import random
from itertools import combinations, permutations, product
from typing import Any

from truco_env import actions, senas
from truco_env.cards import (
    ENVIDO_FAMILIES,
    NUM_CARDS,
    NUM_SUITS,
    URUGUAYAN,
    card_text,
    envido_of,
    hand_points,
    suit_of,
    uruguayan_envido_of,
)
from truco_env.engine import ALL_TIED, LADDER_CALLS, LADDER_VALUES, envido_chain_points, hand_winner

from .base import Agent
from .heuristic import (
    BLUFF_BELOW,
    ENVIDO_SAMPLES,
    FALTA_FOLD,
    FALTA_MIN,
    FLOR_VALUES,
    FOLD_SHARE,
    RERAISE_SHARE,
    HeuristicParameters,
    match_equity_table,
)
from .view import OPP, OWN, TIE, View, decode

ENVIDO_CALLS = ("envido", "real_envido", "falta_envido")


_ENVIDO3: dict[tuple[int, int, int], int] = {}


def _envido(cards: list[int]) -> int:
    """``cards.envido_of`` through a table of every three-card hand (the hot path of envido sampling)."""
    if len(cards) != 3:
        return envido_of(cards)
    if not _ENVIDO3:
        for combo in combinations(range(NUM_CARDS), 3):
            _ENVIDO3[combo] = envido_of(combo)
    return _ENVIDO3[tuple(sorted(cards))]


_ENVIDO3_NESTED: list = []


def _envido3_nested() -> list:
    """``table[a][b][c]``: envido of the distinct cards ``a, b, c`` in any order (the values of ``_envido``)."""
    if not _ENVIDO3_NESTED:
        if not _ENVIDO3:
            _envido([0, 1, 2])
        table = [[[0] * NUM_CARDS for _ in range(NUM_CARDS)] for _ in range(NUM_CARDS)]
        for combo, value in _ENVIDO3.items():
            for a, b, c in permutations(combo):
                table[a][b][c] = value
        _ENVIDO3_NESTED.append(table)
    return _ENVIDO3_NESTED[0]


_URUGUAYAN_ENVIDO3: dict[int, list] = {}


def _envido_table(v: View) -> list:
    """``table[a][b][c]``: the envido of three distinct cards in the view's game (Uruguayan: under its muestra)."""
    if v.family != URUGUAYAN:
        return _envido3_nested()
    muestra = v.vira if v.vira is not None else 0
    if muestra not in _URUGUAYAN_ENVIDO3:
        table = [[[0] * NUM_CARDS for _ in range(NUM_CARDS)] for _ in range(NUM_CARDS)]
        for combo in combinations(range(NUM_CARDS), 3):
            value = uruguayan_envido_of(combo, muestra)
            for a, b, c in permutations(combo):
                table[a][b][c] = value
        _URUGUAYAN_ENVIDO3[muestra] = table
    return _URUGUAYAN_ENVIDO3[muestra]


def _points(v: View, cards: list[int]) -> tuple[int, int | None]:
    """The envido points and the flor value (None: none) of a whole hand in the view's game."""
    return hand_points(v.family, cards, v.vira, 0 if v.options.get("plain_flor_base=0") else 20)


def _envido_in(v: View, table: list, cards: list[int]) -> int:
    return table[cards[0]][cards[1]][cards[2]] if len(cards) == 3 else _points(v, cards)[0]


_WINNER_TABLES: dict[int, dict[tuple[int, ...], int | None]] = {}


def _winner_table(hand_size: int) -> dict[tuple[int, ...], int | None]:
    """``hand_winner(list(results), hand_size)`` for every tuple of results up to ``hand_size`` tricks."""
    if hand_size not in _WINNER_TABLES:
        _WINNER_TABLES[hand_size] = {prefix: hand_winner(list(prefix), hand_size)
                                     for length in range(hand_size + 1)
                                     for prefix in product((OWN, OPP, TIE), repeat=length)}
    return _WINNER_TABLES[hand_size]


class ReferenceHeuristic(HeuristicParameters, Agent):
    """The heuristic in plain Python (see the module docstrings here and of :mod:`agents.heuristic`)."""

    def __init__(self, bluff: float = 0.1, samples: int = 48, respect: float = 0.5, edge: float = 0.1,
                 signal: int = 1, seed: int | None = None):
        super().__init__(bluff, samples, respect, edge, signal)
        self._rng = random.Random(seed)
        self._bluff_memo: dict[tuple, bool] = {}
        self._opp_called: dict[tuple, bool] = {}  # per hand seen in this match: did the opponents call the ladder

    def seed(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def reset(self, seat: int | None = None) -> None:
        self._bluff_memo = {}
        self._opp_called = {}

    # ------------------------------------------------------------------------------------------------------
    def act(self, observation: dict[str, Any]) -> int:
        v = decode(observation)
        if not v.legal:
            raise ValueError("ReferenceHeuristic.act: the action mask has no legal action")
        key = self._hand_key(v)
        called = (v.pending_level > 0 and not v.pending_by_own) or any(not own for _, own in v.envido_calls)
        self._opp_called[key] = self._opp_called.get(key, False) or called
        name = self._decide(v)
        if name not in v.legal_names:  # defensive: never return an illegal action
            name = self._fallback(v)
        return actions.action_id(name, v.family)

    def _decide(self, v: View) -> str:
        legal = v.legal_names
        if len(legal) == 1:
            return legal[0]
        if self.signal and v.sena_table and "sena:eyebrows" in legal:  # señas: tell the partner, honestly, by the table
            return f"sena:{senas.honest_gesture(v.hand)}"
        if v.phase == "flor_declare":  # a flor pays; refusing a truco unsung (rules.md §8.10 row 18) forfeits it
            return "flor"
        if v.phase == "onze":
            return self._onze(v)
        if v.phase == "flor_contest":
            return self._flor_contest(v)
        if v.phase == "envido":
            return self._envido_answer(v)
        if v.phase == "truco":
            return self._truco_answer(v)
        return self._play(v)

    def _fallback(self, v: View) -> str:
        for name in ("quiero", "flor"):
            if name in v.legal_names:
                return name
        cards = [n for n in v.legal_names if n.startswith(("play", "cover"))]
        return cards[0] if cards else v.legal_names[0]

    # ------------------------------------------------------------------------------------------------------
    # match equity

    def _me(self, v: View, own: int, opp: int) -> float:
        if v.options.get("single_hand"):  # one hand decides: more points wins, equal draws
            return 1.0 if own > opp else 0.0 if own < opp else 0.5
        if own >= v.target:
            return 1.0
        if opp >= v.target:
            return 0.0
        return match_equity_table(v.target, v.family, self.edge)[own][opp]

    def _ev(self, v: View, p: float, win: int, lose: int | None = None) -> float:
        a, b = v.score
        return p * self._me(v, a + win, b) + (1.0 - p) * self._me(v, a, b + (win if lose is None else lose))

    # ------------------------------------------------------------------------------------------------------
    # sampling the unseen cards

    def _unknown_seats(self, v: View) -> list[tuple[int, int]]:
        """(relative seat, cards still in hand) for every other participant whose cards are hidden."""
        out = []
        partner_visible = bool(v.partner_cards)
        for rel in v.participants:
            if rel == 0 or (partner_visible and v.is_own(rel)):
                continue
            out.append((rel, max(0, v.hand_size - v.num_played(rel))))
        return out

    # ------------------------------------------------------------------------------------------------------
    # playing hands out

    def _turn_holder(self, v: View) -> int:
        t = min(v.trick_index, len(v.table) - 1)
        played = set(v.table[t]) | v.covered[t]
        for rel in v.current_trick_order():
            if rel not in played:
                return rel
        return v.trick_leader

    def _all_tied_value(self, v: View) -> float:
        if v.family in ENVIDO_FAMILIES or v.options.get("all_tricks_tied=mao_team"):
            return 1.0 if v.is_own(v.mano) else 0.0
        if v.options.get("all_tricks_tied=dealer_team"):
            return 1.0 if v.is_own(v.dealer) else 0.0
        return 0.5

    # ------------------------------------------------------------------------------------------------------
    # Monte Carlo look-ahead: sampled deals of the unseen cards, each played out by the rollout policy (the
    # rollouts of equal deals, same trick strengths per seat, are played once per evaluation)

    def _draw(self, v: View, n: int
              ) -> tuple[dict[int, list[int]], list[tuple[int, int, int]], list[list[int]]]:
        """``n`` deals of the unseen cards (the deck minus own cards, table, vira and visible partner cards) to
        the other participants whose cards are hidden, each deal redrawn up to 25 times until it agrees with the
        public information (announced envido points, declared flors; after 25 failures the last draw stands).
        Returns (the known hands: seat 0, a visible partner, and an empty hand for any other participant whose
        cards are neither seen nor sampled; the sampled seats as (relative seat, offset, count) into each draw;
        the accepted draw of each deal, one ``rng.sample(pool, need)``)."""
        seen = set(v.hand) | set(v.partner_cards)
        for trick in v.table:
            seen.update(trick.values())
        if v.vira is not None:
            seen.add(v.vira)
        pool = [c for c in v.deck() if c not in seen]
        seats = self._unknown_seats(v)
        need = sum(k for _, k in seats)
        if need > len(pool):  # a reduced research deck we cannot see: deal what there is
            seats = [(rel, min(k, len(pool) // max(1, len(seats)))) for rel, k in seats]
            need = sum(k for _, k in seats)
        fixed: dict[int, list[int]] = {0: list(v.hand)}
        if v.partner_cards:
            own_team = [rel for rel in v.participants if rel != 0 and v.is_own(rel)]
            if own_team:
                fixed[own_team[0]] = list(v.partner_cards)
        slots = []
        i = 0
        for rel, k in seats:
            slots.append((rel, i, k))
            i += k
        sampled = {rel for rel, _ in seats}
        for rel in v.participants:
            if rel not in fixed and rel not in sampled:
                fixed[rel] = []
        const_ok = True
        var_checks: list[tuple[str, Any, list[int], int, int]] = []  # (kind, target, played, offset, count)
        if v.family in ENVIDO_FAMILIES:
            specs: list[tuple[str, int, Any]] = []  # (kind, relative seat, target)
            for rel, value in v.envido_shown.items():
                if rel != 0 and value is not None and rel in v.participants:
                    specs.append(("envido", rel, value))
            if v.options.get("flor") and v.flor_status != "none":
                for rel in v.participants:
                    if rel != 0:
                        specs.append(("flor", rel, rel in v.flor_holders))
            if v.sena_table:  # a signal seen is read as honest: the seat holds what the table says
                specs.extend(("sena", rel, g) for rel, g in sorted(v.signals.items())
                             if rel != 0 and rel in v.participants)
            where = {rel: (off, k) for rel, off, k in slots}
            for kind, rel, target in specs:
                played = v.played_by(rel)
                if rel in fixed:
                    const_ok = const_ok and _agrees(v, kind, target, played + fixed[rel])
                else:
                    off, k = where[rel]
                    var_checks.append((kind, target, played, off, k))
        sample = self._rng.sample
        if const_ok and not var_checks:
            return fixed, slots, [sample(pool, need) for _ in range(n)]
        draws = []
        for _ in range(n):
            for _attempt in range(25):
                drawn = sample(pool, need)
                if const_ok and all(_agrees(v, kind, target, played + drawn[off:off + k])
                                    for kind, target, played, off, k in var_checks):
                    break
            draws.append(drawn)
        return fixed, slots, draws

    def _evaluate(self, v: View, candidates: list[int | None], n: int | None = None
                  ) -> tuple[list[list[float]], list[float]]:
        """Rollout outcomes ``[candidate][sample]`` (1 own team wins the hand, 0 loses) and, per sample, the
        opponents' hand strength (for conditioning on their calls). A candidate is a card the observer plays
        now, or None (everybody follows the rollout policy)."""
        n = n or self.samples
        winners = _winner_table(v.hand_size)
        strength = v.strength
        t = min(v.trick_index, len(v.table) - 1)
        trick_now = []
        for rel in v.current_trick_order():
            if rel in v.table[t]:
                trick_now.append((rel, strength[v.table[t][rel]]))
            elif rel in v.covered[t]:
                trick_now.append((rel, 0))
        seats = list(v.participants)
        results = tuple(v.trick_results)
        partner_tie = v.options.get("partner_tie_wins_trick", True)
        tie_team = v.mano % 2 if v.options.get("trick_tie_to_mano=True") else None
        lead_rule = ("first" if v.options.get("lead_after_tie=first_tied_card")
                     else "next" if v.options.get("lead_after_tie=next_after_leader") else "same")
        hand_size = v.hand_size
        all_tied = self._all_tied_value(v)
        fixed, slots, draws = self._draw(v, n)
        rot: dict[int, list[int]] = {}
        for i, rel in enumerate(seats):
            rot.setdefault(rel, seats[i:] + seats[:i])
        played_strength = {rel: sum(strength[c] for c in v.played_by(rel)) for rel in seats}
        fixed_hands = [(rel, sorted(strength[c] for c in cards)) for rel, cards in fixed.items()]
        fixed_opp = [played_strength[rel] + sum(h) for rel, h in fixed_hands if rel % 2 == 1]
        opp_slots = [(played_strength[rel], off, k) for rel, off, k in slots if rel % 2 == 1]
        firsts = [None if cand is None else strength[cand] for cand in candidates]
        leader = v.trick_leader
        opp_strength: list[float] = []
        rows: list[list[float]] = []
        memo: dict[tuple, list[float]] = {}
        whole = len(slots) == 1 and slots[0][1] == 0  # one sampled seat (1v1): its cards are the whole draw
        for drawn in draws:
            ss = [strength[c] for c in drawn]
            if whole:
                sampled: tuple = (tuple(sorted(ss)),)
            else:
                sampled = tuple(tuple(sorted(ss[off:off + k])) for _, off, k in slots)
            opp_strength.append(max(fixed_opp + [base + sum(ss[off:off + k]) for base, off, k in opp_slots],
                                    default=0))
            values = memo.get(sampled)
            if values is None:
                values = []
                for first in firsts:
                    hands = {rel: list(h) for rel, h in fixed_hands}
                    for (rel, _, _), h in zip(slots, sampled):
                        hands[rel] = list(h)
                    values.append(_rollout(hands, list(trick_now), leader, t, results, seats, rot,
                                                  partner_tie, lead_rule, hand_size, all_tied, winners, first,
                                                  tie_team))
                memo[sampled] = values
            rows.append(values)
        outcomes = [list(column) for column in zip(*rows)] if rows else [[] for _ in candidates]
        return outcomes, opp_strength

    def _envido_samples(self, v: View, n: int | None = None) -> list[tuple[bool, int]]:
        """Per sampled deal: (own team wins the envido, opponents' best envido)."""
        n = n or ENVIDO_SAMPLES
        order = v.participants
        i = order.index(v.mano) if v.mano in order else 0
        from_mano = order[i:] + order[:i]
        tie_to_mano_team = v.options.get("envido_tie=mano_team")
        fixed, slots, draws = self._draw(v, n)
        table = _envido_table(v)
        where = {rel: (off, k) for rel, off, k in slots}
        plan = []  # per seat from mano: (seat, constant envido or None, played, offset, count)
        for rel in from_mano:
            played = v.played_by(rel)
            if rel in where:
                off, k = where[rel]
                plan.append((rel, None, played, off, k))
            else:
                plan.append((rel, _envido_in(v, table, played + fixed.get(rel, [])), played, 0, 0))
        mano_parity = v.mano % 2
        memo: dict[tuple[int, ...], tuple[bool, int]] = {}
        out = []
        for drawn in draws:
            values = []
            for _, const, played, off, k in plan:
                if const is None:
                    cards = played + drawn[off:off + k]
                    const = _envido_in(v, table, cards)
                values.append(const)
            key = tuple(values)
            res = memo.get(key)
            if res is None:
                best_seat, best = None, -1
                opp_best = 0
                for (rel, _, _, _, _), value in zip(plan, values):
                    if rel % 2 == 1:
                        opp_best = max(opp_best, value)
                    if value > best:
                        best_seat, best = rel, value
                    elif (value == best and tie_to_mano_team and rel % 2 == mano_parity
                          and best_seat % 2 != rel % 2):
                        best_seat = rel
                res = memo[key] = (best_seat % 2 == 0, opp_best)
            out.append(res)
        return out

    @staticmethod
    def _p(outcomes: list[float]) -> float:
        return sum(outcomes) / len(outcomes) if outcomes else 0.5

    @staticmethod
    def _p_top(outcomes: list[float], opp_strength: list[float], share: float) -> float:
        """Win probability against the opponents' strongest ``share`` of sampled hands."""
        if not outcomes:
            return 0.5
        order = sorted(range(len(outcomes)), key=lambda i: (-opp_strength[i], i))
        keep = order[:max(1, round(share * len(order)))]
        return sum(outcomes[i] for i in keep) / len(keep)

    # ------------------------------------------------------------------------------------------------------
    # bluffing

    def _hand_key(self, v: View) -> tuple:
        dealt = tuple(sorted(v.hand + v.played_by(0)))
        return dealt, v.dealer, v.vira, tuple(v.participants)

    def _bluffing(self, v: View, p: float) -> bool:
        """Whether this hand is a bluff (decided once per hand, the first time the hand is weak)."""
        if self.bluff <= 0.0:
            return False
        key = self._hand_key(v)
        if key not in self._bluff_memo:
            if p >= BLUFF_BELOW:
                return False
            self._bluff_memo[key] = self._rng.random() < self.bluff
        return self._bluff_memo[key]

    # ------------------------------------------------------------------------------------------------------
    # the play phase: envido, truco, mazo, then a card

    def _play(self, v: View) -> str:
        legal = v.legal_names
        slots = [n for n in legal if n.startswith("play_slot:")]
        if slots:  # blind mão de ferro: nothing to know
            return slots[self._rng.randrange(len(slots))]
        if any(n in legal for n in ENVIDO_CALLS):
            call = self._envido_open(v)
            if call:
                return call
        cands = _card_candidates(v)
        outcomes, opp_strength = self._evaluate(v, cands)
        ps = [self._p(o) for o in outcomes]
        best = max(range(len(cands)), key=lambda i: (ps[i] - 1e-3 * i, -i))
        p = ps[best]
        ladder = LADDER_CALLS[v.family]
        call = next((n for n in legal if n in ladder), None)
        if call:
            top = self._p_top
            if self._should_call(v, p, top(outcomes[best], opp_strength, 1 - FOLD_SHARE),
                                 top(outcomes[best], opp_strength, RERAISE_SHARE)) or self._bluffing(v, p):
                return call
        if "mazo" in legal and self._should_fold(v, p):
            return "mazo"
        card = cands[best]
        return self._card_action(v, card, ps[best], cands)

    def _card_action(self, v: View, card: int, p: float, cands: list[int]) -> str:
        text = card_text(card, v.family)
        cover = f"cover:{text}"
        if cover in v.legal_names and _cannot_win_trick(v, card):  # face down when the rules allow it
            return cover
        return f"play:{text}"

    def _should_call(self, v: View, p: float, p_accept: float, p_reraise: float) -> bool:
        """Call or raise the ladder on our own turn: expected match equity against playing on."""
        ev_play = self._ev(v, p, v.hand_value)
        ev_call = self._ladder_ev(v, v.truco_level + 1, p_accept, p_reraise)
        return p >= 0.55 and ev_call > ev_play

    def _ladder_ev(self, v: View, k: int, p_accept: float, p_reraise: float) -> float:
        """Expected match equity of proposing ladder level ``k``: the opponents fold (we score the value of
        ``k - 1``), accept (played for ``k`` with our win probability ``p_accept``), or raise again (we then
        refuse or accept, whichever is better, with ``p_reraise``)."""
        values = LADDER_VALUES[v.family]
        a, b = v.score
        fold, reraise = FOLD_SHARE, (RERAISE_SHARE if k + 1 < len(values) else 0.0)
        ev = fold * self._me(v, a + values[k - 1], b) + (1 - fold - reraise) * self._ev(v, p_accept, values[k])
        if reraise:
            ev += reraise * max(self._me(v, a, b + values[k]), self._ev(v, p_reraise, values[k + 1]))
        return ev

    def _should_fold(self, v: View, p: float) -> bool:
        """Mazo only as the first to act in trick 1 with a hopeless hand and a poor envido (it denies the
        opponents their envido for the same one point), or when the hand is certainly lost."""
        if p <= 0.0:
            return True
        first_to_act = v.trick_index == 0 and not v.table[0] and not v.covered[0]
        poor_envido = v.family not in ENVIDO_FAMILIES or v.own_envido < 25
        return (first_to_act and v.truco_level == 0 and v.envido_status == "none" and poor_envido
                and p < 0.12)

    # ------------------------------------------------------------------------------------------------------
    # answering the ladder

    def _truco_answer(self, v: View) -> str:
        legal = v.legal_names
        if any(n in legal for n in ENVIDO_CALLS):  # envido va primero
            call = self._envido_open(v)
            if call:
                return call
        values = LADDER_VALUES[v.family]
        k = v.pending_level
        outcomes, opp_strength = self._evaluate(v, [None])
        p = self._p(outcomes[0])
        lam = self._respect_now()
        top = self._p_top
        p_c = (1 - lam) * p + lam * top(outcomes[0], opp_strength, 0.5)
        a, b = v.score
        options = {"no_quiero": self._me(v, a, b + values[k - 1]), "quiero": self._ev(v, p_c, values[k])}
        raise_name = next((n for n in legal if n in LADDER_CALLS[v.family]), None)
        if raise_name:
            if p_c >= 0.6:
                p_c2 = (1 - lam) * p + lam * top(outcomes[0], opp_strength, 0.5 * (1 - FOLD_SHARE))
                p_c3 = (1 - lam) * p + lam * top(outcomes[0], opp_strength, 0.5 * RERAISE_SHARE)
                options[raise_name] = self._ladder_ev(v, k + 1, p_c2, p_c3)
            elif k == 1 and self._bluffing(v, p):
                options[raise_name] = max(options.values()) + 1.0
        return max(options, key=lambda name: (options[name], name == "quiero"))

    def _respect_now(self) -> float:
        """``respect`` scaled down for opponents who call (ladder or envido) in most hands (their calls say little):
        full below a 30% calling rate, none above 70% (with a prior of 30% over five hands)."""
        hands = len(self._opp_called)
        rate = (sum(self._opp_called.values()) + 1.5) / (hands + 5)
        return self.respect * min(1.0, max(0.0, (0.7 - rate) / 0.4))

    # ------------------------------------------------------------------------------------------------------
    # mão de onze

    def _onze(self, v: View) -> str:
        outcomes, _ = self._evaluate(v, [None])
        p = self._p(outcomes[0])
        a, b = v.score
        play = self._ev(v, p, v.hand_value or 3)
        run = self._me(v, a, b + 1)
        return "quiero" if play >= run else "no_quiero"

    # ------------------------------------------------------------------------------------------------------
    # envido

    def _envido_values(self, v: View, chain: list[str]) -> tuple[int, int, bool]:
        """(points if accepted, besides a falta's own value; points to the last caller if refused; falta in
        chain), as the engine credits them under this table's options."""
        accepted, refused = envido_chain_points(chain, v.options.get("envido_refusal=previous_sum_plus_one", False),
                                                v.options.get("falta_adds_chain=True", False))
        return accepted, refused, "falta_envido" in chain

    def _falta(self, v: View, own_wins: bool) -> int:
        a, b = v.score
        leader = max(a, b)
        winner = a if own_wins else b
        whole = v.options.get("falta_envido=whole_match")
        malas = (v.options.get("falta_envido=malas_match") and v.options.get("malas_buenas")
                 and leader <= v.target / 2)
        if whole or malas:
            return v.target - winner
        to_buenas = v.options.get("falta_envido=winner_to_buenas") or v.options.get("falta_envido=leader_to_buenas")
        if to_buenas and v.options.get("malas_buenas") and leader < v.target // 2:  # rules.md §8.5
            return v.target // 2 - (winner if v.options.get("falta_envido=winner_to_buenas") else leader)
        return v.target - leader

    def _falta_ok(self, v: View, p: float) -> bool:
        """A falta envido (often the whole match) is called or accepted only as a clear favourite
        (``p >= FALTA_MIN``), unless the match is slipping away anyway or the falta is small."""
        a, b = v.score
        return (p >= FALTA_MIN or self._me(v, a, b) < 0.25 or v.options.get("single_hand")
                or max(self._falta(v, True), self._falta(v, False)) <= 4)

    def _envido_ev(self, v: View, p: float, chain: list[str]) -> float:
        """Expected match equity of an accepted envido chain won with probability ``p``."""
        accepted, _, falta = self._envido_values(v, chain)
        a, b = v.score
        if falta:
            return (p * self._me(v, a + accepted + self._falta(v, True), b)
                    + (1 - p) * self._me(v, a, b + accepted + self._falta(v, False)))
        return self._ev(v, p, accepted)

    @staticmethod
    def _envido_p(samples: list[tuple[bool, int]], share: float = 1.0) -> float:
        if not samples:
            return 0.5
        ranked = sorted(samples, key=lambda s: -s[1])
        keep = ranked[:max(1, round(share * len(ranked)))]
        return sum(1.0 for won, _ in keep if won) / len(keep)

    def _envido_open(self, v: View) -> str | None:
        """Open an envido (own turn, or envido va primero) when its equity beats staying quiet."""
        if v.family not in ENVIDO_FAMILIES:
            return None
        samples = self._envido_samples(v)
        p = self._envido_p(samples)
        a, b = v.score
        quiet = self._me(v, a, b)
        best_name, best_ev = None, quiet
        for name in ENVIDO_CALLS:
            if name not in v.legal_names:
                continue
            fold = FALTA_FOLD if name == "falta_envido" else FOLD_SHARE
            p_acc = self._envido_p(samples, 1 - fold)
            ev = fold * self._me(v, a + 1, b) + (1 - fold) * self._envido_ev(v, p_acc, [name])
            if name == "falta_envido" and not self._falta_ok(v, p_acc):
                continue
            if p >= 0.55 and ev > best_ev + 1e-4:
                best_name, best_ev = name, ev
        return best_name

    def _envido_answer(self, v: View) -> str:
        chain = [call for call, _ in v.envido_calls]
        last = chain[-1] if chain else "envido"
        share = {"envido": 0.55, "real_envido": 0.4, "falta_envido": 0.35}[last] ** (1 + 0.5 * (len(chain) - 1))
        samples = self._envido_samples(v)
        p = self._envido_p(samples)
        lam = self._respect_now()
        p_c = (1 - lam) * p + lam * self._envido_p(samples, share)
        _, refused, _ = self._envido_values(v, chain)
        a, b = v.score
        options = {"no_quiero": self._me(v, a, b + refused), "quiero": self._envido_ev(v, p_c, chain)}
        if "falta_envido" in chain and not self._falta_ok(v, p_c):
            del options["quiero"]
        if p_c >= 0.6:
            p_c2 = (1 - lam) * p + lam * self._envido_p(samples, share * 0.7)
            for name in ENVIDO_CALLS:
                if name in v.legal_names and (name != "falta_envido" or self._falta_ok(v, p_c2)):
                    new = chain + [name]
                    fold = 0.35
                    refuse_pts = self._envido_values(v, new)[1]
                    options[name] = (fold * self._me(v, a + refuse_pts, b)
                                     + (1 - fold) * self._envido_ev(v, p_c2, new))
        return max(options, key=lambda name: (options[name], name == "quiero"))

    # ------------------------------------------------------------------------------------------------------
    # flor contest

    def _flor_contest(self, v: View) -> str:
        mine = v.own_flor or 0
        p = self._flor_p(v, mine)
        a, b = v.score
        last = v.flor_calls[-1][0] if v.flor_calls else "flor"
        refused = {"flor": FLOR_VALUES["achico"], "contraflor": FLOR_VALUES["contraflor_no_quiero"]}.get(
            last, FLOR_VALUES["resto_after"] if any(c == "contraflor" for c, _ in v.flor_calls)
            else FLOR_VALUES["resto_direct"])
        if last == "contraflor_al_resto":
            win_pts = self._falta(v, True) + 2 * FLOR_VALUES["per_flor"]
            lose_pts = self._falta(v, False) + 2 * FLOR_VALUES["per_flor"]
        elif last == "contraflor":
            win_pts = lose_pts = FLOR_VALUES["contraflor_quiero"]
        else:
            win_pts = lose_pts = 2 * FLOR_VALUES["per_flor"]
        p_c = (1 - self.respect) * p + self.respect * max(0.0, p - 0.15)
        options = {"no_quiero": self._me(v, a, b + refused), "quiero": self._ev(v, p_c, win_pts, lose_pts)}
        if "contraflor_al_resto" in v.legal_names and p_c >= 0.8:
            options["contraflor_al_resto"] = self._ev(v, p_c - 0.1, self._falta(v, True) + 6,
                                                      self._falta(v, False) + 6)
        if "contraflor" in v.legal_names and p_c >= 0.65:
            options["contraflor"] = 0.3 * self._me(v, a + 4, b) + 0.7 * self._ev(v, p_c - 0.1, 6)
        return max(options, key=lambda name: (options[name], name == "quiero"))

    def _flor_p(self, v: View, mine: int) -> float:
        """Share of possible opposing flors (consistent with the cards they played) that ours beats."""
        opp = [rel for rel in v.participants if rel % 2 == 1 and rel in v.flor_holders] or \
              [rel for rel in v.participants if rel % 2 == 1][:1]
        if not opp:
            return 1.0
        rel = opp[0]
        played = v.played_by(rel)
        seen = set(v.hand) | set(v.partner_cards)
        for trick in v.table:
            seen.update(trick.values())
        pool = [c for c in v.deck() if c not in seen or c in played]
        order = v.participants
        i = order.index(v.mano) if v.mano in order else 0
        from_mano = order[i:] + order[:i]
        i_win_ties = from_mano.index(0) < from_mano.index(rel)
        wins = total = 0
        if v.family == URUGUAYAN:  # a flor need not be of one suit: every hand of the pool that is one
            groups = [[c for c in pool if c != v.vira]]
        else:
            groups = [[c for c in pool if suit_of(c) == suit] for suit in range(NUM_SUITS)]
        for cards in groups:
            for combo in combinations(cards, 3):
                if not all(c in combo for c in played):
                    continue
                value = _points(v, list(combo))[1]
                if value is None:
                    continue
                total += 1
                wins += value < mine or (value == mine and i_win_ties)
        return wins / total if total else 1.0


def _agrees(v: View, kind: str, target: Any, cards: list[int]) -> bool:
    """Whether a seat's whole hand ``cards`` agrees with what was public: its announced envido points, whether it
    declared a flor, or (señas) the signal it made, read by the table."""
    if kind == "envido":
        return _envido_in(v, _envido_table(v), cards) == target
    if kind == "flor":
        return (_points(v, cards)[1] is not None) == target
    return senas.true_to_table(target, cards)


def _card_candidates(v: View) -> list[int]:
    """The own cards worth comparing: one card (the lowest index) of each distinct trick strength, weakest
    first."""
    cands: list[int] = []
    for c in sorted({int(c) for c in v.hand}, key=lambda c: (v.strength[c], c)):
        if not cands or v.strength[cands[-1]] != v.strength[c]:
            cands.append(c)
    return cands


def _cannot_win_trick(v: View, card: int) -> bool:
    """Whether ``card`` can neither win nor tie the current trick (a card the agent plays face down where the
    rules allow it)."""
    on_table = [v.strength[c] for c in v.table[min(v.trick_index, 2)].values()]
    return bool(on_table) and v.strength[card] < max(on_table)


# ----------------------------------------------------------------------------------------------------------
# rollouts (module level for speed)

def _on_table(top: tuple, seat: int, s: int) -> tuple:
    """The trick's best card after ``seat`` plays strength ``s``: (best, its seat, how many hold it, whether the
    observer's team holds it, whether the opponents do)."""
    best, fh, count, has_own, has_opp = top
    if best is None or s > best:
        return s, seat, 1, seat % 2 == 0, seat % 2 != 0
    if s == best:
        return best, fh, count + 1, has_own or seat % 2 == 0, has_opp or seat % 2 != 0
    return top


def _pick(hand: list[int], t: int, best: int | None, team_alone: bool) -> int:
    """A rollout seat's card: its only one; leading, the middle card in trick 1 and the top one later; its lowest
    while its team alone holds the best card on the table; else its cheapest card that beats the best, a card that
    ties it, or its lowest."""
    if len(hand) == 1:
        return hand[0]
    if best is None:
        return hand[len(hand) // 2] if t == 0 else hand[-1]
    if team_alone:
        return hand[0]
    for s in hand:
        if s > best:
            return s
    return best if best in hand else hand[0]


def _rollout(hands: dict[int, list[int]], trick: list[tuple[int, int]], leader: int, t: int,
             results: tuple[int, ...], seats: list[int], rot: dict[int, list[int]], partner_tie: Any,
             lead_rule: str, hand_size: int, all_tied: float, winners: dict, first: int | None,
             tie_team: int | None = None) -> float:
    """Play the hand out; 1.0 if the observer's team wins it, 0.0 if it loses (``all_tied`` if all tricks tie).

    Every hand is a list of trick strengths sorted ascending (the policy picks a strength, never a particular
    card among equal ones); ``trick`` holds the (seat, strength) pairs already on the table, ``rot`` each seat's
    playing order when it leads, ``winners`` the ``_winner_table``. Seat 0 plays ``first`` (if not None) at its
    first turn; otherwise each seat plays its only card, or when leading its middle card in trick 1 and its top
    card afterwards, or its lowest card when its team alone holds the best card on the table, or else its
    cheapest card that beats the best, a card that ties it, or its lowest card. ``tie_team`` (0 own, 1 opponents):
    the mano's team under ``trick_tie_to_mano``, which takes a tie it holds a top card of (led on by the tie's first
    top card: the engine's exact leader is left aside)."""
    n = len(seats)
    while True:
        order = rot.get(leader, seats)
        top = (None, 0, 0, False, False)  # best strength, its seat, how many hold it, own team / opponents hold it
        for r, s in trick:
            top = _on_table(top, r, s)
        played = {r for r, _ in trick}
        for seat in order:
            if seat in played or not hands[seat]:
                continue
            hand = hands[seat]
            if first is not None and seat == 0 and first in hand:
                s, first = first, None
            else:
                best, _, _, has_own, has_opp = top
                s = _pick(hand, t, best, (has_own and not has_opp) if seat % 2 == 0 else (has_opp and not has_own))
            hand.remove(s)
            trick.append((seat, s))
            top = _on_table(top, seat, s)
        best, fh, count, has_own, has_opp = top
        if not trick:
            return all_tied
        if has_own != has_opp and (count == 1 or partner_tie):
            results = results + ((OWN if fh % 2 == 0 else OPP),)
            leader = fh
        elif tie_team is not None and (has_own if tie_team == 0 else has_opp):
            results = results + ((OWN if tie_team == 0 else OPP),)
            leader = fh
        else:
            results = results + (TIE,)
            if lead_rule == "first":
                leader = fh
            elif lead_rule == "next":
                leader = order[1 % n]
        winner = winners[results] if len(results) <= hand_size else ALL_TIED
        if winner is not None:
            if winner == ALL_TIED:
                return all_tied
            return 1.0 if winner == OWN else 0.0
        if len(results) >= hand_size:
            return all_tied
        t += 1
        trick = []
