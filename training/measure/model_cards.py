"""The model cards shipped beside each policy and blueprint (``agents/policies/<kind>_<preset>.md``), drawn from
the report's rows and the agent file's own metadata alone.

Pure functions, as the page's (:mod:`training.measure.report_page`): a card is remade byte for byte from
docs/strength.json and the shipped file it describes (``tests/test_report_render.py``); :mod:`training.measure.report`
reads the files and writes the cards.
"""

from __future__ import annotations

from typing import Any

from training.measure.best_agent import shortfalls
from training.measure.report_data import measured_on
from training.measure.report_page import abr_cell, pairing_rate, percent
from truco_env.config import make_config

#: Where a card points for what was measured of why an agent misses a bar (a card sits two folders below the root).
SHORTFALL_CAUSES = "../../docs/research.md#where-the-shipped-agents-fall-short"


def short_lines(short: list[str] | None) -> list[str]:
    """A card's line on the bars of docs/strength.md: which it misses and where their measured causes are."""
    if short is None:
        return []
    if not short:
        return ["* It passes every bar of docs/strength.md (\"The strongest agent per preset\")."]
    return [("* Where it falls short of the bars of docs/strength.md: " + "; ".join(short)
             + f". What was measured of why: [research log]({SHORTFALL_CAUSES}).")]


def policy_card(row: dict[str, Any], meta: dict[str, Any], settings: dict[str, Any],
                short: list[str] | None = None) -> str:
    """The card shipped beside a rebuilt ``ppo:<preset>``: how it was made, what it measured, where it stops."""
    preset, config = row["preset"], meta["config"]
    prev = next((v for k, v in row["versus"].items() if k.startswith("onnx:")), None)
    teacher = config.get("imitation_teacher", "heuristic")
    blueprint = config.get("imitation_decisions") and teacher.split(",")[0] == f"cfr:{preset}"  # the shipped one
    magnet = config.get("magnet") if config.get("magnet_coef") else None

    lines = [
        f"# Model card: `ppo:{preset}`", "",
        (f"One policy network for {preset}, trained by population self-play"
         + (f" after a warm start that imitates {config['imitation_decisions']:,} decisions of `{teacher}` playing "
            "itself (the same run)" if config.get("imitation_decisions") else "")
         + ": it played itself, frozen past snapshots of itself and small shares of the scripted agents in its "
         "config, and acts from its own observation alone (no input, expert or reward term depends on whom it "
         "faces)."), "",
        "## How it was made", "",
        "```bash", f"truco train ppo --config configs/ppo/{preset}.yaml", "truco ship runs/ppo/" + preset,
        "```", "",
        (f"* {meta.get('decisions', 0):,} learner decisions in {meta.get('updates', 0):,} updates, "
        f"{meta.get('seconds', 0) / 3600:.2f} h on the training machine;"),
        (f"* network: hidden layers {config['hidden']}, features `{config.get('features', 'card_strength')}`"
         f"{', the match tally scaling and shifting its features (`tally_film`)' if config.get('tally_film') else ''}"
         f"; plays `{meta.get('play')}` "
        "by default (`ppo:PATH,greedy` or `,sample` to choose);"),
        *([(f"* held near the blueprint `{magnet}` throughout: the loss adds {config['magnet_coef']} times the KL "
            "divergence from the blueprint's strategy at each of its decisions (magnetic mirror descent with a fixed "
            "magnet), so self-play cannot drift far from it where only its own league would reward that;")]
          if magnet else []),
        f"* config hash `{meta.get('config_hash')}`, commit `{meta.get('commit')}` (both in the file's metadata).",
        "", f"![training curves](../../docs/img/ppo_{preset}_training.png)", "",
        *measured_rows(row, settings),
        f"| vs the policy it replaced | {pairing_rate(prev) if prev else 'n/a'} |", "",
        "## Limits", "",
        f"* It plays {preset} only (the file says so; other presets are refused).",
        "* Its numbers are against the agents above, on duplicate deals; it was never measured against people.",
        *short_lines(short),
        ("* A best response trained against it alone wins the ABR rate above: where that is over 50%, a learner "
         "found a way to exploit it."),
        *([(f"* Its {'warm start' if blueprint else 'magnet'} reads the shipped self-play blueprint "
            f"`cfr:{preset}` (`agents/policies/`, made by `truco train cfr --config "
            f"configs/cfr_blueprint_{preset}.yaml`): the run is one command given the repository, but not from "
            "nothing without that file.")] if blueprint or magnet == f"cfr:{preset}" else []),
        ("* These are one training run's numbers. Two training seeds of one config can differ by 20 to 30 points "
         "in ABR win rate (on argentine: 43.4% and 63.1%, 37.9% and 68.0%; [research log](../../docs/research.md)),"
         " so the ABR above is one draw of the recipe, not a property of it."),
        "",
    ]
    return "\n".join(lines)


