"""Speed of ``truco train ppo``: learner decisions per second, end to end (collection plus PPO update).

It trains the default recipe (the default network, self-play against snapshots: a snapshot joins the league
after every update) for one warm-up update and a few timed ones, and prints the decisions per second beside
the raw rate of the vector environment it plays on (random legal play with observations and masks, one
process), measured in the same run, with the ratio and the machine's load.

```bash
python -m benchmarks.ppo                          # argentine, backend local
python -m benchmarks.ppo --backend processes      # one worker process per partition
python -m benchmarks.ppo --quick                  # a smoke run
```
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from benchmarks.exploit import vector_rate
from training.learn.ppo import PPOArgs, train_ppo
from training.options import build


def trainer_rate(preset: str, backend: str, updates: int, overrides: dict) -> dict[str, float]:
    """Decisions per second over the timed updates (the first one, with compilation and start-up, is left out),
    read back from the run's TensorBoard log."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with tempfile.TemporaryDirectory() as run_dir:
        batch = PPOArgs.model_fields["batch_decisions"].default
        args = build(PPOArgs, {"preset": preset, "backend": backend, "run_dir": run_dir, "snapshot_every": 1,
                               "eval_every": 0, "eval_opponents": [], "checkpoint_every": 10 ** 6,
                               "total_decisions": batch * (updates + 1), **overrides})
        train_ppo(args, progress_bar=False)
        events = EventAccumulator(os.path.join(run_dir, "tb"))
        events.Reload()
        sps = events.Scalars("charts/SPS")[1:]
        collect = events.Scalars("charts/collect_SPS")[1:]
    steps = [b.step - a.step for a, b in zip(events.Scalars("charts/SPS"), events.Scalars("charts/SPS")[1:],
                                              strict=False)]
    seconds = sum(n / e.value for n, e in zip(steps, sps, strict=True))
    collect_seconds = sum(n / e.value for n, e in zip(steps, collect, strict=True))
    return {"decisions_per_s": sum(steps) / seconds, "collect_share": collect_seconds / seconds,
            "decisions": sum(steps)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ppo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="argentine")
    parser.add_argument("--backend", default="local", choices=["local", "processes", "ray"])
    parser.add_argument("--updates", type=int, default=4, help="timed updates (default 4)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="another recipe option, e.g. --set hidden=[128,128]")
    parser.add_argument("--quick", action="store_true", help="one timed update")
    args = parser.parse_args(argv)
    from training.options import parse_overrides

    overrides = parse_overrides(args.set)
    load = os.getloadavg()
    raw = vector_rate(args.preset, 2.0 if args.quick else 10.0)
    result = trainer_rate(args.preset, args.backend, 1 if args.quick else args.updates, overrides)
    rate = result["decisions_per_s"]
    print("| preset | backend | trainer decisions/s | of which collection | vector env decisions/s (raw, 1 process) "
          "| trainer / raw |")
    print("|---|---|---:|---:|---:|---:|")
    print(f"| {args.preset} | {args.backend} | {rate:,.0f} | {result['collect_share']:.0%} of the time | {raw:,.0f} "
          f"| {rate / raw:.4f} |")
    print(f"load average (1, 5, 15 min) at start {load}, at end {os.getloadavg()} on {os.cpu_count()} CPUs")
    print(json.dumps({"preset": args.preset, "backend": args.backend, "overrides": overrides, "trainer": result,
                      "vector_env_raw": raw, "load_average_start_end": [load, os.getloadavg()]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
