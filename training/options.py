"""Typed run options: a YAML file and ``--set key=value`` overrides, checked against a pydantic model.

Why checked at once: a run started with ``learning_rate=fast`` would fail an hour later deep inside torch, and a
misspelt key would silently train with the default. Here both stop the command before anything runs, with one
line that names the option, the value and what is allowed (and, for an unknown key, the closest known names).

An options class is a :class:`Options` subclass whose fields carry their type, their default, constraints
(``Annotated[float, Field(gt=0)]``) and a docstring, which ``--help`` pages and docs read back
(:func:`describe`).
"""

from __future__ import annotations

import difflib
import os
import types
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from truco_env.config import PRESETS, unknown_preset
from truco_env.limits import MAX_CONFIG_BYTES, MAX_DEPTH, clip

O = TypeVar("O", bound="Options")


def _known_preset(value: str) -> str:
    if value not in PRESETS:
        raise ValueError(str(unknown_preset(value)))  # names the closest presets
    return value


#: A rules preset's name, checked against ``truco_env.PRESETS`` (every options class that names one uses it).
PresetName = Annotated[str, AfterValidator(_known_preset)]


def _device_name(value: str) -> str:
    if value in ("auto", "cpu", "cuda") or (value.startswith("cuda:") and value[5:].isdigit()):
        return value
    raise ValueError(f"device {clip(repr(value))} is not one of auto, cpu, cuda, cuda:N")


#: Where a learner's update runs: ``auto`` (the GPU when torch sees one, else the CPU), ``cpu``, ``cuda``,
#: ``cuda:N`` (:func:`training.learn.ppo.torch_device` turns it into a torch device).
DeviceName = Annotated[str, AfterValidator(_device_name)]


def _leaf_types(kind: Any) -> set[Any]:
    """The types a field of type ``kind`` takes at its top level (through ``Annotated``, unions and literals) and
    as the items of a list or tuple."""
    origin, args = get_origin(kind), get_args(kind)
    if origin is Annotated:
        return _leaf_types(args[0])
    if origin in (list, tuple):
        return set().union(*(_leaf_types(a) for a in args if a is not Ellipsis))
    if origin in (Union, types.UnionType):
        return set().union(*(_leaf_types(a) for a in args))
    if origin is Literal:
        return {type(a) for a in args}
    return {kind}


class Options(BaseModel):
    """Base of every typed options class: unknown keys are errors, field docstrings are the documentation. A
    number is finite (``learning_rate: .inf`` trained a network of NaNs to the end), and ``true``/``false`` is no
    number (``total_decisions: true`` ran one decision)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, validate_assignment=True,
                              frozen=False, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        items = value if isinstance(value, (list, tuple)) else [value]  # a list of numbers too (hidden: [true])
        if any(isinstance(v, bool) for v in items) and info.field_name in cls.model_fields:
            leaves = _leaf_types(cls.model_fields[info.field_name].annotation)
            if leaves & {int, float} and not leaves & {bool, Any}:
                raise ValueError("should be a number, not true or false")
        return value


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases and at most :data:`~truco_env.limits.MAX_DEPTH` levels deep. Why: an
    alias expands to a copy of what its anchor names, so a 495-byte file of nested aliases (a "billion laughs")
    took 131 s and 1 GB; and the composer recurses, so deep nesting ended in a RecursionError. Option files
    never need either."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """A key given twice is an error: YAML's loaders keep the last one, so that ``preset: uruguayan`` above
        ``preset: paulista`` trained paulista without a word."""
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    twice = key in seen
                    seen.add(key)
                except TypeError:  # an unhashable key: the base constructor names it
                    continue
                if twice:
                    raise yaml.constructor.ConstructorError(None, None, f"key {clip(repr(key))} is given twice",
                                                            key_node.start_mark)
        return super().construct_mapping(node, deep)

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in option files",
                                              self.peek_event().start_mark)
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep",
                                                  self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _load_yaml(text: str | bytes, where: str) -> Any:
    """One YAML document through :class:`_BoundedLoader`: at most
    :data:`~truco_env.limits.MAX_CONFIG_BYTES`; ValueError (one line starting with ``where``) for anything else."""
    size = len(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    if size > MAX_CONFIG_BYTES:
        raise ValueError(f"{where}: {size:,} bytes, more than the {MAX_CONFIG_BYTES:,} allowed for options")
    try:
        return yaml.load(text, Loader=_BoundedLoader)  # a safe loader, with fewer features
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        mark = getattr(err, "problem_mark", None)
        at = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise ValueError(f"{where}: not valid YAML ({clip(problem, 120)}{at})") from None
    except (ValueError, RecursionError) as err:  # an integer beyond Python's digit limit, say
        raise ValueError(f"{where}: not usable YAML ({clip(str(err).splitlines()[0], 120)})") from None


def read_yaml(path: str) -> dict[str, Any]:
    """The mapping of a YAML options file (ValueError naming the file and the problem). Read through a bounded
    loader: no aliases, at most :data:`~truco_env.limits.MAX_DEPTH` levels and
    :data:`~truco_env.limits.MAX_CONFIG_BYTES`."""
    if not os.path.isfile(path):
        raise ValueError(f"config file {path!r} does not exist")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as err:
        raise ValueError(f"{path}: cannot read ({err.strerror or err})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ValueError(f"{path}: larger than the {MAX_CONFIG_BYTES:,} bytes allowed for an options file")
    loaded = _load_yaml(data, path)
    if loaded is None:  # an empty file ran every default (a training into runs/ppo) as if nothing were wrong
        raise ValueError(f"{path}: holds no options (empty, or comments only); an options file is a mapping "
                         f"such as 'preset: argentine'")
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: expected a mapping of options, got {type(loaded).__name__}")
    return loaded


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` with each value read as YAML (``hidden=[128,128]``, ``magnet_coef=0.2``), through the
    same bounded loader as option files."""
    data: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--set expects KEY=VALUE, got {clip(repr(item))}")
        data[key.strip()] = _load_yaml(value, f"--set {clip(repr(item))}")
    return data


