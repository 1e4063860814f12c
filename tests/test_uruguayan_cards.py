"""Uruguayan cards (truco_env.cards: piezas, strength, envido and flor with the muestra) against the independent
engine pytruco 0.1.3, card for card and hand for hand (docs/rules.md §8.2-8.4, §8.11).

pytruco reads one point differently, on purpose kept as the field ``plain_flor_base``: a flor without a pieza is
worth its three values there, 20 more here. Every other value must agree exactly.
"""

from __future__ import annotations

from itertools import combinations

import pytest

from truco_env import cards

pdt_carta = pytest.importorskip("pytruco.pdt.carta", reason="pytruco (the dev extra) checks the Uruguayan cards")
pdt_manojo = pytest.importorskip("pytruco.pdt.manojo")

#: Our suit index -> pytruco's suit: espadas, bastos, oros, copas.
SUITS = ("espada", "basto", "oro", "copa")
#: Muestras of each kind: a pieza rank (the 12 stands in), a plain card, a mata, a 12, a 10 (a pieza rank).
MUESTRAS = ("4c", "3e", "1b", "12o", "10b")


def theirs(card: int):
    return pdt_carta.Carta(int(cards.SPANISH_RANKS[cards.rank_of(card)]), SUITS[cards.suit_of(card)])


def their_hand(hand: tuple[int, ...]):
    manojo = pdt_manojo.Manojo(None)
    manojo.cartas = [theirs(c) for c in hand]
    return manojo


def text(*names: str) -> list[int]:
    return [cards.parse_card(n, cards.ARGENTINE) for n in names]


def test_the_piezas_and_the_twelve_that_stands_in():
    assert cards.piezas(*text("4c")) == tuple(text("2c", "12c", "5c", "11c", "10c"))
    assert cards.piezas(*text("3e")) == tuple(text("2e", "4e", "5e", "11e", "10e"))
    strength = cards.uruguayan_strength(*text("3e"))
    assert [strength[c] for c in text("2e", "4e", "5e", "11e", "10e", "1e", "1b", "7e", "7o", "3o", "12e")] == [
        19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 7]


@pytest.mark.parametrize("muestra", MUESTRAS)
def test_every_pair_of_cards_ranks_as_pytruco_ranks_it(muestra):
    m = cards.parse_card(muestra, cards.ARGENTINE)
    ours = cards.uruguayan_strength(m)
    power = {c: theirs(c).calc_poder(theirs(m)) for c in range(cards.NUM_CARDS) if c != m}
    for a, b in combinations(sorted(power), 2):
        assert (ours[a] > ours[b]) == (power[a] > power[b]) and (ours[a] == ours[b]) == (power[a] == power[b]), (
            cards.card_text(a, cards.ARGENTINE), cards.card_text(b, cards.ARGENTINE), muestra)


@pytest.mark.parametrize("muestra", MUESTRAS)
def test_every_hand_counts_its_envido_and_flor_as_pytruco_does(muestra):
    m = cards.parse_card(muestra, cards.ARGENTINE)
    pieces = set(cards.piezas(m))
    flors = 0
    for hand in combinations([c for c in range(cards.NUM_CARDS) if c != m], 3):
        manojo = their_hand(hand)
        flor = cards.uruguayan_flor_of(hand, m, plain_base=0)
        if manojo.tiene_flor(theirs(m))[0]:
            flors += 1
            assert flor == manojo.calc_flor(theirs(m)), [cards.card_text(c, cards.ARGENTINE) for c in hand]
            if not pieces & set(hand):  # the one reading apart: a flor without a pieza, 20 more here
                assert cards.uruguayan_flor_of(hand, m) == flor + 20
        else:
            assert flor is None
            assert cards.uruguayan_envido_of(hand, m) == manojo.calcular_envido(theirs(m)), [
                cards.card_text(c, cards.ARGENTINE) for c in hand]
    assert flors > 1000  # every kind of flor met: a quarter of the hands with piezas about


def test_the_worked_examples_of_the_rules():
    m = text("4c")[0]
    assert [cards.uruguayan_envido_of(text(*h.split()), m) for h in (
        "2c 7e 3o", "12c 6b 1o", "11c 10b 12o", "10c 3o 6e", "7e 6e 3c", "5o 4o 3b", "1e 1b 7o")] == [
        37, 35, 27, 33, 33, 29, 7]
    assert [cards.uruguayan_flor_of(text(*h.split()), m) for h in (
        "2c 12c 5c", "2c 5c 7o", "2c 3c 6c", "11c 6o 3o", "7e 6e 5e", "11o 10o 12o", "2c 7e 6o")] == [
        47, 45, 39, 36, 38, 20, None]
