"""Play-time search (agents/cfr_search.py, ``cfr:PATH,search=MS``): on research games the searched policy, assembled
on the exact tree, is no more exploitable than the blueprint for either seat (exact NashConv); the search's
beliefs are exactly the tree's deals in each public state, weighted by the blueprint's reach; the agent searches
deterministically and legally on a full preset, follows the hand it is in, and refuses a bad budget or a
checkpoint it cannot search in one line."""

import random

import numpy as np
import pytest

from agents.base import make_agent, observation_for
from agents.cfr_search import Blueprint, HandSearch, root_from_info_string
from training.cfr.checkpoint import save_checkpoint
from training.cfr.mccfr import MCCFR
from training.cfr.mccfr_kernel import KernelMCCFR
from training.cfr.resolve import blueprint_policy, compare, infoset_roots
from training.cfr.solver import reaches
from training.cfr.tree import build_tree, deal_list
from truco_env import TrucoState, make_config
from truco_env import cards as C
from truco_env.encoding import encode_action_mask, encode_observation, information_state_string
from truco_env.fast import FastState

#: Small research games (as tests/test_mccfr_kernel.py): exact trees in well under a second.
SMALL = {"argentine-mini": {"deck_ranks": ("7",), "target_score": 2}, "paulista-mini": {"deck_ranks": ("K",)}}


def _blueprint(preset, iterations, overrides):
    rules = make_config(preset, **overrides)
    solver = KernelMCCFR(rules, seed=0, abstraction="lossless")
    solver.iterate(iterations)
    return rules, solver.to_checkpoint(preset)


def _check_safe(result):
    blue = result["blueprint"]
    for seat in (0, 1):  # the seat's exploitability: the other seat's best-response value against it
        assert result[f"seat{seat}"]["exploitability"] <= blue["exploitability"][seat], result
        assert result[f"seat{seat}"]["searches"] > 0.3 * result[f"seat{seat}"]["public_states"]
    assert result["searched"]["nash_conv"] < 0.8 * blue["nash_conv"], result


def test_search_is_no_more_exploitable_on_a_small_research_game():
    """A short blueprint (300 iterations), the search at every decision of one seat, then of the other: each
    seat's exact exploitability falls (measured 1.58 -> 0.52 and 0.86 at 2,000 nodes a search; 4,000 here)."""
    rules, ckpt = _blueprint("paulista-mini", 300, SMALL["paulista-mini"])
    _check_safe(compare(rules, ckpt, nodes=4000))


@pytest.mark.slow
@pytest.mark.parametrize("preset", [
    pytest.param("argentine-mini", marks=pytest.mark.xfail(strict=True, reason=(
        "measured 2026-12-02: this blueprint (exploitability 0.913 a seat) is better than what 10,000-node "
        "searches reach on argentine-mini; searched, 1.630 and 1.702; at the play-time budget of 80,000 nodes "
        "still 1.032 and 0.950 (docs/cfr.md, 'Exact check')"))),
    "paulista-mini"])
def test_search_is_no_more_exploitable_on_the_research_presets(preset):
    """The numbers of docs/cfr.md: a 10,000-iteration lossless blueprint, 10,000 walked nodes a search (7 and
    2 minutes of CPU). The guarantee holds for a solved gadget; a search cut short has a noise floor, and a
    blueprint already below it comes out worse (argentine-mini, marked)."""
    rules, ckpt = _blueprint(preset, 10000, {})
    _check_safe(compare(rules, ckpt, nodes=10000))


@pytest.mark.parametrize("preset", sorted(SMALL))
def test_beliefs_are_the_deals_of_the_public_state_weighted_by_the_blueprint(preset):
    """At every public state where a seat acts, the deals the search keeps are exactly the deals of the exact
    tree's histories there, each weighted by the seat's own reach under the blueprint (the chain of a hand's
    first search is the blueprint)."""
    rules, ckpt = _blueprint(preset, 200, SMALL[preset])
    tree = build_tree(rules)
    roots = infoset_roots(tree)
    blue = blueprint_policy(tree, ckpt, roots)
    own_reach = reaches(tree, blue)
    deals = deal_list(rules)
    root_of = np.arange(tree.num_nodes)
    for node in range(tree.level_start[1], tree.num_nodes):
        root_of[node] = root_of[tree.parent[node]]
    search = HandSearch(Blueprint(ckpt.keys, ckpt.slot_start, ckpt.slot_action, ckpt.average_policy(), "lossless"),
                        rules)
    expected: dict[tuple, dict] = {}
    for node in np.flatnonzero(tree.infoset >= 0):
        r = roots[int(tree.infoset[node])]
        _, hand0, hand1, _ = deals[root_of[node]]
        cards = tuple(C.parse_card(c, rules.family) for c in hand0 + hand1)
        state = (r.seat, r.dealer, r.history, r.obs.tobytes())
        expected.setdefault(state, {})[cards] = own_reach[r.seat][node]
    checked = 0
    for r in roots:
        want = expected.pop((r.seat, r.dealer, r.history, r.obs.tobytes()), None)
        if want is None:
            continue  # an information set already checked (the same cards and history: one state)
        cards, weight = search.beliefs(r, follow=False)
        got = {tuple(row.tolist()): w for row, w in zip(cards, weight) if w >= 0}
        # the tree's states here hold the seat's own cards; beliefs hold every hand it may have
        got_own = {c: w for c, w in got.items() if c[r.seat] == r.dealt[0]}
        assert got_own.keys() == want.keys()
        assert np.allclose([got_own[c] for c in want], list(want.values()), atol=1e-12)
        checked += 1
    assert checked > 100


