"""``truco train ppo`` and ``truco train gate``: read a YAML config, apply ``--set key=value`` overrides, train."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import yaml

from .gate import GateArgs, train_gate
from .model import PolicyFileError
from .train import PPOArgs, train


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE.yaml", help="YAML file of PPO options (see configs/ppo_*.yaml)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one option (YAML value syntax), e.g. --set total_updates=50; repeatable")
    parser.add_argument("--resume", action="store_true", help="continue from RUN_DIR/checkpoint.safetensors")
    parser.add_argument("--run-dir", help="where logs, checkpoints and the policy go (overrides the config)")
    parser.add_argument("--backend", choices=["local", "processes", "ray"],
                        help="where rollout partitions run (overrides the config); results do not depend on it")
    parser.add_argument("--workers", type=int, metavar="N", help="rollout partitions per update (rollout_workers)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def read_options(config: str | None, overrides: list[str]) -> dict[str, Any]:
    """The options of a YAML config with ``--set KEY=VALUE`` overrides applied (ValueError naming the problem)."""
    data: dict[str, Any] = {}
    if config:
        if not os.path.isfile(config):
            raise ValueError(f"config file {config!r} does not exist")
        with open(config, encoding="utf-8") as handle:
            try:
                loaded = yaml.safe_load(handle)
            except yaml.YAMLError as err:
                raise ValueError(f"{config}: not valid YAML ({str(err).splitlines()[0]})") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ValueError(f"{config}: expected a mapping of options, got {type(loaded).__name__}")
        data.update(loaded or {})
    for item in overrides:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--set expects KEY=VALUE, got {item!r}")
        data[key.strip()] = yaml.safe_load(value)
    return data


def load_args(config: str | None, overrides: list[str], run_dir: str | None, backend: str | None = None,
              workers: int | None = None) -> PPOArgs:
    data = read_options(config, overrides)
    if run_dir:
        data["run_dir"] = run_dir
    if backend:
        data["backend"] = backend
    if workers:
        data["rollout_workers"] = workers
    return PPOArgs.from_dict(data)


def run(args: argparse.Namespace) -> int:
    try:
        ppo_args = load_args(args.config, args.set, args.run_dir, args.backend, args.workers)
        path = train(ppo_args, resume=args.resume, progress=not args.quiet)
    except (ValueError, PolicyFileError) as err:
        print(f"truco train ppo: error: {err}", file=sys.stderr)
        return 2
    print(f"policy written to {path}")
    return 0


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE.yaml", help="YAML file of gate options (configs/ppo_paulista.yaml)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one option (YAML value syntax), e.g. --set decisions=20000; repeatable")
    parser.add_argument("--run-dir", help="where the gated policy goes (overrides the config)")
    parser.add_argument("--quiet", action="store_true", help="no report")


def load_gate_args(config: str | None, overrides: list[str], run_dir: str | None = None) -> GateArgs:
    data = read_options(config, overrides)
    if run_dir:
        data["run_dir"] = run_dir
    return GateArgs.from_dict(data)


def run_gate(args: argparse.Namespace) -> int:
    try:
        path = train_gate(load_gate_args(args.config, args.set, args.run_dir), progress=not args.quiet)
    except (ValueError, PolicyFileError) as err:
        print(f"truco train gate: error: {err}", file=sys.stderr)
        return 2
    print(f"policy written to {path}")
    return 0
