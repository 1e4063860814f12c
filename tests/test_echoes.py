"""What messages and progress lines echo (issue 72 item 13): an agent spec's error shows a clipped part of a long
value and says a seed's range, an env's action-id message names that env's own range (106 ids with señas), and the
PPO progress line shows ``snap=-``, not ``snap=nan``, while no snapshot has been measured."""

from __future__ import annotations

import math

import numpy as np
import pytest

import truco_env
from agents.base import MAX_SEED, make_agent
from training.cli import main
from training.learn.ppo import League, PPOArgs, progress_fields, train_ppo
from training.options import build
from training.progress import LineProgress

NINES = "9" * 5000
BIG_INT = "9" * 4000  # fewer digits than Python's int() refuses: it converts, and then is out of range


def one_short_line(err: pytest.ExceptionInfo | str, limit: int = 400) -> str:
    text = err if isinstance(err, str) else str(err.value)
    assert "\n" not in text, text[:300]
    assert len(text) < limit, text[:limit]
    assert "9" * 250 not in text, text[:300]  # at most a clipped part of the long value
    return text


# ------------------------------------------------------------------------------------------------------------
# a) agent specs


def test_eval_with_a_5000_digit_seed_is_one_short_line_saying_the_range(tmp_path, capsys):
    code = main(["eval", "--agents", f"random:seed={NINES}", "heuristic", "--matches", "2", "--out",
                 str(tmp_path / "eval"), "--no-progress", "--no-plots"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err[:300]
    assert "Traceback" not in err
    assert len(err) < 400, f"{len(err):,} bytes: {err[:300]}"
    assert "0..2**63-1" in err


@pytest.mark.parametrize("spec", [
    f"random:seed={NINES}", f"random:seed={BIG_INT}", f"heuristic:seed={NINES}", f"threshold:seed={BIG_INT}",
    f"station:seed={NINES}", f"maniac:seed={NINES}", f"cfr:paulista,seed={NINES}",
], ids=lambda spec: spec[:spec.index("=") + 3])
def test_a_long_seed_in_every_spec_is_echoed_clipped_with_the_allowed_range(spec):
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    assert "seed must be an integer in 0..2**63-1, got '99999" in one_short_line(err)


@pytest.mark.parametrize("spec", [
    f"heuristic:samples={NINES}", f"heuristic:samples={BIG_INT}", f"heuristic:signal={BIG_INT}",
    f"heuristic:bluff=x{NINES}", f"heuristic:{NINES}=1", f"heuristic:{NINES}", f"random:{NINES}",
    f"threshold:bet={NINES}", "heuristic:" + ",".join(f"k{i}=1" for i in range(2000)),
    f"cfr:paulista,{NINES}", f"cfr:paulista,search=x{NINES}", f"cfr:{NINES}", f"ppo:{NINES}",
    f"ppo:paulista,{NINES}", f"onnx:{NINES}", f"onnx:m.onnx,{NINES}", f"swap:{NINES}", f"swap:paulista,on={NINES}",
    f"best:{NINES}", f"{NINES}:x",
], ids=lambda spec: spec[:16])
def test_every_factory_echoes_a_long_value_clipped(spec):
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    one_short_line(err)


def test_a_seed_is_a_bounded_integer():
    assert make_agent(f"random:seed={MAX_SEED}").spec == f"random:seed={MAX_SEED}"
    assert MAX_SEED == 2**63 - 1
    for seed in (MAX_SEED + 1, -1):
        for kind in ("random", "heuristic", "station"):
            with pytest.raises(ValueError, match=rf"agent '{kind}': seed must be an integer in 0\.\.2\*\*63-1, "
                                                 rf"got '{seed}'$"):
                make_agent(f"{kind}:seed={seed}")


# ------------------------------------------------------------------------------------------------------------
# b) the action range of a preset with señas


@pytest.mark.parametrize("bad", ["12", 3.0, None, 106, 10**6, -1], ids=repr)
def test_the_senas_env_names_its_own_106_actions(bad):
    env = truco_env.env("argentine-2v2-senas")
    env.reset(seed=0)
    assert env.action_space(env.agent_selection).n == 106
    with pytest.raises(ValueError) as err:
        env.step(bad)
    text = one_short_line(err)
    assert "0..105" in text and "0..97" not in text


@pytest.mark.parametrize("preset, last", [("argentine-2v2-senas", 105), ("argentine", 97)])
def test_the_single_agent_view_names_its_presets_range(preset, last):
    env = truco_env.single_agent(preset, seat=0)
    env.reset(seed=1)
    with pytest.raises(ValueError, match=rf"action must be an integer id 0\.\.{last} "):
        env.step(np.float64(2))


# ------------------------------------------------------------------------------------------------------------
# c) the PPO progress line's snap field


def test_snap_is_a_dash_until_a_snapshot_is_measured():
    assert progress_fields({"charts/SPS": 9811.7, "league/snapshot_win_rate": math.nan}) == {"sps": "9812",
                                                                                           "snap": "-"}
    assert progress_fields({"charts/SPS": 10.0, "league/snapshot_win_rate": 0.614})["snap"] == "0.61"
    league = League()
    assert math.isnan(league.snapshot_win_rate(("self", "random")))  # no snapshot in play
    league.weights[0] = {}
    assert math.isnan(league.snapshot_win_rate(("self", "snapshot:0", "random")))  # in play, nothing finished
    league.record(("self", "snapshot:0", "random"), np.array([[1, 1.0], [1, 0.0], [1, 1.0], [2, 0.0]]))
    assert league.snapshot_win_rate(("self", "snapshot:0", "random")) == pytest.approx(2 / 3)


def test_the_progress_line_of_a_run_says_snap_dash_not_nan(tmp_path, capsys):
    """Two updates of a tiny run: the first has no snapshot in play (one joins after it)."""
    args = build(PPOArgs, {"preset": "paulista", "total_decisions": 3000, "batch_decisions": 1500, "tables": 16,
                           "hidden": [32], "snapshot_every": 1, "eval_every": 0, "eval_matches": 10,
                           "eval_opponents": ["random"], "run_dir": str(tmp_path / "run")})
    train_ppo(args, progress_bar=True)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("ppo: ")]
    assert lines and "nan" not in "\n".join(lines), lines
    assert lines[0].endswith(", snap=-"), lines


def test_the_progress_line_and_its_snap_field_are_documented():
    from pathlib import Path

    text = Path(__file__).resolve().parents[1].joinpath("docs", "training.md").read_text(encoding="utf-8")
    assert "**The progress line.**" in text and "`snap=-` means nothing is measured yet" in text
    out = []
    line = LineProgress(10, "ppo", "dec", file=type("F", (), {"write": lambda self, s: out.append(s),
                                                               "flush": lambda self: None})())
    line.set_postfix(**progress_fields({"charts/SPS": 5.0, "league/snapshot_win_rate": math.nan}))
    line.update(10)
    assert "".join(out).rstrip().endswith("sps=5, snap=-")
