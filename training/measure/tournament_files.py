"""What a tournament writes (``truco eval``'s files): the markdown report, the CSV and JSON tables, the plots,
and the display names of agent specs (a file's stem, not its path), kept apart from the matches themselves so
that every command that writes a tournament's files (eval, exploit, gauntlet, report) shares them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from training.atomic import atomic_write_csv
from training.measure.statistics import Z95


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def markdown_report(summary: dict[str, Any]) -> str:
    lines = [("| preset | agent A | agent B | matches | A wins / draws / B wins | A win rate [95% CI] "
              "| points/hand A | points/hand B | hands won A / B | verdict |"),
             "|---|---|---|---:|---|---|---:|---:|---|---|"]
    for r in summary["pairings"]:  # a draw (single-hand variants) counts half in the win rate
        lines.append(f"| {r['preset']} | `{r['agent_a']}` | `{r['agent_b']}` | {r['matches']} | "
                     f"{r['wins_a']} / {r['draws']} / {r['wins_b']} | {_pct(r['win_rate_a'])} [{_pct(r['ci_low'])}, {_pct(r['ci_high'])}] | "
                     f"{r['points_per_hand_a']:.2f} | {r['points_per_hand_b']:.2f} | "
                     f"{r['hands_won_a']} / {r['hands_won_b']} | {r['verdict']} |")
    lines += ["", "| ratings | agent | mu | sigma | 95% interval |", "|---|---|---:|---:|---|"]
    for scope, rows in summary["ratings"].items():
        for row in rows:
            lines.append(f"| {scope} | `{row['agent']}` | {row['mu']:.2f} | {row['sigma']:.2f} | "
                         f"[{row['low']:.2f}, {row['high']:.2f}] |")
    lines += ["", ("| preset | agent | hands | truco calls/hand | envido calls/hand | fold rate | mazo/hand "
                  "| bluff rate | weak-hand share of calls | bluff wins | envido accuracy |"),
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in summary["behaviour"]:
        lines.append(f"| {r['preset']} | `{r['agent']}` | {r['hands']} | {_rate(r['truco_call_rate'])} | "
                     f"{_rate(r['envido_call_rate'])} | {_pct(r['fold_rate'])} | {_rate(r['mazo_rate'])} | "
                     f"{_pct(r['bluff_rate'])} | {_pct(r['weak_call_share'])} | {_pct(r['bluff_win_rate'])} | "
                     f"{_pct(r['envido_accuracy'])} |")
    senas = [r for r in summary["behaviour"] if "signal_rate" in r]
    if senas:  # games with señas (docs/rules.md §3.13; training/measure/behaviour.py says what each column counts)
        lines += ["", ("| preset | agent | signal rate | true to the table | caught | a caught signal costs "
                       "(points/hand) | hands caught / uncaught |"), "|---|---|---:|---:|---:|---:|---|"]
        for r in senas:
            cost = r["caught_signal_cost"]
            counts = r.get("counts", {})
            lines.append(f"| {r['preset']} | `{r['agent']}` | {_pct(r['signal_rate'])} | {_pct(r['signal_honesty'])} | "
                         f"{_pct(r['signal_caught_rate'])} | {'-' if cost is None else f'{cost:+.2f}'} | "
                         f"{counts.get('caught_hands', 0)} / {counts.get('uncaught_hands', 0)} |")
    return "\n".join(lines)


def write_outputs(out: Path, summary: dict[str, Any], meta: dict[str, Any], plots: bool = True) -> list[Path]:
    """Write the tournament's files into ``out`` one after the other: callers hand it a folder of
    :func:`training.outputs.output_folder`, so that the files appear together or not at all."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    path = out / "pairings.csv"
    atomic_write_csv(path, summary["pairings"])
    written.append(path)
    path = out / "behaviour.csv"
    atomic_write_csv(path, [{k: v for k, v in r.items() if k != "counts"} for r in summary["behaviour"]])
    written.append(path)
    path = out / "ratings.csv"
    atomic_write_csv(path, [{"scope": scope, **row} for scope, rows in summary["ratings"].items() for row in rows])
    written.append(path)
    path = out / "results.json"
    path.write_text(json.dumps({"meta": meta, **summary}, indent=1, sort_keys=False) + "\n")
    written.append(path)
    path = out / "report.md"
    path.write_text(markdown_report(summary) + "\n")
    written.append(path)
    if plots:
        written += write_plots(out, summary, meta["agents"], meta["presets"])
    return written


