"""Imports go one way: ``training`` -> ``agents`` -> ``truco_env``.

Why: the environment must install and run without the agents (and agents without the trainers), and a
downward import hidden inside a function is still a dependency, so every import statement counts: top level,
inside functions, ``import x`` and ``from x import y``, relative ones resolved to absolute names."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: What each layer must never import (by top-level package name).
#: The scripts around the package (benchmarks/, examples/, scripts/) are never imported by it: an installed
#: wheel has none of them.
OUTSIDE = {"benchmarks", "examples", "scripts", "tests"}
FORBIDDEN = {"training": OUTSIDE, "agents": {"training"} | OUTSIDE, "truco_env": {"agents", "training"} | OUTSIDE}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[str, int]]:
    """Every module the source of ``module`` imports, with its line, in line order; ``from . import x`` gives both
    the package and ``package.x`` (x may be a submodule)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = []
            if node.level:
                if node.level > len(package):
                    raise ValueError(f"{module}:{node.lineno}: relative import beyond the top-level package")
                base = package[:len(package) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            found.append((target, node.lineno))
            if node.module is None:
                found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
    return sorted(found, key=lambda item: item[1])


def test_imported_modules_resolves_relative_and_nested_imports():
    source = ("import numpy as np\nfrom .base import Agent\nfrom . import cfr_table\n"
              "def f():\n    from training.learn.cfr import policy\n    import truco_env.encoding\n")
    assert imported_modules(source, "agents.cfr", is_package=False) == [
        ("numpy", 1), ("agents.base", 2), ("agents", 3), ("agents.cfr_table", 3), ("training.learn.cfr", 5),
        ("truco_env.encoding", 6)]
    assert imported_modules("from .sub import x\nfrom .. import y\n", "agents.policies.mod", False) == [
        ("agents.policies.sub", 1), ("agents", 2), ("agents.y", 2)]
    assert imported_modules("from .base import A\n", "agents", is_package=True) == [("agents.base", 1)]
    with pytest.raises(ValueError, match="beyond the top-level package"):
        imported_modules("from .. import agents\n", "truco_env.single", is_package=False)


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_only_downward(layer):
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files, f"no Python files under {layer}/"
    violations = []
    for path in files:
        module = module_name(path)
        for name, line in imported_modules(path.read_text(encoding="utf-8"), module, path.name == "__init__.py"):
            if name.split(".")[0] in FORBIDDEN[layer]:
                violations.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not violations, f"{layer}/ must not import {sorted(FORBIDDEN[layer])}:\n" + "\n".join(violations)


def test_the_rules_layer_runs_without_numpy():
    """truco_env's docstring promises that the rules (cards, config, engine) and the records need no numpy: a
    match is played, recorded and replayed in a process where numpy cannot be imported."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['numpy'] = None\n"
            "import json, random, truco_env\n"
            "from truco_env.engine import TrucoState\n"
            "from truco_env.records import load_record, replay_record\n"
            "from truco_env.limits import loads_json\n"
            "state = TrucoState.new(truco_env.make_config('paulista-2v2'), seed=3)\n"
            "rng = random.Random(0)\n"
            "while not state.is_over:\n"
            "    state.apply(rng.choice(state.legal_actions()))\n"
            "text = json.dumps(state.match_record())\n"
            "print(replay_record(loads_json(text)).winner == state.winner)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0 and result.stdout.strip() == "True", result.stderr[-1500:]


def import_graph(layers: tuple[str, ...] = ("truco_env", "agents", "training")) -> dict[str, set[str]]:
    """Module -> the project's modules it imports (every import statement, as the layer rule counts them)."""
    modules = {module_name(p): p for layer in layers for p in (ROOT / layer).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for name, _ in imported_modules(path.read_text(encoding="utf-8"), module, path.name == "__init__.py"):
            while name and name not in modules:  # "from pkg.mod import function": the module is the prefix
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def test_no_module_imports_itself_round_a_circle():
    """A circle of imports (a trainer importing the gauntlet that imports the trainer) makes a change anywhere on it
    a change everywhere on it; the modules of the package import one way (package __init__ files, which gather
    their submodules, aside)."""
    graph = {m: {t for t in ts if not t.endswith("__init__") and t not in ("agents", "training", "truco_env",
                                                                          "training.learn", "training.measure",
                                                                          "training.people", "training.learn.cfr")}
             for m, ts in import_graph().items()}
    state: dict[str, int] = {}
    circle: list[str] = []

    def visit(node: str, path: list[str]) -> bool:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                circle.extend(path[path.index(target):] + [node, target] if target in path else [node, target])
                return True
            if state.get(target) is None and visit(target, [*path, node]):
                return True
        state[node] = 2
        return False

    for module in sorted(graph):
        if state.get(module) is None and visit(module, []):
            break
    assert not circle, "import circle: " + " -> ".join(dict.fromkeys(circle)) + f" -> {circle[-1]}"


def test_training_is_rooms_and_a_small_floor():
    """A newcomer finds where a thing lives from the folder names: ``training/`` holds its rooms (each saying in
    its docstring what belongs there) and at most ten modules of its own, the ones every room uses."""
    top = ROOT / "training"
    modules = sorted(p.name for p in top.glob("*.py"))
    assert len(modules) <= 10, f"training/ holds {len(modules)} modules at its top: {modules}; move some into a room"
    rooms = sorted(p.name for p in top.iterdir() if (p / "__init__.py").exists())
    assert rooms == ["cli", "learn", "measure", "people"]
    for room in [*rooms, "learn/cfr"]:
        doc = ast.get_docstring(ast.parse((top / room / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc) > 60, f"training/{room}/__init__.py must say what belongs there"
