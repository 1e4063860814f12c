"""Tournaments between agents: duplicate deals, Wilson intervals, ratings and behaviour statistics.

``truco eval`` (see ``training/cli/measure.py``) is a thin face over :func:`run_tournament`.

Duplicate deals
---------------
Deal number ``k`` of a match is shuffled from the match seed alone (``random.Random(f"{seed}:{k}")``) and the first
dealer comes from the seed too (docs/rules.md), so playing the same seed twice with the agents' seats swapped
gives both agents the same cards seat for seat: agent A at the even seats (team 0) and B at the odd seats, then B at
the even seats and A at the odd ones. In 2v2 and 3v3 each team therefore holds each set of hands once. Every deal
index ``i`` gets one match seed, shared by every pairing and preset of a tournament. Where an outside program
(``exec:``) plays, the match seeds are keyed (:mod:`agents.hidden_seeds`): the same tournament plays the same deals
for whoever holds the deal key, and a program cannot compute them from the tournament's seed and its own cards.

Reproducibility
---------------
Every match is one task with its own match seed and per-seat agent seeds (agents are reseeded through
``Agent.seed`` and reset before each match); results are aggregated in task order, so the same ``seed`` gives the
same numbers whatever the number of worker processes.

Behaviour statistics: :mod:`training.measure.behaviour`; intervals: :mod:`training.measure.statistics`; the files a
tournament writes: :mod:`training.measure.tournament_files`.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from agents.base import Agent, OtherPresetError, check_preset, make_agent
from agents.hidden_seeds import hidden_seed
from training.atomic import atomic_write_json
from training.measure.behaviour import behaviour_counts, behaviour_rates
from training.measure.match_journal import MatchJournal, file_stamp
from training.measure.statistics import Z95, binomial_two_sided_p, verdict, wilson_interval
from training.measure.tournament_files import markdown_report, write_outputs
from training.options import Options, PresetName, build, parse_overrides, read_yaml
from training.workers import ignore_sigint, spawn_pool
from truco_env.config import PRESETS, TrucoConfig, make_config, unknown_preset
from truco_env.engine import TrucoState
from truco_env.limits import clip, one_line
from truco_env.turns import ask_agent, play_turns

# ----------------------------------------------------------------------------------------------------------
# playing one match


def play_match(config: TrucoConfig, agents: list[Agent], seed: int
               ) -> tuple[TrucoState, list[int | None], dict[str, Any] | None]:
    """Play one match with ``agents[seat]`` at each seat; returns the final state, per hand record the team that
    won the hand's value (None when nobody did, e.g. an all-tied Paulista hand or a match ended by envido), and the
    forfeit, if an outside program broke the protocol (``{"seat", "team", "reason"}``: its team loses the match,
    which stops there; docs/protocol.md), else None."""
    from agents.exec import BotFailure

    state = TrucoState.new(config, seed=seed)
    winners: list[int | None] = []

    def hand_won(hand: int, before: tuple[int, int]) -> None:
        gained = [t for t in (0, 1) if state.score[t] > before[t]]
        winners.append(gained[0] if len(gained) == 1 else None)

    try:
        play_turns(state, lambda seat: ask_agent(agents[seat], state, seat), on_hand_end=hand_won)
    except BotFailure as failure:
        seat = state.actor
        return state, winners, {"seat": seat, "team": state.team_of(seat), "reason": str(failure)}
    return state, winners, None


# ----------------------------------------------------------------------------------------------------------
# tasks (one match each) and workers


@dataclass(frozen=True)
class Task:
    preset: str
    pairing: int  # index into the tournament's pairings
    spec_a: str
    spec_b: str
    deal: int  # deal index: both orientations of one deal share the match seed
    swapped: bool  # False: A at the even seats (team 0); True: B there
    match_seed: int
    seed: int  # the tournament seed (agent seeds derive from it)
    keep_record: bool = False  # return the match record (with the agent spec of each seat) for --records
    hidden: bool = False  # the match seed is keyed (an outside program plays): so are the agents' seeds


def match_seed_for(seed: int, deal: int, hidden: bool = False) -> int:
    """Deal ``deal``'s match seed; ``hidden``, keyed so that no outside program can compute it (module docstring)."""
    if hidden:
        return hidden_seed("truco-eval", seed, deal, bits=63)
    return random.Random(f"truco-eval:{seed}:{deal}").getrandbits(48)


