"""Speed of MCCFR on the full 1v1 presets: the Python walk (``training/cfr/mccfr.py``, abstraction v2, the
reference engine) against the compiled walk (``training/cfr/mccfr_kernel.py``, abstraction v3, the kernel), in
one process and one run.

Both engines run the same external-sampling iteration (one hand in a random match context, every action of the
traverser, one sampled action of the opponent) from an empty table and the same seed. Each is first warmed up on
a throwaway solver (numba compiles the kernel walk, or loads it from its cache; the reference engine fills its
caches), which the timing leaves out. Then the Python walk runs for ``--seconds``, and the compiled walk runs the
same iterations (the same stretch of training: early iterations, with near-uniform strategies, are the dearest)
from fresh tables, again and again for about ``--seconds``; the ratio of those two rates is the speed-up. The
last compiled run then goes on for ``--seconds`` more, to show the rate further into training. Wall-clock and
CPU-time rates are both printed, with the machine's load: the project's cores are shared, and CPU time is the
steadier figure then.

```bash
python -m benchmarks.mccfr                 # argentine and paulista, 20 s of Python walk each
python -m benchmarks.mccfr --quick         # 3 s each
```
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def _run(solver, iterations: int, step: int) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, nodes) of ``iterations`` more iterations, ``step`` per call."""
    nodes = solver.nodes
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(iterations // step):
        solver.iterate(step)
    solver.iterate(iterations % step)
    return time.perf_counter() - wall, time.process_time() - cpu, solver.nodes - nodes


def _rates(iterations: int, wall: float, cpu: float, nodes: int) -> dict[str, float]:
    return {"iterations": iterations, "wall_s": wall, "cpu_s": cpu, "it_per_s": iterations / wall,
            "it_per_cpu_s": iterations / cpu, "nodes_per_it": nodes / iterations, "nodes_per_s": nodes / wall}


def measure(preset: str, seconds: float, seed: int = 0) -> dict:
    """The Python walk for about ``seconds``; the compiled walk over the same iterations (same seed, fresh
    tables, repeated for about ``seconds`` and summed), then one compiled run continued for ``seconds``."""
    from training.cfr.mccfr import MCCFR
    from training.cfr.mccfr_kernel import KernelMCCFR
    from truco_env import make_config

    rules = make_config(preset)
    MCCFR(rules, seed=seed + 1, abstraction="v2").iterate(20)  # warm-up: imports, caches
    KernelMCCFR(rules, seed=seed + 1, abstraction="v3").iterate(20)  # warm-up: compile or load the walk
    python = MCCFR(rules, seed=seed, abstraction="v2")
    start = time.perf_counter()
    wall = cpu = 0.0
    nodes = 0
    while time.perf_counter() - start < seconds:
        w, c, n = _run(python, 10, 10)
        wall, cpu, nodes = wall + w, cpu + c, nodes + n
    py = _rates(python.iteration, wall, cpu, nodes)
    total = [0.0, 0.0, 0]
    repeats = 0
    start = time.perf_counter()
    while repeats == 0 or time.perf_counter() - start < seconds:
        kernel = KernelMCCFR(rules, seed=seed, abstraction="v3")
        for i, x in enumerate(_run(kernel, python.iteration, KernelMCCFR.batch)):
            total[i] += x
        repeats += 1
    same = _rates(python.iteration * repeats, *total)
    same["repeats"] = repeats
    first = kernel.iteration
    iterations = max(int(same["it_per_s"] * seconds), 1)
    more = _rates(iterations, *_run(kernel, iterations, KernelMCCFR.batch))
    more["from_iteration"] = first
    return {"preset": preset, "python_v2": py, "kernel_v3_same_iterations": same, "kernel_v3_after": more,
            "ratio_wall": same["it_per_s"] / py["it_per_s"], "ratio_cpu": same["it_per_cpu_s"] / py["it_per_cpu_s"],
            "ratio_nodes_per_s": same["nodes_per_s"] / py["nodes_per_s"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mccfr", description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", default="argentine,paulista", help="comma-separated 1v1 presets")
    parser.add_argument("--seconds", type=float, default=20.0, help="Python walk time per preset (default 20)")
    parser.add_argument("--quick", action="store_true", help="3 s per preset")
    args = parser.parse_args(argv)
    seconds = 3.0 if args.quick else args.seconds
    load = os.getloadavg()
    results = [measure(preset, seconds) for preset in args.presets.split(",")]
    print("| preset | Python walk (v2) it/s | compiled walk (v3) it/s, same iterations | ratio (wall) "
          "| ratio (CPU time) | compiled, continued | nodes/it Python / compiled |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        py, same, more = r["python_v2"], r["kernel_v3_same_iterations"], r["kernel_v3_after"]
        print(f"| {r['preset']} | {py['it_per_s']:,.0f} (iterations 1-{py['iterations']:,}) "
              f"| {same['it_per_s']:,.0f} (x{same['repeats']}) | **{r['ratio_wall']:.1f}x** | {r['ratio_cpu']:.1f}x "
              f"| {more['it_per_s']:,.0f} (iterations {more['from_iteration'] + 1:,}-"
              f"{more['from_iteration'] + more['iterations']:,}) | {py['nodes_per_it']:.0f} / {same['nodes_per_it']:.0f} |")
    print(f"load average (1, 5, 15 min) at start {load}, at end {os.getloadavg()} on {os.cpu_count()} CPUs; "
          f"numba compilation excluded (warm-up)")
    print(json.dumps({"results": results, "load_average_start_end": [load, os.getloadavg()]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
