"""Speed of the engine and the environments against peer libraries, in one process and one run.

    python -m benchmarks.speed            # or: truco bench   (peers: pip install -c constraints.txt -e ".[bench]")
    python -m benchmarks.speed --quick    # a smoke run, about ten times shorter

Each line plays a fixed, seeded amount of uniformly random legal play and divides by its wall time:

* raw engine, per preset: the readable reference engine (``TrucoState``, action names) and the fast engine
  (``FastState``, one Python call per decision; both pick with ``random.Random.choice`` over the legal list),
  hands/s and decisions/s; plus the fast engine's compiled playout loop (no Python per decision) for argentine;
* AEC: ``truco_env.env("argentine")`` and ``truco_env.env("uruguayan")`` through the standard PettingZoo loop
  (``agent_iter``, ``last()`` with observation and mask, ``step``), agent-steps/s; the same loop and the same action
  choice on PettingZoo's ``leduc_holdem_v4.env()``;
* vector env: ``VectorEnv("argentine", 4096)`` with observations and masks, random legal actions, in 1 process
  and with 2 worker processes, decisions/s; resident memory at N=4096;
* peers: ``pytruco`` (a pure-Python engine of Uruguayan Truco, the game of our ``uruguayan`` presets) random matches
  to 20 points with 2 and 4 players (its own random legal player, as its bench runs it), OpenSpiel ``leduc_poker``
  random playouts driven from Python (states/s, chance nodes included).

It prints a table with each ratio ours/peer and the targets of issue 4, then one JSON line with every figure.
A missing peer is reported as missing, not skipped silently.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import sys
import time
from typing import Any

import numpy as np

RAW_PRESETS = ("argentine", "argentine-flor", "argentine-2v2", "argentine-3v3", "paulista", "paulista-2v2",
               "paulista-clean", "uruguayan", "uruguayan-2v2", "uruguayan-3v3")
#: The pytruco figure each preset's line is set beside: the peer's own game (Uruguayan) with as many players, and
#: Argentine 1v1, the line the speed target of issue 4 was stated on.
PYTRUCO_PEER = {"argentine": "pytruco", "uruguayan": "pytruco", "uruguayan-2v2": "pytruco_2v2"}


def _rss_mib(pid: int | None = None) -> float:
    path = f"/proc/{pid or 'self'}/status"
    try:
        with open(path) as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def _timed(fn, *args):
    gc.collect()
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


# ------------------------------------------------------------------------------------------------ ours


def bench_reference(preset: str, matches: int) -> dict:
    from truco_env import TrucoState, make_config

    config = make_config(preset)
    rng = random.Random(0)

    def run():
        decisions = hands = 0
        for seed in range(matches):
            state = TrucoState.new(config, seed=seed)
            while not state.is_over:
                state.apply(rng.choice(state.legal_actions()))
                decisions += 1
            hands += state.hand_index + 1
        return decisions, hands

    (decisions, hands), seconds = _timed(run)
    return {"decisions_per_s": decisions / seconds, "hands_per_s": hands / seconds, "decisions": decisions}


def bench_fast(preset: str, matches: int) -> dict:
    from truco_env import make_config
    from truco_env.fast import FastState

    config = make_config(preset)
    warm = FastState.new(config, seed=0)  # load the compiled kernel outside the clock
    while not warm.is_over:
        warm.apply_id(warm._legal[0])
    rng = random.Random(0)

    def run():
        decisions = hands = 0
        for seed in range(matches):
            state = FastState.new(config, seed=seed)
            while not state.is_over:
                state.apply_id(rng.choice(state._legal))
                decisions += 1
            hands += state.hand_index + 1
        return decisions, hands

    (decisions, hands), seconds = _timed(run)
    return {"decisions_per_s": decisions / seconds, "hands_per_s": hands / seconds, "decisions": decisions}


def bench_playout(preset: str, matches: int) -> dict:
    from truco_env import _kernel, make_config
    from truco_env.fast import config_array

    cfg = config_array(make_config(preset))
    st = np.zeros(_kernel.STATE_SIZE, dtype=np.int32)
    rng = np.array([12345], dtype=np.uint64)
    mask = np.zeros(_kernel.NUM_ACTIONS, dtype=np.int8)
    ids = np.zeros(_kernel.NUM_ACTIONS, dtype=np.int32)
    _kernel.playout(st, cfg, rng, 1, mask, ids)
    (decisions, hands), seconds = _timed(_kernel.playout, st, cfg, rng, matches, mask, ids)
    return {"decisions_per_s": decisions / seconds, "hands_per_s": hands / seconds, "decisions": int(decisions)}


def _aec_loop(env: Any, episodes: int) -> int:
    rng = np.random.default_rng(0)
    steps = 0
    env.reset(seed=0)
    for episode in range(episodes):
        if episode:
            env.reset()
        for agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
            steps += 1
    return steps


def bench_aec(episodes: int, preset: str = "argentine") -> dict:
    import truco_env

    env = truco_env.env(preset)
    _aec_loop(env, 2)
    steps, seconds = _timed(_aec_loop, env, episodes)
    return {"agent_steps_per_s": steps / seconds, "agent_steps": steps}


def bench_vector(num_envs: int, workers: int, steps: int) -> dict:
    from truco_env.vector import VectorEnv

    rss_before = _rss_mib()
    venv = VectorEnv("argentine", num_envs=num_envs, num_workers=workers, seed=0)
    try:
        venv.reset()
        for _ in range(5):
            venv.step(venv.random_actions())

        def run():
            for _ in range(steps):
                venv.step(venv.random_actions())

        _, seconds = _timed(run)
        rss = _rss_mib()
        worker_rss = [_rss_mib(p.pid) for p in venv._procs]
    finally:
        venv.close()
    return {"decisions_per_s": num_envs * steps / seconds, "decisions": num_envs * steps, "num_envs": num_envs,
            "workers": workers, "rss_mib": rss, "rss_before_mib": rss_before, "worker_rss_mib": worker_rss}


def _isolated_rss(num_envs: int) -> float:
    """Resident memory of a fresh Python process that imports only the vector env and steps N matches."""
    import subprocess

    code = ("import numpy as np; from truco_env.vector import VectorEnv; from benchmarks.speed import _rss_mib\n"
            f"v = VectorEnv('argentine', num_envs={num_envs}, seed=0); v.reset()\n"
            "for _ in range(200): v.step(v.random_actions())\n"
            "print(_rss_mib())")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300,
                             check=True)
        return float(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError):
        return float("nan")


# ------------------------------------------------------------------------------------------------ peers


def bench_pytruco(matches: int, players: int = 2) -> dict:
    from pytruco.pdt.chi import random_action
    from pytruco.pdt.partida import Partida

    rounds = [0]
    original = Partida.nueva_ronda

    def counting(self, *args, **kwargs):
        rounds[0] += 1
        return original(self, *args, **kwargs)

    Partida.nueva_ronda = counting
    random.seed(0)

    def run():
        decisions = 0
        for _ in range(matches):
            match = Partida(20, ["Alice", "Ariana"][:players // 2], ["Bob", "Ben"][:players // 2], verbose=False)
            rounds[0] += 1  # the first hand is dealt by the constructor
            while not match.terminada():
                random_action(match, allow_mazo=False).hacer(match)
                decisions += 1
        return decisions

    try:
        decisions, seconds = _timed(run)
    finally:
        Partida.nueva_ronda = original
    return {"decisions_per_s": decisions / seconds, "hands_per_s": rounds[0] / seconds,
            "matches_per_s": matches / seconds, "decisions": decisions}


def bench_leduc_aec(episodes: int) -> dict:
    from pettingzoo.classic import leduc_holdem_v4

    env = leduc_holdem_v4.env()
    _aec_loop(env, 2)
    steps, seconds = _timed(_aec_loop, env, episodes)
    return {"agent_steps_per_s": steps / seconds, "agent_steps": steps}


def bench_openspiel(playouts: int) -> dict:
    import pyspiel

    game = pyspiel.load_game("leduc_poker")
    rng = random.Random(0)

    def run():
        states = 0
        for _ in range(playouts):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                else:
                    legal = state.legal_actions()
                    state.apply_action(legal[rng.randrange(len(legal))])
                states += 1
        return states

    states, seconds = _timed(run)
    return {"states_per_s": states / seconds, "states": states}


def _peer(name: str, fn, *args) -> dict:
    try:
        return fn(*args)
    except ImportError as err:
        return {"missing": f"{name} is not installed ({err}); pip install -e '.[bench]'"}


# ------------------------------------------------------------------------------------------------ report


def run(quick: bool = False, out=sys.stdout) -> dict:
    scale = 0.1 if quick else 1.0

    def n(x: int) -> int:
        return max(1, int(x * scale))

    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                           "platform": platform.platform(), "loadavg_start": os.getloadavg()},
                               "quick": quick}
    print("truco bench: measuring (about three minutes; --quick for a smoke run) ...", file=sys.stderr)
    raw = {}
    for preset in RAW_PRESETS:
        matches = n(3000) if preset.startswith("argentine") else n(2000)
        raw[preset] = {"reference": bench_reference(preset, matches), "fast": bench_fast(preset, matches)}
    raw["argentine"]["compiled_playout"] = bench_playout("argentine", n(200_000))
    results["raw"] = raw
    results["aec"] = bench_aec(n(5000))
    results["aec_uruguayan"] = bench_aec(n(5000), "uruguayan")
    results["vector"] = {"1": bench_vector(4096, 1, n(1000)), "2": bench_vector(4096, 2, n(1500))}
    results["peers"] = {
        "pytruco": _peer("pytruco", bench_pytruco, n(200)),
        "pytruco_2v2": _peer("pytruco", bench_pytruco, n(100), 4),
        "leduc_aec": _peer("pettingzoo[classic] (rlcard)", bench_leduc_aec, n(50000)),
        "openspiel_leduc": _peer("open-spiel", bench_openspiel, n(300_000)),
    }
    results["rss_mib_at_4096"] = _isolated_rss(4096)
    results["machine"]["loadavg_end"] = os.getloadavg()
    results["targets"] = _targets(results)
    _print_table(results, out)
    print(json.dumps(results, separators=(",", ":")), file=out)
    return results


def _get(d: dict, *path: str) -> float | None:
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def _targets(r: dict) -> dict:
    pytruco = _get(r, "peers", "pytruco", "decisions_per_s")
    leduc = _get(r, "peers", "leduc_aec", "agent_steps_per_s")
    spiel = _get(r, "peers", "openspiel_leduc", "states_per_s")
    vec2 = _get(r, "vector", "2", "decisions_per_s")
    fast = _get(r, "raw", "argentine", "fast", "decisions_per_s")
    aec = _get(r, "aec", "agent_steps_per_s")
    out = {
        "raw_fast_vs_pytruco": {"ratio": _ratio(fast, pytruco), "target": 50.0},
        "aec_vs_leduc": {"ratio": _ratio(aec, leduc), "target": 3.0},
        "vector_2_workers_decisions_per_s": {"value": vec2, "target": 500_000.0},
        "vector_2_workers_vs_openspiel": {"ratio": _ratio(vec2, spiel), "target": 0.5},
        "vector_rss_mib_at_4096": {"value": r["rss_mib_at_4096"], "target": 1024.0, "below": True},
    }
    for entry in out.values():
        value = entry.get("ratio", entry.get("value"))
        if value is None:
            entry["met"] = None
        elif entry.get("below"):
            entry["met"] = value < entry["target"]
        else:
            entry["met"] = value >= entry["target"]
    return out


def _fmt(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}"


def _print_table(r: dict, out) -> None:
    leduc = r["peers"]["leduc_aec"]
    spiel = r["peers"]["openspiel_leduc"]
    rows = [("what", "ours", "hands/s", "peer", "peer figure", "ours/peer")]
    for preset, entry in r["raw"].items():
        for kind in ("reference", "fast", "compiled_playout"):
            if kind not in entry:
                continue
            figure = entry[kind]["decisions_per_s"]
            label = {"reference": "reference engine", "fast": "fast engine",
                     "compiled_playout": "fast engine, compiled playout loop"}[kind]
            peer_name = PYTRUCO_PEER.get(preset)
            peer_figure = _get(r["peers"].get(peer_name, {}), "decisions_per_s") if peer_name else None
            peer = f"{peer_name.replace('_', ' ')} decisions/s" if peer_name else ""
            rows.append((f"raw {preset}: {label}, decisions/s", _fmt(figure), _fmt(entry[kind]["hands_per_s"]),
                         peer, _fmt(peer_figure) if peer else "",
                         _fmt(_ratio(figure, peer_figure), 1) + "x" if peer else ""))
    for key, preset in (("aec", "argentine"), ("aec_uruguayan", "uruguayan")):
        aec = r[key]["agent_steps_per_s"]
        rows.append((f"AEC env() {preset}, obs+mask, agent-steps/s", _fmt(aec), "", "leduc_holdem_v4 env()",
                     _fmt(_get(leduc, "agent_steps_per_s")),
                     _fmt(_ratio(aec, _get(leduc, "agent_steps_per_s")), 1) + "x"))
    for workers in ("1", "2"):
        v = r["vector"][workers]
        label = "1 process" if workers == "1" else "2 worker processes"
        rows.append((f"vector env N=4096, obs+mask, {label}, decisions/s", _fmt(v["decisions_per_s"]), "",
                     "OpenSpiel leduc states/s", _fmt(_get(spiel, "states_per_s")),
                     _fmt(_ratio(v["decisions_per_s"], _get(spiel, "states_per_s")), 1) + "x"))
    for name in ("pytruco", "pytruco_2v2"):
        peer = r["peers"][name]
        if _get(peer, "decisions_per_s") is not None:
            rows.append((f"peer {name.replace('_', ' ')} (to 20 points): hands/s, matches/s", "",
                         _fmt(peer["hands_per_s"]), "", _fmt(peer["matches_per_s"], 1) + " matches/s", ""))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    line = "| " + " | ".join("-" * w for w in widths) + " |"
    for k, row in enumerate(rows):
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |", file=out)
        if k == 0:
            print(line, file=out)
    for name, peer in r["peers"].items():
        if "missing" in peer:
            print(f"peer {name}: {peer['missing']}", file=out)
    print(f"memory: vector env N=4096: {r['rss_mib_at_4096']:.0f} MiB resident in a fresh process (this benchmark "
          f"process: {r['vector']['1']['rss_mib']:.0f} MiB); 2 workers: parent {r['vector']['2']['rss_mib']:.0f} MiB, "
          f"workers "
          f"{', '.join(f'{x:.0f}' for x in r['vector']['2']['worker_rss_mib'])} MiB", file=out)
    load = r["machine"]
    print(f"load average (1, 5, 15 min) at start {tuple(round(x, 1) for x in load['loadavg_start'])}, at end "
          f"{tuple(round(x, 1) for x in load['loadavg_end'])} on {load['cpus']} CPUs", file=out)
    print("targets:", file=out)
    for name, t in r["targets"].items():
        value = t.get("ratio", t.get("value"))
        status = {True: "MET", False: "NOT MET", None: "n/a (peer missing)"}[t["met"]]
        print(f"  {name}: {_fmt(value, 2)} (target {'<' if t.get('below') else '>='} {t['target']:,}) {status}",
              file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run, about ten times shorter")
    args = parser.parse_args(argv)
    run(quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
