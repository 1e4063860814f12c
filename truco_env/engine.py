"""The rules engine: one match of Argentine, Uruguayan or Paulista Truco as a state with legal actions and transitions.

This is the readable reference implementation of ``docs/rules.md``. The three families run through the same
mechanism (deal, tricks and ties, the bet ladder, crediting, match end); what differs (deck, card strength, vira
and manilhas, the Uruguayan muestra and piezas, ladder names and values, envido and flor, mão de onze/ferro) is
read from the config and the tables of :mod:`truco_env.cards`; Uruguayan Truco is the Argentine game with a
muestra (docs/rules.md). It imports neither numpy, PettingZoo nor torch, so every layer above can use it.

Usage::

    state = TrucoState.new(make_config("argentine"), seed=0)
    while not state.is_over:
        state.apply(random.choice(state.legal_actions()))

Why a mutable state with ``clone()``: tree walkers (CFR) copy a state before each branch, players mutate one.
Why each deal comes from ``Random(f"{seed}:{deal_number}")``: a clone then needs no RNG copy and any hand of a
seeded match can be regenerated on its own.

Decision phases (``phase``): the actor is the one seat that must act now:

* ``"onze"``: the team at 11 decides to play or run (Paulista mão de onze);
* ``"flor_declare"``: a flor holder must declare (Argentine, ``flor=True``);
* ``"flor_contest"``: both teams have flor; the answering team's holder responds;
* ``"envido"``: an envido chain is pending;
* ``"truco"``: a bet-ladder proposal is pending;
* ``"play"``: the turn holder plays a card, calls, or folds;
* ``"over"``: the match has ended (``actor`` is None).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

from . import actions, cards, senas
from .config import TrucoConfig
from .limits import clip

TIE = -1  # a tied trick (parda / cangou) in ``trick_results``
ALL_TIED = -2  # internal: every trick of the hand tied

PLAY, TRUCO, ENVIDO, FLOR_DECLARE, FLOR_CONTEST, ONZE, OVER = (
    "play", "truco", "envido", "flor_declare", "flor_contest", "onze", "over")

#: The bet ladder of each family: call names for levels 1.., and the hand value at levels 0.. (docs/rules.md §2.7).
LADDER_CALLS = {cards.ARGENTINE: ("truco", "retruco", "vale_cuatro"), cards.PAULISTA: ("truco", "seis", "nove", "doze"),
                cards.URUGUAYAN: ("truco", "retruco", "vale_cuatro")}
LADDER_VALUES = {cards.ARGENTINE: (1, 2, 3, 4), cards.PAULISTA: (1, 3, 6, 9, 12), cards.URUGUAYAN: (1, 2, 3, 4)}

ENVIDO_CALLS = ("envido", "real_envido", "falta_envido")
ENVIDO_VALUE = {"envido": 2, "real_envido": 3}
FLOR_CALLS = ("contraflor", "contraflor_al_resto")


def envido_chain_points(chain: list[str], refusal_plus_one: bool = False,
                        falta_adds_chain: bool = False) -> tuple[int, int]:
    """What an envido chain pays (docs/rules.md §3.4, §8.10 rows 4 and 5): (accepted, refused). ``accepted``
    leaves out the falta's own value, which depends on the score and on who wins (``_falta``): with a falta in
    the chain it is the calls before it when ``falta_adds_chain``, else 0. ``refused`` goes to the last caller:
    the calls before the refused one (1 for a lone call), or that sum plus one (``envido_refusal=
    "previous_sum_plus_one"``). One function, so that the heuristic prices a chain as the engine credits it."""
    before = sum(ENVIDO_VALUE.get(c, 0) for c in chain[:-1])
    refused = before + 1 if refusal_plus_one else (1 if len(chain) == 1 else before)
    if "falta_envido" in chain:
        return (before if falta_adds_chain else 0), refused
    return before + ENVIDO_VALUE[chain[-1]], refused


POINT_SOURCES = ("envido", "flor", "truco")  # where a hand's points come from; "truco": the hand's own value
_SOURCE_COLUMN = {name: 2 * i for i, name in enumerate(POINT_SOURCES)}  # team 0's slot in _hand_sources

MAO_DE_ONZE, MAO_DE_FERRO = "mao_de_onze", "mao_de_ferro"


def _outcome(results: tuple[int, ...]) -> int:
    """Winner of a fully played hand: more tricks won; with equal counts the first untied trick; else ALL_TIED."""
    wins = (results.count(0), results.count(1))
    if wins[0] != wins[1]:
        return 0 if wins[0] > wins[1] else 1
    return next((r for r in results if r != TIE), ALL_TIED)


def _decided_table(num_tricks: int) -> dict[tuple[int, ...], int | None]:
    """For every prefix of trick results, the hand winner if no remaining trick can change it (docs/rules.md §2.6:
    the hand ends as soon as its winner is determined), else None. For three tricks this is exactly the table
    of docs/rules.md §2.6; it also serves the research variants with one or two cards."""
    table: dict[tuple[int, ...], int | None] = {}
    for length in range(num_tricks + 1):
        for prefix in itertools.product((0, 1, TIE), repeat=length):
            outcomes = {_outcome(prefix + rest)
                        for rest in itertools.product((0, 1, TIE), repeat=num_tricks - length)}
            table[prefix] = outcomes.pop() if len(outcomes) == 1 and length > 0 else None
    return table


_DECIDED = {n: _decided_table(n) for n in (1, 2, 3)}


def hand_winner(results: list[int], num_tricks: int = 3) -> int | None:
    """The team that has won the hand from its trick results (docs/rules.md §2.6), ALL_TIED, or None if undecided."""
    return _DECIDED[num_tricks][tuple(results)]


def trick_winner(trick: list[tuple[int, int, bool]], strength: Sequence[int] | dict,
                 partner_tie_wins_trick: bool, mano_team: int | None = None) -> tuple[int | str, list[int]]:
    """Who takes a finished trick (docs/rules.md): its plays ``(seat, card, face down)`` under the card
    ``strength`` of the hand; the team of the one highest card face up, or of equal highest cards of one team
    when ``partner_tie_wins_trick``, else ``TIE`` (but with ``mano_team``, ``trick_tie_to_mano`` of §8.10 row 16,
    a tie among top cards one of which that team holds goes to it). Also the seats holding the highest card, in
    playing order (the winning team's first). The one statement of the rule: the engine plays by it and every
    display of a trick asks it (a face-down card never wins; a trick of face-down cards alone is a tie)."""
    faces = [(seat, strength[card]) for seat, card, covered in trick if not covered]
    if not faces:
        return TIE, []
    top = max(value for _, value in faces)
    tops = [seat for seat, value in faces if value == top]
    teams = {seat % 2 for seat in tops}
    if len(teams) == 1 and (len(tops) == 1 or partner_tie_wins_trick):
        return tops[0] % 2, tops
    if mano_team is not None and mano_team in teams:
        return mano_team, [s for s in tops if s % 2 == mano_team] + [s for s in tops if s % 2 != mano_team]
    return TIE, tops


def playing_order(dealer: int, num_players: int, pair: Sequence[int] | None = None) -> list[int]:
    """The seats of a hand in playing order from its mano, the seat after the dealer (docs/rules.md §2.3), or
    only the ``pair`` of a pica-pica duel. A hand record keeps ``dealer`` and ``pair``: whoever reads a recorded
    hand's order or its mano (the first) asks here, as the engine does."""
    mano = (dealer + 1) % num_players
    order = [(mano + k) % num_players for k in range(num_players)]
    return order if pair is None else [s for s in order if s in pair]


def showdown(values: dict[int, int], order: Sequence[int], mano_team_wins_ties: bool
             ) -> tuple[int, list[tuple[int, int | None]]]:
    """An envido or flor comparison in announcing order (docs/rules.md §3.6): the winning seat and the
    announcements. ``values`` per seat; ``order`` the hand's playing order (:func:`playing_order`).

    Players speak in that order from the mano; one whose team holds the best value so far waits; the others
    announce a value that beats it or say "son buenas" (None). Ties go to the player closer to the mano, or to the
    mano's team when ``mano_team_wins_ties`` (``envido_tie="mano_team"``)."""
    mano_team = order[0] % 2  # the mano's, who need not be among ``values`` (a flor showdown)
    order = [s for s in order if s in values]
    position = {s: i for i, s in enumerate(order)}

    def beats(s: int, best: int) -> bool:
        if values[s] != values[best]:
            return values[s] > values[best]
        return s % 2 == mano_team if mano_team_wins_ties else position[s] < position[best]

    best = order[0]
    announcements: list[tuple[int, int | None]] = [(best, values[best])]
    spoken = {best}
    cursor = 1
    while True:
        waiting = [s for s in order[cursor:] + order[:cursor] if s not in spoken and s % 2 != best % 2]
        if not waiting:
            return best, announcements
        s = waiting[0]
        spoken.add(s)
        if beats(s, best):
            best = s
            announcements.append((s, values[s]))
        else:
            announcements.append((s, None))
        cursor = position[s] + 1


def special_hand_at(config: TrucoConfig, score: Sequence[int]) -> str | None:
    """The special hand a hand that starts at ``score`` is (docs/rules.md §4.7, 4.8): ``MAO_DE_FERRO`` when both
    teams stand one point from the target, ``MAO_DE_ONZE`` when one does, else None (always None outside Paulista
    or with the option off). A hand record keeps ``score_before``: its reader asks here, as the engine does."""
    if config.family != cards.PAULISTA:
        return None
    eleven = config.target_score - 1
    at_eleven = [t for t in (0, 1) if score[t] == eleven]
    if config.mao_de_ferro and len(at_eleven) == 2:
        return MAO_DE_FERRO
    if config.mao_de_onze and len(at_eleven) == 1 and score[1 - at_eleven[0]] < eleven:
        return MAO_DE_ONZE
    return None


class TrucoState:
    """One match in progress. Create it with :meth:`new`; drive it with :meth:`legal_actions` and :meth:`apply`."""

    # ------------------------------------------------------------------------------------------------------
    # construction

    @classmethod
    def new(cls, config: TrucoConfig, seed: int | None = None, deal: dict | None = None,
            score: list[int] | tuple[int, int] | None = None) -> TrucoState:
        """A new match. ``deal`` may fix the first hand (``{"hands", "vira", "dealer"}``, any subset of keys
        with ``hands`` needing ``vira`` in Paulista and Uruguayan); ``score`` the starting score. Bad input raises
        ValueError."""
        seed = check_new_match(config, seed)
        self = cls.__new__(cls)
        self.config = config
        self.family = config.family
        self.num_players = config.num_players
        self.target = config.target_score
        self._ladder_calls = LADDER_CALLS[config.family]
        self._ladder_values = LADDER_VALUES[config.family]
        self.seed = seed
        self._score = _check_score(score, config.target_score)
        self.is_over = False
        self.winner = None
        self._first_to_target = None
        self._records: list[dict] = []
        self._tally = [[0] * len(actions.TALLY_CLASSES) for _ in range(2)]
        self._deal_number = 0
        self._pica_queue: list[tuple[int, int]] = []
        self._forced_next: dict | None = None
        forced = _parse_deal(deal, config)
        dealer = forced.get("dealer")
        if dealer is None:
            dealer = random.Random(f"{seed}:dealer").randrange(self.num_players)
        self.dealer = dealer
        self._deal(forced.get("hands"), forced.get("vira"), forced.get("catches"))
        return self

    # ------------------------------------------------------------------------------------------------------
    # public queries

    @property
    def score(self) -> tuple[int, int]:
        """The match score ``(team0, team1)``."""
        return tuple(self._score)

    @property
    def actor(self) -> int | None:
        return self._actor

    @property
    def phase(self) -> str:
        return self._phase

    @property
    def hand_index(self) -> int:
        """Index of the current hand in ``hand_records`` (pica-pica sub-hands count one each)."""
        return len(self._records) - 1

    @property
    def hand_value(self) -> int:
        """What the hand is worth to its winner right now (accepted ladder level or special-hand value)."""
        return self._base_value if self._level == 0 else self._ladder_values[self._level]

    @property
    def special_hand(self) -> str | None:
        """``"mao_de_onze"``, ``"mao_de_ferro"`` or None."""
        return self._special

    @property
    def hand_points(self) -> tuple[int, int]:
        return tuple(self._hand_points)

    def team_of(self, seat: int) -> int:
        return seat % 2

    # Read-only views for the observation encoders and user interfaces (public information unless noted).

    @property
    def participants(self) -> tuple[int, ...]:
        """Seats playing the current hand: everybody, or the pair of a pica-pica duel; less a player who folded
        alone (``mazo_scope="player"``)."""
        return self._seats

    @property
    def tricks(self) -> list[list[tuple[int, int, bool]]]:
        """Completed tricks of the hand, each a list of ``(seat, card index, covered)`` in play order."""
        return self._tricks

    @property
    def current_trick(self) -> list[tuple[int, int, bool]]:
        return self._trick

    @property
    def trick_index(self) -> int:
        return self._trick_index

    @property
    def trick_leader(self) -> int:
        return self._trick_leader

    @property
    def truco_level(self) -> int:
        """Highest accepted ladder level (0 = no bet accepted)."""
        return self._level

    @property
    def raise_holder(self) -> int | None:
        """Team allowed to make the next raise (None before any acceptance)."""
        return self._holder

    @property
    def pending_truco(self) -> tuple[int, int] | None:
        """``(proposed level, proposing team)`` of a pending ladder proposal, else None."""
        return (self._pending, self._proposer_team) if self._pending else None

    @property
    def flor_holders(self) -> list[int]:
        """Seats holding a flor (PRIVATE until ``flor_status`` leaves "none": then every flor is declared)."""
        return self._flor_holders

    @property
    def signals(self) -> dict[int, str]:
        """This hand's signals, seat -> gesture (PRIVATE: each seat sees only what :meth:`signals_seen` gives)."""
        return self._signals

    @property
    def catches(self) -> list[list[int]] | None:
        """Per seat, the opponents who would catch its signal this deal (None without ``senas``; PRIVATE)."""
        return self._catches

    def signals_seen(self, viewer: int) -> dict[int, str]:
        """The signals of this hand that ``viewer`` has seen: its own, its partners', the opponents' it caught."""
        return {seat: g for seat, g in self._signals.items() if senas.sees(self._catches, seat, viewer)}

    def dealt_cards(self, seat: int) -> tuple[int, ...]:
        """The three card indices dealt to ``seat`` in slot order (private to that seat)."""
        return self._dealt[seat]

    def remaining_cards(self, seat: int) -> list[int]:
        """Card indices ``seat`` still holds (private to that seat)."""
        return self._remaining[seat]

    def hand_of(self, seat: int) -> list[str]:
        """The unplayed cards of ``seat`` in dealt order, as text."""
        return [cards.card_text(c, self.family) for c in self._dealt[seat] if c in self._remaining[seat]]

    @property
    def match_tally(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Per team, how many of its decisions this match fell in each of ``actions.TALLY_CLASSES`` (public)."""
        return tuple(self._tally[0]), tuple(self._tally[1])

    @property
    def hand_records(self) -> list[dict]:
        """The hands of the match in the record form of docs/records.md; the last one may still be in progress."""
        return [self._export_record(r, False) for r in self._records]

    def hand_point_sources(self, index: int) -> dict[str, tuple[int, int]]:
        """Where hand ``index``'s points came from: per source in ``POINT_SOURCES``, the points of team 0 and 1
        (a table reads it to say how a hand's points split; the match record keeps only the totals)."""
        record = self._records[index]
        flat = record["sources"] if record["finished"] else self._hand_sources
        return {name: (flat[2 * i], flat[2 * i + 1]) for i, name in enumerate(POINT_SOURCES)}

    def match_record(self, include_legal: bool = False) -> dict:
        """The whole match as a JSON-serialisable dict (docs/records.md)."""
        return {
            "rules": self.config.to_dict(),
            "hands": [self._export_record(r, include_legal) for r in self._records],
            "winner": self.winner,
        }

    def legal_actions(self) -> list[str]:
        """Exactly the legal action names of the actor (docs/rules.md §5.1); empty once the match is over."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return list(self._legal)

    @property
    def next_hand_is_new_deal(self) -> bool:
        """False while pica-pica duels of the current deal remain (they reuse its cards)."""
        return not self._pica_queue

    def force_next_deal(self, deal: dict) -> None:
        """Fix the cards of the next deal (``{"hands", "vira"}``), e.g. to replay a record; ValueError if bad."""
        self._forced_next = parse_next_deal(deal, self.config)

    def clone(self) -> TrucoState:
        """An independent copy; finished hand records are shared (they never change)."""
        other = TrucoState.__new__(TrucoState)
        other.__dict__.update(self.__dict__)
        other._score = list(self._score)
        other._tally = [list(t) for t in self._tally]
        other._hand_points = list(self._hand_points)
        other._hand_sources = list(self._hand_sources)
        other._remaining = [list(r) for r in self._remaining]
        other._trick = list(self._trick)
        other._tricks = list(self._tricks)
        other.trick_results = list(self.trick_results)
        other._envido_chain = list(self._envido_chain)
        other._flor_chain = list(self._flor_chain)
        other._onze_deciders = list(self._onze_deciders)
        other._pica_queue = list(self._pica_queue)
        other._signals = dict(self._signals)
        other.envido_announcements = list(self.envido_announcements)
        other.envido_calls = list(self.envido_calls)
        other.flor_calls = list(self.flor_calls)
        other.flor_announcements = list(self.flor_announcements)
        other._records = list(self._records)
        if self._records and not self._records[-1]["finished"]:
            current = dict(self._records[-1])
            current["actions"] = list(current["actions"])
            current["legal"] = list(current["legal"])
            other._records[-1] = current
        return other

    # ------------------------------------------------------------------------------------------------------
    # applying actions

    def apply(self, action: str) -> None:
        """Apply the actor's ``action``; ValueError naming it and the legal ones (state unchanged) if illegal."""
        legal = self.legal_actions()
        if action not in legal:
            if self.is_over:
                raise ValueError(f"illegal action {clip(repr(action))}: the match is over, no action is legal")
            raise ValueError(f"illegal action {clip(repr(action))} for seat {self._actor} ({self._phase} phase); "
                             f"legal actions: {legal}")
        seat = self._actor
        record = self._records[-1]
        record["actions"].append([seat, action])
        record["legal"].append(legal)
        self._legal = None
        if not action.startswith("sena:"):  # a signal is no public decision: it stays out of the tally
            self._tally[self.team_of(seat)][actions.TALLY_CLASS_OF[actions.action_id(action, self.family)]] += 1
        handler = getattr(self, "_on_" + self._phase)
        handler(seat, action)

    # --- play phase (the turn holder) ---------------------------------------------------------------------

    def _on_play(self, seat: int, action: str) -> None:
        kind, _, arg = action.partition(":")
        if kind == "play":
            self._play_card(seat, cards.parse_card(arg, self.family), covered=False)
        elif kind == "play_slot":
            self._play_card(seat, self._dealt[seat][int(arg)], covered=False)
        elif kind == "cover":
            self._play_card(seat, cards.parse_card(arg, self.family), covered=True)
        elif action in ENVIDO_CALLS:
            self._open_envido(seat, action)
        elif action == "mazo":
            self._fold(seat)
        elif kind == "sena":  # the seat acts again: a signal does not pass the turn
            self._signals[seat] = arg
        else:  # a bet-ladder call
            self._propose(seat, self._level + 1)

    # --- a bet-ladder proposal is pending -----------------------------------------------------------------

    def _on_truco(self, seat: int, action: str) -> None:
        if action == "quiero":
            self._level = self._pending
            self._holder = self.team_of(seat)
            self._pending = 0
            self._resume()
        elif action == "no_quiero":
            proposer = self._proposer_team
            self._credit(proposer, self._ladder_values[self._pending - 1], "truco")
            self._end_hand()
        elif action in ENVIDO_CALLS:  # envido va primero: the truco stays pending
            self._open_envido(seat, action)
        else:  # a raise answers: it accepts the pending level and proposes the next
            self._level = self._pending
            self._holder = self.team_of(seat)
            self._propose(seat, self._pending + 1)

    def _propose(self, seat: int, level: int) -> None:
        if self._special is not None:  # only legal under mao_de_onze_truco="caller_loses_match"
            loser = self.team_of(seat)
            self._credit(1 - loser, max(0, self.target - self._score[1 - loser]), "truco")
            self._finish_match(1 - loser)
            return
        self._pending = level
        self._proposer_team = self.team_of(seat)
        self._truco_responder = self._responder_for(1 - self._proposer_team, after=seat)
        self._phase, self._actor = TRUCO, self._truco_responder
        if self._trick_index == 0:  # docs/rules.md §3.8 moment 3: the challenged team's flor comes first
            self._force_flor([s for s in self._undeclared_flor() if self.team_of(s) != self._proposer_team])

    # --- envido -------------------------------------------------------------------------------------------

    def _open_envido(self, seat: int, call: str) -> None:
        self._envido_opened = True
        self.envido_calls.append((seat, call))
        if self._force_flor(self._undeclared_flor()):  # docs/rules.md §3.8 moment 2: flor voids the envido
            self.envido_status = "void"
            return
        self.envido_status = "pending"
        self._envido_chain = [call]
        self._envido_call(seat)

    def _envido_call(self, seat: int) -> None:
        self._envido_caller = seat
        self._phase = ENVIDO
        self._actor = self._responder_for(1 - self.team_of(seat), after=seat)

    def _on_envido(self, seat: int, action: str) -> None:
        chain = self._envido_chain
        accepted, refused = envido_chain_points(chain, self.config.envido_refusal == "previous_sum_plus_one",
                                                self.config.falta_adds_chain)
        if action == "quiero":
            winner_seat, self.envido_announcements = self._showdown(
                {s: self._envido_points[s] for s in self._seats})
            winner = self.team_of(winner_seat)
            points = accepted + (self._falta(winner) if "falta_envido" in chain else 0)
            self._close_envido()
            self.envido_status = "accepted"
            self._credit(winner, points, "envido")
        elif action == "no_quiero":
            points = refused
            self._close_envido()
            self.envido_status = "refused"
            self._credit(self.team_of(self._envido_caller), points, "envido")
        else:
            chain.append(action)
            self.envido_calls.append((seat, action))
            self._envido_call(seat)
            return
        if not self._check_match_end():
            self._resume()

    def _close_envido(self) -> None:
        self._envido_chain = []
        self._envido_done = True

    def _envido_raises(self) -> list[str]:
        chain = self._envido_chain
        raises = []
        if chain[-1] == "envido" and chain.count("envido") < 2:
            raises.append("envido")
        if "real_envido" not in chain and "falta_envido" not in chain:
            raises.append("real_envido")
        if "falta_envido" not in chain:
            raises.append("falta_envido")
        return raises

    def _falta(self, winner: int) -> int:
        """Falta envido value (docs/rules.md §3.5), also used by contraflor al resto."""
        cfg = self.config
        leader = max(self._score)
        mode = cfg.falta_envido
        if mode == "whole_match" or (mode == "malas_match" and cfg.malas_buenas and leader <= self.target / 2):
            return self.target - self._score[winner]
        if mode in ("winner_to_buenas", "leader_to_buenas") and cfg.malas_buenas and leader < self.target // 2:
            return self.target // 2 - (self._score[winner] if mode == "winner_to_buenas" else leader)  # §8.5
        return self.target - leader

    def _can_open_envido(self, seat: int) -> bool:
        """docs/rules.md §3.3: trick 1, once per hand, before an accepted truco, by the turn holder before his card
        or (envido va primero) by the responder to a pending first-trick ``truco``."""
        cfg = self.config
        if (self.family not in cards.ENVIDO_FAMILIES or self._envido_opened or self._envido_done or self._flor_declared
                or self._trick_index != 0):
            return False
        if self._level > 0 and not cfg.envido_after_truco_accepted:
            return False
        if cfg.envido_openers == "pie_only" and seat != self._team_pie(self.team_of(seat)):
            return False
        if self._phase == PLAY:
            return not self._has_played(seat)
        if self._phase == TRUCO:
            return (cfg.envido_primero and self._pending == 1
                    and (cfg.envido_primero_after_played or not self._has_played(seat)))
        return False

    # --- flor ---------------------------------------------------------------------------------------------

    def _undeclared_flor(self) -> list[int]:
        """Seats (from the mano) holding a flor not yet declared; empty when flor is off or already declared."""
        if self._flor_declared:
            return []
        return self._flor_holders

    def _force_flor(self, holders: list[int]) -> bool:
        """Make the first of ``holders`` (ordered from the mano) the actor, who must declare his flor."""
        if not holders:
            return False
        self._phase, self._actor = FLOR_DECLARE, holders[0]
        return True

    def _on_flor_declare(self, seat: int, action: str) -> None:
        if action == "no_quiero":  # flor_before_answer="refuse_unsung": the truco refused, the flor never scored
            self._on_truco(seat, action)
            return
        self._flor_declared = True
        self._envido_done = True
        self._envido_chain = []
        self.flor_calls.append((seat, "flor"))
        teams = {self.team_of(s) for s in self._flor_holders}
        if len(teams) == 1:
            self.flor_status = "uncontested"
            self._credit(self.team_of(seat), self._uncontested_points(len(self._flor_holders)), "flor")
            if not self._check_match_end():
                self._resume()
            return
        self._flor_first_team = self.team_of(seat)
        self._flor_chain = ["flor"]
        self.flor_status = "pending"
        self._flor_call(seat)

    def _flor_call(self, seat: int) -> None:
        self._flor_caller = seat
        other = 1 - self.team_of(seat)
        order = self._order_after(seat)
        self._phase = FLOR_CONTEST
        self._actor = next(s for s in order if s in self._flor_holders and self.team_of(s) == other)

    def _on_flor_contest(self, seat: int, action: str) -> None:
        if action == "quiero":
            winner_seat, self.flor_announcements = self._showdown(
                {s: self._flor_points[s] for s in self._flor_holders})
            winner = self.team_of(winner_seat)
            self.flor_status = "accepted"
            self._credit(winner, self._contest_points(action, winner), "flor")
        elif action == "no_quiero":
            self.flor_status = "refused"
            caller_team = self.team_of(self._flor_caller)
            self._credit(caller_team, self._contest_points(action, caller_team), "flor")
        else:
            self._flor_chain.append(action)
            self.flor_calls.append((seat, action))
            self._flor_call(seat)
            return
        self._flor_chain = []
        if not self._check_match_end():
            self._resume()

    def _contest_points(self, answer: str, team: int) -> int:
        """What a flor contest pays ``team`` when ``answer`` ends it (docs/rules.md §3.8): the ``flor_values``
        table, or with ``flor_scoring="per_flor_refusals"`` pytruco's reading (§8.10 row 8): 3 a flor shown, 4 for
        an accepted contra flor, the falta alone for al resto, and a refusal 3 for every flor at the table, plus 1
        after a contra flor or al resto."""
        chain, count = self._flor_chain, len(self._flor_holders)
        if self.config.flor_scoring == "per_flor_refusals":
            if answer == "no_quiero":
                return 3 * count + (chain[-1] != "flor")
            if "contraflor_al_resto" in chain:
                return self._falta(team)
            return 4 if "contraflor" in chain else 3 * count
        values = self.config.flor_values
        if answer == "quiero":
            if "contraflor_al_resto" in chain:
                return self._falta(team) + values["resto_bonus_per_flor"] * count
            return values["contraflor_quiero"] if "contraflor" in chain else values["contested_per_flor"] * count
        last = chain[-1]
        if last == "flor":
            return values["achico"]
        if last == "contraflor":
            return values["contraflor_no_quiero"]
        return values["resto_no_quiero_after_contraflor" if "contraflor" in chain else "resto_no_quiero_direct"]

    def _uncontested_points(self, flors: int) -> int:
        """What ``flors`` flors of one team pay when no other team holds one (3 each in pytruco's scoring)."""
        per_flor = 3 if self.config.flor_scoring == "per_flor_refusals" else self.config.flor_values["uncontested_per_flor"]
        return per_flor * flors

    # --- mão de onze decision -----------------------------------------------------------------------------

    def _on_onze(self, seat: int, action: str) -> None:
        self._onze_deciders.pop(0)
        if action == "quiero":
            self._onze_deciders = []
            self._resume()
        elif self._onze_deciders:  # "any_accepts": the next member decides
            self._actor = self._onze_deciders[0]
        else:
            self._credit(1 - self.team_of(seat), 1, "truco")
            self._end_hand()

    # --- tricks -------------------------------------------------------------------------------------------

    def _has_played(self, seat: int) -> bool:
        """Has ``seat`` played its card of the current first trick (or is trick 1 over)?"""
        return self._trick_index > 0 or any(p[0] == seat for p in self._trick)

    def _play_card(self, seat: int, card: int, covered: bool) -> None:
        self._remaining[seat].remove(card)
        self._trick.append((seat, card, covered))
        if len(self._trick) < len(self._seats):
            self.turn = self._next_seat(seat)
            self._resume()
            return
        self._finish_trick()

    def _finish_trick(self) -> None:
        trick = self._trick
        result, tops = trick_winner(trick, self._strength, self.config.partner_tie_wins_trick,
                                    self.team_of(self.mano) if self.config.trick_tie_to_mano else None)
        leader = self._trick_leader
        if result != TIE:
            next_leader = tops[0]
        else:
            rule = self.config.lead_after_tie
            if rule == "same_leader":
                next_leader = leader
            elif rule == "first_tied_card":
                next_leader = tops[0]
            else:
                next_leader = self._next_seat(leader)
        self._tricks.append(trick)
        self._trick = []
        self.trick_results.append(result)
        winner = hand_winner(self.trick_results, self.config.hand_size)
        if winner is None:
            self._trick_index += 1
            self._trick_leader = self.turn = next_leader
            self._resume()
        elif winner == ALL_TIED:
            self._all_tricks_tied()
        else:
            self._credit(winner, self.hand_value, "truco")
            self._end_hand()

    def _all_tricks_tied(self) -> None:
        if self.family in cards.ENVIDO_FAMILIES:
            winner = self.team_of(self.mano)
        else:
            rule = self.config.all_tricks_tied
            winner = None
            if rule == "dealer_team":
                winner = self.team_of(self.dealer)
            elif rule == "mao_team":
                winner = self.team_of(self.mano)
        if winner is not None:
            self._credit(winner, self.hand_value, "truco")
        self._end_hand()

    def _fold(self, seat: int) -> None:
        """``mazo``: the folding team concedes the hand (docs/rules.md §3.10), opponents' undeclared flor scores
        (never with ``fold_against_unsung_flor="flor_lost"``, §8.10 row 10). With ``mazo_scope="player"`` (row 12)
        a player whose partners are still in the hand leaves it alone."""
        team = self.team_of(seat)
        if self.config.mazo_scope == "player" and any(s != seat and self.team_of(s) == team for s in self._seats):
            self._leave_hand(seat)
            return
        bonus = (self.config.mazo_first_trick_bonus and self._trick_index == 0 and not self._envido_opened
                 and not self._flor_declared and self._level == 0)
        value = 2 if bonus else self.hand_value
        their_flor = [s for s in self._undeclared_flor() if self.team_of(s) != team]
        if their_flor and self.config.fold_against_unsung_flor == "score_flor":
            self._flor_declared = True
            self.flor_status = "uncontested"
            self._credit(1 - team, self._uncontested_points(len(their_flor)), "flor")
        self._credit(1 - team, value, "truco")
        self._end_hand()

    def _leave_hand(self, seat: int) -> None:
        """``mazo_scope="player"``: ``seat`` (on its turn, so not yet in this trick, and its flor declared at its
        first turn) folds alone: out of the hand's players, its cards unplayed; the trick goes on without it, or
        ends if it was the last card awaited."""
        self._seats = tuple(s for s in self._seats if s != seat)
        if not self._trick and self._trick_leader == seat:
            self._trick_leader = self._next_seat(seat)
        if len(self._trick) < len(self._seats):
            self.turn = self._next_seat(seat)
            self._resume()
        else:
            self._finish_trick()

    # ------------------------------------------------------------------------------------------------------
    # legal actions

    def _compute_legal(self) -> list[str]:
        phase = self._phase
        if phase == OVER:
            return []
        seat = self._actor
        if phase == PLAY:
            return self._legal_play(seat)
        if phase == FLOR_DECLARE:
            return ["flor", "no_quiero"] if self._may_refuse_unsung(seat) else ["flor"]
        if phase == ONZE:
            return ["quiero", "no_quiero"]
        legal = ["quiero", "no_quiero"]
        if phase == TRUCO:
            if self._pending < len(self._ladder_calls) and self._may_raise(self.team_of(seat), self._pending):
                legal.append(self._ladder_calls[self._pending])
            if self._can_open_envido(seat):
                legal.extend(ENVIDO_CALLS)
        elif phase == ENVIDO:
            legal.extend(self._envido_raises())
        elif phase == FLOR_CONTEST and (self._flor_chain == ["flor"] or self.config.flor_raise_by == "either_team"):
            # flor_raise_by="unsung_holder" (§8.10 row 9): only the team yet to sing raises, i.e. the first answer
            if self._flor_chain == ["flor"]:
                legal.append("contraflor")
            if "contraflor_al_resto" not in self._flor_chain:
                legal.append("contraflor_al_resto")
        return legal

    def _legal_play(self, seat: int) -> list[str]:
        cfg = self.config
        family = self.family
        if self._special == MAO_DE_FERRO and cfg.mao_de_ferro_blind:
            legal = [f"play_slot:{i}" for i, c in enumerate(self._dealt[seat]) if c in self._remaining[seat]]
        else:
            legal = ["play:" + cards.card_text(c, family) for c in self._remaining[seat]]
            if (cfg.covered_card and family == cards.PAULISTA and self._trick and self.trick_results
                    and self.trick_results[-1] != TIE):
                legal.extend("cover:" + cards.card_text(c, family) for c in self._remaining[seat])
        team = self.team_of(seat)
        if self._level < len(self._ladder_calls) and (self._level == 0 or self._holder == team):
            special_ok = self._special is None or cfg.mao_de_onze_truco == "caller_loses_match"
            if special_ok and self._may_raise(team, None):
                legal.append(self._ladder_calls[self._level])
        if self._can_open_envido(seat):
            legal.extend(ENVIDO_CALLS)
        if family != cards.PAULISTA or (cfg.paulista_mazo and self._special != MAO_DE_FERRO):
            legal.append("mazo")
        if self._may_signal(seat):
            legal.extend(actions.SENA_ACTIONS)
        return legal

    def _may_refuse_unsung(self, seat: int) -> bool:
        """docs/rules.md §8.10 row 18, ``flor_before_answer="refuse_unsung"``: a flor holder whose team a truco
        challenges may refuse it without singing (the flor is then never scored)."""
        return (self.config.flor_before_answer == "refuse_unsung" and self._pending > 0
                and self.team_of(seat) != self._proposer_team)

    def _may_signal(self, seat: int) -> bool:
        """docs/rules.md §3.13: one signal a hand, before the seat's first card, in a hand with partners in it
        (not a pica-pica duel)."""
        return (self.config.senas and len(self._seats) > 2 and seat not in self._signals
                and not self._has_played(seat))

    def _may_raise(self, team: int, pending: int | None) -> bool:
        """``forbid_useless_raise`` (Paulista): no raise when accepting (or the current value) already wins."""
        if not self.config.forbid_useless_raise or self.family != cards.PAULISTA:
            return True
        value = self.hand_value if pending is None else self._ladder_values[pending]
        return self._score[team] + value < self.target

    # ------------------------------------------------------------------------------------------------------
    # seats and order

    def _next_seat(self, seat: int) -> int:
        seats = self._seats
        for s in seats:
            if s > seat:
                return s
        return seats[0]

    def _order_after(self, seat: int) -> list[int]:
        """Participants in seat order starting after ``seat`` (``seat`` itself last)."""
        seats = self._seats
        return [s for s in seats if s > seat] + [s for s in seats if s <= seat]

    def _team_pie(self, team: int) -> int:
        """A team's last player in the hand's order from the mano."""
        return [s for s in self._hand_order if self.team_of(s) == team and s in self._seats][-1]

    def _responder_for(self, team: int, after: int) -> int:
        if self.config.responder == "team_pie":
            return self._team_pie(team)
        return next(s for s in self._order_after(after) if self.team_of(s) == team)

    def _showdown(self, values: dict[int, int]) -> tuple[int, list[tuple[int, int | None]]]:
        """Envido/flor comparison of this hand (:func:`showdown`): the winning seat and the announcements."""
        return showdown(values, self._hand_order, self.config.envido_tie == "mano_team")

    # ------------------------------------------------------------------------------------------------------
    # flow: resuming, crediting, hands and deals

    def _resume(self) -> None:
        """After a call chain or a card: the pending truco's responder, else the turn holder (whose flor, at his
        first turn, must be declared first)."""
        if self._pending:
            self._phase, self._actor = TRUCO, self._truco_responder
            return
        self._phase, self._actor = PLAY, self.turn
        if self._trick_index == 0 and self.turn in self._undeclared_flor() and not self._has_played(self.turn):
            self._phase = FLOR_DECLARE

    def _credit(self, team: int, points: int, source: str) -> None:
        """Points to ``team`` for the hand's ``source`` (one of ``POINT_SOURCES``)."""
        self._score[team] += points
        self._hand_points[team] += points
        self._hand_sources[_SOURCE_COLUMN[source] + team] += points
        if self._first_to_target is None and self._score[team] >= self.target:
            self._first_to_target = team

    def _check_match_end(self) -> bool:
        """Ends the match now if a team has reached the target and ``end_match_immediately`` is on."""
        if self._first_to_target is not None and self.config.end_match_immediately:
            self._finish_match(self._first_to_target)
            return True
        return False

    def _finish_match(self, winner: int | None) -> None:
        self.winner = winner
        self.is_over = True
        self._phase, self._actor = OVER, None
        self._legal = None
        self._close_record()

    def _close_record(self) -> None:
        record = self._records[-1]
        record["points"] = list(self._hand_points)
        record["score_after"] = list(self._score)
        record["sources"] = list(self._hand_sources)
        record["finished"] = True

    def _end_hand(self) -> None:
        if self._first_to_target is not None:
            self._finish_match(self._first_to_target)
            return
        if self.config.single_hand:
            points = self._hand_points
            self._finish_match(None if points[0] == points[1] else int(points[1] > points[0]))
            return
        self._close_record()
        if self._pica_queue:
            self._start_hand(self._pica_queue.pop(0))
            return
        step = 1 if self.config.deal_rotation == "with_play" else -1
        self.dealer = (self.dealer + step) % self.num_players
        forced, self._forced_next = self._forced_next or {}, None
        self._deal(forced.get("hands"), forced.get("vira"), forced.get("catches"))

    def _deal(self, hands: list[list[int]] | None, vira: int | None, catches: list[list[int]] | None = None) -> None:
        """Deal a new hand (docs/rules.md §2.3): card k of the shuffled deck to seat (mano + k) mod n, then vira;
        with señas, who would catch each seat's signal (:func:`truco_env.senas.draw_catches`)."""
        n = self.num_players
        mano = playing_order(self.dealer, n)[0]
        cfg = self.config
        if hands is None:
            deck = list(cards.deck(self.family, cfg.deck, cfg.deck_ranks))
            random.Random(f"{self.seed}:{self._deal_number}").shuffle(deck)
            hands = [[] for _ in range(n)]
            dealt = cfg.hand_size * n
            for k in range(dealt):
                hands[(mano + k) % n].append(deck[k])
            vira = deck[dealt] if self.family in cards.TURNED_CARD_FAMILIES else None
        if cfg.senas and catches is None:
            catches = senas.draw_catches(self.seed, self._deal_number, n, cfg.sena_catch)
        self._catches = catches if cfg.senas else None
        self._deal_number += 1
        self._dealt = [tuple(h) for h in hands]
        self.vira = vira
        self._strength = cards.strength_table(self.family, vira, cfg.deck, cfg.deck_ranks)
        points = [cards.hand_points(self.family, hand, vira, cfg.plain_flor_base) for hand in self._dealt]
        self._envido_points = [envido for envido, _ in points]  # never mutated: clones share them
        self._flor_points = [flor for _, flor in points]
        if self._is_pica_pica_deal():
            pairs = [((mano + i) % n, (mano + i + 3) % n) for i in range(3)]
            self._pica_queue = pairs[1:]
            self._start_hand(pairs[0])
        else:
            self._start_hand(None)

    def _is_pica_pica_deal(self) -> bool:
        """3v3 pica-pica (docs/rules.md §3.14, §8.8): every second deal, while both teams are below
        ``config.pica_pica_stop()`` (the target less 5; in Uruguayan Truco the end of the malas by default)."""
        return (self.config.pica_pica and self._deal_number % 2 == 0
                and max(self._score) < self.config.pica_pica_stop())

    def _start_hand(self, pair: tuple[int, int] | None) -> None:
        """Reset the per-hand state for the dealt cards; ``pair`` restricts it to a pica-pica duel."""
        n = self.num_players
        self._seats = tuple(range(n)) if pair is None else tuple(sorted(pair))
        self._hand_order = playing_order(self.dealer, n, pair)
        self.mano = self._hand_order[0]
        self._remaining = [list(h) if s in self._seats else [] for s, h in enumerate(self._dealt)]
        self.turn = self._trick_leader = self.mano
        self._trick: list[tuple[int, int, bool]] = []
        self._tricks: list[list[tuple[int, int, bool]]] = []
        self._trick_index = 0
        self.trick_results: list[int] = []
        self._level, self._holder, self._pending = 0, None, 0
        self._proposer_team = self._truco_responder = None
        self._envido_chain: list[str] = []
        self._envido_opened = self._envido_done = False
        self._envido_caller = None
        self.envido_announcements: list[tuple[int, int | None]] = []
        self.flor_announcements: list[tuple[int, int | None]] = []
        # public call logs of the hand: [(seat, call)], and "none" | "pending" | "accepted" | "refused" | ...
        self.envido_calls: list[tuple[int, str]] = []
        self.envido_status = "none"  # ... | "void" (cancelled by a flor)
        self.flor_calls: list[tuple[int, str]] = []
        self.flor_status = "none"  # ... | "uncontested"
        self._flor_holders = ([s for s in self._hand_order if self._flor_points[s] is not None]
                              if self.config.flor else [])
        self._flor_declared = False
        self._flor_chain: list[str] = []
        self._flor_caller = self._flor_first_team = None
        self._signals: dict[int, str] = {}
        self._hand_points = [0, 0]
        self._hand_sources = [0] * (2 * len(POINT_SOURCES))
        self._legal = None
        self._special, self._base_value, self._onze_deciders = self._special_hand()
        record = {
            "dealer": self.dealer,
            "deal": {"hands": [[cards.card_text(c, self.family) for c in h] for h in self._dealt],
                     "vira": None if self.vira is None else cards.card_text(self.vira, self.family)},
            "score_before": list(self._score), "actions": [], "legal": [],
            "points": [0, 0], "score_after": list(self._score), "finished": False,
        }
        if self._catches is not None:
            record["deal"]["catches"] = [list(row) for row in self._catches]
        if pair is not None:
            record["pair"] = list(self._seats)
        self._records.append(record)
        if self._onze_deciders:
            self._phase, self._actor = ONZE, self._onze_deciders[0]
        else:
            self._resume()

    def _special_hand(self) -> tuple[str | None, int, list[int]]:
        """Paulista mão de onze / mão de ferro at the start of a hand (:func:`special_hand_at`):
        (kind, base hand value, seats that decide play or run)."""
        kind = special_hand_at(self.config, self._score)
        if kind != MAO_DE_ONZE:
            return kind, 1, []
        team = self._score.index(self.target - 1)
        members = [s for s in self._hand_order if self.team_of(s) == team]
        deciders = members if self.config.mao_de_onze_decider == "any_accepts" else members[:1]
        return MAO_DE_ONZE, 3, deciders

    def _export_record(self, record: dict, include_legal: bool) -> dict:
        out = {
            "dealer": record["dealer"],
            "deal": {"hands": [list(h) for h in record["deal"]["hands"]], "vira": record["deal"]["vira"],
                     **({"catches": [list(row) for row in record["deal"]["catches"]]}
                        if "catches" in record["deal"] else {})},
            "score_before": list(record["score_before"]),
            "actions": ([[s, a, list(legal)] for (s, a), legal in zip(record["actions"], record["legal"])]
                        if include_legal else [list(x) for x in record["actions"]]),
            "points": list(record["points"] if record["finished"] else self._hand_points),
            "score_after": list(record["score_after"] if record["finished"] else self._score),
        }
        if "pair" in record:
            out["pair"] = list(record["pair"])
        return out


# ----------------------------------------------------------------------------------------------------------
# input validation

def check_new_match(config: Any, seed: Any) -> int:
    """Validate a new match's config and seed (shared by both engines); returns the seed to use."""
    if not isinstance(config, TrucoConfig):
        raise ValueError(f"config must be a TrucoConfig (see truco_env.config.make_config), got {clip(repr(config))}")
    if seed is None:
        return random.SystemRandom().randrange(2 ** 63)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer or None, got {clip(repr(seed))}")
    return seed


def _check_score(score: Any, target: int) -> list[int]:
    if score is None:
        return [0, 0]
    if (not isinstance(score, (list, tuple)) or len(score) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in score)):
        raise ValueError(f"score must be a pair of integers [team0, team1], got {clip(repr(score))}")
    if min(score) < 0 or max(score) >= target:
        raise ValueError(f"score {list(score)} is out of range: each team needs 0 <= points < target_score ({target})")
    return list(score)


def parse_next_deal(deal: Any, config: TrucoConfig) -> dict:
    """Validate the cards of a following deal (no dealer: that follows the rotation)."""
    if isinstance(deal, dict) and "dealer" in deal:
        raise ValueError("force_next_deal: the next dealer follows the rotation; give only 'hands' and 'vira'")
    parsed = _parse_deal(deal, config)
    if "hands" not in parsed:
        raise ValueError("force_next_deal needs 'hands' (and 'vira' in Paulista and Uruguayan)")
    return parsed


def _parse_catches(catches: Any, n: int) -> list[list[int]]:
    """Validate a deal's ``catches`` (señas): for each of the ``n`` seats, the opponents who catch its signal."""
    def opponents(seat: int) -> list[int]:
        return [o for o in range(n) if o % 2 != seat % 2]

    if not isinstance(catches, (list, tuple)) or len(catches) != n:
        raise ValueError(f"deal 'catches' must be a list of {n} lists (per seat, the opponents who catch its "
                         f"signal), got {clip(repr(catches))}")
    parsed = []
    for seat, row in enumerate(catches):
        if (not isinstance(row, (list, tuple)) or any(type(o) is not int for o in row)
                or list(row) != sorted(set(row)) or not set(row) <= set(opponents(seat))):
            raise ValueError(f"deal 'catches': seat {seat} needs a sorted list of distinct opponents from "
                             f"{opponents(seat)}, got {clip(repr(row))}")
        parsed.append(list(row))
    return parsed


def _parse_deal(deal: Any, config: TrucoConfig) -> dict:
    """Validate a forced deal; returns ``{"hands": [[int]] | None, "vira": int | None, "dealer": int | None}``."""
    if deal is None:
        return {}
    if not isinstance(deal, dict):
        raise ValueError(f"deal must be a dict with keys 'hands', 'vira', 'dealer', got {type(deal).__name__}")
    keys = ("hands", "vira", "dealer", "catches") if config.senas else ("hands", "vira", "dealer")
    unknown = set(deal) - set(keys)
    if unknown:
        raise ValueError(f"unknown deal key(s) {clip(sorted(map(str, unknown)))}; allowed: "
                         + ", ".join(repr(k) for k in keys))
    n = config.num_players
    family = config.family
    out: dict[str, Any] = {}
    if deal.get("catches") is not None:
        out["catches"] = _parse_catches(deal["catches"], n)
    dealer = deal.get("dealer")
    if dealer is not None:
        if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < n:
            raise ValueError(f"deal 'dealer' must be a seat 0..{n - 1}, got {clip(repr(dealer))}")
        out["dealer"] = dealer
    hands = deal.get("hands")
    vira_text = deal.get("vira")
    if hands is None:
        if vira_text is not None:
            raise ValueError("deal 'vira' needs 'hands' too (give the whole deal or only the dealer)")
        return out
    if not isinstance(hands, (list, tuple)) or len(hands) != n:
        raise ValueError(f"deal 'hands' must be a list of {n} hands (one per seat), got {clip(repr(hands))}")
    legal_cards = set(cards.deck(family, config.deck, config.deck_ranks))
    deck_name = f"{config.deck} {family}" if family == cards.PAULISTA else "Spanish 40-card"
    if config.deck_ranks is not None:
        deck_name = f"reduced ({', '.join(config.deck_ranks)})"
    seen: dict[int, str] = {}
    parsed = []
    for seat, hand in enumerate(hands):
        if not isinstance(hand, (list, tuple)) or len(hand) != config.hand_size:
            raise ValueError(f"deal: seat {seat} must hold exactly {config.hand_size} cards, got {clip(repr(hand))}")
        row = []
        for text in hand:
            card = cards.parse_card(text, family)
            if card not in legal_cards:
                raise ValueError(f"deal: card {clip(repr(text))} is not in the {deck_name} deck of this config")
            if card in seen:
                raise ValueError(f"deal: duplicate card {clip(repr(text))} ({seen[card]} and seat {seat})")
            seen[card] = f"seat {seat}"
            row.append(card)
        parsed.append(row)
    out["hands"] = parsed
    if family == cards.ARGENTINE:
        if vira_text is not None:
            raise ValueError(f"deal: the argentine family has no vira, got {clip(repr(vira_text))} (use None)")
        out["vira"] = None
    else:
        if vira_text is None:
            turned = "the muestra as its 'vira'" if family == cards.URUGUAYAN else "a 'vira' card"
            raise ValueError(f"deal: {family} needs {turned} beside the hands")
        vira = cards.parse_card(vira_text, family)
        if vira not in legal_cards:
            raise ValueError(f"deal: vira {clip(repr(vira_text))} is not in the {deck_name} deck of this config")
        if vira in seen:
            raise ValueError(f"deal: the vira {clip(repr(vira_text))} is also in a hand ({seen[vira]})")
        out["vira"] = vira
    return out
