"""Writes the tutorial notebooks from the cell sources below (so they stay reviewable as plain Python), then
executes them so that the committed notebooks carry their outputs (text, tables and figures).

Run: python notebooks/make_notebooks.py [--fast] [--no-execute] [NAME ...]. ``--fast`` sets TRUCO_NOTEBOOK_FAST=1
(tiny settings whose numbers mean nothing; the tests use it to execute every notebook in seconds), ``--no-execute``
writes the cells without outputs. The kernel runs in a temporary folder that is also its TMPDIR, so what a
notebook trains or writes never lands in the repository and is removed afterwards."""

import argparse
import os
import sys
import tempfile
from pathlib import Path
from textwrap import dedent

import nbformat

HERE = Path(__file__).resolve().parent

FAST = """
import os
FAST = os.environ.get("TRUCO_NOTEBOOK_FAST") == "1"   # CI runs every notebook with tiny settings
"""

TOUR = [
    ("md", """
     # A tour of the Truco environment

     Deal, observe, step, render, record and replay: the PettingZoo AEC environment over the rules engine.
     """),
    ("code", FAST),
    ("code", """
     import json
     import numpy as np
     import truco_env
     from truco_env.encoding import OBS_OFFSETS

     env = truco_env.env("argentine", render_mode="ansi")
     deal = {"hands": [["7c", "6c", "3e"], ["2o", "1b", "4b"]], "vira": None, "dealer": 1}
     env.reset(seed=7, options={"deal": deal})
     print(env.render())
     """),
    ("md", """
     ## Observe

     Each agent sees one float32 vector (the same layout for every preset) and a mask of its legal actions.
     Named slices come from `OBS_OFFSETS` (see `docs/observation.md`).
     """),
    ("code", """
     obs = env.observe("player_0")
     names = env.unwrapped.action_names
     start, end = OBS_OFFSETS["hand"]
     print("hand:", [names[i].split(":")[1] for i in np.flatnonzero(obs["observation"][start:end])])
     print("legal:", [names[i] for i in np.flatnonzero(obs["action_mask"])])
     """),
    ("md", "## Step with named actions: the worked example T03 of docs/rules.md"),
    ("code", """
     for name in ["envido", "quiero", "play:3e", "play:2o", "play:7c", "truco", "quiero", "play:1b", "play:4b",
                  "play:6c"]:
         env.step(env.unwrapped.action_id(name))
     print(env.unwrapped.game.score)   # (4, 0), as docs/rules.md works it out
     print(env.render())
     """),
    ("md", "## A whole random match, and the replay of its record"),
    ("code", """
     from truco_env.records import replay_record

     env.reset(seed=1)
     rng = np.random.default_rng(1)
     for agent in env.agent_iter():
         obs, reward, terminated, truncated, info = env.last()
         env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
     record = env.unwrapped.match_record(include_legal=True)
     print(len(record["hands"]), "hands, winner team", record["winner"])
     replayed = replay_record(json.loads(json.dumps(record)))
     assert replayed.match_record() == env.unwrapped.match_record()
     print("the record replays")
     """),
]

EXPORT = [
    ("md", """
     # Exporting a policy and running it with onnxruntime

     Train a tiny PPO policy, export it to ONNX with its metadata and test vectors, and run it without torch.
     """),
    ("code", FAST),
    ("code", """
     import json
     import tempfile
     import numpy as np
     from training.learn.ppo import PPOArgs, train_ppo

     folder = tempfile.mkdtemp()
     args = PPOArgs(preset="argentine", run_dir=folder, total_decisions=2000 if FAST else 100_000,
                    batch_decisions=1000 if FAST else 8192, tables=16, eval_every=0, eval_opponents=(),
                    scripted={"random": 0.3})
     policy = train_ppo(args, progress_bar=False)
     print(policy)
     """),
    ("code", """
     from training.people.export import export_onnx, write_test_vectors

     model, meta = export_onnx(policy, folder + "/argentine.onnx")
     vectors = write_test_vectors(model, folder + "/argentine.test_vectors.json", ["argentine"], 5)
     info = json.load(open(meta))
     print(info["inputs"])
     print(info["observation"]["fields"][:3])
     """),
    ("md", "## Run it with onnxruntime alone"),
    ("code", """
     import onnxruntime as ort

     session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
     vector = json.load(open(vectors))["vectors"][0]
     probs, value = session.run(["probabilities", "value"], {
         "observation": np.array([vector["observation"]], dtype=np.float32),
         "action_mask": np.array([vector["action_mask"]], dtype=np.int8)})
     print("largest difference from the test vector:", np.abs(probs[0] - vector["probabilities"]).max())
     names = info["actions"]["argentine"]
     print({names[i]: round(float(p), 3) for i, p in enumerate(probs[0]) if p > 0})
     """),
    ("code", """
     from agents import make_agent
     from agents.base import observation_for
     from truco_env import TrucoState, make_config
     from truco_env import actions

     bot, rival = make_agent("onnx:" + model), make_agent("random")
     wins = 0
     for match in range(4 if FAST else 100):
         state = TrucoState.new(make_config("argentine"), seed=match)
         while not state.is_over:
             agent = bot if state.actor == match % 2 else rival
             state.apply(actions.action_name(agent.act(observation_for(agent, state, state.actor)), "argentine"))
         wins += state.winner == match % 2
     print("the exported policy won", wins, "matches")
     """),
]

