"""Speed of the Gymnasium interfaces: learner steps per second, uniform random play against random opponents.

Rows, all in this process and one run:

* the single-agent view (``gymnasium.make(SINGLE_AGENT_ID)``) on the compiled engine, as it ships;
* the baseline: the same view with the readable reference engine swapped back underneath (how it ran before it
  moved to the compiled engine; only the engine differs);
* the vector env (``gymnasium.make_vec(SINGLE_AGENT_ID, num_envs=256)``), a batch of learner steps per call.

```bash
python -m benchmarks.single_agent               # argentine, 10 s per row
python -m benchmarks.single_agent --quick       # 2 s per row
```
"""

from __future__ import annotations

import argparse
import json
import os
import time
from unittest import mock

import gymnasium
import numpy as np

import truco_env
from truco_env import encoding
from truco_env.actions import action_name
from truco_env.engine import TrucoState


class ReferenceState:
    """The compiled engine's interface that the view uses, answered by the reference engine."""

    def __init__(self, state: TrucoState):
        self.state = state

    @classmethod
    def new(cls, config, seed=None, deal=None, score=None) -> ReferenceState:
        return cls(TrucoState.new(config, seed=seed, deal=deal, score=score))

    def __getattr__(self, name: str):
        return getattr(self.state, name)

    def apply_id(self, action_id: int) -> None:
        self.state.apply(action_name(action_id, self.state.family))

    def legal_mask(self) -> np.ndarray:
        return encoding.encode_action_mask(self.state)

    def hand_points(self, index: int) -> list[int]:
        return list(self.state.hand_records[index]["points"])

    def observation_buffer(self) -> np.ndarray:
        return np.zeros(encoding.OBSERVATION_SIZE, dtype=np.float32)

    def encode_observation(self, viewer: int, out: np.ndarray) -> np.ndarray:
        return encoding.encode_observation(self.state, viewer, out)


def view_rate(preset: str, seconds: float) -> float:
    """Learner steps per second of the single-agent view, random legal actions, whole matches."""
    env = gymnasium.make(truco_env.SINGLE_AGENT_ID, preset=preset)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        legal = np.flatnonzero(info["action_mask"])
        _, _, terminated, _, info = env.step(int(legal[rng.integers(legal.size)]))
        steps += 1
        if terminated:
            _, info = env.reset()
    return steps / (time.perf_counter() - start)


def vector_rate(preset: str, seconds: float, num_envs: int = 256) -> float:
    """Learner steps per second of the vector env (random legal actions sampled in one numpy call)."""
    envs = gymnasium.make_vec(truco_env.SINGLE_AGENT_ID, num_envs=num_envs, preset=preset)
    rng = np.random.default_rng(0)
    _, info = envs.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        mask = info["action_mask"]
        cdf = np.cumsum(mask, axis=1)
        actions = (cdf <= rng.random((num_envs, 1)) * cdf[:, -1:]).sum(axis=1)
        _, _, _, _, info = envs.step(actions)
        steps += num_envs
    envs.close()
    return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.single_agent", description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="argentine")
    parser.add_argument("--quick", action="store_true", help="2 s per row")
    args = parser.parse_args(argv)
    seconds = 2.0 if args.quick else 10.0
    load = os.getloadavg()
    view_rate(args.preset, 0.5)  # compile and warm up
    vector_rate(args.preset, 0.5)
    compiled = view_rate(args.preset, seconds)
    with mock.patch("truco_env.single.FastState", ReferenceState):
        reference = view_rate(args.preset, seconds)
    vector = vector_rate(args.preset, seconds)
    rows = [("single-agent view, reference engine (baseline)", reference),
            ("single-agent view, compiled engine", compiled),
            ("vector env, 256 matches (make_vec)", vector)]
    print(f"{args.preset}: learner steps/s, random play against random opponents")
    for name, rate in rows:
        print(f"  {name:48s} {rate:12,.0f}   {rate / reference:6.1f}x baseline")
    print(f"load average (1, 5, 15 min) at start {load}, at end {os.getloadavg()} on {os.cpu_count()} CPUs")
    print(json.dumps({"preset": args.preset, "reference_view": reference, "compiled_view": compiled,
                      "vector_env": vector, "load_start": load, "load_end": os.getloadavg()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
