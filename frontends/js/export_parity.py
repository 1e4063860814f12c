"""Export (seat view, observation, mask) triples for the JavaScript encoder's parity test.

Seeded matches of every preset, and of variants that switch on the rule options no preset uses (covered cards,
pica-pica, flor in 2v2 and 3v3, the mão de onze options, a mão de ferro played face up, ...), are played by random
and heuristic players, many from a starting score near the end (so that mão de onze, mão de ferro, falta envido
and malas/buenas come up often). At every decision the acting seat's view is written with the observation and
the mask that ``truco_env.encoding`` computes; ``frontends/js/test/parity.test.mjs`` checks that the JavaScript
encoder reproduces them exactly.

    python frontends/js/export_parity.py --out /tmp/parity.json --states 12000
    TRUCO_PARITY_TRIPLES=/tmp/parity.json node --test frontends/js/test/parity.test.mjs

The view (``truco_env.views.seat_view``) is what the seat may know (docs/frontends.md): its own cards (none in a
blind mão de ferro), the vira, the public actions (another seat's face-down card as ``cover``, a blind card as
``play_slot:<i>=<card>``), the points announced at a showdown, the flor holders once a flor is declared, a
partner's cards where a mão de onze shows them, the scores and the rules.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from agents.heuristic import HeuristicAgent
from truco_env import actions, cards
from truco_env.config import make_config
from truco_env.encoding import (
    OBS_OFFSETS,
    OBSERVATION_VERSION,
    PHASES,
    URUGUAYAN_OFFSETS,
    encode_action_mask,
    encode_observation,
)
from truco_env.engine import TrucoState
from truco_env.turns import play_turns
from truco_env.views import seat_view

#: (name, preset, overrides): every preset, then variants for the options the presets leave off.
CONFIGS = (
    ("argentine", "argentine", {}),
    ("argentine-flor", "argentine-flor", {}),
    ("argentine-2v2", "argentine-2v2", {}),
    ("argentine-2v2-senas", "argentine-2v2-senas", {}),
    ("argentine-2v2-senas-free", "argentine-2v2-senas-free", {}),
    ("argentine-3v3", "argentine-3v3", {}),
    ("paulista", "paulista", {}),
    ("paulista-2v2", "paulista-2v2", {}),
    ("paulista-clean", "paulista-clean", {}),
    ("argentine-mini", "argentine-mini", {}),
    ("paulista-mini", "paulista-mini", {}),
    ("argentine-2v2-flor", "argentine-2v2", {
        "flor": True, "envido_openers": "pie_only", "responder": "team_pie", "lead_after_tie": "first_tied_card",
        "partner_tie_wins_trick": False, "falta_envido": "malas_match", "envido_tie": "mano_team",
        "envido_primero": False}),
    ("argentine-3v3-pica-pica", "argentine-3v3", {
        "flor": True, "pica_pica": True, "lead_after_tie": "next_after_leader", "mazo_first_trick_bonus": True}),
    ("argentine-flor-variants", "argentine-flor", {
        "falta_envido": "whole_match", "envido_after_truco_accepted": True, "envido_primero_after_played": False,
        "end_match_immediately": False, "deal_rotation": "against_play", "target_score": 15,
        "flor_values": {"uncontested_per_flor": 3, "contested_per_flor": 4, "achico": 5, "contraflor_quiero": 7,
                        "contraflor_no_quiero": 3, "resto_bonus_per_flor": 2, "resto_no_quiero_direct": 5,
                        "resto_no_quiero_after_contraflor": 8}}),
    ("paulista-covered", "paulista", {
        "covered_card": True, "paulista_mazo": True, "forbid_useless_raise": True, "all_tricks_tied": "dealer_team"}),
    ("paulista-2v2-variants", "paulista-2v2", {
        "covered_card": True, "mao_de_onze_decider": "any_accepts", "mao_de_onze_truco": "caller_loses_match",
        "all_tricks_tied": "mao_team", "paulista_mazo": True}),
    ("paulista-open-ferro", "paulista-clean", {"mao_de_ferro_blind": False, "forbid_useless_raise": True}),
    ("argentine-3v3-senas-free", "argentine-3v3", {"senas": True, "sena_code": "free", "sena_catch": 0.6,
                                                   "pica_pica": True}),
    ("uruguayan", "uruguayan", {}),
    ("uruguayan-2v2", "uruguayan-2v2", {}),
    ("uruguayan-3v3", "uruguayan-3v3", {}),
    ("uruguayan-buenas", "uruguayan", {"falta_envido": "winner_to_buenas", "plain_flor_base": 0,
                                       "envido_refusal": "previous_sum_plus_one", "falta_adds_chain": True,
                                       "flor_before_answer": "refuse_unsung"}),
    ("uruguayan-2v2-pytruco", "uruguayan-2v2", {"envido_refusal": "previous_sum_plus_one", "falta_adds_chain": True,
                                                "flor_before_answer": "refuse_unsung",
                                                "trick_tie_to_mano": True}),
    ("uruguayan-tie-to-mano", "uruguayan", {"trick_tie_to_mano": True}),
    ("uruguayan-3v3-pica", "uruguayan-3v3", {"pica_pica": True, "pica_pica_until": "target_minus_5"}),
    ("uruguayan-2v2-flor-mazo", "uruguayan-2v2", {"flor_scoring": "per_flor_refusals", "flor_raise_by": "unsung_holder",
                                                  "fold_against_unsung_flor": "flor_lost", "mazo_scope": "player"}),
    ("uruguayan-flor-readings", "uruguayan", {"flor_scoring": "per_flor_refusals", "flor_raise_by": "unsung_holder",
                                              "fold_against_unsung_flor": "flor_lost"}),
    ("uruguayan-variants", "uruguayan-2v2", {
        "plain_flor_base": 0, "falta_envido": "leader_to_buenas", "target_score": 30, "responder": "team_pie",
        "flor_values": {"uncontested_per_flor": 3, "contested_per_flor": 4, "achico": 5, "contraflor_quiero": 7,
                        "contraflor_no_quiero": 3, "resto_bonus_per_flor": 2, "resto_no_quiero_direct": 5,
                        "resto_no_quiero_after_contraflor": 8}}),
)

MAX_DECISIONS_PER_MATCH = 40  # then a new match: many short stretches from varied scores beat a few long matches


def _start_score(rng: random.Random, config) -> list[int] | None:
    if config.single_hand or rng.random() < 0.4:
        return None
    top = config.target_score - 1
    if config.family == cards.PAULISTA:
        choice = rng.choice(["onze", "onze", "ferro", "near", "any"])
        if choice == "onze":
            score = [top, rng.randrange(top)]
            return score if rng.random() < 0.5 else score[::-1]
        if choice == "ferro":
            return [top, top]
        if choice == "near":
            return [rng.randrange(top - 3, top + 1), rng.randrange(top - 3, top + 1)]
    elif rng.random() < 0.5:  # falta envido and the last points of a match
        return [rng.randrange(top - 8, top + 1), rng.randrange(top - 8, top + 1)]
    return [rng.randrange(top + 1), rng.randrange(top + 1)]


def _flor_rich_deal(rng: random.Random, config) -> dict | None:
    """Half the time with the flor rule, a deal where each seat holds a flor with probability 0.6: by chance two
    teams rarely both hold one, and the flor contest (contraflor, al resto, the showdown) needs that."""
    if not config.flor or rng.random() < 0.5:
        return None
    deck = list(cards.deck(config.family))
    rng.shuffle(deck)
    hands = []
    for _ in range(config.num_players):
        suits = [s for s in range(cards.NUM_SUITS) if sum(cards.suit_of(c) == s for c in deck) >= 3]
        if suits and rng.random() < 0.6:
            suit = rng.choice(suits)
            hand = [c for c in deck if cards.suit_of(c) == suit][:3]
        else:
            hand = deck[:3]
        for card in hand:
            deck.remove(card)
        hands.append([cards.card_text(c, config.family) for c in hand])
    vira = cards.card_text(deck[0], config.family) if config.family in cards.TURNED_CARD_FAMILIES else None
    return {"hands": hands, "vira": vira}  # the Uruguayan muestra from the cards left


def _observation_entries(obs) -> tuple[list[int], list[list[float]]]:
    ones, values = [], []
    for i in obs.nonzero()[0].tolist():
        value = float(obs[i])  # a float32 widened exactly; JSON keeps it exactly
        if value == 1.0:
            ones.append(i)
        else:
            values.append([i, value])
    return ones, values


def triples(states: int, seed: int = 0):
    """Yield ``states`` triples, spread evenly over ``CONFIGS``."""
    per_config = [states // len(CONFIGS) + (1 if i < states % len(CONFIGS) else 0) for i in range(len(CONFIGS))]
    for index, ((name, preset, overrides), quota) in enumerate(zip(CONFIGS, per_config)):
        config = make_config(preset, **overrides)
        rng = random.Random(f"{seed}:{name}")
        made = match = 0
        while made < quota:
            found = _match_triples(name, config, rng, match=match + 1, made=made, room=quota - made)
            match += 1
            made += len(found)
            yield from found


def _match_triples(name: str, config, rng: random.Random, match: int, made: int, room: int) -> list[dict]:
    """One match from a drawn start (score, deal), played by the shared match loop (:func:`play_turns`) until
    ``room`` triples or :data:`MAX_DECISIONS_PER_MATCH`: each team random or the (cheapened) heuristic, a
    flor-rich deal drawn for the next hand whenever one starts. ``made`` triples came before (every third view
    is the full one)."""
    match_seed = rng.randrange(2 ** 31)
    state = TrucoState.new(config, seed=match_seed, score=_start_score(rng, config), deal=_flor_rich_deal(rng, config))
    kinds = [rng.choice(("random", "heuristic")) for _ in range(2)]
    players = {seat: HeuristicAgent(samples=12, bluff=0.2, seed=match_seed + seat)
               for seat in range(config.num_players) if kinds[seat % 2] == "heuristic"}
    found: list[dict] = []
    hand = [-1]

    def choose(seat: int) -> str:
        """Record the seat's triple, then decide."""
        if state.hand_index != hand[0]:  # a new hand: choose how the next one is dealt
            hand[0] = state.hand_index
            deal = _flor_rich_deal(rng, config)
            if deal is not None:
                state.force_next_deal(deal)
        obs = encode_observation(state, seat)
        mask = encode_action_mask(state)
        ones, values = _observation_entries(obs)
        found.append({"config": name, "match": match, "view": seat_view(state, seat, compact=(made + len(found)) % 3 != 0),
                      "ones": ones, "values": values, "mask": mask.nonzero()[0].tolist()})
        if seat in players:
            return actions.action_name(players[seat].act({"observation": obs, "action_mask": mask}), config.family)
        return rng.choice(state.legal_actions())

    play_turns(state, choose, until=lambda _: len(found) >= min(room, MAX_DECISIONS_PER_MATCH))
    return found


