"""``truco play``: a person against any agents in the terminal.

The person sees only what their seat may see (the same drawing as the environment's ``ansi`` render, with the
cards named beneath it), the bots' calls as they happen, and the legal actions as numbered choices in the
family's language (Spanish for Argentine Truco, Portuguese for Truco Paulista: "Jugar ancho de espadas", "Truco!").
Seats are "you", "your partner" and "the opponents", scores "us" and "them". ``q`` leaves the table (the record
is saved when ``--save`` names a file, as at the end of a match or on Ctrl-C) and ``?`` shows the keys and the
card legend again. Bots act through the ordinary agent interface on their own seat's observation. The record
replays with ``truco replay`` (``--show`` to watch it).

``--save`` never replaces an existing file unless ``--overwrite``, nor anything that is not a regular file (a
folder, a device, a fifo, a link) at all: checked before the match starts. When the save fails at the end anyway,
the record goes to a new file in the temporary folder (failing that, to the screen) and the exit code is 1.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from agents.base import Agent, OtherPresetError, check_preset, make_agent
from agents.hidden_seeds import hidden_seed
from training.atomic import atomic_write_json
from training.people.labels import action_words, card_legend, card_name, choice_label, manilha_of
from truco_env.cards import (
    FRENCH_RANKS,
    card_text,
    manilha_rank_index,
    parse_card,
    piezas,
)
from truco_env.config import PRESETS, make_config, unknown_preset
from truco_env.encoding import partner_cards_visible, public_action_name
from truco_env.engine import MAO_DE_FERRO, TIE, TrucoState
from truco_env.limits import clip
from truco_env.records import StopWatching
from truco_env.turns import ask_agent, play_turns
from truco_env.views import record_tricks, visible_tricks


def match_record(state: TrucoState, hands: int | None = None) -> dict:
    """The match record; ``hands`` keeps only the first hands (a game stopped after N hands has already dealt hand
    N+1, which nobody played)."""
    record = state.match_record()
    if hands is not None and len(record["hands"]) > hands:
        record["hands"] = record["hands"][:hands]
    return record


def save_record(state: TrucoState, path: str, hands: int | None = None) -> None:
    """Write the match record (see :func:`match_record`) atomically, so an interrupted save never leaves half a
    file."""
    atomic_write_json(path, match_record(state, hands), indent=1)


#: The longest answer read at the prompt (after stripping spaces): a longer line is refused whole, unparsed.
MAX_ANSWER = 64
#: What a message shows of a path someone typed.
MAX_PATH_SHOWN = 200

_NOT_A_FILE = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a fifo (named pipe)"),
               (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def _shown(path: str) -> str:
    """``path`` as a one-line message shows it: as typed when printable, else quoted with escapes; clipped."""
    return clip(path if path.isprintable() else repr(path), MAX_PATH_SHOWN)


def check_save_path(path: str, overwrite: bool = False) -> None:
    """ValueError (one line) when the record may not be saved to ``path``: a folder, a device, a fifo, a symbolic
    link or anything else that is not a regular file (never replaced, even with ``overwrite``), an existing file
    unless ``overwrite``, a folder that cannot be written, a name the system refuses. Checked before the match, so
    that a person does not play a whole match to lose its record at the end, and again before the save."""
    shown = f"--save {_shown(path)}"
    try:
        if os.path.isdir(path):
            raise ValueError(f"{shown} is a folder; give a file name")
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        try:
            info: os.stat_result | None = os.lstat(path)
        except FileNotFoundError:
            info = None
    except FileExistsError:
        raise ValueError(f"{shown}: a file stands where its folder would be") from None
    except OSError as exc:
        raise ValueError(f"{shown}: cannot be written ({exc.strerror or exc})") from None
    if info is not None:
        kind = next((name for test, name in _NOT_A_FILE if test(info.st_mode)), None)
        if kind is not None or not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{shown} is {kind or 'not a regular file'}, which a match record never replaces "
                             "(not even with --overwrite); give the name of a file")
        if not overwrite:
            raise ValueError(f"{shown} already exists; pass --overwrite to replace it, or choose another name")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{shown}: its folder cannot be written")


def keep_record(console: Console, state: TrucoState, path: str, hands: int | None, overwrite: bool) -> bool:
    """Save the record to ``path`` (checked again: something may have appeared there during the match) and say
    so; when that fails, say why in one line and keep the record in a new file of the temporary folder, or print
    it as one line of JSON when even that fails. True when it went to ``path``."""
    try:
        check_save_path(path, overwrite)
        save_record(state, path, hands)
    except (OSError, ValueError) as exc:
        text = str(exc) if isinstance(exc, ValueError) else f"--save {_shown(path)}: {exc.strerror or exc}"
        record = match_record(state, hands)
        try:
            fd, kept = tempfile.mkstemp(prefix="truco-play-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(record, handle, indent=1)
        except OSError:
            console.print(escape(f"The match record was not saved ({clip(text, 300)}); here it is:"), soft_wrap=True)
            console.file.write(json.dumps(record, separators=(",", ":")) + "\n")
            return False
        console.print(escape(f"The match record was not saved ({clip(text, 300)}); it is kept in {kept} "
                             f"(check it with: truco replay {kept})"), soft_wrap=True)
        return False
    shown = _shown(path)
    console.print(escape(f"Match record saved to {shown} (check it with: truco replay {shown})"), soft_wrap=True)
    return True


def play_match(preset: str, opponent: str, partner: str | None, seat: int, seed: int | None, save: str | None,
               max_hands: int | None = None, read: Callable[[str], str] = input,
               out: TextIO | None = None, allow_other_preset: bool = False, overwrite: bool = False) -> int:
    """Run one match with a person at ``seat``; returns an exit code (1 when the record could not go to
    ``save``, kept elsewhere instead). ``overwrite``: ``save`` may replace an existing regular file. ``partner``
    None: the partners play as ``opponent``."""
    if preset not in PRESETS:
        raise unknown_preset(preset)
    config = make_config(preset)
    n = config.num_players
    partner = opponent if partner is None else partner
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be 0..{n - 1} for {preset}, got {seat}")
    if save:
        check_save_path(save, overwrite)
    console = Console(file=out or sys.stdout, highlight=False)
    bots: dict[int, Agent] = {}
    for other in range(n):
        if other != seat:
            spec = partner if other % 2 == seat % 2 else opponent
            bots[other] = make_agent(spec)
            try:
                check_preset(bots[other], preset, allow_other_preset)
            except OtherPresetError as exc:
                raise ValueError(f"{exc} (--allow-other-preset plays it anyway)") from None
    hidden = seed is not None and any(bot.starts_program for bot in bots.values())
    for other, bot in bots.items():
        bot_seed = None if seed is None else seed * 100 + other
        # with an outside program at the table, neither the deal nor a sampling bot's draws follow from the seed
        bot.seed(hidden_seed("truco-play-bot", bot_seed, bits=32) if hidden else bot_seed)
        bot.reset(other)
    if hidden:
        seed = hidden_seed("truco-play", seed, bits=63)
    state = TrucoState.new(config, seed=seed)
    words = Words(seat, n)
    against = ", ".join(f"{words.who(s)}: {escape(clip(bots[s].spec, 200))}" for s in sorted(bots))
    console.print(f"[bold]truco-rl[/bold]: {preset}, {config.target_score} points to win; {against}")
    console.print(help_text(config.family))
    hands_seen = 0

    def choose(actor: int) -> str:
        if actor == seat:
            name = _ask(console, state, seat, read)
            console.print(f"  you: {action_words(name, state)}")
        else:
            name = ask_agent(bots[actor], state, actor)
            if public_action_name(state, actor, name, seat) is not None:  # a signal the person did not catch: nothing
                _announce(console, state, actor, name, words)
        return name

    def hand_over(hand: int, before: tuple[int, int]) -> None:
        nonlocal hands_seen
        hand_summary(console, state, hand, words)
        hands_seen += 1

    code = 0
    try:
        play_turns(state, choose, on_hand_end=hand_over,
                   until=lambda _: max_hands is not None and hands_seen >= max_hands)
        if state.is_over:
            console.print(f"[bold]Match over: {'you win' if state.winner == seat % 2 else 'they win'}. "
                          f"Final score {words.score(state.score)}[/bold]")
        else:
            console.print(f"[bold]Stopped after {hands_seen} hand(s). Final score {words.score(state.score)}[/bold]")
    except (EOFError, KeyboardInterrupt, Quit) as exc:  # q, the end of the input, or Ctrl-C (exit 130)
        console.print(f"\nLeaving the table. Score {words.score(state.score)}")
        code = 130 if isinstance(exc, KeyboardInterrupt) else 0
        hands_seen += 1  # the hand left in the middle is kept as played so far: a record may end in one
    if save and not keep_record(console, state, save, None if state.is_over else hands_seen, overwrite):
        code = code or 1
    return code


class Quit(Exception):
    """The person typed q: leave the table as on Ctrl-C, keeping the record."""


class Words:
    """Seats and scores as a player at ``seat`` says them: "you", "your partner", "the opponent", "us 5 - them 3"
    (the engine's seat and team numbers stay in the record, not on the screen). ``seat`` None: an onlooker
    (``truco replay --show``), who names seats and teams by number."""

    def __init__(self, seat: int | None, players: int):
        self.seat, self.players = seat, players

    def who(self, other: int) -> str:
        if self.seat is None:
            return f"seat {other}"
        if other == self.seat:
            return "you"
        if other % 2 == self.seat % 2:
            return "your partner" + (f" (seat {other})" if self.players > 4 else "")
        return "the opponent" if self.players == 2 else f"opponent (seat {other})"

    def score(self, pair: tuple[int, int] | list[int]) -> str:
        if self.seat is None:
            return f"{pair[0]}-{pair[1]} (team 0-team 1)"
        mine = self.seat % 2
        return f"us {pair[mine]} - them {pair[1 - mine]}"


def help_text(family: str) -> str:
    """The keys and the card legend, shown at the start and on ``?``."""
    return (f"keys: the number of a choice; q leaves the table (saving the record with --save); ? this help\n"
            f"{card_legend(family)}")


def _announce(console: Console, state: TrucoState, actor: int, name: str, words: Words) -> None:
    """Say what a bot does, before it happens (the label depends on the phase it is said in)."""
    if not name.startswith(("play", "cover")):
        console.print(f"  {words.who(actor)} says: [bold]{action_words(name, state)}[/bold]")
        return
    if name.startswith("cover"):
        shown = "a face-down card"
    else:
        text = name.split(":", 1)[1]
        if name.startswith("play_slot"):
            text = card_text(state.dealt_cards(actor)[int(text)], state.family)
        shown = card_name(text, state.family, manilha_of(state))
    console.print(f"  {words.who(actor)} {'play' if words.who(actor) == 'you' else 'plays'} {shown}")


def hand_summary(console: Console, state: TrucoState, index: int, words: Words) -> None:
    """The hand's points, where they came from (envido, flor, truco) and its last trick: what a player asks
    after a hand that ended on a call, not only on cards."""
    record = state.hand_records[index]
    points = record["points"]
    console.print(f"-- hand {index + 1} over: {words.score(points)} in this hand "
                  f"-> score {words.score(record['score_after'])}")
    split = [f"{source} {words.score((a, b))}" for source, (a, b) in state.hand_point_sources(index).items()
             if a or b]
    if split:
        console.print(f"   points by source: {', '.join(split)}")
    trick = last_trick(state, record, words)
    if trick:
        console.print(f"   last trick: {trick}")


def last_trick(state: TrucoState, record: dict, words: Words | None = None) -> str | None:
    """The cards of the hand's last (possibly unfinished) trick, with its winner when it was finished."""
    tricks = record_tricks(state.config, record)
    if not tricks:
        return None
    trick, team = tricks[-1]
    family, vira = state.family, record["deal"]["vira"]
    manilha = None
    if vira is not None and family == "uruguayan":
        manilha = vira  # card_name reads the muestra there
    elif vira is not None:
        config = state.config
        manilha = FRENCH_RANKS[manilha_rank_index(parse_card(vira, family), config.deck, config.deck_ranks)]
    words = words or Words(None, state.num_players)
    text = ", ".join(f"{words.who(seat)}: {'a face-down card' if covered else card_name(card, family, manilha)}"
                     for seat, card, covered in trick)
    if team is None:
        return text + " (unfinished)"
    if team == TIE:
        return text + " -> tied"
    if words.seat is None:
        return text + f" -> team {team}"
    return text + (" -> won by us" if team == words.seat % 2 else " -> won by them")


def table_in_words(state: TrucoState, seat: int, words: Words) -> str:
    """The table as the person at ``seat`` sees it (what the environment's drawing shows, nothing more), in the
    words of the table: cards by name, seats as you / your partner / the opponent, calls as they are said."""
    config, family = state.config, state.family
    manilha = manilha_of(state)

    def name(card: int) -> str:
        return card_name(card_text(card, family), family, manilha)

    lines = [(f"hand {state.hand_index + 1}, {words.who(state.dealer)} dealt, {words.who(state.mano)} "
              f"{'are' if state.mano == seat else 'is'} mano; score {words.score(state.score)}, "
              f"{config.target_score} to win")]
    if state.vira is not None and family == "uruguayan":
        lines.append(f"muestra: {name(state.vira)}; piezas: " + ", ".join(name(c) for c in piezas(state.vira)))
    elif state.vira is not None:
        lines.append(f"vira: {name(state.vira)}, manilhas: the {manilha}s")
    if state.special_hand:
        lines.append("special hand: " + state.special_hand.replace("_", " "))
    remaining = state.remaining_cards(seat)
    if state.special_hand == MAO_DE_FERRO and config.mao_de_ferro_blind:  # nobody sees their own cards
        hand = ", ".join(f"card {i + 1} (unseen)" for i, c in enumerate(state.dealt_cards(seat)) if c in remaining)
    else:
        hand = ", ".join(name(c) for c in remaining)
    lines.append(f"your hand: {hand or 'no cards left'}")
    if partner_cards_visible(state, seat):
        for other in state.participants:
            if other != seat and state.team_of(other) == state.team_of(seat):
                lines.append(f"{words.who(other)} holds: " + ", ".join(name(c) for c in state.remaining_cards(other)))
    for t, (plays, won) in enumerate(visible_tricks(state, seat)):
        played = ", ".join(f"{words.who(s)}: {'a face-down card' if c is None else name(c)}" for s, c in plays)
        result = "" if won is None else (" -> tied" if won == TIE else
                                         " -> ours" if won == state.team_of(seat) else " -> theirs")
        lines.append(f"trick {t + 1}: {played}{result}")
    lines.append(f"the hand is worth {state.hand_value}")
    # each call as said (an answer's words do not depend on the phase it was said in, except a mão de onze's,
    # which the special-hand line above names)
    table_code = config.senas and config.sena_code == "table"
    said = [f"{words.who(s)}: {choice_label(a, family, '', manilha, table_code)}"
            for s, a in state.hand_records[-1]["actions"]
            if not a.startswith(("play", "cover")) and public_action_name(state, s, a, seat) is not None]
    if said:
        lines.append("said: " + ", ".join(said))
    if config.senas and seat in state.signals:
        caught = [words.who(o) for o in state.catches[seat]]
        lines.append("your signal was caught by " + (", ".join(caught) if caught else "nobody"))
    for label, shown in (("envido", state.envido_announcements), ("flor", state.flor_announcements)):
        if shown:
            lines.append(f"{label} shown: " + ", ".join(
                f"{words.who(s)}: {'son buenas' if v is None else v}" for s, v in shown))
    return "\n".join(lines)


def _ask(console: Console, state: TrucoState, seat: int, read: Callable[[str], str]) -> str:
    console.print(Panel(table_in_words(state, seat, Words(seat, state.num_players)), title="your turn",
                        expand=False))
    legal = state.legal_actions()
    for i, name in enumerate(legal, start=1):
        console.print(f"  [{i}] {action_words(name, state)}")
    keys = f"type a number from 1 to {len(legal)}, q to leave or ? for help"
    while True:
        try:
            answer = read(f"Your choice [1-{len(legal)}, q, ?]: ").strip()
        except UnicodeDecodeError:  # bytes that are not text in the terminal's encoding
            console.print(f"  that line is not text: {keys}", soft_wrap=True)
            continue
        if len(answer) > MAX_ANSWER:  # refused unparsed (int() of 5,000 digits is refused with a traceback)
            console.print(f"  that line is {len(answer):,} characters long, not a choice: {keys}", soft_wrap=True)
            continue
        if answer.isascii() and answer.isdigit() and 1 <= int(answer) <= len(legal):  # '²' is a digit int() refuses
            return legal[int(answer) - 1]
        if answer in legal:
            return answer
        if answer.lower() in ("q", "quit"):
            raise Quit
        if answer == "?":
            console.print(help_text(state.family))
            continue
        console.print(escape(f"  {clip(repr(answer), 40)} is not a choice: {keys}"), soft_wrap=True)


class Onlooker:
    """``truco replay --show``: the match of a record hand by hand, on the screen of ``truco play`` with every
    seat's cards face up. ``pause(i)`` is asked after each hand whether to go on (False stops the showing)."""

    def __init__(self, console: Console, pause: Callable[[int], bool] | None = None):
        self.console, self.pause = console, pause
        self.words = Words(None, 2)

    def hand_start(self, state: TrucoState, index: int) -> None:
        self.words = Words(None, state.num_players)
        record = state.hand_records[index]
        manilha = manilha_of(state)
        self.console.print(f"\n[bold]== hand {index + 1}[/bold]: dealer seat {record['dealer']}, score "
                           f"{self.words.score(record['score_before'])}")
        if record["deal"]["vira"] is not None:
            vira = record["deal"]["vira"]
            if state.family == "uruguayan":
                self.console.print(f"   muestra {card_name(vira, state.family)}")
            else:
                self.console.print(f"   vira {card_name(vira, state.family)}, manilhas: {manilha}")
        for seat, cards in enumerate(record["deal"]["hands"]):
            self.console.print(f"   seat {seat} (team {seat % 2}): "
                               + ", ".join(card_name(c, state.family, manilha) for c in cards))

    def action(self, state: TrucoState, seat: int, name: str) -> None:
        if name.startswith("cover"):  # an onlooker of a record sees the face-down card too
            text = name.split(":", 1)[1]
            self.console.print(f"  seat {seat} plays {card_name(text, state.family, manilha_of(state))} face down")
            return
        _announce(self.console, state, seat, name, self.words)
        if name.startswith("sena:"):  # the onlooker also sees who caught the signal
            caught = state.catches[seat]
            self.console.print("    caught by " + (", ".join(f"seat {o}" for o in caught) if caught else "nobody"))

    def hand_end(self, state: TrucoState, index: int) -> None:
        if state.is_over or state.hand_index > index:
            hand_summary(self.console, state, index, self.words)
        else:
            self.console.print(f"-- the record stops in the middle of hand {index + 1}")
        if self.pause is not None and not self.pause(index):
            raise StopWatching
