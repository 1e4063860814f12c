"""A Ray cluster of two nodes on this machine: ``truco eval --backend ray`` and PPO collection spread over both nodes
and give exactly the local results, and a node lost mid-tournament loses nothing.

Each test starts its own cluster (``ray start --head`` and ``ray start --address``, one CPU and a resource of its
own per node) with its own temporary folder, ports and authentication token (Ray 2.60 turns token authentication
on: every node and driver is handed the head's token through ``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN``, set for
the subprocesses only). Each ``ray start`` runs in a session of its own, so the processes of a node (its raylet,
agents and workers) are the processes of that session: the teardown stops them, and only them, even when a test
fails (``ray stop`` would stop every Ray process of the machine), and checks that none is left.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from agents.network import load_policy
from training.learn.ppo import PPOArgs, train_ppo
from training.measure.evaluate import run_tournament

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ["heuristic", "random"]
PRESETS = ["argentine", "paulista-2v2"]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports: the sockets stay open until all are chosen (ports taken one at a time can
    repeat: a run once gave Ray's client server and its metrics exporter the same one)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _session_and_state(pid: str) -> tuple[int, str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command's name: state, ppid, pgrp, session, ...
    return int(fields[3]), fields[0]


class Cluster:
    """Ray nodes started here, each by a ``ray start`` in a session of its own; :meth:`stop` ends them all."""

    def __init__(self) -> None:
        # short: Ray's Unix sockets live under it, and a socket's path may not exceed 107 characters
        self.root = tempfile.mkdtemp(prefix="truco-ray-")
        self.token = secrets.token_hex(32)
        # for the subprocesses only: none of the caller's Ray settings, this cluster's token, this checkout's code
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        self.env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=self.token,
                        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        self.address = f"127.0.0.1:{free_ports(1)[0]}"
        self.sessions: dict[str, int] = {}  # node name -> the session of its processes

    def start_node(self, name: str) -> None:
        """A node with one CPU and a resource ``name``; the first one started is the head."""
        head_port = int(self.address.rsplit(":", 1)[1])
        agent, metrics, dashboard, client = next(p for p in iter(lambda: free_ports(4), None) if head_port not in p)
        command = [sys.executable, "-m", "ray.scripts.scripts", "start", "--num-cpus", "1",
                   "--resources", json.dumps({name: 1}), "--temp-dir", self.root,
                   "--object-store-memory", str(100 * 2**20), "--disable-usage-stats", "--include-log-monitor", "false",
                   "--dashboard-agent-listen-port", str(agent), "--metrics-export-port", str(metrics)]
        if self.sessions:
            command += ["--address", self.address]
        else:
            command += ["--head", "--port", self.address.rsplit(":", 1)[1], "--include-dashboard", "false",
                        "--dashboard-port", str(dashboard), "--ray-client-server-port", str(client)]
        start = subprocess.Popen(command, env=self.env, cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        self.sessions[name] = start.pid  # before it has started anything: a failed start is stopped too
        out, _ = start.communicate(timeout=180)
        if start.returncode:
            raise RuntimeError(f"ray start of node {name} failed:\n{out[-4000:]}")

    def processes(self, *names: str) -> list[int]:
        """The live processes of the named nodes (default: all), zombies left out. (Linux does not give a
        session's id to another process while one of the session's processes lives.)"""
        sessions = {self.sessions[name] for name in names or self.sessions}
        found = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                seen = _session_and_state(pid)
                if seen is not None and seen[0] in sessions and seen[1] != "Z":
                    found.append(int(pid))
        return found

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        for pid in self.processes(name):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def _wait(self, seconds: float) -> list[int]:
        deadline = time.monotonic() + seconds
        while (left := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.2)
        return left

    def stop(self) -> list[str]:
        """Stop every node (workers before the head) and SIGKILL what is left after 2 s (the GCS server outlives a
        SIGTERM by more than 10 s); the command lines of any process still alive after that."""
        for name in reversed(list(self.sessions)):
            self.kill(name, signal.SIGTERM)
        if self._wait(2):
            for name in self.sessions:
                self.kill(name, signal.SIGKILL)
        left = [_command(pid) for pid in self._wait(10)]
        shutil.rmtree(self.root, ignore_errors=True)
        return left

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        """``python ARGS`` as a driver of this cluster (``RAY_ADDRESS``, the token)."""
        return subprocess.run([sys.executable, *args], check=False, env=self.driver_env(), cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)

    def driver_env(self) -> dict[str, str]:
        return dict(self.env, RAY_ADDRESS=self.address)

    def ask(self, program: str) -> Any:
        """What ``program`` prints last, as JSON, run as a driver of this cluster."""
        found = self.run("-c", program)
        assert found.returncode == 0, found.stderr[-3000:]
        return json.loads(found.stdout.strip().splitlines()[-1])


def _command(pid: int) -> str:
    try:
        return f"{pid}: " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return f"{pid}: (gone)"


# the id of each node (by its resource) and where the PPO trainer's collectors ran: the cluster's table of actors,
# the dead ones included, gives the node of each (the state API, `ray list actors`, needs the dashboard's
# packages, which the `ray` extra does not install)
NODES_AND_COLLECTORS = """
import json, ray
ray.init(log_to_driver=False)
nodes = {name: node["NodeID"] for node in ray.nodes() if node["Alive"]
         for name in node["Resources"] if name.startswith("node_")}
