"""YAML run configs for ``truco train cfr --config FILE`` (``configs/cfr_*.yaml``), validated with clear errors.

Keys (``trainer: exact`` runs full-traversal CFR on a research preset, ``trainer: mccfr`` external-sampling
MCCFR with the information-set abstraction on a full 1v1 preset):

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
  ``log_every`` (iterations between TensorBoard points), ``abstraction`` (``v2``, the default, or ``v1``), ``eval``
  (optional: ``{opponent: heuristic, matches: 200, workers: 1}``: duplicate matches at the end of the run),
  ``opponent_model`` (optional: ``{agent: heuristic, matches: 3000, weight: 0.8, full_count: 20}``: train a
  data-biased response to a frequency model of that agent, built from ``matches`` of its self-play, see
  :mod:`training.cfr.opponent_model`; null = plain self-play MCCFR), ``utility`` (``points``, the default: the
  hand's point difference; ``match_equity``: the change in match-winning probability over the hand)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from truco_env import PRESETS, make_config

from .solver import ALGORITHMS

TRAINERS = ("exact", "mccfr")
COMMON = {"trainer", "preset", "overrides", "seed", "checkpoint", "resume", "logdir", "progress"}
EXACT = {"algorithm", "alternating", "averaging_delay", "alpha", "beta", "gamma", "iterations",
         "target_nash_conv", "eval_every", "checkpoint_every"}
MCCFR = {"iterations", "time_limit_s", "checkpoint_every_s", "log_every", "abstraction", "eval", "opponent_model",
         "utility"}
MODEL_KEYS = {"agent", "matches", "weight", "full_count"}


@dataclass
class RunConfig:
    trainer: str
    preset: str
    overrides: dict = field(default_factory=dict)
    seed: int = 0
    checkpoint: str = "runs/cfr/checkpoint.npz"
    resume: bool = True
    logdir: str | None = None
    progress: bool = True
    # exact
    algorithm: str = "cfr+"
    alternating: bool = True
    averaging_delay: int = 0
    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 2.0
    iterations: int = 1000
    target_nash_conv: float | None = 1e-3
    eval_every: int = 10
    checkpoint_every: int = 100
    # mccfr
    time_limit_s: float | None = None
    checkpoint_every_s: float = 300.0
    log_every: int = 1000
    abstraction: str = "v2"
    eval: dict | None = None
    opponent_model: dict | None = None
    utility: str = "points"
    source: str = ""

    def rules(self):
        return make_config(self.preset, **self.overrides)

    def solver_params(self) -> dict:
        return {"algorithm": self.algorithm, "alternating": self.alternating,
                "averaging_delay": self.averaging_delay, "alpha": self.alpha, "beta": self.beta,
                "gamma": self.gamma}


def _fail(where: str, message: str) -> None:
    raise ValueError(f"{where}: {message}")


def parse_config(data: Any, where: str = "config") -> RunConfig:
    if not isinstance(data, dict):
        _fail(where, f"expected a mapping of settings, got {type(data).__name__}")
    trainer = data.get("trainer")
    if trainer not in TRAINERS:
        _fail(where, f"'trainer' must be one of {list(TRAINERS)}, got {trainer!r}")
    allowed = COMMON | (EXACT if trainer == "exact" else MCCFR)
    unknown = sorted(set(data) - allowed)
    if unknown:
        _fail(where, f"unknown key(s) {unknown} for trainer {trainer!r}; allowed: {sorted(allowed)}")
    preset = data.get("preset")
    if preset not in PRESETS:
        _fail(where, f"'preset' must be one of {sorted(PRESETS)}, got {preset!r}")
    overrides = data.get("overrides") or {}
    if not isinstance(overrides, dict):
        _fail(where, "'overrides' must be a mapping of rules fields")
    if "deck_ranks" in overrides and isinstance(overrides["deck_ranks"], list):
        overrides = {**overrides, "deck_ranks": tuple(str(r) for r in overrides["deck_ranks"])}
    cfg = RunConfig(trainer=trainer, preset=preset, overrides=overrides, source=where)
    for key, value in data.items():
        if key in ("trainer", "preset", "overrides"):
            continue
        default = getattr(cfg, key)
        if key in ("logdir", "target_nash_conv", "time_limit_s", "eval", "opponent_model") and value is None:
            setattr(cfg, key, None)
            continue
        if isinstance(default, bool) or key in ("alternating", "resume", "progress"):
            if not isinstance(value, bool):
                _fail(where, f"{key!r} must be true or false, got {value!r}")
        elif key in ("seed", "iterations", "averaging_delay", "eval_every", "checkpoint_every", "log_every"):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0 or (
                    key in ("iterations", "eval_every", "checkpoint_every", "log_every") and value < 1):
                _fail(where, f"{key!r} must be a {'positive' if key != 'seed' else 'non-negative'} integer, "
                             f"got {value!r}")
        elif key in ("alpha", "beta", "gamma", "target_nash_conv", "time_limit_s", "checkpoint_every_s"):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                _fail(where, f"{key!r} must be a non-negative number, got {value!r}")
            value = float(value)
        elif key in ("checkpoint", "logdir", "algorithm", "abstraction", "utility"):
            if not isinstance(value, str) or not value:
                _fail(where, f"{key!r} must be a non-empty string, got {value!r}")
        elif key == "eval" and not isinstance(value, dict):
            _fail(where, "'eval' must be a mapping such as {opponent: heuristic, matches: 200}")
        elif key == "opponent_model":
            value = _check_model(value, where)
        setattr(cfg, key, value)
    if cfg.algorithm not in ALGORITHMS:
        _fail(where, f"'algorithm' must be one of {list(ALGORITHMS)}, got {cfg.algorithm!r}")
    if cfg.utility not in ("points", "match_equity"):
        _fail(where, f"'utility' must be 'points' or 'match_equity', got {cfg.utility!r}")
    if cfg.abstraction not in ("v1", "v2"):
        _fail(where, f"'abstraction' must be 'v1' or 'v2', got {cfg.abstraction!r}")
    try:
        rules = cfg.rules()
    except ValueError as exc:
        _fail(where, f"rules: {exc}")
    if trainer == "exact":
        from .tree import check_solvable
        try:
            check_solvable(rules)
        except ValueError as exc:
            _fail(where, str(exc))
    elif rules.num_players != 2:
        _fail(where, f"mccfr trains 1v1 presets (argentine, argentine-flor, paulista); {preset!r} has "
                     f"{rules.num_players} players")
    return cfg


def _check_model(value: Any, where: str) -> dict:
    example = "{agent: heuristic, matches: 3000, weight: 0.8, full_count: 20}"
    if not isinstance(value, dict):
        _fail(where, f"'opponent_model' must be a mapping such as {example}, got {value!r}")
    unknown = sorted(set(value) - MODEL_KEYS)
    if unknown:
        _fail(where, f"'opponent_model': unknown key(s) {unknown}; allowed: {sorted(MODEL_KEYS)}")
    agent = value.get("agent")
    if not isinstance(agent, str) or not agent:
        _fail(where, f"'opponent_model.agent' must be an agent spec such as 'heuristic', got {agent!r}")
    out = {"agent": agent, "matches": value.get("matches", 3000), "weight": value.get("weight", 0.8),
           "full_count": value.get("full_count", 20)}
    for key in ("matches", "full_count"):
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 1:
            _fail(where, f"'opponent_model.{key}' must be a positive integer, got {out[key]!r}")
    weight = out["weight"]
    if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not 0.0 <= weight <= 1.0:
        _fail(where, f"'opponent_model.weight' must be a number in [0, 1], got {weight!r}")
    out["weight"] = float(weight)
    from agents.base import make_agent

    try:
        make_agent(agent)
    except ValueError as exc:
        _fail(where, f"'opponent_model.agent': {exc}")
    return out


def load_config(path: str | Path) -> RunConfig:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"cannot read config {str(path)!r}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({exc})") from None
    return parse_config(data, where=str(path))
