"""Speed of the searching agent: decisions per second of ``search:SPEC`` beside ``SPEC`` alone, in one process.

Both play the same matches against ``random`` (duplicate deals, the tournament's own match loop, one agent per
table and seat, as ``truco eval``, the gauntlet and the report play them); the searching agent's decisions are
counted from the match records, its own and the searched ones apart. The ratio is what thinking ahead costs per
decision: the belief (candidate deals replayed and weighed), the rollouts of every candidate action in every
world, and one network call per step for all of them.

Then the same search over many tables at once, as a best response's batch of matches asks it
(``SearchAgent.act_together``: every table's belief and rollouts share one network call per round): decision
points of ``--tables`` tables of random play, decided one table at a time and then all together, the same
decisions either way.

```bash
python -m benchmarks.search                                   # search:ppo:paulista, 40 matches, 64 tables
python -m benchmarks.search --spec ppo:argentine-2v2 --preset argentine-2v2 --quick
```
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import torch

from agents import make_agent
from agents.search import SearchAgent
from benchmarks.protocol import bot_decisions
from training.measure.evaluate import make_tasks, play_tasks
from training.people.export import random_positions
from truco_env.turns import observation_for


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


def decision_points(spec: str, preset: str, tables: int) -> tuple[list[SearchAgent], list[dict]]:
    """A searching agent per table (seeded by it) and a decision point of seeded random play for each."""
    agents, views = [], []
    for table, (state, seat) in enumerate(random_positions(preset, tables, seed=0)):
        agent = make_agent(spec)
        agent.seed(table)
        agents.append(agent)
        views.append(observation_for(agent, state, seat))
    return agents, views


def measure_tables(spec: str, preset: str, tables: int) -> dict:
    """Seconds to decide ``tables`` decision points one table at a time and all together (same decisions)."""
    rows = {}
    for name in ("one_at_a_time", "together"):
        agents, views = decision_points(spec, preset, tables)
        obs = np.stack([v["observation"] for v in views])
        masks = np.stack([v["action_mask"] for v in views])
        started = time.perf_counter()
        if name == "together":
            decided = list(SearchAgent.act_together(agents, obs, masks, views))
        else:
            decided = [agent.act(view) for agent, view in zip(agents, views)]
        seconds = time.perf_counter() - started
        rows[name] = {"seconds": seconds, "decisions_per_s": tables / seconds, "decided": decided,
                      "searched": sum(agent.search_stats["searched"] for agent in agents)}
    if rows["together"]["decided"] != rows["one_at_a_time"]["decided"]:
        raise SystemExit("benchmarks.search: the tables decided together differ from one at a time")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="ppo:paulista")
    parser.add_argument("--preset", default="paulista")
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--options", default="", help="the search's options, e.g. ',worlds=16'")
    parser.add_argument("--tables", type=int, default=64, help="tables searched together")
    parser.add_argument("--quick", action="store_true", help="6 matches, 16 tables")
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
    tables = measure_tables(f"search:{args.spec}{args.options}", args.preset, 16 if args.quick else args.tables)
    alone, together = tables["one_at_a_time"], tables["together"]
    print(f"  {len(alone['decided'])} tables' decision points ({together['searched']} searched): "
          f"{alone['decisions_per_s']:,.1f} decisions/s one table at a time, {together['decisions_per_s']:,.1f} "
          f"together ({together['decisions_per_s'] / alone['decisions_per_s']:.2f}x), the same decisions")
    print(json.dumps({"rows": rows, "tables": {k: {n: v for n, v in r.items() if n != "decided"}
                                               for k, r in tables.items()},
                      "loadavg_start": load, "loadavg_end": os.getloadavg(), "cpus": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
