"""Uruguayan Truco against the independent engine pytruco 0.1.3, decision by decision.

Why: the card tables are checked against pytruco card by card (test_uruguayan_cards.py), but the rules of play
(who may call what and when, envido va primero, the compulsory flor and the envido it voids, the truco ladder,
tricks, ties and what each hand pays) were only checked by the scenarios someone thought to write. Here both
engines play the same seeded random deals: at every decision the project's legal actions for the seat to act must
equal pytruco's for that seat, every action is applied to both, and the scores must agree after each action; an
accepted envido must announce the same points, and at the end of the hand the tricks must have gone the same way.
A failure names the deal, the muestra, the mano and the actions so far: enough to replay the case by hand.

The subset where both engines should agree (docs/rules.md §8.10 and §8.11):

* one hand per case from 0-0 to 40, a forced deal of random cards and muestra, 1v1 and 2v2, the mano drawn too;
* actions: cards; ``truco`` / ``retruco`` / ``vale_cuatro`` (as the answer, or by the team holding the quiero on
  its own turn) answered ``quiero`` or ``no_quiero``; ``envido``, ``real_envido`` and ``falta_envido`` and every
  chain of them, answered ``quiero`` or ``no_quiero``, with pytruco's readings of what they pay (the falta
  ``falta_envido="winner_to_buenas"``, row 3; an accepted falta adds the calls before it,
  ``falta_adds_chain=True``, row 4; a refused chain pays the calls before the refused one plus one,
  ``envido_refusal="previous_sum_plus_one"``, row 5); ``flor`` and the flor contest (answered by singing, a
  refusal, ``contraflor`` or ``contraflor_al_resto``), with pytruco's readings of what it pays
  (``flor_scoring="per_flor_refusals"``, row 8), of who may raise it (``flor_raise_by="unsung_holder"``, row 9)
  and of the value of a flor without a pieza (``plain_flor_base=0``, row 7); ``mazo``, with pytruco's readings of
  an opponent's unsung flor (``fold_against_unsung_flor="flor_lost"``, row 10) and of a fold in team play, which
  concedes for the folder alone (``mazo_scope="player"``, row 12), drawn one time in ten where legal (one in two
  against an unsung flor) so that hands go on. pytruco's ``limite_envido`` is left at its default 4, which is the engine's rule
  (two ``envido`` calls at most, row 6);
* random deals, and in a quarter of the cases a deal where both teams hold flor, so that contests are common;
* config: ``envido_primero_after_played=False`` (row 13) and, for 2v2, ``lead_after_tie="first_tied_card"`` (row 15),
  pytruco's readings of two fields the engine has.

Normalisations (§8.11, "turn-order differences"; each is a commented branch of :func:`play_hand`):

* pytruco lets several players act at a time (§8.11 item 1): only the legal set of the project's actor is compared.
  What pytruco also offers the other seats must be one of the documented extras (:func:`out_of_turn`): the truco
  caller's card before the answer (item 2), a raise by the team holding the quiero (row 11), any member of a
  challenged team answering, raising an envido chain or opening the envido va primero (item 1, row 14), a flor
  sung out of turn and any flor holder of the team a flor contest challenges answering it (item 1), a fold at any
  time (row 12); a fold pytruco offers the actor where the project has none (row 12) is left out of its set;
* the project's ``quiero`` to a flor alone is pytruco's ``flor``: the answering holder sings his own (pytruco takes
  no ``quiero`` to a flor, only to a contra flor or al resto);
* an envido against an undeclared flor: pytruco sings that flor inside the envido command (item 3), the project asks
  the holder for ``flor`` as its next decision; that decision is applied to the project alone. Where both teams
  hold flor, pytruco sings the first holder in its list of players whoever is mano, the project the first from the
  mano (§3.8; item 4): when the two differ the contests open from opposite teams, and that hand stops there;
* pytruco says nothing where the project records "son buenas" once someone has said "son mejores"
  (``Ronda.exec_el_envido``): announcements are compared by their values.

Two differences this test found: a flor holder challenged by a truco may say ``no_quiero`` without singing, now the
field ``flor_before_answer="refuse_unsung"`` set here (row 18; the project's rule makes him declare first, rules.md
§3.8 moment 3); and in team play pytruco forbids a ``truco`` in the first trick while a partner holds an
undeclared flor (row 19), which is kept out, narrowly (see :func:`play_hand`): that reading would make a seat's
legal actions tell it its partner's hidden flor, so the project states it and builds no field for it. pytruco
applies the same condition to the refusal of row 18 (no ``no_quiero`` while a partner's flor is also unsung),
kept out with row 19 for the same reason, and to the refusal of a flor in a contest (a team may not back down
while one of its holders has not sung: in the project a team's flors are declared together, so no such state
exists). With the flor contest in the comparison it found two more: pytruco's scoring (row 8) and who may raise
(row 9), now the fields set here.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from truco_env import TrucoConfig, TrucoState, cards

pytruco = pytest.importorskip("pytruco", reason="pytruco (the dev extra) is the independent engine")
if pytruco.__version__ != "0.1.3":  # §8.11: other versions read some points differently
    pytest.skip(f"the differential test pins pytruco 0.1.3, found {pytruco.__version__}", allow_module_level=True)
pdt_partida = pytest.importorskip("pytruco.pdt.partida")
pdt_carta = pytest.importorskip("pytruco.pdt.carta")
pdt_chi = pytest.importorskip("pytruco.pdt.chi")
pdt_equipo = pytest.importorskip("pytruco.pdt.equipo")
codmsg = pytest.importorskip("pytruco.enco.codmsg")

SUIT_NAMES = {"e": "espada", "b": "basto", "o": "oro", "c": "copa"}
SUIT_LETTERS = {name: letter for letter, name in SUIT_NAMES.items()}
#: pytruco's move classes -> the project's action names (a TirarCarta is "play:<card>").
ACTION_NAMES = {
    "TocarEnvido": "envido", "TocarRealEnvido": "real_envido", "TocarFaltaEnvido": "falta_envido",
    "CantarFlor": "flor", "CantarContraFlor": "contraflor", "CantarContraFlorAlResto": "contraflor_al_resto",
    "GritarTruco": "truco", "GritarReTruco": "retruco", "GritarVale4": "vale_cuatro",
    "ResponderQuiero": "quiero", "ResponderNoQuiero": "no_quiero", "IrseAlMazo": "mazo",
}
#: The words of pytruco's command line (``Partida.cmd``) where they differ from the project's names.
COMMAND_WORDS = {"contraflor": "contra-flor", "contraflor_al_resto": "contra-flor-al-resto", "retruco": "re-truco", "vale_cuatro": "vale-4", "no_quiero": "no-quiero", "falta_envido": "falta-envido",
                 "real_envido": "real-envido"}
SUBSET_CALLS = {"truco", "retruco", "vale_cuatro", "envido", "real_envido", "falta_envido", "flor", "contraflor",
                "contraflor_al_resto", "quiero", "no_quiero"}
PLAYER_IDS = ("Ana", "Beto", "Caro", "Dani")  # seat order; pytruco seats azules and rojos alternately
DECK = [rank + suit for rank in cards.SPANISH_RANKS for suit in SUIT_NAMES]


def config_for(num_players: int) -> TrucoConfig:
    """The engine with pytruco's readings of the fields it has (§8.10 rows 3, 4, 5, 7, 8, 9, 10, 12, 13, 15 and 18)."""
    extra = {"lead_after_tie": "first_tied_card"} if num_players == 4 else {}
    return TrucoConfig(family="uruguayan", num_players=num_players, target_score=40,
                       envido_primero_after_played=False, falta_envido="winner_to_buenas",
                       envido_refusal="previous_sum_plus_one", falta_adds_chain=True,
                       flor_before_answer="refuse_unsung", flor_scoring="per_flor_refusals",
                       flor_raise_by="unsung_holder", fold_against_unsung_flor="flor_lost",
                       plain_flor_base=0, mazo_scope="player", **extra)


