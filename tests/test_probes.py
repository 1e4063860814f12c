"""The answer probe (training/probes.py): a network whose refusals follow the opponents' match tally shows it, one
that ignores the tally does not, and a response head's prediction is reported."""

import pytest
import torch

from agents.network import PolicyNet
from training.ppo import save_policy
from training.probes import NO_QUIERO, OPPONENTS_TALLY, answer_probe


def _network(tmp_path, reads_tally: bool, responses: bool = False) -> str:
    """A one-unit network that refuses the more, the more of its opponents' decisions were calls and answers
    (their tally's shares after ``card``), or that ignores the tally; saved as a policy file."""
    net = PolicyNet(hidden=(1,), features="none", responses=responses)
    with torch.no_grad():
        for param in net.parameters():
            param.zero_()
        if reads_tally:
            first = OPPONENTS_TALLY.start
            net.trunk[0].weight[0, first + 1:first + 8] = 20.0  # every class but cards; not the count
            net.policy.weight[NO_QUIERO, 0] = 1.0
    path = str(tmp_path / f"net-{reads_tally}-{responses}.safetensors")
    save_policy(net, path, presets=["argentine"])
    return path


@pytest.mark.parametrize("reads", [True, False])
def test_the_probe_sees_a_network_that_reads_the_tally(tmp_path, reads):
    found = answer_probe(f"ppo:{_network(tmp_path, reads)}", "argentine", "random", answers=400, tables=32)
    assert found["answers"] >= 400 and found["ladder_accept_predicted"] is None
    moved = abs(found["refuse_with_real_tally"] - found["refuse_with_self_play_tally"])
    assert (moved > 0.01) if reads else (moved < 1e-6), found


def test_the_probe_reports_a_response_heads_prediction_against_an_unbatched_opponent(tmp_path):
    found = answer_probe(f"ppo:{_network(tmp_path, False, responses=True)}", "argentine", "heuristic", answers=100,
                         tables=16)
    assert found["answers"] >= 100
    assert found["ladder_accept_predicted"] == pytest.approx(1 / 3)  # an untrained head: uniform answers
    assert found["ladder_accept_predicted_in_self_play"] == pytest.approx(1 / 3)
