"""agents.mersenne draws exactly what the running interpreter's random.Random draws: the heuristic's pinned decisions
rest on it."""
from __future__ import annotations

import random

import pytest

from agents.mersenne import MersenneStream


@pytest.mark.parametrize("seed", [0, 1, 2024, 2 ** 31 - 1, 2 ** 40 + 7, None])
def test_same_state_and_draws_as_random_random(seed):
    reference = random.Random(seed)
    stream = MersenneStream()
    stream.setstate(reference.getstate())  # seed None: urandom, so copy the state over
    if seed is not None:
        assert MersenneStream(seed).getstate() == reference.getstate()
    for i in range(4000):  # past several refills of the 624 words
        op = i % 5
        if op == 0:
            assert stream.random() == reference.random()
        elif op == 1:
            n = 1 + (i * 7919) % 100_000
            assert stream.randrange(n) == reference.randrange(n)
        elif op == 2:  # small populations: the pool algorithm
            population = list(range(3 + i % 38))
            k = i % (len(population) + 1)
            assert stream.sample(population, k) == reference.sample(population, k)
        elif op == 3:  # large populations: the rejection (set) algorithm, and k > 5
            population = [f"c{j}" for j in range(100)]
            k = (i // 5) % 30
            assert stream.sample(population, k) == reference.sample(population, k)
        else:
            assert stream.randrange(1) == reference.randrange(1) == 0
    assert stream.getstate() == reference.getstate()


def test_setstate_refuses_what_is_not_a_random_state():
    stream = MersenneStream(1)
    with pytest.raises(ValueError, match="version 3"):
        stream.setstate((2, tuple(range(625)), None))
    with pytest.raises(ValueError, match="version 3"):
        stream.setstate((3, (0,) * 624 + (625,), None))
    with pytest.raises(ValueError, match="randrange"):
        stream.randrange(0)
    with pytest.raises(ValueError, match="sample"):
        stream.sample([1, 2], 3)
