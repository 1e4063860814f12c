"""``truco train ppo|cfr``: the trainers, each from one config."""

from __future__ import annotations

import argparse
import sys

from training.cli.args import extra_for
from truco_env.limits import one_line


def add(sub: argparse._SubParsersAction) -> None:
    """The ``train`` command and its trainers."""
    train = sub.add_parser(
        "train",
        help="train a policy (ppo, cfr)",
        description="Train a policy from a YAML config; every long run shows progress and writes checkpoints.",
        epilog="examples:\n  truco train ppo --config configs/ppo/argentine.yaml\n"
               "  truco train ppo --config configs/ppo/argentine.yaml --resume",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    trainers = train.add_subparsers(dest="trainer", metavar="TRAINER")
    trainers.required = True
    ppo = trainers.add_parser(
        "ppo",
        help="PPO by population self-play: one network per preset",
        description="PPO by population self-play on the vector environment (training/learn/ppo.py): the learner plays\n"
                    "itself, frozen past snapshots and optional scripted agents; TensorBoard logs, evaluation and\n"
                    "checkpoints that --resume continues exactly. Ctrl-C stops after the current update with a\n"
                    "checkpoint (exit 130); RUN_DIR/policy.safetensors is written only when the run finishes.\n"
                    "One run at a time holds a run dir (a lock beside it); a second is refused.\n"
                    "Options (YAML file or --set KEY=VALUE):\n\n",
        options_listing=lambda: _options_of("training.learn.ppo", "PPOArgs"),
        epilog="examples:\n  truco train ppo --config configs/ppo/argentine.yaml\n"
               "  truco train ppo --config configs/ppo/argentine.yaml --set seed=3 --run-dir runs/ppo/seed3\n"
               "  truco train ppo --config configs/ppo/argentine.yaml --resume",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ppo.add_argument("--config", metavar="FILE.yaml", help="YAML file of options (configs/ppo/<preset>.yaml)")
    ppo.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override one option (YAML value syntax), e.g. --set hidden=[256,256]; repeatable")
    ppo.add_argument("--run-dir", help="where logs, the checkpoint and the policy go (overrides the config)")
    ppo.add_argument("--backend", choices=["local", "processes", "ray"],
                     help="where collection partitions run (overrides the config); the weights do not depend on it")
    start = ppo.add_mutually_exclusive_group()
    start.add_argument("--resume", action="store_true", help="continue from RUN_DIR/checkpoint.safetensors")
    start.add_argument("--overwrite", action="store_true",
                       help="start over in a RUN_DIR that holds a run, deleting its checkpoint, policy and logs "
                            "(refused otherwise)")
    ppo.add_argument("--quiet", action="store_true", help="no progress bar")
    ppo.set_defaults(func=_cmd_train_ppo)
    # other trainers (cfr) add their parser to `trainers` here
    cfr_train = trainers.add_parser(
        "cfr",
        help="CFR: exact CFR+ on research presets, MCCFR with abstraction on the full 1v1 and 2v2 presets",
        description=(
            "Train from a YAML config (configs/cfr_*.yaml): trainer 'exact' runs full-traversal CFR+ (or\n"
            "linear/discounted CFR) on a research preset and reports exact NashConv; trainer 'mccfr' runs\n"
            "external-sampling MCCFR with the information-set abstraction on a full 1v1 preset (v4) or a\n"
            "2v2 one (v5). Shows progress, logs to TensorBoard and writes resumable .npz checkpoints (one run\n"
            "at a time per checkpoint; Ctrl-C keeps the last one and names the command that continues it)."
        ),
        epilog=("examples:\n  truco train cfr --config configs/cfr_argentine_mini.yaml\n"
                "  truco train cfr --config configs/cfr_blueprint_paulista.yaml"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cfr_train.add_argument("--config", required=True, metavar="FILE.yaml", help="the run config")
    cfr_train.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                           help="override a config option (repeatable; the value is read as YAML)")
    cfr_train.add_argument("--no-resume", action="store_true", help="start over even if the checkpoint exists")
    cfr_train.add_argument("--no-progress", action="store_true", help="no progress bar")
    cfr_train.set_defaults(func=_cmd_train_cfr)
    distill = trainers.add_parser(
        "distill",
        help="a network fitted to a searching agent's choices (docs/search.md)",
        description=("Collect a searching agent's decisions against itself (resumable chunks), then fit a network\n"
                     "to them, starting from its blueprint (training/learn/distill.py). Options (YAML file or --set):\n\n"),
        options_listing=lambda: _options_of("training.learn.distill", "DistillArgs"),
        epilog="examples:\n  truco train distill --config configs/distill/paulista.yaml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    distill.add_argument("--config", metavar="FILE.yaml", help="YAML file of options (configs/distill/<preset>.yaml)")
    distill.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                         help="override one option (YAML value syntax); repeatable")
    distill.add_argument("--run-dir", help="where the chunks and the policy go (overrides the config)")
    distill.add_argument("--quiet", action="store_true", help="no progress lines")
    distill.set_defaults(func=_cmd_train_distill)


def _options_of(module: str, name: str) -> str:
    """The ``--help`` listing of the options class ``module.name`` (a line saying which extra lists them when
    the training extra is missing)."""
    import importlib

    try:
        from training.options import describe

        return describe(getattr(importlib.import_module(module), name))
    except ModuleNotFoundError as exc:
        if extra_for(exc.name) is None:
            raise
        return "  (the options are listed once the training extra is installed: pip install 'truco-rl[train]')"


def _cmd_train_distill(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from agents.network import PolicyFileError
    from training.learn.distill import DistillArgs, train_distill
    from training.options import load

    try:
        options = load(DistillArgs, args.config, args.set, run_dir=args.run_dir)
        train_distill(options, progress=not args.quiet)
    except (ValueError, PolicyFileError) as err:
        print(f"truco train distill: error: {one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ntruco train distill: interrupted; the finished chunks are kept: run the same command to go on",
              file=sys.stderr)
        return 130
    print(f"policy written to {args.run_dir or options.run_dir}/policy.safetensors")
    return 0


def _cmd_train_ppo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import os
    import shlex

    from agents.network import PolicyFileError
    from training.learn.ppo import PPOArgs, TrainingInterrupted, torch_device, train_ppo
    from training.measure.population import refuse_gauntlet_opponents
    from training.options import load
    from truco_env.limits import clip

    options = None
    try:
        options = load(PPOArgs, args.config, args.set, run_dir=args.run_dir, backend=args.backend)
        refuse_gauntlet_opponents(options.scripted, options.eval_opponents)
        torch_device(options.device)  # a GPU torch does not see, refused before the run dir is made (left empty)
        path = train_ppo(options, resume=args.resume, progress_bar=not args.quiet, overwrite=args.overwrite)
    except (ValueError, PolicyFileError) as err:
        print(f"truco train ppo: error: {one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:  # a full disk, a run dir that became unwritable (training.atomic: safetensors too)
        reason = getattr(err, "strerror", None) or " ".join(str(err).split())
        print(f"truco train ppo: error: could not write in the run dir {options.run_dir if options else ''!r}: "
              f"{clip(reason, 160)} (its last checkpoint, if any, is whole: make room, then --resume)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # the first Ctrl-C (after a checkpoint), a second one, or the warm start's
        checkpoint = None if options is None else os.path.join(options.run_dir, "checkpoint.safetensors")
        if checkpoint is None or not os.path.exists(checkpoint):
            print("\ntruco train ppo: interrupted before the run's first checkpoint: nothing to resume; run the "
                  "same command again to start over", file=sys.stderr)
            return 130
        command = ["truco", "train", "ppo", *(["--config", args.config] if args.config else []),
                   *[part for item in args.set for part in ("--set", item)], "--run-dir", options.run_dir,
                   *(["--backend", args.backend] if args.backend else []), "--resume"]
        where = (f"at {exc.decisions:,} of {exc.total:,} decisions" if isinstance(exc, TrainingInterrupted)
                 else "at once")
        print(f"\ntruco train ppo: interrupted {where}; its state is the checkpoint {checkpoint} (no "
              f"policy.safetensors: only a finished run writes it); continue with: {shlex.join(command)}",
              file=sys.stderr)
        return 130
    print(f"policy written to {path}")
    return 0


def _cmd_train_cfr(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from agents.cfr.table import CheckpointError
    from training.learn.cfr.runconfig import load_config
    from training.learn.cfr.train import train_cfr
    from training.options import parse_overrides

    cfg, resumes = None, True
    try:
        cfg = load_config(args.config, parse_overrides(args.set))
        resumes = cfg.resume  # the config's own setting, before --no-resume
        # a copy, not assignments: assignment re-runs the validators, and the before-validator that names keys of
        # the other trainer would see this trainer's defaults for them
        cfg = cfg.model_copy(update={"resume": cfg.resume and not args.no_resume,
                                     "progress": cfg.progress and not args.no_progress})
        train_cfr(cfg)
    except CheckpointError as exc:
        print(f"truco train cfr: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"truco train cfr: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        import os
        import shlex

        if cfg is None or not os.path.exists(cfg.checkpoint):
            print("\ntruco train cfr: interrupted before the run's first checkpoint: nothing to resume; run the "
                  "same command again to start over", file=sys.stderr)
            return 130
        command = ["truco", "train", "cfr", "--config", args.config,
                   *[part for item in args.set for part in ("--set", item)],
                   *([] if resumes else ["--set", "resume=true"])]
        print(f"\ntruco train cfr: interrupted; its state is the last checkpoint {cfg.checkpoint}; continue "
              f"with: {shlex.join(command)}", file=sys.stderr)
        return 130
    return 0
