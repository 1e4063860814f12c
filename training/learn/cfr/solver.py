"""Full-traversal CFR on a :class:`~training.learn.cfr.tree.GameTree`: CFR+, linear CFR, discounted CFR and vanilla CFR,
plus the exact best response, NashConv and expected values of any tabular policy.

Every pass works on one depth of the tree at a time, over all deals at once (numpy gathers and ``bincount``
scatters), so an iteration costs a few array sweeps over the histories and no Python per history.

Algorithms (``algorithm``):

* ``cfr+``: regret matching+ (regrets floored at 0 after each update), alternating updates, linear averaging
  (iteration ``t`` weighs ``t``), as OpenSpiel's ``CFRPlusSolver``; ``averaging_delay`` skips the first iterations.
* ``linear``: linear CFR (regrets and average both weighted by ``t``; equivalently discounted by t/(t+1)).
* ``dcfr``: discounted CFR with ``alpha``, ``beta``, ``gamma`` (positive regrets times t^a/(t^a+1), negative
  times t^b/(t^b+1), average times (t/(t+1))^g).
* ``cfr``: vanilla CFR (uniform averaging), alternating updates.
"""

from __future__ import annotations

import numpy as np

from training.learn.cfr.tree import GameTree

ALGORITHMS = ("cfr+", "linear", "dcfr", "cfr")


def _segment_sum(values: np.ndarray, tree: GameTree) -> np.ndarray:
    """Per-infoset sums of a per-slot array."""
    return np.add.reduceat(values, tree.slot_start[:-1]) if len(values) else values


def normalise(tree: GameTree, weights: np.ndarray) -> np.ndarray:
    """Per-slot weights -> a behaviour policy (uniform where an infoset's weights sum to 0)."""
    totals = _segment_sum(weights, tree)[tree.slot_infoset]
    counts = np.diff(tree.slot_start)[tree.slot_infoset]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), 1.0 / counts)
    return out


def uniform_policy(tree: GameTree) -> np.ndarray:
    return normalise(tree, np.zeros(tree.num_slots))


# ------------------------------------------------------------------------------------------------------------
# evaluation

