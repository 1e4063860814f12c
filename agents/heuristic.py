"""HeuristicAgent: a rule-based Truco player for every preset, with a little Monte Carlo look-ahead.

It acts only on its observation dict (decoded by :mod:`agents.view`), never on the engine state. Spec:
``heuristic`` or ``heuristic:bluff=0.3,samples=48,respect=0.5,edge=0.1,signal=1,seed=1``:

* ``bluff`` (0.1): probability of bluffing a weak hand (see below);
* ``samples`` (48): sampled deals per look-ahead;
* ``respect`` (0.5): how much an opponent's call shades our win probability towards its strong hands;
* ``edge`` (0.1): the per-hand edge over the opponent assumed by the match-equity table (a confident player
  avoids staking the match on a coin flip);
* ``signal`` (1): with señas, whether it signals (0: it never does, and still reads what it sees);
* ``seed``: its random generator (tournaments reseed it per match).

How it decides
--------------
* **Win probability of the hand.** The unseen cards (deck minus own cards, table, vira and any visible partner
  cards) are dealt at random to the other participants, ``samples`` times, keeping only deals that agree with the
  public information (announced envido points, declared flors). Each sampled deal is played out by a simple
  sensible policy for every seat (win a trick as cheaply as possible, let a winning partner's card stand, tie
  when it cannot win, lead the middle card in trick 1 and the top card afterwards). The fraction of sampled
  deals won by the own team is ``p``. Card choice compares ``p`` for each distinct card (common samples), so
  it wins cheaply, keeps the top card and takes pardas when they pay.
* **Match equity.** Every bet is judged in match-winning probability, from a table ``ME(own, opp)`` computed
  once per target by dynamic programming over a typical distribution of hand values. This is what makes calls
  depend on the score: the falta envido, the mão de onze, the last points of a match.
* **Truco ladder.** A call or raise is made when its expected match equity (the opponent folds with
  probability ``r``; when it accepts, its hand is assumed to be in its top ``1 - r`` by strength) beats
  playing on. Answers compare refusing, accepting and raising, with ``p`` shaded towards the opponent's
  stronger hands by ``respect`` (a caller usually holds something).
* **Envido and flor.** The win probability of the envido is sampled the same way (cards already played by the
  opponents count); calls and raises are weighed by their accepted/refused values, the falta included, against
  match equity. A falta envido is called or accepted only with a win probability of at least ``FALTA_MIN``
  (unless the match is slipping away or the falta is small). Flor contests are judged by the share of possible
  opposing flors that ours beats.
* **Reading the opponent.** ``respect`` fades out against opponents who call in most hands (their calls say
  little); the calling rate is counted over the hands of the current match.
* **Bluffing.** Once per hand whose ``p`` is weak (below ``BLUFF_BELOW``), with probability ``bluff`` the agent
  decides to bluff that hand: it calls or raises the ladder even though the equity says no.
* **Mazo and the mão de onze.** It folds in trick 1 as the first to act only with a hopeless hand and a poor
  envido (denying the opponents their envido); at 11 it plays or runs by comparing match equity, seeing the
  partner's cards in 2v2.
* **Teams.** Partners' cards are part of every sampled deal and every rollout, so ``p`` is the team's
  probability; a partner's winning card is not overtaken.
* **Señas** (``senas`` on, ``sena_code: table``; docs/rules.md §3.13). At its first turn of a hand it signals
  honestly by the table (the first gesture true of its hand, best card first), and it reads every signal it saw,
  its partner's and the opponents' it caught, as honest: sampled deals must give that seat what the table says.
  With ``sena_code: free`` the gestures mean nothing to it: it neither signals nor reads them. ``signal=0``
  keeps it from signalling (what honest signals are worth to a team is measured against it).

The research presets hide their reduced deck (``deck_ranks`` is not in the observation); the agent then samples
from the family's whole deck, which still gives legal, sensible play.

Where it runs
-------------
Every decision runs in compiled code (:mod:`agents._heuristic_kernel`): the observation is decoded, the deals
sampled and played out and the bets weighed there, for one table or, through :meth:`HeuristicAgent.act_together`
(and :func:`agents.base.act_many`), for every table that waits on a heuristic at once. The readable statement of
the same decisions is :mod:`agents.heuristic_reference`; the two decide identically, drawing the same numbers from
the agent's own ``random.Random``-compatible stream (:mod:`agents.mersenne`), which is what keeps the pinned
decisions of ``tests/test_heuristic_exact.py`` and every cached heuristic figure valid.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from truco_env import cards
from truco_env.encoding import OBS_OFFSETS, OBSERVATION_SIZE_URUGUAYAN, URUGUAYAN_OFFSETS

from . import _heuristic_kernel
from .base import SEED_PARAM, Agent, echo, register_agent, spec_params
from .mersenne import MersenneStream

#: Typical distribution of the points one hand moves (per family), for the match-equity table. Uruguayan Truco
#: takes the Argentine one: the same ladder and envido, with more flors and stronger envidos not yet measured.
HAND_POINTS = {cards.ARGENTINE: {1: 0.45, 2: 0.3, 3: 0.15, 4: 0.1}, cards.PAULISTA: {1: 0.55, 3: 0.33, 6: 0.09, 9: 0.03},
               cards.URUGUAYAN: {1: 0.45, 2: 0.3, 3: 0.15, 4: 0.1}}
FOLD_SHARE = 0.3  # assumed share of ladder proposals the opponents refuse
RERAISE_SHARE = 0.2  # ... and raise again
ENVIDO_SAMPLES = 192  # envido needs no rollout: sample it finely
FALTA_FOLD = 0.5  # assumed share of falta envido calls refused
FALTA_MIN = 0.8  # win probability needed to call or accept a falta envido (see _falta_ok)
BLUFF_BELOW = 0.4  # a hand with p below this is "weak": bluffing material
FLOR_VALUES = {"achico": 4, "contraflor_no_quiero": 4, "resto_direct": 4, "resto_after": 6, "per_flor": 3,
               "contraflor_quiero": 6}


@lru_cache(maxsize=64)
def match_equity_table(target: int, family: str, edge: float = 0.0) -> tuple[tuple[float, ...], ...]:
    """``table[a][b]``: probability that the team at ``a`` beats the team at ``b`` (both below ``target``) when
    each hand gives ``d`` points (``HAND_POINTS``) to the first team with probability ``0.5 + edge``."""
    dist = HAND_POINTS[family]
    q = 0.5 + edge
    table = [[0.5] * target for _ in range(target)]

    def get(a: int, b: int) -> float:
        if a >= target:
            return 1.0
        if b >= target:
            return 0.0
        return table[a][b]

    for a in range(target - 1, -1, -1):
        for b in range(target - 1, -1, -1):
            table[a][b] = sum(w * (q * get(a + d, b) + (1 - q) * get(a, b + d)) for d, w in dist.items())
    return tuple(tuple(row) for row in table)


# ----------------------------------------------------------------------------------------------------------
# what the kernel reads besides the observation

_TAB = _heuristic_kernel.tables()
_TARGET_AT = OBS_OFFSETS["target"][0]
_FAMILY_AT = OBS_OFFSETS["family"][0]
_ME_SIDE = 40  # the observation clips the target at 30, at 40 in Uruguayan Truco
_ME_INDEX: dict[tuple[int, int, float], int] = {}
_ME_STACK = np.zeros((0, _ME_SIDE, _ME_SIDE))
_ROW0 = np.zeros(1, dtype=np.int64)
_MEMO_START = 16  # hands remembered before the memory grows (a match rarely has more)


def _me_index(target: int, family: int, edge: float) -> int:
    """The index in ``_ME_STACK`` of ``match_equity_table(target, family, edge)``, added when new."""
    global _ME_STACK
    key = (target, family, edge)
    index = _ME_INDEX.get(key)
    if index is None:
        table = np.zeros((1, _ME_SIDE, _ME_SIDE))
        rows = match_equity_table(target, cards.FAMILIES[family], edge)
        table[0, :target, :target] = rows
        _ME_STACK = np.concatenate([_ME_STACK, table])
        index = _ME_INDEX[key] = len(_ME_STACK) - 1
    return index


def _obs_target_family(obs: np.ndarray) -> tuple[int, int]:
    """The target and family an observation shows, as the decoder reads them."""
    if len(obs) == OBSERVATION_SIZE_URUGUAYAN and obs[URUGUAYAN_OFFSETS["uruguayan"][0]] != 0:
        target = max(1, round(float(obs[URUGUAYAN_OFFSETS["uruguayan_target"][0]]) * 40))
        return min(target, _ME_SIDE), cards.FAMILIES.index(cards.URUGUAYAN)
    target = max(1, round(float(obs[_TARGET_AT]) * 30))
    family = 0 if obs[_FAMILY_AT] != 0 else 1 if obs[_FAMILY_AT + 1] != 0 else 0
    return min(target, _ME_SIDE), family


class HeuristicParameters:
    """The parameters of the heuristic, checked (the compiled agent and its reference take the same ones)."""

    def __init__(self, bluff: float = 0.1, samples: int = 48, respect: float = 0.5, edge: float = 0.1,
                 signal: int = 1):
        if not 0.0 <= bluff <= 1.0:
            raise ValueError(f"heuristic: bluff must be in [0, 1], got {echo(bluff)}")
        if not 8 <= samples <= 10_000:
            raise ValueError(f"heuristic: samples must be in 8..10000, got {echo(samples)}")
        if not 0.0 <= respect <= 1.0:
            raise ValueError(f"heuristic: respect must be in [0, 1], got {echo(respect)}")
        if not 0.0 <= edge < 0.5:
            raise ValueError(f"heuristic: edge must be in [0, 0.5), got {echo(edge)}")
        if signal not in (0, 1):
            raise ValueError(f"heuristic: signal must be 0 or 1, got {echo(signal)}")
        self.signal = int(signal)
        self.edge = float(edge)
        self.bluff = float(bluff)
        self.samples = int(samples)
        self.respect = float(respect)


class HeuristicAgent(HeuristicParameters, Agent):
    """A strong rule-based player for every preset (see the module docstring)."""

    def __init__(self, bluff: float = 0.1, samples: int = 48, respect: float = 0.5, edge: float = 0.1,
                 signal: int = 1, seed: int | None = None):
        super().__init__(bluff, samples, respect, edge, signal)
        self._rng = MersenneStream(seed)
        self._params = np.array([[self.bluff, self.samples, self.respect, self.signal]])
        self._memo = np.zeros((1, 1 + 2 * _MEMO_START), dtype=np.int64)  # see agents._heuristic_kernel
        self._out = np.zeros(1, dtype=np.int64)
        self._me_at: dict[tuple[int, int], np.ndarray] = {}

    def seed(self, seed: int | None = None) -> None:
        self._rng.seed(seed)

    def reset(self, seat: int | None = None) -> None:
        self._memo[0, 0] = 0

    def _room(self) -> None:
        """Room in the memory for one more hand (a decision adds at most one)."""
        if 1 + 2 * (self._memo[0, 0] + 1) > self._memo.shape[1]:
            grown = np.zeros((1, 2 * self._memo.shape[1] - 1), dtype=np.int64)
            grown[:, :self._memo.shape[1]] = self._memo
            self._memo = grown

    def _me(self, obs: np.ndarray) -> np.ndarray:
        key = _obs_target_family(obs)
        index = self._me_at.get(key)
        if index is None:
            index = self._me_at[key] = np.array([_me_index(*key, self.edge)], dtype=np.int64)
        return index

    def act(self, observation: dict[str, Any]) -> int:
        obs = np.ascontiguousarray(observation["observation"])
        mask = np.ascontiguousarray(observation["action_mask"])
        self._room()
        me_index = self._me(obs)  # before reading _ME_STACK: it may add a table
        _heuristic_kernel.act_rows(obs[None], mask[None], _ROW0, self._rng.state[None], self._memo, self._params, _ME_STACK,
                   me_index, _TAB, self._out)
        action = int(self._out[0])
        if action < 0:
            raise ValueError("HeuristicAgent.act: the action mask has no legal action")
        return action

    @classmethod
    def act_together(cls, agents: Sequence[HeuristicAgent], observations: np.ndarray, masks: np.ndarray,
                     views: Sequence[dict] | None = None) -> np.ndarray:
        """``[agent.act(row) for agent, row in zip(agents, rows)]`` in one compiled call: row ``i`` of
        ``observations`` [batch, obs] and ``masks`` [batch, actions] is decided by ``agents[i]`` (one agent per
        table and seat, each with its own generator and memory of the match, as one by one; it reads nothing of
        ``views`` but the observation and mask already given)."""
        observations = np.ascontiguousarray(observations)
        masks = np.ascontiguousarray(masks)
        n = len(agents)
        if observations.shape[0] != n or masks.shape[0] != n:
            raise ValueError(f"HeuristicAgent.act_together: {n} agents for {observations.shape[0]} observations "
                             f"and {masks.shape[0]} masks")
        for agent in agents:
            agent._room()
        states = np.stack([agent._rng.state for agent in agents])
        widths = {agent._memo.shape[1] for agent in agents}
        if len(widths) == 1:
            memo = np.concatenate([agent._memo for agent in agents])
        else:
            memo = np.zeros((n, max(widths)), dtype=np.int64)
            for i, agent in enumerate(agents):
                memo[i, :agent._memo.shape[1]] = agent._memo[0]
        params = np.concatenate([agent._params for agent in agents])
        me_index = np.empty(n, dtype=np.int64)
        for i, agent in enumerate(agents):
            me_index[i] = agent._me(observations[i])[0]
        out = np.empty(n, dtype=np.int64)
        _heuristic_kernel.act_rows(observations, masks, np.arange(n, dtype=np.int64), states, memo, params, _ME_STACK, me_index,
                   _TAB, out)
        for i, agent in enumerate(agents):
            agent._rng.state[:] = states[i]
            agent._memo[0] = memo[i, :agent._memo.shape[1]]
        if (out < 0).any():
            raise ValueError("HeuristicAgent.act_together: an action mask has no legal action")
        return out


# ----------------------------------------------------------------------------------------------------------
# spec: heuristic, heuristic:bluff=0.3,samples=48,respect=0.5,seed=1

_PARAMS = {"bluff": (float, "a number"), "samples": (int, "an integer"), "respect": (float, "a number"),
           "edge": (float, "a number"), "signal": (int, "0 or 1"), "seed": SEED_PARAM}


def _heuristic_factory(arg: str | None, params: dict[str, str]) -> Agent:
    return HeuristicAgent(**spec_params("heuristic", arg, params, _PARAMS))


register_agent("heuristic", _heuristic_factory)
