"""``truco report``: the strength report of every shipped agent, written to docs/strength.md.

For each preset of ``REPORT_PRESETS`` (the four main presets and the two Uruguayan ones; the bars are counted
over the main four) and each agent that ships for it (the heuristic, which is a target too, and
the shipped ``ppo:<preset>`` policy), one command measures:

* the **ABR win rate** (``truco exploit``, the same standard budget of learner decisions for every agent): how
  much a best response trained against the agent alone wins; lower is harder to exploit;
* the **gauntlet** (``truco gauntlet``): mean and worst win rate against the held-out population;
* the win rates against ``heuristic`` and ``random`` (2,000 duplicate matches each), the figures the project
  reported before, kept for comparison;
* for a CFR blueprint on a 1v1 preset, **play-time search** (``cfr:<preset>,search=``:data:`SEARCH_MS`): the
  blueprint and the searching blueprint on the same duplicate deals (as many as the other stages), against the
  heuristic and against the blueprint's own trained best response (the strongest ABR learner above).
  docs/cfr.md measures the search exactly on the research presets; this is its effect on the full game. (A best
  response trained against the searching agent itself costs one to two hours per learner on two cores and moved
  the ABR win rate by less than its interval: docs/cfr.md keeps that measurement; ``truco exploit
  cfr:<preset>,search=200`` makes it again.);
* for a preset of :data:`SEARCHED`, the same stages for its **searching agent** (``search:SPEC``): one more row,
  met head to head by the shipped agents and choosable as ``best:`` like them (docs/search.md);
* on the 1v1 presets, **bluffing**: over :data:`BLUFF_MATCHES` duplicate matches against the heuristic (the
  heuristic against itself for its own row), the share of the agent's truco-ladder calls made with a
  bottom-third hand and how often those calls won the hand (the behaviour statistics of
  :mod:`training.measure.evaluate`), so that bluffing is shown, not claimed.

Every stage is a stage of :mod:`training.measure.stages` (:class:`ReportStage`): its file is kept under ``--runs``
(``runs/report/<preset>/<agent>/``) and reused when its finished result is already there with the same settings,
so an interrupted report resumes where it stopped and a report is remade from its runs at no cost; within a
stage, each best response resumes from its checkpoint and each tournament from the journal of the matches it has
played (:mod:`training.measure.match_journal`). The report also keeps every stage's result, with the settings it was made
with, in its data file (``docs/strength.json``), which the repository tracks: ``--runs`` is scratch that a fresh
clone lacks, and with the data file a report measures again only the stages whose agent file or settings changed
and copies the rest (an agent's stages are keyed by a hash of its file, so a retrained policy is always measured
afresh). A stage's result counts only when it is complete (``truco exploit`` marks an interrupted run), so a
partial run never enters the report. One report at a time works on a preset's folder of ``--runs``: a second is
refused while the first holds its lock (:func:`training.outputs.hold`), and reports of different presets run side
by side. With ``--backend ray`` the stages to measure are Ray tasks, all at once (:class:`StageRunner`).

The report writes under ``--root`` (default: the current directory, the repository's root) in the repository's
own layout (:data:`PAGE`, :data:`DATA`, :data:`FIGURE`, :data:`CARDS`, :data:`CHOICES`), so that the model
cards' links to ``../../docs/strength.md`` hold wherever it is written, and a trial report written elsewhere
touches nothing of the repository. This module measures and writes; the page and its figure are drawn by
:mod:`training.measure.report_page`, the model cards by :mod:`training.measure.model_cards`, from the rows alone, and
:mod:`training.measure.report_data` checks what is read back.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import platform
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training.atomic import atomic_write, atomic_write_json
from training.learn.best_response import STANDARD_DECISIONS, BRArgs
from training.measure.best_agent import RISE_FACTOR, choose, passes_every_bar, write_choices
from training.measure.evaluate import make_tasks, play_tasks, run_tournament
from training.measure.exploit import (
    ABR_LEARNERS,
    agent_file_hash,
    cached_exploit,
    recipe_key,
    strongest_exploit,
)
from training.measure.fingerprint import learner_fingerprint, play_fingerprint
from training.measure.gauntlet import OPPONENTS, REPORT_PRESETS, run_gauntlet
from training.measure.match_journal import MatchJournal
from training.measure.model_cards import card_name, model_card
from training.measure.report_data import (
    BLUFF_MATCHES,
    BLUFF_OPPONENT,
    FIGURE,
    SEARCH_MS,
    STAGE,
    STAGES,
    check,
    stored_rows,
    stored_settings,
)
from training.measure.report_page import render, strength_figure
from training.measure.stages import COMPLETE, Stage, run_stage, safe_name
from training.outputs import hold
from truco_env.config import make_config
from truco_env.limits import clip, one_line

logger = logging.getLogger(__name__)

#: Where the report writes, under its ``--root``: the page, its data file and its figure ...
PAGE = Path("docs") / "strength.md"
DATA = Path("docs") / "strength.json"
PLOT = Path("docs") / "img" / "strength.png"
#: ... the model card of each measured policy and blueprint, beside its file, and the choice of ``best:<preset>``.
CARDS = Path("agents") / "policies"
CHOICES = CARDS / "best.json"


#: The presets whose searching agent (``search:SPEC``, docs/search.md: the preset's shipped agent named here
#: thinking ahead at play time) the report covers, with every stage the shipped agents have. A preset joins when
#: its search row has been measured: the best responses against a search play it at every decision of their
#: training, some hours of two cores per preset (docs/research.md).
SEARCHED: dict[str, str] = {}


def agents_of(preset: str) -> list[str]:
    """The agents the report covers on ``preset``: the heuristic, the shipped PPO policy, the shipped CFR
    blueprint and, for a preset of :data:`SEARCHED`, the searching agent."""
    from agents.cfr import shipped_blueprints
    from agents.ppo import shipped_policies

    return (["heuristic"] + ([f"ppo:{preset}"] if preset in shipped_policies() else [])
            + ([f"cfr:{preset}"] if preset in shipped_blueprints() else [])
            + ([f"search:{SEARCHED[preset]}"] if preset in SEARCHED else []))


def previous_policy(agent: str, preset: str) -> str | None:
    """The policy a rebuilt ``ppo:<preset>`` replaced (``agents/policies/previous/``, as ONNX), which it must beat
    head to head; None for other agents, and while the shipped policy is still the previous one (no
    ``config_hash`` in its metadata: only the rebuilt trainer writes it)."""
    from agents.base import SHIPPED_DIR, make_agent

    path = os.path.join(SHIPPED_DIR, "previous", f"ppo_{preset}.onnx")
    if agent != f"ppo:{preset}" or not os.path.isfile(path) or "config_hash" not in make_agent(agent).metadata:
        return None
    return f"onnx:{os.path.relpath(path)}"


@dataclass(frozen=True)
class ReportStage(Stage):
    """A stage of the report: its result is kept in its own file under ``--runs`` with the settings (its key) it
    was made with, and ``kept`` is the same stage in the report's data file, which stands in for a fresh clone's
    missing ``--runs`` (reused on the same rule, never copied there). What is read back is checked against
    ``spec`` (:func:`training.measure.report_data.check`): a stage file that is no JSON object, or a finished one whose
    figures the spec refuses, is a one-line error, not a figure on the page."""

    kept: dict[str, Any] | None = None
    spec: Any = None

    def key_of(self, result: dict[str, Any]) -> Any:
        """The stored settings, their best-response recipe read as today's (:func:`training.measure.exploit.recipe_key`)."""
        settings = result.get("settings")
        if isinstance(settings, dict) and isinstance(settings.get("recipe"), dict):
            return {**settings, "recipe": recipe_key(settings["recipe"])}
        return settings

    def read(self) -> Any:
        data = super().read()
        if data is not None:
            check(data, STAGE)  # an object, whatever it holds, before it is asked whether it is complete
        return data

    def stored(self) -> tuple[dict[str, Any], str] | None:
        try:
            found = super().stored()
            if found is not None:
                check(found[0], self.spec or STAGE, page=True)
        except ValueError as exc:
            raise ValueError(f"{self.path} is not a finished stage of truco report: {exc} (remove it to measure the "
                             "stage again)") from None
        if found is not None:
            # a stage written before stages were dated: the file's own date is when it was measured
            found[0].setdefault("measured", time.strftime("%Y-%m-%d", time.localtime(self.path.stat().st_mtime)))
            return found
        if self.reusable(self.kept):
            return self.kept, f"{self.path.parent.name}/{self.path.stem} from the report's data file"
        return None