collectors = sorted(actor["Address"]["NodeID"] for actor in ray._private.state.actors().values()
                    if actor["ActorClassName"] == "Collector")
print(json.dumps({"nodes": nodes, "collectors": collectors}))
"""


@pytest.fixture
def cluster():
    if not sys.platform.startswith("linux"):
        pytest.skip("the cluster's processes are found by their session in /proc (Linux)")
    nodes = Cluster()
    try:
        nodes.start_node("node_a")
        nodes.start_node("node_b")
        yield nodes
    finally:
        left = nodes.stop()
    assert not left, "Ray processes left behind:\n" + "\n".join(left)


def tournament_command(out: Path, matches: int, workers: int, progress: bool = False) -> list[str]:
    return ["-m", "training.cli", "eval", "--agents", *AGENTS, *(a for p in PRESETS for a in ("--preset", p)),
            "--matches", str(matches), "--seed", "3", "--backend", "ray", "--workers", str(workers),
            "--out", str(out), "--no-plots", *(() if progress else ("--no-progress",))]


def same_as_local(out: Path, matches: int) -> dict:
    """The tournament's ``results.json``, checked against the same tournament played here."""
    local, _ = run_tournament(AGENTS, PRESETS, matches, seed=3, workers=1)
    written = json.loads((out / "results.json").read_text())
    assert len(written["matches"]) == len(local["matches"]) == matches * len(PRESETS)
    assert written["matches"] == json.loads(json.dumps(local["matches"]))
    assert written["pairings"] == json.loads(json.dumps(local["pairings"]))
    return written


PPO_OPTIONS = {"total_decisions": 3000, "tables": 16, "batch_decisions": 1500, "hidden": (32,), "eval_every": 0,
               "eval_opponents": (), "snapshot_every": 1, "scripted": {"random": 0.3}}


def test_eval_and_ppo_on_two_nodes_equal_local(cluster, tmp_path):
    # a tournament through the command line: 16 matches in 16 tasks of one match, one CPU per node
    done = cluster.run(*tournament_command(tmp_path / "eval", matches=8, workers=2))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "on 2 Ray node(s)" in done.stdout
    written = same_as_local(tmp_path / "eval", matches=8)

    # PPO through the command line: two collection partitions, two actors of one CPU each, placed by the cluster
    sets = [f"{key}={json.dumps(list(value) if isinstance(value, tuple) else value)}"
            for key, value in PPO_OPTIONS.items()]
    trained = cluster.run("-m", "training.cli", "train", "ppo", "--backend", "ray", "--run-dir", str(tmp_path / "ray"),
                          "--quiet", "--set", "preset=paulista", *(a for s in sets for a in ("--set", s)))
    assert trained.returncode == 0, trained.stderr[-3000:]
    local = train_ppo(PPOArgs(preset="paulista", run_dir=str(tmp_path / "local"), **PPO_OPTIONS), progress_bar=False)
    net_a, _ = load_policy(local)
    net_b, _ = load_policy(str(tmp_path / "ray" / "policy.safetensors"))
    for key, value in net_a.state_dict().items():
        assert (value == net_b.state_dict()[key]).all(), key

    seen = cluster.ask(NODES_AND_COLLECTORS)
    assert sorted(seen["nodes"]) == ["node_a", "node_b"]
    assert written["meta"]["ray_nodes"] == sorted(seen["nodes"].values())  # the tournament's tasks ran on both
    assert seen["collectors"] == sorted(seen["nodes"].values())  # one collector on each node


def test_node_lost_mid_tournament_loses_nothing(cluster, tmp_path):
    """Node B is killed (every process of it, as a machine that goes away) while it plays a chunk of matches,
    once 30% of the results are in: Ray plays the lost chunk again on node A, and the tournament ends with exactly
    the local results, node B's earlier chunks among them."""
    out = tmp_path / "eval"
    # 600 matches in 34 tasks of 18 (--workers sets the chunk): after each worker's first chunk (a second or two of
    # imports and compilation) the rest is a few seconds of play, so node B still has work when it goes
    run = subprocess.Popen([sys.executable, *tournament_command(out, matches=300, workers=4, progress=True)],
                           env=cluster.driver_env(), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        err = []
        for line in run.stderr:  # a progress line per tenth of the matches, gathered in task order
            err.append(line)
            share = re.match(r"truco eval \(ray\): .* \((\d+)%\)", line)
            if share and int(share.group(1)) >= 30:
                break
        else:
            pytest.fail("the tournament ended before 30% of its results:\n" + "".join(err)[-3000:])
        deadline = time.monotonic() + 30
        while not [pid for pid in cluster.processes("node_b")
                   if _command(pid).split(": ", 1)[1].startswith("ray::_run_chunk_on_node")]:
            assert time.monotonic() < deadline and run.poll() is None, "node B played no chunk after 30% of the results"
            time.sleep(0.01)
        while cluster.processes("node_b"):  # a worker the raylet was starting is killed too
            cluster.kill("node_b")
            assert time.monotonic() < deadline, "node B's processes outlived SIGKILL"
            time.sleep(0.05)
        stdout, rest = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, "".join(err) + rest
    assert "Traceback" not in rest, rest
    assert "600 matches" in stdout
    written = same_as_local(out, matches=300)
    assert len(written["meta"]["ray_nodes"]) == 2  # node B's chunks played before it went are kept
