"""Look-ahead card distillation: a trained policy keeps its bets and takes its card choice from the heuristic's
Monte Carlo look-ahead.

Why: in Paulista 2v2 the PPO policy bets better than the heuristic but chooses its cards worse, and PPO does not
close that gap (docs/research.md, "Where the Paulista 2v2 policy loses"): a card's effect on the match is small
beside the deal's, so its advantage is mostly noise. The heuristic's look-ahead measures exactly that effect, the
hand's win probability for each card over sampled deals, at a fraction of the noise. Copying its chosen card
(cross-entropy on the argmax) did not help: the heuristic's own choices are noisy between near-equal cards, and
an imitator that matches them 80% of the time still loses the decisions that matter. Distilling the values does:
the target at a card decision is ``softmax(value / temperature)`` over the legal cards, so near-equal cards share
the probability and a card that is clearly worse gets almost none.

The stage plays the starting policy (greedily, as shipped policies play) in the learner seats against the
league's agents and records every learner decision. Where the policy plays a card and has another to choose,
the heuristic's ``card_values`` (``samples`` sampled deals) give that decision's card values. The network is then
fit by soft cross-entropy to a target equal to its own starting distribution, except that at those card
decisions the probability it gave to playing a card is shared out by the look-ahead values. Its value head is
kept on its starting values. So the bets stay as PPO left them (the network is fit to its own distribution
there), and only the choice between cards moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.base import Agent, make_agent
from agents.heuristic import HeuristicAgent
from agents.ppo import PPOAgent
from truco_env import make_config
from truco_env.actions import CALL_BASE, NUM_ACTIONS

from ..evaluate import play_match
from ..workers import spawn_pool
from .imitation import imitate
from .model import PolicyNet
from .rollouts import network_from, network_weights

#: the recorded arrays of one decision, in order
FIELDS = ("obs", "masks", "probs", "values", "card_values")


class _Log:
    """What the learner seats of one worker have recorded: a list per ``FIELDS`` name, and how many of the
    decisions are card decisions with look-ahead values (the quota the worker plays until)."""

    def __init__(self) -> None:
        self.rows: dict[str, list] = {name: [] for name in FIELDS}
        self.card_decisions = 0


class _Recorder(Agent):
    """The policy, played greedily in a learner seat; records each decision into ``log``, with the
    look-ahead's card values where it plays a card and could play another (NaN elsewhere)."""

    def __init__(self, net: PolicyNet, lookahead: HeuristicAgent, samples: int, log: _Log):
        self.net, self.lookahead, self.samples, self.log = net, lookahead, samples, log

    def act(self, observation: dict[str, Any]) -> int:
        obs = torch.as_tensor(observation["observation"], dtype=torch.float32)[None]
        mask = torch.as_tensor(observation["action_mask"]).bool()[None]
        with torch.no_grad():
            logits, value = self.net(obs, mask)
        probs = torch.softmax(logits, -1)[0]
        action = int(probs.argmax())
        cards = np.full(NUM_ACTIONS, np.nan, dtype=np.float32)
        if action < CALL_BASE:
            for card_action, card_value in self.lookahead.card_values(observation, self.samples).items():
                cards[card_action] = card_value
        for name, row in zip(FIELDS, (obs[0].numpy(), mask[0].numpy(), probs.numpy(), float(value[0]), cards)):
            self.log.rows[name].append(row)
        self.log.card_decisions += int(not np.isnan(cards).all())
        return action


def collect_part(arch: dict[str, Any], weights: dict[str, np.ndarray], preset: str,
                 opponents: list[tuple[str, float]], card_decisions: int, samples: int, seed: int
                 ) -> dict[str, np.ndarray]:
    """Play matches (the learner's team alternating between the seats) until ``card_decisions`` card decisions
    with look-ahead values are recorded; the recorded arrays (``FIELDS``)."""
    torch.set_num_threads(1)
    net = network_from(arch, weights)
    config = make_config(preset)
    rng = np.random.default_rng(seed)
    log = _Log()
    lookahead = HeuristicAgent(seed=int(rng.integers(2 ** 32)))
    specs, weights_ = [s for s, _ in opponents], np.array([w for _, w in opponents], dtype=float)
    match = 0
    while log.card_decisions < card_decisions:
        spec = specs[int(rng.choice(len(specs), p=weights_ / weights_.sum()))]
        learner_team = match % 2
        agents: list[Agent] = []
        for seat in range(config.num_players):
            agent = (_Recorder(net, lookahead, samples, log) if seat % 2 == learner_team
                     else PPOAgent(net, greedy=True) if spec == "self" else make_agent(spec))
            agent.seed(int(rng.integers(2 ** 32)))
            agent.reset(seat)
            agents.append(agent)
        play_match(config, agents, int(rng.integers(2 ** 48)))
        match += 1
    return {name: np.stack([np.asarray(r) for r in log.rows[name]]) for name in FIELDS}


