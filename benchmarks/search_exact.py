"""Play-time search checked against the exact game of a research preset: NashConv of the blueprint, and of the
policy the search plays, each seat searching and both (:func:`training.learn.cfr.resolve.compare`).

A blueprint of ``--iterations`` lossless iterations of the compiled walk, then the agent's own search with
``--nodes`` walked nodes at every public state where a seat acts; the numbers of docs/cfr.md ("Exact check on the
research presets"):

```bash
python -m benchmarks.search_exact --preset argentine-mini
python -m benchmarks.search_exact --preset paulista-mini --deck-ranks A,2,3 --iterations 2000   # a smaller game
```
"""

from __future__ import annotations

import argparse
import sys

from training.learn.cfr.mccfr_kernel import KernelMCCFR
from training.learn.cfr.resolve import compare
from truco_env import make_config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.search_exact", description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="argentine-mini", choices=["argentine-mini", "paulista-mini"])
    parser.add_argument("--deck-ranks", default=None, help="comma-separated ranks (a smaller game)")
    parser.add_argument("--iterations", type=int, default=10000, help="blueprint: lossless MCCFR iterations")
    parser.add_argument("--nodes", type=int, default=10000, help="walked nodes per search")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    overrides = {"deck_ranks": tuple(args.deck_ranks.split(","))} if args.deck_ranks else {}
    config = make_config(args.preset, **overrides)
    solver = KernelMCCFR(config, seed=args.seed, abstraction="lossless")
    solver.iterate(args.iterations)
    r = compare(config, solver.to_checkpoint(args.preset), args.nodes, args.seed)
    blue = r["blueprint"]
    print(f"{args.preset}: uniform NashConv {r['uniform']:.3f} (range {r['range']:g}); blueprint ({args.iterations} "
          f"lossless iterations) NashConv {blue['nash_conv']:.4f}, searched by both seats {r['searched']['nash_conv']:.4f}")
    for seat in (0, 1):
        s = r[f"seat{seat}"]
        print(f"  seat {seat} searching: exploitability {blue['exploitability'][seat]:.4f} -> {s['exploitability']:.4f}; "
              f"{s['searches']} searches over {s['public_states']} public states, {s['played']} passed their check "
              f"and played; {s['iterations']} iterations, {s['nodes']} nodes solving, {s['check_nodes']} checking, "
              f"{s['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
