"""Speed of the heuristic: decisions per second, before (the readable reference) and after (compiled), one at a
time and batched.

For each preset it plays the same seeded matches three times on the vector env, the heuristic holding every seat
of one team and seeded random play the other (as the issue that asked for the compiled heuristic measured it),
and times only the heuristic's decisions:

* **reference**: :class:`agents.heuristic_reference.ReferenceHeuristic`, the Python implementation the heuristic
  was before it was compiled, one ``act`` per decision;
* **compiled**: :class:`agents.heuristic.HeuristicAgent`, one ``act`` per decision;
* **batched**: the same agents through :func:`agents.act_many`, one call per step for every table waiting on a
  heuristic (``--tables`` tables).

The three play identical matches (the implementations decide alike, which the run checks), so they time the same
decisions. It prints a table with each rate and its ratio to the reference, then a JSON line with every figure
and the machine's load average (a busy machine moves every number).

```bash
python -m benchmarks.heuristic            # argentine, argentine-2v2, paulista, paulista-2v2
python -m benchmarks.heuristic --quick    # a smoke run, about ten times shorter
python -m benchmarks.heuristic --presets argentine-3v3 --tables 128
```
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from agents import act_many
from agents.heuristic import HeuristicAgent
from agents.heuristic_reference import ReferenceHeuristic
from agents.seats import TableSeats
from truco_env.vector import VectorEnv

PRESETS = ("argentine", "argentine-2v2", "paulista", "paulista-2v2")


def play(preset: str, make, tables: int, decisions: int, batched: bool, seed: int = 0
         ) -> tuple[float, int, list[int]]:
    """Seconds spent in the heuristic's decisions, their number, and every action taken (to check that the
    runs played the same matches)."""
    rng = np.random.default_rng(seed)
    env = VectorEnv(preset, num_envs=tables, seed=seed, reward="points")
    seats = TableSeats(lambda table, seat: make(int(rng.integers(2 ** 31))))
    obs, mask, actor = env.reset()
    seconds, count, taken = 0.0, 0, []
    try:
        while count < decisions:
            ours = np.flatnonzero(actor % 2 == 0)
            agents = seats.acting(ours, actor)  # made before the clock starts
            actions = env.random_actions()
            start = time.perf_counter()
            if batched:
                actions[ours] = act_many(agents, obs[ours], mask[ours])
            else:
                for i, agent in zip(ours, agents, strict=True):
                    actions[i] = agent.act({"observation": obs[i], "action_mask": mask[i]})
            seconds += time.perf_counter() - start
            count += len(ours)
            taken.extend(actions[ours].tolist())
            obs, mask, _, actor, done = env.step(actions)
            seats.matches_ended(np.flatnonzero(done))
    finally:
        env.close()
    return seconds, count, taken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.heuristic", description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--tables", type=int, default=64, help="matches played at once (default 64)")
    parser.add_argument("--decisions", type=int, default=3000,
                        help="heuristic decisions timed per preset and row (default 3000)")
    parser.add_argument("--quick", action="store_true", help="300 decisions per preset and row")
    args = parser.parse_args(argv)
    decisions = 300 if args.quick else args.decisions
    load = os.getloadavg()
    play(args.presets[0], lambda s: HeuristicAgent(seed=s), 4, 8, batched=True)  # compile or load the kernel
    print("| preset | reference decisions/s | compiled, one at a time | ratio | compiled, batched "
          f"({args.tables} tables) | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    figures: dict = {"tables": args.tables, "decisions": decisions, "presets": {}}
    for preset in args.presets:
        rows = {}
        actions = {}
        for name, make, batched in (("reference", lambda s: ReferenceHeuristic(seed=s), False),
                                    ("compiled", lambda s: HeuristicAgent(seed=s), False),
                                    ("batched", lambda s: HeuristicAgent(seed=s), True)):
            seconds, count, actions[name] = play(preset, make, args.tables, decisions, batched)
            rows[name] = count / seconds
        if not actions["reference"] == actions["compiled"] == actions["batched"]:
            raise SystemExit(f"{preset}: the compiled heuristic decided differently from the reference")
        ref = rows["reference"]
        print(f"| {preset} | {ref:,.0f} | {rows['compiled']:,.0f} | {rows['compiled'] / ref:.1f}x "
              f"| {rows['batched']:,.0f} | {rows['batched'] / ref:.1f}x |", flush=True)
        figures["presets"][preset] = rows
    figures["load_average_start_end"] = [load, os.getloadavg()]
    print(f"load average (1, 5, 15 min) at start {load}, at end {os.getloadavg()} on {os.cpu_count()} CPUs")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
