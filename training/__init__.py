"""What learns and measures: the trainers (PPO in ``ppo.py``, CFR in ``cfr/``), the measures (tournaments,
best responses, the gauntlet, the report, the leaderboard), export, the terminal and web tables, and the ``truco``
command line (``cli.py``, one module per command in ``commands/``). It imports ``agents`` and ``truco_env``, never
the other way round (docs/architecture.md)."""
