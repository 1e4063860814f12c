"""CFRAgent: plays the average strategy of a CFR checkpoint (spec ``cfr:PATH``).

Two kinds of checkpoint, one agent. Exact checkpoints (research presets, :mod:`training.learn.cfr.solver`) are keyed
by the seat's information-state string (a seat-safe view: own cards and public actions), which the agent asks the
runner for. MCCFR checkpoints (the compiled walk, abstraction ``v4``, ``v5`` or ``lossless`` of
:mod:`agents.cfr.abstraction`) are keyed from the observation and the action mask by the very function the
walk used, so such an agent wants nothing beyond them (it also plays where only the compiled engine runs); a
``lossless`` one also reads the hand's history from ``info_state``. Checkpoints of retired abstractions (``v1``,
``v2``, ``v3``) are refused in one line.

The agent samples an action from the stored probabilities. An information set the table lacks (possible for
MCCFR, which only stores what it visited) is played uniformly over the legal actions and counted in ``misses``.
A row whose legal entries all have probability 0 (its weight sits on actions not legal now) is played uniformly
over those legal entries, greedy or not: the agent only ever picks a legal action.

MCCFR strategies are played *thresholded* (``threshold``, default :data:`MCCFR_THRESHOLD`): actions whose
average-strategy probability is below the threshold are dropped and the rest renormalised (the strongest action
is kept if none passes). A sampled, abstracted, not fully converged average strategy keeps some probability
on every action it tried early on; dropping that noise is the usual purification step of abstraction-based
agents, and measured better against ``heuristic`` (docs/cfr.md). Exact checkpoints are played as they
are (threshold 0).

Checkpoints are read with ``np.load(allow_pickle=False)`` (:mod:`agents.cfr.table`): a file that is not a
plain checkpoint is refused with a ValueError, never executed.

``search=MS`` (MCCFR checkpoints only): at each decision with more than one legal action whose public state has
few enough deals (in 1v1 the last trick) the agent re-solves the rest of the hand with a safe-subgame-solving
gadget (:mod:`agents.cfr.search`, a budget of MS milliseconds of walked nodes), checks exactly that the new
strategy gives no opponent hand more than the one it replaces, and if so plays it for its cards, thresholded or
greedy as the blueprint would be; otherwise it plays on as before.
It then also wants ``info_state_string``: the hand's start (score before it, dealer, own dealt cards) and its
public actions, which the search replays.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, ClassVar

import numpy as np

from truco_env.config import PRESETS
from truco_env.fast import config_array

from ..base import SEED_PARAM, SHIPPED_DIR, Agent, echo, register_agent
from .abstraction import VERSIONS as OBSERVATION_VERSIONS
from .abstraction import codes_and_ids, key_from_observation
from .table import MCCFR_THRESHOLD, StrategyTable, default_play

__all__ = ["MCCFR_THRESHOLD", "CFRAgent"]


class CFRAgent(Agent):
    wants: ClassVar[frozenset[str]] = frozenset({"info_state_string"})

    def __init__(self, path: str, seed: int | None = None, greedy: bool | None = None,
                 threshold: float | None = None, search: float | None = None):
        self.table = StrategyTable.load(path)
        self.config = self.table.config
        self.abstraction = str(self.table.meta.get("abstraction", "?")) if self.table.kind == "mccfr" else None
        self._cfg = None
        if self.abstraction is not None:  # keyed by the observation: no information-state string
            if self.abstraction not in OBSERVATION_VERSIONS:
                raise ValueError(f"agent 'cfr': {path} is an MCCFR checkpoint of abstraction {self.abstraction!r}, "
                                 f"which is retired; playable: {', '.join(OBSERVATION_VERSIONS)} (train it again)")
            self._cfg = config_array(self.config)
            self.wants = frozenset() if self.abstraction != "lossless" else frozenset({"info_state"})
        self.presets = tuple(name for name, config in PRESETS.items() if config == self.config)
        play = default_play(self.table.meta)
        self.greedy = bool(greedy)  # no checkpoint plays greedily by default (the data-biased responses did)
        self.threshold = float(play.get("threshold", 0.0) if threshold is None else threshold)
        self._rng = np.random.default_rng(seed)
        self.lookups = 0
        self.misses = 0
        self.search_ms = None if search is None else check_search_budget(search)
        self._search = None
        #: Searches made, how many passed their safety check and were played, their deals, iterations, walked nodes
        #: (solving and checking) and CPU seconds (``search=MS`` only).
        self.search_stats = {"searches": 0, "played": 0, "deals": 0, "iterations": 0, "nodes": 0, "check_nodes": 0,
                             "cpu_s": 0.0, "reached": 0}
        if self.search_ms is not None:
            self._search = self._make_search()
            self.wants = self.wants | {"info_state_string"}

    def _make_search(self):
        from .search import Blueprint, HandSearch, SearchError

        if self.abstraction is None:
            raise SearchError(f"agent 'cfr': search needs an MCCFR checkpoint (abstraction "
                              f"{', '.join(OBSERVATION_VERSIONS)}); this one is {self.table.kind}")
        solver = self.table.meta.get("solver")
        utility = solver.get("utility", "points") if isinstance(solver, dict) else "points"
        blueprint = Blueprint(*self.table.rows(), abstraction=str(self.abstraction))
        return HandSearch(blueprint, self.config, utility=utility, threshold=self.threshold, greedy=self.greedy)

    def reset(self, seat: int | None = None) -> None:
        if self._search is not None:
            self._search.reset()

    def seed(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"])
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("CFRAgent.act: the action mask has no legal action")
        found = self._row(observation, mask, legal)
        if found is not None:
            actions, probs = found
            ok = mask[actions] > 0
            if ok.any():
                p = np.where(ok, probs, 0.0)
                if self.threshold > 0:
                    p = np.where(p >= min(self.threshold, p.max()), p, 0.0)
                total = p.sum()
                if total > 0:  # some legal entry has weight: its argmax (greedy) or a draw is legal
                    if self.greedy:
                        return int(actions[int(np.argmax(p))])
                    return int(self._rng.choice(actions, p=p / total))
                return int(self._rng.choice(actions[ok]))  # every legal entry has 0: uniform over them
        self.misses += 1
        return int(self._rng.choice(legal))

    def _row(self, observation: dict[str, Any], mask: np.ndarray, legal: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray] | None:
        """The strategy at this decision: engine action ids and their probabilities (searched, or the table's
        row), or None where the table has no row."""
        if self._cfg is not None:
            self.lookups += 1
            found = self._searched(observation, mask) if self._search is not None and legal.size > 1 else None
            if found is not None:
                to_id = found[2]
                found = found[:2]
            else:
                found, to_id = self._observation_lookup(observation, mask)
        else:
            found, to_id = self._string_lookup(observation, legal)
        if found is None:
            return None
        actions, probs = found
        if to_id is not None:
            actions = np.asarray([to_id(c) for c in actions])
        return np.asarray(actions, dtype=np.int64), np.asarray(probs, dtype=np.float64)

    def probabilities(self, observation: dict[str, Any]) -> np.ndarray:
        """The blueprint's mixed strategy at this decision over the whole action space (0 off the mask; uniform
        over the legal actions where the table has no row or gives them no weight), whatever ``greedy`` says:
        what a trainer holds its policy near when the blueprint is its magnet."""
        mask = np.asarray(observation["action_mask"])
        legal = np.flatnonzero(mask)
        out = np.zeros(len(mask), dtype=np.float64)
        found = self._row(observation, mask, legal) if legal.size else None
        if found is not None:
            actions, probs = found
            ok = mask[actions] > 0
            np.add.at(out, actions[ok], probs[ok])
        total = out.sum()
        if total <= 0:
            out[legal] = 1.0
            total = float(legal.size)
        return out / total

    def _searched(self, observation: dict[str, Any], mask: np.ndarray):
        """(codes, probabilities, code -> engine id) of the re-solved strategy at this decision
        (:mod:`agents.cfr.search`), or None where the decision is not searched."""
        from .search import NODES_PER_MS, root_from_info_string

        info = observation.get("info_state_string")
        if info is None:
            raise ValueError("CFRAgent.act needs observation['info_state_string'] to search (declared in its wants)")
        start = time.process_time()
        root = root_from_info_string(info, observation["observation"], mask, self.config)
        result = self._search.search(root, int(self.search_ms * NODES_PER_MS), int(self._rng.integers(2**63)))
        stats = self.search_stats
        if result is None:  # not searched: the chain plays on (the blueprint, or the hand's last search)
            codes, ids, probs = self._search.policy(root.obs, root.mask, root.history, root.seat)
            stats["cpu_s"] += time.process_time() - start
            by_code = dict(zip(codes.tolist(), ids.tolist()))
            return codes, probs, (lambda code: by_code[int(code)])
        stats["cpu_s"] += time.process_time() - start
        stats["searches"] += 1
        stats["played"] += int(result.safe)
        stats["deals"] += result.deals
        stats["iterations"] += result.iterations
        stats["nodes"] += result.nodes
        stats["check_nodes"] += result.check_nodes
        stats["reached"] += int(result.reached)
        by_code = dict(zip(result.codes.tolist(), result.ids.tolist()))
        return result.codes, result.probs, (lambda code: by_code[int(code)])

    def _string_lookup(self, observation: dict[str, Any], legal: np.ndarray):
        """The row of an exact checkpoint, keyed by the information-state string (its actions are engine ids)."""
        info = observation.get("info_state_string")
        if info is None:
            raise ValueError("CFRAgent.act needs observation['info_state_string'] (declared in CFRAgent.wants)")
        self.lookups += 1
        return self.table.lookup(self.table.key_for(info)), None

    def _observation_lookup(self, observation: dict[str, Any], mask: np.ndarray):
        """The row of an MCCFR checkpoint, keyed from the observation (and, lossless, the information
        state), and the engine id of each of its codes."""
        obs = observation["observation"]
        info = observation.get("info_state")
        if self.abstraction == "lossless" and info is None:
            raise ValueError("CFRAgent.act needs observation['info_state'] for a lossless checkpoint (declared in "
                             "its wants)")
        key = key_from_observation(obs, mask, self._cfg, self.abstraction, info)
        found = self.table.lookup(str(key))
        codes, ids = codes_and_ids(obs, mask, self._cfg)
        by_code = dict(zip(codes.tolist(), ids.tolist()))
        if found is not None and not all(int(c) in by_code for c in found[0]):
            found = None  # a row of other legal actions: not this decision's (cannot happen with these keys)
        return found, (lambda code: by_code[int(code)])


def shipped_blueprints() -> list[str]:
    """Presets with a self-play blueprint shipped inside the package (``cfr:<preset>``)."""
    if not os.path.isdir(SHIPPED_DIR):
        return []
    return sorted(f[4:-4] for f in os.listdir(SHIPPED_DIR) if f.startswith("cfr_") and f.endswith(".npz"))


def blueprint_path(arg: str) -> str:
    """A checkpoint path as given, or the shipped blueprint of that preset (``argentine``, or ``cfr:argentine``
    as an agent spec writes it) when no such file exists."""
    name = arg.removeprefix("cfr:")
    if not os.path.exists(arg) and name in shipped_blueprints():
        return os.path.join(SHIPPED_DIR, f"cfr_{name}.npz")
    return arg


def check_search_budget(value: Any) -> float:
    """A search budget in milliseconds per decision: a finite number above 0; a one-line ValueError otherwise."""
    try:
        ms = float(value)
    except (TypeError, ValueError):
        ms = math.nan
    if not (math.isfinite(ms) and ms > 0):
        raise ValueError(f"agent 'cfr': search must be a number of milliseconds per decision above 0 (e.g. "
                         f"search=200), got {echo(value)}")
    return ms


def _factory(arg: str | None, params: dict[str, str]) -> Agent:
    """``cfr:PATH`` or ``cfr:PATH,threshold=0.3,greedy=1,seed=5,search=200`` (options after the path)."""
    if not arg:
        raise ValueError("agent 'cfr' needs a checkpoint path or a shipped blueprint: cfr:PATH (e.g. cfr:runs/cfr/"
                         "argentine-mini/checkpoint.npz) or cfr:<preset> (shipped: "
                         f"{', '.join(shipped_blueprints()) or 'none'}), optionally followed by ,threshold=X "
                         ",greedy=0|1 ,seed=N ,search=MS")
    path, *items = arg.split(",")
    path = blueprint_path(path)
    kwargs: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or key not in ("threshold", "greedy", "seed", "search"):
            raise ValueError(f"agent 'cfr': unknown option {echo(item)} after the path; allowed: threshold=X "
                             "(0..1), greedy=0|1, seed=N (0..2**63-1), search=MS (milliseconds per decision, "
                             "above 0)")
        if key == "search":
            kwargs[key] = check_search_budget(value)
            continue
        try:
            if key == "threshold":
                kwargs[key] = float(value)
                if not 0.0 <= kwargs[key] <= 1.0:
                    raise ValueError
            elif key == "greedy":
                if value not in ("0", "1"):
                    raise ValueError
                kwargs[key] = value == "1"
            else:
                kwargs[key] = SEED_PARAM[0](value)
        except ValueError:
            allowed = {"threshold": "a number in [0, 1]", "greedy": "0 or 1", "seed": SEED_PARAM[1]}[key]
            raise ValueError(f"agent 'cfr': {key} must be {allowed}, got {echo(value)}") from None
    return CFRAgent(path, **kwargs)


register_agent("cfr", _factory)
