"""Seeds that an outside program cannot compute: the deals of any match an ``exec:`` program plays in.

Why: the deals of a tournament follow from its seed by public code (:func:`training.measure.evaluate.match_seed_for`), and
a small seed is easy to guess. A program that sees its own three cards could try the seeds 0 to 9 and every deal
index, find the deal that gives it those cards and read every other seat's hand from it; a program handed a seed
derived from the tournament's by public code could do the same without guessing. So wherever a program plays, the
match seeds, the seeds of its own randomness and the seeds of a trainer's tables pass through :func:`hidden_seed`:
HMAC-SHA256 of the public seed under a key that only the person running the tournament holds.

The key is 32 random bytes, written once (mode 0600) to ``$TRUCO_DEAL_KEY_FILE``, or else to
``$XDG_CONFIG_HOME/truco-rl/deal-key`` (``~/.config/truco-rl/deal-key``). With the same key the same command plays
the same deals, so a tournament reproduces exactly for whoever holds the key (copy the file to reproduce it on
another machine or on every node of a cluster); without it the deals cannot be computed from anything a program
receives. The key protects what the protocol sends, not the machine: a program runs with your rights and could
read the key file itself, so run programs you do not trust as another user or in a container (docs/protocol.md).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from functools import lru_cache
from pathlib import Path

from truco_env.limits import clip

KEY_ENV = "TRUCO_DEAL_KEY_FILE"
KEY_BYTES = 32


def key_path() -> Path:
    """Where this user's deal key lives (module docstring)."""
    if os.environ.get(KEY_ENV):
        return Path(os.environ[KEY_ENV])
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "truco-rl" / "deal-key"


@lru_cache(maxsize=4)
def _key(path: Path) -> bytes:
    """The key at ``path``, made there first if there is none (written whole, then linked in place, so that
    worker processes starting together all read the one key that won)."""
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as handle:
                handle.write(secrets.token_hex(KEY_BYTES) + "\n")
            try:
                os.link(temporary, path)  # fails if another process linked its key first: that one is used
            except FileExistsError:
                pass
            except OSError:  # a file system without hard links: the first process to create the name wins
                try:
                    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(descriptor, "w") as handle, open(temporary) as source:
                        handle.write(source.read())
                except FileExistsError:
                    pass
            finally:
                os.remove(temporary)
        with open(path, "rb") as handle:
            text = handle.read(4 * KEY_BYTES).strip()
        key = bytes.fromhex(text.decode("ascii"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        detail = getattr(exc, "strerror", None) or "not the 64 hexadecimal digits of a key"
        raise ValueError(f"deal key {clip(str(path), 200)!r}: {detail} (it hides the deals from outside programs; "
                         f"set {KEY_ENV} to a writable path, or delete a damaged file to make a new key)") from None
    if len(key) != KEY_BYTES:
        raise ValueError(f"deal key {clip(str(path), 200)!r}: {len(key)} bytes, expected {KEY_BYTES} (delete it "
                         "to make a new key)")
    return key


def hidden_seed(*parts: int | str | None, bits: int = 48) -> int:
    """A seed of ``bits`` bits for ``parts`` (the public seed and what it seeds), keyed with this user's deal key:
    the same parts give the same seed here, and nothing without the key can compute it. Match seeds take 63 bits
    (too many to search against recorded cards); a program's own seed keeps 48, which every language's numbers
    hold exactly."""
    message = repr(tuple(int(p) if isinstance(p, int) or hasattr(p, "__index__") else p for p in parts)).encode()
    digest = hmac.new(_key(key_path()), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - bits)
