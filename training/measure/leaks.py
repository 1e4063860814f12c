"""Where one agent's points go against another: duplicate matches, each hand put in one category of how its
betting went, and the points agent A nets per match in each category (``truco leaks``, :func:`leak_table`).

    truco leaks --agents cfr:paulista heuristic --preset paulista --matches 2000

Why: a win rate says *that* an agent loses, not *where*. Two identical agents net zero in every pair of mirrored
categories (A called first / B called first), so against a reference pairing (the opponent against itself) a
category far from its mirror is a leak to look at. This found the hole of abstraction v3 in Paulista: the
blueprint's raises after accepting a truco lost 1.2 points a match.

A hand's category: ``no call``; a mão de onze (``onze A`` when A's side is at 11, ``onze B``) with whether the side
at 11 ``played`` or ``ran``; else the ladder calls in order, written with their callers (``B A B``: B called,
A raised, B raised again), and how the hand ended: ``fold`` (a call refused), ``mazo`` (a side left), or ``shown``
(the cards decided).
"""

from __future__ import annotations

from collections import Counter

from agents.base import check_preset, make_agent
from training.measure.behaviour import LADDER
from training.measure.evaluate import match_seed_for, play_match
from truco_env import PRESETS, make_config
from truco_env.config import unknown_preset


def hand_category(hand: dict, team_a: int, target: int) -> str:
    """The category of one hand record (``match_record()["hands"]``) from the side of ``team_a``."""
    before = hand["score_before"]
    actions = hand["actions"]
    names = [name for _, name in actions]
    at_eleven = [t for t in (0, 1) if before[t] == target - 1]
    if len(at_eleven) == 1:
        side = at_eleven[0]
        ran = hand["points"][side] == 0 and len(actions) <= 1
        return f"onze {'A' if side == team_a else 'B'} {'ran' if ran else 'played'}"
    calls = ["A" if seat % 2 == team_a else "B" for seat, name in actions if name in LADDER]
    if not calls:
        return "no call"
    end = "fold" if "no_quiero" in names else ("mazo" if "mazo" in names else "shown")
    return f"{' '.join(calls)} {end}"


def leak_table(preset: str, agent_a: str, agent_b: str, matches: int, seed: int = 0) -> tuple[dict, dict, float]:
    """(hands per category, A's net points per category, A's win rate) over ``matches`` duplicate matches (each
    deal played with both seatings, as :mod:`training.measure.evaluate` does)."""
    if matches < 2 or matches % 2:
        raise ValueError(f"--matches must be an even number of at least 2 (duplicate pairs), got {matches}")
    if preset not in PRESETS:
        raise unknown_preset(preset)
    config = make_config(preset)
    seats = range(config.num_players)
    made = {spec: [make_agent(spec) for _ in seats] for spec in (agent_a, agent_b)}  # may be the same spec
    for agents in made.values():
        check_preset(agents[0], preset)
    count: Counter = Counter()
    net: Counter = Counter()
    wins = 0
    for deal in range(matches // 2):
        for team_a in (0, 1):
            agents = [made[agent_a if seat % 2 == team_a else agent_b][seat] for seat in seats]
            for seat, agent in enumerate(agents):
                agent.seed(seed * 1_000_003 + 2 * deal + seat)
                agent.reset(seat)
            state, _, _ = play_match(config, agents, match_seed_for(seed, deal))
            wins += state.winner == team_a
            for hand in state.match_record()["hands"]:
                category = hand_category(hand, team_a, config.target_score)
                count[category] += 1
                net[category] += hand["points"][team_a] - hand["points"][1 - team_a]
    return dict(count), dict(net), wins / matches

