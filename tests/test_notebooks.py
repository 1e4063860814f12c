"""Every tutorial notebook executes (with tiny settings), so none of them rots."""

import importlib.util
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, monkeypatch):
    monkeypatch.setenv("TRUCO_NOTEBOOK_FAST", "1")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent.parent)}})
    client.execute()
    errors = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
              if out.get("output_type") == "error"]
    assert not errors
    # a figure shown with plt.show() must reach the notebook (a non-interactive backend such as Agg drops it)
    blank = [cell.source.splitlines()[0] for cell in notebook.cells if cell.cell_type == "code"
             and "plt.show()" in cell.source
             and not any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))]
    assert not blank, f"cells that show no figure: {blank}"


def _generator():
    """notebooks/make_notebooks.py, loaded as a module."""
    spec = importlib.util.spec_from_file_location("make_notebooks", NOTEBOOKS[0].parent / "make_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_committed_notebook_is_generated_and_carries_its_outputs(path):
    """What GitHub shows: the cells of make_notebooks.py, executed with the full settings, every cell that prints
    or shows something with its output, and no error."""
    generator = _generator()
    committed = nbformat.read(path, as_version=4)
    expected = generator.build(generator.NOTEBOOKS[path.name])
    assert [(c.cell_type, c.source) for c in committed.cells] == [(c.cell_type, c.source) for c in expected.cells], \
        "the notebook is stale: run python notebooks/make_notebooks.py " + path.name
    assert committed.metadata.get("truco_rl", {}).get("executed_with") == "full settings"
    code = [c for c in committed.cells if c.cell_type == "code"]
    silent = [c.source.splitlines()[0] for c in code
              if any(word in c.source for word in ("print(", "plt.show()", "display(")) and not c.get("outputs")]
    assert not silent, f"cells committed without their output: {silent}"
    assert not [out for c in code for out in c.get("outputs", []) if out.get("output_type") == "error"]