def measured_stage(path: Path, settings: dict[str, Any], run: Any, log: Any, kept: dict[str, Any] | None = None,
                   spec: Any = None) -> dict[str, Any]:
    """The stage's result (:class:`ReportStage`): from ``path`` under ``--runs``, else from ``kept`` (the same
    stage in the report's data file), else by ``run()``, saved to ``path``. A run that stopped half-way ends the
    report (KeyboardInterrupt): what is done stays for the next run."""
    result = run_stage(ReportStage(path, settings, run, kept, spec), log)
    if result.get("status") != COMPLETE:
        raise KeyboardInterrupt
    return result


class StageRunner:
    """Where the report's stages run. ``local``: here, one after another, each stored as it finishes (a stage
    that stopped half-way ends the report at once). ``ray``: each stage a Ray task (``RAY_ADDRESS`` as for
    ``truco eval``), all of them at once, the search stage after the exploit stage it reads; a task lost with its
    node is run again by Ray, and a stage is stored only when it finished (its journal and checkpoints let the
    rerun go on), so a cluster stores what a local run stores. ``--runs`` must then be a folder every node sees."""

    def __init__(self, backend: str = "local", workers: int = 1):
        self.backend, self.workers = backend, workers
        self.pending: dict[Any, tuple[str, str, str]] = {}  # Ray reference -> (preset, agent, stage)
        if backend == "ray":
            from training.workers import start_ray

            self.ray = start_ray(workers)

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        """A stage sent to a Ray worker takes its row's runner along (its closures hold the row): there it is a
        local one, which runs what it is given where it is."""
        return (StageRunner, ())

    def stage(self, stage: ReportStage, where: tuple[str, str, str], log: Any) -> Any:
        """The stage's result (local), or the reference to the task that makes it (ray)."""
        if self.backend == "local":
            result = run_stage(stage, log)
            if result.get("status") != COMPLETE:
                raise KeyboardInterrupt
            return result
        found = stage.stored()  # what is already measured is not sent anywhere
        if found is not None:
            log(f"  reuse {found[1]}")
            return found[0]
        ref = self.ray.remote(num_cpus=self.workers, max_retries=3)(run_stage).remote(stage)
        self.pending[ref] = where
        return ref

    def after(self, where: tuple[str, str, str], function: Any, *args: Any) -> Any:
        """``function(*args)`` once the stages among ``args`` are finished: at once (local), or as a task that Ray
        starts when they are (ray)."""
        if self.backend == "local":
            return function(*args)
        ref = self.ray.remote(num_cpus=self.workers, max_retries=3)(function).remote(*args)
        self.pending[ref] = where
        return ref

    def _result(self, ref: Any, what: str) -> Any:
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:  # RayTaskError (with the task's own), a lost worker or node
            raise _task_failure(exc, what) from None

    def finish(self, rows: list[dict[str, Any]], log: Any) -> list[dict[str, Any]]:
        """The rows with every stage's result in place, a line as each stage finishes; KeyboardInterrupt when one
        stopped half-way (what finished is stored)."""
        if self.backend == "local":
            return rows
        results: dict[Any, Any] = {}
        waiting = list(self.pending)
        while waiting:
            done, waiting = self.ray.wait(waiting, num_returns=1)
            preset, agent, name = self.pending[done[0]]
            results[done[0]] = result = self._result(done[0], f"{preset}: {agent}: {name}")
            took = f" in {result['seconds']:,.0f} s" if isinstance(result.get("seconds"), (int, float)) else ""
            if isinstance(result.get("cpu_seconds"), (int, float)):
                took += f" ({result['cpu_seconds']:,.0f} CPU s)"
            log(f"{preset}: {agent}: {name} {result.get('status', 'stopped')}{took} ({len(waiting)} stage(s) to go)")
        self.pending.clear()
        rows = [{k: results.get(v, v) if _is_ref(v) else v for k, v in row.items()} for row in rows]
        if any(isinstance(v, dict) and v.get("status") not in (None, COMPLETE) for row in rows for v in row.values()):
            raise KeyboardInterrupt
        return rows


