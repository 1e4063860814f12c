"""Agents behind one small interface (``agents.base.Agent``), built from spec strings by ``make_agent``."""

from .base import Agent, RandomAgent, make_agent, parse_spec, register_agent

__all__ = ["Agent", "RandomAgent", "make_agent", "parse_spec", "register_agent"]
