"""truco-rl: Argentine Truco and Truco Paulista as a research environment.

The rules layer (``cards``, ``config``, ``engine``) is pure Python; the environments built on it live in their own
modules so that importing the rules never pulls in PettingZoo, numpy or torch.
"""

from .config import PRESETS, TrucoConfig, make_config
from .engine import TIE, TrucoState

__all__ = ["PRESETS", "TIE", "TrucoConfig", "TrucoState", "make_config"]
__version__ = "0.1.0"