def _task_failure(exc: BaseException, what: str) -> BaseException:
    """A stage task's failure as the local report would say it: its own error when it raised one of the errors
    the command names in one line, else one line saying the task was lost (the finished stages are kept)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, (ValueError, OSError)):
        return cause
    return ValueError(f"{what}: its Ray task failed ({type(exc).__name__}, after Ray's retries); the finished "
                      "stages are kept: run the same command again")


def _is_ref(value: Any) -> bool:
    return type(value).__name__ == "ObjectRef"


def _search_stage(stages: AgentStages, recipe: BRArgs, exploit: dict[str, Any]) -> dict[str, Any]:
    """:func:`_search` as a Ray task, once its exploit stage's task has finished; a stop half-way is its status."""
    try:
        return _search(stages, recipe, exploit)
    except KeyboardInterrupt:
        return {"status": "interrupted"}


@dataclass(frozen=True)
class AgentStages:
    """What the stages of one agent's row share: where they are kept, the key of the agent's file and code, the
    row already in the data file, and how its tournaments are played; each stage then says only what is its own.
    ``learners``: where the best responses are kept (:func:`learner_cache`)."""

    agent: str
    preset: str
    folder: Path
    learners: Path
    same_file: dict[str, Any]
    seed: int
    workers: int
    matches: int
    progress: bool
    log: Any
    stored: dict[str, Any]
    runner: StageRunner | None = None

    def stage(self, name: str, file: str, settings: dict[str, Any], run: Any, spec: Any) -> Any:
        """The row's stage ``name``, kept in ``file`` of the agent's folder (:func:`measured_stage`), run where
        ``runner`` says (here when none)."""
        if self.runner is None:
            return measured_stage(self.folder / file, settings, run, self.log, self.stored.get(name), spec)
        return self.runner.stage(ReportStage(self.folder / file, settings, run, self.stored.get(name), spec),
                                 (self.preset, self.agent, name), self.log)

    def journal(self, name: str) -> MatchJournal:
        """Where one of the agent's tournaments notes each match as it is played, so a stopped report resumes it."""
        return MatchJournal(self.folder / "journals" / f"{name}.jsonl", key=self.same_file)

    def head_to_head(self, opponents: list[str], journal: str) -> dict[str, Any]:
        """The agent against each of ``opponents``: its win rate and interval per opponent."""
        summary, _meta = run_tournament([self.agent, *opponents], [self.preset], self.matches, seed=self.seed,
                                        workers=self.workers, progress=self.progress,
                                        pairs=[(self.agent, o) for o in opponents], journal=self.journal(journal))
        return {r["agent_b"]: {k: r[k] for k in ("matches", "win_rate_a", "ci_low", "ci_high")}
                for r in summary["pairings"]}


