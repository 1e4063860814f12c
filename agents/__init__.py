"""Agents that play Truco: random and heuristic baselines, CFR and PPO policies."""
