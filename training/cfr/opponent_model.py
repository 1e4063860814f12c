"""A frequency model of a fixed opponent in the MCCFR abstraction, for a data-biased response.

Why: an MCCFR equilibrium of the abstract game does not try to win more from a given bot than its mistakes
give away. A *data-biased response* (Johanson and Bowling, "Data Biased Robust Counter Strategies", AISTATS
2009) trains against an opponent that, at each abstract information set, plays the observed frequencies of the
modelled bot with a weight that grows with the number of observations there, and otherwise plays a strategy
that is itself learned by regret minimisation (so the response stays robust where the model knows little).

This module builds that model: it plays ``matches`` matches of the modelled agent against itself (seeds
``truco-model:<seed>:<i>``, disjoint from ``truco eval``'s ``truco-eval:<seed>:<deal>``), and at every
decision of either seat counts the abstract action code taken under the seat's abstract key, read from the
seat's information-state string as :class:`agents.cfr.CFRAgent` reads it at play time.

The model is stored inside the MCCFR checkpoint as plain numeric arrays (``model_*`` extras), so a resumed run
uses the same model and a checkpoint stays loadable without pickles.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from agents.base import Agent, make_agent
from agents.cfr_abstraction import VERSION, _code, _order, key_from_info_string
from truco_env import actions as A
from truco_env.config import TrucoConfig


def model_match_seed(seed: int, index: int) -> int:
    return random.Random(f"truco-model:{seed}:{index}").getrandbits(48)


class _Recorder(Agent):
    """Plays ``inner`` and counts, per abstract key, the abstract code of every action it takes."""

    def __init__(self, inner: Agent, config: TrucoConfig, version: str, counts: dict):
        self.inner = inner
        self.wants = frozenset(inner.wants) | {"info_state_string"}
        self.config = config
        self.version = version
        self.counts = counts

    def seed(self, seed: int | None = None) -> None:
        self.inner.seed(seed)

    def reset(self, seat: int | None = None) -> None:  # a new match: the agent forgets the last (the heuristic's memory)
        self.inner.reset(seat)

    def act(self, observation: dict[str, Any]) -> int:
        action = int(self.inner.act(observation))
        family = self.config.family
        legal = [A.action_name(int(a), family) for a in np.flatnonzero(observation["action_mask"])]
        key, view = key_from_info_string(observation["info_state_string"], self.config, legal, self.version)
        code = _code(family, _order(view), A.action_name(action, family))
        row = self.counts.setdefault(key, {})
        row[code] = row.get(code, 0) + 1
        return action


class OpponentModel:
    """Per abstract key: how often each abstract action code was chosen by the modelled agent."""

    def __init__(self, counts: dict[str, dict[int, int]] | None = None, spec: str = "", matches: int = 0):
        self.counts = counts or {}
        self.spec = spec
        self.matches = matches
        self._cache: dict[str, tuple[int, dict[int, float]]] = {}

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def decisions(self) -> int:
        return sum(sum(row.values()) for row in self.counts.values())

    @classmethod
    def collect(cls, config: TrucoConfig, spec: str, matches: int, seed: int = 0, version: str = VERSION,
                progress=None) -> OpponentModel:
        """Play ``matches`` self-play matches of agent ``spec`` and count its abstract actions."""
        from training.evaluate import play_match

        counts: dict = {}
        seats = []
        for s in range(config.num_players):
            agent = make_agent(spec)
            seats.append(_Recorder(agent, config, version, counts))
        for i in range(matches):
            for s, rec in enumerate(seats):
                rec.seed(random.Random(f"truco-model-agent:{seed}:{i}:{s}").getrandbits(32))
            play_match(config, seats, model_match_seed(seed, i))
            if progress is not None:
                progress(i + 1)
        return cls(counts, spec, matches)

    def weighted(self, key: str, full_count: int) -> tuple[float, dict[int, float]] | None:
        """``(confidence, {code: frequency})`` for ``key``, confidence = min(1, n / full_count); None if unseen."""
        hit = self._cache.get(key)
        if hit is None:
            row = self.counts.get(key)
            if not row:
                return None
            n = sum(row.values())
            hit = self._cache[key] = (n, {c: k / n for c, k in row.items()})
        return min(1.0, hit[0] / full_count), hit[1]

    # --- storage as plain arrays (checkpoint extras) -------------------------------------------------------
    def to_arrays(self) -> dict[str, np.ndarray]:
        keys = list(self.counts)
        start, codes, counts = [0], [], []
        for key in keys:
            for code, n in sorted(self.counts[key].items()):
                codes.append(code)
                counts.append(n)
            start.append(len(codes))
        return {"model_keys": np.frombuffer("\n".join(keys).encode(), dtype=np.uint8),
                "model_start": np.asarray(start, dtype=np.int64),
                "model_codes": np.asarray(codes, dtype=np.int16),
                "model_counts": np.asarray(counts, dtype=np.int64)}

    @classmethod
    def from_arrays(cls, extra: dict, spec: str = "", matches: int = 0) -> OpponentModel:
        try:
            text = np.asarray(extra["model_keys"], dtype=np.uint8).tobytes().decode("utf-8")
            start = np.asarray(extra["model_start"], dtype=np.int64)
            codes = np.asarray(extra["model_codes"]).astype(int)
            counts = np.asarray(extra["model_counts"]).astype(int)
        except (KeyError, UnicodeDecodeError) as exc:
            raise ValueError(f"checkpoint's opponent model is missing or corrupt ({exc})") from None
        keys = text.split("\n") if text else []
        if len(start) != len(keys) + 1 or (len(keys) and start[-1] != len(codes)) or len(codes) != len(counts) \
                or np.any(np.diff(start) <= 0) or np.any(counts <= 0):
            raise ValueError("checkpoint's opponent model is inconsistent (keys, offsets and counts disagree)")
        table = {key: {int(c): int(n) for c, n in zip(codes[start[i]:start[i + 1]], counts[start[i]:start[i + 1]])}
                 for i, key in enumerate(keys)}
        return cls(table, spec, matches)
