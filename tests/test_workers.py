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


def test_workers_exit_when_their_parent_is_killed(tmp_path):
    """A tournament killed with SIGKILL leaves no pool worker behind playing out its chunk."""
    import subprocess
    import sys
    import time

    pids = tmp_path / "pids"
    script = (
        "import multiprocessing, time\n"
        "from training.workers import spawn_pool\n"
        "pool = spawn_pool(2)\n"
        f"open({str(pids)!r}, 'w').write(' '.join(str(p.pid) for p in multiprocessing.active_children()))\n"
        "pool.map_async(time.sleep, [60, 60])\n"
        "time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=os.path.dirname(os.path.dirname(__file__)))
    try:
        deadline = time.monotonic() + 60
        while not (pids.exists() and pids.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = {int(p) for p in pids.read_text().split()}
        assert workers and parent.pid not in workers
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    alive = set(workers)
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = {p for p in alive if _alive(p)}
    assert not alive, f"workers {sorted(alive)} outlived their killed parent"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


def test_sigterm_stops_a_tournament_as_ctrl_c_does(tmp_path):
    """SIGTERM to `truco eval --workers 2` while its pool plays: exit 143 with the one-line interruption message,
    no worker traceback (BrokenPipeError) and no leaked semaphores, and no output folder half written."""
    import subprocess
    import sys
    import time

    out = tmp_path / "eval"
    command = [sys.executable, "-c", "import sys; from training.cli import main; sys.exit(main())", "eval",
               "--agents", "heuristic", "random", "--matches", "4000", "--workers", "2", "--no-progress",
               "--no-plots", "--out", str(out)]
    parent = subprocess.Popen(command, cwd=os.path.dirname(os.path.dirname(__file__)), stderr=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(_children(parent.pid)) < 3 and time.monotonic() < deadline:  # the resource tracker, 2 workers
            time.sleep(0.1)
        time.sleep(2.0)  # the workers are playing their chunks
        assert parent.poll() is None, "the tournament ended before it could be stopped"
        parent.send_signal(signal.SIGTERM)
        _, err = parent.communicate(timeout=60)
    finally:
        if parent.poll() is None:
            parent.kill()
    assert parent.returncode == 143, err
    assert "Traceback" not in err and "leaked semaphore" not in err, err
    assert "interrupted" in err
    assert not out.exists()


def _children(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def _blocks_sigterm(thread_name: str) -> bool:
    """In a worker: whether its thread ``thread_name`` blocks SIGTERM (the thread's SigBlk mask in /proc)."""
    import threading

    thread = next(t for t in threading.enumerate() if t.name == thread_name)
    with open(f"/proc/self/task/{thread.native_id}/status") as f:
        mask = int(next(line for line in f if line.startswith("SigBlk:")).split()[1], 16)
    return bool(mask & (1 << (signal.SIGTERM - 1)))


def test_only_the_main_thread_of_a_worker_takes_sigterm():
    """The pool's terminate() sends each worker SIGTERM and waits for it; the handler that ends the worker runs on
    its main thread only. Handed by the kernel to the worker's watcher thread, the signal would leave a main thread
    blocked on the pool's queue lock waiting, and the pool with it (a tournament that hung as it finished)."""
    with spawn_pool(1, initializer=os.getpid) as pool:
        assert pool.apply(_blocks_sigterm, ("exit-with-parent",)) is True
        assert pool.apply(_blocks_sigterm, ("MainThread",)) is False


def test_cpu_seconds_counts_the_workers_still_running():
    """A pool's or a PPO backend's workers live as long as the run: their CPU time is read while they run, not
    only once they have ended (else a run's CPU time would miss its collection until the end)."""
    import multiprocessing
    import time

    from training.workers import cpu_seconds

    context = multiprocessing.get_context("fork")
    done, release = context.Event(), context.Event()
    worker = context.Process(target=_spin_then_wait, args=(done, release))
    before = cpu_seconds()
    worker.start()
    try:
        assert done.wait(30)
        time.sleep(0.05)
        assert cpu_seconds() - before >= 0.35  # the worker's 0.4 s of spinning, it still alive
    finally:
        release.set()
        worker.join(10)


def _spin_then_wait(done, release):
    import time

    end = time.process_time() + 0.4
    while time.process_time() < end:
        pass
    done.set()
    release.wait(30)
