"""What learns and measures, in four rooms and a floor they share:

- ``learn/``: what trains a policy or a table: PPO (``ppo``, its collector ``selfplay``), best responses,
  distillation, CFR (``cfr/``), and shipping a finished run into the package (``ship``).
- ``measure/``: what says how strong an agent is: tournaments (``evaluate``), exploitability, the gauntlet, the
  leaderboard, the strength report and its pages, fingerprints, probes and leaks, and their statistics.
- ``people/``: what puts a policy in front of people and other programs: the terminal and browser tables, the
  demo, ONNX/JSON export.
- ``cli/``: the ``truco`` command line, one module per command.
- here, at the top: what every room uses: atomic files, typed options, output folders, progress lines, the worker
  pool.

It imports ``agents`` and ``truco_env``, never the other way round (docs/architecture.md).
"""
