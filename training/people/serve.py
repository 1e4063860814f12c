"""``truco serve``: a web table where a person plays a whole match against an exported policy.

Who does what:

* The server (this module, a WSGI app on Werkzeug) keeps every match on the Python engine, the one authority on
  the rules. Every action, the person's and the bot's alike, is a POST of ``{"seat", "action", "position"}`` (the
  action id of docs/actions.md, and how many actions the match has had, so that a repeated or stale request
  cannot play twice). It is checked against the engine and played, or refused with a JSON ``{"error": ...}`` and
  a status code, the match left as it was. After every action the match record goes to ``--records``
  (replayable with ``truco replay``).
* The page (``frontends/web/``) draws the person's seat (hand, vira, tricks, calls, score) from the view the
  server sends, which holds only what that seat may know, and offers exactly the engine's legal actions as
  buttons (mouse, or keys 1-9), labelled in Spanish or Portuguese as in ``truco play``.
* The bot runs in the page. When a bot seat is to act, the server adds that seat's view (docs/frontends.md); the
  JavaScript encoder (``frontends/js/``) turns it into the observation and mask and onnxruntime-web runs the
  policy, served from ``frontends/web/node_modules`` (``npm ci`` once; no CDN). The page then posts the bot's
  action like any player's. The bot's cards therefore reach the browser: this is a table to play a policy,
  not a tournament server.

The page plays the policy greedy (the most probable legal action) unless the spec ends in ``,sample``: greedy
makes every bot move reproducible, the move the Python ``OnnxAgent`` with ``greedy=True`` makes on the same state.
The policy is an ONNX file: ``onnx:PATH.onnx`` as given, or ``ppo:<name>`` / ``ppo:PATH`` exported once into
``--cache`` (named by the policy file's hash, so a changed policy is exported again).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map, Rule
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.utils import send_file
from werkzeug.wrappers import Request, Response

from training.atomic import atomic_write_json
from training.people.labels import action_words, manilha_of
from truco_env import actions
from truco_env.cards import PAULISTA, URUGUAYAN, card_text, piezas
from truco_env.config import PRESETS, make_config, unknown_preset
from truco_env.encoding import (
    OBSERVATION_SIZE,
    OBSERVATION_SIZE_SENAS,
    OBSERVATION_SIZE_URUGUAYAN,
    OBSERVATION_SIZES,
    OBSERVATION_VERSION,
    observation_size,
    partner_cards_visible,
    public_action_name,
    reads_layout,
)
from truco_env.engine import MAO_DE_FERRO, TIE, TrucoState
from truco_env.limits import clip, loads_json
from truco_env.views import record_tricks, seat_view

log = logging.getLogger(__name__)

#: The repository's folder of the page's files (web/, js/), outside the package (an installed wheel has none):
#: ``truco serve --frontends DIR`` names it; by default it is found from the current directory.
FRONTENDS = "frontends"
#: The onnxruntime-web files the page loads: the WebAssembly build only (one thread, no WebGPU).
ORT_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
PLAY_MODES = ("greedy", "sample")
MAX_BODY = 4096  # an action request is a few dozen bytes
MAX_GAMES = 64  # matches kept in memory; the oldest is dropped (its record stays on disk)
MAX_RECORDS = 1000  # matches one server run starts, each with its record file in --records
MAX_METADATA = 1 << 20
#: Seconds a client has, from connecting, to send its whole request (the server answers one per connection); a
#: slower one (a "slowloris" keeping connections open by sending its headers a byte at a time) is cut. Each write
#: of the answer also waits at most this long for the client to read.
REQUEST_TIMEOUT = 10.0
#: What the answer to a malformed request shows of it.
MAX_ERROR_ECHO = 100
CONTENT_TYPES = {".html": "text/html", ".css": "text/css", ".mjs": "text/javascript",  # werkzeug adds the charset
                 ".json": "application/json",
                 ".wasm": "application/wasm", ".onnx": "application/octet-stream", ".svg": "image/svg+xml"}
HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           # the page runs only its own scripts; onnxruntime-web compiles WebAssembly
           "Content-Security-Policy": "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; "
                                      "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"}


def default_cache() -> Path:
    """Where exported policies are kept: ``$XDG_CACHE_HOME/truco-rl/web`` (``~/.cache/truco-rl/web``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "truco-rl" / "web"


# ---------------------------------------------------------------- the policy


@dataclass(frozen=True)
class Policy:
    """The exported policy the page runs: the ONNX file, its metadata, how the page plays it."""

    spec: str
    model: Path
    meta: dict
    mode: str = "greedy"
    obs_size: int = OBSERVATION_SIZE


def parse_opponent(spec: str) -> tuple[str, str, str]:
    """``(kind, path, mode)`` of ``--opponent SPEC``: ``ppo:NAME``, ``ppo:PATH`` or ``onnx:PATH``, then optionally
    ``,greedy`` (the default) or ``,sample``; ValueError (one line) for anything else."""
    kind, _, rest = spec.partition(":")
    path, _, mode = rest.partition(",")
    mode = mode.strip() or "greedy"
    if kind not in ("ppo", "onnx") or not path.strip():
        raise ValueError(f"--opponent {spec[:80]!r}: the bot runs in the browser, so it must be an exported "
                         "policy: ppo:<preset>, ppo:PATH.safetensors or onnx:PATH.onnx")
    if mode not in PLAY_MODES:
        raise ValueError(f"--opponent {spec[:80]!r}: the option after the path must be 'greedy' or 'sample'")
    return kind, path, mode


def browser_opponent(opponent: str | None, preset: str) -> tuple[str, str | None]:
    """The spec the page plays for ``--opponent`` (None: the default) and a note to print, or None. ``best:<preset>``
    stands for the agent the report chose (agents/best.py); the browser runs only networks, so when that is the
    heuristic or a CFR table the default falls back to ``ppo:<preset>`` and says so, and an explicit
    ``best:<preset>`` is refused in one line."""
    from agents.best import default_spec, resolve_best

    asked = opponent or default_spec(preset, f"ppo:{preset}")
    base, comma, mode = asked.partition(",")
    if not base.startswith("best:"):
        parse_opponent(asked)
        return asked, None
    chosen = resolve_best(base.removeprefix("best:"))
    if chosen.startswith("ppo:"):
        return chosen + comma + mode, f"{base} is {chosen}"
    if opponent is not None:
        raise ValueError(f"--opponent {clip(repr(asked))}: that is {chosen}, which runs only in Python; the page "
                         f"plays networks (ppo:<preset>, ppo:PATH.safetensors or onnx:PATH.onnx)")
    return f"ppo:{preset}", f"{base} is {chosen}, which the browser cannot run; playing ppo:{preset}"


def resolve_policy(spec: str, preset: str, cache: Path, allow_other_preset: bool = False) -> Policy:
    """The ONNX policy for ``--opponent SPEC`` (see :func:`parse_opponent`): ``onnx:PATH`` as is, ``ppo:`` exported
    into ``cache``. ValueError (one line) for a missing or broken file, or a policy made for other presets."""
    kind, path, mode = parse_opponent(spec)
    if kind == "onnx":
        model = Path(path)
        if not model.is_file():
            raise ValueError(f"--opponent {spec!r}: no such model file {path!r}")
        _check_model(model, spec)
    else:
        model = _export_cached(path, cache, spec)
    meta = _metadata(model, spec)
    presets = meta.get("presets") or None
    if presets is not None and preset not in presets and not allow_other_preset:
        raise ValueError(f"--opponent {spec!r} was made for preset(s) {presets}, not {preset!r} "
                         "(--allow-other-preset plays it anyway)")
    observation = meta.get("observation") if isinstance(meta.get("observation"), dict) else {}
    size, version = observation.get("size", OBSERVATION_SIZE), observation.get("version", OBSERVATION_VERSION)
    if (size not in {*OBSERVATION_SIZES.values(), OBSERVATION_SIZE_SENAS, OBSERVATION_SIZE_URUGUAYAN}
            or not isinstance(version, int) or version > OBSERVATION_VERSION):
        raise ValueError(f"--opponent {spec!r}: its metadata names an observation layout this truco-rl does not "
                         f"know (version {str(version)[:20]!r}, size {str(size)[:20]!r})")
    game = observation_size(make_config(preset))
    if not reads_layout(size, game):
        raise ValueError(f"--opponent {spec!r} reads observations of {size} values and {preset!r} gives {game}: a "
                         "señas or Uruguayan network plays only its own kind of game")
    return Policy(spec=spec, model=model, meta=meta, mode=mode, obs_size=size)


def _export_cached(arg: str, cache: Path, spec: str) -> Path:
    try:
        from agents.ppo import policy_path, shipped_policies
        from training.people.export import export_onnx
    except ModuleNotFoundError as err:
        raise ValueError(f"--opponent {spec!r}: exporting a PPO policy to ONNX needs {err.name!r}: pip install "
                         "'truco-rl[export]' (or give an exported model, onnx:PATH.onnx)") from None
    source = Path(policy_path(arg))
    if not source.is_file():
        raise ValueError(f"--opponent {spec!r}: no policy file {arg!r} and no shipped policy of that name; "
                         f"shipped: {shipped_policies()}")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", source.stem)
    model = cache / f"{stem}-{digest}.onnx"
    if not (model.is_file() and model.with_suffix(".json").is_file()):
        cache.mkdir(parents=True, exist_ok=True)
        log.info("truco serve: exporting %s to %s (once)", spec, model)
        try:
            export_onnx(str(source), str(model))
        except ValueError as err:  # a policy file that is not one (PolicyFileError is a ValueError)
            raise ValueError(f"--opponent {spec!r}: {err}") from None
    return model


def _check_model(model: Path, spec: str) -> None:
    """Load a given ONNX model with onnxruntime (when installed): a bad file is a one-line error now, not a
    failure in the page."""
    try:
        from agents.onnx import OnnxAgent
    except ModuleNotFoundError:
        return
    try:
        OnnxAgent(str(model))
    except ValueError as err:
        if "needs onnxruntime" not in str(err):
            raise ValueError(f"--opponent {spec!r}: {err}") from None


def _metadata(model: Path, spec: str) -> dict:
    """The export's metadata JSON beside the model ({} when there is none)."""
    path = model.with_suffix(".json")
    if not path.is_file():
        return {}
    try:
        if path.stat().st_size > MAX_METADATA:
            raise ValueError(f"larger than {MAX_METADATA} bytes")
        meta = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
        if meta.get("presets") is not None and not (isinstance(meta["presets"], list)
                                                     and all(isinstance(p, str) for p in meta["presets"])):
            raise ValueError("'presets' is not a list of preset names")
    except (OSError, ValueError) as err:
        raise ValueError(f"--opponent {spec!r}: metadata {path}: {str(err)[:120]}") from None
    return meta


# ---------------------------------------------------------------- the matches


class ApiError(Exception):
    """A refused request: the status code and the one-line message the client gets as ``{"error": ...}``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Game:
    id: str
    state: TrucoState
    record: Path
    position: int = 0  # actions played so far
    said: list[list[dict]] = field(default_factory=lambda: [[]])  # per hand, each action as the person saw it
    shown: list[dict] = field(default_factory=lambda: [{}])  # per hand, the envido and flor showdowns
    saved: bool = False


class Table:
    """The matches of one server: one preset, the person at ``seat``, the policy at every other seat."""

    def __init__(self, preset: str, policy: Policy, records: Path, seat: int = 0, seed: int | None = None):
        if preset not in PRESETS:
            raise unknown_preset(preset)
        self.preset = preset
        self.config = make_config(preset)
        if not 0 <= seat < self.config.num_players:
            raise ValueError(f"seat must be 0..{self.config.num_players - 1} for {preset}, got {seat}")
        self.policy = policy
        self.records = Path(records)
        self.seat = seat
        self.seed = seed
        self.games: dict[str, Game] = {}
        self.started = 0
        self.lock = threading.Lock()

    def info(self) -> dict:
        """What the page needs once: the rules, the seats, the policy files and how to play them."""
        return {"preset": self.preset, "family": self.config.family, "players": self.config.num_players,
                "target": self.config.target_score, "seat": self.seat,
                "policy": {"spec": self.policy.spec, "mode": self.policy.mode, "model": "/policy/model.onnx",
                           "observation_size": self.policy.obs_size,
                           # the actions the model answers for: a model made without señas never signals
                           "actions": actions.NUM_ACTIONS_SENAS if self.policy.obs_size == OBSERVATION_SIZE_SENAS
                           else actions.NUM_ACTIONS,
                           "observation_version": OBSERVATION_VERSION}}

    def new_game(self) -> Game:
        with self.lock:
            if self.started >= MAX_RECORDS:
                raise ApiError(503, f"this server has started {MAX_RECORDS:,} matches, the most one run records in "
                                    f"{self.records}; restart truco serve to play more")
            seed = None if self.seed is None else self.seed + self.started
            self.started += 1
            game_id = secrets.token_hex(6)
            stamp = time.strftime("%Y%m%d-%H%M%S")
            game = Game(game_id, TrucoState.new(self.config, seed=seed),
                        self.records / f"{stamp}-{self.preset}-{game_id}.json")
            self.games[game_id] = game
            while len(self.games) > MAX_GAMES:
                self.games.pop(next(iter(self.games)))
            self._save(game)
            return game

    def game(self, game_id: str) -> Game:
        game = self.games.get(game_id)
        if game is None:
            raise ApiError(404, f"no game {game_id[:40]!r} on this server (start one with POST /api/games)")
        return game

    def act(self, game: Game, body: Any) -> None:
        """Check one action request against the engine and play it; ApiError (nothing changed) otherwise."""
        example = '{"seat": 0, "action": 95, "position": 4}'
        if not isinstance(body, dict):
            raise ApiError(400, f"the body must be a JSON object such as {example}")
        extra = sorted(set(body) - {"seat", "action", "position"})
        if extra:
            raise ApiError(400, f"unknown field(s) {extra[:4]}; expected seat, action, position as in {example}")
        for key in ("seat", "action", "position"):
            value = body.get(key)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ApiError(400, f"{key!r} must be an integer, as in {example}; got {str(value)[:40]!r}")
        seat, action, position = body["seat"], body["action"], body["position"]
        count = actions.num_actions(self.config)
        if not 0 <= action < count:
            raise ApiError(400, f"action id {clip(action)} is out of range: expected 0..{count - 1} "
                                "(docs/actions.md)")
        with self.lock:
            state = game.state
            if state.is_over:
                raise ApiError(409, "the match is over: no action is legal (start a new one)")
            if position != game.position:
                raise ApiError(409, f"position {position} is stale: the match has had {game.position} actions "
                                    "(reload it)")
            if seat != state.actor:
                raise ApiError(409, f"seat {state.actor} is to act, not seat {seat}")
            name = actions.action_name(action, state.family)
            legal = state.legal_actions()
            if name not in legal:
                raise ApiError(409, f"illegal action {action} ({name}) for seat {seat} in the {state.phase} "
                                    f"phase; legal: {', '.join(legal)}")
            hand, said = state.hand_index, self._said(state, seat, name)
            state.apply(name)
            game.position += 1
            if said is not None:
                game.said[hand].append(said)
            if state.hand_index == hand:
                game.shown[hand] = {"envido": [list(a) for a in state.envido_announcements],
                                    "flor": [list(a) for a in state.flor_announcements]}
            while len(game.said) <= state.hand_index:
                game.said.append([])
                game.shown.append({})
            self._save(game)

    def _said(self, state: TrucoState, seat: int, name: str) -> dict | None:
        """How the person sees ``seat``'s action ``name`` about to be played: its public name (a face-down card of
        a seat whose cards the person does not see is ``cover``; a blind card ``play_slot:<i>=<card>``) and its
        text: a card as its text, a call as said in the family's language; None for a signal the person did not
        see (señas: an opponent's signal the person did not catch)."""
        kind, _, arg = name.partition(":")
        if kind == "sena" and public_action_name(state, seat, name, self.seat) is None:
            return None
        public, text = name, arg
        if kind == "cover" and seat != self.seat and not self._sees(state, seat):
            public, text = "cover", ""
        elif kind == "play_slot":
            text = card_text(state.dealt_cards(seat)[int(arg)], state.family)
            public = f"{name}={text}"
        elif kind != "play" and kind != "cover":
            text = action_words(name, state)
        return {"seat": seat, "name": public, "text": text, "card": kind in ("play", "cover", "play_slot")}

    def _sees(self, state: TrucoState, seat: int) -> bool:
        return seat % 2 == self.seat % 2 and partner_cards_visible(state, self.seat)

    def _save(self, game: Game) -> None:
        """Write the match record (every hand so far, the one just dealt too). A failed write is logged, the view's
        ``record`` is null until a write succeeds, and the match goes on."""
        try:
            self.records.mkdir(parents=True, exist_ok=True)
            atomic_write_json(str(game.record), game.state.match_record(), indent=1)
            game.saved = True
        except OSError as err:
            log.warning("truco serve: could not write %s: %s", game.record, err)
            game.saved = False

    # ------------------------------------------------------------ what the page sees

    def view(self, game: Game) -> dict:
        """The person's view of ``game`` (only what their seat may know), plus, when a bot is to act, that bot
        seat's view for the encoder in the page."""
        with self.lock:
            state, me, cfg = game.state, self.seat, self.config
            family = state.family
            records = state.hand_records
            current = records[-1]
            index = len(records) - 1
            vira = current["deal"]["vira"]
            # the turned card's consequence: Paulista's manilha rank, or the five piezas of the Uruguayan muestra
            manilha = manilha_of(state) if family == PAULISTA else None
            pieza_cards = ([card_text(c, family) for c in piezas(state.vira)]
                           if family == URUGUAYAN and state.vira is not None else None)
            blind = state.special_hand == MAO_DE_FERRO and cfg.mao_de_ferro_blind
            remaining = state.remaining_cards(me)
            cards = [{"slot": i, "card": None if blind else card_text(c, family)}
                     for i, c in enumerate(state.dealt_cards(me)) if c in remaining]
            partners = [{"seat": s, "cards": [card_text(c, family) for c in state.remaining_cards(s)]}
                        for s in state.participants if s != me and self._sees(state, s)]
            actor = None if state.is_over else state.actor
            out = {
                "game": game.id, "position": game.position, "preset": self.preset, "family": family,
                "players": state.num_players, "seat": me, "team": me % 2, "score": list(state.score),
                "target": cfg.target_score, "hand": index + 1, "dealer": current["dealer"], "mano": state.mano,
                "vira": vira, "manilha": manilha, "piezas": pieza_cards, "special": state.special_hand, "worth": state.hand_value,
                "cards": cards, "partners": partners,
                "tricks": self._tricks(state, current, index),
                "said": game.said[index],
                "shown": {"envido": [list(a) for a in state.envido_announcements],
                          "flor": [list(a) for a in state.flor_announcements]},
                "to_act": actor, "phase": state.phase,
                "legal": [], "bot": None,
                "previous": None,
                "over": state.is_over, "winner": state.winner,
                "record": str(game.record) if game.saved else None,
            }
            if actor == me:
                out["legal"] = [{"id": actions.action_id(name, family), "name": name,
                                 "label": action_words(name, state)} for name in state.legal_actions()]
            elif actor is not None:
                out["bot"] = {"seat": actor, "view": {"rules": cfg.to_dict(), **seat_view(state, actor, True)}}
            if index > 0:
                before = records[index - 1]
                out["previous"] = {"hand": index, "tricks": self._tricks(state, before, index - 1),
                                   "said": game.said[index - 1], "shown": game.shown[index - 1],
                                   "points": before["points"], "score_after": before["score_after"],
                                   "sources": {k: list(v) for k, v in state.hand_point_sources(index - 1).items()}}
            return out

    def _tricks(self, state: TrucoState, record: dict, index: int) -> list[dict]:
        """The hand's tricks as the person saw them: ``{"plays": [{"seat", "card"}], "winner"}``, where a card
        nobody showed is null and the winner is a team, "tie", or null while the trick is open."""
        tricks = []
        for trick, won in record_tricks(self.config, record):
            shown = [{"seat": s, "card": None if covered and s != self.seat and not self._sees_then(state, index, s)
                      else card, "covered": covered} for s, card, covered in trick]
            winner = "tie" if won == TIE else won
            tricks.append({"plays": shown, "winner": winner})
        return tricks

    def _sees_then(self, state: TrucoState, index: int, seat: int) -> bool:
        """Whether the person saw ``seat``'s cards in hand ``index`` (a partner in a shown mão de onze)."""
        return index == state.hand_index and self._sees(state, seat)


# ---------------------------------------------------------------- HTTP


class _Request(Request):
    max_content_length = MAX_BODY


class App:
    """The WSGI application: the page's files, the policy files, and the JSON API.

    ``GET /api/table`` the preset and the policy; ``POST /api/games`` a new match; ``GET /api/games/<id>`` the
    person's view; ``POST /api/games/<id>/actions`` one action. Errors are ``{"error": message}`` with 400 (a
    malformed request), 404 (no such game or path), 405 (wrong method), 409 (an action that does not fit the
    match now: not that seat's turn, a stale position, an illegal action, a finished match) or 413 (too large)."""

    def __init__(self, table: Table, frontends: str | Path = FRONTENDS):
        self.table = table
        self.files = {**page_files(frontends), "/policy/model.onnx": table.policy.model}
        self.routes = Map([
            Rule("/api/table", endpoint="table", methods=["GET"]),
            Rule("/api/games", endpoint="new_game", methods=["POST"]),
            Rule("/api/games/<game_id>", endpoint="get_game", methods=["GET"]),
            Rule("/api/games/<game_id>/actions", endpoint="act", methods=["POST"]),
        ])

    def __call__(self, environ: dict, start_response: Any) -> Any:
        request = _Request(environ)
        try:
            response = self.dispatch(request)
        except ApiError as err:
            response = _json({"error": err.message}, err.status)
        except HTTPException as err:  # no such path, wrong method, body too large
            response = _json({"error": f"{err.name}: {request.method} {request.path[:80]}"}, err.code or 400)
        response.headers.update(HEADERS)
        return response(environ, start_response)

    def dispatch(self, request: Request) -> Response:
        path = self.files.get(request.path)
        if path is not None and request.method in ("GET", "HEAD"):
            if not path.is_file():
                raise ApiError(404, f"{request.path} is missing on the server ({path.name})")
            return send_file(path, request.environ, mimetype=CONTENT_TYPES.get(path.suffix),
                             max_age=0, conditional=True)
        endpoint, args = self.routes.bind_to_environ(request.environ).match()
        table = self.table
        if endpoint == "table":
            return _json(table.info())
        if endpoint == "new_game":
            return _json(table.view(table.new_game()), 201)
        game = table.game(args["game_id"])
        if endpoint == "act":
            data = request.get_data(cache=False)
            try:  # bounded: too deep a nesting is refused before the parser recurses
                body = loads_json(data, max_bytes=MAX_BODY)
            except ValueError as err:
                raise ApiError(400, f"the body is not JSON ({clip(err, 100)})") from None
            table.act(game, body)
        return _json(table.view(game))


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data, ensure_ascii=False), status=status, mimetype="application/json",
                    headers={"Cache-Control": "no-store"})