def _kernel_checkpoint(tmp_path, preset="paulista", iterations=2000, abstraction="v3"):
    solver = KernelMCCFR(make_config(preset), seed=0, abstraction=abstraction, utility="match_equity")
    solver.iterate(iterations)
    path = tmp_path / f"{preset}.npz"
    save_checkpoint(path, solver.to_checkpoint(preset))
    return path


def _play(agent, rules, seeds, opponent_seed=0):
    """The agent at seat 0 against uniform random play; its actions, all checked legal."""
    rng = random.Random(opponent_seed)
    actions = []
    for seed in seeds:
        agent.seed(seed)
        agent.reset(0)
        st = FastState.new(rules, seed=seed)
        while not st.is_over:
            if st.actor == 0:
                action = int(agent.act(observation_for(agent, st, 0)))
                assert st.legal_mask()[action]
                actions.append(action)
            else:
                action = rng.choice(st.legal_ids())
            st.apply_id(action)
    return actions


@pytest.mark.parametrize("abstraction", ["v3", "v4"])
def test_agent_searches_deterministically_on_a_full_preset(tmp_path, abstraction):
    """``cfr:PATH,search=MS`` on a v3 or v4 checkpoint: legal actions, the same ones for the same seed, searches that
    reach the decision they were made for, and the budget as walked nodes."""
    from agents.cfr_search import NODES_PER_MS

    path = _kernel_checkpoint(tmp_path, abstraction=abstraction)
    rules = make_config("paulista")
    agent = make_agent(f"cfr:{path},search=20")
    assert "info_state_string" in agent.wants and agent.search_ms == 20.0
    first = _play(agent, rules, range(2))
    stats = dict(agent.search_stats)
    assert stats["searches"] > 10 and stats["reached"] >= 0.8 * stats["searches"]
    assert stats["nodes"] <= stats["searches"] * (20 * NODES_PER_MS + 3000)  # the budget, plus one last iteration
    again = make_agent(f"cfr:{path},search=20")
    assert _play(again, rules, range(2)) == first
    assert again.search_stats["iterations"] == stats["iterations"]


def test_each_hand_starts_a_new_chain(tmp_path):
    """The searches of one hand build on each other; the first decision of the next hand starts afresh."""
    path = _kernel_checkpoint(tmp_path, iterations=500)
    rules = make_config("paulista")
    agent = make_agent(f"cfr:{path},search=1")
    st = FastState.new(rules, seed=3)
    rng = random.Random(1)
    lengths = []
    while not st.is_over and st.hand_index < 3:
        if st.actor == 0 and st.legal_mask().sum() > 1:
            hand = st.hand_index
            action = int(agent.act(observation_for(agent, st, 0)))
            lengths.append((hand, len(agent._search._roots)))
        else:
            action = rng.choice(st.legal_ids())
        st.apply_id(action)
    firsts = {}
    for hand, length in lengths:
        firsts.setdefault(hand, length)
    assert set(firsts.values()) == {1} and len(firsts) >= 2
    assert max(length for _, length in lengths) >= 2


@pytest.mark.parametrize("preset", ["argentine", "paulista"])
def test_root_from_the_information_state_string(preset):
    """The hand's start, the seat's dealt cards and the hand's actions read back from the string a seat sees."""
    rules = make_config(preset)
    rng = random.Random(4)
    checked = 0
    for seed in range(20):
        st = TrucoState.new(rules, seed=seed, score=[rng.randrange(rules.target_score) for _ in range(2)])
        while not st.is_over and checked < 200:
            seat = st.actor
            record = st.hand_records[-1]
            root = root_from_info_string(information_state_string(st, seat), encode_observation(st, seat),
                                         encode_action_mask(st), rules)
            assert (root.seat, root.dealer, root.score) == (seat, record["dealer"], tuple(record["score_before"]))
            assert root.dealt == tuple(C.parse_card(c, rules.family) for c in record["deal"]["hands"][seat])
            vira = record["deal"]["vira"]
            assert root.vira == (-1 if vira is None else C.parse_card(vira, rules.family))
            assert [s for s, _ in root.history] == [s for s, _ in record["actions"]]
            checked += 1
            st.apply(rng.choice(st.legal_actions()))
    assert checked == 200


@pytest.mark.parametrize("value", ["0", "-5", "abc", "nan", "inf", ""])
def test_a_bad_search_budget_is_a_one_line_error(tmp_path, value):
    path = _kernel_checkpoint(tmp_path, iterations=50)
    with pytest.raises(ValueError, match=r"search must be a number of milliseconds per decision above 0") as err:
        make_agent(f"cfr:{path},search={value}")
    assert "\n" not in str(err.value) and repr(value) in str(err.value)


def test_search_needs_a_checkpoint_of_the_compiled_walk(tmp_path):
    solver = MCCFR(make_config("paulista"), seed=0, abstraction="v2")
    solver.iterate(5)
    path = tmp_path / "v2.npz"
    save_checkpoint(path, solver.to_checkpoint("paulista"))
    make_agent(f"cfr:{path}")  # plays without search
    with pytest.raises(ValueError, match="search needs a checkpoint of the compiled walk") as err:
        make_agent(f"cfr:{path},search=200")
    assert "\n" not in str(err.value)
