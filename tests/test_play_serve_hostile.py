"""Hostile inputs to ``truco play`` and ``truco serve`` (issue 72): a ``--save`` path that is an existing file, a
fifo or a link; a 5 MB number at the prompt; a client that sends its request a byte at a time (slowloris); a
request line that is not HTTP."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from training.cli import main
from training.people import play
from truco_env.records import replay_record


def _never(prompt: str) -> str:
    raise AssertionError("the match started")


def _one_error_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("truco play: error: --save"), lines
    return lines[0]


# ---------------------------------------------------------------- truco play --save


def test_save_refuses_an_existing_file_unless_overwrite(tmp_path: Path, capsys):
    """``--save`` replaced an existing file without a word."""
    save = tmp_path / "mine.json"
    save.write_text("not a record: keep me")
    with pytest.raises(ValueError) as err:
        play.play_match("argentine", "random", "random", 0, 1, str(save), read=_never)
    assert "already exists" in str(err.value) and "--overwrite" in str(err.value) and "\n" not in str(err.value)
    assert main(["play", "--seed", "1", "--opponent", "random", "--save", str(save)]) == 2
    assert "already exists" in _one_error_line(capsys)
    assert save.read_text() == "not a record: keep me"

    out = io.StringIO()
    assert play.play_match("argentine", "random", "random", 0, 1, str(save), read=lambda prompt: "q", out=out,
                           overwrite=True) == 0
    assert "Match record saved to" in out.getvalue()
    replay_record(json.loads(save.read_text()))


@pytest.mark.parametrize("kind", ["fifo", "link to a file", "dangling link", "folder"])
@pytest.mark.parametrize("overwrite", [False, True])
def test_save_refuses_what_is_not_a_regular_file_even_with_overwrite(kind, overwrite, tmp_path: Path, capsys):
    """As root, ``--save /dev/full`` turned the device into a JSON file; a fifo or a link was replaced the same
    way. (A fifo stands in for the device: tests never write to /dev.)"""
    save = tmp_path / "target"
    (tmp_path / "afile").write_text("keep me")
    if kind == "fifo":
        os.mkfifo(save)
    elif kind == "link to a file":
        save.symlink_to(tmp_path / "afile")
    elif kind == "dangling link":
        save.symlink_to(tmp_path / "nothing-here")
    else:
        save.mkdir()
    before = os.lstat(save)
    with pytest.raises(ValueError) as err:
        play.play_match("argentine", "random", "random", 0, 1, str(save), read=_never, overwrite=overwrite)
    message = str(err.value)
    assert message.startswith("--save") and "\n" not in message, message
    assert ("folder" if kind == "folder" else "never replaces") in message, message
    flags = ["--overwrite"] if overwrite else []
    assert main(["play", "--seed", "1", "--opponent", "random", "--save", str(save), *flags]) == 2
    _one_error_line(capsys)
    after = os.lstat(save)
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    assert (tmp_path / "afile").read_text() == "keep me"


def test_a_save_that_fails_at_the_end_keeps_the_record_elsewhere(tmp_path: Path, monkeypatch):
    """A path that was fine at the start of the match but is a fifo at its end: the fifo stays, the record goes to
    the temporary folder, said in one line, exit code 1."""
    kept_in = tmp_path / "tmp"
    kept_in.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(kept_in))
    save = tmp_path / "m.json"

    def leave_after_a_fifo_appears(prompt: str) -> str:
        os.mkfifo(save)
        return "q"

    out = io.StringIO()
    assert play.play_match("argentine", "random", "random", 0, 1, str(save), read=leave_after_a_fifo_appears,
                           out=out) == 1
    assert stat.S_ISFIFO(os.lstat(save).st_mode)
    lines = [line for line in out.getvalue().splitlines() if "not saved" in line]
    assert len(lines) == 1 and "fifo" in lines[0] and "kept in" in lines[0], out.getvalue()[-600:]
    (kept,) = kept_in.glob("truco-play-*.json")
    assert str(kept) in lines[0]
    replay_record(json.loads(kept.read_text()))

    # the disk is full and the temporary folder refuses too: the record is printed, one line of JSON
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(play, "atomic_write_json", full)
    monkeypatch.setattr("tempfile.mkstemp", full)
    out = io.StringIO()
    other = tmp_path / "other.json"
    assert play.play_match("argentine", "random", "random", 0, 1, str(other), read=lambda prompt: "q",
                           out=out) == 1
    text = out.getvalue().splitlines()
    said = [i for i, line in enumerate(text) if "not saved" in line]
    assert len(said) == 1 and "No space left on device" in text[said[0]], text[-3:]
    replay_record(json.loads(text[said[0] + 1]))
    assert not other.exists()


# ---------------------------------------------------------------- truco play's prompt


def test_hostile_answers_at_the_prompt_are_refused_and_the_match_goes_on(tmp_path: Path):
    """A line of 5,000,000 digits printed Python's "Exceeds the limit (4300 digits)" and ended the match; '²' (a
    digit int() refuses) did the same, and '[/x]' (rich markup) crashed the echo of a wrong answer."""

    def undecodable(prompt: str) -> str:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    answers = iter([lambda: "9" * 5_000_000, lambda: "²", lambda: "[/x]", lambda: "[bold]x",
                    lambda: undecodable(""), lambda: "\x1b[2J\udcff", lambda: "q"])
    asked = []

    def read(prompt: str) -> str:
        asked.append(prompt)
        return next(answers)()

    out = io.StringIO()
    save = tmp_path / "m.json"
    assert play.play_match("argentine", "random", "random", 0, 1, str(save), read=read, out=out) == 0
    text = out.getvalue()
    assert len(asked) == 7 and "Exceeds" not in text and "Leaving the table" in text
    refusals = [line for line in text.splitlines() if "type a number from 1 to" in line]
    assert len(refusals) == 6, refusals
    assert "5,000,000 characters long" in refusals[0]
    assert "'²' is not a choice" in refusals[1] and "'[/x]' is not a choice" in refusals[2]
    assert "'[bold]x' is not a choice" in refusals[3] and "not text" in refusals[4]
    assert "\x1b" not in text and "\\x1b[2J\\udcff" in refusals[5]
    assert all(len(line) < 200 for line in refusals)
    replay_record(json.loads(save.read_text()))


# ---------------------------------------------------------------- truco play --partner


def test_a_partner_where_there_is_none_is_refused_and_partners_play_as_the_opponent(monkeypatch, capsys):
    """``--partner`` on a one-against-one preset did nothing, without a word; and its default, "as --opponent"
    by its help, was the preset's strongest agent whatever --opponent said (random opponents, a best: partner)."""
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    assert main(["play", "--preset", "uruguayan", "--opponent", "random", "--partner", "heuristic"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("truco play: error: --partner is for the team presets"), err
    assert main(["play", "--preset", "uruguayan-2v2", "--opponent", "random:seed=4", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "your partner: random:seed=4" in out and "opponent (seat 1): random:seed=4" in out, out[:400]


# ---------------------------------------------------------------- truco serve


@pytest.fixture
def server(tmp_path, monkeypatch):
    pytest.importorskip("werkzeug", reason="the web table needs werkzeug: pip install 'truco-rl[web]'")
    from training.people import serve
    from training.people.serve import App, Policy, Table

    monkeypatch.setattr(serve, "REQUEST_TIMEOUT", 1.0)
    table = Table("argentine", Policy("onnx:unused.onnx", tmp_path / "unused.onnx", {}), tmp_path / "records",
                  seed=5)
    httpd = serve.make_web_server(App(table), "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_port
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def _answer(sock: socket.socket, wait: float = 8.0) -> bytes:
    """Everything the server sends until it closes the connection (a reset counts as closing)."""
    sock.settimeout(wait)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        raise AssertionError(f"the server kept the connection open {wait} s (sent {data[:80]!r})") from None
    return data


def _request(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        return _answer(sock)


def test_a_slow_client_is_cut_at_the_request_timeout(server):
    """``truco serve`` kept 100 slow-header connections open for 30 s without cutting any."""
    started = time.monotonic()
    slow = [socket.create_connection(("127.0.0.1", server), timeout=5) for _ in range(20)]
    silent = socket.create_connection(("127.0.0.1", server), timeout=5)
    try:
        for sock in slow:
            sock.sendall(b"GET /api/table HTTP/1.1\r\n")
        cut: set[int] = set()
        for i in range(50):  # a header line each 0.1 s: each read is quick, the request never ends
            for n, sock in enumerate(slow):
                if n not in cut:
                    try:
                        sock.sendall(f"X-Slow-{i}: a\r\n".encode())
                    except OSError:
                        cut.add(n)
            if len(cut) == len(slow):
                break
            time.sleep(0.1)
        assert len(cut) == len(slow), (f"{len(slow) - len(cut)} of {len(slow)} slow clients still connected "
                                       f"after {time.monotonic() - started:.1f} s")
        for sock in slow:
            assert _answer(sock) == b""  # closed without an answer
        assert _answer(silent) == b""
        assert time.monotonic() - started < 8
    finally:
        for sock in [*slow, silent]:
            sock.close()
    # the server still answers, and a request that arrives in pieces within the timeout is served
    with socket.create_connection(("127.0.0.1", server), timeout=5) as sock:
        for piece in (b"GET /api/table HT", b"TP/1.1\r\nHost: x\r\n", b"\r\n"):
            sock.sendall(piece)
            time.sleep(0.05)
        reply = _answer(sock)
    assert reply.startswith(b"HTTP/1.1 200 "), reply[:200]
    assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["preset"] == "argentine"


@pytest.mark.parametrize("line", [b"\x00\x01garbage", b"a b c", b"GET / HTTQ/1.1", b"GET /\xff\xfe HTTP/9",
                                  b"x" * 60_000])
def test_a_garbage_request_line_gets_a_400_status_line(server, line):
    """It got an HTML page and no status line (an HTTP/0.9 answer)."""
    reply = _request(server, line + b"\r\n\r\n")
    assert re.match(rb"HTTP/1\.[01] 400 Bad Request\r\n", reply), reply[:200]
    head, _, body = reply.partition(b"\r\n\r\n")
    assert b"Connection: close" in head and len(body) < 1000, (head, len(body))