def learner_cache(runs: Path) -> Path:
    """Where a report kept under ``runs`` keeps its best responses: ``exploit`` beside it (``runs/exploit`` for the
    default ``runs/report``, the folder ``truco exploit`` and the gauntlet share), so that on a cluster the
    learners are on the folder every node sees, as the stages are, and not in each node's working folder."""
    return runs.parent / "exploit"


def same_code(agent: str, preset: str) -> dict[str, Any]:
    """What keys an agent's stages besides their own settings: a stage is reused only while the agent's file and
    what today's code does are as they were when it was made."""
    file_hash = agent_file_hash(agent)
    same = {"agent_file": file_hash} if file_hash else {}
    same["code"] = {"play": play_fingerprint(agent, preset), "learner": learner_fingerprint(preset)}
    return same


def measure(agent: str, preset: str, runs: Path, decisions: int, seed: int, workers: int, gauntlet_matches: int,
            eval_matches: int, progress: bool, log: Any, stored: dict[str, Any] | None = None,
            runner: StageRunner | None = None) -> dict[str, Any]:
    """The agent's stages (each reused when already done, under ``runs`` or in ``stored``, the agent's row of the
    report's data file), run where ``runner`` says: on Ray, the row holds the tasks' references until
    :meth:`StageRunner.finish`."""
    same_file = same_code(agent, preset)
    stages = AgentStages(agent, preset, runs / preset / safe_name(agent), learner_cache(runs), same_file, seed,
                         workers, eval_matches, progress, log, stored or {}, runner)
    # the strongest of ABR_LEARNERS best responses (seeds `seed` on) against the agent alone
    recipe = BRArgs(preset=preset, target=agent, decisions=decisions, seed=seed, workers=workers)
    exploit = stages.stage("exploit", "exploit.json",
                           {"recipe": recipe_key(recipe), "matches": eval_matches, "learners": ABR_LEARNERS,
                            **same_file},
                           lambda: {**strongest_exploit(recipe, eval_matches, root=stages.learners,
                                                        progress=progress),
                                    "machine": machine_words()}, STAGES["exploit"])
    held_out = {o.name: play_fingerprint(o.spec_for(preset), preset) for o in OPPONENTS}  # they may change too
    gauntlet = stages.stage("gauntlet", "gauntlet.json",
                            {"matches": gauntlet_matches, "seed": seed, "opponents": held_out, **same_file},
                            lambda: run_gauntlet(agent, preset, gauntlet_matches, seed, workers,
                                                 stages.folder / "gauntlet", progress=progress, overwrite=True),
                            STAGES["gauntlet"])
    row = {"agent": agent, "preset": preset, "exploit": exploit, "gauntlet": gauntlet, "versus": _versus(stages)}
    # head to head against the other shipped agents listed after this one (the heuristic is in the baselines):
    # each pairing is played once, from the side of the agent listed first (training/measure/best_agent.py)
    listed = agents_of(preset)
    rivals = [a for a in listed[listed.index(agent) + 1:] if a != "heuristic"] if agent != "heuristic" else []
    if rivals:
        row["rivals"] = stages.stage("rivals", "rivals.json",
                                     {"matches": eval_matches, "seed": seed, **same_file,
                                      "rivals": {o: agent_file_hash(o) for o in rivals}},
                                     lambda: stages.head_to_head(rivals, "rivals"),
                                     {**STAGES["rivals"], **dict.fromkeys(rivals, FIGURE)})
    if make_config(preset).num_players == 2:
        row["bluffing"] = stages.stage("bluffing", "bluffing.json",
                                       {"matches": BLUFF_MATCHES, "seed": seed, "opponent": BLUFF_OPPONENT,
                                        **same_file},
                                       lambda: bluffing(agent, preset, BLUFF_MATCHES, seed, workers, progress),
                                       STAGES["bluffing"])
        if agent.startswith("cfr:"):
            here = dataclasses.replace(stages, runner=None)  # within the task: its stage runs where it is
            row["search"] = (_search(stages, recipe, exploit) if runner is None or not _is_ref(exploit) else
                             runner.after((preset, agent, "search"), _search_stage, here, recipe, exploit))
    return row


