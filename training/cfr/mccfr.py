"""External-sampling MCCFR on the full 1v1 presets with the information-set abstraction of
:mod:`agents.cfr_abstraction`.

The game learned is one hand in its match context: each iteration draws a starting score (uniform over the
scores below the target, so late-match situations such as falta envido, mão de onze and mão de ferro are
trained too), a dealer and a deal, then walks that hand for the traverser (players alternate per iteration):
every action at the traverser's abstract information sets, one sampled action (from the current strategy) at
the opponent's. The utility is the traverser's points in the hand minus the opponent's (the hand ends early
when a team reaches the target; the walk uses a ``single_hand`` copy of the rules, so the engine deals no next
hand). Regrets use regret matching (negative regrets floored at 0, as in CFR+), and
the average strategy is accumulated at the opponent's nodes with linear (iteration) weights.

Tables are Python dicts key -> [regrets], [average weights] while training and the plain checkpoint arrays of
:mod:`training.cfr.checkpoint` on disk (``kind: mccfr``), so a run resumes exactly (the RNG state is stored).

Data-biased response (optional ``model``, :mod:`training.cfr.opponent_model`): two strategies are learned, the
*responder's* (``table``, the one saved as the checkpoint's strategy and played by ``cfr:PATH``) and the
*restricted opponent's* (``table_r``). At a restricted-opponent information set the opponent plays the modelled
agent's observed action frequencies with weight ``model_weight * min(1, n / model_full_count)`` (``n``
observations there) and its own regret-matching strategy otherwise; that free part is trained like any other
MCCFR strategy. The responder's seat and the traverser cycle through all four combinations every four
iterations. Without a model both seats share one table (plain self-play MCCFR).
"""

from __future__ import annotations

import dataclasses
import logging
import random
import sys
import time
from pathlib import Path
from typing import TextIO

import numpy as np

from agents.cfr_abstraction import VERSION, VERSIONS, abstract_key_names, view_from_state
from agents.cfr_table import Checkpoint, load_checkpoint
from truco_env import TrucoState
from truco_env import actions as A
from truco_env.config import TrucoConfig

from .checkpoint import check_compatible, save_checkpoint
from .runconfig import KERNEL_ABSTRACTIONS, UTILITIES, OpponentModelOptions, RunConfig

logger = logging.getLogger(__name__)

CARD_KINDS = ("play", "cover", "play_slot")
#: What a hand is worth to the traverser: ``points`` (own hand points minus the opponent's) or ``match_equity``
#: (the change in the probability of winning the match, from the score before the hand to the score after it,
#: by :func:`agents.heuristic.match_equity_table`; x 100, so in percentage points).


