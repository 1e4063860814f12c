"""OpenSpiel cross-check through the adapter (truco_env.spiel): OpenSpiel's own nash_conv of a policy equals ours
within 1e-6, and OpenSpiel's CFR+ (Python and C++) reaches the same NashConv as ours after the same iterations.
Skipped only when open-spiel (the `spiel` extra) is not installed."""

import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import cfr as os_cfr
from open_spiel.python.algorithms import exploitability

from training.learn.cfr.solver import CFRSolver, nash_conv, uniform_policy
from training.learn.cfr.spiel_bridge import TreePolicy, cpp_policy_to_tree, tabular_to_tree
from training.learn.cfr.tree import build_tree
from truco_env import make_config, spiel

SMALL = [("argentine-mini", {"deck_ranks": ("7",), "target_score": 1}), ("paulista-mini", {"deck_ranks": ("K",)})]


def test_research_presets_are_registered():
    names = set(pyspiel.registered_names())
    for preset in spiel.RESEARCH_PRESETS:
        assert spiel.game_name(preset) in names
    game = pyspiel.load_game("truco_argentine_mini", {"deck_ranks": "7", "target_score": 3})
    assert game.config.deck_ranks == ("7",) and game.config.target_score == 3
    assert game.num_distinct_actions() == 98 and game.num_players() == 2


@pytest.mark.parametrize("preset,overrides", SMALL)
def test_our_nash_conv_equals_openspiel(preset, overrides):
    cfg = make_config(preset, **overrides)
    tree = build_tree(cfg)
    game = spiel.TrucoSpielGame.from_config(cfg, preset=preset)
    solver = CFRSolver(tree)
    solver.iterate(4)
    for probs in (uniform_policy(tree), solver.current_policy(), solver.average_policy()):
        ours = nash_conv(tree, probs)
        theirs = exploitability.nash_conv(game, TreePolicy(game, tree, probs))
        assert abs(ours - theirs) <= 1e-6, (ours, theirs)


@pytest.mark.parametrize("preset,overrides", SMALL[1:])
def test_same_iterates_as_openspiel_cfr_plus(preset, overrides):
    cfg = make_config(preset, **overrides)
    tree = build_tree(cfg)
    game = spiel.TrucoSpielGame.from_config(cfg, preset=preset)
    ours = CFRSolver(tree, algorithm="cfr+")
    ours.iterate(3)
    py_solver = os_cfr.CFRPlusSolver(game)
    cpp_solver = pyspiel.CFRPlusSolver(game)
    for _ in range(3):
        py_solver.evaluate_and_update_policy()
        cpp_solver.evaluate_and_update_policy()
    expected = ours.nash_conv()
    assert nash_conv(tree, tabular_to_tree(tree, py_solver.average_policy())) == pytest.approx(expected, abs=1e-9)
    assert nash_conv(tree, cpp_policy_to_tree(tree, cpp_solver.tabular_average_policy())) == pytest.approx(
        expected, abs=1e-9)
    del cpp_solver


@pytest.mark.slow
@pytest.mark.parametrize("preset,params", [("paulista-mini", {"deck_ranks": "A,2"}),
                                           ("argentine-mini", {"deck_ranks": "7"})])
def test_nash_conv_equals_openspiel_on_larger_variants(preset, params):
    # OpenSpiel's Python tree walks need ~125 kB per history: the full presets do not fit in 23 GB
    game = pyspiel.load_game(spiel.game_name(preset), params)
    tree = build_tree(game.config)
    solver = CFRSolver(tree)
    solver.iterate(5)
    probs = solver.average_policy()
    assert abs(nash_conv(tree, probs) - exploitability.nash_conv(game, TreePolicy(game, tree, probs))) <= 1e-6