CFR = [
    ("md", """
     # CFR on a research preset: exploitability and bluffing

     `paulista-mini` is Truco Paulista cut down to one card each from a 12-card deck plus the vira, with the
     whole truco/seis/nove/doze ladder: small enough to walk the whole game tree and compute exact NashConv.
     """),
    ("code", FAST),
    ("code", """
     from truco_env import make_config
     from training.learn.cfr.tree import build_tree
     from training.learn.cfr.solver import CFRSolver

     tree = build_tree(make_config("paulista-mini"))
     print(tree.num_nodes, "histories,", tree.num_infosets, "information sets")
     """),
    ("code", """
     solver = CFRSolver(tree, algorithm="cfr+")
     curve = []
     for step in range(4 if FAST else 40):
         solver.iterate(1 if FAST else 2)
         curve.append((solver.iteration, solver.nash_conv()))
     print(curve[-1])
     """),
    ("code", """
     import matplotlib.pyplot as plt

     fig, ax = plt.subplots(figsize=(5, 3))
     ax.loglog([i for i, _ in curve], [v for _, v in curve], marker="o")
     ax.set_xlabel("CFR+ iterations")
     ax.set_ylabel("NashConv (points)")
     ax.set_title("paulista-mini")
     plt.show()
     """),
    ("md", """
     ## Bluffing at equilibrium

     The probability of each call against the caller's card strength, and the share of calls made with the
     weakest third of hands.
     """),
    ("code", """
     from training.learn.cfr.bluff import call_profile
     from training.measure.tournament_files import OKABE_ITO

     profile = call_profile(tree, solver.average_policy())
     fig, ax = plt.subplots(figsize=(5, 3))
     ax.set_prop_cycle(color=OKABE_ITO)   # colours told apart with any colour vision
     for name, entry in profile.items():
         ax.plot(entry["x"], entry["p"], marker=".", label=name)
         print(f"{name}: {entry['share_with_weakest_third']:.0%} of its calls come from the weakest third")
     ax.set_xlabel("trick strength of the card")
     ax.set_ylabel("probability of the call")
     ax.legend()
     plt.show()
     """),
]

