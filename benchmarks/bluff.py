"""Show the bluffing of an equilibrium: call probabilities against hand strength on a research preset
(:func:`training.learn.cfr.bluff.call_profile` describes the numbers).

    python -m benchmarks.bluff --preset argentine-mini [--checkpoint ck.npz] [--out docs/img]

Writes an SVG plot per preset and a JSON file with the numbers. Without ``--checkpoint`` the preset is solved
first (CFR+ to 1e-3).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from training.learn.cfr.bluff import ENVIDO, LADDER, call_profile
from training.learn.cfr.solver import CFRSolver
from training.learn.cfr.tree import build_tree
from training.measure.tournament_files import OKABE_ITO
from truco_env import make_config


def svg_plot(preset: str, profile: dict, path: Path) -> None:
    """A small dependency-free line chart: one panel per strength measure."""
    panels = [("trick strength", [n for n in LADDER if n in profile]),
              ("envido points", [n for n in ENVIDO if n in profile])]
    panels = [(t, names) for t, names in panels if names]
    width, height, pad = 460, 300, 50
    colors = OKABE_ITO[:6]  # told apart with any colour vision (no red next to green)
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * len(panels)}" height="{height}" '
              'font-family="sans-serif" font-size="11">'),
             '<rect width="100%" height="100%" fill="white"/>']
    for k, (title, names) in enumerate(panels):
        ox = k * width
        xs_all = [x for n in names for x in profile[n]["x"]]
        lo, hi = min(xs_all), max(xs_all)
        span = max(hi - lo, 1)

        def px(x, _ox=ox, _lo=lo, _span=span):
            return _ox + pad + (x - _lo) / _span * (width - 2 * pad)

        def py(p):
            return height - pad - p * (height - 2 * pad)

        parts.append(f'<text x="{ox + width / 2}" y="18" text-anchor="middle" font-size="13">{preset}: '
                     f'P(call) vs {title}</text>')
        parts.append(f'<line x1="{ox + pad}" y1="{py(0)}" x2="{ox + width - pad}" y2="{py(0)}" stroke="black"/>')
        parts.append(f'<line x1="{ox + pad}" y1="{py(0)}" x2="{ox + pad}" y2="{py(1)}" stroke="black"/>')
        for p in (0, 0.25, 0.5, 0.75, 1.0):
            parts.append(f'<text x="{ox + pad - 6}" y="{py(p) + 4}" text-anchor="end">{p:g}</text>')
        for x in sorted(set(xs_all)):
            parts.append(f'<text x="{px(x)}" y="{py(0) + 14}" text-anchor="middle">{x}</text>')
        parts.append(f'<text x="{ox + width / 2}" y="{height - 12}" text-anchor="middle">{title} '
                     f'of the own card</text>')
        for j, name in enumerate(names):
            color = colors[j % len(colors)]
            pts = " ".join(f"{px(x):.1f},{py(p):.1f}" for x, p in zip(profile[name]["x"], profile[name]["p"]))
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/>')
            for x, p in zip(profile[name]["x"], profile[name]["p"]):
                parts.append(f'<circle cx="{px(x):.1f}" cy="{py(p):.1f}" r="3" fill="{color}"/>')
            share = profile[name]["share_with_weakest_third"]
            y = pad - 14 + 13 * j + 8  # the legend: a swatch of the line's colour, then black text
            parts.append(f'<line x1="{ox + pad + 8}" y1="{y - 4}" x2="{ox + pad + 24}" y2="{y - 4}" stroke="{color}" '
                         'stroke-width="3"/>')
            parts.append(f'<text x="{ox + pad + 30}" y="{y}">{name} (weakest third: {share:.0%} of calls)</text>')
    parts.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bluff", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", action="append", help="research preset(s) (default: all)")
    parser.add_argument("--checkpoint", default=None, help="an exact checkpoint of that preset")
    parser.add_argument("--out", default="docs/img", help="folder for bluff_<preset>.svg/.json")
    args = parser.parse_args(argv)
    from truco_env.config import PRESETS

    presets = args.preset or [n for n, c in PRESETS.items() if c.single_hand]
    for preset in presets:
        tree = build_tree(make_config(preset))
        if args.checkpoint:
            from training.learn.cfr.train import restore_exact

            solver = CFRSolver(tree)
            restore_exact(solver, args.checkpoint)
        else:
            solver = CFRSolver(tree)
            while solver.iteration < 1000:
                solver.iterate(10)
                if solver.nash_conv() <= 1e-3 * tree.utility_range:
                    break
        policy = solver.average_policy()
        profile = call_profile(tree, policy)
        out = Path(args.out)
        svg_plot(preset, profile, out / f"bluff_{preset}.svg")
        with open(out / f"bluff_{preset}.json", "w") as handle:
            json.dump({"preset": preset, "iterations": solver.iteration, "nash_conv": solver.nash_conv(),
                       "calls": profile}, handle, indent=1)
        print(f"{preset}: NashConv {solver.nash_conv():.4f} after {solver.iteration} iterations")
        for name, row in profile.items():
            pts = ", ".join(f"{x}:{p:.2f}" for x, p in zip(row["x"], row["p"]))
            print(f"  {name:13s} share with weakest third {row['share_with_weakest_third']:.1%}  P by "
                  f"{row['strength']}: {pts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
