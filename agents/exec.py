"""``exec:COMMAND``: an outside program as an agent, speaking the ``truco-bot/1`` line protocol (docs/protocol.md).

The program is started on the first decision of the first match (``COMMAND`` split as a shell would, but run
without a shell), told each new match with a ``match`` message and asked each decision with an ``act`` message
(:mod:`truco_env.protocol`); it answers each ``act`` with one line. The agent sees the state only through the
seat-safe messages the match loop builds for it (``wants = {"protocol"}``), so a program learns nothing its seat
may not know.

A program that misbehaves (no answer within :data:`DECISION_SECONDS`, an exit, a closed output, a line that is
not JSON, longer than :data:`~truco_env.protocol.MAX_ANSWER_BYTES` or names an illegal action, input it leaves
unread) raises :class:`BotFailure`, one line naming the program, the seat and what it did, and the process is
stopped (the next decision starts it afresh). A tournament scores that match as the bot's forfeit and plays on
(:func:`training.measure.evaluate.play_match`).

Every wait on a program is bounded: writing a message, reading an answer (a line is read to at most
``MAX_ANSWER_BYTES``, never to its end whatever its length) and stopping it (:data:`EXIT_SECONDS` after its input
closes, then as long after a SIGTERM, then SIGKILL). Each program runs in its own process group, and the whole
group is ended with it: a program that forks leaves nothing behind. The seed a program receives is keyed
(:mod:`agents.hidden_seeds`), so it says nothing about the deals.
"""

from __future__ import annotations

import json
import os
import queue
import selectors
import shlex
import signal
import subprocess
import threading
import time
import weakref
from typing import Any

from truco_env.limits import clip
from truco_env.protocol import MAX_ANSWER_BYTES, ProtocolError, read_answer

from .base import Agent, register_agent
from .hidden_seeds import hidden_seed

#: How long a program may think about one decision (seconds); the first also covers its start.
DECISION_SECONDS = 10.0
STARTUP_SECONDS = 30.0
#: How long a program that is being stopped gets to exit once its input closes, and again after a SIGTERM.
EXIT_SECONDS = 1.0
#: What the reader thread queues for a line longer than ``MAX_ANSWER_BYTES`` (it then stops reading).
OVERLONG = object()
_POSIX = os.name == "posix"


_LIVE: weakref.WeakSet = weakref.WeakSet()


def stop_all() -> None:
    """Kill every program this process started, with its process group, at once. A worker about to exit in a way
    that skips Python's own clean-up (a pool's SIGTERM, ``os._exit`` when its parent is gone) calls it
    (:mod:`training.workers`), or the programs and what they forked would outlive the tournament. No grace here:
    the exit may have interrupted a graceful stop half-way, which would never reach its last SIGKILL."""
    for agent in list(_LIVE):
        if agent.process is not None:
            _signal_group(agent.process, signal.SIGKILL)
    for agent in list(_LIVE):
        agent.close()