def reaches(tree: GameTree, policy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each player's own reach probability of every node under ``policy`` (chance not included)."""
    r = [np.ones(tree.num_nodes), np.ones(tree.num_nodes)]
    ls = tree.level_start
    for d in range(1, len(ls) - 1):
        lo, hi = ls[d], ls[d + 1]
        par = tree.parent[lo:hi]
        sig = policy[tree.slot_in[lo:hi]]
        pa = tree.actor[par]
        for p in (0, 1):
            r[p][lo:hi] = r[p][par] * np.where(pa == p, sig, 1.0)
    return r[0], r[1]


def node_values(tree: GameTree, policy: np.ndarray) -> np.ndarray:
    """Player 0's expected utility at every node when both play ``policy`` from there."""
    v = tree.utility.copy()
    ls = tree.level_start
    for d in range(len(ls) - 2, 0, -1):
        lo, hi = ls[d], ls[d + 1]
        plo, phi = ls[d - 1], ls[d]
        contrib = policy[tree.slot_in[lo:hi]] * v[lo:hi]
        v[plo:phi] += np.bincount(tree.parent[lo:hi] - plo, weights=contrib, minlength=phi - plo)
    return v


def expected_value(tree: GameTree, policy: np.ndarray) -> float:
    """Player 0's expected utility of the whole game under ``policy``."""
    v = node_values(tree, policy)
    roots = slice(0, tree.level_start[1])
    return float((tree.chance[roots] * v[roots]).sum())


def best_response_value(tree: GameTree, policy: np.ndarray, player: int,
                        return_policy: bool = False):
    """The value to ``player`` of a best response to the others' part of ``policy`` (exact, bottom-up over
    infosets: every infoset of the tree lies at one depth, so a level's infosets are complete when visited)."""
    sign = 1.0 if player == 0 else -1.0
    r0, r1 = reaches(tree, policy)
    opp_reach = (r1 if player == 0 else r0) * tree.chance
    v = sign * tree.utility.copy()  # values for `player` under BR
    br = np.zeros(tree.num_slots)
    ls = tree.level_start
    for d in range(len(ls) - 2, 0, -1):
        lo, hi = ls[d], ls[d + 1]
        plo, phi = ls[d - 1], ls[d]
        par = tree.parent[lo:hi]
        slots = tree.slot_in[lo:hi]
        mine = tree.actor[par] == player
        # opponent nodes: expectation under policy
        contrib = np.where(mine, 0.0, policy[slots] * v[lo:hi])
        level_v = np.bincount(par - plo, weights=contrib, minlength=phi - plo)
        if mine.any():
            ms = slots[mine]
            q = np.bincount(ms, weights=opp_reach[par[mine]] * v[lo:hi][mine], minlength=tree.num_slots)
            starts = tree.slot_start[:-1]
            maxq = np.maximum.reduceat(q, starts)
            is_best = q >= maxq[tree.slot_infoset]
            first = np.minimum.reduceat(np.where(is_best, np.arange(tree.num_slots), tree.num_slots), starts)
            chosen = first[tree.slot_infoset[ms]] == ms
            br[ms[chosen]] = 1.0
            level_v += np.bincount(par[mine][chosen] - plo, weights=v[lo:hi][mine][chosen],
                                   minlength=phi - plo)
        decision = tree.actor[plo:phi] >= 0
        v[plo:phi] = np.where(decision, level_v, v[plo:phi])
    roots = slice(0, tree.level_start[1])
    value = float((tree.chance[roots] * v[roots]).sum())
    if return_policy:
        return value, br
    return value


def nash_conv(tree: GameTree, policy: np.ndarray) -> float:
    """Sum over players of (best-response value - value under ``policy``); 0 exactly at a Nash equilibrium."""
    ev = expected_value(tree, policy)
    return best_response_value(tree, policy, 0) - ev + best_response_value(tree, policy, 1) + ev


# ------------------------------------------------------------------------------------------------------------
# the solver

class CFRSolver:
    """Full-traversal CFR on an exact tree. ``iterate(n)`` runs n iterations; ``average_policy()`` is the output.

    State (all numpy, saved by checkpoints): ``regrets``, ``cumulative`` (average-strategy weights), ``iteration``.
    """

    def __init__(self, tree: GameTree, algorithm: str = "cfr+", alternating: bool = True,
                 averaging_delay: int = 0, alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown CFR algorithm {algorithm!r}; choose one of {list(ALGORITHMS)}")
        self.tree = tree
        self.algorithm = algorithm
        self.alternating = bool(alternating)
        self.averaging_delay = int(averaging_delay)
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)
        self.regrets = np.zeros(tree.num_slots)
        self.cumulative = np.zeros(tree.num_slots)
        self.iteration = 0
        self.last_regret_mean = 0.0
        t = tree
        # precomputed per-level views
        self._levels = []
        ls = t.level_start
        for d in range(1, len(ls) - 1):
            lo, hi = int(ls[d]), int(ls[d + 1])
            par = t.parent[lo:hi]
            self._levels.append((lo, hi, int(ls[d - 1]), int(ls[d]), par, par - ls[d - 1], t.slot_in[lo:hi],
                                 t.actor[par]))
        self._player_slots = [np.flatnonzero(t.infoset_player[t.slot_infoset] == p) for p in (0, 1)]
        edges = np.arange(int(ls[1]), t.num_nodes)
        self._edges_of = [edges[t.actor[t.parent[edges]] == p] for p in (0, 1)]

    def params(self) -> dict:
        return {"algorithm": self.algorithm, "alternating": self.alternating,
                "averaging_delay": self.averaging_delay, "alpha": self.alpha, "beta": self.beta,
                "gamma": self.gamma}

    def current_policy(self) -> np.ndarray:
        return normalise(self.tree, np.maximum(self.regrets, 0.0))

    def average_policy(self) -> np.ndarray:
        return normalise(self.tree, self.cumulative)

    def _pass(self, policy: np.ndarray, players: tuple[int, ...]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """One forward and backward sweep: per updated player, (regret increments, own reach per node)."""
        t = self.tree
        n = t.num_nodes
        r = [np.ones(n), np.ones(n)]
        for lo, hi, _plo, _phi, par, _rel, slots, pa in self._levels:
            sig = policy[slots]
            for p in (0, 1):
                r[p][lo:hi] = r[p][par] * np.where(pa == p, sig, 1.0)
        v = t.utility.copy()
        for lo, hi, plo, phi, _par, rel, slots, _pa in reversed(self._levels):
            v[plo:phi] += np.bincount(rel, weights=policy[slots] * v[lo:hi], minlength=phi - plo)
        out = {}
        for p in players:
            edges = self._edges_of[p]
            par = t.parent[edges]
            sign = 1.0 if p == 0 else -1.0
            w = t.chance[par] * r[1 - p][par]
            inc = np.bincount(t.slot_in[edges], weights=w * sign * (v[edges] - v[par]), minlength=t.num_slots)
            out[p] = (inc, r[p])
        return out

    def _update(self, p: int, inc: np.ndarray, own_reach: np.ndarray, policy: np.ndarray) -> None:
        t = self.tree
        k = self.iteration
        slots = self._player_slots[p]
        alg = self.algorithm
        reg = self.regrets
        if alg == "cfr+":
            reg[slots] = np.maximum(reg[slots] + inc[slots], 0.0)
            weight = max(k - self.averaging_delay, 0)
        elif alg == "linear":
            reg[slots] = reg[slots] * (k - 1) / k + inc[slots]  # = sum_j j*inc_j / k
            weight = float(k)
        elif alg == "dcfr":
            if k > 1:
                prev = k - 1
                pos = prev ** self.alpha / (prev ** self.alpha + 1)
                neg = prev ** self.beta / (prev ** self.beta + 1)
                reg[slots] = np.where(reg[slots] > 0, reg[slots] * pos, reg[slots] * neg)
                self.cumulative[slots] *= (prev / k) ** self.gamma
            reg[slots] += inc[slots]
            weight = 1.0
        else:
            reg[slots] += inc[slots]
            weight = 1.0
        if weight:
            reach = own_reach[t.infoset_rep[t.slot_infoset[slots]]]
            self.cumulative[slots] += weight * reach * policy[slots]

    def iterate(self, n: int = 1) -> None:
        for _ in range(n):
            self.iteration += 1
            incs = []
            if self.alternating:
                for p in (0, 1):
                    policy = self.current_policy()
                    inc, reach = self._pass(policy, (p,))[p]
                    self._update(p, inc, reach, policy)
                    incs.append(inc[self._player_slots[p]])
            else:
                policy = self.current_policy()
                out = self._pass(policy, (0, 1))
                for p in (0, 1):
                    self._update(p, out[p][0], out[p][1], policy)
                    incs.append(out[p][0][self._player_slots[p]])
            self.last_regret_mean = float(np.abs(np.concatenate(incs)).mean()) if incs else 0.0

    def nash_conv(self) -> float:
        return nash_conv(self.tree, self.average_policy())
