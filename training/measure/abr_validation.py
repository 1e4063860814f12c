"""Does ``truco exploit`` measure exploitability? Its learner against exact best responses on the research presets.

Why: an ABR figure (:mod:`training.measure.exploit`) is only a lower bound on a target's exploitability, and only useful if
the learner gets close to the best response. On the one-hand research presets (``argentine-mini``,
``paulista-mini``) the exact best-response value is known (:mod:`training.learn.cfr.solver`), so the learner can be
checked where the answer is known before it is trusted where it is not.

For each preset, three targets of decreasing exploitability:

* ``random``: the uniform random agent (exact policy: ``uniform_policy(tree)``);
* ``cfr10``: the CFR+ average policy after exactly 10 iterations;
* ``converged``: the CFR+ average policy that first reaches NashConv <= 1e-3 x the utility range.

The CFR targets are trained by :func:`training.learn.cfr.train.train_exact` with the preset's own run config
(``cfr_<preset>.yaml`` in the configs folder the caller names, the repository's ``configs/``: CFR+, alternating,
NashConv checked every 10 iterations), only with the checkpoint written into the output folder. The exact value is computed from the checkpoint as read back from disk, i.e. the
average policy the ``cfr:PATH`` agent samples from.

The exact value is the best response's value against the target with both seats averaged:
``(best_response_value(tree, p, 0) + best_response_value(tree, p, 1)) / 2``. The tree's roots are every deal
(dealer, both hands, the vira) with equal probability, as the engine deals a match (first dealer and cards uniform
from the match seed), and ``value_per_deal`` of :func:`training.measure.exploit.run_exploit` averages each deal over its two
seatings: both estimate the same number. It is NashConv / 2 (the game value cancels), so it is never negative
and is at most 5e-4 x the utility range for ``converged``.

Checks per (preset, target), all must pass:

* ``not_above``: the ABR value does not exceed the exact value beyond its interval (``value_low <= exact``);
* ``random``, ``cfr10``: the ABR value is at least ``RATIO`` (0.75) of the exact value;
* ``converged``: ``|ABR value - exact| <= CLOSE`` (0.02) x the utility range.

Beside the measured value, each row gives the learner's **exact** value: its greedy policy read off at every
infoset (:func:`learner_policy`) and evaluated on the tree against the target, both seats averaged. The
measured value estimates exactly that number, so the two agree within the interval unless the evaluation is
wrong; it is reported, not checked (the checks stay on what ``truco exploit`` measures, as on the full game).

:func:`run_validation` writes ``validation.json`` and ``validation.md`` into its output folder (plus each target's
checkpoint and its ``truco exploit`` files under ``PRESET/TARGET/``); ``python -m benchmarks.abr_validation`` runs
it and prints the table. A row whose learner already finished with the same recipe is reused, so an interrupted
validation resumes at the row it stopped in.
"""

from __future__ import annotations

import dataclasses
import io
import math
from pathlib import Path
from typing import Any

import numpy as np

from training.atomic import atomic_write, atomic_write_json
from training.learn.best_response import STANDARD_DECISIONS, BRArgs
from training.learn.cfr.checkpoint import load_checkpoint
from training.learn.cfr.runconfig import RunConfig, load_config
from training.learn.cfr.solver import best_response_value, expected_value, uniform_policy
from training.learn.cfr.train import train_exact
from training.learn.cfr.tree import GameTree, infoset_states, tree_for
from training.measure.exploit import cached_exploit
from truco_env.config import make_config

MINI_PRESETS = ("argentine-mini", "paulista-mini")
TARGETS = ("random", "cfr10", "converged")
#: Learner decisions per (preset, target): the full game's standard budget, so the recipe is checked as it is used.
MINI_DECISIONS = STANDARD_DECISIONS
#: Duplicate matches of the ABR evaluation: a tight interval is needed for the 2%-of-range check.
MATCHES = 20_000
RATIO = 0.75
CLOSE = 0.02
CFR10_ITERATIONS = 10


@dataclasses.dataclass
class Target:
    """A target policy: its agent spec and the exact policy that spec plays (per tree slot)."""

    name: str
    spec: str
    policy: np.ndarray
    iterations: int | None = None
    nash_conv: float | None = None


