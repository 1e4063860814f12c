"""The strength page (docs/strength.md) and its figure, drawn from the report's rows and settings alone.

Pure functions: what they show comes from their arguments (the rows and settings of docs/strength.json, the
machine and the command line that made the report), never from a measurement or a file, so a page is remade from
its data file byte for byte (``tests/test_report_render.py``). :mod:`training.measure.report` measures and writes; the
model cards that cite this page are drawn by :mod:`training.measure.model_cards`.
"""

from __future__ import annotations

from typing import Any

from training.measure.behaviour import behaviour_rates
from training.measure.best_agent import RULE, best_table, choices, rise_line, shortfalls
from training.measure.exploit import ABR_LEARNERS
from training.measure.gauntlet import OPPONENTS, markdown_table
from training.measure.report_data import BLUFF_MATCHES, BLUFF_OPPONENT, SEARCH_MS, stages_of
from training.measure.statistics import wilson_interval
from training.measure.tournament_files import OKABE_ITO


def percent(rate: float, low: float, high: float) -> str:
    """A win rate with its interval, as every table shows it: ``38.8% [36.7, 41.0]``."""
    return f"{100 * rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def pairing_rate(v: dict[str, Any]) -> str:
    """A pairing's win rate of agent A with its interval."""
    return percent(v["win_rate_a"], v["ci_low"], v["ci_high"])


def abr_cell(stage: dict[str, Any]) -> str:
    """An exploit stage's ABR win rate (the best response's) with its interval."""
    abr = stage["abr"]
    cell = percent(abr["win_rate"], abr["ci_low"], abr["ci_high"])
    if "spread" in stage:  # the strongest of several learners: the others' range beside it
        spread = stage["spread"]
        cell += f" (best of {len(stage['learners'])}; {100 * spread['min']:.1f} to {100 * spread['max']:.1f})"
    return cell


def render(rows: list[dict[str, Any]], settings: dict[str, Any], host: dict[str, Any], command: str,
           figure: str | None) -> str:
    """The strength report's page: what was measured and how, the headline table, each best response's cost, then
    the sections on bluffing, play-time search, the strongest agent per preset and the gauntlet."""
    lines = _preamble(rows, settings, host, command)
    if figure:
        lines += [f"![strength]({figure})", ""]
    lines += _headline(rows) + _training_cost(rows) + _report_cost(rows) + _sections(rows, settings)
    return "\n".join(lines) + "\n"


def _preamble(rows: list[dict[str, Any]], settings: dict[str, Any], host: dict[str, Any], command: str) -> list[str]:
    """The page's opening: the command, the machine, and what each column measures."""
    decisions = settings["decisions"]
    dates = [stage["measured"] for r in rows for stage in stages_of(r) if "measured" in stage] or [settings["finished"]]
    lines = [
        "# Strength report",
        "",
        "How strong is each shipped agent, measured against opponents it never trained against and by a trained",
        ("best response? Made by one command, which measures again only what changed: every stage's result is "
         "kept, with the settings it was made with, in the data file beside this page (`strength.json`), and a "
         "stage is reused when an agent's file and the settings are the same:"),
        "",
        "```bash",
        command,
        "```",
        "",
        (f"Report made on: {host['cpu']}, {host['cores']} cores; Python {host['python']}, torch {host['torch']}, "
        f"{host['system']}. Assembled {settings['finished']} from stages measured {min(dates)} to {max(dates)} "
        "(each stage's date is in the data file)."),
        "",
        "Columns:",
        (f"* **ABR win rate**: {ABR_LEARNERS} fresh best-response learners (`truco exploit` with seeds "
        f"{settings['seed']} to {settings['seed'] + ABR_LEARNERS - 1}, the fixed recipe of "
        f"`training/learn/best_response.py`) each train against the agent alone for **{decisions:,} learner decisions**, "
        f"then play it greedily over {settings['eval_matches']:,} duplicate matches; the strongest learner's win "
        "rate with its 95% Wilson interval (an exploitability bound is the best exploiter found; the interval "
        "covers the matches, not the learner's training), and the range of all learners beside it. Lower is "
        "harder to exploit; 50% would mean the learners found nothing to exploit."),
        (f"* **Gauntlet mean / worst**: win rate of the agent over {settings['gauntlet_matches']} duplicate matches "
        "against each of the held-out opponents below (no shipped recipe trains against any of them): the mean "
        "over opponents (normal interval) and the opponent it does worst against."),
        (f"* **vs heuristic / vs random**: {settings['eval_matches']:,} duplicate matches each (seed "
        f"{settings['seed']})."),
        ("* **vs the policy it replaced**: a policy of the rebuilt trainer against the `ppo:<preset>` shipped before "
         "it (kept as ONNX in `agents/policies/previous/`, never trained against), same matches; n/a for the "
         "heuristic and while the previous policy still ships."),
        "",
        ("Budgets are in learner decisions, not minutes, so that every agent faces the same amount of learning: a "
        "minutes budget would give a fast network target ten times the experience of the slow heuristic."),
        "",
    ]
    return lines


