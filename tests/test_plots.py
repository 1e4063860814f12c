"""The project's plots: colours told apart with any colour vision, win rates with their 95% intervals, labels a
user can read (agents by name, not by file path)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

from training.measure.tournament_files import (
    COLOUR_MAPS,
    OKABE_ITO,
    display_name,
    display_names,
    write_plots,
)

ROOT = Path(__file__).resolve().parent.parent
PLOTTING_SOURCES = sorted([*(p for d in ("training", "agents", "truco_env", "benchmarks")
                              for p in (ROOT / d).rglob("*.py")), ROOT / "notebooks" / "make_notebooks.py"])
#: Colour maps that mislead or that red-green colour blindness cannot read.
BAD_MAPS = {"jet", "rainbow", "gist_rainbow", "hsv", "nipy_spectral", "turbo", "RdYlGn", "RdGn", "Spectral"}
POLICY = "ppo:runs/pilot/argentine-e-5M.safetensors"


def _strings(path: Path) -> list[tuple[int, str]]:
    """String constants of the code; the notebook generator's cell sources are parsed as code too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    if path.name == "make_notebooks.py":
        for line, text in list(found):
            try:
                cell = ast.parse(textwrap.dedent(text))
            except SyntaxError:
                continue
            found += [(line, n.value) for n in ast.walk(cell) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return found


def test_plots_use_colour_blind_safe_colours():
    bad = []
    for path in PLOTTING_SOURCES:
        rel = path.relative_to(ROOT).as_posix()
        for line, text in _strings(path):
            name = text.removesuffix("_r")
            if name in BAD_MAPS:
                bad.append(f"{rel}:{line}: colour map {text!r} (use one of {COLOUR_MAPS})")
            if len(text) == 7 and text.startswith("#") and text.upper() not in OKABE_ITO:
                try:
                    int(text[1:], 16)
                except ValueError:
                    continue
                bad.append(f"{rel}:{line}: colour {text!r} is not in the Okabe-Ito palette (training.measure.tournament_files.OKABE_ITO)")
    assert not bad, "\n".join(bad)


def test_display_names_drop_folders_and_extensions_only():
    assert display_name(POLICY) == "ppo:argentine-e-5M"
    assert display_name("ppo:/tmp/run/learner.safetensors,greedy") == "ppo:learner,greedy"
    assert display_name("cfr:runs/cfr/ck.npz") == "cfr:ck"
    for spec in ("random", "heuristic:bluff=0.35", "ppo:argentine", "threshold:bet=0.6,call=0.4"):
        assert display_name(spec) == spec
    # two files of the same name stay told apart
    assert display_names(["ppo:a/policy.safetensors", "ppo:b/policy.safetensors", "random"]) == {
        "ppo:a/policy.safetensors": "ppo:a/policy.safetensors", "ppo:b/policy.safetensors": "ppo:b/policy.safetensors",
        "random": "random"}


@pytest.fixture
def figures(monkeypatch):
    """Every figure saved during the test, as it was when saved."""
    saved: list[Figure] = []
    original = Figure.savefig

    def savefig(self, *args, **kwargs):
        saved.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


def _labels(fig: Figure) -> list[str]:
    texts = [fig._suptitle.get_text()] if fig._suptitle else []
    for ax in fig.axes:
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        texts += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
    return [t for t in texts if t]


def test_tournament_plots(tmp_path, figures):
    agents = [POLICY, "heuristic", "random"]
    pairings = [{"preset": "argentine", "agent_a": a, "agent_b": b, "win_rate_a": rate, "ci_low": rate - 0.05,
                 "ci_high": rate + 0.05}
                for a, b, rate in ((POLICY, "heuristic", 0.6), (POLICY, "random", 0.9), ("heuristic", "random", 0.8))]
    ratings = {"overall": [{"agent": a, "mu": 30 - 3 * i, "sigma": 1.0} for i, a in enumerate(agents)]}
    write_plots(tmp_path, {"pairings": pairings, "ratings": ratings}, agents, ["argentine"])
    heat, bars = figures
    image = heat.axes[0].images[0]
    assert image.get_cmap().name in COLOUR_MAPS
    cells = [t.get_text() for t in heat.axes[0].texts]
    assert "60%\n[55, 65]" in cells and "40%\n[35, 45]" in cells  # each win rate with its 95% interval
    assert any(isinstance(c, ErrorbarContainer) for c in bars.axes[0].containers)
    for fig in figures:
        labels = _labels(fig)
        assert "ppo:argentine-e-5M" in labels
        assert not [t for t in labels if "/" in t or ".safetensors" in t], labels


def test_gauntlet_plot(tmp_path, figures):
    from training.measure.gauntlet import plot_gauntlet

    rows = [{"opponent": name, "family": "archetypes", "win_rate": 0.7, "ci_low": 0.65, "ci_high": 0.75}
            for name in ("station", "maniac")]
    plot_gauntlet({"agent": POLICY, "preset": "argentine", "opponents": rows, "mean": 0.7}, tmp_path / "g.png")
    (fig,) = figures
    assert any(isinstance(c, ErrorbarContainer) for c in fig.axes[0].containers)
    assert not [t for t in _labels(fig) if "/" in t or ".safetensors" in t]


def test_training_curves_of_a_shipped_policy(tmp_path, figures):
    pytest.importorskip("tensorboard")
    torch_tb = pytest.importorskip("torch.utils.tensorboard")
    from training.learn.ship import curves_png

    writer = torch_tb.SummaryWriter(str(tmp_path / "run" / "tb"))
    for step, rate in ((1000, 0.6), (2000, 0.7)):
        writer.add_scalar("eval/win_rate_vs_random", rate, step)
        writer.add_scalar("losses/entropy", 1.0 / step, step)
    writer.close()
    curves_png(str(tmp_path / "run"), str(tmp_path / "curves.png"), "ppo:argentine: training curves",
               eval_matches=100)
    (fig,) = figures
    win = next(ax for ax in fig.axes if ax.get_title().startswith("win rate against random"))
    assert any(isinstance(c, ErrorbarContainer) for c in win.containers)
    labels = _labels(fig)
    assert "policy entropy" in labels
    assert not [t for t in labels if "/" in t], labels  # panel titles in words, not TensorBoard tags or paths