def their_card(text: str):
    return pdt_carta.Carta(int(text[:-1]), SUIT_NAMES[text[-1]])


def their_name(move) -> str:
    kind = type(move).__name__
    if kind == "TirarCarta":
        return f"play:{move.carta.valor}{SUIT_LETTERS[str(move.carta.palo)]}"
    return ACTION_NAMES[kind]


def in_subset(action: str) -> bool:
    """The actions both engines share with one meaning (the module docstring)."""
    return action.startswith("play:") or action in SUBSET_CALLS or action == "mazo"


def first_flor_answer(state: TrucoState) -> bool:
    """Is the actor answering a flor (not a contra flor)? The project's ``quiero`` is then pytruco's ``flor``: the
    answering holder sings his own (pytruco takes no ``quiero`` to a flor alone)."""
    return state.phase == "flor_contest" and state.flor_calls[-1][1] == "flor"


def out_of_turn(state: TrucoState, seat: int, action: str) -> bool:
    """Is ``action``, offered by pytruco to ``seat`` while the project waits for another seat, one of the
    documented extras of §8.11 (several players may act at a time)?"""
    team = seat % 2
    pending = state.pending_truco
    challenged = pending is not None and pending[1] != team
    if state.phase == "flor_contest" and action in ("flor", "contraflor", "contraflor_al_resto", "quiero", "no_quiero"):
        # any flor holder of the team a flor contest challenges answers it (§8.11 item 1)
        return seat in state.flor_holders and state.flor_calls[-1][0] % 2 != team
    if action.startswith("play:"):  # the truco caller may play before the answer (§8.11 item 2)
        return pending is not None and pending[1] == team
    if action in ("retruco", "vale_cuatro"):  # any member answers; the quiero's team raises at any time (row 11)
        return challenged or state.raise_holder == team
    if action in ("envido", "real_envido", "falta_envido"):
        if state.phase == "envido":  # any member of the team an envido chain challenges raises it (§8.11 item 1)
            return state.envido_calls[-1][0] % 2 != team
        # envido va primero by any player not on turn who has not played, partners too (row 14)
        played = [s for s, _, _ in state.current_trick]
        return pending is not None and pending[0] == 1 and state.trick_index == 0 and seat not in played
    if action in ("quiero", "no_quiero"):  # any member of the challenged team answers (§8.11 item 1)
        envido_against = state.phase == "envido" and state.envido_calls[-1][0] % 2 != team
        return challenged or envido_against
    if action == "mazo":  # any player may fold at any time (row 12)
        return True
    if action == "flor":  # a flor may be sung out of turn (§8.11 item 1)
        return seat in state.flor_holders and state.flor_status == "none" and state.trick_index == 0
    return False


