"""The one small interface every agent implements, and agent specs (``random``, ``heuristic:bluff=0.3``, ...).

Why observation dicts: an agent sees exactly what the environment shows its seat (``{"observation",
"action_mask"}``), so no agent can peek at hidden cards. Agents that need more of their own seat's view (tabular
CFR needs a perfect-recall key) declare it in ``wants`` and the runner adds only those seat-safe extras:

* ``"info_state_string"``: ``truco_env.encoding.information_state_string(state, seat)``
* ``"info_state"``: ``truco_env.encoding.encode_information_state(state, seat)``

:func:`observation_for` builds that dict; it lives in :mod:`truco_env.turns` (the single-agent view needs it and
the environment layer must not import agents) and is re-exported here, beside the interface it serves.

A spec string names an agent kind and optional ``key=value`` parameters or a path: ``random``,
``heuristic:bluff=0.3``, ``cfr:runs/cfr/policy.npz``. Kinds register themselves with :func:`register_agent`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from truco_env import PRESETS
from truco_env.cards import PAULISTA
from truco_env.encoding import observation_size, reads_layout
from truco_env.limits import MAX_ECHO, clip
from truco_env.single import RandomPlayer, sample_rows  # noqa: F401  (sample_rows: re-exported for the agents)
from truco_env.turns import observation_for  # noqa: F401  (re-exported: see the module docstring)

#: How a policy agent (``ppo:``, ``onnx:``) picks among its action probabilities: the argmax, or a draw.
PLAY_MODES = ("greedy", "sample")
#: Where the package's shipped policies live (``ppo_<preset>.safetensors``, ``cfr_<preset>.npz``, model cards).
SHIPPED_DIR = os.path.join(os.path.dirname(__file__), "policies")


class Agent:
    """Base class: subclasses implement :meth:`act`; ``reset`` and ``seed`` are optional."""

    #: Extra seat-safe views the agent needs besides observation and mask (see module docstring).
    wants: ClassVar[frozenset[str]] = frozenset()
    #: The spec that rebuilds this agent (set by :func:`make_agent`).
    spec: str = ""
    #: True when one instance can play many tables at once through :meth:`act_batch` (no state kept between
    #: decisions, such as a network); batched self-play and best-response training then make one call per step.
    batched: ClassVar[bool] = False
    #: True when each instance runs an outside program (``exec:``): a trainer that seats one instance per table
    #: and seat then plays few tables at once, rather than start hundreds of programs.
    starts_program: ClassVar[bool] = False
    #: The presets this agent was made for (a trained policy's or checkpoint's), or None for any preset.
    presets: tuple[str, ...] | None = None
    #: The observation width a network agent reads (its layout), or None for an agent that reads any game.
    observation_width: int | None = None

    def act(self, observation: dict[str, Any]) -> int:
        """Choose a legal action id given ``{"observation", "action_mask", ...extras}``."""
        raise NotImplementedError

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One legal action id per row of ``observations`` [batch, obs] and ``masks`` [batch, actions], each row
        a table of its own. Only agents with ``batched = True`` implement it."""
        raise NotImplementedError(f"{type(self).__name__} plays one table at a time (batched = False)")

    @classmethod
    def act_together(cls, agents: Sequence[Agent], observations: np.ndarray, masks: np.ndarray,
                     views: Sequence[dict[str, Any]] | None = None) -> np.ndarray:
        """One legal action id per row, row ``i`` decided by ``agents[i]`` (agents of this class, one per table and
        seat, each with its own state) from ``views[i]`` where given (the observation with the extras the agent
        ``wants``), else from the row's observation and mask: one :meth:`act` after another here; a class whose
        decisions run compiled (the heuristic) or share their network calls (a search) decides for every row in
        one go. :func:`act_many` is the way in."""
        if views is None:
            views = [{"observation": o, "action_mask": m} for o, m in zip(observations, masks, strict=True)]
        return np.array([agent.act(view) for agent, view in zip(agents, views, strict=True)], dtype=np.int64)

    def reset(self, seat: int | None = None) -> None:
        """Called at the start of every match (``seat`` is the agent's seat, when known)."""

    def seed(self, seed: int | None = None) -> None:
        """Reseed any randomness of the agent (tournaments call it per match for reproducibility)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec or ''}>".replace(" >", ">")


class RandomAgent(RandomPlayer, Agent):
    """Uniform over the legal actions: the floor every other agent must clear (the environment's own
    ``RandomPlayer``, the single-agent view's default opponent, made an agent with a batched ``act_batch``)."""

    batched = True


def act_many(agents: Sequence[Agent], observations: np.ndarray, masks: np.ndarray,
             views: Sequence[dict[str, Any]] | None = None) -> np.ndarray:
    """One action per row of ``observations`` [tables, obs] and ``masks`` [tables, actions], row ``i`` decided by
    ``agents[i]`` (one agent per table and seat, as a match loop keeps them): the agents of each class decide
    together through its :meth:`Agent.act_together`, so that the heuristic's tables take one compiled call.

    Why: where many matches wait on one-table agents at once (a league's scripted seats, imitation data, a best
    response's target), a loop of ``act`` calls spends its time in Python; the decisions are the same either way.
    ``views`` (one per row, the observation with the extras each agent ``wants``) is what a caller passes for
    agents that read more than the observation and the mask."""
    out = np.empty(len(agents), dtype=np.int64)
    rows_of: dict[type, list[int]] = {}
    for i, agent in enumerate(agents):
        rows_of.setdefault(type(agent), []).append(i)
    for cls, rows in rows_of.items():
        out[rows] = cls.act_together([agents[i] for i in rows], observations[rows], masks[rows],
                                     None if views is None else [views[i] for i in rows])
    return out


class OtherPresetError(ValueError):
    """An agent made for other presets (what ``--allow-other-preset`` lets a researcher play anyway)."""


def check_preset(agent: Agent, preset: str, other_presets_allowed: bool = False) -> None:
    """:class:`OtherPresetError` when ``agent`` was made for other presets (a policy or checkpoint trained on another
    game), unless ``other_presets_allowed`` (research's ``--allow-other-preset``); then, allowed or not, ValueError
    when it is a network that cannot read the preset's observation (a señas or Uruguayan network on another game,
    where it read the wrong block or failed mid-match)."""
    if not other_presets_allowed and agent.presets is not None and preset not in agent.presets:
        made_for = f"preset(s) {list(agent.presets)}" if agent.presets else "rules that are no preset"
        raise OtherPresetError(f"agent {agent.spec or agent!r} was made for {made_for}, not {preset!r}")
    width = agent.observation_width
    if width is not None and preset in PRESETS and not reads_layout(width, observation_size(PRESETS[preset])):
        raise ValueError(f"agent {agent.spec or agent!r} reads observations of {width} values and {preset!r} gives "
                         f"{observation_size(PRESETS[preset])}: a señas or Uruguayan network plays only its own kind "
                         "of game")


#: The kinds of decision an agent that wraps another can single out (``search:...,on=``, ``swap:...,on=``).
DECISION_KINDS = ("cards", "bets", "answers", "onze", "signals")


def kinds_in(config: Any) -> list[str]:
    """The kinds of decision (:data:`DECISION_KINDS`) a game of ``config`` has: the mão de onze only in Paulista
    with it on, signals only with señas."""
    onze = config.family == PAULISTA and config.mao_de_onze
    return [k for k in DECISION_KINDS if (k != "onze" or onze) and (k != "signals" or config.senas)]


def refuse_kinds_never_met(kind: str, agent: Agent, on: frozenset[str]) -> None:
    """ValueError for ``on=`` kinds that no game of ``agent``'s presets has (``onze`` outside Paulista, ``signals``
    without señas): agent ``kind`` (search, swap) would act on nothing there and say nothing of it."""
    if agent.presets is None:
        return
    met = {k for name in agent.presets if name in PRESETS for k in kinds_in(PRESETS[name])}
    never = sorted(on & set(DECISION_KINDS) - met, key=DECISION_KINDS.index)
    if never:
        raise ValueError(f"agent {kind!r}: {clip(agent.spec or 'the agent', MAX_PATH_ECHO)} plays "
                         f"{list(agent.presets)}, whose games have no {'+'.join(never)} decisions (onze: Paulista's "
                         f"mão de onze; signals: señas); choose from {[k for k in DECISION_KINDS if k in met]}")


# ------------------------------------------------------------------------------------------------------------
# Specs

Factory = Callable[[str | None, dict[str, str]], Agent]
_REGISTRY: dict[str, Factory] = {}
#: Kinds whose module registers them on import (so that ``make_agent`` can load them lazily).
_LAZY_MODULES = {"heuristic": "agents.heuristic", "cfr": "agents.cfr", "ppo": "agents.ppo", "onnx": "agents.onnx",
                 "swap": "agents.swap", "threshold": "agents.scripted", "station": "agents.scripted",
                 "maniac": "agents.scripted", "best": "agents.best", "exec": "agents.exec",
                 "search": "agents.search"}


def register_agent(kind: str, factory: Factory) -> None:
    """Make ``kind`` available to :func:`make_agent`; ``factory(arg, params)`` builds the agent."""
    _REGISTRY[kind] = factory


def available_kinds() -> list[str]:
    kinds = set(_REGISTRY)
    for kind, module in _LAZY_MODULES.items():
        if importlib.util.find_spec(module) is not None:
            kinds.add(kind)
    return sorted(kinds)


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """``"heuristic:bluff=0.3,seed=1"`` -> ``("heuristic", None, {"bluff": "0.3", "seed": "1"})``;
    ``"cfr:path/to.npz"`` -> ``("cfr", "path/to.npz", {})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string such as 'random' or 'heuristic:bluff=0.3', "
                         f"got {spec!r}")
    kind, _, rest = spec.strip().partition(":")
    params: dict[str, str] = {}
    arg = None
    if kind == "exec":  # a command line, taken whole: its own "=" and "," are the program's
        return kind, rest or None, params
    if rest:
        if "=" in rest.split(",")[0]:
            for item in rest.split(","):
                key, eq, value = item.partition("=")
                if not eq or not key:
                    raise ValueError(f"agent spec {clip(repr(spec))}: expected key=value parameters, got "
                                     f"{clip(repr(item))}")
                if key.strip() in params:
                    raise ValueError(f"agent spec {clip(repr(spec))}: {clip(repr(key.strip()))} is given twice")
                params[key.strip()] = value.strip()
        else:
            arg = rest
    return kind, arg, params


def number_in(low: float, high: float, kind: Callable[[str], Any] = float) -> Callable[[str], Any]:
    """A converter for :func:`spec_params` that also refuses values outside [low, high] (and nan)."""
    def convert(text: str) -> Any:
        value = kind(text)
        if not low <= value <= high:
            raise ValueError(text)
        return value

    return convert


#: The largest seed an agent spec takes (``seed=N``): one 64-bit word, as records and journals keep seeds.
MAX_SEED = 2**63 - 1
#: The ``seed`` parameter of every agent spec, for :func:`spec_params` (a bounded integer: an unbounded one
#: would cost its digits in every message and record that repeats it).
SEED_PARAM = (number_in(0, MAX_SEED, int), "an integer in 0..2**63-1")


#: Characters of a path from a spec that an error shows (any real path fits; a made-up 5,000-byte one does not).
MAX_PATH_ECHO = 200


def echo(text: Any, limit: int = MAX_ECHO) -> str:
    """What an agent spec's error shows of a value from the spec: its ``repr`` (one line, quotes and all), clipped
    to ``limit`` characters (:func:`truco_env.limits.clip`)."""
    return clip(repr(text), limit)


def spec_params(kind: str, arg: str | None, params: dict[str, str],
                allowed: dict[str, tuple[Callable[[str], Any], str]]) -> dict[str, Any]:
    """The ``key=value`` parameters of a spec, converted: ``allowed`` maps each name to a converter (``int``,
    ``float``, :func:`number_in`) and the words that say what it takes. A one-line ValueError names a stray path,
    an unknown parameter or a bad value, with what is allowed; it shows each of them clipped (:func:`echo`)."""
    listing = ", ".join(f"{k}=<{words}>" for k, (_, words) in allowed.items())
    if arg is not None:
        raise ValueError(f"agent {kind!r} takes key=value parameters ({listing}), got {echo(arg)}")
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        names = clip(", ".join(echo(key) for key in unknown), 2 * MAX_ECHO)
        raise ValueError(f"agent {kind!r}: unknown parameter(s) [{names}]; allowed: {listing}")
    out: dict[str, Any] = {}
    for key, text in params.items():
        convert, words = allowed[key]
        try:
            out[key] = convert(text)
        except ValueError:  # int() of more digits than Python converts is one too
            raise ValueError(f"agent {kind!r}: {key} must be {words}, got {echo(text)}") from None
    return out


def make_agent(spec: str) -> Agent:
    """Build an agent from its spec; ValueError naming the spec and the kinds available."""
    kind, arg, params = parse_spec(spec)
    if kind not in _REGISTRY and kind in _LAZY_MODULES:
        try:
            importlib.import_module(_LAZY_MODULES[kind])
        except ModuleNotFoundError as err:
            if err.name != _LAZY_MODULES[kind]:
                raise ValueError(f"agent spec {clip(repr(spec))}: agent kind {kind!r} needs {err.name!r}, "
                                 f"which is not installed") from None
    if kind not in _REGISTRY:
        raise ValueError(f"agent spec {clip(repr(spec))}: unknown agent kind {clip(repr(kind))}; available: "
                         f"{available_kinds()}")
    agent = _REGISTRY[kind](arg, params)
    agent.spec = spec
    return agent


def _random_factory(arg: str | None, params: dict[str, str]) -> Agent:
    return RandomAgent(**spec_params("random", arg, params, {"seed": SEED_PARAM}))


register_agent("random", _random_factory)
