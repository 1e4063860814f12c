"""The web table (``truco serve``, training/people/serve.py, frontends/web/).

Without a browser: the JSON API refuses bad input (an illegal or out-of-range action id, a malformed request, a game
that does not exist, a stale or out-of-turn request) with a clear one-line error and a status code, and the match
and its record stay as they were; a match played through the API shows the person only what their seat may know
and saves a record that replays after every action.

In a real browser (Debian's ``chromium`` and ``chromium-driver`` through selenium; skipped, saying what is missing,
where they are not installed): ``truco serve`` on a free port, a whole match played by clicks and keys, the page
offering exactly the engine's legal actions at every turn, every bot move equal to the Python ``OnnxAgent``'s
(greedy) on the same state, and the saved record replaying.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("werkzeug", reason="the web table needs werkzeug: pip install 'truco-rl[web]'")

from werkzeug.test import Client

from training.cli import main as cli_main
from training.people import serve
from training.people.serve import App, Policy, Table
from truco_env import cards
from truco_env.actions import NUM_ACTIONS, SENA_BASE, action_id, action_name
from truco_env.cards import card_text
from truco_env.config import TrucoConfig
from truco_env.engine import TIE, TrucoState
from truco_env.records import load_record, replay_record

ROOT = Path(__file__).resolve().parent.parent
CARD = re.compile(r"^(?:1[0-2]|[1-7])[eboc]$")  # a Spanish card's text


@pytest.fixture
def api(tmp_path):
    table = Table("argentine", Policy("onnx:unused.onnx", tmp_path / "unused.onnx", {}), tmp_path / "records",
                  seed=5)
    return table, Client(App(table))


def _new_game(client) -> dict:
    response = client.post("/api/games")
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def _post(client, game_id: str, body=None, raw: bytes | str | None = None):
    data = raw if raw is not None else json.dumps(body)
    return client.post(f"/api/games/{game_id}/actions", data=data, content_type="application/json")


def _act(client, view: dict, action: int, seat: int | None = None) -> dict:
    seat = view["to_act"] if seat is None else seat
    response = _post(client, view["game"], {"seat": seat, "action": action, "position": view["position"]})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_bad_requests_get_a_clear_error_and_change_nothing(api):
    table, client = api
    view = _new_game(client)
    game_id, seat = view["game"], view["to_act"]
    game = table.games[game_id]
    record = Path(view["record"])
    saved = record.read_bytes()
    state = game.state
    family = state.family
    held = set(state.hand_of(seat))
    not_held = next(c for c in ("1e", "1b", "7e", "7o", "3c", "4c") if c not in held)
    ok = {"seat": seat, "action": action_id(state.legal_actions()[0], family), "position": 0}
    cases = [
        # (what the request is, the body or raw bytes, status, a fragment of the message)
        ("an action that is not legal now", {**ok, "action": action_id("quiero", family)}, 409, "illegal action"),
        ("a card the seat does not hold", {**ok, "action": action_id(f"play:{not_held}", family)}, 409,
         "illegal action"),
        ("an action id past the last", {**ok, "action": NUM_ACTIONS}, 400, "out of range"),
        ("a negative action id", {**ok, "action": -1}, 400, "out of range"),
        ("an action id as a string", {**ok, "action": "5"}, 400, "'action' must be an integer"),
        ("an action id as a boolean", {**ok, "action": True}, 400, "'action' must be an integer"),
        ("an action id as a float", {**ok, "action": 1.0}, 400, "'action' must be an integer"),
        ("no position", {"seat": seat, "action": ok["action"]}, 400, "'position' must be an integer"),
        ("an unknown field", {**ok, "extra": 1}, 400, "unknown field"),
        ("the other seat", {**ok, "seat": 1 - seat}, 409, f"seat {seat} is to act"),
        ("a seat that does not exist", {**ok, "seat": 7}, 409, f"seat {seat} is to act"),
        ("a stale position", {**ok, "position": 3}, 409, "stale"),
        ("malformed JSON", b"{\"seat\": 0,", 400, "not JSON"),
        ("bytes that are not UTF-8", b"\xff\xfe", 400, "not JSON"),
        ("an empty body", b"", 400, "not JSON"),
        ("a JSON list", [seat, ok["action"], 0], 400, "must be a JSON object"),
        ("a JSON string", "play", 400, "must be a JSON object"),
        ("a body too large", b"{" + b" " * 10_000 + b"}", 413, "Too Large"),
        ("a list nested 2,000 deep", b"[" * 2000 + b"]" * 2000, 400, "nested too deeply"),
        ("a seat nested 1,000 deep", b'{"seat": ' + b"[" * 1000 + b"]" * 1000 + b"}", 400, "nested too deeply"),
        ("an action id of 4,000 digits", f'{{"seat": {seat}, "action": {"9" * 4000}, "position": 0}}'.encode(),
         400, "out of range"),
    ]
    for what, body, status, fragment in cases:
        raw = body if isinstance(body, bytes) else None
        response = _post(client, game_id, body, raw)
        message = response.get_json()["error"]
        assert response.status_code == status, (what, response.status_code, message)
        assert response.mimetype == "application/json"
        assert fragment in message, (what, message)
        assert "\n" not in message and len(message) < 300, (what, message)
        assert client.get(f"/api/games/{game_id}").get_json() == view, f"{what} changed the match"
        assert record.read_bytes() == saved, f"{what} changed the record"
    assert game.position == 0 and state.hand_records[0]["actions"] == []

    for method, path, status, fragment in [
        ("post", "/api/games/no-such-game/actions", 404, "no game 'no-such-game'"),
        ("get", "/api/games/no-such-game", 404, "no game 'no-such-game'"),
        ("get", f"/api/games/{game_id}/actions", 405, "Method Not Allowed"),
        ("delete", f"/api/games/{game_id}", 405, "Method Not Allowed"),
        ("get", "/api/nothing", 404, "Not Found"),
        ("get", "/ort/../pyproject.toml", 404, "Not Found"),
        ("get", "/frontends/web/node_modules/onnxruntime-web/package.json", 404, "Not Found"),
    ]:
        response = getattr(client, method)(path, data=json.dumps(ok), content_type="application/json")
        assert response.status_code == status, (path, response.status_code)
        assert fragment in response.get_json()["error"], (path, response.get_json())
    assert client.get(f"/api/games/{game_id}").get_json() == view
    # a good request still plays after all that
    assert _act(client, view, ok["action"], seat)["position"] == 1


def test_the_page_files_are_served_with_their_types_and_security_headers(api):
    _, client = api
    for path, mimetype in [("/", "text/html"), ("/table.mjs", "text/javascript"), ("/table.css", "text/css"),
                           ("/js/truco_encoder.mjs", "text/javascript"), ("/js/truco_tables.json", "application/json")]:
        response = client.get(path)
        assert response.status_code == 200 and response.mimetype == mimetype, (path, response.content_type)
        assert response.content_type.count("charset") <= 1
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    response = client.get("/policy/model.onnx")  # the fixture's policy file does not exist
    assert response.status_code == 404 and "missing on the server" in response.get_json()["error"]


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _hidden_cards(record: dict, seat: int) -> set[str]:
    """Cards of the other seats that ``seat`` has not seen face up in the hand of ``record``."""
    shown = {name.split(":", 1)[1] for _, name in record["actions"] if name.startswith("play:")}
    return {c for other, cards in enumerate(record["deal"]["hands"]) if other != seat for c in cards} - shown


def _cards_named(view) -> set[str]:
    return {token for text in _strings(view) for token in re.split(r"[^0-9a-z]+", text) if CARD.match(token)}


def test_a_match_through_the_api_shows_only_the_seat_view_and_its_record_replays(api):
    table, client = api
    view = _new_game(client)
    game = table.games[view["game"]]
    state = game.state
    rng = random.Random(1)
    actions = 0
    while not view["over"]:
        assert view["position"] == actions
        bot = view.pop("bot")
        hands = state.hand_records
        previous = view.pop("previous")
        leaked = _cards_named(view) & _hidden_cards(hands[-1], 0)
        if previous is not None:
            leaked |= _cards_named(previous) & _hidden_cards(hands[-2], 0)
        assert not leaked, f"the person's view shows {leaked}, cards of another seat never shown face up"
        results = ["tie" if r == TIE else r for r in state.trick_results]
        assert [t["winner"] for t in view["tricks"] if t["winner"] is not None] == results
        if view["to_act"] == 0:
            assert bot is None
            offered = sorted(a["id"] for a in view["legal"])
            assert offered == sorted(action_id(n, state.family) for n in state.legal_actions())
            assert all(a["label"] for a in view["legal"])
            action = rng.choice(view["legal"])["id"]
        else:
            assert view["legal"] == [] and bot["seat"] == view["to_act"]
            assert bot["view"]["seat"] == bot["seat"] and bot["view"]["rules"] == state.config.to_dict()
            action = action_id(rng.choice(state.legal_actions()), state.family)
        view = _act(client, view, action)
        actions += 1
        replayed = replay_record(load_record(view["record"]))  # the record is saved after every action
        assert replayed.score == state.score
    assert state.is_over and view["winner"] == state.winner
    record = load_record(view["record"])
    assert replay_record(record).winner == state.winner
    assert sum(len(h["actions"]) for h in record["hands"]) == actions
    assert cli_main(["replay", view["record"]]) == 0
    assert _post(client, view["game"], {"seat": 0, "action": 0, "position": actions}).status_code == 409
    assert _new_game(client)["game"] != view["game"]


def test_labels_are_spanish_or_portuguese_as_in_truco_play(tmp_path):
    for preset, words in [("argentine", {"Jugar", "¡Truco!", "Me voy al mazo"}),
                          ("paulista", {"Jogar", "Truco!"}), ("uruguayan", {"Jugar", "¡Truco!", "Me voy al mazo"})]:
        table = Table(preset, Policy("onnx:unused.onnx", tmp_path / "unused.onnx", {}), tmp_path / preset, seed=2)
        client = Client(App(table))
        view = _new_game(client)
        while view["to_act"] != 0:  # let the other seat play until the person is to act
            state = table.games[view["game"]].state
            view = _act(client, view, action_id(state.legal_actions()[0], state.family))
        labels = " ".join(a["label"] for a in view["legal"])
        assert all(word in labels for word in words), (preset, labels)
        # cards by their names in the same language, never the engine's suit letters ("Jogar 4h")
        spanish = (" de espadas", " de bastos", " de oros", " de copas")
        suits = {"paulista": (" de espadas", " de paus", " de ouros", " de copas")}.get(preset, spanish)
        plays = [a["label"] for a in view["legal"] if a["name"].startswith("play:")]
        assert plays and all(label.endswith((*suits, ")")) for label in plays), plays
        # the turned card's consequence: Paulista's manilha rank, the Uruguayan muestra's five piezas, in order
        state = table.games[view["game"]].state
        piezas = [card_text(c, state.family) for c in cards.piezas(state.vira)] if preset == "uruguayan" else None
        assert (view["piezas"], view["manilha"] is None) == (piezas, preset != "paulista"), view


def test_the_opponent_must_be_an_exported_policy_for_the_preset(tmp_path):
    with pytest.raises(ValueError, match="must be an exported policy"):
        serve.parse_opponent("heuristic")
    with pytest.raises(ValueError, match="'greedy' or 'sample'"):
        serve.parse_opponent("ppo:argentine,fast")
    with pytest.raises(ValueError, match="no such model file"):
        serve.resolve_policy(f"onnx:{tmp_path / 'missing.onnx'}", "argentine", tmp_path)
    previous = ROOT / "agents" / "policies" / "previous"
    model = tmp_path / "paulista.onnx"
    shutil.copy(previous / "ppo_paulista.onnx", model)
    shutil.copy(previous / "ppo_paulista.json", tmp_path / "paulista.json")
    if importlib.util.find_spec("onnxruntime") is not None:
        with pytest.raises(ValueError, match=r"made for preset\(s\) \['paulista'\], not 'argentine'"):
            serve.resolve_policy(f"onnx:{model}", "argentine", tmp_path)
        policy = serve.resolve_policy(f"onnx:{model},sample", "paulista", tmp_path)
        assert (policy.model, policy.mode, policy.obs_size) == (model, "sample", 1086)
        broken = tmp_path / "broken.onnx"
        broken.write_bytes(b"not a model")
        with pytest.raises(ValueError, match="not a loadable ONNX model"):
            serve.resolve_policy(f"onnx:{broken}", "argentine", tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="onnxruntime not installed")
def test_a_uruguayan_network_plays_its_own_tables_only(tmp_path):
    """A Uruguayan network reads 1,136 values: the page plays it at a Uruguayan table (the server refused its
    layout as unknown), and refuses it where the game's observation is another layout, even when told to play a
    policy of other presets."""
    policy = serve.resolve_policy("ppo:uruguayan-2v2", "uruguayan-2v2", tmp_path)
    assert policy.obs_size == 1136
    for preset in ("argentine-2v2", "argentine-2v2-senas"):
        with pytest.raises(ValueError, match=f"reads observations of 1136 values and '{preset}' gives"):
            serve.resolve_policy("ppo:uruguayan-2v2", preset, tmp_path, allow_other_preset=True)
    assert serve.resolve_policy("ppo:argentine-2v2", "argentine-2v2-senas", tmp_path, True).obs_size == 1086


def test_a_server_run_starts_a_bounded_number_of_matches(api, monkeypatch):
    """Every match writes a record file: a run starts at most MAX_RECORDS of them, then refuses in one line."""
    table, client = api
    monkeypatch.setattr(serve, "MAX_RECORDS", 3)
    for _ in range(3):
        _new_game(client)
    response = client.post("/api/games")
    assert response.status_code == 503 and "restart truco serve" in response.get_json()["error"]
    assert len(list((table.records).iterdir())) == 3


def test_a_port_in_use_is_one_line(capsys):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert cli_main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("truco serve: error: cannot listen on 127.0.0.1:") and "\n" not in err, err


def test_truco_serve_refuses_bad_options_in_one_line(capsys):
    for argv, fragment in [(["--opponent", "heuristic"], "must be an exported policy"),
                           (["--preset", "nonesuch"], "unknown preset 'nonesuch'"),
                           (["--port", "70000"], "--port must be 0..65535")]:
        assert cli_main(["serve", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("truco serve: error: ") and fragment in err and "\n" not in err, err


def test_the_default_bot_is_best_preset_when_the_browser_can_run_it(monkeypatch):
    """best:<preset> names the report's choice; the page runs networks only, so a default that names the heuristic
    or a CFR table falls back to ppo:<preset> with a note, and an explicit one is refused in one line."""
    import agents.best

    monkeypatch.setattr(agents.best, "choices", lambda path=None: {"argentine": "ppo:argentine",
                                                                  "paulista": "cfr:paulista"})
    assert serve.browser_opponent(None, "argentine") == ("ppo:argentine", "best:argentine is ppo:argentine")
    assert serve.browser_opponent("best:argentine,sample", "paulista")[0] == "ppo:argentine,sample"
    spec, note = serve.browser_opponent(None, "paulista")
    assert spec == "ppo:paulista" and "cfr:paulista, which the browser cannot run" in note
    with pytest.raises(ValueError, match="that is cfr:paulista, which runs only in Python"):
        serve.browser_opponent("best:paulista", "paulista")
    assert serve.browser_opponent(None, "argentine-mini") == ("ppo:argentine-mini", None)  # no choice: as before


# ------------------------------------------------------------------ in a real browser

CHROMEDRIVER = shutil.which("chromedriver")
CHROMIUM = next((path for name in ("chromium", "chromium-browser", "google-chrome") if (path := shutil.which(name))),
                None)


def _browser_missing() -> str | None:
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install selenium; it is in the dev extra)"
    if CHROMIUM is None or CHROMEDRIVER is None:
        return ("no Chromium with its driver on PATH (Debian: apt-get install chromium chromium-driver); "
                "the browser test does not download one")
    missing = serve.missing_assets()
    if missing:
        return f"{missing[0]} is missing: run 'npm ci --prefix frontends/web' once"
    for module in ("torch", "onnx", "onnxruntime"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: the server exports ppo:argentine (pip install 'truco-rl[export]')"
    return None


BROWSER_MISSING = _browser_missing()


def _start_server(tmp_path: Path, preset: str, *extra: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "training.cli", "serve", "--preset", preset, "--port", "0", "--seed", "11",
         "--records", str(tmp_path / "records"), "--cache", str(tmp_path / "cache"), *extra],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    seen = []
    deadline = time.monotonic() + 240  # the first start exports the policy to ONNX
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            if proc.poll() is not None:
                break
            continue
        seen.append(line)
        match = re.search(r"on (http://\S+/)", line)
        if match:
            return proc, match.group(1)
    proc.kill()
    pytest.fail("truco serve did not start: " + "".join(seen)[-2000:])


#: What the test reads of the page in one round trip: its state, the choices it offers, the cards in the hand,
#: whether it fits the window's width, and the error it shows.
PAGE = """
const body = document.body;
return {state: body.dataset.state, position: body.dataset.position || "",
        offered: [...document.querySelectorAll("#actions button[data-action]")].map(b => Number(b.dataset.action)),
        hand: document.querySelectorAll("#hand .card").length,
        width: window.innerWidth, fits: document.documentElement.scrollWidth <= window.innerWidth,
        error: document.getElementById("error").textContent};