def rise(rows: list[dict[str, Any]], preset: str, runs: Path, settings: dict[str, Any], workers: int,
         progress: bool, log: Any, stored: dict[tuple[str, str], dict[str, Any]]) -> None:
    """The risen bar (issue 73): where ``preset``'s ``best:`` agent passes every bar, exploitability included, one
    best response at :data:`RISE_FACTOR` times the budget (the report's first learner seed) against it, added to
    its row as ``rise``; kept and reused as every stage is. Run here, after the rows: the choice needs them all."""
    mine = [r for r in rows if r["preset"] == preset]
    row = next(r for r in mine if r["agent"] == choose(mine))
    if not passes_every_bar(row, mine):
        return
    agent = row["agent"]
    log(f"{preset}: {agent} passes every bar: the risen bar")
    same_file = same_code(agent, preset)
    stages = AgentStages(agent, preset, runs / preset / safe_name(agent), learner_cache(runs), same_file,
                         settings["seed"], workers, settings["eval_matches"], progress, log,
                         stored.get((preset, agent)) or {})
    recipe = BRArgs(preset=preset, target=agent, decisions=RISE_FACTOR * settings["decisions"],
                    seed=settings["seed"], workers=workers)

    def run() -> dict[str, Any]:
        result, _folder = cached_exploit(recipe, settings["eval_matches"], root=stages.learners, progress=progress)
        return {**{k: result[k] for k in ("status", "abr", "budget")}, "machine": machine_words()}

    row["rise"] = stages.stage("rise", "rise.json", {"recipe": recipe_key(recipe), "matches": settings["eval_matches"],
                                                     **same_file}, run, STAGES["rise"])