class BotFailure(ValueError):
    """An outside program broke the protocol or stopped answering; the message says which and how."""


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    """Send ``signum`` to the program's process group (its own, see :meth:`ExecAgent._start`): the program and
    whatever it started."""
    if _POSIX:
        try:
            os.killpg(process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass
    elif process.poll() is None:
        process.kill()


def _stop(process: subprocess.Popen) -> None:
    """End ``process`` and its process group (and leave no zombie), each wait bounded: close its input, give it
    :data:`EXIT_SECONDS` to exit, then SIGTERM and as long again, then SIGKILL; last, SIGKILL whatever of its
    group is left (children a program forked and left running)."""
    try:
        process.stdin.close()
    except OSError:
        pass
    for signum in (None, signal.SIGTERM):
        if signum is not None:
            _signal_group(process, signum)
        try:
            process.wait(timeout=EXIT_SECONDS)
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        _signal_group(process, signal.SIGKILL)
        process.wait()
    _signal_group(process, signal.SIGKILL)


class ExecAgent(Agent):
    """Plays by asking the program ``command`` (module docstring)."""

    wants = frozenset({"protocol"})
    starts_program = True

    def __init__(self, command: str, decision_seconds: float = DECISION_SECONDS):
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ValueError(f"agent 'exec:{clip(command)}': cannot split the command ({exc})") from None
        if not self.argv:
            raise ValueError("agent 'exec' needs a command: exec:COMMAND, e.g. exec:node bots/random.mjs")
        self.command = command
        self.decision_seconds = decision_seconds
        _LIVE.add(self)
        self.process: subprocess.Popen | None = None
        self.lines: queue.Queue = queue.Queue()
        self.seat: int | None = None
        self.seed_value: int | None = None
        self.new_match = True
        self.presets = None

    # --- the agent interface -------------------------------------------------------------------------------------

    def seed(self, seed: int | None = None) -> None:
        """The program's ``match`` message carries this seed keyed (:func:`~agents.hidden_seeds.hidden_seed`): the
        same tournament gives it the same seeds, and nothing in them leads back to the tournament's seed."""
        self.seed_value = None if seed is None else hidden_seed("exec", seed)

    def reset(self, seat: int | None = None) -> None:
        self.seat = seat
        self.new_match = True

    def act(self, observation: dict[str, Any]) -> int:
        messages = observation.get("protocol")
        if messages is None:
            raise BotFailure(f"{self._who()}: plays only where the match loop builds its messages (a tournament, "
                             "truco play, a best response), not from a bare observation")
        first = self.process is None
        seconds = STARTUP_SECONDS if first else self.decision_seconds
        deadline = time.monotonic() + seconds
        if first:
            self._start()
        if self.new_match:
            self._send({**messages["match"], "seed": self.seed_value}, deadline, seconds)
            self.new_match = False
        act = messages["act"]
        if not first and not self.lines.empty():  # a line nobody asked for would be read as the next answer
            extra = self.lines.get_nowait()
            self.close()
            if extra is None:
                raise BotFailure(f"{self._who()}: its output closed before it answered")
            raise BotFailure(f"{self._who()}: wrote a line it was not asked for "
                             f"({clip(repr(extra if extra is OVERLONG else extra.strip()), 80)})")
        self._send(act, deadline, seconds)
        line = self._read(deadline, seconds)
        try:
            name = read_answer(line, act["legal"])
        except ProtocolError as exc:
            self.close()
            raise BotFailure(f"{self._who()}: {exc}") from None
        return next(entry["id"] for entry in act["legal"] if entry["name"] == name)

    # --- the process ---------------------------------------------------------------------------------------------

    def _who(self) -> str:
        seat = "" if self.seat is None else f" at seat {self.seat}"
        return f"bot {clip(repr(self.command), 200)}{seat}"

    def _start(self) -> None:
        try:
            # its own process group (a new session), so that stopping it ends whatever it started too
            self.process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, bufsize=0, start_new_session=_POSIX,
                                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except OSError as exc:
            raise BotFailure(f"{self._who()}: cannot start ({exc.strerror or exc})") from None
        self._finalizer = weakref.finalize(self, _stop, self.process)
        if _POSIX:
            os.set_blocking(self.process.stdin.fileno(), False)  # writes wait in select, within the deadline
        threading.Thread(target=self._pump, args=(self.process.stdout, self.lines), daemon=True).start()

    @staticmethod
    def _pump(stream: Any, lines: queue.Queue) -> None:
        """Move the program's output lines (bytes) to the queue (a thread: a read that blocks must not block a
        match). A line is read to at most ``MAX_ANSWER_BYTES``: a longer one queues :data:`OVERLONG` and ends the
        reading, whether or not a newline ever comes."""
        try:
            with open(stream.fileno(), "rb", closefd=False) as reader:  # buffered, whatever the Popen buffering
                while line := reader.readline(MAX_ANSWER_BYTES + 1):
                    if len(line) > MAX_ANSWER_BYTES:
                        lines.put(OVERLONG)
                        return
                    lines.put(line)
        except (OSError, ValueError):
            pass
        lines.put(None)  # the output closed

    def _send(self, message: dict, deadline: float, seconds: float) -> None:
        """Write one message line, waiting for room in the pipe at most until ``deadline``: a program that does
        not read its input cannot hold the match."""
        data = memoryview((json.dumps(message, separators=(",", ":")) + "\n").encode())
        stdin = self.process.stdin
        try:
            if not _POSIX:
                stdin.write(data)
                stdin.flush()
                return
            with selectors.DefaultSelector() as waiting:  # not select(): it fails past descriptor 1023
                waiting.register(stdin, selectors.EVENT_WRITE)
                while data:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self.close()
                        raise BotFailure(f"{self._who()}: left its input unread for {seconds:g} s")
                    if waiting.select(left):
                        try:
                            data = data[os.write(stdin.fileno(), data):]
                        except BlockingIOError:
                            continue
        except (BrokenPipeError, OSError, ValueError):
            code = self.process.poll()
            self.close()
            raise BotFailure(f"{self._who()}: its input is closed (the program exited, code {code})") from None

    def _read(self, deadline: float, seconds: float) -> bytes:
        try:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            self.close()
            raise BotFailure(f"{self._who()}: no answer within {seconds:g} s") from None
        if line is OVERLONG:
            self.close()
            raise BotFailure(f"{self._who()}: a line longer than {MAX_ANSWER_BYTES:,} bytes (the longest "
                             "answer allowed)")
        if line is None:
            process = self.process
            self.close()  # bounded: a program that closed its output and sleeps is stopped, not waited for
            raise BotFailure(f"{self._who()}: its output closed before it answered (exit code "
                             f"{process.returncode})")
        return line

    def close(self) -> None:
        """Stop the program (also done when the agent is collected); the next decision starts it again, so a
        program that failed in one match gets a fresh start in the next."""
        if self.process is not None:
            self._finalizer()
            self.process = None
            self.lines = queue.Queue()
            self.new_match = True


def _factory(arg: str | None, params: dict[str, str]) -> Agent:
    if not arg:
        raise ValueError("agent 'exec' needs a command: exec:COMMAND, e.g. exec:node bots/random.mjs")
    return ExecAgent(arg)


register_agent("exec", _factory)