"""


def _page_ready(driver, position: str) -> dict | bool:
    """The page once it waits for the person (or the match is over, or it shows an error) at a new position."""
    page = driver.execute_script(PAGE)
    return page if page["state"] in ("human", "over", "error") and page["position"] != position else False


def _decisions(record: dict):
    """(state before the action, seat, action name) for each action of ``record``, replayed as truco replay does."""
    config = TrucoConfig.from_dict(record["rules"])
    hands = record["hands"]
    first = hands[0]
    state = TrucoState.new(config, seed=0, score=first["score_before"],
                           deal={"hands": first["deal"]["hands"], "vira": first["deal"]["vira"],
                                 "dealer": first["dealer"]})
    for i, hand in enumerate(hands):
        for j, (seat, name) in enumerate(hand["actions"]):
            yield state, seat, name
            if j == len(hand["actions"]) - 1 and i + 1 < len(hands) and state.next_hand_is_new_deal:
                state.force_next_deal({k: hands[i + 1]["deal"][k] for k in ("hands", "vira")})
            state.apply(name)


@pytest.mark.skipif(BROWSER_MISSING is not None, reason=f"no browser test: {BROWSER_MISSING}")
@pytest.mark.parametrize("preset", ["argentine", "uruguayan"])  # a Uruguayan network reads 1,136 values
def test_a_whole_match_in_chromium(tmp_path, preset):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from agents.onnx import OnnxAgent
    from truco_env.encoding import encode_action_mask, encode_observation

    proc, url = _start_server(tmp_path, preset)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    driver = None
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        # a phone's screen: 390 by 844 CSS pixels, as a mobile browser lays pages out
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        driver.get(url + "?botDelay=0")
        body = driver.find_element(By.TAG_NAME, "body")
        wait = WebDriverWait(driver, 60, poll_frequency=0.02)
        rng = random.Random(3)
        position, moves, by_key = "", 0, 0
        while True:
            page = wait.until(lambda d, at=position: _page_ready(d, at))
            assert page["state"] != "error", page["error"]
            records = list((tmp_path / "records").glob("*.json"))
            assert len(records) == 1
            record = load_record(str(records[0]))
            replayed = replay_record(record)  # the server saves the record after every action
            position = page["position"]
            assert int(position) == sum(len(h["actions"]) for h in record["hands"])
            if page["state"] == "over":
                break
            assert replayed.actor == 0, "the page offers a move while a bot is to act"
            legal = sorted(action_id(name, replayed.family) for name in replayed.legal_actions())
            assert sorted(page["offered"]) == legal, \
                f"at position {position} the page offers {sorted(page['offered'])}, the engine allows {legal}"
            assert page["hand"] == len(replayed.remaining_cards(0))
            assert page["width"] == 390 and page["fits"], "the page is wider than a phone's screen"
            if moves == 4:
                driver.save_screenshot(str(tmp_path / "web_table.png"))
            index = rng.randrange(len(page["offered"]))
            if moves % 3 == 2 and index < 9:  # every third move by keyboard: key N picks the N-th choice
                body.send_keys(str(index + 1))
                by_key += 1
            else:
                body.find_element(By.CSS_SELECTOR, f'#actions button[data-action="{page["offered"][index]}"]').click()
            moves += 1
        status = driver.find_element(By.ID, "status").text
        lang = driver.find_element(By.TAG_NAME, "html").get_attribute("lang")
        heading = driver.find_element(By.CSS_SELECTOR, "#hand-area h2").get_attribute("textContent")
        last_bot = json.loads(body.get_attribute("data-last-bot"))
    finally:
        if driver is not None:
            driver.quit()
        proc.terminate()
        proc.wait(timeout=30)

    assert (tmp_path / "web_table.png").stat().st_size > 10_000
    assert moves >= 5 and by_key >= 1
    assert "Terminó el partido" in status  # an Argentine or Uruguayan table speaks Spanish, cards and page alike
    assert lang == "es" and heading == "Tu mano"
    record_path = str(records[0])
    record = load_record(record_path)
    final = replay_record(record)
    assert final.is_over and final.winner in (0, 1)
    assert cli_main(["replay", record_path]) == 0
    # every bot move is what the Python OnnxAgent (greedy) chooses on the same state
    model = next((tmp_path / "cache").glob("*.onnx"))
    agent = OnnxAgent(str(model), greedy=True)
    checked = 0
    actions = []
    for state, seat, name in _decisions(record):
        actions.append((seat, name))
        if seat == 0:
            continue
        expected = agent.act({"observation": encode_observation(state, seat), "action_mask": encode_action_mask(state)})
        assert action_name(expected, state.family) == name, \
            f"action {len(actions) - 1}: the page's bot played {name}, OnnxAgent plays {action_name(expected, state.family)}"
        checked += 1
    assert checked >= 5
    assert actions[last_bot["position"]] == (last_bot["seat"], last_bot["name"])


@pytest.mark.skipif(BROWSER_MISSING is not None, reason=f"no browser test: {BROWSER_MISSING}")
@pytest.mark.parametrize("bots", ["made for senas", "made without"])
def test_a_hand_with_signals_in_chromium(tmp_path, bots):
    """argentine-2v2-senas in the browser: the page offers the signals, the person makes one, the page says it,
    and the bots play on: a small network made for señas, or the shipped argentine-2v2 policy (never signalling),
    both run by the page."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from training.learn.ppo import PPOArgs, train_ppo
    from training.options import build

    if bots == "made for senas":
        policy = train_ppo(build(PPOArgs, {"preset": "argentine-2v2-senas", "total_decisions": 3000,
                                       "batch_decisions": 1500, "tables": 16, "hidden": [32], "eval_every": 0,
                                       "eval_opponents": [], "run_dir": str(tmp_path / "run")}), progress_bar=False)
        extra = ["--opponent", f"ppo:{policy}"]
    else:
        extra = ["--opponent", "ppo:argentine-2v2", "--allow-other-preset"]
    proc, url = _start_server(tmp_path, "argentine-2v2-senas", *extra)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    driver = None
    signalled = None
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        driver.get(url + "?botDelay=0")
        wait = WebDriverWait(driver, 60, poll_frequency=0.02)
        position = ""
        said = ""
        for _ in range(30):
            page = wait.until(lambda d, at=position: _page_ready(d, at))
            assert page["state"] != "error", page["error"]
            position = page["position"]
            if signalled is not None:  # the page after the person's signal: it says it
                said = driver.find_element(By.ID, "said").text
                break
            if page["state"] == "over":
                break
            signals = [a for a in page["offered"] if a >= SENA_BASE]
            if signals:
                assert len(signals) == 8, page["offered"]
                signalled = choice = signals[1]  # a wink
            else:  # refuse what is offered (the match goes on), else the first card or call
                no = action_id("no_quiero", "argentine")
                choice = no if no in page["offered"] else next(a for a in page["offered"] if a < SENA_BASE)
            driver.find_element(By.CSS_SELECTOR, f'#actions button[data-action="{choice}"]').click()
    finally:
        if driver is not None:
            driver.quit()
        proc.terminate()
        proc.wait(timeout=30)
    assert signalled is not None, "the page never offered a signal"
    assert "Seña: guiñar un ojo" in said, said
    record = load_record(str(next((tmp_path / "records").glob("*.json"))))
    assert any([0, "sena:wink"] in hand["actions"] for hand in record["hands"])
    replay_record(record)
    if bots == "made without":
        assert not [a for h in record["hands"] for s, a in h["actions"] if s != 0 and a.startswith("sena:")]


