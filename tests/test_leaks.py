"""training/measure/leaks.py (truco leaks): each hand in one betting category, A's net points per category; identical
agents net exactly zero between mirrored categories, and bad input is a one-line error."""

import pytest

from training.cli import main
from training.measure.leaks import hand_category, leak_table


def _mirror(category: str) -> str:
    return category.translate(str.maketrans("AB", "BA"))


def test_identical_agents_mirror_each_other_exactly():
    count, net, rate = leak_table("paulista", "heuristic", "heuristic", matches=20, seed=3)
    assert rate == 0.5 and sum(net.values()) == 0
    assert len(count) > 5
    for category in count:
        assert count[_mirror(category)] == count[category]
        assert net[_mirror(category)] == -net[category]


def test_categories_of_hand_records():
    def hand(actions, points, before=(0, 0)):
        return {"score_before": list(before), "actions": actions, "points": list(points)}

    plays = [[0, "play:3d"], [1, "play:Qc"]]
    assert hand_category(hand(plays, (0, 1)), 0, 12) == "no call"
    assert hand_category(hand([[1, "truco"], [0, "no_quiero"]], (0, 1)), 0, 12) == "B fold"
    assert hand_category(hand([[1, "truco"], [0, "no_quiero"]], (0, 1)), 1, 12) == "A fold"
    raised = [[0, "truco"], [1, "quiero"], *plays, [1, "seis"], [0, "nove"], [1, "quiero"]]
    assert hand_category(hand(raised, (9, 0)), 0, 12) == "A B A shown"
    assert hand_category(hand([[0, "mazo"]], (0, 1), before=(11, 4)), 0, 12) == "onze A ran"
    assert hand_category(hand(plays, (0, 3), before=(11, 4)), 1, 12) == "onze B played"


@pytest.mark.parametrize("argv, message", [
    (["--agents", "heuristic", "random", "--preset", "paulista", "--matches", "3"], "even number"),
    (["--agents", "heuristic", "random", "--preset", "pauli"], "unknown preset 'pauli'"),
    (["--agents", "heuristc", "random", "--preset", "paulista"], "heuristc"),
])
def test_bad_input_is_one_line(argv, message, capsys):
    assert main(["leaks", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