def _versus(stages: AgentStages) -> dict[str, Any]:
    """The baselines stage: the agent against the heuristic, random and, for a rebuilt policy, the policy it
    replaced."""
    opponents = [spec for spec in ("heuristic", "random") if spec != stages.agent]
    previous = previous_policy(stages.agent, stages.preset)
    if previous:
        opponents.append(previous)
    settings = {"matches": stages.matches, "seed": stages.seed, **({"previous": previous} if previous else {}),
                **stages.same_file}
    return stages.stage("versus", "baselines.json", settings, lambda: stages.head_to_head(opponents, "baselines"),
                        {**STAGES["versus"], **dict.fromkeys(opponents, FIGURE)})


def _search(stages: AgentStages, recipe: BRArgs, exploit: dict[str, Any]) -> dict[str, Any]:
    """The play-time search stage of a blueprint: against the heuristic and against its strongest ABR learner
    (under the report's learners, trained again if it is only in the data file)."""

    def run() -> dict[str, Any]:
        strongest = recipe.model_copy(update={"seed": exploit["seed"]})
        learner = cached_exploit(strongest, stages.matches, root=stages.learners,
                                 progress=stages.progress)[1] / "learner.safetensors"
        return search_effect(stages.agent, stages.preset, f"ppo:{learner},greedy", stages.matches, stages.seed,
                             stages.workers, stages.progress, stages.journal)

    # "checked": searches are checked before they are played (agents/cfr/search.py); a stage stored before the
    # check lacks the field and is measured again
    return stages.stage("search", "search.json",
                        {"matches": stages.matches, "seed": stages.seed, "ms": SEARCH_MS, "checked": True,
                         "exploiter": exploit["settings"], **stages.same_file}, run, STAGES["search"])


def search_effect(agent: str, preset: str, exploiter: str, matches: int, seed: int, workers: int,
                  progress: bool, journal: Any = None) -> dict[str, Any]:
    """The blueprint and the blueprint searching at :data:`SEARCH_MS` against the heuristic and against the
    blueprint's trained best response, on the same deals (a paired comparison): the agent's win rates.
    ``journal(name)``, when given, is each tournament's :class:`MatchJournal`."""
    searched = f"{agent},search={SEARCH_MS}"
    out: dict[str, Any] = {"searched": searched}
    for name, opponent in (("heuristic", "heuristic"), ("exploiter", exploiter)):
        summary, meta = run_tournament([agent, searched, opponent], [preset], matches, seed=seed, workers=workers,
                                       progress=progress, pairs=[(agent, opponent), (searched, opponent)],
                                       journal=journal and journal(f"search-{name}"))
        out[name] = {("searched" if r["agent_a"] == searched else "blueprint"):
                     {k: r[k] for k in ("matches", "win_rate_a", "ci_low", "ci_high")} for r in summary["pairings"]}
        out[name]["seconds"] = meta["seconds"]
    return out


