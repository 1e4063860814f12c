"""Does ``truco exploit`` measure exploitability? Its learner against exact best responses on the research presets.

Runs :func:`training.measure.abr_validation.run_validation` (the targets, the exact values and the checks are described
there): writes ``validation.json`` and ``validation.md`` into ``--out`` (plus each target's checkpoint and its
``truco exploit`` files under ``PRESET/TARGET/``), prints the table and exits 0 when every check passes, 1
otherwise. The CFR targets' run configs are read from ``--configs`` (default ``configs``, from the current
directory: run it from the repository's root).

```bash
python -m benchmarks.abr_validation --out runs/abr_validation        # the whole table, about 72 min on 2 cores
python -m benchmarks.abr_validation --presets paulista-mini --decisions 20000 --matches 2000   # a smaller one
```
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from training.measure.abr_validation import (
    MATCHES,
    MINI_DECISIONS,
    MINI_PRESETS,
    markdown,
    run_validation,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.abr_validation",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--presets", nargs="+", default=list(MINI_PRESETS), choices=MINI_PRESETS)
    parser.add_argument("--decisions", type=int, default=MINI_DECISIONS, help="learner decisions per target")
    parser.add_argument("--matches", type=int, default=MATCHES, help="duplicate matches of each ABR evaluation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--configs", default="configs", metavar="DIR",
                        help="the folder of the cfr_<preset>.yaml run configs (default: %(default)s)")
    parser.add_argument("--out", default="runs/abr_validation", help="output folder (default: %(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    missing = [p for p in args.presets if not (Path(args.configs) / f"cfr_{p.replace('-', '_')}.yaml").is_file()]
    if missing:
        print(f"python -m benchmarks.abr_validation: error: --configs {args.configs}: no run config for "
              f"{', '.join(missing)} (cfr_<preset>.yaml); run it from the repository's root or name its configs/ "
              "folder", file=sys.stderr)
        return 2
    report = run_validation(Path(args.out), Path(args.configs), tuple(args.presets), decisions=args.decisions,
                            matches=args.matches, seed=args.seed, workers=args.workers,
                            progress=not args.no_progress)
    print(markdown(report["rows"]), end="")
    print(f"{'all checks pass' if report['passed'] else 'some checks FAIL'}; wrote {args.out}/validation.json, "
          f"validation.md")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
