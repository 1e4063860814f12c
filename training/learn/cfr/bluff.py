"""The bluffing of an equilibrium: call probabilities against hand strength on a research preset
(:func:`call_profile`). ``python -m benchmarks.bluff`` draws docs/img/bluff_<preset>.svg from it.

For every call (truco ladder, envido ladder) and every value of the relevant hand strength (the own card's trick
strength 1..14 for ladder calls, its envido points for envido calls), the probability that the equilibrium makes
that call when it may, averaged over the information sets where the call is legal, weighted by how often the
equilibrium reaches them (chance x both players' reach). Also the share of all raises (reach-weighted) made with
the weakest hands: the lowest third of the preset's cards by the relevant strength.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from training.learn.cfr.solver import reaches
from training.learn.cfr.tree import GameTree
from truco_env import actions, cards

LADDER = ("truco", "retruco", "vale_cuatro", "seis", "nove", "doze")
ENVIDO = ("envido", "real_envido", "falta_envido")


def _own_card(key: str, family: str) -> tuple[int, int | None]:
    rest = key.split("|", 1)[1]
    own, vira = rest.split("/")[:2]
    card = cards.parse_card(own.split(",")[0], family)
    return card, None if vira == "None" else cards.parse_card(vira, family)


def call_profile(tree: GameTree, policy: np.ndarray) -> dict:
    cfg = tree.config
    family = cfg.family
    r0, r1 = reaches(tree, policy)
    reach = r0 * r1 * tree.chance
    weight = np.bincount(tree.infoset[tree.infoset >= 0], weights=reach[tree.infoset >= 0],
                         minlength=tree.num_infosets)
    names = actions.action_names(family)
    calls = {}
    deck = cards.deck(family, cfg.deck, cfg.deck_ranks)
    for i, key in enumerate(tree.infoset_keys):
        w = weight[i]
        if w <= 0:
            continue
        card, vira = _own_card(key, family)
        strength = cards.strength_table(family, vira, cfg.deck, cfg.deck_ranks)[card]
        env = cards.envido_of([card])
        for s in range(tree.slot_start[i], tree.slot_start[i + 1]):
            name = names[tree.slot_action[s]]
            if name in LADDER or name in ENVIDO:
                x = env if name in ENVIDO else strength
                entry = calls.setdefault(name, defaultdict(lambda: [0.0, 0.0]))
                entry[x][0] += w * policy[s]
                entry[x][1] += w
    out = {}
    for name, by_x in calls.items():
        xs = sorted(by_x)
        if name in ENVIDO:
            values = sorted(cards.envido_of([c]) for c in deck)
        else:
            values = sorted(cards.strength_table(family, v, cfg.deck, cfg.deck_ranks)[c] for c in deck for v in
                            ([None] if family == cards.ARGENTINE else [v for v in deck if v != c]))
        weak_cut = values[max(0, len(values) // 3 - 1)]
        made = sum(by_x[x][0] for x in xs)
        weak = sum(by_x[x][0] for x in xs if x <= weak_cut)
        out[name] = {"strength": "envido points" if name in ENVIDO else "trick strength",
                     "x": xs, "p": [by_x[x][0] / by_x[x][1] for x in xs],
                     "frequency": made, "weak_threshold": weak_cut,
                     "share_with_weakest_third": (weak / made) if made > 0 else 0.0}
    return out
