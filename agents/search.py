"""SearchAgent: ``search:SPEC``, any agent that thinks ahead at play time (single-agent search with beliefs, after
SPARTA, Lerer et al. 2020).

Spec: ``search:SPEC[,worlds=W][,margin=M][,on=KINDS]`` where ``SPEC`` is any agent spec whose mixed strategy can be
read (``ppo:``, ``onnx:``, ``cfr:``, ``best:``); the trailing options are the search's own:

* ``worlds`` (32): deals played forward per decision, drawn from the belief;
* ``margin`` (0.02): how much match-win probability the best action must gain over the agent's own before the
  search overrules it;
* ``on`` (``cards``): the kinds of decision searched, joined by ``+`` (``cards``: which card; ``bets``: a call,
  raise or fold in the play phase; ``answers``: answering a call; ``onze``: play or run; ``signals``: with señas,
  whether and what to signal). The default is the one kind whose search did not lose to opponents unlike the
  agent (:data:`DEFAULTS`).

At a decision, the agent first asks ``SPEC`` what it would do. Then:

1. Belief. :func:`agents.belief.sample_worlds` makes :data:`CANDIDATES` deals consistent with the seat's view,
   weighted by how likely the other seats' actions of the hand were under the agent's own strategy (the model
   of every seat is the agent itself: never an evaluation opponent); ``worlds`` of them are drawn by weight.
2. Rollouts. For each candidate action (the legal actions of the searched kinds, and the agent's own), every world
   is played to the end of the hand on the compiled engine with the agent's strategy at every seat, all worlds
   and actions in one batch per step (one network call per step). The draws of world ``w`` are the same for
   every candidate action (common random numbers), so that the comparison measures the actions, not the dice.
3. Value. Where the hand ends, the score is worth its match-win probability: 1 or 0 when the match is over, else
   the match-equity table (:func:`agents.heuristic.match_equity_table`, even hands) at the new score. A hand is
   the horizon: points are not match-win probability, and the table prices the score the hand leaves.
4. Choice. The best action is played only when its value exceeds the agent's own action's by more than
   ``margin``; otherwise the agent's own action stands. The search therefore changes the agent only where it
   sees a clear gain, and against itself it changes little.

Decisions where a belief is not made (:func:`agents.belief.hand_view`: señas, a blind mão de ferro) or no deal
agrees with the view are played by ``SPEC`` alone. Seeded through :meth:`SearchAgent.seed` (a tournament reseeds
every match): the same seed gives the same decisions. ``search_stats`` counts searches and overrules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from truco_env import _kernel
from truco_env.actions import CALL_BASE
from truco_env.limits import MAX_ECHO, clip

from .base import (
    DECISION_KINDS,
    MAX_PATH_ECHO,
    Agent,
    echo,
    make_agent,
    number_in,
    refuse_kinds_never_met,
    register_agent,
)
from .belief import Plan, Rules, hand_view, policy_model, rules_of, run_plan, run_plans, sampling

SEARCH_KINDS = DECISION_KINDS
#: Deals proposed to the belief per decision (those that disagree with the view are dropped before weighing).
CANDIDATES = 256
#: Steps a rollout may take before it is cut (a hand has at most a few dozen decisions).
MAX_STEPS = 64
#: ``on=cards`` by measurement (docs/research.md, "Thinking ahead at play time"): searched, the answers and the bets
#: price calls against an opponent that answers like the agent and lose against those who do not; the card search
#: is level with its blueprint against the heuristic and random over 2,000 matches and beats it head to head. 32
#: worlds and a margin of 0.02 by measurement too (docs/research.md, "The search's budget and margin").
DEFAULTS = {"worlds": 32, "margin": 0.02, "on": "cards"}
#: Tables whose searches share network calls (:meth:`SearchAgent.act_together`): on one CPU core a call costs its
#: rows, and past a few tables the calls' arrays outgrow the caches (docs/research.md: 1.4x at 8 tables, 1.0x at
#: 32, 0.7x at 128).
TABLES_TOGETHER = 8


def action_kind(phase: int, action: int) -> str:
    """The kind (``SEARCH_KINDS``) of ``action`` at a decision of kernel ``phase``."""
    if action >= _kernel.A_SENA:
        return "signals"
    if phase == _kernel.ONZE:
        return "onze"
    if phase != _kernel.PLAY:
        return "answers"
    return "cards" if action < CALL_BASE else "bets"


class SearchAgent(Agent):
    """``agent``'s action, or a better one that a look-ahead over its belief finds (module docstring)."""

    def __init__(self, agent: Agent, worlds: int = DEFAULTS["worlds"], margin: float = DEFAULTS["margin"],
                 on: frozenset[str] = frozenset(DEFAULTS["on"].split("+"))):
        self.agent = agent
        self.model = policy_model(agent)
        if self.model is None:
            raise ValueError(f"agent 'search': {clip(repr(agent.spec), MAX_PATH_ECHO)} gives no action "
                             "probabilities to search with; search a policy or a blueprint (ppo:, onnx:, cfr:, best:)")
        self.worlds, self.margin, self.on = worlds, margin, on
        self.presets, self.observation_width = agent.presets, agent.observation_width
        self.wants = frozenset(agent.wants) | {"info_state_string"}
        self._rng = np.random.default_rng()
        self.search_stats = {"decisions": 0, "searched": 0, "overruled": 0}

    def seed(self, seed: int | None = None) -> None:
        self.agent.seed(seed)
        self._rng = np.random.default_rng(None if seed is None else [seed, 0x5EA2C4])

    def reset(self, seat: int | None = None) -> None:
        self.agent.reset(seat)

    def act(self, observation: dict[str, Any]) -> int:
        return run_plan(self._decide(observation), self.model)

    @classmethod
    def act_together(cls, agents: Sequence[SearchAgent], observations: np.ndarray, masks: np.ndarray,
                     views: Sequence[dict[str, Any]] | None = None) -> np.ndarray:
        """Each table's decision as :meth:`act` makes it, the searches of agents that search with the same agent
        run side by side (:func:`agents.belief.run_plans`: one network call per round for all of them). A
        search needs its seat's information-state string: rows without ``views`` are played by the agent
        alone."""
        views = views if views is not None else [{"observation": o, "action_mask": m}
                                                 for o, m in zip(observations, masks, strict=True)]
        out = np.empty(len(agents), dtype=np.int64)
        groups: dict[Any, list[int]] = {}
        for i, agent in enumerate(agents):
            groups.setdefault(agent._model_key, []).append(i)
        for rows in groups.values():
            for lo in range(0, len(rows), TABLES_TOGETHER):
                some = rows[lo:lo + TABLES_TOGETHER]
                out[some] = run_plans([agents[i]._decide(views[i]) for i in some], agents[some[0]].model)
        return out

    @property
    def _model_key(self) -> Any:
        """Agents whose models are the same network (instances made from one spec share one call)."""
        return (type(self.agent), self.agent.spec) if self.agent.spec else id(self)

    def _decide(self, observation: dict[str, Any]) -> Plan[int]:
        """The decision of :meth:`act` as a plan that asks the model as it goes (module docstring, 1-4)."""
        own = int(self.agent.act(observation))
        self.search_stats["decisions"] += 1
        rules = rules_of(np.asarray(observation["observation"], dtype=np.float32))
        root = None if rules is None else hand_view(observation, rules)
        if root is None:
            return own
        phase = int(np.argmax(root.obs[_kernel.O_PHASE:_kernel.O_PHASE + 8]))
        legal = np.flatnonzero(root.mask)
        actions = [int(a) for a in legal if a == own or action_kind(phase, int(a)) in self.on]
        if len(actions) < 2 or action_kind(phase, own) not in self.on:
            return own
        worlds = yield from sampling(root, rules, True, CANDIDATES, self._rng)
        if len(worlds.weights) == 0:
            return own
        self.search_stats["searched"] += 1
        drawn = self._rng.choice(len(worlds.weights), size=self.worlds, p=worlds.weights)
        values = yield from rolling_out(worlds.states[drawn], actions, rules, root.seat, self._rng)
        best = int(np.argmax(values))
        if values[best] > values[actions.index(own)] + self.margin:
            self.search_stats["overruled"] += 1
            return actions[best]
        return own


