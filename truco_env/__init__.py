"""truco-rl: Argentine, Uruguayan and Paulista Truco as a research environment.

The rules layer (``cards``, ``config``, ``engine``) is pure Python. The PettingZoo environment (``env``,
``raw_env``) is loaded on first use, so importing the rules never pulls in PettingZoo or numpy.
"""

from ._numba_cache import configure as _configure_numba_cache

_configure_numba_cache()  # before any compiled kernel is imported: a cache folder per source version

from .config import PRESETS, TrucoConfig, make_config
from .engine import TIE, TrucoState

__all__ = ["PRESETS", "TIE", "TrucoConfig", "TrucoState", "env", "make_config", "raw_env", "single_agent"]
__version__ = "0.1.0"

ENV_ID = "truco/Truco-v1"
#: The Gymnasium id of the single-agent view (``gymnasium.make(SINGLE_AGENT_ID, preset=..., opponents=...)``);
#: ``gymnasium.make_vec(SINGLE_AGENT_ID, num_envs=N, preset=...)`` gives N of them on the compiled vector env.
SINGLE_AGENT_ID = "truco/TrucoSingleAgent-v1"


def env(preset: str = "argentine", **kwargs):
    """The wrapped PettingZoo AEC environment (see ``truco_env.aec``)."""
    from .aec import env as _env

    return _env(preset, **kwargs)


def raw_env(preset: str = "argentine", **kwargs):
    """The unwrapped PettingZoo AEC environment."""
    from .aec import raw_env as _raw_env

    return _raw_env(preset, **kwargs)


def single_agent(preset: str = "argentine", *, opponents=None, **kwargs):
    """The Gymnasium single-agent view: one learner seat against agent objects (uniform random players when none
    are given; see ``truco_env.single``); to give the other seats as specs (``"heuristic"``), use
    ``agents.single_agent``."""
    from .single import RandomPlayer
    from .single import single_agent as _single_agent

    return _single_agent(preset, opponents=RandomPlayer if opponents is None else opponents, **kwargs)


def _register() -> None:
    """Register the single-agent view with Gymnasium, and the AEC env with PettingZoo's registry where the
    installed version has one (PettingZoo >= 1.25); string entry points, so nothing heavy loads here."""
    try:
        import gymnasium
    except ImportError:  # the rules engine works without Gymnasium
        return
    if SINGLE_AGENT_ID not in gymnasium.registry:
        gymnasium.register(SINGLE_AGENT_ID, entry_point="truco_env.single:TrucoSingleAgentEnv",
                           vector_entry_point="truco_env.gym_vector:TrucoVectorEnv")
    try:
        import pettingzoo
    except ImportError:  # the rules engine works without PettingZoo
        return
    register = getattr(pettingzoo, "register", None)
    if register is not None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            register("aec", ENV_ID, entry_point="truco_env.aec:env")


_register()
