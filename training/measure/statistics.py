"""The statistics every measurement shares: Wilson intervals for win rates, an exact binomial test, and the
one-line verdict a tournament prints for a pairing."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (``successes`` may count draws as halves)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def binomial_two_sided_p(k: int, n: int) -> float:
    """Exact two-sided binomial test of ``k`` successes in ``n`` against p = 1/2."""
    if n <= 0:
        return 1.0
    tail = min(k, n - k)
    log_half = -n * math.log(2)
    total = sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half)
                for i in range(tail + 1))
    return min(1.0, 2 * total) if 2 * tail != n else 1.0


def verdict(low: float, high: float, a: str, b: str) -> str:
    if low > 0.5:
        return f"{a} stronger (95%)"
    if high < 0.5:
        return f"{b} stronger (95%)"
    return "no significant difference"