class _Deadline(io.RawIOBase):
    """The bytes a client sends, each read waiting at most until ``deadline`` (a ``time.monotonic()``): past it a
    read raises TimeoutError, which ends the connection. A socket timeout alone bounds each read, not the request,
    which a client sending a byte now and then would stretch forever."""

    def __init__(self, sock: socket.socket, deadline: float, timeout: float):
        super().__init__()
        self.sock, self.deadline, self.timeout = sock, deadline, timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took too long to arrive")
        self.sock.settimeout(left)
        try:
            return self.sock.recv_into(buffer)
        finally:
            self.sock.settimeout(self.timeout)  # the answer's writes


class _QuietHandler(WSGIRequestHandler):
    """No line per request on the terminal (errors are still logged); the request must arrive within
    ``REQUEST_TIMEOUT`` of connecting; a malformed one is answered with a status line (400) and a short page."""

    # a request line that cannot be parsed has no version: answer it as HTTP/1.0, with a status line (the default,
    # HTTP/0.9, answers with the page alone)
    default_request_version = "HTTP/1.0"

    def setup(self) -> None:
        self.timeout = REQUEST_TIMEOUT  # read at each connection (tests shorten it)
        super().setup()
        self.rfile.close()  # the socket's own reader: reads go through the deadline instead
        self.rfile = io.BufferedReader(_Deadline(self.connection, time.monotonic() + REQUEST_TIMEOUT,
                                                 REQUEST_TIMEOUT))

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard reason on the status line (what the client sent can be anything: it must not reach the
        status line, which is Latin-1), and a clipped echo of the problem in the page."""
        super().send_error(code, None, clip(message, MAX_ERROR_ECHO) if message else explain)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


def make_web_server(app: App, host: str, port: int) -> Any:
    """The threaded HTTP server of ``app`` on ``host:port`` (0: a free port), not yet serving; OSError or
    SystemExit when it cannot listen there."""
    return make_server(host, port, app, threaded=True, request_handler=_QuietHandler)


def _check_port(host: str, port: int) -> None:
    """ValueError (one line) when ``host:port`` cannot be listened on: before the server library tries, since it
    prints its own two lines and exits on a port in use."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as err:
        raise ValueError(f"cannot listen on {host}:{port} ({err.strerror or err})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will
        try:
            probe.bind(address)
        except OSError as err:
            raise ValueError(f"cannot listen on {host}:{port} ({err.strerror or err})") from None


def page_files(frontends: str | Path = FRONTENDS) -> dict[str, Path]:
    """The page's static files under the folder ``frontends`` (made absolute now: a later change of directory
    does not move them), by the URL path they are served at."""
    folder = Path(frontends).resolve()
    web, encoder = folder / "web", folder / "js"
    ort = web / "node_modules" / "onnxruntime-web" / "dist"
    return {"/": web / "index.html", "/table.mjs": web / "table.mjs", "/table.css": web / "table.css",
            "/favicon.svg": web / "favicon.svg", "/js/truco_encoder.mjs": encoder / "truco_encoder.mjs",
            "/js/truco_tables.json": encoder / "truco_tables.json",
            **{f"/ort/{name}": ort / name for name in ORT_FILES}}


def missing_assets(frontends: str | Path = FRONTENDS) -> list[str]:
    """The files under ``frontends`` the page needs that are not there (onnxruntime-web before ``npm ci``; all of
    them where there is no clone of the repository), as paths from ``frontends``' parent."""
    folder = Path(frontends).resolve()
    return [str(Path(frontends, f.relative_to(folder))) for url, f in page_files(frontends).items()
            if url != "/favicon.svg" and not f.is_file()]


def serve(preset: str, opponent: str | None, port: int, host: str = "127.0.0.1", records: str = "runs/web",
          cache: str | None = None, seed: int | None = None, allow_other_preset: bool = False,
          frontends: str = FRONTENDS) -> int:
    """Run the web table until Ctrl-C; ValueError (one line) for bad options or a missing install."""
    if preset not in PRESETS:
        raise unknown_preset(preset)
    opponent, note = browser_opponent(opponent, preset)
    if note:
        print(f"truco serve: {note}", flush=True)
    if not 0 <= port < 65536:
        raise ValueError(f"--port must be 0..65535 (0: any free port), got {port}")
    _check_port(host, port)
    missing = missing_assets(frontends)
    if missing:
        if not page_files(frontends)["/"].is_file():
            raise ValueError(f"the page's files ({Path(frontends, 'web')}) are not here: truco serve runs from the "
                             "root of a clone of the repository (or name its frontends/ folder with --frontends)")
        raise ValueError(f"{missing[0]} is missing: install onnxruntime-web once with "
                         "'npm ci --prefix frontends/web' (needs Node.js and npm)")
    policy = resolve_policy(opponent, preset, Path(cache) if cache else default_cache(),
                            allow_other_preset)
    table = Table(preset, policy, Path(records), seed=seed)
    try:
        server = make_web_server(App(table, frontends), host, port)
    except (OSError, SystemExit) as err:  # werkzeug exits on a port in use
        raise ValueError(f"cannot listen on {host}:{port} ({getattr(err, 'strerror', None) or 'in use'})") from None
    shown_host = f"[{host}]" if ":" in host else host
    print(f"truco serve: {preset} against {policy.spec} ({policy.mode}) on "
          f"http://{shown_host}:{server.server_port}/", flush=True)
    print(f"truco serve: match records go to {records}/; Ctrl-C stops the server", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\ntruco serve: stopped", flush=True)
    finally:
        server.server_close()
    return 0
