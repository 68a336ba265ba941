"""Session directories built from a layout (``strategies.SESSION_DIRS``), what they hold,
and a guard that turns a hang into a failure.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from session_resume.storage import store

from .strategies import dumps
from conftest import apex_state


def build_dir(top: Path, layout: dict[str, tuple[str, bytes]]) -> Path:
    """``top``/repo is the root (a ``.git`` marks it), the session is repo/agent-output/demo;
    ``top``/outside holds a valid state that links may point at."""
    repo = top / "repo"
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    (repo / ".git").mkdir()
    outside = top / "outside"
    outside.mkdir()
    (outside / "secret.json").write_bytes(dumps(apex_state()))
    for name, (kind, data) in layout.items():
        p = d / name
        if kind == "file":
            p.write_bytes(data)
        elif kind == "empty":
            p.write_bytes(b"")
        elif kind == "dir":
            p.mkdir()
            (p / "inner").write_bytes(b"{}")
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "link_inside":
            other = store.BAK if name != store.BAK else store.STATE
            os.symlink(other, p)
        elif kind == "link_dangling":
            os.symlink("gone.json", p)
        elif kind == "link_out":
            os.symlink("../../../outside/secret.json", p)
    return d


def entries(d: Path) -> dict[str, bytes | str]:
    """What the directory holds: regular files' bytes; other entries by their type."""
    out: dict[str, bytes | str] = {}
    for name in sorted(os.listdir(d)):
        p = d / name
        st_ = os.lstat(p)
        if stat.S_ISLNK(st_.st_mode):
            out[name] = "link->" + os.readlink(p)
        elif stat.S_ISREG(st_.st_mode):
            out[name] = p.read_bytes()
        elif stat.S_ISDIR(st_.st_mode):
            out[name] = "dir"
        else:
            out[name] = "special"
    return out


def _read(p: Path) -> bytes | None:
    try:
        return p.read_bytes() if p.is_file() else None
    except OSError:
        return None


def temps(d: Path) -> set[str]:
    return {n for n in os.listdir(d) if n.startswith(store.TMP_PREFIX) and n.endswith(".tmp")}


class Hang(Exception):
    """An operation on a session directory took longer than HANG_SECONDS (a blocking read)."""


HANG_SECONDS = 5


def _alarm(signum: int, frame: Any) -> None:
    raise Hang(f"no answer within {HANG_SECONDS} s: something blocks (a FIFO read?)")


def with_dir(layout: dict[str, tuple[str, bytes]], fn: Callable[[Path, Path], None]) -> None:
    """Build the layout in a fresh temporary directory and run ``fn`` on it; a hang becomes a
    failure Hypothesis can shrink, not a stuck test run."""
    with tempfile.TemporaryDirectory(prefix="sr-fuzz-") as top:
        d = build_dir(Path(top), layout)
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(HANG_SECONDS)
        try:
            fn(d, Path(top) / "repo")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
