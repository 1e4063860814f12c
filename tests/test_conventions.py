"""Project conventions: library modules report progress through ``logging``, not ``print``; the command line
shows those messages on stderr, a program that imports the modules sees them only if it configures logging."""

from __future__ import annotations

import ast
import logging
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ("truco_env", "agents", "training")

#: Where a bare ``print()`` is what the code is for: the command line and its ``truco`` subcommands (their
#: tables, results and one-line errors), and Gymnasium's ``render_mode="human"``
#: (which shows the table on stdout by convention). ``"*"``: the whole module. Module-level
#: ``if __name__ == "__main__":`` blocks may print too.
ALLOWED: dict[str, set[str] | str] = {
    "training/cli/__init__.py": "*",  # the command line itself
    **{f"training/cli/{name}.py": "*" for name in  # its commands, one module each
       ("bench", "bot", "demo", "diagnose", "export", "measure", "play", "replay", "ship", "train")},
    "training/measure/evaluate.py": {"cli_main"},
    "training/measure/exploit.py": {"cli_main"},
    "training/measure/gauntlet.py": {"cli_main"},
    "training/measure/report.py": {"cli_main"},
    "training/people/serve.py": {"serve"},  # truco serve: the address to open, and "stopped"
    "training/measure/leaderboard.py": {"cli_main"},
    "training/progress.py": {"LineProgress._line"},  # a progress display, as tqdm's bar is: to the file it is given
    "truco_env/single.py": {"TrucoSingleAgentEnv.render"},
    "truco_env/aec.py": {"TrucoEnv.render"},
}


def library_files() -> list[Path]:
    return sorted(p for package in LIBRARY for p in (ROOT / package).rglob("*.py"))


def _is_main_guard(node: ast.AST) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"
            and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in node.test.comparators))


