"""A hostile ``truco-bot/1`` program: it plays legal actions and, with this project's code at hand, tries to
compute the deals from everything it receives (tests/test_protocol_hostile.py).

Candidates for the match seed: the seed of its ``match`` message taken as a match seed, the seed ``truco play``
once gave a program (``seed * 100 + seat``) undone, the small seeds 0..9 themselves, and the public match seed
of tournament seeds 0..9 for deal indices 0..59. A candidate is *found* when its deals give this seat exactly the
cards it holds at the start of enough hands that chance cannot explain it (two hands of three cards, four of one).
Each line it appends to the file named by its first argument: ``match``, ``hand`` (a hand it could check) or
``found <how> <seed>``.
"""

import json
import random
import sys

from training.measure.evaluate import match_seed_for
from truco_env import cards
from truco_env.config import make_config

log = open(sys.argv[1], "a")  # noqa: SIM115 (a line per event, for as long as the program runs)


def dealt_to(seed, deal, seat, mano, config):
    deck = list(cards.deck(config.family, config.deck, config.deck_ranks))
    random.Random(f"{seed}:{deal}").shuffle(deck)
    n = config.num_players
    return sorted(deck[k] for k in range(config.hand_size * n) if (mano + k) % n == seat)


config = None
candidates = {}
matched = {}
need = 2
rng = random.Random(0)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "match":
        config = make_config(message["preset"])
        seat, seed = message["seat"], message["seed"]
        rng = random.Random(seed)
        candidates = {("received", seed): seed, ("play", seed): (seed - seat) // 100}
        candidates.update({("small", t): t for t in range(10)})
        candidates.update({("tournament", t, d): match_seed_for(t, d) for t in range(10) for d in range(60)})
        matched = dict.fromkeys(candidates, 0)
        need = 2 if config.hand_size == 3 else 4
        checked = set()
        log.write("match\n")
    elif message["type"] == "act":
        hand_number = message["hand_number"]
        played = any(s == message["seat"] and c is not None for t in message["tricks"] for s, c in t["cards"])
        if message["hand"] is not None and not played and hand_number not in checked:
            checked.add(hand_number)
            mine = sorted(cards.parse_card(text, config.family) for text in message["hand"])
            log.write("hand\n")
            for key, candidate in candidates.items():
                if dealt_to(candidate, hand_number - 1, message["seat"], message["mano"], config) == mine:
                    matched[key] += 1
                    if matched[key] == need:
                        log.write(f"found {key[0]} {candidate}\n")
        log.flush()
        print(json.dumps({"action": rng.choice(message["legal"])["id"]}), flush=True)
