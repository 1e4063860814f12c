"""What the code does, in a few hex digits: the fingerprints that key the cached stages of ``truco report``.

A stored measurement is only worth reusing while today's code would make it again. Hashing the source files would
throw away hours of measurement for every docstring edit, and hashing the agent's file alone kept a figure the
changed learner could no longer reproduce (docs/exploitability.md). So the report keys its stages on what the code
*does*, run small:

* :func:`learner_fingerprint`: the best-response learner's path, a few updates of the fixed recipe against the
  heuristic, summarised by its weights; any change to the learner, its collection, the environment or the
  heuristic moves it.
* :func:`play_fingerprint`: a few duplicate matches of an agent against the heuristic and random, summarised by
  every match's points and the agent's behaviour counts; any change to how the agent, the opponents or the rules
  play moves it.

The weights are summarised per tensor (sum and sum of squares, four significant digits) rather than hashed byte by
byte: a hash of raw floats would differ between two CPUs whose vector units round a matrix product differently,
while a summary at that precision moves only when the learner's path does.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

import numpy as np

#: The tiny learner run of :func:`learner_fingerprint`: a few updates of the fixed recipe, seconds on one core.
FINGERPRINT_RECIPE = {"decisions": 3 * 512, "batch_decisions": 512, "minibatch_size": 128, "partitions": 1,
                      "tables": 8, "workers": 1, "seed": 0, "target": "heuristic"}
#: Matches per pairing of :func:`play_fingerprint` (duplicate: each deal twice, the seats swapped).
FINGERPRINT_MATCHES = 2


def digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def weights_summary(state_dict: dict[str, Any]) -> dict[str, list[str]]:
    """Per tensor: its sum and sum of squares (in float64), four significant digits."""
    out = {}
    for name, tensor in sorted(state_dict.items()):
        values = np.asarray(tensor.detach().numpy() if hasattr(tensor, "detach") else tensor, dtype=np.float64)
        out[name] = [f"{values.sum():.4e}", f"{np.square(values).sum():.4e}"]
    return out


@cache
def learner_fingerprint(preset: str) -> str:
    """The best-response learner's path on ``preset`` (:data:`FINGERPRINT_RECIPE`), as 16 hex digits."""
    import tempfile

    from training.learn.best_response import BRArgs, train_best_response

    with tempfile.TemporaryDirectory(prefix="truco-fingerprint-") as run_dir:
        net, _state, _status = train_best_response(BRArgs(preset=preset, **FINGERPRINT_RECIPE), run_dir,
                                                   progress=False)
    return digest(weights_summary(net.state_dict()))


@cache
def play_fingerprint(agent: str, preset: str) -> str:
    """How ``agent`` and the two baselines play on ``preset``: :data:`FINGERPRINT_MATCHES` duplicate matches of
    each pairing (seed 0, in this process), as 16 hex digits."""
    from training.measure.evaluate import make_tasks, play_tasks

    opponents = [o for o in ("heuristic", "random") if o != agent]
    tasks = make_tasks([agent, *opponents], [preset], FINGERPRINT_MATCHES, 0, pairs=[(agent, o) for o in opponents])
    played = [{k: r[k] for k in ("pairing", "deal", "swapped", "winner", "hands", "points_a", "points_b",
                                 "behaviour_a")} for r in play_tasks(tasks, workers=1, progress=False)]
    return digest(played)  # in task order, which is fixed