class MCCFR:
    def __init__(self, config: TrucoConfig, seed: int = 0, abstraction: str = VERSION, model=None,
                 model_weight: float = 0.8, model_full_count: int = 20, utility: str = "points"):
        if config.num_players != 2:
            raise ValueError("MCCFR here trains 1v1 presets")
        if abstraction not in VERSIONS + ("lossless",):
            raise ValueError(f"unknown abstraction {abstraction!r}; known: {', '.join(VERSIONS)}, lossless")
        self.config = config
        self.abstraction = abstraction
        if utility not in UTILITIES:
            raise ValueError(f"unknown utility {utility!r}; known: {', '.join(UTILITIES)}")
        self.utility = utility
        self._equity = None
        if utility == "match_equity":
            from agents.heuristic import match_equity_table

            self._equity = match_equity_table(config.target_score, config.family)
        # The walk plays one hand: a single-hand copy of the rules ends the match when the hand is over (or a
        # team reaches the target), so no next hand is dealt. The stored rules stay the preset's.
        self.walk_config = dataclasses.replace(config, single_hand=True)
        self._cfg_array = None
        if abstraction == "lossless":  # the compiled engine's perfect-recall key, here to check that engine
            from truco_env.fast import config_array

            self._cfg_array = config_array(config)
        self.rng = random.Random(seed)
        self.iteration = 0
        self.table: dict[str, list] = {}  # key -> [codes, regrets, avg]
        self.model = model  # OpponentModel or None (data-biased response)
        self.model_weight = float(model_weight)
        self.model_full_count = int(model_full_count)
        self.table_r: dict[str, list] = {}  # the restricted opponent's free strategy (model runs only)
        self.responder = -1  # the responder's seat this iteration (model runs); -1: one shared table
        self.touched_since = set()
        self.nodes = 0

    #: Iterations per step of the training loop (between progress updates, time checks and checkpoints).
    batch = 100

    # --- tables ---------------------------------------------------------------------------------------------
    @property
    def num_infosets(self) -> int:
        return len(self.table)

    def take_touched(self, since: int) -> int:
        """Information sets visited since the last call, which clears the count (``since``: that call's
        iteration, what the compiled walk counts from)."""
        touched, self.touched_since = len(self.touched_since), set()
        return touched

    def average_regret(self) -> float:
        """Mean over information sets of max_a R+(I, a) / T."""
        regrets = [max(max(e[1]), 0.0) for e in self.table.values()]
        return sum(regrets) / len(regrets) / self.iteration if regrets and self.iteration else 0.0

    @staticmethod
    def _entry(table: dict, key: str, codes: list[int]) -> list:
        entry = table.get(key)
        if entry is None:
            entry = table[key] = [codes, [0.0] * len(codes), [0.0] * len(codes)]
        return entry

    @staticmethod
    def _strategy(regrets: list[float]) -> list[float]:
        pos = [r if r > 0 else 0.0 for r in regrets]
        total = sum(pos)
        if total <= 0:
            return [1.0 / len(regrets)] * len(regrets)
        return [p / total for p in pos]

    def _win_prob(self, a: int, b: int) -> float:
        target = self.config.target_score
        if a >= target or b >= target:
            return 1.0 if a > b else (0.0 if b > a else 0.5)
        return self._equity[a][b]

    def mixed(self, key: str, codes: list[int], sigma: list[float]) -> list[float]:
        """The restricted opponent's play at ``key``: the model's frequencies with weight
        ``model_weight * confidence``, its own strategy ``sigma`` otherwise (``sigma`` itself where unmodelled)."""
        hit = self.model.weighted(key, self.model_full_count)
        if hit is None:
            return sigma
        w = self.model_weight * hit[0]
        freq = hit[1]
        return [(1.0 - w) * s + w * freq.get(c, 0.0) for s, c in zip(sigma, codes)]

    # --- one iteration --------------------------------------------------------------------------------------
    def iterate(self, n: int = 1) -> None:
        cfg = self.config
        for _ in range(n):
            self.iteration += 1
            traverser = self.iteration % 2
            if self.model is not None:
                self.responder = (self.iteration // 2) % 2
            if cfg.single_hand:  # a one-hand research preset is a game from 0-0: no match context to draw
                score = [0, 0]
            else:
                score = [self.rng.randrange(cfg.target_score), self.rng.randrange(cfg.target_score)]
            seed = self.rng.getrandbits(62)
            state = TrucoState.new(self.walk_config, seed=seed, score=score)
            self._walk(state, traverser, tuple(score), [], state.hand_index)

    def _walk(self, state: TrucoState, traverser: int, start: tuple, calls: list, hand: int) -> float:
        self.nodes += 1
        if state.is_over or state.hand_index != hand:
            sc = state.score
            if self._equity is None:
                d = float((sc[0] - start[0]) - (sc[1] - start[1]))
            else:
                d = 100.0 * (self._win_prob(sc[0], sc[1]) - self._win_prob(start[0], start[1]))
            return d if traverser == 0 else -d
        seat = state.actor
        if self._cfg_array is not None:
            from agents.cfr_abstraction_v3 import state_key

            number, codes_a, ids = state_key(state, seat, self._cfg_array, "lossless")
            key, codes = str(number), codes_a.tolist()
            names = [A.action_name(int(a), self.config.family) for a in ids]
        else:
            view = view_from_state(state, seat, start, calls)
            key, codes, names = abstract_key_names(view, state.legal_actions(), self.abstraction)
        restricted = self.responder >= 0 and seat != self.responder
        entry = self._entry(self.table_r if restricted else self.table, key, codes)
        if not restricted:
            self.touched_since.add(key)
        sigma = self._strategy(entry[1])
        played = self.mixed(key, codes, sigma) if restricted else sigma
        trick = state.trick_index
        if seat == traverser:
            values = []
            for i, name in enumerate(names):
                child = state.clone() if i < len(names) - 1 else state
                child.apply(name)
                new_calls = calls if name.partition(":")[0] in CARD_KINDS else calls + [(trick, seat, name)]
                values.append(self._walk(child, traverser, start, new_calls, hand))
            v = sum(s * x for s, x in zip(sigma, values))
            regrets = entry[1]
            for i, x in enumerate(values):
                r = regrets[i] + (x - v)
                regrets[i] = r if r > 0 else 0.0
            return v if played is sigma else sum(s * x for s, x in zip(played, values))
        avg = entry[2]
        w = float(self.iteration)
        for i, s in enumerate(sigma):
            avg[i] += w * s
        pick = self.rng.random()
        acc = 0.0
        choice = len(played) - 1
        for i, s in enumerate(played):
            acc += s
            if pick < acc:
                choice = i
                break
        name = names[choice]
        state.apply(name)
        new_calls = calls if name.partition(":")[0] in CARD_KINDS else calls + [(trick, seat, name)]
        return self._walk(state, traverser, start, new_calls, hand)

    # --- checkpoints ----------------------------------------------------------------------------------------
    def solver_meta(self) -> dict:
        """The settings a resumed run must share (``check_compatible``)."""
        meta = {"algorithm": "es-mccfr", "abstraction": self.abstraction}
        if self.utility != "points":
            meta["utility"] = self.utility
        if self.model is not None:
            meta["response"] = {"model": self.model.spec, "model_matches": self.model.matches,
                                "model_weight": self.model_weight, "model_full_count": self.model_full_count}
        return meta

    @staticmethod
    def _flatten(table: dict) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        keys = list(table)
        starts = [0]
        codes, regrets, avg = [], [], []
        for key in keys:
            c, r, a = table[key]
            codes.extend(c)
            regrets.extend(r)
            avg.extend(a)
            starts.append(len(codes))
        return (keys, np.asarray(starts, dtype=np.int64), np.asarray(codes, dtype=np.int16),
                np.asarray(regrets, dtype=np.float64), np.asarray(avg, dtype=np.float64))

    @staticmethod
    def _unflatten(keys, starts, codes, regrets, avg) -> dict:
        table = {}
        for i, key in enumerate(keys):
            lo, hi = int(starts[i]), int(starts[i + 1])
            table[key] = [[int(c) for c in codes[lo:hi]], regrets[lo:hi].tolist(), avg[lo:hi].tolist()]
        return table

    def to_checkpoint(self, preset: str, extra_meta: dict | None = None) -> Checkpoint:
        keys, starts, codes, regrets, avg = self._flatten(self.table)
        state = self.rng.getstate()
        meta = {"kind": "mccfr", "preset": preset, "rules": self.config.to_dict(), "abstraction": self.abstraction,
                "iteration": self.iteration, "solver": self.solver_meta(),
                "nodes": self.nodes, "key": "abstraction-" + self.abstraction, **(extra_meta or {})}
        rng_state = np.asarray(state[1], dtype=np.int64)
        extra = {"rng_state": rng_state, "rng_version": np.asarray([state[0]], dtype=np.int64),
                 "rng_gauss": np.asarray([0 if state[2] is None else 1], dtype=np.int64)}
        if self.model is not None:
            r_keys, r_starts, r_codes, r_regrets, r_avg = self._flatten(self.table_r)
            extra.update({"r_keys": np.frombuffer("\n".join(r_keys).encode(), dtype=np.uint8),
                          "r_slot_start": r_starts, "r_slot_action": r_codes, "r_regrets": r_regrets,
                          "r_cumulative": r_avg, **self.model.to_arrays()})
        return Checkpoint(meta=meta, keys=keys, slot_start=starts, slot_action=codes, regrets=regrets,
                          cumulative=avg, extra=extra)

    def restore(self, ckpt: Checkpoint) -> None:
        self.table = self._unflatten(ckpt.keys, ckpt.slot_start, ckpt.slot_action, ckpt.regrets, ckpt.cumulative)
        if self.model is not None:
            x = ckpt.extra
            try:
                text = np.asarray(x["r_keys"], dtype=np.uint8).tobytes().decode("utf-8")
                r_keys = text.split("\n") if text else []
                starts = np.asarray(x["r_slot_start"], dtype=np.int64)
                if len(starts) != len(r_keys) + 1 or starts[-1] != len(x["r_slot_action"]) or not (
                        len(x["r_regrets"]) == len(x["r_cumulative"]) == len(x["r_slot_action"])):
                    raise ValueError("inconsistent arrays")
                self.table_r = self._unflatten(r_keys, starts, x["r_slot_action"], np.asarray(x["r_regrets"]),
                                               np.asarray(x["r_cumulative"]))
            except (KeyError, UnicodeDecodeError, ValueError) as exc:
                raise ValueError(f"mccfr checkpoint lacks a valid restricted-opponent table ({exc})") from None
        self.iteration = ckpt.iteration
        self.nodes = int(ckpt.meta.get("nodes", 0))
        rng = ckpt.extra.get("rng_state")
        if rng is None or len(rng) != 625:
            raise ValueError("mccfr checkpoint lacks a valid RNG state")
        version = int(ckpt.extra.get("rng_version", np.asarray([3]))[0])
        self.rng.setstate((version, tuple(int(x) for x in rng), None))


def train_mccfr(cfg: RunConfig, out: TextIO = sys.stderr, max_new_iterations: int | None = None) -> dict:
    """Run (or resume) MCCFR as configured; returns a summary dict. The progress bars go to ``out``; the status
    lines (opponent model, resume, final iteration, evaluation) to this module's logger."""
    from .logs import Logger, _progress
    from .opponent_model import OpponentModel

    rules = cfg.rules()
    t0 = time.perf_counter()
    om = cfg.opponent_model or OpponentModelOptions(agent="heuristic")  # its weights count only with a model
    path = Path(cfg.checkpoint)
    ckpt = None
    if cfg.resume and path.exists():
        ckpt = load_checkpoint(path)
    model = None
    if cfg.opponent_model is not None:
        spec, n_matches = om.agent, om.matches
        if ckpt is not None and "model_keys" in ckpt.extra:
            model = OpponentModel.from_arrays(ckpt.extra, spec, n_matches)
        else:
            logger.info(f"[mccfr] modelling {spec!r}: {n_matches} self-play matches in {cfg.preset}")
            mbar = _progress(cfg.progress, n_matches, 0, f"model {spec}", out)
            model = OpponentModel.collect(rules, spec, n_matches, seed=cfg.seed, version=cfg.abstraction,
                                          progress=lambda k: mbar.update(1))
            mbar.close()
            logger.info(f"[mccfr] model: {model.decisions} decisions at {len(model)} abstract information sets "
                        f"({time.perf_counter() - t0:.0f} s)")
    if cfg.abstraction in KERNEL_ABSTRACTIONS:
        from .mccfr_kernel import KernelMCCFR

        solver = KernelMCCFR(rules, seed=cfg.seed, abstraction=cfg.abstraction, utility=cfg.utility)
    else:
        solver = MCCFR(rules, seed=cfg.seed, abstraction=cfg.abstraction, model=model,
                       model_weight=om.weight, model_full_count=om.full_count,
                       utility=cfg.utility)
    if ckpt is not None:
        check_compatible(ckpt, kind="mccfr", rules=rules.to_dict(), solver=solver.solver_meta(), where=str(path))
        solver.restore(ckpt)
        logger.info(f"[mccfr] resumed from {path} at iteration {solver.iteration}")
    board = Logger(cfg.logdir)
    start_iter = solver.iteration
    bar = _progress(cfg.progress, cfg.iterations, start_iter, f"mccfr {cfg.preset}", out)
    last_ckpt = t0
    last_log_t, last_log_it = t0, solver.iteration
    try:
        while solver.iteration < cfg.iterations:
            if max_new_iterations is not None and solver.iteration - start_iter >= max_new_iterations:
                break
            now = time.perf_counter()
            if cfg.time_limit_s is not None and now - t0 >= cfg.time_limit_s:
                break
            step = min(solver.batch, cfg.iterations - solver.iteration)
            if max_new_iterations is not None:
                step = min(step, max_new_iterations - (solver.iteration - start_iter))
            solver.iterate(step)
            bar.update(step)
            k = solver.iteration
            if k // cfg.log_every != (k - step) // cfg.log_every:
                now = time.perf_counter()
                rate = (k - last_log_it) / max(now - last_log_t, 1e-9)
                touched = solver.take_touched(last_log_it)
                last_log_t, last_log_it = now, k
                board.scalars(k, {"infosets/total": solver.num_infosets,
                                   "infosets/touched": touched,
                                   "regret/average": solver.average_regret(),
                                   "perf/iterations_per_s": rate,
                                   "perf/nodes_per_iteration": solver.nodes / max(k, 1)})
                bar.set_postfix(infosets=solver.num_infosets, it_s=f"{rate:.0f}")
            if time.perf_counter() - last_ckpt >= cfg.checkpoint_every_s:
                save_checkpoint(path, solver.to_checkpoint(cfg.preset))
                last_ckpt = time.perf_counter()
    finally:
        bar.close()
        board.close()
    save_checkpoint(path, solver.to_checkpoint(cfg.preset))
    run_s = time.perf_counter() - t0
    new = solver.iteration - start_iter
    summary = {"preset": cfg.preset, "iterations": solver.iteration, "infosets": solver.num_infosets,
               "seconds": run_s, "iterations_per_s": new / run_s if run_s > 0 else 0.0, "checkpoint": str(path)}
    logger.info(f"[mccfr] {cfg.preset}: iteration {solver.iteration}, {solver.num_infosets} abstract infosets, "
                f"{summary['iterations_per_s']:.0f} it/s; checkpoint {path}")
    if cfg.eval:
        summary["eval"] = evaluate_against(cfg, path)
    return summary


def evaluate_against(cfg: RunConfig, path: Path) -> dict:
    """Duplicate matches of the checkpoint (``cfr:PATH``) against ``cfg.eval.opponent`` in the run's preset,
    through :func:`training.evaluate.run_tournament` (``cfg.eval``: ``opponent``, ``matches``, ``workers``,
    ``seed``)."""
    from training.evaluate import run_tournament

    opponent, matches, workers = cfg.eval.opponent, cfg.eval.matches, cfg.eval.workers
    seed = cfg.seed if cfg.eval.seed is None else cfg.eval.seed
    agent = f"cfr:{path}"
    summary, meta = run_tournament([agent, opponent], [cfg.preset], matches, seed=seed, workers=workers)
    row = summary["pairings"][0]
    flip = row["agent_a"] != agent
    result = {"opponent": opponent, "matches": row["matches"], "seed": seed, "seconds": meta["seconds"]}
    for k, v in row.items():
        if k not in ("agent_a", "agent_b", "preset", "matches"):
            result[k] = v
    if flip:
        result["note"] = "pairing row is from the opponent's side"
    logger.info(f"[mccfr] {cfg.preset}: cfr vs {opponent}: {row}")
    return result