def _features() -> dict:
    """What a triple exercises, read from its view and observation (``coverage`` counts them)."""
    def bit(name, k=0):
        index = OBS_OFFSETS[name][0] + k
        return lambda t: index in t["ones"]

    def any_in(name):
        start, end = OBS_OFFSETS[name]
        return lambda t: any(start <= i < end for i in t["ones"])

    def last_actions(t):
        return [name for _, name in t["view"]["hands"][-1]["actions"]]

    out = {f"phase {phase}": bit("phase", k) for k, phase in enumerate(PHASES)}
    out.update({
        "mao de onze": bit("special_hand", 0),
        "mao de ferro": bit("special_hand", 1),
        "blind mao de ferro": bit("special_hand", 2),
        "partner's cards shown": any_in("partner_cards"),
        "face-down card on the table": any_in("covered"),
        "another seat's blind card": lambda t: any(a.startswith("play_slot:") and s != t["view"]["seat"]
                                                   for s, a in t["view"]["hands"][-1]["actions"]),
        "2v2": bit("num_players", 1),
        "3v3": bit("num_players", 2),
        "pica-pica duel": lambda t: "pair" in t["view"]["hands"][-1],
        "envido shown": lambda t: "envido_shown" in t["view"]["hands"][-1],
        "flor shown": lambda t: "flor_shown" in t["view"]["hands"][-1],
        "falta envido": lambda t: "falta_envido" in last_actions(t),
        "contraflor al resto": lambda t: "contraflor_al_resto" in last_actions(t),
        "several hands of history": lambda t: len(t["view"]["hands"]) > 1,
        "tally_before": lambda t: "tally_before" in t["view"],
        "a signal seen": lambda t: any(a.startswith("sena:") for _, a in t["view"]["hands"][-1]["actions"]),
        "an opponent's signal caught": lambda t: any(a.startswith("sena:") and s % 2 != t["view"]["seat"] % 2
                                                     for s, a in t["view"]["hands"][-1]["actions"]),
        "own signal caught": lambda t: bool(t["view"]["hands"][-1].get("sena_caught_by")),
        "uruguayan piezas": lambda t: any(URUGUAYAN_OFFSETS["piezas"][0] <= i < URUGUAYAN_OFFSETS["piezas"][1]
                                          for i in t["ones"]),
        "uruguayan flor shown": lambda t: ("flor_shown" in t["view"]["hands"][-1]
                                           and URUGUAYAN_OFFSETS["uruguayan"][0] in t["ones"]),
        "a player folded alone": lambda t: "mazo" in last_actions(t),  # mazo_scope: the hand went on after it
    })
    return out


def coverage(data: dict) -> dict[str, int]:
    """How many triples of ``data`` exercise each feature of ``_features``."""
    features = _features()
    return {name: sum(1 for t in data["triples"] if test(t)) for name, test in features.items()}


def export(states: int, seed: int = 0) -> dict:
    rules = {name: make_config(preset, **overrides).to_dict() for name, preset, overrides in CONFIGS}
    return {"format": "truco-rl-js-parity", "observation_version": OBSERVATION_VERSION, "seed": seed,
            "rules": rules, "triples": list(triples(states, seed))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--states", type=int, default=12_000, help="how many triples (default 12000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    data = export(args.states, args.seed)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(data, handle, separators=(",", ":"))
    print(f"{len(data['triples'])} triples over {len(data['rules'])} rule sets in "
          f"{time.perf_counter() - start:.1f} s -> {args.out}", file=sys.stderr)
    print("covers: " + ", ".join(f"{name} {count}" for name, count in coverage(data).items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
