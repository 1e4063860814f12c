"""``truco bot SPEC``: any agent of this project as a ``truco-bot/1`` program, so that it can play in other
people's arenas (docs/protocol.md): JSON Lines on standard input and output, one answer per ``act`` message.

The agent acts from the encoded observation each ``act`` message carries (``observation``, its nonzero entries)
and the legal actions, exactly as in a tournament: seeded and reset by each ``match`` message, so that the same
deals give the same decisions as the agent played directly."""

from __future__ import annotations

import argparse
import json
import sys

from truco_env.limits import clip, one_line


def add(sub: argparse._SubParsersAction) -> None:
    """The ``bot`` command."""
    bot = sub.add_parser(
        "bot",
        help="run an agent as a truco-bot/1 program (JSON Lines on stdin/stdout), for outside arenas",
        description=("Run an agent spec as a program that speaks the truco-bot/1 line protocol (docs/protocol.md)\n"
                     "on its standard input and output: a 'match' message seeds and resets it, each 'act' message\n"
                     "gets one answer line {\"action\": NAME}. Ends when its input closes."),
        epilog="examples:\n  truco bot heuristic\n  truco eval --agents 'exec:truco bot heuristic' random --matches 20",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bot.add_argument("spec", metavar="SPEC", help="the agent to run (heuristic, ppo:argentine, cfr:paulista, ...)")
    bot.set_defaults(func=_cmd_bot)


def _cmd_bot(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from agents.base import make_agent
    from truco_env.actions import NUM_ACTIONS, NUM_ACTIONS_SENAS
    from truco_env.encoding import (
        OBSERVATION_SIZE,
        OBSERVATION_SIZE_SENAS,
        OBSERVATION_SIZE_URUGUAYAN,
    )
    from truco_env.limits import loads_json

    # the observation's length says its rules' blocks (truco_env.encoding.observation_size): the common one, with
    # señas, or the Uruguayan one (only the first was read: every Uruguayan or señas match was forfeited at once)
    actions_of_size = {OBSERVATION_SIZE: NUM_ACTIONS, OBSERVATION_SIZE_SENAS: NUM_ACTIONS_SENAS,
                       OBSERVATION_SIZE_URUGUAYAN: NUM_ACTIONS}

    try:
        agent = make_agent(args.spec)
    except ValueError as exc:
        print(f"truco bot: error: {one_line(exc)}", file=sys.stderr)
        return 2
    if agent.starts_program:
        print(f"truco bot: error: {args.spec!r} is an outside program already; truco bot serves this project's "
              "agents (heuristic, ppo:NAME, onnx:PATH, ...)", file=sys.stderr)
        return 2
    if agent.wants:
        print(f"truco bot: error: agent {args.spec!r} needs {sorted(agent.wants)}, which the protocol does not "
              "carry; it plays from the observation only where its abstraction reads it", file=sys.stderr)
        return 2
    for line in sys.stdin:
        try:
            message = loads_json(line, "a message")
            kind = message.get("type") if isinstance(message, dict) else None
            if kind == "match":
                seed, seat = message.get("seed"), message.get("seat")
                if seed is not None and (type(seed) is not int or seed < 0):
                    raise ValueError(f"a match's seed must be a non-negative integer or null, got {clip(repr(seed), 40)}")
                agent.seed(seed)
                agent.reset(None if seat is None else _index(seat, 6, "a match's seat"))
            elif kind == "act":
                observation, mask = _read_act(message, actions_of_size)
                action = int(agent.act({"observation": observation, "action_mask": mask}))
                name = next(entry["name"] for entry in message["legal"] if int(entry["id"]) == action)
                print(json.dumps({"action": name}), flush=True)
        except (ValueError, KeyError, TypeError, IndexError, StopIteration, OverflowError) as exc:
            print(f"truco bot: error: a message it cannot read ({type(exc).__name__}: {clip(exc, 120)})",
                  file=sys.stderr)
            return 2
    return 0


def _entries(value: object, where: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list, got {type(value).__name__}")
    return value


def _index(value: object, size: int, where: str) -> int:
    """An index a message gives, an integer in 0..size-1: a negative one would count from the end, marking another
    entry than the one it names (numpy's indexing), and 1.0 or true would pass for 1."""
    if type(value) is not int or not 0 <= value < size:
        raise ValueError(f"{where} must be an integer in 0..{size - 1}, got {clip(repr(value), 40)}")
    return value


def _read_act(message: dict, actions_of_size: dict):
    """The observation and action mask of an ``act`` message (docs/protocol.md), every index checked: a message
    that says something else is refused in one line naming the field, never read as another observation."""
    import math

    import numpy as np

    carried = message["observation"]
    size = carried.get("size") if isinstance(carried, dict) else None
    if type(size) is not int or size not in actions_of_size:
        raise ValueError(f"an observation of {clip(repr(size), 40)} values; this truco-rl reads "
                         f"{' or '.join(map(str, actions_of_size))}")
    observation = np.zeros(size, np.float32)
    for entry in _entries(carried["nonzero"], "observation.nonzero"):
        if not isinstance(entry, list) or len(entry) != 2:
            raise ValueError(f"observation.nonzero holds [index, value] pairs, got {clip(repr(entry), 40)}")
        index, value = entry
        if type(value) not in (int, float) or not math.isfinite(value):
            raise ValueError(f"observation.nonzero values must be finite numbers, got {clip(repr(value), 40)}")
        observation[_index(index, size, "an observation.nonzero index")] = value
    mask = np.zeros(actions_of_size[size], np.int8)
    for entry in _entries(message["legal"], "legal"):
        mask[_index(entry["id"], len(mask), "a legal action's id")] = 1
    return observation, mask