def lookahead_data(net: PolicyNet, preset: str, league: dict[str, float], card_decisions: int, samples: int,
                   workers: int, rng: np.random.Generator) -> dict[str, torch.Tensor]:
    """The recorded decisions of ``net`` against the league's agents (``self`` plays itself; snapshots are left
    out), ``card_decisions`` of them card decisions with look-ahead values, over ``workers`` processes."""
    opponents = [(spec, w) for spec, w in league.items() if spec != "snapshot" and w > 0]
    arch, weights = net.architecture(), network_weights(net)
    shares = [card_decisions // workers + (i < card_decisions % workers) for i in range(workers)]
    jobs = [(arch, weights, preset, opponents, share, samples, int(seed))
            for share, seed in zip(shares, rng.integers(2 ** 62, size=workers))]
    if workers == 1:
        parts = [collect_part(*jobs[0])]
    else:
        pool = spawn_pool(workers)
        try:
            parts = pool.starmap(collect_part, jobs)
        finally:
            pool.close()
    return {name: torch.from_numpy(np.concatenate([p[name] for p in parts])) for name in FIELDS}


def distillation_targets(data: dict[str, torch.Tensor], temperature: float) -> torch.Tensor:
    """Per decision, the action distribution to fit: the starting policy's, except that at a card decision its
    probability of playing a card is shared out by ``softmax(card value / temperature)`` over the legal cards."""
    probs = data["probs"].double()
    cards = data["card_values"].double()
    has = ~torch.isnan(cards)
    carded = has.any(1)
    scaled = torch.where(has, cards / temperature, torch.full_like(cards, -torch.inf))
    shares = torch.softmax(scaled[carded], -1)
    card_mass = probs[carded, :CALL_BASE].sum(1, keepdim=True)
    target = probs.clone()
    target[carded, :CALL_BASE] = card_mass * shares[:, :CALL_BASE]
    return target.float()


def card_regret(net: PolicyNet, data: dict[str, torch.Tensor], index: torch.Tensor) -> float:
    """Mean look-ahead regret (best card value minus the value of the card the network plays greedily, among
    the cards) over the card decisions in ``index``: 0 plays the look-ahead's choice everywhere."""
    cards = data["card_values"][index]
    has = ~torch.isnan(cards)
    with torch.no_grad():
        logits, _ = net(data["obs"][index], has)
    chosen = logits.argmax(-1)
    filled = torch.where(has, cards, torch.full_like(cards, -torch.inf))
    return float((filled.max(1).values - filled.gather(1, chosen[:, None]).squeeze(1)).mean())


def distil_cards(net: PolicyNet, data: dict[str, torch.Tensor], temperature: float, epochs: int, minibatch: int,
                 learning_rate: float, vf_coef: float, holdout: float, rng: np.random.Generator) -> dict[str, float]:
    """Fit ``net`` to the distillation targets (and its value head to its starting values) with the imitation
    warm start's loop; statistics: the card regret of the starting and the fitted network on a held-out share
    (``holdout``) of the card decisions, the final loss and the agreement with the targets' most likely action."""
    target = distillation_targets(data, temperature)
    count = len(target)
    order = rng.permutation(count)
    held = torch.from_numpy(np.sort(order[:int(holdout * count)]))
    train = order[int(holdout * count):]
    carded = ~torch.isnan(data["card_values"]).all(1)
    held_cards = held[carded[held]]
    stats = {"lookahead/decisions": float(count), "lookahead/card_decisions": float(carded.sum()),
             "lookahead/regret_before": card_regret(net, data, held_cards)}
    fit = imitate(net, {"obs": data["obs"], "masks": data["masks"], "actions": target, "returns": data["values"]},
                  epochs, minibatch, learning_rate, vf_coef, rng, index=train)
    stats["lookahead/loss"], stats["lookahead/agreement"] = fit["imitation/loss"], fit["imitation/agreement"]
    stats["lookahead/regret_after"] = card_regret(net, data, held_cards)
    return stats
