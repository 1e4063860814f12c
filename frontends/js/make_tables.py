"""Write ``frontends/js/truco_tables.json``: the data tables the JavaScript encoder shares with ``truco_env``.

Why generated: the card index, strength tables, action names, observation offsets and rule defaults are defined
once, in Python; a copy typed by hand would drift. ``tests/test_js_encoder.py`` fails when the committed file
differs from what this script writes now.

    python frontends/js/make_tables.py            # rewrite the file
    python frontends/js/make_tables.py --check    # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from truco_env import actions, cards, engine
from truco_env.config import CHOICES, FAMILY_DEFAULTS, PRESETS, TrucoConfig
from truco_env.encoding import (
    ENVIDO_CALL_SLOTS,
    ENVIDO_SCALE,
    ENVIDO_STATUS,
    FLOR_CALL_NAMES,
    FLOR_CALL_SLOTS,
    FLOR_SCALE,
    FLOR_STATUS,
    MAX_SEATS,
    MAX_TRICKS,
    OBS_OFFSETS,
    OBSERVATION_FIELDS,
    OBSERVATION_SIZE,
    OBSERVATION_VERSION,
    OPTION_BITS,
    PHASES,
    SENAS_FIELDS,
    SENAS_OFFSETS,
    SENAS_SIZE,
    TALLY_SCALE,
    URUGUAYAN_FIELDS,
    URUGUAYAN_OFFSETS,
    URUGUAYAN_OPTION_BITS,
    URUGUAYAN_SIZE,
)

OUT = Path(__file__).resolve().parent / "truco_tables.json"


def _defaults() -> dict:
    """Every config field's default before resolution (``malas_buenas`` and the fields of ``family_defaults`` stay
    null)."""
    out = {}
    for f in dataclasses.fields(TrucoConfig):
        value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def tables() -> dict:
    decided = {str(n): {",".join(str(r) for r in prefix): winner for prefix, winner in table.items()}
               for n, table in engine._DECIDED.items()}
    return {
        "format": "truco-rl-js-tables",
        "observation": {
            "version": OBSERVATION_VERSION,
            "size": OBSERVATION_SIZE,
            # names, offsets and sizes only: the meanings live in docs/observation.md
            "fields": [[name, OBS_OFFSETS[name][0], size] for name, size, _ in OBSERVATION_FIELDS],
            "option_bits": [list(bit) for bit in OPTION_BITS],
            "phases": list(PHASES),
            "envido_status": list(ENVIDO_STATUS),
            "flor_status": list(FLOR_STATUS),
            "envido_call_slots": ENVIDO_CALL_SLOTS,
            "flor_call_slots": FLOR_CALL_SLOTS,
            "flor_call_names": list(FLOR_CALL_NAMES),
            "max_seats": MAX_SEATS,
            "max_tricks": MAX_TRICKS,
            "tally_scale": TALLY_SCALE,
            # appended only where the rules have senas (docs/rules.md §3.13)
            "senas_fields": [[name, SENAS_OFFSETS[name][0], size] for name, size, _ in SENAS_FIELDS],
            "senas_size": SENAS_SIZE,
            # appended only in Uruguayan Truco (docs/observation.md); points scaled per family
            "uruguayan_fields": [[name, URUGUAYAN_OFFSETS[name][0], size] for name, size, _ in URUGUAYAN_FIELDS],
            "uruguayan_size": URUGUAYAN_SIZE,
            "uruguayan_option_bits": [list(bit) for bit in URUGUAYAN_OPTION_BITS],
            "envido_scale": dict(ENVIDO_SCALE), "flor_scale": dict(FLOR_SCALE),
        },
        "actions": {
            "count": actions.NUM_ACTIONS,
            "play_base": actions.PLAY_BASE, "cover_base": actions.COVER_BASE, "slot_base": actions.SLOT_BASE, "call_base": actions.CALL_BASE,
            "calls": list(actions.CALLS),
            "names": {family: actions.action_names(family) for family in cards.FAMILIES},
            "tally_classes": list(actions.TALLY_CLASSES),
            "tally_class_of": list(actions.TALLY_CLASS_OF),
            "sena_base": actions.SENA_BASE, "senas": list(actions.SENA_ACTIONS), "count_with_senas": actions.NUM_ACTIONS_SENAS,
        },
        "cards": {
            "count": cards.NUM_CARDS,
            "families": list(cards.FAMILIES),
            "ranks": {family: list(cards.RANKS[family]) for family in cards.FAMILIES},
            "suits": {family: list(cards.SUITS[family]) for family in cards.FAMILIES},
            "paulista_deck_ranks": {deck: list(ranks) for deck, ranks in cards.PAULISTA_DECK_RANKS.items()},
            "argentine_strength": list(cards.ARGENTINE_STRENGTH),
            "paulista_strength": [list(row) for row in cards.PAULISTA_STRENGTH],  # by manilha rank index
            "envido_rank_value": list(cards.ENVIDO_RANK_VALUE),
            # Uruguayan, by the muestra's card index: strength, each card's reduced value, the five piezas
            "uruguayan_strength": [list(row) for row in cards.URUGUAYAN_STRENGTH],
            "uruguayan_value": [[cards.uruguayan_value(c, m) for c in range(cards.NUM_CARDS)]
                                for m in range(cards.NUM_CARDS)],
            "piezas": [list(cards.piezas(m)) for m in range(cards.NUM_CARDS)],
        },
        "rules": {
            "ladder_calls": {family: list(calls) for family, calls in engine.LADDER_CALLS.items()},
            "ladder_values": {family: list(values) for family, values in engine.LADDER_VALUES.items()},
            "envido_value": dict(engine.ENVIDO_VALUE),
            # hand winner by trick results so far ("0,-1": team 0 won trick 1, trick 2 tied); per hand size
            "decided": decided, "tie": engine.TIE, "all_tied": engine.ALL_TIED,
        },
        "config": {
            "defaults": _defaults(),
            "family_defaults": {name: dict(values) for name, values in FAMILY_DEFAULTS.items()},
            "choices": {name: list(values) for name, values in CHOICES.items()},
            "presets": {name: config.to_dict() for name, config in PRESETS.items()},
        },
    }


def _format(value, indent: str = "") -> str:
    """JSON with one key per line but every list of plain values on one line (a short, reviewable diff)."""
    inner = indent + " "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(key)}: {_format(value[key], inner)}" for key in sorted(value)]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(inner + _format(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


def render() -> str:
    return _format(tables()) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.name} is stale: run python frontends/js/make_tables.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
