"""Cards of the three Truco families: text forms, the shared 40-card index, strength and envido/flor tables.

Why one index for two decks: a single observation layout and a single action space can then serve every
preset, so one network can play Argentine, Uruguayan and Paulista Truco alike (docs/rules.md §1.2). Uruguayan
Truco plays the Spanish deck of the Argentine game; only its strength and its envido values move with the
muestra.

The index is ``rank_index * 4 + suit_index`` where

* rank indices 0..9 are the Spanish ranks ``1 2 3 4 5 6 7 10 11 12`` and, position for position, the French
  ranks ``A 2 3 4 5 6 7 Q J K`` (1 with A, 10/11/12 with Q/J/K);
* suit indices 0..3 are espadas/spades, bastos/clubs, oros/diamonds, copas/hearts.

Everything here is pure data and small pure functions; the engine uses the integer tables, the tests and the
user-facing layers use the text helpers.
"""

from __future__ import annotations

from .limits import clip

ARGENTINE = "argentine"
PAULISTA = "paulista"
URUGUAYAN = "uruguayan"
FAMILIES = (ARGENTINE, PAULISTA, URUGUAYAN)  # the order of the config's family codes (0, 1, 2)
#: Families with the envido, the flor and the Argentine ladder (the Uruguayan game is the Argentine one with a muestra).
ENVIDO_FAMILIES = (ARGENTINE, URUGUAYAN)
#: Families that turn a card after the deal (the Paulista vira, the Uruguayan muestra; records call both ``vira``).
TURNED_CARD_FAMILIES = (PAULISTA, URUGUAYAN)

NUM_RANKS = 10
NUM_SUITS = 4
NUM_CARDS = NUM_RANKS * NUM_SUITS

SPANISH_RANKS = ("1", "2", "3", "4", "5", "6", "7", "10", "11", "12")
FRENCH_RANKS = ("A", "2", "3", "4", "5", "6", "7", "Q", "J", "K")
SPANISH_SUITS = ("e", "b", "o", "c")  # espadas, bastos, oros, copas
FRENCH_SUITS = ("s", "c", "d", "h")  # espadas (spades), paus (clubs), ouros (diamonds), copas (hearts)

RANKS = {ARGENTINE: SPANISH_RANKS, PAULISTA: FRENCH_RANKS, URUGUAYAN: SPANISH_RANKS}
SUITS = {ARGENTINE: SPANISH_SUITS, PAULISTA: FRENCH_SUITS, URUGUAYAN: SPANISH_SUITS}

SUIT_SPADES, SUIT_CLUBS, SUIT_DIAMONDS, SUIT_HEARTS = 0, 1, 2, 3

#: Paulista decks as rank text in the cyclic order low -> high (docs/rules.md §4.1, 4.2).
PAULISTA_DECK_RANKS = {
    "dirty": ("4", "5", "6", "7", "Q", "J", "K", "A", "2", "3"),
    "clean": ("Q", "J", "K", "A", "2", "3"),
}


def card_id(rank_index: int, suit_index: int) -> int:
    return rank_index * NUM_SUITS + suit_index


def rank_of(card: int) -> int:
    return card // NUM_SUITS


def suit_of(card: int) -> int:
    return card % NUM_SUITS


def card_text(card: int, family: str) -> str:
    """Text form of a card index in the deck of ``family`` (``"1e"``, ``"Qs"``)."""
    return RANKS[family][rank_of(card)] + SUITS[family][suit_of(card)]


def _build_parsers() -> dict[str, dict[str, int]]:
    parsers = {}
    for family in FAMILIES:
        table = {}
        for r, rank in enumerate(RANKS[family]):
            for s, suit in enumerate(SUITS[family]):
                table[rank + suit] = card_id(r, s)
        parsers[family] = table
    return parsers


_PARSERS = _build_parsers()


def parse_card(text: object, family: str) -> int:
    """Card index of ``text`` in the deck of ``family``; ValueError naming the card and the allowed form."""
    if not isinstance(text, str) or text not in _PARSERS[family]:
        if family != PAULISTA:
            allowed = "Spanish deck <rank><suit>, ranks 1-7 10 11 12, suits e b o c (e.g. '1e', '12o')"
        else:
            allowed = "French deck <rank><suit>, ranks 4 5 6 7 Q J K A 2 3, suits d s h c (e.g. '4c', 'Qd')"
        raise ValueError(f"unknown card {clip(repr(text))} for the {family} family: expected {allowed}")
    return _PARSERS[family][text]


def deck(family: str, paulista_deck: str = "dirty", ranks: tuple[str, ...] | None = None) -> tuple[int, ...]:
    """The card indices of the deck in a canonical order (the order shuffled by the deal procedure);
    ``ranks`` keeps only those ranks (research variants)."""
    if ranks is None:
        ranks = PAULISTA_DECK_RANKS[paulista_deck] if family == PAULISTA else SPANISH_RANKS
    rank_indices = sorted(RANKS[family].index(r) for r in ranks)
    return tuple(card_id(r, s) for r in rank_indices for s in range(NUM_SUITS))


