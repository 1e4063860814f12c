"""Agents behind one small interface (``agents.base.Agent``), built from spec strings by ``make_agent``."""

from functools import partial

from .base import Agent, RandomAgent, act_many, make_agent, parse_spec, register_agent

__all__ = ["Agent", "RandomAgent", "act_many", "make_agent", "parse_spec", "register_agent", "single_agent", "vector_env"]


def single_agent(preset: str = "argentine", opponents="random", partners=None, **kwargs):
    """``truco_env.single_agent`` with the other seats given as agent specs (``"heuristic:bluff=0.3"``) or agents.

    Why here: the environment layer does not import agents, so it takes agents, not specs. Each spec becomes a
    factory, so every seat gets an agent of its own (the view calls it for each seat at every reset)."""
    from truco_env.single import TrucoSingleAgentEnv  # gymnasium: loaded on use

    def seat_agents(given):
        return partial(make_agent, given) if isinstance(given, str) else given

    return TrucoSingleAgentEnv(preset, opponents=seat_agents(opponents), partners=seat_agents(partners), **kwargs)


def vector_env(preset: str = "argentine", num_envs: int = 64, opponents="random", **kwargs):
    """``truco_env.gym_vector.TrucoVectorEnv`` (a Gymnasium vector env on the compiled engine) with the
    opponents given as a spec of a batched agent (``"random"``, ``"ppo:argentine"``, ``"onnx:FILE"``) or an agent.
    """
    from truco_env.gym_vector import TrucoVectorEnv  # gymnasium: loaded on use

    if isinstance(opponents, str):
        agent = make_agent(opponents)
        if not agent.batched:
            raise ValueError(f"opponents={opponents!r} plays one table at a time; the vector env needs a batched "
                             "agent (random, ppo:..., onnx:...)")
        opponents = agent
    return TrucoVectorEnv(preset, num_envs, opponents=opponents, **kwargs)
