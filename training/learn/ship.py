"""Ship a finished ``truco train ppo`` run as ``ppo:<preset>`` (``truco ship RUN_DIR``, :func:`ship`), or a finished
self-play MCCFR run as ``cfr:<preset>`` (``truco ship configs/cfr_blueprint_<preset>.yaml``, :func:`ship_blueprint`).

It copies ``RUN_DIR/policy.safetensors`` to ``agents/policies/ppo_<preset>.safetensors`` unchanged (the file
already records its config, config hash, commit, budget and play mode) and draws the run's training curves from
its TensorBoard logs into ``docs/img/ppo_<preset>_training.png``, the figure its model card shows. Only a
complete run of the rebuilt trainer ships: a policy is what one command made, never a checkpoint picked along
the way. ``truco report`` then measures it and writes its model card beside it.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from agents.network import load_policy
from training.atomic import atomic_write

#: The training curves a shipped policy's model card shows: TensorBoard tag -> the panel's title.
CURVES = {"eval/win_rate_vs_heuristic": "win rate against the heuristic", "eval/win_rate_vs_random":
          "win rate against random", "league/snapshot_win_rate": "win rate against its past snapshots",
          "losses/entropy": "policy entropy", "losses/explained_variance": "value: explained variance",
          "charts/SPS": "learner decisions per second"}


def after_resumes(events: list[Any]) -> list[Any]:
    """The scalars of a run as its last pass wrote them: a run resumed from a checkpoint logs again the steps the
    stopped run had logged after it, and logs written before the trainers purged them on resume (``purge_step``)
    still hold both; a step that goes back drops what was logged from there on."""
    kept: list[Any] = []
    for event in events:
        while kept and kept[-1].step >= event.step:
            kept.pop()
        kept.append(event)
    return kept


def curves_png(run_dir: str, out: str, title: str, eval_matches: int | None = None) -> str:
    """The run's main TensorBoard scalars against learner decisions, one panel each; the evaluation win rates
    (``eval/*``, ``eval_matches`` duplicate matches each) with their 95% Wilson intervals when that is given."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from training.measure.statistics import wilson_interval
    from training.measure.tournament_files import OKABE_ITO

    logs = EventAccumulator(os.path.join(run_dir, "tb"))
    logs.Reload()
    tags = [t for t in CURVES if t in logs.Tags()["scalars"]]
    if not tags:
        raise ValueError(f"{run_dir}/tb holds none of the training curves {list(CURVES)}")
    fig, axes = plt.subplots(2, 3, figsize=(11, 5.5), squeeze=False)
    for ax, tag in zip(axes.flat, tags, strict=False):
        events = after_resumes(logs.Scalars(tag))
        steps, values = [e.step for e in events], [e.value for e in events]
        marker = "." if len(events) < 50 else None
        if tag.startswith("eval/") and eval_matches:
            bounds = [wilson_interval(v * eval_matches, eval_matches) for v in values]
            errors = [[v - lo for v, (lo, _) in zip(values, bounds, strict=True)],
                      [hi - v for v, (_, hi) in zip(values, bounds, strict=True)]]
            ax.errorbar(steps, values, yerr=errors, color=OKABE_ITO[0], marker=marker, capsize=3)
            ax.set_title(f"{CURVES[tag]} (95% interval)", fontsize=9)
        else:
            ax.plot(steps, values, color=OKABE_ITO[0], marker=marker)
            ax.set_title(CURVES[tag], fontsize=9)
        ax.set_xlabel("learner decisions", fontsize=8)
    for ax in list(axes.flat)[len(tags):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    atomic_write(out, lambda tmp: fig.savefig(tmp, dpi=100, format="png"), ".png")
    plt.close(fig)
    return out


def ship(run_dir: str, policies: str | None = None, images: str = "docs/img") -> tuple[str, str]:
    """Copy the run's policy into the package and draw its curves; returns both paths."""
    from agents.base import SHIPPED_DIR

    source = os.path.join(run_dir, "policy.safetensors")
    _, meta = load_policy(source)
    if "config_hash" not in meta:
        raise ValueError(f"{source} was not written by truco train ppo (no config_hash in its metadata)")
    if not meta.get("complete"):
        raise ValueError(f"{source} comes from an unfinished run ({meta.get('decisions', 0):,} of "
                         f"{meta['config']['total_decisions']:,} decisions); finish it with --resume")
    preset = meta["presets"][0]
    target = os.path.join(policies or SHIPPED_DIR, f"ppo_{preset}.safetensors")
    atomic_write(target, lambda tmp: shutil.copyfile(source, tmp), ".safetensors")
    figure = curves_png(run_dir, os.path.join(images, f"ppo_{preset}_training.png"),
                        f"ppo:{preset}: training curves ({meta.get('decisions', 0):,} learner decisions)",
                        meta["config"].get("eval_matches"))
    return target, figure


def ship_blueprint(config: str, policies: str | None = None) -> str:
    """Ship the self-play MCCFR run of ``config`` (a ``trainer: mccfr`` YAML file) as ``cfr:<preset>``.

    The shipped file is the checkpoint's average strategy in the checkpoint format, *play only*: the regrets are
    zeroed (they only matter to further training, and zeros compress to nothing) and the random state dropped, so
    the table plays exactly as the run's checkpoint does at a fraction of its size; the header records the config
    file, its hash and the commit. Only a finished run of a self-play config ships."""
    import hashlib
    import subprocess

    import numpy as np

    from agents.base import SHIPPED_DIR
    from agents.cfr.table import Checkpoint, load_checkpoint
    from training.learn.cfr.checkpoint import save_checkpoint
    from training.learn.cfr.runconfig import load_config

    cfg = load_config(config)
    if cfg.trainer != "mccfr":
        raise ValueError(f"{config}: only a self-play MCCFR config ships as a blueprint (trainer: mccfr)")
    ckpt = load_checkpoint(cfg.checkpoint)
    if ckpt.iteration != cfg.iterations:
        raise ValueError(f"{cfg.checkpoint} holds {ckpt.iteration:,} of the config's {cfg.iterations:,} iterations; "
                         f"finish it with truco train cfr --config {config}")
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    with open(config, "rb") as handle:
        config_hash = hashlib.sha256(handle.read()).hexdigest()[:16]
    meta = {**ckpt.meta, "play_only": True,
            "shipped": {"config": os.path.relpath(config), "config_hash": config_hash, "commit": commit}}
    shipped = Checkpoint(meta=meta, keys=ckpt.keys, slot_start=ckpt.slot_start, slot_action=ckpt.slot_action,
                         regrets=np.zeros_like(ckpt.regrets), cumulative=ckpt.average_policy())
    target = os.path.join(policies or SHIPPED_DIR, f"cfr_{cfg.preset}.npz")
    save_checkpoint(target, shipped)
    return target