# ----------------------------------------------------------------------------------------------------------
# Strength (higher wins a trick; equal strength ties)

def _argentine_strength() -> tuple[int, ...]:
    by_rank = {"3": 10, "2": 9, "12": 7, "11": 6, "10": 5, "6": 3, "5": 2, "4": 1}
    special = {"1e": 14, "1b": 13, "7e": 12, "7o": 11, "1o": 8, "1c": 8, "7b": 4, "7c": 4}
    table = []
    for card in range(NUM_CARDS):
        text = card_text(card, ARGENTINE)
        table.append(special.get(text, by_rank.get(SPANISH_RANKS[rank_of(card)], 0)))
    return tuple(table)


ARGENTINE_STRENGTH = _argentine_strength()

#: Ordinary Paulista strength by French rank (suit irrelevant), docs/rules.md §4.3.
PAULISTA_RANK_STRENGTH = {"3": 10, "2": 9, "A": 8, "K": 7, "J": 6, "Q": 5, "7": 4, "6": 3, "5": 2, "4": 1}
#: Manilha strength by suit: zap (clubs) > copas (hearts) > espadilha (spades) > ouros (diamonds).
MANILHA_SUIT_STRENGTH = {SUIT_CLUBS: 14, SUIT_HEARTS: 13, SUIT_SPADES: 12, SUIT_DIAMONDS: 11}


def manilha_rank_index(vira: int, paulista_deck: str = "dirty", ranks: tuple[str, ...] | None = None) -> int:
    """Rank index of the manilhas: the rank after the vira's in the deck's cycle (with the wrap); ``ranks``
    restricts the cycle to a research deck."""
    cycle = PAULISTA_DECK_RANKS[paulista_deck]
    if ranks is not None:
        cycle = tuple(r for r in cycle if r in ranks)
    vira_rank = FRENCH_RANKS[rank_of(vira)]
    if vira_rank not in cycle:
        raise ValueError(f"vira {clip(repr(card_text(vira, PAULISTA)))} is not in the {paulista_deck} deck")
    return FRENCH_RANKS.index(cycle[(cycle.index(vira_rank) + 1) % len(cycle)])


def _paulista_strength(manilha: int) -> tuple[int, ...]:
    table = []
    for card in range(NUM_CARDS):
        if rank_of(card) == manilha:
            table.append(MANILHA_SUIT_STRENGTH[suit_of(card)])
        else:
            table.append(PAULISTA_RANK_STRENGTH[FRENCH_RANKS[rank_of(card)]])
    return tuple(table)


#: Strength tables indexed by the manilha's rank index.
PAULISTA_STRENGTH = tuple(_paulista_strength(m) for m in range(NUM_RANKS))


def strength_table(family: str, vira: int | None = None, paulista_deck: str = "dirty",
                   ranks: tuple[str, ...] | None = None) -> tuple[int, ...]:
    """Strength of every card index for one hand (Paulista depends on the vira, Uruguayan on the muestra)."""
    if family == ARGENTINE:
        return ARGENTINE_STRENGTH
    if family == URUGUAYAN:
        return URUGUAYAN_STRENGTH[vira]
    return PAULISTA_STRENGTH[manilha_rank_index(vira, paulista_deck, ranks)]


# ----------------------------------------------------------------------------------------------------------
# Envido and flor (Argentine)

#: Envido value of each rank index: 1-7 face value, figures 10/11/12 nothing.
ENVIDO_RANK_VALUE = (1, 2, 3, 4, 5, 6, 7, 0, 0, 0)


def envido_of(cards: list[int] | tuple[int, ...]) -> int:
    """Envido points: 20 + the two best values of a suit held twice or more, else the best single value."""
    best = 0
    by_suit: dict[int, list[int]] = {}
    for card in cards:
        value = ENVIDO_RANK_VALUE[rank_of(card)]
        best = max(best, value)
        by_suit.setdefault(suit_of(card), []).append(value)
    for values in by_suit.values():
        if len(values) >= 2:
            values.sort(reverse=True)
            best = max(best, 20 + values[0] + values[1])
    return best


def flor_of(cards: list[int] | tuple[int, ...]) -> int | None:
    """Flor value (20 + all three envido values) when three cards share a suit, else None."""
    if len(cards) != 3 or len({suit_of(c) for c in cards}) != 1:
        return None
    return 20 + sum(ENVIDO_RANK_VALUE[rank_of(c)] for c in cards)


# ----------------------------------------------------------------------------------------------------------
# Uruguayan Truco: the muestra and its piezas (docs/rules.md §8.2-8.4)

#: The ranks of the piezas of the muestra's suit, strongest first; the 12 stands in for the muestra's own rank.
PIEZA_RANKS = ("2", "4", "5", "11", "10")
#: Reduced (envido and flor) value of each pieza rank: with the 20 of a pair, 30, 29, 28, 27, 27.
PIEZA_VALUE = {"2": 10, "4": 9, "5": 8, "11": 7, "10": 7}


