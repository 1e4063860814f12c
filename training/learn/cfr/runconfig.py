"""YAML run configs for ``truco train cfr --config FILE`` (``configs/cfr_*.yaml``), validated with clear errors.

Keys (``trainer: exact`` runs full-traversal CFR on a research preset, ``trainer: mccfr`` external-sampling
MCCFR with the information-set abstraction on a full 1v1 preset, or 2v2 with abstraction ``v5``):

common
  ``trainer``, ``preset``, ``overrides`` (rules fields, optional), ``seed``, ``checkpoint`` (path of the .npz),
  ``resume`` (continue from ``checkpoint`` when it exists, default true), ``logdir`` (TensorBoard, null = off),
  ``progress`` (show a progress bar, default true)
exact
  ``algorithm`` (cfr+ | linear | dcfr | cfr), ``alternating`` (default true), ``averaging_delay``, ``alpha``,
  ``beta``, ``gamma`` (dcfr), ``iterations`` (the most to run), ``target_nash_conv`` (stop once NashConv
  <= this fraction of the utility range; null = run all iterations), ``eval_every`` (iterations between exact
  NashConv evaluations), ``checkpoint_every`` (iterations)
mccfr
  ``iterations`` (the most to run), ``time_limit_s`` (stop after this wall time), ``checkpoint_every_s``,
  ``log_every`` (iterations between TensorBoard points), ``abstraction`` (``v4``, the default; ``v5`` in team
  play; ``lossless`` on research presets: :mod:`agents.cfr.abstraction`), ``eval``
  (optional: ``{opponent: heuristic, matches: 200, workers: 1}``: duplicate matches at the end of the run),
  ``utility`` (``points``, the default: the hand's point difference; ``match_equity``: the change in
  match-winning probability over the hand)

The fields are typed and checked by pydantic (:mod:`training.options`): a wrong type, an out-of-range value or a
key of the other trainer is one line naming the option; an unknown key suggests the closest names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from training.learn.cfr.solver import ALGORITHMS
from training.options import Options, PresetName, build, read_yaml
from truco_env import make_config

TRAINERS = ("exact", "mccfr")
EXACT = {"algorithm", "alternating", "averaging_delay", "alpha", "beta", "gamma", "target_nash_conv", "eval_every",
         "checkpoint_every"}
#: The utilities MCCFR can maximise: the hand's point difference, or the change in match-winning probability.
UTILITIES = ("points", "match_equity")
MCCFR = {"time_limit_s", "checkpoint_every_s", "log_every", "abstraction", "eval", "utility"}
PositiveInt = Annotated[int, Field(ge=1)]
NonNegative = Annotated[float, Field(ge=0)]


class EvalOptions(Options):
    """The end-of-run check of an MCCFR run: duplicate matches of the checkpoint against one agent."""

    opponent: str = "heuristic"
    """Agent spec of the opponent."""
    matches: PositiveInt = 200
    """Duplicate matches."""
    workers: PositiveInt = 1
    """Processes."""
    seed: int | None = None
    """Seed of the deals; null: the run's seed (seed 0 gives the strength report's deals; another seed checks a
    run on deals the report never plays)."""


class RunConfig(Options):
    """One CFR run; a YAML file (``configs/cfr_*.yaml``) sets the fields, checked on load."""

    trainer: Literal["exact", "mccfr"]
    """``exact``: full-traversal CFR on a research preset; ``mccfr``: external-sampling MCCFR on a full 1v1 preset
    (or 2v2 with abstraction ``v5``)."""
    preset: PresetName
    """Rules preset."""
    overrides: dict[str, Any] = Field(default_factory=dict)
    """Rules fields over the preset's, e.g. ``{deck_ranks: [K]}``."""
    seed: Annotated[int, Field(ge=0)] = 0
    """Seeds every draw of the run."""
    checkpoint: Annotated[str, Field(min_length=1)] = "runs/cfr/checkpoint.npz"
    """Path of the .npz checkpoint."""
    resume: bool = True
    """Continue from ``checkpoint`` when it exists."""
    logdir: Annotated[str, Field(min_length=1)] | None = None
    """TensorBoard folder (null: none)."""
    progress: bool = True
    """Show a progress bar."""
    iterations: PositiveInt = 1000
    """The most iterations to run."""
    # exact
    algorithm: Literal[ALGORITHMS] = "cfr+"  # type: ignore[valid-type]
    """exact: the regret update."""
    alternating: bool = True
    """exact: update one player per iteration."""
    averaging_delay: Annotated[int, Field(ge=0)] = 0
    """exact: iterations before the average strategy starts."""
    alpha: NonNegative = 1.5
    """exact, dcfr: discount of positive regrets."""
    beta: NonNegative = 0.0
    """exact, dcfr: discount of negative regrets."""
    gamma: NonNegative = 2.0
    """exact, dcfr: discount of the average strategy."""
    target_nash_conv: NonNegative | None = 1e-3
    """exact: stop once NashConv is at most this fraction of the utility range (null: run every iteration)."""
    eval_every: PositiveInt = 10
    """exact: iterations between exact NashConv evaluations."""
    checkpoint_every: PositiveInt = 100
    """exact: iterations between checkpoints."""
    # mccfr
    time_limit_s: NonNegative | None = None
    """mccfr: stop after this wall time."""
    checkpoint_every_s: NonNegative = 300.0
    """mccfr: seconds between checkpoints."""
    log_every: PositiveInt = 1000
    """mccfr: iterations between TensorBoard points."""
    abstraction: Literal["v4", "v5", "lossless"] = "v4"
    """mccfr: the information-set abstraction (agents/cfr/abstraction.py): v4, v5 (v4, and in team play the
    whole current trick) or lossless (perfect recall within a hand, for the research presets)."""
    eval: EvalOptions | None = None
    """mccfr: duplicate matches at the end of the run (null: none)."""
    utility: Literal["points", "match_equity"] = "points"
    """mccfr: the hand's point difference, or the change in match-winning probability over the hand."""
    source: str = ""
    """Where the config came from (set by :func:`load_config`)."""

    @model_validator(mode="before")
    @classmethod
    def _keys_of_the_trainer(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("trainer") in TRAINERS:
            other, name = (MCCFR, "mccfr") if data["trainer"] == "exact" else (EXACT, "exact")
            wrong = sorted(set(data) & other)
            if wrong:
                raise ValueError(f"option {wrong[0]!r} belongs to trainer {name!r}, not {data['trainer']!r}")
        return data

    @field_validator("overrides")
    @classmethod
    def _ranks_as_tuple(cls, value: dict[str, Any]) -> dict[str, Any]:
        if isinstance(value.get("deck_ranks"), list):
            value = {**value, "deck_ranks": tuple(str(r) for r in value["deck_ranks"])}
        return value

    @model_validator(mode="after")
    def _playable(self) -> RunConfig:
        try:
            rules = self.rules()
        except ValueError as exc:
            raise ValueError(f"rules: {exc}") from None
        if self.trainer == "exact":
            from training.learn.cfr.tree import check_solvable

            check_solvable(rules)
        elif rules.num_players != 2 and not (rules.num_players == 4 and self.abstraction == "v5"):
            raise ValueError(f"mccfr trains 1v1 presets, and 2v2 ones with abstraction v5 (the whole trick); "
                             f"{self.preset!r} has {rules.num_players} players and abstraction {self.abstraction!r}")
        return self

    def rules(self):
        return make_config(self.preset, **self.overrides)

    def solver_params(self) -> dict:
        return {"algorithm": self.algorithm, "alternating": self.alternating,
                "averaging_delay": self.averaging_delay, "alpha": self.alpha, "beta": self.beta,
                "gamma": self.gamma}


def parse_config(data: Any, where: str = "config") -> RunConfig:
    """A checked :class:`RunConfig` from a mapping; a one-line ValueError naming the option otherwise."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping of settings, got {type(data).__name__}")
    return build(RunConfig, {**data, "source": where}, source=where)


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> RunConfig:
    """A checked :class:`RunConfig` from a YAML file, then ``overrides`` (``--set``)."""
    return parse_config({**read_yaml(str(path)), **(overrides or {})}, where=str(path))
