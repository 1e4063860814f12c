"""Does a policy read its opponents? The answer probe (``truco probe``, :func:`answer_probe`):

    truco probe --policy ppo:argentine --preset argentine --opponent random --answers 20000

The policy (a network, greedy) plays ``opponent`` on the vector environment. At each of its answers to a call (a
decision where ``no_quiero`` is legal) the probe takes the policy's probability of refusing twice: with the
observation as it is, and with the opponents' half of the match tally replaced by the mean of that half over the
policy's own self-play (what the tally looks like against an opponent like itself). A policy that reads the tally
refuses differently when the tally says "this opponent is not like me"; one that ignores it gives the same
probability both ways.

Why a probe and not a win rate: a win rate mixes reading the opponent with everything else a policy does; the probe
isolates the one input that carries the opponent's style. The tally is public, so nothing here tells the policy who
the opponent is.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.base import Agent, check_preset, make_agent
from agents.seats import TableSeats
from truco_env.actions import CALL_BASE, CALLS
from truco_env.config import PRESETS, unknown_preset
from truco_env.encoding import OBS_OFFSETS
from truco_env.limits import clip
from truco_env.vector import VectorEnv

NO_QUIERO = CALL_BASE + CALLS.index("no_quiero")
_LO, _HI = OBS_OFFSETS["match_tally"]
OPPONENTS_TALLY = slice(_LO + (_HI - _LO) // 2, _HI)  # the second team row: the opponents, as the seat sees them


#: Steps of the self-play pass that measures the reference tally row (x the tables: its decisions).
SELF_PLAY_STEPS = 100


def _play(net: Any, preset: str, opponent: str, answers: int, seed: int, tables: int,
          reference: np.ndarray | None) -> dict[str, Any]:
    """Greedy play of ``net`` at the even seats against ``opponent`` until it has answered ``answers`` calls (or
    played 50 steps per answer asked for: a policy that is never called stops too), or, with ``reference`` None,
    against itself for :data:`SELF_PLAY_STEPS`; its refusal probability at its answers (and with the opponents'
    tally replaced by ``reference``) and the mean opponents' tally row at its decisions."""
    env = VectorEnv(preset, num_envs=tables, seed=seed, reward="points")
    other = None if opponent == "self" else make_agent(opponent)
    if other is not None:
        other.seed(seed)

    def seat_agent(table: int, seat: int) -> Agent:
        agent = make_agent(opponent)
        agent.seed(seed * 100_003 + table * 7 + seat)
        return agent

    seats = TableSeats(seat_agent)  # an unbatched opponent

    real, swapped, rows = [], [], []
    obs, mask, actor = env.reset()
    steps, limit = 0, SELF_PLAY_STEPS if reference is None else 50 * answers
    try:
        while steps < limit and (reference is None or len(real) < answers):
            steps += 1
            mine = (actor % 2 == 0) | (other is None)
            actions = np.zeros(env.num_envs, dtype=np.int64)
            at = np.flatnonzero(mine)
            x, legal = torch.from_numpy(obs[at]), torch.from_numpy(mask[at].astype(bool))
            with torch.no_grad():
                out = net.from_inputs(net.inputs(x), legal)
                actions[at] = out[0].argmax(1).numpy()
                rows.append(obs[at, OPPONENTS_TALLY].mean(0))
                answering = np.flatnonzero(mask[at, NO_QUIERO] > 0)
                if answering.size and reference is not None:
                    real += torch.softmax(out[0][answering], 1)[:, NO_QUIERO].tolist()
                    changed = x[answering].clone()
                    changed[:, OPPONENTS_TALLY] = torch.from_numpy(reference)
                    logits = net.from_inputs(net.inputs(changed), legal[answering])[0]
                    swapped += torch.softmax(logits, 1)[:, NO_QUIERO].tolist()
            theirs = np.flatnonzero(~mine)
            if theirs.size and other.batched:
                actions[theirs] = other.act_batch(obs[theirs], mask[theirs])
            elif theirs.size:
                actions[theirs] = seats.act(theirs, obs, mask, actor)
            obs, mask, _, actor, done = env.step(actions)
            seats.matches_ended(np.flatnonzero(done))
    finally:
        env.close()
    return {"refuse_real": float(np.mean(real)) if real else None,
            "refuse_swapped": float(np.mean(swapped)) if swapped else None,
            "answers": len(real), "tally_row": np.mean(rows, 0).astype(np.float32)}


def answer_probe(policy: str, preset: str, opponent: str = "random", answers: int = 20000, seed: int = 1,
                 tables: int = 256) -> dict[str, Any]:
    """The probe of the module docstring: self-play first (the reference tally row), then ``opponent``."""
    if preset not in PRESETS:
        raise unknown_preset(preset)
    path = policy.removeprefix("ppo:")
    agent = make_agent(policy if not path.endswith(".safetensors") else f"ppo:{path}")
    net = getattr(agent, "net", None)
    if net is None:  # a blueprint, a search, the heuristic: an AttributeError's traceback before
        raise ValueError(f"--policy {clip(repr(policy), 200)} is not a network; the probe reads a network's "
                         "probabilities: ppo:<preset>, ppo:PATH.safetensors or a best:<preset> that is one")
    check_preset(agent, preset)  # another game's network was probed on this one without a word
    net.eval()
    if opponent != "self":
        check_preset(make_agent(opponent), preset)  # a bad spec is refused before the self-play pass
    own = _play(net, preset, "self", 0, seed + 1, tables, None)
    found = _play(net, preset, opponent, answers, seed, tables, own["tally_row"])
    return {"policy": policy, "preset": preset, "opponent": opponent, "answers": found["answers"],
            "refuse_with_real_tally": found["refuse_real"], "refuse_with_self_play_tally": found["refuse_swapped"]}