def cfr_config(preset: str, checkpoint: Path, name: str, configs: Path) -> RunConfig:
    """The preset's exact CFR run config from the folder ``configs``, writing into ``checkpoint``; ``cfr10`` stops
    after 10 iterations."""
    cfg = load_config(Path(configs) / f"cfr_{preset.replace('-', '_')}.yaml")
    cfg = cfg.model_copy(update={"checkpoint": str(checkpoint), "logdir": None, "progress": False, "resume": False})
    if name == "cfr10":
        cfg = cfg.model_copy(update={"iterations": CFR10_ITERATIONS, "target_nash_conv": None})
    return cfg


def make_target(name: str, preset: str, tree: GameTree, folder: Path, configs: Path) -> Target:
    """Build target ``name``: train and save its checkpoint under ``folder`` for the CFR targets (their run config
    from the folder ``configs``)."""
    if name == "random":
        return Target(name, "random", uniform_policy(tree))
    checkpoint = (folder / "checkpoint.npz").resolve()
    if any(c in str(checkpoint) for c in ",="):
        raise ValueError(f"{checkpoint}: an agent spec cannot hold ',' or '='; choose another --out")
    summary = train_exact(cfr_config(preset, checkpoint, name, configs), out=io.StringIO(), tree=tree)
    if name == "converged" and not summary["target_reached"]:
        raise RuntimeError(f"{preset}: CFR+ stopped at NashConv {summary['nash_conv']:.3g} without reaching the "
                           f"configured target")
    return Target(name, f"cfr:{checkpoint}", played_policy(checkpoint, tree), summary["iterations"],
                  summary["nash_conv"])


def played_policy(checkpoint: Path, tree: GameTree) -> np.ndarray:
    """The average policy ``cfr:checkpoint`` samples from (:class:`training.learn.cfr.policy.StrategyTable`), per slot
    of ``tree``."""
    ckpt = load_checkpoint(checkpoint)
    if ckpt.keys != tree.infoset_keys or not np.array_equal(ckpt.slot_action, tree.slot_action):
        raise RuntimeError(f"{checkpoint}: its information sets are not this tree's")
    return ckpt.average_policy()


def exact_values(tree: GameTree, policy: np.ndarray) -> tuple[float, float]:
    """The best response's value in seat 0 and in seat 1 (each averaged over every deal, dealer included)."""
    return best_response_value(tree, policy, 0), best_response_value(tree, policy, 1)


def learner_policy(tree: GameTree, path: Path) -> np.ndarray:
    """The greedy policy of the learner saved at ``path``, per slot of ``tree``: the action it takes from each
    infoset's observation, as the ``truco exploit`` evaluation plays it."""
    import torch

    from agents.network import load_policy
    from truco_env.encoding import encode_action_mask, encode_observation

    net, _ = load_policy(str(path))
    states = infoset_states(tree)
    greedy = np.empty(len(states), dtype=np.int64)
    for lo in range(0, len(states), 8192):
        chunk = range(lo, min(lo + 8192, len(states)))
        obs = np.stack([encode_observation(states[i], int(tree.infoset_player[i])) for i in chunk])
        legal = np.stack([encode_action_mask(states[i]) for i in chunk]) > 0
        with torch.no_grad():
            probs = net.probabilities(torch.as_tensor(obs), torch.as_tensor(legal)).double().numpy()
        greedy[lo:lo + len(chunk)] = np.argmax(probs, axis=1)
    return (tree.slot_action == greedy[tree.slot_infoset]).astype(np.float64)


def learner_values(tree: GameTree, target: np.ndarray, learner: np.ndarray) -> tuple[float, float]:
    """The learner's exact value in seat 0 and in seat 1 against ``target`` (per slot policies)."""
    seat_of_slot = tree.infoset_player[tree.slot_infoset]
    seat0 = expected_value(tree, np.where(seat_of_slot == 0, learner, target))
    seat1 = -expected_value(tree, np.where(seat_of_slot == 1, learner, target))
    return seat0, seat1