def _headline(rows: list[dict[str, Any]]) -> list[str]:
    """One row per agent: its ABR win rate, gauntlet, baselines and the policy it replaced."""
    lines = [("| preset | agent | ABR win rate (lower is better) | gauntlet mean | gauntlet worst | vs heuristic "
              "| vs random | vs the policy it replaced |"), "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        g = row["gauntlet"]
        w = g["worst"]
        vs = row["versus"]
        heur = pairing_rate(vs["heuristic"]) if "heuristic" in vs else "(itself)"
        prev = next((v for k, v in vs.items() if k.startswith("onnx:")), None)
        before = pairing_rate(prev) if prev else "n/a"
        lines.append(f"| {row['preset']} | `{row['agent']}` | {abr_cell(row['exploit'])} "
                     f"| {percent(g['mean'], g['mean_low'], g['mean_high'])} "
                     f"| {percent(w['win_rate'], w['ci_low'], w['ci_high'])} vs {w['opponent']} "
                     f"| {heur} | {pairing_rate(vs['random'])} | {before} |")
    return lines


def _training_cost(rows: list[dict[str, Any]]) -> list[str]:
    """What each best response of the page cost to train, and where."""
    lines = ["", ("Training cost of each best response (the strongest learner's; the budget above, on the machine it "
                  "trained on):"), "",
              "| preset | target | decisions | training time | decisions/s | machine |",
              "|---|---|---:|---:|---:|---|"]
    for row in rows:
        t = row["exploit"]["training"]
        lines.append(f"| {row['preset']} | `{row['agent']}` | {t['decisions']:,} | {t['seconds'] / 60:.1f} min "
                     f"| {t['decisions_per_second']:,.0f} | {row['exploit'].get('machine', 'not recorded')} |")
    return lines


#: The kinds of stage a row holds, as the cost table names them (a best-response stage counts each learner).
STAGE_KINDS = {"exploit": "best responses (each learner)", "gauntlet": "gauntlet", "versus": "heuristic and random",
               "rivals": "head to head", "bluffing": "bluffing", "search": "a blueprint searching",
               "rise": "the risen bar"}


def stage_costs(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str, float | None]]:
    """Every stage of the rows as (row, kind, CPU seconds or None where the stage kept none): a best response's
    learners one by one."""
    out: list[tuple[dict[str, Any], str, float | None]] = []
    for row in rows:
        for name, kind in STAGE_KINDS.items():
            stage = row.get(name)
            if not isinstance(stage, dict):
                continue
            for part in stage.get("learners", [stage]) if name == "exploit" else [stage]:
                out.append((row, kind, part.get("cpu_seconds")))
    return out


def longest_chain(rows: list[dict[str, Any]]) -> float:
    """CPU seconds of the longest chain of stages that must run one after another: a row's slowest learner then
    its search stage (which plays the strongest learner), and a preset's risen bar after all of that preset."""
    def chain(row: dict[str, Any]) -> float:
        learners = [part.get("cpu_seconds") or 0.0 for part in row["exploit"].get("learners", [row["exploit"]])]
        return max(learners, default=0.0) + (row.get("search", {}).get("cpu_seconds") or 0.0)

    longest = max((chain(row) for row in rows), default=0.0)
    for row in rows:
        if "rise" in row:
            same = [chain(r) for r in rows if r["preset"] == row["preset"]]
            longest = max(longest, max(same) + (row["rise"].get("cpu_seconds") or 0.0))
    return longest