PPO = [
    ("md", """
     # PPO: training curves from TensorBoard, then a tournament

     A short PPO run (masked self-play against a small league), its training curves read back from the
     TensorBoard event files, and a duplicate-deal tournament of the trained policy against a random player and
     the heuristic, with the tournament's plots. `TRUCO_NOTEBOOK_FAST=1` makes everything tiny.
     """),
    ("code", FAST),
    ("code", """
     import tempfile
     from training.learn.ppo import PPOArgs, train_ppo

     run_dir = tempfile.mkdtemp(prefix="ppo_")
     args = PPOArgs(preset="argentine", run_dir=run_dir, seed=1,
                    total_decisions=3000 if FAST else 400_000, tables=16 if FAST else 64,
                    batch_decisions=1000 if FAST else 8192, scripted={"random": 0.2},
                    snapshot_every=1 if FAST else 5,
                    eval_every=1 if FAST else 10, eval_matches=4 if FAST else 100, eval_opponents=("random",))
     policy = train_ppo(args, progress_bar=False)
     print("policy:", policy)
     """),
    ("md", """
     ## Training curves from the TensorBoard logs

     `train_ppo` writes CleanRL's tags (`losses/*`, `charts/*`) plus `league/*` and the periodic evaluation
     (`eval/*`) to `run_dir/tb`. TensorBoard's `EventAccumulator` reads them back without starting TensorBoard
     (`tensorboard --logdir` shows the same curves in the browser).
     """),
    ("code", """
     from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

     logs = EventAccumulator(run_dir + "/tb")
     logs.Reload()
     tags = logs.Tags()["scalars"]
     print(tags)
     curves = {tag: ([e.step for e in logs.Scalars(tag)], [e.value for e in logs.Scalars(tag)]) for tag in tags}
     """),
    ("code", """
     import matplotlib.pyplot as plt
     from training.measure.statistics import wilson_interval

     shown = {"losses/policy_loss": "policy loss", "losses/value_loss": "value loss",
              "losses/entropy": "policy entropy", "losses/approx_kl": "approximate KL divergence",
              "losses/explained_variance": "value: explained variance",
              "eval/win_rate_vs_random": "win rate against random (95% interval)"}
     fig, axes = plt.subplots(2, 3, figsize=(11, 5.5))
     for ax, (tag, title) in zip(axes.flat, shown.items()):
         steps, values = curves.get(tag, ([], []))
         if tag.startswith("eval/"):  # each point: args.eval_matches duplicate matches
             bounds = [wilson_interval(v * args.eval_matches, args.eval_matches) for v in values]
             errors = [[v - low for v, (low, _) in zip(values, bounds)],
                       [high - v for v, (_, high) in zip(values, bounds)]]
             ax.errorbar(steps, values, yerr=errors, marker="o", capsize=3)
             ax.set_ylim(0, 1)
         else:
             ax.plot(steps, values, marker="o")
         ax.set_title(title, fontsize=10)
         ax.set_xlabel("learner decisions")
     fig.tight_layout()
     plt.show()
     """),
    ("md", """
     ## A duplicate-deal tournament of the result

     The trained policy plays as the agent spec `ppo:PATH` against `random` and `heuristic`: every deal is played
     twice with the seats swapped, so both sides hold the same cards (`docs/evaluation.md`). `write_outputs`
     writes the CSV tables, `report.md`, `results.json` and the two plots.
     """),
    ("code", """
     import os
     from pathlib import Path
     from IPython.display import Image, Markdown, display
     from training.measure.evaluate import run_tournament
     from training.measure.tournament_files import markdown_report, write_outputs

     os.chdir(run_dir)  # so that the policy's spec, and the labels of the plots, stay short
     agents = ["ppo:policy.safetensors", "random", "heuristic"]
     summary, meta = run_tournament(agents, ["argentine"], matches=2 if FAST else 200, seed=0,
                                    workers=1 if FAST else 2)
     written = write_outputs(Path("eval"), summary, meta)
     print([p.name for p in written])
     display(Markdown(markdown_report(summary)))
     """),
    ("code", """
     display(Image(filename="eval/winrate_heatmap.png"))
     display(Image(filename="eval/ratings.png"))
     """),
]

NOTEBOOKS = {"01_environment_tour.ipynb": TOUR, "02_cfr_research_preset.ipynb": CFR,
             "03_ppo_training_and_tournament.ipynb": PPO, "04_export_onnx.ipynb": EXPORT}


def build(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [(nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell)(
        dedent(source).strip()) for kind, source in cells]
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index:02d}"  # stable ids: regenerating leaves unchanged cells byte for byte equal
    return notebook


def execute(notebook: nbformat.NotebookNode, folder: str, timeout: int) -> None:
    """Run every cell in a fresh kernel whose working folder is ``folder`` (no timing metadata is recorded)."""
    import nbclient

    nbclient.NotebookClient(notebook, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": folder}}).execute()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python notebooks/make_notebooks.py", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"notebooks to write (default: all of {list(NOTEBOOKS)})")
    parser.add_argument("--fast", action="store_true", help="execute with TRUCO_NOTEBOOK_FAST=1 (tiny settings)")
    parser.add_argument("--no-execute", action="store_true", help="write the cells without running them")
    parser.add_argument("--timeout", type=int, default=7200, help="seconds a cell may run (default: %(default)s)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in NOTEBOOKS]
    if unknown:
        parser.error(f"unknown notebook {unknown[0]!r}")
    with tempfile.TemporaryDirectory(prefix="truco_notebooks_") as folder:
        # the kernel inherits this environment: temporary files in the folder, no bytecode written in the repository,
        # the repository importable from there even without an editable install
        os.environ.update(TMPDIR=folder, PYTHONDONTWRITEBYTECODE="1",
                          PYTHONPATH=os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")])))
        if args.fast:
            os.environ["TRUCO_NOTEBOOK_FAST"] = "1"
        else:
            os.environ.pop("TRUCO_NOTEBOOK_FAST", None)
        for name in args.names or NOTEBOOKS:
            notebook = build(NOTEBOOKS[name])
            if not args.no_execute:
                execute(notebook, folder, args.timeout)
                notebook.metadata["truco_rl"] = {"executed_with": "fast settings" if args.fast else "full settings"}
            nbformat.write(notebook, HERE / name)
            print("wrote", name, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
