"""Every tutorial notebook executes (with tiny settings), so none of them rots."""

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
