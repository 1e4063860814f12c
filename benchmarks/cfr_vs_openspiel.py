"""Benchmark: our CFR+ against OpenSpiel's Python ``CFRPlusSolver`` and its C++ ``pyspiel.CFRPlusSolver`` on the
same research preset (through the adapter :mod:`truco_env.spiel`), in one run.

    python -m benchmarks.cfr_vs_openspiel --preset paulista-mini --iterations 5 [--json out.json]

For each solver: set-up seconds, seconds for ``--iterations`` iterations, iterations/s, and the exact NashConv
of its average policy after those iterations (all three computed by our exact best response; ``--spiel-check``
also runs OpenSpiel's own ``exploitability.nash_conv`` on our policy). Then our solver continues to the target
NashConv (1e-3 of the utility range) and reports iterations and seconds to get there. Needs the ``spiel`` extra.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def run(preset: str, iterations: int, spiel_check: bool, overrides: dict | None = None,
        skip_python: bool = False, out=sys.stdout) -> dict:
    import pyspiel
    from open_spiel.python.algorithms import cfr as os_cfr
    from open_spiel.python.algorithms import exploitability

    from training.learn.cfr.solver import CFRSolver, nash_conv
    from training.learn.cfr.spiel_bridge import TreePolicy, cpp_policy_to_tree, tabular_to_tree
    from training.learn.cfr.tree import build_tree
    from truco_env import make_config
    from truco_env.spiel import TrucoSpielGame

    config = make_config(preset, **(overrides or {}))
    results: dict = {"preset": preset, "overrides": overrides or {}, "iterations": iterations}
    t = time.perf_counter()
    tree = build_tree(config)
    results["tree"] = tree.summary()
    setup = time.perf_counter() - t
    solver = CFRSolver(tree, algorithm="cfr+")
    t = time.perf_counter()
    solver.iterate(iterations)
    run_s = time.perf_counter() - t
    ours = solver.average_policy()
    results["ours"] = {"setup_s": setup, "run_s": run_s, "iterations_per_s": iterations / run_s,
                       "nash_conv": nash_conv(tree, ours)}
    print(f"ours          setup {setup:7.2f}s  {iterations} it {run_s:8.3f}s  "
          f"{iterations / run_s:10.2f} it/s  NashConv {results['ours']['nash_conv']:.6f}", file=out, flush=True)

    game = TrucoSpielGame.from_config(config, preset=preset)
    if spiel_check:
        t = time.perf_counter()
        theirs = exploitability.nash_conv(game, TreePolicy(game, tree, ours))
        results["spiel_nash_conv_of_ours"] = theirs
        results["spiel_nash_conv_s"] = time.perf_counter() - t
        print(f"OpenSpiel exploitability.nash_conv of our policy: {theirs:.9f} "
              f"(ours {results['ours']['nash_conv']:.9f}, |diff| "
              f"{abs(theirs - results['ours']['nash_conv']):.2e})", file=out, flush=True)

    if not skip_python:
        results["openspiel_python"] = _time_openspiel(
            "OS python", lambda: os_cfr.CFRPlusSolver(game),
            lambda solver: tabular_to_tree(tree, solver.average_policy()), iterations, tree, out)
    results["openspiel_cpp"] = _time_openspiel(
        "OS C++", lambda: pyspiel.CFRPlusSolver(game),
        lambda solver: cpp_policy_to_tree(tree, solver.tabular_average_policy()), iterations, tree, out)

    # ours on to the target
    target = 1e-3 * tree.utility_range
    t = time.perf_counter()
    while True:
        solver.iterate(10)
        nc = solver.nash_conv()
        if nc <= target or solver.iteration >= 5000:
            break
    results["ours_to_target"] = {"iterations": solver.iteration, "seconds_after_first": time.perf_counter() - t,
                                 "nash_conv": nc, "target": target}
    print(f"ours reaches NashConv {nc:.5f} <= {target:.4f} (1e-3 of range) at iteration {solver.iteration}",
          file=out, flush=True)
    for name in ("openspiel_python", "openspiel_cpp"):
        if name in results:
            results[f"speedup_vs_{name}"] = results["ours"]["iterations_per_s"] / results[name]["iterations_per_s"]
            print(f"speed-up vs {name}: {results[f'speedup_vs_{name}']:.0f}x", file=out)
    return results


def _time_openspiel(label: str, make, average, iterations: int, tree, out) -> dict:
    """Set-up and ``iterations`` of an OpenSpiel CFR+ solver (``make()``), timed, and the exact NashConv of its
    average policy (``average(solver)``, mapped onto our tree)."""
    from training.learn.cfr.solver import nash_conv

    t = time.perf_counter()
    solver = make()
    setup = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    run_s = time.perf_counter() - t
    nc = nash_conv(tree, average(solver))
    print(f"{label:<13} setup {setup:7.2f}s  {iterations} it {run_s:8.3f}s  "
          f"{iterations / run_s:10.4f} it/s  NashConv {nc:.6f}", file=out, flush=True)
    return {"setup_s": setup, "run_s": run_s, "iterations_per_s": iterations / run_s, "nash_conv": nc}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cfr_vs_openspiel", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="paulista-mini")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--deck-ranks", default=None, help="override deck_ranks, comma-separated")
    parser.add_argument("--spiel-check", action="store_true",
                        help="also run OpenSpiel's exploitability.nash_conv on our policy (slow)")
    parser.add_argument("--skip-python", action="store_true", help="skip OpenSpiel's Python CFR+")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    overrides = {"deck_ranks": tuple(args.deck_ranks.split(","))} if args.deck_ranks else None
    results = run(args.preset, args.iterations, args.spiel_check, overrides, args.skip_python)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
