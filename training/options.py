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
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from truco_env.config import PRESETS

O = TypeVar("O", bound="Options")


def _known_preset(value: str) -> str:
    if value not in PRESETS:
        raise ValueError(f"should be one of {sorted(PRESETS)}")
    return value


#: A rules preset's name, checked against ``truco_env.PRESETS`` (every options class that names one uses it).
PresetName = Annotated[str, AfterValidator(_known_preset)]


class Options(BaseModel):
    """Base of every typed options class: unknown keys are errors, field docstrings are the documentation."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, validate_assignment=True,
                              frozen=False)


def read_yaml(path: str) -> dict[str, Any]:
    """The mapping of a YAML options file (ValueError naming the problem)."""
    if not os.path.isfile(path):
        raise ValueError(f"config file {path!r} does not exist")
    with open(path, encoding="utf-8") as handle:
        try:
            loaded = yaml.safe_load(handle)
        except yaml.YAMLError as err:
            raise ValueError(f"{path}: not valid YAML ({str(err).splitlines()[0]})") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: expected a mapping of options, got {type(loaded).__name__}")
    return loaded


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` with each value read as YAML (``hidden=[128,128]``, ``anneal_lr=false``)."""
    data: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--set expects KEY=VALUE, got {item!r}")
        try:
            data[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ValueError(f"--set {item!r}: the value is not valid YAML") from None
    return data


def build(cls: type[O], data: dict[str, Any], source: str = "options") -> O:
    """``cls(**data)``, or a one-line ValueError about the first thing wrong (``source`` names where it came from,
    e.g. the config file; empty: none)."""
    prefix = f"{source}: " if source else ""
    unknown = [key for key in data if key not in cls.model_fields]
    if unknown:
        raise ValueError(f"{prefix}unknown option {unknown[0]!r}{_suggest(unknown[0], cls)}")
    try:
        return cls(**data)
    except ValidationError as err:
        raise ValueError(f"{prefix}{_first_error(err)}") from None


def load(cls: type[O], config: str | None = None, overrides: list[str] | None = None, **fixed: Any) -> O:
    """Options from a YAML file, then ``--set`` overrides, then ``fixed`` values (command-line flags), checked."""
    data = read_yaml(config) if config else {}
    data.update(parse_overrides(overrides or []))
    data.update({k: v for k, v in fixed.items() if v is not None})
    return build(cls, data, source=config or "options")


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
    if not where:  # a check of the options together
        return message
    return f"option {where!r} = {first['input']!r} is not allowed: {message}"