class Pair:
    """One forced deal in both engines: the project's ``TrucoState`` and a pytruco ``Partida``."""

    def __init__(self, config: TrucoConfig, hands: list[list[str]], muestra: str, mano: int, seed: int):
        n = config.num_players
        self.state = TrucoState.new(config, seed=seed,
                                    deal={"hands": hands, "vira": muestra, "dealer": (mano - 1) % n})
        ids = PLAYER_IDS[:n]
        self.ids = ids
        self.partida = pdt_partida.Partida(40, list(ids[0::2]), list(ids[1::2]), dummy=True, verbose=True)
        ronda = self.partida.ronda
        ronda.reset(mano)
        ronda.set_muestra(their_card(muestra))
        ronda.set_cartas([[their_card(c) for c in hand] for hand in hands])

    def their_holders(self) -> list[int]:
        return sorted(self.ids.index(j) for j in self.partida.ronda.envite.sin_cantar)

    def their_legal(self, seat: int) -> set[str]:
        moves = pdt_chi.chi(self.partida, self.partida.ronda.manojos[seat])
        return {a for a in map(their_name, moves) if in_subset(a)}

    def their_score(self) -> tuple[int, int]:
        points = self.partida.puntajes
        return points[pdt_equipo.Equipo.AZUL], points[pdt_equipo.Equipo.ROJO]

    def their_command(self, seat: int, action: str) -> list:
        """Apply ``action`` to pytruco through its command line; it must not answer with an error."""
        if action.startswith("play:"):
            text = action[5:]
            command = f"{self.ids[seat]} {text[:-1]} {SUIT_NAMES[text[-1]]}"
        else:
            command = f"{self.ids[seat]} {COMMAND_WORDS.get(action, action)}"
        packets = self.partida.cmd(command)
        errors = [p.message.cont for p in packets if p.message.cod == codmsg.CodMsg.ERROR]
        assert not errors, (command, errors)
        return packets