def plays_program(specs: Iterable[str]) -> bool:
    """Whether any of ``specs`` runs an outside program: then the deals it plays are hidden."""
    return any(_starts_program(spec) for spec in specs)


@lru_cache(maxsize=256)
def _starts_program(spec: str) -> bool:
    return make_agent(spec).starts_program


def agent_seed_for(task: Task, seat: int) -> int:
    """The seed of the agent at ``seat``; keyed where the match seed is, so that a program cannot replay the draws
    of a sampling opponent (and read its cards from its actions)."""
    public = random.Random(f"truco-eval-agent:{task.seed}:{task.preset}:{task.pairing}:{task.deal}:"
                           f"{int(task.swapped)}:{seat}").getrandbits(32)
    return hidden_seed("truco-eval-agent", public, bits=32) if task.hidden else public


_AGENT_CACHE: dict[tuple[str, int], tuple[tuple[int, int] | None, Agent]] = {}


def _agent(spec: str, seat: int) -> Agent:
    """The agent of ``spec`` at ``seat``, built once per process, and again when the file it reads changed (a
    trainer that evaluates its latest policy file under the same spec must not meet the first one again)."""
    stamp = file_stamp(spec)
    cached = _AGENT_CACHE.get((spec, seat))
    if cached is None or cached[0] != stamp:
        cached = _AGENT_CACHE[(spec, seat)] = (stamp, make_agent(spec))
    return cached[1]


def run_task(task: Task) -> dict[str, Any]:
    """Play one match of a tournament; a JSON-friendly summary (no timing, so results are reproducible)."""
    config = make_config(task.preset)
    n = config.num_players
    team_a = 1 if task.swapped else 0
    agents = []
    for seat in range(n):
        agent = _agent(task.spec_a if seat % 2 == team_a else task.spec_b, seat)
        agent.seed(agent_seed_for(task, seat))
        agent.reset(seat)
        agents.append(agent)
    state, hand_winners, forfeit = play_match(config, agents, task.match_seed)
    record = state.match_record()
    winner = state.winner
    if forfeit is not None:  # the match stops where the program failed; the other team wins it
        winner = 1 - forfeit["team"]
        record = {**record, "winner": winner, "forfeit": forfeit}
    hands = record["hands"]
    score = state.score
    points_a = sum(h["points"][team_a] for h in hands)
    points_b = sum(h["points"][1 - team_a] for h in hands)
    return {
        "preset": task.preset, "pairing": task.pairing, "deal": task.deal, "swapped": task.swapped,
        "match_seed": task.match_seed,
        "winner": None if winner is None else ("a" if winner == team_a else "b"),
        **({"forfeit": {"side": "a" if forfeit["team"] == team_a else "b", "seat": forfeit["seat"],
                        "reason": forfeit["reason"]}} if forfeit else {}),
        "score_a": score[team_a], "score_b": score[1 - team_a],
        "hands": len(hands), "points_a": points_a, "points_b": points_b,
        "hands_won_a": sum(1 for w in hand_winners if w == team_a),
        "hands_won_b": sum(1 for w in hand_winners if w == 1 - team_a),
        "behaviour_a": dict(behaviour_counts(config, record, hand_winners, team_a)),
        "behaviour_b": dict(behaviour_counts(config, record, hand_winners, 1 - team_a)),
        **({"record": {**record, "players": [task.spec_a if seat % 2 == team_a else task.spec_b
                                             for seat in range(n)]}} if task.keep_record else {}),
    }


