"""State bytes this process already knows to be a valid current state, per state file.

Reading a state file means classifying its bytes: a strict parse, the version gate and the
3.0 schema (``store.classify``, pure). A write moment reads the same file twice, once to build
the change and once more under the lock (docs/spec.md §4: the revision check, and ``.bak`` only
from a valid state), and ``save`` has just validated the bytes it wrote. Classifying is a pure
function of the bytes, so when the file holds exactly the bytes remembered here it classifies
as it did then: "ok", with no finding (only such bytes are remembered). Nothing is trusted but
a byte-for-byte comparison with what is read now, under the lock: never a file's size, time or
inode, which another writer, a crash or a hand edit could leave equal.
"""

from __future__ import annotations

MAX_FILES = 8  # a long-lived process (the MCP server) writes a few sessions
MAX_BYTES = 1 << 20  # larger states are classified every time

# state path -> (bytes known to classify "ok" without findings, their revision)
_known: dict[str, tuple[bytes, int]] = {}


def remember(path: str, data: bytes, revision: int) -> None:
    """``data``, the content of the state file ``path``, classifies "ok" without findings and
    holds ``revision``."""
    if len(data) > MAX_BYTES:
        _known.pop(path, None)
        return
    if len(_known) >= MAX_FILES and path not in _known:
        _known.clear()
    _known[path] = (data, revision)


def revision(path: str, data: bytes) -> int | None:
    """The revision of ``data`` (just read from ``path``) when it is what ``path`` was known
    to hold, else None: a writer needs no more of a known file (no parse)."""
    known = _known.get(path)
    return known[1] if known is not None and known[0] == data else None
