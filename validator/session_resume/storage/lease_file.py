"""The sentinel and lease ``00-session.active`` (DESIGN §6–7).

A JSON object: ``v``, ``session`` (id), ``owner``, ``pid`` (optional long-lived owner process),
``host``, ``started``, ``heartbeat``. Agents call the CLI once per write, so the CLI's own pid
proves nothing: the heartbeat, refreshed by every write and by ``ping``, is the liveness
signal. The liveness *judgement* (:func:`lease_state`) is pure; reading, writing and probing a
pid are the I/O helpers below it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.jsonread import parse_json_bytes
from session_resume.core.timeutil import format_ts, parse_ts

SENTINEL = "00-session.active"
SENTINEL_VERSION = 1
DEFAULT_STALE_SECONDS = 300
_MAX_BYTES = 64 * 1024
TMP_PREFIX = "." + SENTINEL + "."


def new_session_id() -> str:
    return secrets.token_hex(8)


def make(
    session: str, *, owner: str, now: datetime, pid: int | None = None, host: str | None = None
) -> dict[str, Any]:
    ts = format_ts(now)
    return {
        "v": SENTINEL_VERSION,
        "session": session,
        "owner": owner,
        "pid": pid,
        "host": host or socket.gethostname(),
        "started": ts,
        "heartbeat": ts,
    }


@dataclass(frozen=True)
class Lease:
    """What a sentinel means now. ``state``: none | live | stale | ended | dead_owner |
    unreadable."""

    state: str
    sentinel: dict[str, Any] | None = None
    age_seconds: float | None = None

    @property
    def orphaned(self) -> bool:
        return self.state in ("stale", "dead_owner")


def lease_state(
    sentinel: dict[str, Any] | None,
    *,
    now: datetime,
    ended: bool,
    owner_alive: bool | None,
    stale_seconds: int = DEFAULT_STALE_SECONDS,
) -> Lease:
    """Pure. ``ended``: the worklog holds a ``session_end`` for the sentinel's session.
    ``owner_alive``: whether the named owner pid runs on this host (None: unknown)."""
    if sentinel is None:
        return Lease("none")
    hb = parse_ts(sentinel.get("heartbeat"))
    if hb is None:
        return Lease("unreadable", sentinel)
    age = (now - hb).total_seconds()
    if ended:
        return Lease("ended", sentinel, age)
    if owner_alive is False:
        return Lease("dead_owner", sentinel, age)
    if age > stale_seconds:
        return Lease("stale", sentinel, age)
    return Lease("live", sentinel, age)


# --- I/O -----------------------------------------------------------------------------------


def read(session_dir: str | os.PathLike[str]) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """The lease as found: None when there is no file; an object, possibly without a usable
    ``heartbeat`` (``{}`` when it is not a JSON object at all), which :func:`lease_state`
    then judges ``unreadable`` (SR510) rather than mistaking it for no lease."""
    path = Path(session_dir) / SENTINEL
    if not os.path.lexists(path):
        return None, []
    if os.path.islink(path) or not path.is_file():
        return {}, [diag("SR510", "the sentinel is not a regular file", file=str(path))]
    try:
        with open(path, "rb") as fh:
            data = fh.read(_MAX_BYTES + 1)
    except OSError as exc:
        return {}, [diag("SR510", f"cannot read the sentinel: {exc.strerror}", file=str(path))]
    if len(data) > _MAX_BYTES:
        return {}, [diag("SR510", "the sentinel is larger than 64 KiB", file=str(path))]
    value = parse_json_bytes(data, file=str(path)).value
    if value is None:
        return {}, [diag("SR510", "the sentinel is not a JSON object", file=str(path))]
    if not isinstance(value.get("session"), str) or parse_ts(value.get("heartbeat")) is None:
        return value, [
            diag("SR510", "the sentinel is not a valid lease (session, heartbeat)", file=str(path))
        ]
    return value, []


def write(session_dir: str | os.PathLike[str], sentinel: dict[str, Any]) -> None:
    """Atomic replace (temp file + rename), never following a link."""
    from session_resume.storage.store import _fsync_dir, _retry, _write_temp

    d = Path(session_dir)
    tmp = _write_temp(d, (json.dumps(sentinel, indent=2) + "\n").encode(), prefix=TMP_PREFIX)
    try:
        _retry(os.replace, tmp, d / SENTINEL)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(d)


def remove(session_dir: str | os.PathLike[str]) -> bool:
    try:
        os.unlink(Path(session_dir) / SENTINEL)
        return True
    except FileNotFoundError:
        return False


def owner_alive(sentinel: dict[str, Any] | None) -> bool | None:
    """Whether the sentinel's owner pid runs here; None when unknowable (no pid, other host)."""
    if not sentinel:
        return None
    pid = sentinel.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    if sentinel.get("host") != socket.gethostname():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return None
    return True