def _report_cost(rows: list[dict[str, Any]]) -> list[str]:
    """What the report's stages cost in CPU time, by kind, and what more machines could make of it; nothing while
    no stage kept its CPU time (stages stored before 2026-12-07 kept only their wall time)."""
    costs = stage_costs(rows)
    timed = [(kind, cpu) for _, kind, cpu in costs if cpu is not None]
    if not timed:
        return []
    total, chain = sum(cpu for _, cpu in timed), longest_chain(rows)
    lines = ["", "## What this report cost", "",
             (f"CPU time of the stages, their worker processes included ({len(timed)} of {len(costs)} stages kept "
              "it; a stage measured before 2026-12-07 kept only its wall time). CPU time, not the wall time, says "
              "what a stage costs when the machine runs other work too; a stage keeps its `--workers` processes "
              "busy, so on that many idle cores it takes about its CPU time divided by them."), "",
             "| kind of stage | stages | CPU time | longest stage |", "|---|---:|---:|---:|"]
    for kind in STAGE_KINDS.values():
        mine = [cpu for k, cpu in timed if k == kind]
        if mine:
            lines.append(f"| {kind} | {len(mine)} | {sum(mine) / 3600:.1f} h | {max(mine) / 3600:.2f} h |")
    lines.append(f"| **all** | **{len(timed)}** | **{total / 3600:.1f} h** | |")
    lines += ["", (f"The longest chain of stages that must run one after another (a row's slowest best response, then "
                   f"its search stage; a preset's risen bar after the rest of it) takes {chain / 3600:.1f} CPU hours. "
                   "The stages are otherwise independent (`truco report --backend ray`, docs/scaling.md), so N "
                   "machines of two cores take at least the larger of the whole divided among them and that chain:"),
              "", "| two-core machines | at least |", "|---:|---:|"]
    lines += [f"| {n} | {max(total / (2 * n), chain / 2) / 3600:.1f} h |" for n in (1, 2, 4, 8)]
    return lines


def _sections(rows: list[dict[str, Any]], settings: dict[str, Any]) -> list[str]:
    """Bluffing, play-time search, the strongest agent per preset and the gauntlet."""
    lines: list[str] = []
    if any("bluffing" in row for row in rows):
        lines += ["", "## Bluffing", "",
                  (f"Each agent's truco-ladder calls over {BLUFF_MATCHES} duplicate matches against `{BLUFF_OPPONENT}` "
                   "(the heuristic's row: against itself). A hand is *bottom-third* when its strength (the share of "
                   "the deck each card beats, summed) is below the lower tertile of the preset's deals; a call with "
                   "one is a bluff. A share near a third means calls that ignore the cards; near 0, no bluffing. "
                   "95% Wilson intervals; per seat-hand, so a hand with several calls by the same seat counts once."),
                  "", *bluffing_table(rows)]
    if any("search" in row for row in rows):
        lines += ["", "## Play-time search", "",
                  (f"Each CFR blueprint as it ships and with play-time search (`,search={SEARCH_MS}`: a budget "
                   f"of {SEARCH_MS} ms on one core at each decision whose public state is small enough to check "
                   "the search exactly, in 1v1 the last trick, and the search played only when its check passes; "
                   f"docs/cfr.md), on the same {settings['eval_matches']:,} duplicate deals: its win rate against the "
                   "heuristic, and against the strongest trained best response of its ABR figure (a best response "
                   "to the blueprint, not to the searching agent: how much of the hole the search closes). 95% "
                   "Wilson intervals. A best response trained against the searching agent itself (one to two hours "
                   "per learner here) moved the ABR win rate by less than its interval when it was measured "
                   "(docs/cfr.md), so the report does not repeat it."),
                  "", *search_table(rows)]
    lines += ["", "## The strongest agent per preset", "", RULE, "",
              ("The head to head of two shipped agents other than the heuristic is played once, "
               f"{settings['eval_matches']:,} duplicate matches, from the side of the first one listed; `truco play`"
               " and `truco serve` play `best:<preset>` unless told otherwise."), "",
              *best_table(rows), "", *shortfall_lines(rows)]
    lines += ["", "## The gauntlet", "",
              ("Fixed per preset (`training/measure/gauntlet.py`); `ppo:gauntlet/...` are the best responses `truco exploit` "
               "trains (seed 0, the standard budget) against the opponent named, packaged under "
               "`agents/policies/gauntlet/`; the one against the heuristic is the very run of the heuristic's ABR "
               "figure above, so the heuristic's own gauntlet holds its exploiter."),
              "", "| opponent | family | spec | what it is |", "|---|---|---|---|"]
    for o in OPPONENTS:
        lines.append(f"| {o.name} | {o.family} | `{o.spec}` | {o.about} |")
    for row in rows:
        lines += ["", f"### `{row['agent']}` on {row['preset']}", "", markdown_table(row["gauntlet"])]
    return lines


