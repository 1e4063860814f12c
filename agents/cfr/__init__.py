"""What plays a CFR strategy: the ``cfr:PATH`` agent (:mod:`.agent`), the checkpoint reader and its strategy table
(:mod:`.table`), the information-set abstraction that keys MCCFR tables (:mod:`.abstraction`), and play-time search
(:mod:`.search`) over the compiled walk (:mod:`.walk`).

What learns lives in ``training/learn/cfr/``: exact CFR+ on the research presets and the MCCFR run, which drives this
room's walk (the search re-solves with the very walk the blueprint was trained with). Imports run one way, from
training to here.
"""

from .agent import MCCFR_THRESHOLD, CFRAgent, blueprint_path, shipped_blueprints

__all__ = ["MCCFR_THRESHOLD", "CFRAgent", "blueprint_path", "shipped_blueprints"]