def rollout_values(states: np.ndarray, actions: list[int], rules: Rules, model, seat: int,
                   rng: np.random.Generator) -> np.ndarray:
    """The mean match-win probability for ``seat``'s team of taking each of ``actions`` in each world of
    ``states`` [worlds, state] and playing the hand out with ``model`` at every seat (module docstring, 2-3)."""
    return run_plan(rolling_out(states, actions, rules, seat, rng), model)


def rolling_out(states: np.ndarray, actions: list[int], rules: Rules, seat: int, rng: np.random.Generator
                ) -> Plan[np.ndarray]:
    """:func:`rollout_values` as a :data:`~agents.belief.Plan`: one request per step of the rollouts."""
    worlds, count = len(states), len(actions)
    rows = np.repeat(states, count, axis=0)  # row w * count + i: world w, action i
    first = np.tile(np.asarray(actions, dtype=np.int64), worlds)
    _apply_rows(rows, rules.cfg, first)
    draws = np.repeat(rng.random((worlds, MAX_STEPS)), count, axis=0)  # common random numbers per world
    obs = np.tile(rules.template, (len(rows), 1))
    masks = np.zeros((len(rows), _kernel.NUM_ACTIONS_SENAS if rules.config.senas else _kernel.NUM_ACTIONS), dtype=np.int8)
    live = np.zeros(len(rows), dtype=np.bool_)
    for step in range(MAX_STEPS):
        if not _observe_actors(rows, rules.cfg, live, obs, masks):
            break
        at = np.flatnonzero(live)
        probs = np.where(masks[at] > 0, (yield obs[at], masks[at]), 0.0)
        cdf = np.cumsum(probs, axis=1)
        pick = (cdf < (draws[at, step] * cdf[:, -1])[:, None]).sum(1)
        chosen = np.full(len(rows), -1, dtype=np.int64)
        chosen[at] = np.minimum(pick, masks.shape[1] - 1)
        _apply_rows(rows, rules.cfg, chosen)
    equity = equity_table(rules)
    return _values(rows, seat % 2, rules.config.target_score, equity).reshape(worlds, count).mean(0)