def announced(packets: list, ids: tuple[str, ...]) -> list[tuple[int, int]]:
    """The envido points pytruco announces in ``packets``, as ``(seat, points)``."""
    out = []
    for packet in packets:
        message = packet.message
        if message.cod in (codmsg.CodMsg.DICE_TENGO, codmsg.CodMsg.DICE_SON_MEJORES):
            out.append((ids.index(message.cont["autor"]), message.cont["valor"]))
    return out


def draw_deal(rng: random.Random, n: int) -> tuple[list[list[str]], str, int]:
    cards_drawn = rng.sample(DECK, 3 * n + 1)
    return [cards_drawn[3 * s:3 * s + 3] for s in range(n)], cards_drawn[-1], rng.randrange(n)


def play_hand(config: TrucoConfig, rng: random.Random, seed: int, counts: Counter, contest: bool = False) -> None:
    """Draw a deal (with ``contest``, one where both teams hold flor), play one hand in both engines with moves
    drawn from the common legal set (a fold one time in ten where it is legal, so that hands go on), and assert
    they agree at every step. ``counts`` tallies what was exercised."""
    n = config.num_players
    while True:
        hands, muestra, mano = draw_deal(rng, n)
        holders = TrucoState.new(config, seed=seed, deal={"hands": hands, "vira": muestra,
                                                          "dealer": (mano - 1) % n}).flor_holders
        if not contest or len({h % 2 for h in holders}) == 2:
            break
    pair = Pair(config, hands, muestra, mano, seed)
    state = pair.state
    counts["flor contest deal"] += len({s % 2 for s in state.flor_holders}) == 2
    where = f"deal {hands}, muestra {muestra}, mano seat {mano}"
    assert pair.their_holders() == sorted(state.flor_holders), f"flor holders differ; {where}"
    history: list[tuple[int, str]] = []
    results, their_tricks = state.trick_results, pair.partida.ronda.manos
    while state.hand_index == 0:
        seat = state.actor
        envido_pending = state.phase == "envido"
        context = f"{where}, actions {history}, seat {seat} to act"
        ours = {a for a in state.legal_actions() if in_subset(a)}
        after_envido = (state.phase == "flor_declare" and history
                        and history[-1][1] in ("envido", "real_envido", "falta_envido"))
        if after_envido and any(h % 2 != seat % 2 and h not in pair.their_holders() for h in state.flor_holders):
            # §8.11 item 4: the envido made pytruco sing the first flor in its list of players, whoever is mano;
            # the project's first holder from the mano sings (§3.8). The two contests open from opposite teams:
            # the hand is not compared further.
            counts["flor contest opened from the other team (hand stopped)"] += 1
            counts["hands"] += 1
            return
        if after_envido and seat not in pair.their_holders():
            # §8.11 item 3: pytruco sang the flor inside the envido command; the project asks for it now
            assert ours == {"flor"}, context
            state.apply("flor")
            history.append((seat, "flor (pytruco: sung with the envido)"))
            counts["flor sung with the envido"] += 1
            continue
        theirs = pair.their_legal(seat)
        partner_flor = any(h % 2 == seat % 2 and h != seat for h in state.flor_holders)
        if state.phase == "flor_declare" and "no_quiero" in ours:
            if "no_quiero" not in theirs and partner_flor and state.flor_status == "none":
                # Kept out with row 19 (not modelled): pytruco forbids the refusal while a partner's flor is also
                # unsung (ResponderNoQuiero.ok), which would tell the holder his partner's hidden flor.
                ours.discard("no_quiero")
                counts["no_quiero beside a partner's undeclared flor (project only)"] += 1
            else:
                counts["no_quiero before the flor"] += 1  # row 18, flor_before_answer="refuse_unsung"
        if (state.phase == "flor_contest" and "no_quiero" in ours and "no_quiero" not in theirs and partner_flor
                and state.flor_calls[-1][1] == "flor"):
            # The same condition of pytruco, in a flor contest: a team may not back down while one of its holders
            # has not sung; in the project a team's flors are declared together (rules.md §8.10 row 19)
            ours.discard("no_quiero")
            counts["no_quiero to a flor beside a partner's flor (project only)"] += 1
        if ("truco" in ours and "truco" not in theirs and state.trick_index == 0 and state.flor_status == "none"
                and partner_flor):
            # Kept out (rules.md §8.10 row 19, not a field): pytruco forbids a truco while the partner holds an
            # undeclared flor (GritarTruco.ok); that reading would leak the partner's hidden flor into the mask.
            ours.discard("truco")
            counts["truco beside a partner's undeclared flor (project only)"] += 1
        if "mazo" in theirs and "mazo" not in ours:
            # row 12 (a turn-order difference): pytruco lets a player fold at any time, in the middle of an
            # envido or a flor contest too; the project folds only where §3.10 says
            theirs.discard("mazo")
            counts["mazo where the project has none (row 12)"] += 1
        sings = first_flor_answer(state)
        ours_named = {"flor" if sings and a == "quiero" else a for a in ours}
        assert ours_named == theirs, f"legal sets differ: project {sorted(ours)}, pytruco {sorted(theirs)}; {context}"
        counts["decisions"] += 1
        for other in range(n):
            if other != seat:
                extra = [a for a in pair.their_legal(other) if not out_of_turn(state, other, a)]
                assert not extra, f"pytruco offers seat {other} {extra} out of turn; {context}"
        against_flor = state.flor_status == "none" and any(h % 2 != seat % 2 for h in state.flor_holders)
        fold = 0.5 if against_flor else 0.1  # row 10 needs folds against an unsung flor; others end hands early
        choices = sorted(ours - {"mazo"}) if "mazo" in ours and len(ours) > 1 and rng.random() > fold else sorted(ours)
        action = rng.choice(choices)
        if action == "envido" and state.pending_truco is not None:
            counts["envido va primero"] += 1
        chain = [call for _, call in state.envido_calls] if envido_pending else []
        if chain and action in ("envido", "real_envido", "falta_envido"):
            counts["envido chain raised"] += 1
        elif len(chain) > 1:
            counts[f"envido chain {'accepted' if action == 'quiero' else 'refused'}"] += 1
            counts["falta accepted after a chain"] += action == "quiero" and chain[-1] == "falta_envido"
        # each engine starts new lists for the next hand: these two keep this hand's tricks
        results, their_tricks = state.trick_results, pair.partida.ronda.manos
        if state.phase == "flor_contest":
            counts["flor contest " + ("sung" if sings and action == "quiero" else action)] += 1
        if action == "mazo" and any(h % 2 != seat % 2 for h in state.flor_holders) and state.flor_status == "none":
            counts["mazo against an unsung flor"] += 1
        if action == "mazo" and any(s != seat and s % 2 == seat % 2 for s in state.participants):
            counts["mazo alone, the partner plays on"] += 1
        state.apply(action)
        packets = pair.their_command(seat, "flor" if sings and action == "quiero" else action)
        history.append((seat, action))
        counts[action if not action.startswith("play:") else "play"] += 1
        if envido_pending and action == "quiero":
            ours_said = [(s, v) for s, v in state.envido_announcements if v is not None]
            assert ours_said == announced(packets, pair.ids), f"envido announcements differ; {context}, quiero"
            counts["envido accepted"] += 1
        if state.phase != "flor_declare":  # a flor sung with the envido scores one decision earlier in pytruco
            assert state.score == pair.their_score(), f"scores differ after {action}; {context}"
        hand_over = pair.partida.ronda.manos is not their_tricks
        assert (state.hand_index != 0) == hand_over, f"only one engine ended the hand after {action}; {context}"
    code = {"ganoAzul": 0, "ganoRojo": 1, "empardada": -1}
    # the tricks the project finished (a player folded alone leaves a trick of fewer cards than seats)
    theirs = [code[str(t.resultado)] for t in their_tricks[:len(results)]]
    assert list(results) == theirs, f"trick winners differ: project {results}, pytruco {theirs}; {where}, {history}"
    counts["tied trick"] += -1 in results
    counts["hands"] += 1


