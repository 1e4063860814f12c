"""Measuring: what says how strong an agent is, and the files that say it.

Tournaments on duplicate deals (``evaluate``, resumable through ``match_journal``, written by
``tournament_files``), exploitability by trained best responses (``exploit``), the held-out gauntlet
(``gauntlet``, ``population``), the leaderboard, the strength report (``report`` runs its ``stages``;
``report_data``, ``report_page`` and ``model_cards`` render it; ``best_agent`` picks ``best:<preset>``),
fingerprints, behaviour counts, probes, leaks and the statistics they share. A measure may train a learner (a best
response is one); it never changes what it measures.
"""
