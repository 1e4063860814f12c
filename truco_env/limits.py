"""The limits on files that come from strangers, and the bounded readers every loader shares.

Why: policies, checkpoints, exports, records and configs travel between people, and a small hostile file must
not cost gigabytes or minutes, nor end in a traceback. Every loader checks what a file *declares* (sizes,
shapes, nesting) against the limits below before it allocates anything, and reports a problem as one line
naming the file, what was wrong and what is allowed. The limits sit far above anything this project writes
(docs/training.md, "Limits on loaded files", lists them with the largest real file of each kind).

This module is in the environment package because records are read here; ``agents`` and ``training`` import it
(the layers only import downwards). It is pure Python, like the rules it serves; only :func:`npz_headers`, which
reads numpy's own file format, imports numpy.
"""

from __future__ import annotations

import json
import os
import zipfile
from itertools import accumulate
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MIB = 1 << 20

#: Characters of a user-supplied string (a card, an action, a format name) that an error message echoes.
MAX_ECHO = 40
#: Nesting of JSON and YAML documents (ours nest at most 6 levels; Python's parsers recurse, so a file nested
#: 100,000 levels deep would otherwise end in a RecursionError).
MAX_DEPTH = 64
#: A match record (the largest a random match to 1,000 points writes is 16 kB).
MAX_RECORD_BYTES = 16 * MIB
#: The JSON metadata of a policy, a PPO checkpoint, an ONNX export or a CFR checkpoint (at most 15 kB here).
MAX_METADATA_BYTES = 16 * MIB
#: A YAML options file, or one ``--set`` value (the shipped configs are under 2 kB).
MAX_CONFIG_BYTES = 1 * MIB
#: A CFR strategy export (``truco export cfr``) and a CFR checkpoint's arrays together, as their headers
#: declare them (argentine-mini's converged checkpoint: 22 MB of arrays in a 1.7 MB file).
MAX_TABLE_BYTES = 256 * MIB
#: Members of a CFR checkpoint's zip (it has 6 arrays plus at most 12 extras).
MAX_NPZ_MEMBERS = 32
#: A policy network's hidden layers, their width, and its parameters (the shipped ones: 2 layers of 128,
#: 0.2 M parameters; the gauntlet's: 2 of 256, 0.4 M). Checked on the recorded architecture, before the
#: network is built.
MAX_HIDDEN_LAYERS = 8
MAX_HIDDEN_WIDTH = 4096
MAX_POLICY_PARAMETERS = 32_000_000