def build(cls: type[O], data: dict[str, Any], source: str = "options", sources: dict[str, str] | None = None) -> O:
    """``cls(**data)``, or a one-line ValueError about the first thing wrong, starting with where the option came
    from: ``sources[key]`` (``--set``, say), else ``source`` (e.g. the config file; empty: nothing)."""
    def prefix(key: Any) -> str:
        where = (sources or {}).get(key, source) if isinstance(key, str) else source
        return f"{where}: " if where else ""

    unknown = [key for key in data if key not in cls.model_fields]
    if unknown:
        raise ValueError(f"{prefix(unknown[0])}unknown option {clip(repr(unknown[0]))}{_suggest(unknown[0], cls)}")
    for key, value in data.items():
        if _holds_nul(value):  # the system would refuse it later as a path, naming no option
            raise ValueError(f"{prefix(key)}option {key!r} holds a NUL character, which no path or name may hold")
    try:
        return cls(**data)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        raise ValueError(f"{prefix(first['loc'][0] if first['loc'] else None)}{_first_error(err)}") from None


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\0" in value
    if isinstance(value, (list, tuple)):
        return any(_holds_nul(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    return False


def load(cls: type[O], config: str | None = None, overrides: list[str] | None = None, **fixed: Any) -> O:
    """Options from a YAML file, then ``--set`` overrides, then ``fixed`` values (command-line flags), checked;
    an error names the source of the option it is about (the file, ``--set`` or the flag)."""
    data = read_yaml(config) if config else {}
    overridden = parse_overrides(overrides or [])
    flags = {k: v for k, v in fixed.items() if v is not None}
    data.update(overridden)
    data.update(flags)
    sources = {**{k: "--set" for k in overridden}, **{k: f"--{k.replace('_', '-')}" for k in flags}}
    return build(cls, data, source=config or "options", sources=sources)


def describe(cls: type[Options]) -> str:
    """One line per option: name, type, default, docstring (for ``--help`` epilogues and docs)."""
    lines = []
    for name, field in cls.model_fields.items():
        kind = _type_name(field.annotation)
        default = field.default_factory() if field.default_factory is not None else field.default
        lines.append(f"  {name} ({kind}; default {default!r}): {field.description or ''}")
    return "\n".join(lines)


def _type_name(kind: Any) -> str:
    """``tuple[int, ...]``, ``one of local, processes``: a field's type as a user writes it (constraints are in
    its docstring and its errors)."""
    origin, args = get_origin(kind), get_args(kind)
    if origin is Annotated:
        return _type_name(args[0])
    if origin is Literal:
        return "one of " + ", ".join(map(str, args))
    if origin is not None:
        inner = ", ".join("..." if a is Ellipsis else _type_name(a) for a in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]"
    return getattr(kind, "__name__", str(kind))


def _suggest(key: str, cls: type[Options]) -> str:
    close = difflib.get_close_matches(key, list(cls.model_fields), n=3, cutoff=0.6)
    if close:
        return "; did you mean " + " or ".join(repr(c) for c in close) + "?"
    return f"; known options: {', '.join(cls.model_fields)}"


def _first_error(err: ValidationError) -> str:
    first = err.errors(include_url=False)[0]
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]).lstrip(".")
    message = first["msg"].replace("Input should be", "should be").replace("Value error, ", "")
    if first["type"] == "missing":
        return f"option {where!r} is required"
    if first["type"] == "extra_forbidden":
        return f"unknown option {where!r}"
    if not where or message.startswith("unknown preset"):  # a check of the options together; a preset's own words
        return message
    return f"option {clip(repr(where))} = {clip(repr(first['input']))} is not allowed: {clip(message, 200)}"