def test_the_tables_tricks_follow_the_engine_when_a_seat_folds_alone():
    """With ``mazo_scope="player"`` a folder leaves the hand and the tricks after it hold fewer cards: the page's
    tricks, rebuilt from the hand's actions, are the engine's own at every step of random 2v2 matches (grouping
    every trick by the seat count put cards of two tricks in one)."""
    import random

    from truco_env import TrucoConfig, TrucoState
    from truco_env.views import group_tricks, visible_tricks

    config = TrucoConfig(family="uruguayan", num_players=4, mazo_scope="player")
    checked = 0
    for seed in range(60):
        rng, state = random.Random(seed), TrucoState.new(config, seed=seed)
        while not state.is_over:
            hand = len(state.hand_records)
            state.apply(rng.choice(state.legal_actions()))
            record = state.hand_records[-1]
            if len(state.hand_records) != hand or state.is_over:
                continue
            engine = [[seat for seat, _ in plays] for plays, _ in visible_tricks(state, 0, shown=set(range(4)))]
            page = [[seat for seat, _, _ in trick]
                    for trick, _ in group_tricks(record["actions"], record["deal"]["hands"], 4, True)]
            assert page == engine, record["actions"]
            checked += any(name == "mazo" for _, name in record["actions"])
    assert checked > 200  # steps after a seat folded alone
