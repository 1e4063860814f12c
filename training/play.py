"""``truco play``: a person against any agents in the terminal.

The person sees only what their seat may see (the same drawing as the environment's ``ansi`` render), the bots'
calls as they happen, and the legal actions as numbered choices named in the family's language (Spanish for
Argentine Truco, Portuguese for Truco Paulista). Bots act through the ordinary agent interface on their own
seat's observation. The match record can be saved and replayed with ``truco replay``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.panel import Panel

from agents.base import Agent, check_preset, make_agent
from training.atomic import atomic_write_json
from training.labels import choice_label
from truco_env import cards as C
from truco_env.config import PRESETS, make_config, unknown_preset
from truco_env.engine import TrucoState
from truco_env.render import render_text
from truco_env.turns import ask_agent, play_turns


def save_record(state: TrucoState, path: str, hands: int | None = None) -> None:
    """Write the match record atomically, so an interrupted save never leaves half a file; ``hands`` keeps only
    the first hands (a game stopped after N hands has already dealt hand N+1, which nobody played)."""
    record = state.match_record()
    if hands is not None and len(record["hands"]) > hands:
        record["hands"] = record["hands"][:hands]
    atomic_write_json(path, record, indent=1)


def check_save_path(path: str) -> None:
    """ValueError when a record could not be saved to ``path`` (a folder, a name the system refuses): checked
    before the match, so that a person does not play a whole match to lose its record at the end."""
    try:
        if os.path.isdir(path):
            raise ValueError(f"--save {path!r} is a folder; give a file name")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        os.stat(path)
    except FileNotFoundError:
        pass
    except FileExistsError:
        raise ValueError(f"--save {path!r}: a file stands where its folder would be") from None
    except OSError as exc:
        raise ValueError(f"--save {path!r}: cannot be written ({exc.strerror or exc})") from None


def play_match(preset: str, opponent: str, partner: str, seat: int, seed: int | None, save: str | None,
               max_hands: int | None = None, read: Callable[[str], str] = input,
               out: TextIO | None = None, allow_other_preset: bool = False) -> int:
    """Run one match with a person at ``seat``; returns an exit code."""
    if preset not in PRESETS:
        raise unknown_preset(preset)
    config = make_config(preset)
    n = config.num_players
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be 0..{n - 1} for {preset}, got {seat}")
    if save:
        check_save_path(save)
    console = Console(file=out or sys.stdout, highlight=False)
    bots: dict[int, Agent] = {}
    for other in range(n):
        if other != seat:
            spec = partner if other % 2 == seat % 2 else opponent
            bots[other] = make_agent(spec)
            if not allow_other_preset:
                try:
                    check_preset(bots[other], preset)
                except ValueError as exc:
                    raise ValueError(f"{exc} (--allow-other-preset plays it anyway)") from None
            bots[other].seed(None if seed is None else seed * 100 + other)
            bots[other].reset(other)
    state = TrucoState.new(config, seed=seed)
    family = config.family
    console.print(f"[bold]truco-rl[/bold]: {preset}, you are seat {seat} (team {seat % 2}); "
                  + ", ".join(f"seat {s}: {bots[s].spec}" for s in sorted(bots)))
    hands_seen = 0

    def choose(actor: int) -> str:
        if actor == seat:
            name = _ask(console, state, seat, read)
            console.print(f"  you: {choice_label(name, family, state.phase)}")
        else:
            name = ask_agent(bots[actor], state, actor)
            _announce(console, state, actor, name)
        return name

    def hand_over(hand: int, before: tuple[int, int]) -> None:
        nonlocal hands_seen
        _hand_summary(console, state, hand)
        hands_seen += 1

    code = 0
    try:
        play_turns(state, choose, on_hand_end=hand_over,
                   until=lambda _: max_hands is not None and hands_seen >= max_hands)
        if state.is_over:
            console.print(f"[bold]Match over: team {state.winner} wins. "
                          f"Final score {state.score[0]}-{state.score[1]}[/bold]")
        else:
            console.print(f"[bold]Stopped after {hands_seen} hand(s). "
                          f"Final score {state.score[0]}-{state.score[1]}[/bold]")
    except (EOFError, KeyboardInterrupt) as exc:  # the end of the input, or Ctrl-C (exit code 130): the way out
        console.print(f"\nLeaving the table. Score {state.score[0]}-{state.score[1]}")
        code = 130 if isinstance(exc, KeyboardInterrupt) else 0
    if save:
        save_record(state, save, None if state.is_over else hands_seen)
        console.print(f"Match record saved to {save} (check it with: truco replay {save})")
    return code


def _announce(console: Console, state: TrucoState, actor: int, name: str) -> None:
    """Say what a bot does, before it happens (the label depends on the phase it is said in)."""
    family = state.family
    if not name.startswith(("play", "cover")):
        console.print(f"  seat {actor} says: [bold]{choice_label(name, family, state.phase)}[/bold]")
        return
    shown = "a face-down card" if name.startswith("cover") else name.split(":", 1)[1]
    if name.startswith("play_slot"):
        shown = C.card_text(state.dealt_cards(actor)[int(name.split(":")[1])], family)
    console.print(f"  seat {actor} plays {shown}")


def _hand_summary(console: Console, state: TrucoState, index: int) -> None:
    """The hand's points, where they came from (envido, flor, truco) and its last trick: what a player asks
    after a hand that ended on a call, not only on cards."""
    record = state.hand_records[index]
    points = record["points"]
    after = record["score_after"]
    console.print(f"-- hand {index + 1} over: team 0 +{points[0]}, team 1 +{points[1]} "
                  f"-> score {after[0]}-{after[1]}")
    split = [f"{source} {a}-{b}" for source, (a, b) in state.hand_point_sources(index).items() if a or b]
    if split:
        console.print(f"   points by source (team 0-team 1): {', '.join(split)}")
    trick = last_trick(state, record)
    if trick:
        console.print(f"   last trick: {trick}")


def last_trick(state: TrucoState, record: dict) -> str | None:
    """The cards of the hand's last (possibly unfinished) trick, with its winner when it was finished."""
    family, config = state.family, state.config
    players = len(record.get("pair") or range(state.num_players))
    plays: list[tuple[int, str | None]] = []
    for seat, action in record["actions"]:
        kind, _, arg = action.partition(":")
        if kind == "play":
            plays.append((seat, arg))
        elif kind == "cover":
            plays.append((seat, None))
        elif kind == "play_slot":
            plays.append((seat, record["deal"]["hands"][seat][int(arg)]))
    if not plays:
        return None
    size = len(plays) % players or players
    trick = plays[-size:]
    text = ", ".join(f"seat {seat}: {card or 'a face-down card'}" for seat, card in trick)
    if size < players:
        return text + " (unfinished)"
    vira = record["deal"]["vira"]
    table = C.strength_table(family, None if vira is None else C.parse_card(vira, family), config.deck,
                             config.deck_ranks)
    strength = {seat: -1 if card is None else table[C.parse_card(card, family)] for seat, card in trick}
    best = max(strength.values())
    teams = {state.team_of(seat) for seat, value in strength.items() if value == best}
    return text + (f" -> team {teams.pop()}" if len(teams) == 1 else " -> tied")


def _ask(console: Console, state: TrucoState, seat: int, read: Callable[[str], str]) -> str:
    console.print(Panel(render_text(state, seat), title=f"seat {seat}", expand=False))
    legal = state.legal_actions()
    for i, name in enumerate(legal, start=1):
        console.print(f"  [{i}] {choice_label(name, state.family, state.phase)}  ({name})")
    while True:
        answer = read(f"Your choice [1-{len(legal)}]: ").strip()
        if answer.isdigit() and 1 <= int(answer) <= len(legal):
            return legal[int(answer) - 1]
        if answer in legal:
            return answer
        console.print(f"  '{answer}' is not a choice: type a number from 1 to {len(legal)}")
