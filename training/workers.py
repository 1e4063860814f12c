"""Where parallel work runs: process pools whose workers leave Ctrl-C to the parent, and Ray when asked for.

Why: a terminal's Ctrl-C signals the whole process group. A worker that dies of it mid-task leaves the parent's
work unfinished (a PPO update waiting forever, a tournament with a traceback per worker). A pool initializer
that ignores SIGINT is not enough on its own: a spawned worker spends its first second importing (torch, numba)
before the initializer runs. So the parent ignores SIGINT while it starts the workers, which inherit the ignored
signal from their first instruction (an ignored signal stays ignored across exec, and Python keeps it so), and
then restores its own handler. A worker also exits when its parent is gone: a killed tournament (SIGTERM, kill
-9) must not leave its workers playing out their chunks of matches for minutes. Either way out (and the pool's own
SIGTERM when it is done) stops the outside programs the worker started, with their process groups, first.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.pool import Pool
from typing import Any


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its child processes, those still running (read from /proc,
    where there is one) and those that have ended. Why: a run measured beside other work states its cost in CPU
    time, which the machine's load does not stretch; the workers of a pool or a PPO backend live as long as the
    run, so ended children alone would miss them until the end."""
    import resource

    own, ended = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for child in multiprocessing.active_children():
        try:
            with open(f"/proc/{child.pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError, TypeError):
            continue  # no /proc here, or the child has just ended (its time is then in RUSAGE_CHILDREN)
        total += sum(int(v) for v in fields[11:15]) / tick  # utime, stime, and its own ended children's
    return total


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_programs() -> None:
    """Stop the outside programs this worker started (:func:`agents.exec.stop_all`), if it started any."""
    programs = sys.modules.get("agents.exec")
    if programs is not None:
        programs.stop_all()


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    _stop_programs()
    os._exit(1)


def _on_terminate(signum: int, frame: Any) -> None:
    """A pool ends its workers with SIGTERM, which skips Python's clean-up: stop the programs first."""
    _stop_programs()
    os._exit(0)


def _start_worker(parent: int, initializer: Callable[[], None]) -> None:
    # the parent's pid comes from the parent: one killed while this worker started up is noticed too. The watcher
    # starts with SIGTERM blocked (a thread inherits its creator's mask): the signal is the main thread's to take,
    # where its handler runs; handed by the kernel to the watcher, it would not wake a main thread blocked on the
    # pool's queue lock, and the pool's terminate() would wait for this worker forever
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True, name="exit-with-parent").start()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    signal.signal(signal.SIGTERM, _on_terminate)
    initializer()


def spawn_pool(workers: int, initializer: Callable[[], None] = ignore_sigint) -> Pool:
    """A ``spawn`` pool of ``workers`` processes that ignore SIGINT from their start and exit with their parent."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return multiprocessing.get_context("spawn").Pool(workers, initializer=_start_worker,
                                                          initargs=(os.getpid(), initializer))
    finally:
        signal.signal(signal.SIGINT, previous)


def start_ray(workers: int) -> Any:
    """The ``ray`` module, initialised: the cluster ``RAY_ADDRESS`` names, or a local instance of ``workers`` CPUs
    (ValueError naming the extra to install when Ray is missing)."""
    try:
        import ray
    except ImportError:
        raise ValueError("backend 'ray' needs Ray: pip install 'truco-rl[ray]'") from None
    if not ray.is_initialized():
        if os.environ.get("RAY_ADDRESS"):
            ray.init(log_to_driver=False)
        else:
            ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False)
    return ray
