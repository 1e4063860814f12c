"""Learning: what trains a policy or a table and leaves it in a run folder.

PPO (``ppo``, collecting with ``selfplay``), best responses (``best_response``: PPO against a fixed target),
distillation of a search into a network (``distill``), CFR (``cfr/``) and ``ship``, which copies a finished run
into the package as ``ppo:<preset>`` or ``cfr:<preset>``. A learner may play a tournament to watch its progress
(``training.measure.evaluate``); what judges an agent lives in ``measure/``.
"""
