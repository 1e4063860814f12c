"""Process pools whose workers leave Ctrl-C to the parent.

Why: a terminal's Ctrl-C signals the whole process group. A worker that dies of it mid-task leaves the parent's
work unfinished (a PPO update waiting forever, a tournament with a traceback per worker). A pool initializer
that ignores SIGINT is not enough on its own: a spawned worker spends its first second importing (torch, numba)
before the initializer runs. So the parent ignores SIGINT while it starts the workers, which inherit the ignored
signal from their first instruction (an ignored signal stays ignored across exec, and Python keeps it so), and
then restores its own handler.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from multiprocessing.pool import Pool


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def spawn_pool(workers: int, initializer: Callable[[], None] = ignore_sigint) -> Pool:
    """A ``spawn`` pool of ``workers`` processes that ignore SIGINT from their start."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return multiprocessing.get_context("spawn").Pool(workers, initializer=initializer)
    finally:
        signal.signal(signal.SIGINT, previous)
