"""``best:<preset>``: the strongest shipped agent of a main preset, by name.

Which agent that is is not decided here: ``truco report`` measures every shipped agent and chooses by the rule
written in docs/strength.md before measuring, then writes its choice to ``agents/policies/best.json``. This module
only reads that file, so that ``truco play``, ``truco serve`` and any tournament can say "the best we have"
without knowing today's answer. The file travels with the package and could be edited by anyone: it is parsed as
plain JSON, and a choice is accepted only when it names a shipped agent kind for its own preset.
"""

from __future__ import annotations

import json
import os

from truco_env.limits import clip

from .base import SHIPPED_DIR, Agent, make_agent, register_agent

BEST_FILE = os.path.join(SHIPPED_DIR, "best.json")
#: The kinds the report measures and may choose (agents/policies holds their files; a search plays one of them).
CHOSEN_KINDS = ("heuristic", "ppo", "cfr")


def _choosable(spec: str, preset: str) -> bool:
    """A shipped agent of ``preset`` (``heuristic``, ``ppo:<preset>``, ``cfr:<preset>``), or one of its networks or
    blueprints searching at play time (``search:ppo:<preset>[,OPTIONS]``, docs/search.md)."""
    kind, _, arg = spec.partition(":")
    if kind == "search":
        inner = arg.partition(",")[0]
        return inner.partition(":")[0] in ("ppo", "cfr") and _choosable(inner, preset)
    return kind in CHOSEN_KINDS and arg.partition(",")[0] in ("", preset)


def choices(path: str = BEST_FILE) -> dict[str, str]:
    """The report's choice per preset (``{"argentine": "ppo:argentine", ...}``); ValueError naming the file when
    it is missing or malformed."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        best = data["best"]
        if not isinstance(best, dict):
            raise TypeError("'best' is not an object")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not the report's choice of agents ({type(exc).__name__}: "
                         f"{clip(str(exc), 100)}); `truco report` writes it") from None
    for preset, spec in best.items():
        if not _choosable(str(spec), str(preset)):
            raise ValueError(f"{path}: the choice for {clip(repr(preset))} is {clip(repr(spec))}; allowed: "
                             f"heuristic, ppo:{clip(preset)} or cfr:{clip(preset)}, or search: on one of the two")
    return dict(best)


def resolve_best(preset: str, path: str = BEST_FILE) -> str:
    """The agent spec ``best:<preset>`` stands for; ValueError naming the presets that have a choice."""
    best = choices(path)
    if preset not in best:
        raise ValueError(f"agent 'best:{clip(preset)}': no choice for that preset; presets with one: {sorted(best)}")
    return best[preset]


def resolve_spec(spec: str) -> str:
    """``spec`` itself, or the spec a ``best:<preset>`` spec stands for (for caches keyed on an agent's file)."""
    kind, _, preset = spec.partition(":")
    return resolve_best(preset) if kind == "best" else spec


def default_spec(preset: str, fallback: str) -> str:
    """``best:<preset>`` where the report has chosen for ``preset``, else ``fallback`` (the research variants)."""
    try:
        return f"best:{preset}" if preset in choices() else fallback
    except ValueError:  # no readable choice file: the fallback still plays
        return fallback


def _factory(arg: str | None, params: dict[str, str]) -> Agent:
    if arg is None or params:
        raise ValueError("agent 'best' takes a preset name: best:<preset>, e.g. best:argentine")
    return make_agent(resolve_best(arg))  # make_agent then names it by the spec it was asked for


register_agent("best", _factory)