_EQUITY: dict[tuple[int, str], np.ndarray] = {}


def equity_table(rules: Rules) -> np.ndarray:
    """The match-equity table of the rules' target (even hands), as an array ``[own score, their score]``."""
    key = (rules.config.target_score, rules.config.family)
    if key not in _EQUITY:
        from .heuristic import match_equity_table

        _EQUITY[key] = np.asarray(match_equity_table(*key), dtype=np.float64)
    return _EQUITY[key]


@njit(cache=True)
def _apply_rows(rows, cfg, actions):
    for i in range(rows.shape[0]):
        if actions[i] >= 0:
            _kernel.apply(rows[i], cfg, actions[i])


@njit(cache=True)
def _observe_actors(rows, cfg, live, obs, masks):
    """Mark the rows whose hand goes on, with their actor's observation and legal actions; whether any does."""
    anyone = False
    for i in range(rows.shape[0]):
        st = rows[i]
        live[i] = st[_kernel.S_PHASE] != _kernel.OVER and st[_kernel.S_PHASE] != _kernel.DEAL
        if live[i]:
            anyone = True
            _kernel.legal_mask(st, cfg, masks[i])
            _kernel.encode_obs(st, cfg, st[_kernel.S_ACTOR], obs[i])
    return anyone


@njit(cache=True)
def _values(rows, team, target, equity):
    out = np.zeros(rows.shape[0])
    for i in range(rows.shape[0]):
        st = rows[i]
        own, other = st[_kernel.S_SCORE + team], st[_kernel.S_SCORE + 1 - team]
        if st[_kernel.S_PHASE] == _kernel.OVER:
            winner = st[_kernel.S_WINNER]
            out[i] = 0.5 if winner < 0 else (1.0 if winner == team else 0.0)
        elif own >= target:
            out[i] = 1.0
        elif other >= target:
            out[i] = 0.0
        else:
            out[i] = equity[own, other]
    return out


def split_spec(arg: str) -> tuple[str, dict[str, str]]:
    """``"ppo:paulista,greedy,worlds=8"`` -> ``("ppo:paulista,greedy", {"worlds": "8"})``: the agent searched
    with, and the search's own trailing options."""
    parts = arg.split(",")
    options: dict[str, str] = {}
    while parts and "=" in parts[-1] and parts[-1].partition("=")[0].strip() in DEFAULTS:
        key, _, value = parts.pop().partition("=")
        if key.strip() in options:
            raise ValueError(f"agent 'search': {key.strip()} is given twice")
        options[key.strip()] = value.strip()
    return ",".join(parts), options


def _factory(arg: str | None, params: dict[str, str]) -> Agent:
    usage = "search:SPEC[,worlds=W][,margin=M][,on=KINDS], e.g. search:ppo:paulista,worlds=32"
    if not arg:
        raise ValueError(f"agent 'search' needs an agent to search with: {usage}")
    inner, options = split_spec(arg)
    inner = inner.strip()
    if not inner.strip(","):
        raise ValueError(f"agent 'search' needs an agent to search with: {usage}")
    numbers = {"worlds": (number_in(1, 4096, int), "an integer 1..4096"),
               "margin": (number_in(0.0, 1.0), "a number 0..1")}
    values = {}
    for key, (convert, allowed) in numbers.items():
        text = options.get(key, str(DEFAULTS[key]))
        try:
            values[key] = convert(text)
        except ValueError:  # the value itself, not int()'s or float()'s words about it
            raise ValueError(f"agent 'search': {key} must be {allowed}, got {echo(text)}") from None
    worlds, margin = values["worlds"], values["margin"]
    on = frozenset(kind.strip() for kind in options.get("on", DEFAULTS["on"]).split("+"))
    unknown = sorted(on - set(SEARCH_KINDS))
    if unknown:
        names = clip(", ".join(echo(kind) for kind in unknown), 2 * MAX_ECHO)
        raise ValueError(f"agent 'search': unknown decision kinds [{names}]; choose from {list(SEARCH_KINDS)}")
    if inner.partition(":")[0].strip() == "search":
        raise ValueError("agent 'search': a search inside a search is not supported; search the agent itself")
    try:
        agent = make_agent(inner)
    except ValueError as exc:
        if "," not in inner:
            raise
        # a misspelt search option (world=8) stays with the agent searched with, whose error names only its own
        raise ValueError(f"{exc} (the search's own options come last: worlds=W, margin=M, on=KINDS)") from None
    refuse_kinds_never_met("search", agent, on)
    return SearchAgent(agent, worlds=worlds, margin=margin, on=on)


register_agent("search", _factory)
