"""The wheel carries every package of the project, not only what an editable install happens to find."""

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import setuptools

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the check needs to run on one version only

ROOT = Path(__file__).resolve().parent.parent
TOP = ("truco_env", "agents", "training")


def test_every_package_of_the_project_goes_into_the_wheel():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    find = config["packages"]["find"]
    assert find["namespaces"] is True  # the policies' folders are data packages, listed, not warned about
    found = set(setuptools.find_namespace_packages(str(ROOT), include=find["include"], exclude=find["exclude"]))
    on_disk = {".".join(path.parent.relative_to(ROOT).parts) for top in TOP for path in (ROOT / top).rglob("__init__.py")}
    assert {"training.learn", "training.learn.cfr", "training.measure", "training.people", "training.cli"} <= on_disk
    data = {"agents.policies", "agents.policies.gauntlet"}  # the shipped policies ride along as data
    assert found == on_disk | data  # nothing missing, nothing outside the three top-level packages (tests, notebooks)
    assert "*.safetensors" in config["package-data"]["agents.policies"]
    assert "*.safetensors" in config["package-data"]["agents.policies.gauntlet"]


CORE = {"numpy", "numba", "gymnasium", "pettingzoo"}
OPTIONAL = ("torch", "tensorboard", "safetensors", "pydantic", "yaml", "tqdm", "matplotlib", "openskill", "rich",
            "onnx", "onnxruntime", "onnxscript", "ray", "pyspiel")

#: Runs the core features in a process where every optional dependency fails to import, as in a core install.
CORE_ONLY = '''
import importlib.abc, json, sys
BLOCKED = set(sys.argv[1].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())

from truco_env import env, make_config, TrucoState
from agents.base import make_agent
from truco_env.turns import ask_agent, play_turns
from training.cli import main

aec = env("argentine")
aec.reset(seed=3)
for agent in aec.agent_iter():
    observation, reward, termination, truncation, info = aec.last()
    legal = [i for i, ok in enumerate(observation["action_mask"]) if ok] if not (termination or truncation) else []
    aec.step(legal[0] if legal else None)
print("env episode done")
state = TrucoState.new(make_config("argentine"), seed=5)
bots = [make_agent("heuristic"), make_agent("random")]
for seat, bot in enumerate(bots):
    bot.seed(seat)
    bot.reset(seat)
play_turns(state, lambda seat: ask_agent(bots[seat], state, seat))
print("heuristic match winner", state.winner)
with open(sys.argv[2], "w") as handle:
    json.dump(state.match_record(), handle)
assert main(["replay", sys.argv[2]]) == 0
for command in (["eval", "--agents", "heuristic", "random"], ["play"], ["train", "ppo"]):
    assert main(command) == 2
'''


def test_the_core_dependencies_are_the_engine_and_the_environments():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=!~\[ ;]", dep, maxsplit=1)[0].lower() for dep in project["dependencies"]}
    assert names == CORE
    extras = project["optional-dependencies"]
    assert {"train", "eval", "play", "export", "ray", "spiel", "all", "dev"} <= set(extras)
    assert any("torch" in dep for dep in extras["train"]) and not any("torch" in dep for dep in extras["eval"])
    assert "truco-rl[all,rllib]" in extras["dev"]  # the tests run every command and the RLlib example
    # the CLI's one-line error for a missing module names an extra: it must be one pyproject.toml defines
    from training.cli import COMMAND_EXTRAS, EXTRAS

    pip_name = {"yaml": "pyyaml", "pyspiel": "open-spiel"}
    for module, named in EXTRAS.items():
        for extra in named:
            deps = {re.split(r"[<>=!~\[ ;]", dep, maxsplit=1)[0].lower() for dep in extras[extra]}
            assert pip_name.get(module, module) in deps, f"the CLI says extra {extra!r} installs {module!r}"
    assert set(COMMAND_EXTRAS.values()) <= set(extras)


def test_the_core_install_plays_replays_and_names_the_missing_extra(tmp_path):
    """An env episode, a heuristic match and `truco replay` need nothing optional; a command that needs an extra
    says which, in one line."""
    result = subprocess.run([sys.executable, "-c", CORE_ONLY, ",".join(OPTIONAL), str(tmp_path / "match.json")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-2000:]
    assert "env episode done" in result.stdout and "heuristic match winner" in result.stdout
    assert "OK," in result.stdout  # truco replay
    errors = result.stderr.strip().splitlines()
    assert errors == [
        # pydantic comes with both train and eval: the command's own extra is the one named
        ("truco eval: error: this command needs 'pydantic', which the core install leaves out: "
         "pip install 'truco-rl[eval]'"),
        "truco play: error: this command needs 'rich', which the core install leaves out: pip install 'truco-rl[play]'",
        ("truco train ppo: error: this command needs 'torch', which the core install leaves out: "
         "pip install 'truco-rl[train]'"),
    ], result.stderr


@pytest.mark.slow
def test_the_wheel_installs_without_extras_into_a_fresh_venv(tmp_path):
    """The real thing: build the wheel, install it with no extras into an empty venv (needs the package index),
    and run the same core features there."""
    try:
        socket.create_connection(("pypi.org", 443), timeout=3).close()
    except OSError as error:
        pytest.skip(f"the package index is unreachable ({error})")
    source = tmp_path / "source"  # a copy: building in place would write build/ into the repository
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "runs", "build", "dist",
                                                                "node_modules", "*.egg-info", "__pycache__"))
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels),
                    str(source)], check=True, capture_output=True, timeout=600)
    wheel = next(wheels.glob("truco_rl-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], check=True, timeout=1200)
    installed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], check=True, capture_output=True,
                               text=True).stdout
    assert '"torch"' not in installed and '"matplotlib"' not in installed
    result = subprocess.run([str(python), "-c", CORE_ONLY, "none", str(tmp_path / "match.json")], cwd=tmp_path,
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "heuristic match winner" in result.stdout and "OK," in result.stdout


def test_the_editable_install_of_setup_sh_warns_of_nothing(tmp_path):
    """scripts/setup.sh installs quietly: no packaging warning from the project's own configuration reaches a
    newcomer. pip shows the warnings its build backend raises, so the editable build of a copy runs here under the
    warning filter setup.sh gives pip, and must raise none (nothing is downloaded)."""
    script = (ROOT / "scripts" / "setup.sh").read_text()
    filters = re.search(r'PYTHONWARNINGS="([^"]+)"', script)
    assert filters, "setup.sh no longer sets its warning filter for the editable install"
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "runs", "build", "dist",
                                                                "node_modules", "*.egg-info", "__pycache__"))
    build = ("import warnings, setuptools.build_meta as backend\n"
             "with warnings.catch_warnings(record=True) as seen:  # the PYTHONWARNINGS filters stay in force\n"
             f"    backend.build_editable({str(tmp_path / 'wheel')!r})\n"
             "print('WARNINGS', [str(w.message).splitlines()[0] for w in seen])\n")
    result = subprocess.run([sys.executable, "-c", build], cwd=source, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "PYTHONWARNINGS": filters.group(1)}, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "WARNINGS []" in result.stdout, result.stdout[-2000:]
