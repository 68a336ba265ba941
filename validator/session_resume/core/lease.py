"""The lease judgement, pure: what a sentinel (``00-session.active``) means now.

A sentinel is a JSON object: ``v``, ``session`` (id), ``owner``, ``pid`` (optional long-lived
owner process), ``host``, ``started``, ``heartbeat``. Agents call the CLI once per write, so
the CLI's own pid proves nothing: the heartbeat, refreshed by every write and by ``ping``
(by its timer for a long-lived owner, docs/spec.md §7), is the liveness signal. Reading and
writing the file, and probing a pid, are :mod:`session_resume.storage.lease_file`'s.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta

from session_resume.core.outcomes import LeaseState
from session_resume.core.timeutil import format_ts, parse_ts
from session_resume.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SENTINEL = "00-session.active"
SENTINEL_VERSION = 1
DEFAULT_STALE_SECONDS = 300
DEFAULT_SKEW_SECONDS = 300  # how far a heartbeat may run ahead of now (clocks differ)
# What a session id is (every writer accepts only these; a lease naming anything else is
# unreadable, SR510, so no other text from it is ever printed or put into a command).
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}\Z")


def is_session_id(value: object) -> bool:
    """Whether ``value`` is a session id (:data:`SESSION_ID`)."""
    return isinstance(value, str) and SESSION_ID.match(value) is not None


def new_session_id() -> str:
    return os.urandom(8).hex()


def yours_test(holder: str) -> str:
    """How an agent that lost its context tells whether session ``holder`` is its own: a
    check it can make literally (the id in its own conversation), never a judgement."""
    return (
        f"only if the id {holder} appears earlier in this conversation or in your notes, "
        "printed by a `session start` you ran; if you cannot find it there, it is not yours"
    )


def stale_at(sentinel: dict[str, Any] | None, stale_seconds: int) -> str | None:
    """When a live lease turns stale if its session writes nothing more: its heartbeat plus
    the stale threshold (None: no readable heartbeat)."""
    hb = parse_ts((sentinel or {}).get("heartbeat"))
    if hb is None:
        return None
    return format_ts(hb + timedelta(seconds=stale_seconds))


def make(
    session: str,
    *,
    owner: str,
    now: datetime,
    pid: int | None = None,
    host: str | None = None,
    implicit: bool = False,
) -> dict[str, Any]:
    """A new lease. ``implicit``: taken by a write that named no session; the next
    ``session start`` adopts it rather than refusing it (docs/spec.md §7)."""
    ts = format_ts(now)
    out: dict[str, Any] = {
        "v": SENTINEL_VERSION,
        "session": session,
        "owner": owner,
        "pid": pid,
        "host": host or hostname(),
        "started": ts,
        "heartbeat": ts,
    }
    if implicit:
        out["implicit"] = True
    return out


def is_implicit(sentinel: dict[str, Any] | None) -> bool:
    """Whether the lease was taken by a write with no session (adoptable by `session start`)."""
    return bool(sentinel) and (sentinel or {}).get("implicit") is True


@record(frozen=True)
class Lease:
    """What a sentinel means now. ``state``: none | live | idle | stale | ended | dead_owner |
    unreadable (idle: an implicit lease whose heartbeat is stale; not an orphan)."""

    state: LeaseState
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
    skew_seconds: int = DEFAULT_SKEW_SECONDS,
) -> Lease:
    """Pure. ``ended``: the worklog holds a ``session_end`` for the sentinel's session.
    ``owner_alive``: whether the named owner pid runs on this host (None: unknown).
    A heartbeat further in the future than ``skew_seconds`` is no proof of life: stale."""
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
    if age > stale_seconds or age < -skew_seconds:
        # An implicit lease (taken by writes naming no session, a person at a shell) has no
        # session to crash: silent, it is idle, never an orphan (docs/spec.md §7).
        return Lease("idle" if is_implicit(sentinel) else "stale", sentinel, age)
    return Lease("live", sentinel, age)


def hostname() -> str:
    """This machine's name, as ``socket.gethostname()`` gives it (a lease's ``host``)."""
    # os.uname spares a cold write the socket import; socket covers Windows
    uname = getattr(os, "uname", None)
    if uname is not None:
        return str(uname().nodename)
    # lazy: only where os.uname is missing (Windows)
    import socket

    return socket.gethostname()