def piezas(muestra: int) -> tuple[int, ...]:
    """The five pieza cards of the hand whose muestra is ``muestra``, strongest first: the 2, 4, 5, 11 and 10 of
    its suit, the 12 of that suit in the place of the muestra itself when it is one of them."""
    suit = suit_of(muestra)
    twelve = card_id(SPANISH_RANKS.index("12"), suit)
    return tuple(twelve if card == muestra else card
                 for card in (card_id(SPANISH_RANKS.index(rank), suit) for rank in PIEZA_RANKS))


def uruguayan_strength(muestra: int) -> tuple[int, ...]:
    """Strength of every card index for a hand with this muestra (docs/rules.md §8.2): the
    piezas 19 down to 15, the matas and the rest as in Argentine Truco (14 down to 1)."""
    table = list(ARGENTINE_STRENGTH)
    for place, card in enumerate(piezas(muestra)):
        table[card] = 19 - place
    return tuple(table)


#: Strength tables indexed by the muestra's card index.
URUGUAYAN_STRENGTH = tuple(uruguayan_strength(m) for m in range(NUM_CARDS))


def uruguayan_value(card: int, muestra: int) -> int:
    """A card's reduced envido and flor value: a pieza its :data:`PIEZA_VALUE` (the 12 standing in, that of the
    rank it stands for), any other card as in Argentine Truco."""
    pieces = piezas(muestra)
    if card in pieces:
        return PIEZA_VALUE[PIEZA_RANKS[pieces.index(card)]]
    return ENVIDO_RANK_VALUE[rank_of(card)]


def uruguayan_envido_of(cards: list[int] | tuple[int, ...], muestra: int) -> int:
    """Envido points (§8.3): 20 + the two values of the best pair of cards that go together (of one suit, or
    with a pieza, which goes with any suit); with no such pair, the best single value, a lone pieza's counting
    the 20 too (a one-card research hand)."""
    pieces = set(piezas(muestra))
    values = [uruguayan_value(c, muestra) for c in cards]
    best = max((20 + v if c in pieces else v for c, v in zip(cards, values, strict=True)), default=0)
    for i in range(len(cards)):
        for j in range(i + 1, len(cards)):
            if suit_of(cards[i]) == suit_of(cards[j]) or cards[i] in pieces or cards[j] in pieces:
                best = max(best, 20 + values[i] + values[j])
    return best


def uruguayan_flor_of(cards: list[int] | tuple[int, ...], muestra: int, plain_base: int = 20) -> int | None:
    """Flor value (§8.4) when the three cards are a flor (of one suit, or a pieza and two of one suit, or two
    piezas or more), else None: 20 + the three values; ``plain_base`` in the place of that 20 for a flor without a
    pieza (the field ``plain_flor_base``)."""
    if len(cards) != 3:
        return None
    pieces = set(piezas(muestra))
    others = [c for c in cards if c not in pieces]
    if len({suit_of(c) for c in others}) > 1:
        return None
    base = plain_base if len(others) == 3 else 20
    return base + sum(uruguayan_value(c, muestra) for c in cards)


def hand_points(family: str, cards: list[int] | tuple[int, ...], vira: int | None,
                plain_flor_base: int = 20) -> tuple[int, int | None]:
    """A hand's envido points and flor value (None: no flor) in the envido families; the one place the engine
    asks, so that the Argentine and the Uruguayan readings cannot be mixed up."""
    if family == URUGUAYAN:
        return uruguayan_envido_of(cards, vira), uruguayan_flor_of(cards, vira, plain_flor_base)
    return envido_of(cards), flor_of(cards)


# Text conveniences for tests, documentation and user interfaces.

def envido_points(hand: list[str]) -> int:
    """Envido points of a hand given as Spanish card text, e.g. ``envido_points(["7c", "6c", "3e"]) == 33``."""
    return envido_of([parse_card(c, ARGENTINE) for c in hand])


def flor_points(hand: list[str]) -> int | None:
    """Flor value of a hand given as Spanish card text, or None when it is not a flor."""
    return flor_of([parse_card(c, ARGENTINE) for c in hand])


def manilha_rank(vira: str, deck: str = "dirty") -> str:
    """Manilha rank text for a vira given as French card text: ``manilha_rank("3d") == "4"``."""
    return FRENCH_RANKS[manilha_rank_index(parse_card(vira, PAULISTA), deck)]


def trick_strength(card: str, family: str, vira: str | None = None, deck: str = "dirty") -> int:
    """Strength of one card given as text (1..14; Uruguayan piezas 15..19), for tests and user interfaces."""
    vira_id = parse_card(vira, family) if family in TURNED_CARD_FAMILIES else None
    return strength_table(family, vira_id, deck)[parse_card(card, family)]
