"""Moving policies between our exact tree and OpenSpiel (through :mod:`truco_env.spiel`), for cross-checks and
the benchmark. Needs the optional ``spiel`` extra (open-spiel)."""

from __future__ import annotations

import numpy as np
from open_spiel.python import policy as os_policy

from agents.cfr.table import canonical_key
from training.learn.cfr.tree import GameTree


class TreePolicy(os_policy.Policy):
    """A per-slot policy of our tree as an OpenSpiel ``Policy`` (looked up by information-state string)."""

    def __init__(self, game, tree: GameTree, probs: np.ndarray):
        super().__init__(game, [0, 1])
        self._family = tree.config.family
        self._table = {}
        for i, key in enumerate(tree.infoset_keys):
            lo, hi = tree.slot_start[i], tree.slot_start[i + 1]
            self._table[key] = {int(a): float(p) for a, p in zip(tree.slot_action[lo:hi], probs[lo:hi])}

    def action_probabilities(self, state, player_id=None):
        player = state.current_player() if player_id is None else player_id
        key = canonical_key(state.information_state_string(player), self._family)
        try:
            return self._table[key]
        except KeyError:
            raise KeyError(f"information state {key!r} is not in our tree") from None


def tree_probs_from_callable(tree: GameTree, prob_of) -> np.ndarray:
    """Per-slot probabilities from ``prob_of(key) -> {action id: prob}`` (e.g. an OpenSpiel TabularPolicy)."""
    out = np.zeros(tree.num_slots)
    for i, key in enumerate(tree.infoset_keys):
        lo, hi = tree.slot_start[i], tree.slot_start[i + 1]
        probs = prob_of(key)
        out[lo:hi] = [probs.get(int(a), 0.0) for a in tree.slot_action[lo:hi]]
    return out


def tabular_to_tree(tree: GameTree, tabular) -> np.ndarray:
    """An OpenSpiel ``TabularPolicy`` (Python) as per-slot probabilities of our tree."""
    index = tabular.state_lookup
    table = tabular.action_probability_array

    def prob_of(key):
        row = table[index[key]]
        return {a: row[a] for a in np.flatnonzero(row)}

    return tree_probs_from_callable(tree, prob_of)


def cpp_policy_to_tree(tree: GameTree, cpp_policy) -> np.ndarray:
    """A C++ policy of a pyspiel solver (``tabular_average_policy()``) as per-slot probabilities of our tree."""
    table = cpp_policy.policy_table() if hasattr(cpp_policy, "policy_table") else None
    if table is None:
        def prob_of(key):
            actions, probs = cpp_policy.get_state_policy_as_parallel_vectors(key)
            return {int(a): float(p) for a, p in zip(actions, probs)}

        return tree_probs_from_callable(tree, prob_of)

    def prob_of(key):
        return {int(a): float(p) for a, p in table[key]}

    return tree_probs_from_callable(tree, prob_of)
