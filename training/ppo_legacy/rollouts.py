"""Where collection partitions run: in this process, in worker processes, or on Ray actors.

Every backend runs the same partitions (``selfplay.collect_partition``) with the same seeds and returns their
results in partition order, so the choice changes speed, never the trained parameters.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from ..workers import spawn_pool
from .model import PolicyNet
from .selfplay import RolloutTask, collect_partition

BACKENDS = ("local", "processes", "ray")


def network_weights(net: PolicyNet) -> dict[str, np.ndarray]:
    """The weights as plain arrays, to send to a worker process or a Ray actor."""
    return {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}


def network_from(arch: dict[str, Any], weights: dict[str, np.ndarray]) -> PolicyNet:
    """The network rebuilt in that worker from its architecture and ``network_weights``."""
    net = PolicyNet(arch["obs_size"], arch["num_actions"], tuple(arch["hidden"]), arch.get("features", "none"))
    net.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    return net.eval()


def _remote_collect(task: RolloutTask, arch: dict, learner: dict, snapshots: list[dict]):
    return collect_partition(task, network_from(arch, learner), [network_from(arch, w) for w in snapshots])


class LocalRollouts:
    """Partitions one after another in this process."""

    def run(self, tasks: list[RolloutTask], net: PolicyNet, snapshots: list[PolicyNet]) -> list:
        return [collect_partition(task, net, snapshots) for task in tasks]

    def close(self) -> None:
        pass


class ProcessRollouts:
    """Partitions in a pool of worker processes (both cores of a small machine)."""

    def __init__(self, workers: int):
        # the workers ignore Ctrl-C: the trainer finishes the update and checkpoints (a worker killed by the
        # terminal's SIGINT would leave its partition unfinished and the update waiting forever)
        self._pool = spawn_pool(workers)

    def run(self, tasks: list[RolloutTask], net: PolicyNet, snapshots: list[PolicyNet]) -> list:
        arch, learner = net.architecture(), network_weights(net)
        others = [network_weights(s) for s in snapshots]
        return self._pool.starmap(_remote_collect, [(task, arch, learner, others) for task in tasks])

    def close(self) -> None:
        self._pool.close()
        self._pool.join()


class RayRollouts:
    """Partitions on Ray actors, for runs that outgrow one machine (``pip install 'truco-rl[ray]'``)."""

    def __init__(self, workers: int):
        try:
            import ray
        except ImportError:
            raise ValueError("backend 'ray' needs Ray: pip install 'truco-rl[ray]'") from None
        self._ray = ray
        if not ray.is_initialized():
            if os.environ.get("RAY_ADDRESS"):  # a running cluster decides its own resources
                ray.init(log_to_driver=False)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        actor = ray.remote(num_cpus=1)(_RolloutActor)
        self._actors = [actor.remote() for _ in range(workers)]

    def run(self, tasks: list[RolloutTask], net: PolicyNet, snapshots: list[PolicyNet]) -> list:
        ray = self._ray
        arch = net.architecture()
        learner = ray.put(network_weights(net))
        others = ray.put([network_weights(s) for s in snapshots])
        futures = [self._actors[i % len(self._actors)].collect.remote(task, arch, learner, others)
                   for i, task in enumerate(tasks)]
        return ray.get(futures)

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)


class _RolloutActor:
    def collect(self, task: RolloutTask, arch: dict, learner: dict, snapshots: list[dict]):
        return _remote_collect(task, arch, learner, snapshots)


def make_rollouts(backend: str, workers: int):
    if backend == "local":
        return LocalRollouts()
    if backend == "processes":
        return ProcessRollouts(workers)
    if backend == "ray":
        return RayRollouts(workers)
    raise ValueError(f"rollout backend {backend!r} is not allowed; choose one of {list(BACKENDS)}")
