"""The argument types every ``truco`` command shares, and the extras that install what a command needs.

Why one module: each command's parser (``training/cli/``) checks its numbers the same way, with an error
that echoes at most a few dozen characters of what was typed, and ``truco`` names the extra to install for any
missing module, whichever command needed it."""

from __future__ import annotations

import argparse


def integer_in(low: int = -(2 ** 63), high: int = 2 ** 63 - 1, words: str = "an integer"):
    """An argparse type: an integer in ``low..high``; the error echoes at most a few dozen characters of the
    text (a 5,000-digit seed is not repeated back)."""
    def convert(text: str) -> int:
        from truco_env.limits import clip

        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {words}, got {clip(repr(text))}")
        return value

    return convert


class Parser(argparse.ArgumentParser):
    """argparse with two habits of the ``truco`` tool: its error line is cut to a readable length (an invalid
    choice would echo a value of any size), and ``options_listing`` (a callable) appends an options class's
    listing to the description only when the help is shown: building it imports torch (the PPO options), and
    every other command, ``--help`` included, would pay that second and more at each start."""

    def __init__(self, *args, options_listing=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.options_listing = options_listing

    def format_help(self) -> str:
        if self.options_listing is not None:
            self.description = (self.description or "") + self.options_listing()
            self.options_listing = None
        return super().format_help()

    def error(self, message: str):  # type: ignore[override]
        from truco_env.limits import clip

        super().error(clip(message, 300))


positive_int = integer_in(1, 2 ** 63 - 1, "a positive integer")
any_integer = integer_in()



#: Optional dependencies and the extras (pyproject.toml) that install each, the usual one first: the core install
#: is the engine, the environments, the random and heuristic agents and replay; everything else names its extra
#: when it is missing (the running command's own extra where it is one of them).
EXTRAS = {"torch": ("train",), "tensorboard": ("train",), "safetensors": ("train",), "pydantic": ("train", "eval"),
          "yaml": ("train", "eval"), "tqdm": ("eval", "train"), "matplotlib": ("eval",), "openskill": ("eval",),
          "rich": ("play",), "onnx": ("export",), "onnxruntime": ("export",), "onnxscript": ("export",),
          "ray": ("ray",), "pyspiel": ("spiel",), "werkzeug": ("web",)}
#: The extra a command is installed by, where it has one.
COMMAND_EXTRAS = {"eval": "eval", "train": "train", "play": "play", "export": "export", "serve": "web"}


def extra_for(module: str | None, command: str | None = None) -> str | None:
    """The extra that installs ``module`` (a dotted name is looked up by its top-level package): ``command``'s
    own extra when that one installs it, else the usual one."""
    extras = EXTRAS.get((module or "").split(".")[0])
    if not extras:
        return None
    own = COMMAND_EXTRAS.get(command or "")
    return own if own in extras else extras[0]
