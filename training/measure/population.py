"""The held-out gauntlet's population: which opponents, per preset (data only).

Why a module of its own: ``truco train ppo`` must refuse these opponents in a config
(:func:`refuse_gauntlet_opponents`), and the gauntlet's runner (:mod:`training.measure.gauntlet`) trains and plays them
with the trainer; the rule is the command's, not the trainer's, since a best response (the same trainer) may take
any agent as its target. docs/exploitability.md tells why these families.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The four main presets, those the strength bars of docs/strength.md are counted over and the report measures by
#: default.
MAIN_PRESETS = ("argentine", "argentine-2v2", "paulista", "paulista-2v2")
#: The presets the gauntlet and the report are made for: the main ones and Uruguayan Truco's 1v1 and 2v2.
REPORT_PRESETS = MAIN_PRESETS + ("uruguayan", "uruguayan-2v2")


@dataclass(frozen=True)
class Opponent:
    name: str
    family: str
    spec: str  # "{preset}" is replaced by the preset's name
    about: str

    def spec_for(self, preset: str) -> str:
        return self.spec.replace("{preset}", preset)


OPPONENTS = (
    Opponent("bluffer", "heuristic variants", "heuristic:bluff=0.35",
             "the heuristic bluffing a third of its weak hands"),
    Opponent("tight", "heuristic variants", "heuristic:bluff=0,respect=0.9",
             "the heuristic never bluffing, reading every call as strength"),
    Opponent("threshold", "threshold rules", "threshold", "card-strength thresholds, its own envido and truco rules"),
    Opponent("threshold-loose", "threshold rules", "threshold:bet=0.6,call=0.4",
             "the threshold bot betting and calling with weaker hands"),
    Opponent("station", "archetypes", "station", "a calling station: never bets, accepts every call"),
    Opponent("maniac", "archetypes", "maniac", "raises and calls envido whenever it can, never refuses"),
    Opponent("br-heuristic", "trained best responses", "ppo:gauntlet/{preset}-br-heuristic",
             "the best response truco exploit trains against the default heuristic (seed 0)"),
    Opponent("br-threshold", "trained best responses", "ppo:gauntlet/{preset}-br-threshold",
             "the best response truco exploit trains against threshold (seed 0)"),
)


def gauntlet_specs(preset: str) -> list[str]:
    return [o.spec_for(preset) for o in OPPONENTS]


def all_gauntlet_specs() -> set[str]:
    """Every spec of every preset's gauntlet (what training configs may never name)."""
    return {spec for preset in REPORT_PRESETS for spec in gauntlet_specs(preset)}


def refuse_gauntlet_opponents(league: dict[str, float], eval_opponents: tuple[str, ...]) -> None:
    """ValueError when a training config names a held-out opponent as a league member or an evaluation opponent:
    a policy judged against opponents it trained against makes a number, not a player."""
    named = sorted((set(league) | set(eval_opponents)) & all_gauntlet_specs())
    if named:
        raise ValueError(f"{named} belong to the held-out gauntlet (training/measure/gauntlet.py), which no training run "
                         "may name")