def shortfall_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Where each preset's ``best:`` agent misses the bars (exploitability included), with a pointer to what was
    measured of why."""
    lines = [("Where each preset's `best:` agent falls short of the bars, exploitability included (at most "
              "40% ABR win rate and below the heuristic's); what was measured of why is in the "
              "[research log](research.md#where-the-shipped-agents-fall-short):"), ""]
    for preset, agent in choices(rows).items():
        row = next(r for r in rows if r["agent"] == agent and r["preset"] == preset)
        short = shortfalls(row, [r for r in rows if r["preset"] == preset])
        rise = f"; {rise_line(row)}" if not short and "rise" in row else ""
        lines.append(f"* {preset}, `{agent}`: " + ("; ".join(short) if short else "every bar passed") + rise + ".")
    return lines


def stage_table(rows: list[dict[str, Any]], stages: tuple[str, ...], header: list[str], cells: Any) -> list[str]:
    """A Markdown table of some stages: a line per row that has them all (preset, agent, then ``cells(row)``); a
    ``header`` name that starts with ``>`` is a right-aligned (numeric) column."""
    lines = ["| preset | agent | " + " | ".join(h.lstrip(">") for h in header) + " |",
             "|---|---|" + "".join("---:|" if h.startswith(">") else "---|" for h in header)]
    lines += [f"| {row['preset']} | `{row['agent']}` | " + " | ".join(cells(row)) + " |"
              for row in rows if all(stage in row for stage in stages)]
    return lines


def search_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown rows: the blueprint's win rates without and with play-time search, against the heuristic and
    against the blueprint's strongest trained best response."""
    return stage_table(rows, ("search",),
                       ["vs heuristic", "searching, vs heuristic", "vs its trained best response",
                        "searching, vs the same best response"],
                       lambda row: [pairing_rate(row["search"][o][k]) for o in ("heuristic", "exploiter")
                                    for k in ("blueprint", "searched")])


def bluffing_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown rows: ladder calls per hand, the weak-hand share of those calls and how often they won."""

    def cells(row: dict[str, Any]) -> list[str]:
        counts = row["bluffing"]["counts"]
        rates = behaviour_rates(counts)
        share = percent(rates["weak_call_share"] or 0.0, *wilson_interval(counts.get("bluffs", 0),
                                                                       counts.get("calling_hands", 0)))
        won = percent(rates["bluff_win_rate"] or 0.0, *wilson_interval(counts.get("bluffs_won", 0),
                                                                   counts.get("bluffs", 0)))
        return [f"{rates['hands']:,}", f"{rates['truco_call_rate']:.3f}",
                f"{share} ({counts.get('bluffs', 0):,} of {counts.get('calling_hands', 0):,})", won]

    return stage_table(rows, ("bluffing",), [">hands", ">ladder calls per hand",
                                          "share of calls with a bottom-third hand", "bluffs that won the hand"],
                       cells)


def strength_figure(rows: list[dict[str, Any]]) -> Any:
    """The page's figure (a matplotlib Figure, for the caller to save and close): per preset, each agent's ABR
    win rate and gauntlet mean and worst, with their 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    presets = list(dict.fromkeys(r["preset"] for r in rows))
    fig, axes = plt.subplots(1, len(presets), figsize=(4.6 * len(presets), 3.6), squeeze=False, sharey=True)
    colours = OKABE_ITO[:3]  # told apart with any colour vision
    for ax, preset in zip(axes[0], presets):
        mine = [r for r in rows if r["preset"] == preset]
        width = 0.8 / len(mine)
        for k, r in enumerate(mine):
            rate, low, high = zip(*(f(r) for _, f in FIGURE_MEASURES), strict=True)
            errors = [[v - lo for v, lo in zip(rate, low, strict=True)],
                      [hi - v for v, hi in zip(rate, high, strict=True)]]
            ax.bar([i + k * width for i in range(len(FIGURE_MEASURES))], rate, width, yerr=errors, capsize=2,
                   color=colours[k % len(colours)], label=r["agent"])
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(FIGURE_MEASURES))], [m for m, _ in FIGURE_MEASURES],
                      fontsize=7)
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_ylim(0, 1)
        ax.set_title(preset, fontsize=10)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("win rate (95% interval)")
    return fig


#: The figure's measures: (label, (rate, low, high) of a row); error bars are the 95% intervals.
FIGURE_MEASURES = [
    ("ABR: the best\nresponse's win rate\n(lower is better)",
     lambda r: (r["exploit"]["abr"]["win_rate"], r["exploit"]["abr"]["ci_low"], r["exploit"]["abr"]["ci_high"])),
    ("the agent's\ngauntlet mean", lambda r: (r["gauntlet"]["mean"], r["gauntlet"]["mean_low"],
                                              r["gauntlet"]["mean_high"])),
    ("the agent's\ngauntlet worst", lambda r: (r["gauntlet"]["worst"]["win_rate"], r["gauntlet"]["worst"]["ci_low"],
                                               r["gauntlet"]["worst"]["ci_high"]))]