def play_many(num_players: int, hands: int, seed: int) -> Counter:
    """``hands`` seeded cases; pytruco deals its next hand from the global ``random``, which is restored."""
    config = config_for(num_players)
    rng = random.Random(seed)
    counts: Counter = Counter()
    saved = random.getstate()
    try:
        for case in range(hands):
            play_hand(config, rng, case, counts, contest=case % 4 == 0)  # a flor contest in a quarter of them
    finally:
        random.setstate(saved)
    return counts


#: What a run of a few hundred hands must have exercised (so that the comparison never goes vacuous).
EXERCISED = ("play", "truco", "retruco", "vale_cuatro", "quiero", "no_quiero", "envido", "real_envido", "falta_envido",
             "envido accepted", "envido chain raised", "envido chain accepted", "envido chain refused",
             "falta accepted after a chain", "envido va primero", "flor", "flor sung with the envido",
             "no_quiero before the flor", "tied trick", "flor contest deal", "flor contest sung",
             "flor contest no_quiero", "flor contest contraflor", "flor contest contraflor_al_resto",
             "flor contest quiero", "mazo", "mazo against an unsung flor")


@pytest.mark.parametrize("num_players,hands", [(2, 800), (4, 300)])
def test_the_engine_plays_each_decision_as_pytruco(num_players, hands):
    counts = play_many(num_players, hands, seed=num_players)
    assert counts["hands"] == hands
    missing = [name for name in EXERCISED + (("mazo alone, the partner plays on",) if num_players == 4 else ())
               if not counts[name]]
    assert not missing, (missing, counts)


