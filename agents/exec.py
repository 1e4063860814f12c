"""``exec:COMMAND``: an outside program as an agent, speaking the ``truco-bot/1`` line protocol (docs/protocol.md).

The program is started on the first decision of the first match (``COMMAND`` split as a shell would, but run
without a shell), told each new match with a ``match`` message and asked each decision with an ``act`` message
(:mod:`truco_env.protocol`); it answers each ``act`` with one line. The agent sees the state only through the
seat-safe messages the match loop builds for it (``wants = {"protocol"}``), so a program learns nothing its seat
may not know.

A program that misbehaves (no answer within :data:`DECISION_SECONDS`, an exit, a closed output, a line that is
not JSON or names an illegal action) raises :class:`BotFailure`, one line naming the program, the seat and what it
did, and the process is stopped (the next decision starts it afresh). A tournament scores that match as the bot's
forfeit and plays on (:func:`training.evaluate.play_match`).
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import subprocess
import threading
import time
import weakref
from typing import Any

from truco_env.limits import clip
from truco_env.protocol import ProtocolError, read_answer

from .base import Agent, register_agent

#: How long a program may think about one decision (seconds); the first also covers its start.
DECISION_SECONDS = 10.0
STARTUP_SECONDS = 30.0


class BotFailure(ValueError):
    """An outside program broke the protocol or stopped answering; the message says which and how."""


def _stop(process: subprocess.Popen) -> None:
    """End ``process`` (and leave no zombie): close its input, then terminate, then kill."""
    if process.poll() is None:
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


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
        self.process: subprocess.Popen | None = None
        self.lines: queue.Queue = queue.Queue()
        self.seat: int | None = None
        self.seed_value: int | None = None
        self.new_match = True
        self.presets = None

    # --- the agent interface -------------------------------------------------------------------------------------

    def seed(self, seed: int | None = None) -> None:
        self.seed_value = seed

    def reset(self, seat: int | None = None) -> None:
        self.seat = seat
        self.new_match = True

    def act(self, observation: dict[str, Any]) -> int:
        messages = observation.get("protocol")
        if messages is None:
            raise BotFailure(f"{self._who()}: plays only where the match loop builds its messages (a tournament, "
                             "truco play, a best response), not from a bare observation")
        first = self.process is None
        if first:
            self._start()
        if self.new_match:
            self._send({**messages["match"], "seed": self.seed_value})
            self.new_match = False
        act = messages["act"]
        self._send(act)
        line = self._read(STARTUP_SECONDS if first else self.decision_seconds)
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
            self.process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, text=True, bufsize=1,
                                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except OSError as exc:
            raise BotFailure(f"{self._who()}: cannot start ({exc.strerror or exc})") from None
        self._finalizer = weakref.finalize(self, _stop, self.process)
        threading.Thread(target=self._pump, args=(self.process.stdout, self.lines), daemon=True).start()

    @staticmethod
    def _pump(stream: Any, lines: queue.Queue) -> None:
        """Move the program's output lines to the queue (a thread: a read that blocks must not block a match)."""
        try:
            for line in stream:
                lines.put(line)
        except (OSError, ValueError):
            pass
        lines.put(None)  # the output closed

    def _send(self, message: dict) -> None:
        try:
            self.process.stdin.write(json.dumps(message, separators=(",", ":")) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            code = self.process.poll()
            self.close()
            raise BotFailure(f"{self._who()}: its input is closed (the program exited, code {code})") from None

    def _read(self, seconds: float) -> str:
        deadline = time.monotonic() + seconds
        try:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            self.close()
            raise BotFailure(f"{self._who()}: no answer within {seconds:g} s") from None
        if line is None:
            code = self.process.wait()
            self.close()
            raise BotFailure(f"{self._who()}: its output closed before it answered (exit code {code})")
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