# ----------------------------------------------------------------------------------------------------------
# the tournament


def validate(agents: list[str], presets: list[str], matches: int, allow_other_preset: bool = False,
             other_preset_hint: str = "--allow-other-preset plays it anyway") -> None:
    """ValueError naming what is wrong and what is allowed (before any worker starts). A policy or checkpoint
    made for other presets is refused unless ``allow_other_preset`` (a research choice, never a default)."""
    if len(agents) < 2:
        raise ValueError(f"a tournament needs at least two agent specs, got {agents}")
    if len(set(agents)) != len(agents):
        twice = sorted({spec for spec in agents if agents.count(spec) > 1})
        raise ValueError(f"agent specs must be distinct; given more than once: "
                         f"{clip(', '.join(clip(spec, 80) for spec in twice), 300)}")
    unknown = [p for p in presets if p not in PRESETS]
    if unknown:
        raise unknown_preset(unknown[0])
    if not presets:
        raise ValueError(f"give at least one preset; choose from: {', '.join(sorted(PRESETS))}")
    if matches < 2 or matches % 2:
        raise ValueError(f"matches must be an even number >= 2 (each deal is played twice with the seats "
                         f"swapped), got {matches}")
    for spec in agents:
        agent = make_agent(spec)  # raises ValueError listing the kinds (or the parameters) allowed
        for preset in presets:
            try:
                check_preset(agent, preset, allow_other_preset)
            except OtherPresetError as exc:
                raise ValueError(f"{exc} ({other_preset_hint})" if other_preset_hint else str(exc)) from None


def pairings_of(agents: list[str]) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(agents) for b in agents[i + 1:]]


def make_tasks(agents: list[str], presets: list[str], matches: int, seed: int,
               pairs: list[tuple[str, str]] | None = None, keep_records: bool = False,
               hidden: bool | None = None) -> list[Task]:
    """Every match of the tournament, in order. ``hidden`` (default: whether an outside program plays) keys the
    match seeds (:func:`match_seed_for`)."""
    if hidden is None:
        hidden = plays_program(agents)
    deals = matches // 2
    tasks = []
    for preset in presets:
        for p, (a, b) in enumerate(pairings_of(agents) if pairs is None else pairs):
            for deal in range(deals):
                for swapped in (False, True):
                    tasks.append(Task(preset, p, a, b, deal, swapped, match_seed_for(seed, deal, hidden), seed,
                                      keep_records, hidden))
    return tasks


def _init_worker() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    ignore_sigint()  # Ctrl-C is the parent's to handle: no traceback per worker


@contextlib.contextmanager
def one_torch_thread():
    """Yields ``pin``: called before each match, it puts torch on one intra-op thread (as in the worker
    processes) once an agent has loaded torch, and the caller's setting comes back at the end. Why: a match's
    forward passes are one observation each, too small to gain from threads, and with torch's default (every
    core) two evaluations side by side fought over the cores: 100 argentine-2v2 matches of ``ppo:argentine-2v2``
    against the heuristic took 18 s alone and 102 s each with two at once; with one thread, 18 s each. Torch is
    never imported here: ONNX and rule-based agents run without it."""
    previous: list[int] = []

    def pin() -> None:
        torch = sys.modules.get("torch")
        if torch is not None and not previous:
            previous.append(torch.get_num_threads())
            torch.set_num_threads(1)

    try:
        yield pin
    finally:
        if previous:
            sys.modules["torch"].set_num_threads(previous[0])