def print_calls(source: str) -> list[tuple[int, str]]:
    """(line, enclosing function's dotted name, "" at module level) of every ``print(...)`` call outside a
    module-level ``if __name__ == "__main__":`` block. Strings and comments that mention print do not count."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if not scope and _is_main_guard(child):
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, (*scope, child.name))
                continue
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Name)
                    and child.func.id == "print"):
                found.append((child.lineno, ".".join(scope)))
            visit(child, scope)

    visit(ast.parse(source), ())
    return found


def defined_names(source: str) -> set[str]:
    names: set[str] = set()

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(".".join((*scope, child.name)))
                visit(child, (*scope, child.name))
            else:
                visit(child, scope)

    visit(ast.parse(source), ())
    return names


def test_the_checker_sees_calls_not_words():
    source = ('"""Docstring: print(x) is not a call."""\n'
              "# print('comment')\n"
              "def f():\n    print('status')\n"
              "class C:\n    def g(self):\n        text = 'print(1)'\n        print(text)\n"
              "if __name__ == '__main__':\n    print('entry point')\n")
    assert print_calls(source) == [(4, "f"), (8, "C.g")]


def test_library_modules_do_not_print_outside_entry_points():
    assert library_files(), "no library modules found"
    offenders = []
    for path in library_files():
        rel = path.relative_to(ROOT).as_posix()
        allowed = ALLOWED.get(rel, set())
        if allowed == "*":
            continue
        for line, scope in print_calls(path.read_text(encoding="utf-8")):
            if scope not in allowed:
                offenders.append(f"{rel}:{line} in {scope or '<module>'}")
    assert not offenders, ("bare print() in library code; report progress with logger = "
                           "logging.getLogger(__name__) and logger.info(...), or print from the CLI layer: "
                           + ", ".join(offenders))


def test_the_allow_list_names_what_exists():
    """A renamed or removed entry point must not leave a stale permission behind."""
    for rel, allowed in ALLOWED.items():
        path = ROOT / rel
        assert path.is_file(), rel
        if allowed != "*":
            missing = allowed - defined_names(path.read_text(encoding="utf-8"))
            assert not missing, f"{rel}: no {sorted(missing)}"


CFR_CONFIG = ("trainer: exact\npreset: paulista-mini\noverrides: {{deck_ranks: [K]}}\niterations: 2\n"
              "eval_every: 2\ncheckpoint: {checkpoint}\nlogdir: null\nprogress: false\n")


def test_the_cli_shows_the_library_s_info_messages_on_stderr(tmp_path, capsys):
    pytest.importorskip("yaml")
    from training.cli import LOGGED_PACKAGES, main

    config = tmp_path / "c.yaml"
    config.write_text(CFR_CONFIG.format(checkpoint=tmp_path / "ck.npz"))
    before = {name: (logging.getLogger(name).level, logging.getLogger(name).propagate) for name in LOGGED_PACKAGES}
    assert main(["train", "cfr", "--config", str(config)]) == 0
    out, err = capsys.readouterr()
    assert "[cfr] paulista-mini:" in err and "tree built in" in err  # training.learn.cfr.train's logger.info
    assert "[cfr]" not in out  # status goes to stderr; stdout stays for the command's product
    assert not any(line.startswith(("INFO", "WARNING")) for line in err.splitlines())  # the message text alone
    # the command line's logging set-up is undone when main() returns
    assert before == {name: (logging.getLogger(name).level, logging.getLogger(name).propagate)
                      for name in LOGGED_PACKAGES}
    assert not any(logging.getLogger(name).handlers for name in LOGGED_PACKAGES)


def test_a_library_user_sees_nothing_unless_logging_is_configured(tmp_path):
    program = ("import logging, sys\n"
               "from training.learn.cfr.runconfig import parse_config\n"
               "from training.learn.cfr.train import train_exact\n"
               "if sys.argv[2] == 'configured':\n"
               "    logging.basicConfig(level=logging.INFO, format='%(name)s: %(message)s')\n"
               "train_exact(parse_config({'trainer': 'exact', 'preset': 'paulista-mini', 'iterations': 2,\n"
               "    'eval_every': 2, 'overrides': {'deck_ranks': ['K']}, 'checkpoint': sys.argv[1],\n"
               "    'logdir': None, 'progress': False}))\n")
    runs = {mode: subprocess.run([sys.executable, "-c", program, str(tmp_path / f"{mode}.npz"), mode], cwd=ROOT,
                                 capture_output=True, text=True, timeout=300, check=False)
            for mode in ("silent", "configured")}
    for proc in runs.values():
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert runs["silent"].stdout == "" and runs["silent"].stderr == ""
    assert "training.learn.cfr.train: [cfr] paulista-mini:" in runs["configured"].stderr


def test_the_code_passes_ruff():
    """The lint rules of pyproject.toml hold everywhere (``ruff check .``); ``--no-cache``: a test writes nothing
    into the repository."""
    pytest.importorskip("ruff", reason="ruff is in the dev extra")
    found = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                           cwd=ROOT, capture_output=True, text=True, check=False)
    assert found.returncode == 0, found.stdout + found.stderr


# ------------------------------------------------------------------------------------------------ one command line

#: The one module of training/ and agents/ with an ``if __name__ == "__main__":`` block: the ``truco`` command
#: itself (``python -m training.cli``). Every other tool is a ``truco`` subcommand or a script in benchmarks/ or
#: scripts/. (truco_env/encoding.py keeps its block: it prints docs/observation.md.)
ENTRY_POINTS = {"training/cli/__main__.py"}


def file_climbs(source: str) -> list[tuple[int, int]]:
    """(line, folders climbed) of every path expression built from ``__file__``: ``__file__`` is 0, the module's
    own folder 1 (``.parent``, ``os.path.dirname``, ``/ ".."``, ``os.path.join(x, "..")`` and ``.parents[k]``
    each climb), and names assigned such a path carry it. The highest point the expression reaches counts."""
    tree = ast.parse(source)
    carried: dict[str, int] = {}

    def climb(node: ast.AST) -> int | None:
        if isinstance(node, ast.Name):
            return 0 if node.id == "__file__" else carried.get(node.id)
        if isinstance(node, ast.Attribute):
            below = climb(node.value)
            return None if below is None else below + (node.attr == "parent")
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
            below = climb(node.value.value)
            k = node.slice.value if isinstance(node.slice, ast.Constant) else 0
            return None if below is None else below + int(k) + 1
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            below = climb(node.left)
            return None if below is None else below + _ups(node.right)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if isinstance(func, ast.Attribute) and climb(func.value) is not None:  # Path(...).resolve() and the like
                return climb(func.value)
            if not node.args:
                return None
            below = climb(node.args[0])
            if below is None:
                return None
            if name == "dirname":
                return below + 1
            if name == "join":
                return below + sum(_ups(arg) for arg in node.args[1:])
            return below  # Path(), abspath(), realpath(), str(), ...
        return None

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            height = climb(node.value)
            if height is not None:
                carried[node.targets[0].id] = height
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and not isinstance(node, ast.Name):
            height = climb(node)
            if height is not None:
                found.append((node.lineno, height))
    return found


def _ups(node: ast.AST) -> int:
    """How many ``..`` a path part holds (``".."``, ``"../configs"``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return sum(part == ".." for part in node.value.replace("\\", "/").split("/"))
    return 0


def test_the_climb_checker_sees_every_way_up():
    source = ("import os\nfrom pathlib import Path\n"
              "A = Path(__file__).resolve().parent.parent / 'configs'\n"
              "B = os.path.join(os.path.dirname(__file__), '..', 'configs')\n"
              "C = Path(__file__).parents[1]\n"
              "HERE = os.path.dirname(os.path.abspath(__file__))\n"
              "D = os.path.dirname(HERE)\n"
              "E = Path(__file__).parent / 'policies'\n"
              "F = Path('configs').parent.parent\n")
    highest: dict[int, int] = {}
    for line, height in file_climbs(source):
        highest[line] = max(height, highest.get(line, 0))
    assert highest == {3: 2, 4: 2, 5: 2, 6: 1, 7: 2, 8: 1}


def test_only_the_command_line_has_a_main_block():
    """No ``python -m training.X`` tools beside ``truco``: a tool a user runs is a subcommand, a measurement the
    docs quote lives in benchmarks/ (issue 74 item 6)."""
    found = sorted(path.relative_to(ROOT).as_posix() for path in library_files()
                   if path.relative_to(ROOT).parts[0] in ("training", "agents") and any(_is_main_guard(node) for node in ast.parse(path.read_text(encoding="utf-8")).body))
    assert set(found) == ENTRY_POINTS, f"if __name__ == '__main__' outside {sorted(ENTRY_POINTS)}: {found}"


def test_no_module_reads_outside_its_package_through_its_own_path():
    """A path climbed up from ``__file__`` past the package's top folder reads the clone around the package,
    which an installed wheel does not have: files outside the package come from a path the user gives (a
    default from the current directory), files it needs are package data."""
    offenders = []
    for path in library_files():
        rel = path.relative_to(ROOT)
        depth = len(rel.parts) - 1  # the folders from the package's top folder down to the module's own
        for line, height in file_climbs(path.read_text(encoding="utf-8")):
            if height > depth:
                offenders.append(f"{rel.as_posix()}:{line} climbs {height} folder(s) up from __file__")
    assert not offenders, "\n".join(sorted(set(offenders)))


def _compiled(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated ``@njit(...)``/``@njit``: a compiled kernel, where one long loop is the fast way to write it."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name) and target.id in ("njit", "jit"):
            return True
    return False


def test_no_function_outside_the_compiled_kernels_runs_over_80_lines():
    """A function a reader cannot hold in one screen does several jobs (issue 74's bound)."""
    long = [f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path in library_files() for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _compiled(node)
            and node.end_lineno - node.lineno + 1 > 80]
    assert not long, "functions over 80 lines:\n" + "\n".join(long)


def test_the_length_rule_sees_a_long_function_and_spares_a_kernel():
    body = "\n".join(f"    x{i} = {i}" for i in range(85))
    plain = ast.parse(f"def f():\n{body}\n").body[0]
    kernel = ast.parse(f"@njit(cache=True)\ndef g():\n{body}\n").body[0]
    assert plain.end_lineno - plain.lineno + 1 > 80 and not _compiled(plain) and _compiled(kernel)


def test_every_command_error_is_printed_through_one_line():
    """An error line echoes a clipped, single-line piece of whatever the exception holds (truco_env.limits.one_line):
    a raw ``{exc}`` could spill a stranger's multi-line text or a long path into the terminal."""
    import re

    raw = [f"{path.relative_to(ROOT)}:{number}" for path in library_files()
           for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
           if re.search(r'error: \{(exc|err|error)\}', line)]
    assert not raw, "print the error through one_line(...): " + ", ".join(raw)


def test_one_line_collapses_clips_and_names_the_file_of_an_os_error():
    from truco_env.limits import one_line

    assert one_line(ValueError("first\nsecond\r\nthird")) == "first second third"
    assert len(one_line(ValueError("x" * 5000))) == 601  # 600 and the ellipsis
    error = FileNotFoundError(2, "No such file or directory", "/tmp/" + "deep/" * 100 + "f.json")
    text = one_line(error)
    assert text.endswith(": No such file or directory") and len(text) < 260 and "\n" not in text


def test_modules_are_imported_under_their_own_names():
    """``from truco_env import cards`` then ``cards.deck(...)``: a module renamed to one letter at import (``as C``)
    is a second name for it that a reader must learn file by file (issue 74 item 5)."""
    aliased = [f"{path.relative_to(ROOT)}:{node.lineno} {alias.name} as {alias.asname}"
               for path in library_files() for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names
               if alias.asname is not None and len(alias.asname) == 1]
    assert not aliased, "import modules under their names:\n" + "\n".join(aliased)


def test_the_files_collected_first_exist():
    """tests/conftest.py's LONGEST_FIRST names files: a renamed one would silently lose its place."""
    from conftest import LONGEST_FIRST

    assert all((ROOT / "tests" / name).is_file() for name in LONGEST_FIRST)
