"""Training curves from a run's TensorBoard logs, as a PNG: ``python -m training.ppo_legacy.curves RUN_DIR --out FILE.png``.

Why a script: the README and reports show how a policy was trained; the figures come from the logs themselves.
"""

from __future__ import annotations

import argparse
import os
import sys

DEFAULT_TAGS = ("eval/win_rate_vs_heuristic", "eval/win_rate_vs_random", "charts/SPS", "losses/entropy",
                "losses/explained_variance", "league/snapshots")


def read_scalars(run_dir: str, tags: tuple[str, ...] = DEFAULT_TAGS, until: int | None = None
                 ) -> dict[str, list[tuple[int, float]]]:
    """``(update, value)`` per tag present in the run's logs, up to update ``until`` (all when None): a run
    planned longer than the update it shipped shows the curves that made the shipped policy."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logs = os.path.join(run_dir, "tb") if os.path.isdir(os.path.join(run_dir, "tb")) else run_dir
    accumulator = EventAccumulator(logs)
    accumulator.Reload()
    available = set(accumulator.Tags()["scalars"])
    return {tag: [(e.step, e.value) for e in accumulator.Scalars(tag) if until is None or e.step <= until]
            for tag in tags if tag in available}


def plot(curves: dict[str, list[tuple[int, float]]], out: str, title: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(12, 6))
    for ax, (tag, points) in zip(axes.flat, curves.items(), strict=False):
        ax.plot([s for s, _ in points], [v for _, v in points], marker="." if len(points) < 40 else None)
        ax.set_title(tag, fontsize=9)
        ax.set_xlabel("update", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(curves):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, epilog="example:\n  python -m training.ppo_legacy.curves "
                                     "runs/ppo_argentine --out docs/img/ppo_argentine.png",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir")
    parser.add_argument("--out", required=True)
    parser.add_argument("--until", type=int, default=None, help="plot updates up to this one (the shipped one)")
    parser.add_argument("--title", default=None, help="figure title (default: the run directory's name)")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.run_dir):
        print(f"no such run directory: {args.run_dir}", file=sys.stderr)
        return 1
    curves = read_scalars(args.run_dir, until=args.until)
    if not curves:
        print(f"no TensorBoard scalars under {args.run_dir}", file=sys.stderr)
        return 1
    print(plot(curves, args.out, args.title or os.path.basename(os.path.normpath(args.run_dir))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
