"""Speed of the line protocol: decisions per second through ``exec:`` beside the same play in process.

A trivial bot (a few lines of Python that answer every ``act`` with its first legal action) plays matches against
``random`` twice on the same deals: once through the protocol (``exec:python BOT``: a process, a ``match`` message
per match, an ``act`` message per decision built from the seat's view, one answer line read back) and once as an
in-process agent that takes the same first legal action. Both play the same matches (checked), so the ratio is
what the protocol costs per decision: building and writing the message, the pipe, the bot reading it, the answer.
The bot's decisions are counted from the match records.

```bash
python -m benchmarks.protocol            # 200 matches of argentine
python -m benchmarks.protocol --quick    # 20 matches
```
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from agents.base import Agent, register_agent
from training.measure.evaluate import make_tasks, play_tasks

BOT = ("import json, sys\n"
       "for line in sys.stdin:\n"
       "    message = json.loads(line)\n"
       "    if message['type'] == 'act':\n"
       "        print(json.dumps({'action': message['legal'][0]['name']}), flush=True)\n")


class FirstLegal(Agent):
    """The trivial bot's rule in process: the first legal action in the engine's order (the ``legal`` list of an
    ``act`` message is in that order too)."""

    wants = frozenset({"protocol"})  # the same messages are built, so only the pipe and the bot differ

    def act(self, observation: dict) -> int:
        return int(observation["protocol"]["act"]["legal"][0]["id"])


register_agent("first-legal", lambda arg, params: FirstLegal())


def bot_decisions(results: list[dict]) -> int:
    """Decisions of agent A over the matches (from their records)."""
    count = 0
    for match in results:
        record = match["record"]
        team_a = 1 if match["swapped"] else 0
        count += sum(1 for hand in record["hands"] for seat, *_ in hand["actions"] if seat % 2 == team_a)
    return count


def measure(preset: str, matches: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        bot = Path(folder) / "first_legal.py"
        bot.write_text(BOT)
        rows = {}
        for name, spec in (("in process", "first-legal"), ("through exec:", f"exec:{sys.executable} {bot}")):
            # the same public deals both ways (a trusted bot of our own: the deals need not be hidden from it)
            tasks = make_tasks([spec, "random"], [preset], matches, 0, pairs=[(spec, "random")], keep_records=True,
                               hidden=False)
            started = time.perf_counter()
            results = play_tasks(tasks, workers=1)
            seconds = time.perf_counter() - started
            decisions = bot_decisions(results)
            rows[name] = {"seconds": seconds, "decisions": decisions, "decisions_per_s": decisions / seconds,
                          "results": [(m["deal"], m["swapped"], m["score_a"], m["score_b"]) for m in results]}
    same = rows["in process"]["results"] == rows["through exec:"]["results"]
    return {"preset": preset, "matches": matches, "same_matches": same,
            **{k: {x: v[x] for x in ("seconds", "decisions", "decisions_per_s")} for k, v in rows.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="argentine")
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="20 matches")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    result = measure(args.preset, 20 if args.quick else args.matches)
    inside, piped = result["in process"], result["through exec:"]
    print(f"{args.preset}, {result['matches']} matches, the bot's decisions: {piped['decisions']:,}")
    print(f"  in process     {inside['decisions_per_s']:>10,.0f} decisions/s")
    print(f"  through exec:  {piped['decisions_per_s']:>10,.0f} decisions/s "
          f"({piped['decisions_per_s'] / inside['decisions_per_s']:.2f}x in process; target >= 2,000)")
    print(f"  same matches: {result['same_matches']}")
    print(json.dumps({**result, "loadavg_start": load, "loadavg_end": os.getloadavg(),
                      "cpus": os.cpu_count()}, default=float))
    return 0 if result["same_matches"] else 1


if __name__ == "__main__":
    sys.exit(main())