# json_depth: every byte but quotes and brackets is dropped, and each bracket outside strings steps the depth by this
_NOT_STRUCTURE = bytes(range(256)).translate(None, b'"[]{}')
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def clip(text: Any, limit: int = MAX_ECHO) -> str:
    """``text`` (``str()`` of it) cut to ``limit`` characters plus an ellipsis: what an error echoes of a value
    someone else wrote."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def one_line(exc: BaseException, limit: int = 600) -> str:
    """``exc`` as one line of ``limit`` characters at most (then an ellipsis), whatever it holds: the rule that an
    error is one line and echoes only a clipped piece of what the user wrote (an OSError's file name included)."""
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{clip(repr(str(exc.filename)), 200)}: {exc.strerror or type(exc).__name__}"
    else:
        text = str(exc)
    return clip(" ".join(text.splitlines()), limit)


def _where(where: str, problem: str) -> str:
    return f"{where}: {problem}" if where else problem


def json_depth(data: bytes) -> int:
    """The deepest nesting of ``[``/``{`` outside strings in JSON text, without parsing it. Escaped backslashes,
    then escaped quotes are dropped first, so that every quote left opens or closes a string; then everything but
    quotes and brackets, then the strings' pieces (bytes' own C-speed passes); the rest is summed in C too
    (a 16 MB file of brackets takes well under a second)."""
    data = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    outside = b"".join(data.split(b'"')[::2])  # the even pieces between quotes lie outside strings
    return max(0, max(accumulate(map(_STEP.__getitem__, outside)), default=0))


def loads_json(data: str | bytes, where: str = "", max_bytes: int = MAX_METADATA_BYTES,
               error: type[Exception] = ValueError) -> Any:
    """Parse JSON text of at most ``max_bytes`` bytes and :data:`MAX_DEPTH` levels; ``error`` (one line that
    starts with ``where``) for anything else."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > max_bytes:
        raise error(_where(where, f"{len(data):,} bytes of JSON, more than the {max_bytes:,} allowed"))
    depth = json_depth(data)
    if depth > MAX_DEPTH:
        raise error(_where(where, f"nested too deeply ({depth} levels; at most {MAX_DEPTH} allowed)"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise error(_where(where, "not UTF-8 text")) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise error(_where(where, f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}")) from None
    except (ValueError, RecursionError) as err:  # an integer literal beyond Python's digit limit
        raise error(_where(where, f"not usable JSON ({clip(str(err).splitlines()[0], 120)})")) from None


def read_json(path: str | os.PathLike, max_bytes: int, error: type[Exception] = ValueError) -> Any:
    """:func:`loads_json` of a file, reading at most ``max_bytes + 1`` bytes of it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as err:
        raise error(f"{path}: cannot read ({err.strerror or err})") from None
    if len(data) > max_bytes:
        raise error(f"{path}: larger than the {max_bytes:,} bytes allowed for this kind of file")
    return loads_json(data, str(path), max_bytes, error)


def npz_headers(path: str | os.PathLike, required: set[str], optional: set[str], what: str = "file",
                max_bytes: int = MAX_TABLE_BYTES,
                error: type[Exception] = ValueError) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The declared shape and dtype of each array of an ``.npz``, read from the member headers alone (nothing is
    decompressed beyond them). ``error`` when a ``required`` array is missing (then the file is no ``what``), for
    a member neither required nor ``optional`` (or a name without ``.npy``), an object (pickled) array, or arrays
    that declare more than ``max_bytes`` together: ``np.load`` allocates what a header declares before it reads
    the data, so a small file of compressed zeros could declare gigabytes."""
    import numpy as np

    allowed = required | optional
    declared: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    total = 0
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        if len(members) > MAX_NPZ_MEMBERS:
            raise error(f"{path}: {len(members)} members in the archive, at most {MAX_NPZ_MEMBERS} allowed")
        missing = sorted(required - {m.filename[:-4] for m in members if m.filename.endswith(".npy")})
        if missing:
            raise error(f"{path}: not a {what} (missing arrays {missing})")
        for member in members:
            name = member.filename[:-4] if member.filename.endswith(".npy") else None
            if name not in allowed or name in declared:
                raise error(f"{path}: unexpected member {clip(member.filename)!r} (allowed: "
                            f"{', '.join(sorted(allowed))}, each once, as .npy)")
            with archive.open(member) as handle:
                try:
                    version = np.lib.format.read_magic(handle)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(handle)
                    elif version == (2, 0):
                        shape, _, dtype = np.lib.format.read_array_header_2_0(handle)
                    else:
                        raise ValueError(f"npy format version {version}")
                except ValueError as err:
                    raise error(f"{path}: array {name!r} has no readable header ({clip(err, 80)})") from None
            if dtype.hasobject:
                raise error(f"{path}: refused: array {name!r} holds Python objects (a pickle); checkpoints are "
                            "plain numeric arrays and are never unpickled")
            total += int(np.prod(shape, dtype=object)) * dtype.itemsize
            if total > max_bytes:
                raise error(f"{path}: its arrays declare more than the {max_bytes:,} bytes allowed "
                            f"(array {name!r} has shape {clip(shape, 60)} of {dtype})")
            declared[name] = (tuple(shape), dtype)
    return declared