def play_tasks(tasks: list[Task], workers: int = 1, progress: bool = False,
               backend: str = "local", journal: MatchJournal | None = None,
               nodes: set[str] | None = None) -> list[dict[str, Any]]:
    """Run every task; results in task order whatever the number of workers or the backend.

    ``backend="local"`` uses this machine's processes; ``"ray"`` spreads the matches over a Ray cluster (the one
    ``RAY_ADDRESS`` points at, or a local instance with ``workers`` CPUs), and adds to ``nodes`` (when given) the
    id of every Ray node that played some of them. With a ``journal``, the matches it already holds are not
    played again and each new result is added to it as it arrives (on Ray, a chunk's results as the chunk
    arrives, in task order)."""
    if backend not in ("local", "ray"):
        raise ValueError(f"backend {backend!r} is not allowed; choose 'local' or 'ray'")
    if journal is None:
        return _play(tasks, workers, progress, backend, lambda task, result: None, nodes)
    try:
        done = journal.resume(tasks)
        return done + _play(tasks[len(done):], workers, progress, backend, journal.add, nodes)
    finally:
        journal.close()


def _play(tasks: list[Task], workers: int, progress: bool, backend: str, played: Any,
          nodes: set[str] | None = None) -> list[dict[str, Any]]:
    """Play ``tasks`` here or on Ray; ``played(task, result)`` hears of each result in task order."""
    if backend == "ray":
        return _play_tasks_on_ray(tasks, workers, progress, set() if nodes is None else nodes, played)
    from training.progress import progress_meter

    bar = progress_meter(len(tasks), "truco eval", "match", progress)
    results: list[dict[str, Any]] = []
    try:
        if workers <= 1 or len(tasks) <= 1:
            with one_torch_thread() as pin:
                for task in tasks:
                    pin()
                    results.append(run_task(task))
                    played(task, results[-1])
                    bar.update()
        else:
            chunk = max(1, min(16, len(tasks) // (workers * 8)))
            chunks = -(-len(tasks) // chunk)
            with spawn_pool(min(workers, chunks), initializer=_init_worker) as pool:  # no idle process
                for task, result in zip(tasks, pool.imap(run_task, tasks, chunksize=chunk)):
                    results.append(result)
                    played(task, result)
                    bar.update()
    finally:
        bar.close()
    return results


def _play_tasks_on_ray(tasks: list[Task], workers: int, progress: bool, nodes: set[str],
                       played: Any = lambda task, result: None) -> list[dict[str, Any]]:
    """Chunks of matches as Ray tasks; ``played`` hears of each result in task order as its chunk arrives. A chunk
    Ray gives up on (its worker or node lost more often than the retries) is a one-line ValueError: the results
    heard of are kept by the caller's journal, and the same command resumes from them."""
    from training.progress import progress_meter
    from training.workers import start_ray

    ray = start_ray(workers)
    # a chunk whose worker or node is lost is played again elsewhere, up to 3 times (Ray's default for tasks,
    # stated here because a lost node relies on it): its matches have their own seeds, so the same results
    remote = ray.remote(num_cpus=1, max_retries=3)(_run_chunk_on_node)
    size = max(1, min(64, len(tasks) // (max(1, workers) * 8)))
    chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
    futures = [remote.remote(chunk) for chunk in chunks]
    results: list[dict[str, Any]] = []
    bar = progress_meter(len(tasks), "truco eval (ray)", "match", progress)
    try:
        for chunk, future in zip(chunks, futures):  # in submission order, so results keep the task order
            try:
                node, chunk_results = ray.get(future)
            except ray.exceptions.RayError as exc:
                cause = getattr(exc, "cause", None)
                if isinstance(cause, ValueError):  # a match that cannot be played, as it says locally
                    raise cause from None
                raise ValueError(f"a chunk of {len(chunk)} matches was lost on the Ray cluster ({type(exc).__name__}, "
                                 f"after Ray's retries); the {len(results)} matches played before it are kept: run "
                                 "the same command again to go on") from None
            nodes.add(node)
            for task, result in zip(chunk, chunk_results):
                played(task, result)
            results.extend(chunk_results)
            bar.update(len(chunk_results))
    finally:
        bar.close()
    return results


def _run_chunk_on_node(tasks: list[Task]) -> tuple[str, list[dict[str, Any]]]:
    """A Ray task: the id of the node it ran on, and its matches' results."""
    import ray

    return ray.get_runtime_context().get_node_id(), _run_chunk(tasks)


def _run_chunk(tasks: list[Task]) -> list[dict[str, Any]]:
    """One Ray task's matches, with torch on one thread as in the local workers (``one_torch_thread``)."""
    results = []
    with one_torch_thread() as pin:
        for task in tasks:
            pin()
            results.append(run_task(task))
    return results


def summarise(agents: list[str], presets: list[str], results: list[dict[str, Any]],
              pairs: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Pairing tables, ratings and behaviour statistics from the ordered match results."""
    pairs = pairings_of(agents) if pairs is None else pairs
    pairing_rows = []
    behaviour: dict[tuple[str, str], Counter] = {}
    for preset in presets:
        for p, (a, b) in enumerate(pairs):
            rows = [r for r in results if r["preset"] == preset and r["pairing"] == p]
            if not rows:
                continue
            n = len(rows)
            wins_a = sum(r["winner"] == "a" for r in rows)
            wins_b = sum(r["winner"] == "b" for r in rows)
            draws = n - wins_a - wins_b
            score = wins_a + 0.5 * draws
            low, high = wilson_interval(score, n)
            hands = sum(r["hands"] for r in rows)
            by_deal: dict[int, int] = {}
            for r in rows:
                by_deal[r["deal"]] = by_deal.get(r["deal"], 0) + (r["winner"] == "a")
            pairing_rows.append({
                "preset": preset, "agent_a": a, "agent_b": b, "matches": n,
                "wins_a": wins_a, "wins_b": wins_b, "draws": draws,
                "win_rate_a": score / n, "ci_low": low, "ci_high": high,
                "p_value": binomial_two_sided_p(wins_a, wins_a + wins_b),
                "verdict": verdict(low, high, a, b),
                "hands": hands,
                "points_per_hand_a": sum(r["points_a"] for r in rows) / hands if hands else 0.0,
                "points_per_hand_b": sum(r["points_b"] for r in rows) / hands if hands else 0.0,
                "hands_won_a": sum(r["hands_won_a"] for r in rows),
                "hands_won_b": sum(r["hands_won_b"] for r in rows),
                "deals_won_both_a": sum(1 for v in by_deal.values() if v == 2),
                "deals_split": sum(1 for v in by_deal.values() if v == 1),
                "deals_won_both_b": sum(1 for v in by_deal.values() if v == 0),
            })
            for r in rows:
                behaviour.setdefault((preset, a), Counter()).update(r["behaviour_a"])
                behaviour.setdefault((preset, b), Counter()).update(r["behaviour_b"])
    behaviour_rows = []
    for preset in presets:
        for agent in agents:
            counts = behaviour.get((preset, agent))
            if counts:
                behaviour_rows.append({"preset": preset, "agent": agent, **behaviour_rates(counts),
                                       "counts": dict(sorted(counts.items()))})
    ratings = {"overall": rate_agents(agents, results, pairs)}
    if len(presets) > 1:
        for preset in presets:
            ratings[preset] = rate_agents(agents, [r for r in results if r["preset"] == preset], pairs)
    return {"pairings": pairing_rows, "behaviour": behaviour_rows, "ratings": ratings}


def rate_agents(agents: list[str], results: list[dict[str, Any]], pairs: list[tuple[str, str]]
                ) -> list[dict[str, Any]]:
    """OpenSkill (Plackett-Luce) ratings over the matches in task order: mu, sigma and mu +- 1.96 sigma.
    ``tau=0``: the agents are fixed, so every match weighs the same (no drift towards the latest matches)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    ratings = {a: model.rating(name=a) for a in agents}
    for r in results:
        a, b = pairs[r["pairing"]]
        ranks = [0, 0] if r["winner"] is None else ([0, 1] if r["winner"] == "a" else [1, 0])
        [[ra], [rb]] = model.rate([[ratings[a]], [ratings[b]]], ranks=ranks)
        ratings[a], ratings[b] = ra, rb
    rows = [{"agent": a, "mu": ratings[a].mu, "sigma": ratings[a].sigma,
             "low": ratings[a].mu - Z95 * ratings[a].sigma, "high": ratings[a].mu + Z95 * ratings[a].sigma,
             "ordinal": ratings[a].ordinal()} for a in agents]
    return sorted(rows, key=lambda row: -row["mu"])


def run_tournament(agents: list[str], presets: list[str], matches: int, seed: int = 0, workers: int = 1,
                   progress: bool = False, backend: str = "local", pairs: list[tuple[str, str]] | None = None,
                   allow_other_preset: bool = False, records: Path | None = None,
                   journal: MatchJournal | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate, play and summarise; returns ``(summary, meta)``. Every pair of ``agents`` meets, or only the
    given ``pairs`` (of specs among ``agents``): one agent against a field, say. With ``records``, every match
    record (docs/records.md, plus the agent spec of each seat) is written there for ``truco replay``. With a
    ``journal``, an interrupted run resumes from the matches it holds (:mod:`training.measure.match_journal`), and the
    journal is removed once the tournament is summarised."""
    validate(agents, presets, matches, allow_other_preset)
    tasks = make_tasks(agents, presets, matches, seed, pairs, keep_records=records is not None)
    start = time.perf_counter()
    nodes: set[str] = set()
    results = play_tasks(tasks, workers=workers, progress=progress, backend=backend, journal=journal, nodes=nodes)
    elapsed = time.perf_counter() - start
    if records is not None:
        records.mkdir(parents=True, exist_ok=True)
        for r in results:
            name = f"{r['preset']}_pairing{r['pairing']}_deal{r['deal']:05d}_{'b' if r['swapped'] else 'a'}-even.json"
            atomic_write_json(records / name, r.pop("record"))
    summary = summarise(agents, presets, results, pairs)
    summary["matches"] = results
    meta = {"agents": agents, "presets": presets, "matches_per_pairing": matches, "seed": seed,
            "workers": workers, "seconds": round(elapsed, 2),
            "duplicate_deals": "each deal index is played twice with the agents' seats swapped"}
    if backend == "ray":
        meta["ray_nodes"] = sorted(nodes)  # the Ray nodes that played this run's matches (none when resumed whole)
    if journal is not None:
        journal.finish()
    return summary, meta


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


class TournamentOptions(Options):
    """A tournament of ``truco eval``: a YAML file (``--config``), ``--set KEY=VALUE`` and the flags fill it, in
    that order, checked before anything plays."""

    agents: Annotated[list[str], Field(min_length=2)]
    """Agent specs: two for a head-to-head, more for a round robin."""
    presets: Annotated[list[PresetName], Field(min_length=1)] = ["argentine"]  # noqa: RUF012  (pydantic copies it)
    """Rules presets, each a tournament of its own."""
    matches: Annotated[int, Field(ge=2)] = 200
    """Matches per pairing and preset, even: each deal is played twice with the seats swapped."""
    seed: Annotated[int, Field(ge=0)] = 0
    """Tournament seed: the same seed gives the same numbers, whatever the workers."""
    workers: Annotated[int, Field(ge=1)] | None = None
    """Worker processes (null: every core)."""
    out: str = "runs/eval"
    """Output folder."""
    backend: Literal["local", "ray"] = "local"
    """Local processes or a Ray cluster (same results)."""
    allow_other_preset: bool = False
    """Play policies on presets they were not trained for (research; refused otherwise)."""
    records: str | None = None
    """Also write every match record to this folder."""
    plots: bool = True
    """Draw the PNG plots."""
    progress: bool = True
    """Show a progress bar."""
    overwrite: bool = False
    """Replace ``out`` (and ``records``) when they hold an earlier run's files (refused otherwise)."""

    @field_validator("matches")
    @classmethod
    def _even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("should be even (each deal is played twice with the seats swapped)")
        return value


def tournament_options(args: Any) -> TournamentOptions:
    """The checked options of ``truco eval`` from its ``--config`` file, ``--set`` overrides and flags."""
    data = read_yaml(args.config) if getattr(args, "config", None) else {}
    overridden = parse_overrides(getattr(args, "set", None) or [])
    data.update(overridden)
    flags = {"agents": args.agents, "presets": args.preset, "matches": args.matches, "seed": args.seed,
             "workers": args.workers, "out": args.out, "backend": args.backend, "records": args.records,
             "allow_other_preset": args.allow_other_preset or None, "plots": False if args.no_plots else None,
             "progress": False if args.no_progress else None,
             "overwrite": True if getattr(args, "overwrite", False) else None}
    data.update({k: v for k, v in flags.items() if v is not None})
    return build(TournamentOptions, data, source=getattr(args, "config", None) or "",
                 sources={k: "--set" for k in overridden if k not in flags or flags[k] is None})


#: The files by which ``--overwrite`` knows an eval folder written before manifests (training/outputs.py).
EVAL_MARKERS = ("results.json",)
RECORD_MARKERS = ("*_pairing*_deal*.json",)


def _nested(a: Path, b: Path) -> bool:
    a, b = Path(os.path.abspath(a)), Path(os.path.abspath(b))
    return a == b or a in b.parents or b in a.parents


def cli_main(args: Any) -> int:
    """``truco eval``: exit 0 on success, 2 on a bad option, spec, preset, number or output path (or an output
    folder in use or already full), 130 on Ctrl-C. The files appear together once every match is played (see
    :func:`training.outputs.output_folder`); an interrupted run leaves ``--out`` as it was, and the same command
    run again resumes from the matches already played (:func:`training.measure.match_journal.journal_beside`)."""
    from training.measure.match_journal import journal_beside
    from training.outputs import MANIFEST, output_folder

    out = None
    try:
        opts = tournament_options(args)
        out = Path(opts.out)
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {str(out)!r} is a file; give a folder (it is created if missing)")
        validate(opts.agents, opts.presets, opts.matches, opts.allow_other_preset)
        records = Path(opts.records) if opts.records else None
        if records is not None and _nested(out, records):
            raise ValueError(f"--records {str(records)!r} and --out {str(out)!r} must be separate folders "
                             "(neither inside the other)")
        workers = opts.workers or default_workers()
        with contextlib.ExitStack() as stack:
            folder = stack.enter_context(output_folder(out, "eval", opts.overwrite, markers=EVAL_MARKERS))
            record_folder = None if records is None else stack.enter_context(
                output_folder(records, "records", opts.overwrite, option="--records", markers=RECORD_MARKERS,
                              with_manifest=False))  # every file there is a match record
            summary, meta = run_tournament(opts.agents, opts.presets, opts.matches, seed=opts.seed, workers=workers,
                                           progress=opts.progress, backend=opts.backend,
                                           allow_other_preset=opts.allow_other_preset, records=record_folder,
                                           journal=journal_beside(out))
            written = [out / p.relative_to(folder) for p in write_outputs(folder, summary, meta, plots=opts.plots)]
            written.append(out / MANIFEST)
    except ValueError as exc:
        print(f"truco eval: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kept = f" ({out} is as it was; the same command again resumes from the matches played)" if out is not None else ""
        print(f"\ntruco eval: interrupted; nothing was written{kept}", file=sys.stderr)
        return 130
    print(markdown_report(summary))
    where = f" on {len(meta['ray_nodes'])} Ray node(s)" if "ray_nodes" in meta else ""
    print(f"\n{sum(r['matches'] for r in summary['pairings'])} matches in {meta['seconds']:.1f} s "
          f"with {workers} worker(s){where}; wrote {', '.join(str(p) for p in written)}")
    return 0
