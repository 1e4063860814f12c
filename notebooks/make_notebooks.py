"""Writes the tutorial notebooks from the cell sources below (so they stay reviewable as plain Python).

Run: python notebooks/make_notebooks.py. Every notebook reads TRUCO_NOTEBOOK_FAST=1 (set by the tests) to use
tiny settings, so CI executes them all in seconds."""

from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent

FAST = """import os
FAST = os.environ.get("TRUCO_NOTEBOOK_FAST") == "1"   # CI runs every notebook with tiny settings"""

NOTEBOOKS = {
    "01_environment_tour.ipynb": [
        ("md", "# A tour of the Truco environment\n\nDeal, observe, step, render, record and replay: the "
               "PettingZoo AEC environment over the rules engine (`truco_env`)."),
        ("code", FAST),
        ("code", "import json, numpy as np\nimport truco_env\nfrom truco_env.encoding import OBS_OFFSETS\n\n"
                 "env = truco_env.env(\"argentine\", render_mode=\"ansi\")\n"
                 "env.reset(seed=7, options={\"deal\": {\"hands\": [[\"7c\", \"6c\", \"3e\"], [\"2o\", \"1b\", \"4b\"]],"
                 " \"vira\": None, \"dealer\": 1}})\nprint(env.render())"),
        ("md", "## Observe\n\nEach agent sees one float32 vector (same layout for every preset) and a mask of its "
               "legal actions. Named slices come from `OBS_OFFSETS` (see `docs/observation.md`)."),
        ("code", "obs = env.observe(\"player_0\")\nstart, end = OBS_OFFSETS[\"hand\"]\n"
                 "hand = [env.unwrapped.action_names[i].split(':')[1] for i in np.flatnonzero(obs['observation'][start:end])]\n"
                 "legal = [env.unwrapped.action_names[i] for i in np.flatnonzero(obs['action_mask'])]\n"
                 "print('hand:', hand)\nprint('legal:', legal)"),
        ("md", "## Step with named actions\n\nThe worked example of RULES.md (T03): envido, tricks, a truco."),
        ("code", "for name in [\"envido\", \"quiero\", \"play:3e\", \"play:2o\", \"play:7c\", \"truco\", \"quiero\","
                 " \"play:1b\", \"play:4b\", \"play:6c\"]:\n    env.step(env.unwrapped.action_id(name))\n"
                 "print(env.unwrapped.game.score)   # (4, 0) as the seed says\nprint(env.render())"),
        ("md", "## Play a whole match at random, then replay its record"),
        ("code", "env.reset(seed=1)\nrng = np.random.default_rng(1)\nfor agent in env.agent_iter():\n"
                 "    obs, reward, terminated, truncated, info = env.last()\n"
                 "    env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs['action_mask']))))\n"
                 "record = env.unwrapped.match_record(include_legal=True)\n"
                 "print(len(record['hands']), 'hands, winner team', record['winner'])\n\n"
                 "from truco_env.records import replay_record\nreplayed = replay_record(json.loads(json.dumps(record)))\n"
                 "assert replayed.match_record() == env.unwrapped.match_record()\nprint('record replays')"),
    ],
    "04_export_onnx.ipynb": [
        ("md", "# Exporting a policy and running it with onnxruntime\n\nTrain a tiny PPO policy, export it to "
               "ONNX with its metadata and test vectors, and run it without torch (`OnnxAgent`)."),
        ("code", FAST),
        ("code", "import json, tempfile, numpy as np\nfrom training.ppo.train import PPOArgs, train\n\n"
                 "folder = tempfile.mkdtemp()\n"
                 "args = PPOArgs(preset='argentine', run_dir=folder, total_updates=2 if FAST else 30, num_tables=16,\n"
                 "               batch_steps=512 if FAST else 2048, minibatch_size=256, eval_every=0,\n"
                 "               eval_opponents=('random',), league={'self': 0.5, 'random': 0.5})\n"
                 "policy = train(args, progress=False)\nprint(policy)"),
        ("code", "from training.export import export_onnx, write_test_vectors\n"
                 "model, meta = export_onnx(policy, folder + '/argentine.onnx')\n"
                 "vectors = write_test_vectors(model, folder + '/argentine.test_vectors.json', ['argentine'], 5)\n"
                 "info = json.load(open(meta))\nprint(info['inputs'])\nprint(info['observation']['fields'][:3])"),
        ("md", "## Run it with onnxruntime alone"),
        ("code", "import onnxruntime as ort\nsession = ort.InferenceSession(model, providers=['CPUExecutionProvider'])\n"
                 "vector = json.load(open(vectors))['vectors'][0]\n"
                 "probs, value = session.run(['probabilities', 'value'], {\n"
                 "    'observation': np.array([vector['observation']], dtype=np.float32),\n"
                 "    'action_mask': np.array([vector['action_mask']], dtype=np.int8)})\n"
                 "print('largest difference from the test vector:', np.abs(probs[0] - vector['probabilities']).max())\n"
                 "names = info['actions']['argentine']\n"
                 "print({names[i]: round(float(p), 3) for i, p in enumerate(probs[0]) if p > 0})"),
        ("code", "from agents import make_agent\nfrom agents.base import observation_for\n"
                 "from truco_env import TrucoState, make_config, actions as A\n"
                 "bot, rival = make_agent('onnx:' + model), make_agent('random')\nwins = 0\n"
                 "for match in range(4 if FAST else 100):\n    state = TrucoState.new(make_config('argentine'), seed=match)\n"
                 "    while not state.is_over:\n        agent = bot if state.actor == match % 2 else rival\n"
                 "        state.apply(A.action_name(agent.act(observation_for(agent, state, state.actor)), 'argentine'))\n"
                 "    wins += state.winner == match % 2\nprint('the exported policy won', wins, 'matches')"),
    ],
}


def build(name: str, cells: list[tuple[str, str]]) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
                      for kind, src in cells]
    nbformat.write(notebook, HERE / name)


if __name__ == "__main__":
    for notebook_name, notebook_cells in NOTEBOOKS.items():
        build(notebook_name, notebook_cells)
        print("wrote", notebook_name)