#: Colour maps the plots may use: perceptually uniform and readable with any colour vision (no red-green).
COLOUR_MAPS = ("cividis", "viridis")


#: The Okabe-Ito palette: categorical colours told apart with any colour vision.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")


_FILE_SUFFIXES = (".safetensors", ".npz", ".onnx", ".json", ".pt")


def display_name(spec: str) -> str:
    """An agent spec as a plot shows it: a policy named by its file is shown by the file's name without folders
    or extension (``ppo:runs/x/policy.safetensors,greedy`` -> ``ppo:policy,greedy``); other specs as given."""
    kind, colon, rest = spec.partition(":")
    if not colon:
        return spec
    parts = []
    for part in rest.split(","):
        name = part.replace("\\", "/").rsplit("/", 1)[-1]
        parts.append(next((name[:-len(s)] for s in _FILE_SUFFIXES if name.endswith(s)), name))
    return f"{kind}:{','.join(parts)}"


def display_names(agents: list[str]) -> dict[str, str]:
    """:func:`display_name` of each agent, except that agents whose short names would collide keep their spec."""
    short = {a: display_name(a) for a in agents}
    seen = Counter(short.values())
    return {a: name if seen[name] == 1 else a for a, name in short.items()}


def write_plots(out: Path, summary: dict[str, Any], agents: list[str], presets: list[str]) -> list[Path]:
    """Win-rate heatmap (row agent's win rate against the column agent, per preset, with its 95% interval in
    each cell) and rating bars (95% intervals); colour map :data:`COLOUR_MAPS`, agents by :func:`display_names`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = len(agents)
    label = display_names(agents)
    names = [label[a] for a in agents]
    cmap = plt.get_cmap(COLOUR_MAPS[0])
    fig, axes = plt.subplots(1, len(presets), figsize=(2.2 + 1.3 * k * len(presets), 1.6 + 1.1 * k),
                             squeeze=False)
    for ax, preset in zip(axes[0], presets):
        grid = [[float("nan")] * k for _ in range(k)]
        interval: dict[tuple[int, int], tuple[float, float]] = {}
        for r in summary["pairings"]:
            if r["preset"] != preset:
                continue
            i, j = agents.index(r["agent_a"]), agents.index(r["agent_b"])
            grid[i][j] = r["win_rate_a"]
            grid[j][i] = 1 - r["win_rate_a"]
            interval[i, j] = (r["ci_low"], r["ci_high"])
            interval[j, i] = (1 - r["ci_high"], 1 - r["ci_low"])
        image = ax.imshow(grid, vmin=0, vmax=1, cmap=cmap)
        for i in range(k):
            for j in range(k):
                if grid[i][j] == grid[i][j]:
                    low, high = interval[i, j]
                    red, green, blue, _ = cmap(grid[i][j])  # dark text on the light end of the map
                    ink = "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"
                    ax.text(j, i, f"{100 * grid[i][j]:.0f}%\n[{100 * low:.0f}, {100 * high:.0f}]", ha="center",
                            va="center", fontsize=8, color=ink)
        ax.set_xticks(range(k), names, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(k), names, fontsize=8)
        ax.set_title(preset, fontsize=10)
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="row agent's match win rate [95% interval]")
    heat = out / "winrate_heatmap.png"
    fig.savefig(heat, dpi=110, bbox_inches="tight")
    plt.close(fig)

    rows = summary["ratings"]["overall"]
    fig, ax = plt.subplots(figsize=(6, 0.9 + 0.5 * len(rows)))
    names = [label.get(row["agent"], row["agent"]) for row in rows][::-1]
    mus = [row["mu"] for row in rows][::-1]
    errs = [Z95 * row["sigma"] for row in rows][::-1]
    ax.barh(names, mus, xerr=errs, color=OKABE_ITO[0], capsize=4)
    ax.set_xlabel("OpenSkill mu (bars: 95% interval, mu ± 1.96 sigma)")
    ax.set_title("ratings over all matches")
    bars = out / "ratings.png"
    fig.savefig(bars, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return [heat, bars]


def rename_agent(value: Any, old: str, new: str) -> Any:
    """``value`` (a summary or meta of :func:`run_tournament`) with agent spec ``old`` called ``new`` everywhere,
    inside longer strings too (the verdicts): a policy evaluated from a temporary path is shown under its final
    path or a readable name. ``old`` should be a spec no other string contains, such as a file path."""
    if isinstance(value, dict):
        return {rename_agent(k, old, new): rename_agent(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [rename_agent(v, old, new) for v in value]
    return value.replace(old, new) if isinstance(value, str) else value
