"""Python's ``random.Random`` stream on a plain array, so that compiled code draws exactly the same numbers.

Why: the heuristic's decisions are pinned to the numbers its ``random.Random`` draws (cached tournament results
and imitation data depend on them), and its look-ahead now runs in compiled code. Handing a ``random.Random``
state to compiled code and back costs more than the decision itself, so the state lives here instead, as the
624 words and the position of CPython's Mersenne Twister in one int64 array, and both sides draw from it:
compiled code through :func:`mt_sample`, :func:`mt_random` and :func:`mt_randbelow`, Python through
:class:`MersenneStream`, whose ``getstate``/``setstate`` speak ``random.Random``'s format. The draws follow
CPython's ``_randommodule.c`` and ``random.py`` (``getrandbits`` for up to 32 bits, ``_randbelow`` by
rejection, ``sample``'s two algorithms, ``random``'s 53-bit float); ``tests/test_mersenne.py`` checks them
against the running interpreter's ``random.Random``.
"""

from __future__ import annotations

import math
import random

import numpy as np
from numba import njit

N, M = 624, 397
STATE_SIZE = N + 1  # the words, then the position
_MATRIX_A = 0x9908B0DF
_UPPER, _LOWER, _WORD = 0x80000000, 0x7FFFFFFF, 0xFFFFFFFF


@njit(cache=True)
def _refill(st):
    for kk in range(N):
        y = (st[kk] & _UPPER) | (st[(kk + 1) % N] & _LOWER)
        st[kk] = st[(kk + M) % N] ^ (y >> 1) ^ (_MATRIX_A if y & 1 else 0)
    st[N] = 0


@njit(cache=True)
def mt_uint32(st):
    """The next 32-bit word (CPython's ``genrand_uint32``)."""
    if st[N] >= N:
        _refill(st)
    y = st[st[N]]
    st[N] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & _WORD


@njit(cache=True)
def mt_randbelow(st, n):
    """``random.Random._randbelow(n)`` for ``0 < n < 2**32``: ``n.bit_length()`` bits, redrawn while too big."""
    k = 0
    m = n
    while m:
        k += 1
        m >>= 1
    r = mt_uint32(st) >> (32 - k)
    while r >= n:
        r = mt_uint32(st) >> (32 - k)
    return r


@njit(cache=True)
def mt_random(st):
    """``random.Random.random()``: a float in [0, 1) from two words."""
    a = mt_uint32(st) >> 5
    b = mt_uint32(st) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)


#: ``random.Random.sample``'s threshold between its two algorithms, by sample size ``k`` (computed by the same
#: floating-point expression as ``random.py``, so the choice is the interpreter's own).
SAMPLE_SETSIZE = np.array([21 + (4 ** math.ceil(math.log(k * 3, 4)) if k > 5 else 0) for k in range(64)],
                          dtype=np.int64)


@njit(cache=True)
def mt_sample(st, population, n, k, out, scratch, setsize):
    """``random.Random.sample(population[:n], k)`` into ``out[:k]``; ``scratch`` holds at least ``n`` entries and
    ``setsize`` is ``SAMPLE_SETSIZE``."""
    if n <= setsize[k]:
        for i in range(n):
            scratch[i] = population[i]
        for i in range(k):
            j = mt_randbelow(st, n - i)
            out[i] = scratch[j]
            scratch[j] = scratch[n - i - 1]
    else:  # rejection of indices already taken
        for i in range(k):
            j = mt_randbelow(st, n)
            taken = True
            while taken:
                taken = False
                for q in range(i):
                    if scratch[q] == j:
                        taken = True
                        j = mt_randbelow(st, n)
                        break
            scratch[i] = j
            out[i] = population[j]


class MersenneStream:
    """A ``random.Random`` look-alike whose state is the array ``state`` (int64, ``STATE_SIZE``): the same
    seeding, the same ``random``, ``randrange(n)`` and ``sample`` draws, and the same ``getstate`` tuple."""

    __slots__ = ("state",)

    def __init__(self, seed: int | None = None):
        self.state = np.zeros(STATE_SIZE, dtype=np.int64)
        self.seed(seed)

    def seed(self, seed: int | None = None) -> None:
        self.setstate(random.Random(seed).getstate())

    def getstate(self) -> tuple:
        return 3, tuple(int(x) for x in self.state), None

    def setstate(self, state: tuple) -> None:
        version, words, _gauss = state
        if version != 3 or len(words) != STATE_SIZE or not 0 <= words[-1] <= N:
            raise ValueError("MersenneStream.setstate: expected a random.Random state of version 3")
        self.state[:] = words

    def random(self) -> float:
        return float(mt_random(self.state))

    def randrange(self, n: int) -> int:
        if not 0 < n < 2 ** 32:
            raise ValueError(f"MersenneStream.randrange: n must be in 1..2**32-1, got {n!r}")
        return int(mt_randbelow(self.state, n))

    def sample(self, population, k: int) -> list:
        population = list(population)
        n = len(population)
        if not 0 <= k <= n or k >= len(SAMPLE_SETSIZE):
            raise ValueError(f"MersenneStream.sample: k must be in 0..{min(n, len(SAMPLE_SETSIZE) - 1)}, got {k!r}")
        index = np.arange(n, dtype=np.int64)
        out = np.zeros(k, dtype=np.int64)
        mt_sample(self.state, index, n, k, out, np.zeros(max(n, 1), dtype=np.int64), SAMPLE_SETSIZE)
        return [population[int(i)] for i in out]
