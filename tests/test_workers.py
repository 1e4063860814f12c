"""Worker pools leave Ctrl-C to the parent from the workers' first instruction (training/workers.py)."""

import os
import signal

from training.workers import spawn_pool


def test_spawned_workers_ignore_sigint_before_any_initializer():
    before = signal.getsignal(signal.SIGINT)
    # os.getpid as initializer does nothing: the ignored SIGINT must come from the start-up itself
    with spawn_pool(1, initializer=os.getpid) as pool:
        assert pool.apply(signal.getsignal, (signal.SIGINT,)) == signal.SIG_IGN
    assert signal.getsignal(signal.SIGINT) is before  # the parent's handler is back
