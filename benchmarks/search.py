"""Speed of the searching agent: decisions per second of ``search:SPEC`` beside ``SPEC`` alone, in one process.

Both play the same matches against ``random`` (duplicate deals, the tournament's own match loop, one agent per
table and seat, as ``truco eval``, the gauntlet and the report play them); the searching agent's decisions are
counted from the match records, its own and the searched ones apart. The ratio is what thinking ahead costs per
decision: the belief (candidate deals replayed and weighed), the rollouts of every candidate action in every
world, and one network call per step for all of them.

```bash
python -m benchmarks.search                                   # search:ppo:paulista, 40 matches
python -m benchmarks.search --spec ppo:argentine-2v2 --preset argentine-2v2 --quick
```
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch

from benchmarks.protocol import bot_decisions
from training.evaluate import make_tasks, play_tasks


def measure(spec: str, preset: str, matches: int, options: str) -> dict:
    rows = {}
    for name, agent in (("alone", spec), ("searching", f"search:{spec}{options}")):
        tasks = make_tasks([agent, "random"], [preset], matches, 0, pairs=[(agent, "random")], keep_records=True)
        play_tasks(tasks[:2], workers=1)  # load the policy and compile the kernels before the clock starts
        started = time.perf_counter()
        results = play_tasks(tasks, workers=1)
        seconds = time.perf_counter() - started
        decisions = bot_decisions(results)
        rows[name] = {"seconds": seconds, "decisions": decisions, "decisions_per_s": decisions / seconds}
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="ppo:paulista")
    parser.add_argument("--preset", default="paulista")
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--options", default="", help="the search's options, e.g. ',worlds=16'")
    parser.add_argument("--quick", action="store_true", help="6 matches")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # as in a tournament's worker processes
    load = os.getloadavg()
    rows = measure(args.spec, args.preset, 6 if args.quick else args.matches, args.options)
    alone, searching = rows["alone"], rows["searching"]
    print(f"{args.preset}, {6 if args.quick else args.matches} matches against random, one thread")
    print(f"  {args.spec:<28} {alone['decisions_per_s']:>9,.0f} decisions/s")
    print(f"  search:{args.spec + args.options:<21} {searching['decisions_per_s']:>9,.1f} decisions/s "
          f"({searching['decisions_per_s'] / alone['decisions_per_s']:.4f}x; "
          f"{1000 / searching['decisions_per_s']:.1f} ms a decision)")
    print(json.dumps({"rows": rows, "loadavg_start": load, "loadavg_end": os.getloadavg(), "cpus": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