@pytest.mark.slow
@pytest.mark.parametrize("num_players,hands", [(2, 10_000), (4, 5_000)])
def test_the_engine_plays_each_decision_as_pytruco_many_hands(num_players, hands):
    counts = play_many(num_players, hands, seed=1000 + num_players)
    assert counts["hands"] == hands


@pytest.mark.parametrize("field,value,words,players", [
    ("envido_primero_after_played", True, "legal sets differ", 2), ("falta_envido", "malas_match", "scores differ", 2),
    ("envido_refusal", "previous_sum", "scores differ", 2), ("falta_adds_chain", False, "scores differ", 2),
    ("flor_before_answer", "declare", "legal sets differ", 2), ("plain_flor_base", 20, "scores differ", 2),
    ("flor_scoring", "table", "scores differ", 2), ("flor_raise_by", "either_team", "legal sets differ", 2),
    ("fold_against_unsung_flor", "score_flor", "scores differ", 2),
    ("mazo_scope", "team", "scores differ|only one engine ended the hand", 4)])
def test_the_comparison_sees_a_reading_apart(field, value, words, players):
    """Positive controls: with one field at the project's own reading instead of pytruco's, the comparison fails.
    ``envido_primero_after_played`` (§8.10 row 13): a player who has played his first card may still answer a truco
    with an envido here, not in pytruco; ``falta_envido`` (row 3): at 0-0 the family's default falta wins the match,
    pytruco's is worth the 20 of the malas; ``envido_refusal`` (row 5): a refused chain pays one point less here;
    ``falta_adds_chain`` (row 4): an accepted falta after other calls pays the falta alone here;
    ``flor_before_answer`` (row 18): a flor holder challenged by a truco must sing before refusing here;
    ``plain_flor_base`` (row 7): a flor without a pieza counts 20 more here, and wins contests it loses there;
    ``flor_scoring`` (row 8): a flor contest pays the ``flor_values`` table here; ``flor_raise_by`` (row 9): the
    singer's team may answer a contra flor with al resto here; ``fold_against_unsung_flor`` (row 10): a fold pays
    the other team's unsung flor here; ``mazo_scope`` (row 12, 2v2): a fold ends the hand for the team here."""
    config = config_for(players).replace(**{field: value})
    rng = random.Random(2)
    saved = random.getstate()
    try:
        with pytest.raises(AssertionError, match=words):
            for case in range(400):
                play_hand(config, rng, case, Counter(), contest=case % 4 == 0)
    finally:
        random.setstate(saved)