def bluffing(agent: str, preset: str, matches: int, seed: int, workers: int, progress: bool) -> dict[str, Any]:
    """The agent's behaviour counts over ``matches`` duplicate matches against :data:`BLUFF_OPPONENT` (which may be
    the agent itself: the tasks are made directly, so the pair need not be two distinct specs)."""
    tasks = make_tasks([agent, BLUFF_OPPONENT], [preset], matches, seed, pairs=[(agent, BLUFF_OPPONENT)])
    counts: Counter = Counter()
    for result in play_tasks(tasks, workers=workers, progress=progress):
        counts.update(result["behaviour_a"])
    return {"opponent": BLUFF_OPPONENT, "matches": len(tasks), "counts": dict(sorted(counts.items()))}


def machine() -> dict[str, Any]:
    """The machine the report runs on (its processor, cores and software), as the page states it."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            model = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import torch

    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__,
            "system": f"{platform.system()} {platform.release()}"}


def machine_words() -> str:
    """The machine in a few words, kept with each best response: its training time is only meaningful with it,
    and a report may reuse stages measured on another machine."""
    host = machine()
    return f"{host['cpu']}, {host['cores']} cores"


def agent_metadata(agent: str) -> dict[str, Any]:
    """What an agent's shipped file says of how it was made (its model card shows it): a policy's metadata, a
    blueprint's table header; nothing for an agent without a file."""
    from agents.base import make_agent

    kind = agent.partition(":")[0]
    if kind == "ppo":
        return make_agent(agent).metadata
    if kind == "cfr":
        return make_agent(agent).table.meta
    return {}


def write_model_cards(rows: list[dict[str, Any]], settings: dict[str, Any], folder: Path, log: Any) -> None:
    """The card of each measured agent that has one (:func:`training.measure.model_cards.model_card`), into ``folder``."""
    for row in rows:
        text = model_card(row, rows, agent_metadata(row["agent"]), settings)
        if text is None:
            continue
        path = folder / card_name(row)
        atomic_write(path, lambda tmp, text=text: Path(tmp).write_text(text), ".md")
        log(f"wrote {path}")


def save_figure(figure: Any, path: Path) -> None:
    """Write a matplotlib figure to ``path`` as a PNG, whole or not at all, and free it."""
    import matplotlib.pyplot as plt

    atomic_write(path, lambda tmp: figure.savefig(tmp, dpi=110, bbox_inches="tight", format="png"), ".png")
    plt.close(figure)


def write_report(root: Path, data: list[dict[str, Any]], measured: list[dict[str, Any]], settings: dict[str, Any],
                 log: Any) -> str:
    """Write the report under ``root``: the page of ``data`` (every row, measured now or kept), its data file and
    figure, the model cards of the ``measured`` agents and the choice of ``best:<preset>``; returns the page."""
    shown = list(dict.fromkeys(r["preset"] for r in data))
    command = "truco report" + ("" if shown == list(REPORT_PRESETS) else "".join(f" --preset {p}" for p in shown))
    page, figure = root / PAGE, root / PLOT
    save_figure(strength_figure(data), figure)
    text = render(data, settings, machine(), command, os.path.relpath(figure, page.parent))
    atomic_write(page, lambda tmp: Path(tmp).write_text(text), ".md")
    atomic_write_json(root / DATA, {"command": command, "settings": settings, "rows": data}, indent=1)
    logger.info(f"wrote {page}, {root / DATA} and {figure}")
    write_model_cards(measured, settings, root / CARDS, log)
    write_choices(data, root / CHOICES)
    log(f"wrote {root / CHOICES}")
    return text