def measured_rows(row: dict[str, Any], settings: dict[str, Any]) -> list[str]:
    """A model card's "What it measured" heading and table: ABR, gauntlet, heuristic and random (every card)."""
    g, vs = row["gauntlet"], row["versus"]

    return [
        f"## What it measured (`truco report`, {measured_on(row, settings['finished'])}; `docs/strength.md`)", "",
        "| measure | result |", "|---|---|",
        f"| ABR win rate ({settings['decisions']:,} decisions; lower is better) | {abr_cell(row['exploit'])} |",
        f"| gauntlet mean | {percent(g['mean'], g['mean_low'], g['mean_high'])} |",
        (f"| gauntlet worst | {percent(g['worst']['win_rate'], g['worst']['ci_low'], g['worst']['ci_high'])} "
         f"vs {g['worst']['opponent']} |"),
        f"| vs heuristic | {pairing_rate(vs['heuristic'])} |", f"| vs random | {pairing_rate(vs['random'])} |",
        *(f"| vs `{rival}` (head to head) | {pairing_rate(figure)} |" for rival, figure in row.get("rivals", {}).items()
          if isinstance(figure, dict) and "win_rate_a" in figure)]


def search_rows(row: dict[str, Any]) -> list[str]:
    """The model card's rows of the play-time search stage (none when the row has no such stage)."""
    if "search" not in row:
        return []
    s = row["search"]

    n = s["heuristic"]["blueprint"]["matches"]
    lines = [(f"| `{s['searched']}`, vs heuristic ({n:,} matches; the blueprint on the same deals) "
              f"| {pairing_rate(s['heuristic']['searched'])} ({pairing_rate(s['heuristic']['blueprint'])}) |"),
             (f"| `{s['searched']}`, vs the blueprint's trained best response ({n:,} matches; the blueprint) "
              f"| {pairing_rate(s['exploiter']['searched'])} ({pairing_rate(s['exploiter']['blueprint'])}) |")]
    return lines


def blueprint_card(row: dict[str, Any], meta: dict[str, Any], settings: dict[str, Any],
                   short: list[str] | None = None) -> str:
    """The card shipped beside ``cfr:<preset>``: how the blueprint was made, what it measured, where it stops."""
    preset, shipped = row["preset"], meta["shipped"]
    team = make_config(preset).num_players > 2
    seats, partners = ("every seat", ": partners never see each other's cards") if team else ("both seats", "")

    lines = [
        f"# Model card: `cfr:{preset}`", "",
        (f"A self-play blueprint for {preset}: external-sampling MCCFR on the compiled engine, {seats} sharing one "
         f"table, no opponent model, over the information-set abstraction `{meta.get('abstraction')}` (keys "
         f"computed from the seat's own observation, so it plays from what that seat may know{partners}). Each "
         "hand is valued by "
         f"`{(meta.get('solver') or {}).get('utility', 'points')}`."), "",
        "## How it was made", "",
        "```bash", f"truco train cfr --config {shipped['config']}", f"truco ship {shipped['config']}",
        "```", "",
        (f"* {meta.get('iteration', 0):,} iterations (one hand each), {meta.get('nodes', 0):,} nodes walked; "
         f"the shipped table holds the average strategy only (play-only: regrets dropped);"),
        (f"* plays its average strategy {_play_words(meta)} (`cfr:{preset},threshold=X` or `,greedy=1` to "
         "change it);"),
        f"* config hash `{shipped.get('config_hash')}`, commit `{shipped.get('commit')}` (both in the file's header).",
        "", *measured_rows(row, settings), *search_rows(row), "",
        "## Limits", "",
        f"* It plays {preset} only, and only what its abstraction tells apart: hands that share a key share a strategy.",
        "* An information set the run never visited is played uniformly over the legal actions.",
        "* Its numbers are against the agents above, on duplicate deals; it was never measured against people.",
        *short_lines(short),
        "",
    ]
    return "\n".join(lines)


def _play_words(meta: dict[str, Any]) -> str:
    """How a blueprint plays by default, in words (its table's header says)."""
    from agents.cfr.table import default_play

    play = default_play(meta)
    if play["mode"] == "threshold":
        return f"thresholded (actions under probability {play['threshold']} dropped, the rest renormalised)"
    return "greedily (its most likely action)" if play["mode"] == "greedy" else "by sampling"


def card_name(row: dict[str, Any]) -> str:
    """The file name of the card of a row's agent: ``ppo_argentine.md`` beside ``ppo_argentine.safetensors``."""
    return f"{row['agent'].partition(':')[0]}_{row['preset']}.md"


def model_card(row: dict[str, Any], rows: list[dict[str, Any]], meta: dict[str, Any],
               settings: dict[str, Any]) -> str | None:
    """The card of a row's agent, whose file holds ``meta``, with its line on the bars among ``rows`` (those of
    its preset); None for an agent without a card (the heuristic, a policy made before the rebuild)."""
    kind = row["agent"].partition(":")[0]
    short = shortfalls(row, [r for r in rows if r["preset"] == row["preset"]])
    if kind == "ppo" and "config_hash" in meta:
        return policy_card(row, meta, settings, short)
    if kind == "cfr":
        return blueprint_card(row, meta, settings, short)
    return None
