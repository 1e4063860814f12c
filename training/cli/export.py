"""``truco export ppo|cfr``: policies for programs without this project."""

from __future__ import annotations

import argparse
import sys

from training.cli.args import integer_in
from truco_env.limits import one_line

MAX_VECTORS = 1000  # test-vector positions per preset of one export (each holds a record and an observation)


def add(sub: argparse._SubParsersAction) -> None:
    """The ``export`` command and its exporters."""
    export = sub.add_parser(
        "export",
        help="export a trained policy for other front ends (ppo -> ONNX)",
        description="Export a trained policy so that programs without this project can run it.",
        epilog="example:\n  truco export ppo runs/ppo/argentine/policy.safetensors --out exported/argentine.onnx",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    exporters = export.add_subparsers(dest="exporter", metavar="KIND")
    exporters.required = True
    export_ppo = exporters.add_parser(
        "ppo",
        help="PPO policy -> ONNX model + metadata JSON (+ test vectors)",
        description=(
            "Write an ONNX model (inputs: observation, action_mask; outputs: probabilities, value; dynamic\n"
            "batch axis), its metadata JSON beside it, and test vectors that another implementation can\n"
            "reproduce (docs/export.md). The files are made aside and moved into place together at the end;\n"
            "existing ones are replaced only with --overwrite."
        ),
        epilog=("examples:\n  truco export ppo ppo:argentine --out exported/argentine.onnx\n"
                "  truco export ppo runs/ppo/policy.safetensors --out m.onnx --vectors-per-preset 50"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export_ppo.add_argument("policy", help="a policy .safetensors file, ppo:<shipped name> or best:<preset>")
    export_ppo.add_argument("--out", required=True, metavar="FILE.onnx", help="where the ONNX model goes")
    export_ppo.add_argument("--vectors-per-preset", type=integer_in(0, MAX_VECTORS, f"an integer 0..{MAX_VECTORS}"),
                            default=20, metavar="N",
                            help=f"test-vector positions per preset, at most {MAX_VECTORS} (0: none; default 20)")
    export_ppo.add_argument("--overwrite", action="store_true",
                            help="replace the files of an earlier export at --out (refused otherwise)")
    export_ppo.set_defaults(func=_cmd_export_ppo)
    # other exporters (cfr) add their parser to `exporters` here
    export_cfr = exporters.add_parser(
        "cfr",
        help="CFR checkpoint -> JSON table of the average strategy (docs/cfr.md)",
        description=("Write a CFR checkpoint's average strategy as JSON: information-set key -> {action name:\n"
                     "probability}, with the rules and the key format (docs/cfr.md)."),
        epilog="example:\n  truco export cfr runs/cfr/argentine-mini/checkpoint.npz --out exported/argentine-mini.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export_cfr.add_argument("checkpoint", help="a CFR checkpoint (.npz), cfr:<shipped preset> or best:<preset>")
    export_cfr.add_argument("--out", required=True, metavar="FILE.json", help="where the JSON table goes")
    export_cfr.add_argument("--overwrite", action="store_true", help="replace an existing --out (refused otherwise)")
    export_cfr.set_defaults(func=_cmd_export_cfr)


def _cmd_export_ppo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import os

    from agents.network import PolicyFileError, load_policy
    from agents.ppo import policy_path, shipped_policies
    from training.outputs import output_files
    from training.people.export import export_onnx, write_test_vectors

    path = args.policy
    if path.startswith("best:"):  # the report's choice (agents/best.py), when it is a network
        from agents.best import resolve_best

        try:
            chosen = resolve_best(path[5:])
        except ValueError as exc:
            print(f"truco export ppo: error: {one_line(exc)}", file=sys.stderr)
            return 2
        if not chosen.startswith("ppo:"):
            print(f"truco export ppo: error: {path} is {chosen}, not a PPO policy; `truco export cfr` writes a CFR "
                  "table as JSON, and the heuristic is code, not a file", file=sys.stderr)
            return 2
        path = chosen
    if path.startswith("ppo:"):
        name = path[4:]
        if name not in shipped_policies():
            print(f"truco export ppo: error: no shipped policy {name!r}; shipped: {shipped_policies()}",
                  file=sys.stderr)
            return 2
        path = policy_path(name)
    stem = os.path.splitext(args.out)[0]
    files = [args.out, stem + ".json", stem + ".test_vectors.json"]  # the model, its metadata, the test vectors
    try:
        if len({os.path.abspath(f) for f in files}) < len(files):
            raise ValueError(f"--out {args.out!r}: the metadata goes to {files[1]!r}; give the model another "
                             "name (FILE.onnx)")
        _, meta = load_policy(path)
        with output_files(files, overwrite=args.overwrite) as tmp:
            model, _ = export_onnx(path, str(tmp / os.path.basename(files[0])))
            if args.vectors_per_preset > 0:
                write_test_vectors(model, str(tmp / os.path.basename(files[2])),
                                   list(meta.get("presets") or ["argentine"]), args.vectors_per_preset)
    except (PolicyFileError, ValueError, OSError) as exc:
        print(f"truco export ppo: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ntruco export ppo: interrupted; nothing was written ({args.out} is as it was)", file=sys.stderr)
        return 130
    print(f"wrote {files[0]} and {files[1]}")
    if args.vectors_per_preset > 0:
        print(f"wrote {files[2]}")
    return 0


def _cmd_export_cfr(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from pathlib import Path

    from agents.cfr.agent import blueprint_path, shipped_blueprints
    from training.learn.cfr.policy import export_json
    from training.outputs import output_files

    checkpoint = args.checkpoint
    try:
        if checkpoint.startswith("best:"):  # the report's choice (agents/best.py), when it is a blueprint
            from agents.best import resolve_best

            chosen = resolve_best(checkpoint[5:])
            if not chosen.startswith("cfr:"):
                raise ValueError(f"{checkpoint} is {chosen}, not a CFR blueprint; `truco export ppo` writes a "
                                 "network as ONNX, and the heuristic is code, not a file")
            checkpoint = chosen
        if checkpoint.startswith("cfr:") and checkpoint[4:] not in shipped_blueprints():
            raise ValueError(f"no shipped blueprint {checkpoint[4:]!r}; shipped: {shipped_blueprints()}")
        with output_files([args.out], overwrite=args.overwrite) as tmp:
            summary = export_json(blueprint_path(checkpoint), tmp / Path(args.out).name)
    except (ValueError, OSError) as exc:
        print(f"truco export cfr: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ntruco export cfr: interrupted; nothing was written ({args.out} is as it was)", file=sys.stderr)
        return 130
    print(f"wrote {args.out} ({summary['infosets']} information sets, {summary['bytes']} bytes)")
    return 0