def check_places(presets: list[str], root: Path, runs: Path, matches: dict[str, int] | None = None) -> None:
    """ValueError naming the first bad input, before anything is read or measured: an odd count of ``matches``
    (flag -> value), or a ``root`` whose folders could not be written (found only after hours of measuring)."""
    bad = [p for p in presets if p not in REPORT_PRESETS]
    if bad:
        raise ValueError(f"the report covers presets {list(REPORT_PRESETS)}, not {clip(repr(bad[0]))}")
    for flag, count in (matches or {}).items():
        if count < 2 or count % 2:
            raise ValueError(f"{flag} must be an even number >= 2 (each deal is played twice with the seats "
                             f"swapped), got {count}")
    if root.exists() and not root.is_dir():
        raise ValueError(f"--root {str(root)!r} is a file; give the folder the report is written into (the "
                         "repository's root)")
    if runs.exists() and not runs.is_dir():
        raise ValueError(f"--runs {str(runs)!r} is a file; give the folder for the stage files")
    for folder in (root / PAGE.parent, root / PLOT.parent, root / CARDS):
        found = next(p for p in (folder, *folder.parents) if p.exists() or p == Path(p.anchor or "."))
        where = f"--root {clip(str(root), 200)!r}: {clip(str(found), 200)!r}"
        if not found.is_dir():
            raise ValueError(f"{where} is a file, so the report's folders cannot be made in it; give the folder the "
                             "report is written into (the repository's root)")
        if not os.access(found, os.W_OK | os.X_OK):
            raise ValueError(f"{where} is not writable, so the report could not be written at its end; give a "
                             "folder you can write into")


def kept_rows(stored: dict[tuple[str, str], dict[str, Any]], presets: list[str], settings: dict[str, Any],
              path: Path) -> list[dict[str, Any]]:
    """The stored rows of the presets not measured now, which the page shows too; ValueError when they were
    measured with other settings than this run's (one page, one set of settings)."""
    kept = [r for r in stored.values() if r["preset"] not in presets]
    if kept and (made_with := stored_settings(path)) != settings:
        changed = next(k for k in settings if made_with.get(k) != settings[k])
        raise ValueError(f"{path} holds other presets measured with {changed}={made_with.get(changed)}, "
                         f"not {settings[changed]}: measure every preset (no --preset) or give another --root")
    return kept


def cli_main(args: Any) -> int:
    """``truco report``: exit 0 when the report is written, 2 on bad input (or a preset's folder of ``--runs`` in
    use by another report), 130 when interrupted."""
    presets = list(dict.fromkeys(args.preset or REPORT_PRESETS))  # a preset named twice is measured once
    root, runs = Path(args.root), Path(args.runs)
    settings = {"decisions": args.budget_decisions or STANDARD_DECISIONS, "seed": args.seed,
                "gauntlet_matches": args.gauntlet_matches, "eval_matches": args.matches}
    log = logger.info  # progress: which agent, which stage is run or reused, which file is written
    rows = []
    try:
        check_places(presets, root, runs, {"--matches": args.matches, "--gauntlet-matches": args.gauntlet_matches})
        stored = stored_rows(root / DATA, page=True)
        kept = kept_rows(stored, presets, settings, root / DATA)
        runner = StageRunner(getattr(args, "backend", "local"), args.workers)
        with contextlib.ExitStack() as held:
            for preset in presets:
                held.enter_context(hold(runs / preset, f"--runs {str(runs / preset)!r}", recursive=True))
                for agent in agents_of(preset):
                    log(f"{preset}: {agent}")
                    rows.append(measure(agent, preset, runs, settings["decisions"], args.seed, args.workers,
                                        args.gauntlet_matches, args.matches, not args.no_progress, log,
                                        stored.get((preset, agent)), runner if runner.backend == "ray" else None))
            rows = runner.finish(rows, log)
            for preset in presets:
                rise(rows, preset, runs, settings, args.workers, not args.no_progress, log, stored)
    except (ValueError, OSError) as exc:
        print(f"truco report: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ninterrupted: finished stages are kept under {runs}; run the same command to resume "
              f"({root / PAGE} is not written)", file=sys.stderr)
        return 130
    settings["finished"] = time.strftime("%Y-%m-%d")
    # a --preset run measures its presets and keeps the others' rows, so the page and the data file always show
    # every preset measured (the same settings), and no measurement is lost
    data = sorted(rows + kept, key=lambda r: list(REPORT_PRESETS).index(r["preset"]))
    print(write_report(root, data, rows, settings, log))
    return 0