def check(name: str, exact: float, abr: dict[str, Any], urange: float) -> dict[str, Any]:
    """The two checks of one row (module docstring); a run without an ABR value fails both."""
    value = abr.get("value_per_deal")
    if value is None:
        return {"not_above": False, "close": False, "close_rule": "no ABR value"}
    if name == "converged":
        close, rule = abs(value - exact) <= CLOSE * urange, f"abs(ABR - exact) <= {CLOSE:g} x range"
    else:
        close, rule = value >= RATIO * exact, f"ABR >= {RATIO:g} x exact"
    return {"not_above": bool(abr["value_low"] <= exact), "close": bool(close), "close_rule": rule}


def validate_target(preset: str, name: str, tree: GameTree, out: Path, configs: Path, decisions: int, matches: int,
                    seed: int, workers: int, progress: bool) -> dict[str, Any]:
    """One row: build the target, compute its exact value, train and evaluate the learner, check."""
    folder = out / preset / name
    target = make_target(name, preset, tree, folder, configs)
    seat0, seat1 = exact_values(tree, target.policy)
    exact = (seat0 + seat1) / 2
    recipe = BRArgs(preset=preset, target=target.spec, decisions=decisions, seed=seed, workers=workers)
    result, run = cached_exploit(recipe, matches, root=folder / "exploit", progress=progress)  # resumes per row
    abr = result.get("abr") or {}
    value = abr.get("value_per_deal")
    urange = tree.utility_range
    learner = run / "learner.safetensors"
    exact_learner = (sum(learner_values(tree, target.policy, learner_policy(tree, learner))) / 2
                     if result["status"] == "complete" else None)
    row = {"preset": preset, "target": name, "spec": target.spec, "cfr_iterations": target.iterations,
           "nash_conv": target.nash_conv, "exact": exact, "exact_seat0": seat0, "exact_seat1": seat1,
           "abr": value, "abr_low": abr.get("value_low"), "abr_high": abr.get("value_high"),
           "learner_exact": exact_learner,
           "ratio": value / exact if value is not None and exact > 0 else None, "utility_range": urange,
           "status": result["status"], "decisions": result["training"]["decisions"], "matches": abr.get("matches"),
           **check(name, exact, abr, urange)}
    row["passed"] = row["not_above"] and row["close"]
    return row


def run_validation(out: Path, configs: Path, presets: tuple[str, ...] = MINI_PRESETS,
                   targets: tuple[str, ...] = TARGETS, decisions: int = MINI_DECISIONS, matches: int = MATCHES,
                   seed: int = 0, workers: int = 2, progress: bool = True) -> dict[str, Any]:
    """Every (preset, target) row, the CFR targets' run configs read from the folder ``configs``; writes
    ``validation.json`` and ``validation.md`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for preset in presets:
        tree = tree_for(make_config(preset))
        for name in targets:
            rows.append(validate_target(preset, name, tree, out, configs, decisions, matches, seed, workers, progress))
    report = {"settings": {"presets": list(presets), "targets": list(targets), "decisions": decisions,
                           "matches": matches, "seed": seed, "ratio": RATIO, "close": CLOSE},
              "rows": rows, "passed": all(r["passed"] for r in rows)}
    atomic_write_json(out / "validation.json", report, indent=1)
    text = markdown(rows)
    atomic_write(out / "validation.md", lambda tmp: Path(tmp).write_text(text), ".md")
    return report


def _num(x: float | None, fmt: str = "+.4f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def markdown(rows: list[dict[str, Any]]) -> str:
    """The report table: values in points per deal, both seats averaged."""
    header = ("| preset | target | exact BR value | ABR value [95%] | learner's exact value | ABR / exact | "
              "utility range | ABR low <= exact | closeness | pass |")
    lines = [header, "|---|---|---:|---:|---:|---:|---:|---|---|---|"]
    for r in rows:
        abr = f"{_num(r['abr'])} [{_num(r['abr_low'])}, {_num(r['abr_high'])}]"
        close = f"{'ok' if r['close'] else 'FAIL'} ({r['close_rule']})"
        lines.append(f"| {r['preset']} | {r['target']} | {_num(r['exact'])} | {abr} | "
                     f"{_num(r.get('learner_exact'))} | {_num(r['ratio'], '.3f')} | "
                     f"{r['utility_range']:g} | {'ok' if r['not_above'] else 'FAIL'} | {close} | "
                     f"{'PASS' if r['passed'] else 'FAIL'} |")
    return "\n".join(lines) + "\n"

