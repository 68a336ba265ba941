"""The lease a long-lived server process owns (docs/spec.md §7).

One session id per server process. The first write to a session directory (or the
``session_start`` tool) takes its lease through :func:`services.leases.start_session` with the
process's own pid (the host is recorded by the lease itself), so a reader on this host sees at
once that the owner died (``storage.lease_file.owner_alive``). While the process lives,
:meth:`LeaseKeeper.beat` refreshes the heartbeat of every lease it holds
(:func:`services.leases.ping_session`) every ``interval`` seconds, so the server's writes need
not (unless the interval is over half the stale threshold, or the timer fell behind);
:meth:`LeaseKeeper.end_all` ends them when the client goes away.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from session_resume.core.lease import new_session_id
from session_resume.records import field, record, replace
from session_resume.services import leases
from session_resume.services.context import WriteContext, default_owner
from session_resume.services.errors import ServiceError
from session_resume.services.leases import SessionResult
from session_resume.storage.held import StoreError

HEARTBEAT_SECONDS = 60.0  # well inside the default 300 s stale threshold


def server_session_id(pid: int | None = None) -> str:
    """The session id of this server process: ``mcp-<pid>-<random>`` (matches the session id
    pattern of :mod:`services.context`)."""
    return f"mcp-{pid or os.getpid()}-{new_session_id()[:8]}"


@record
class LeaseKeeper:
    """The leases this process holds, by session directory."""

    session: str = field(default_factory=server_session_id)
    pid: int = field(default_factory=os.getpid)
    owner: str = field(default_factory=lambda: f"{default_owner()}@{socket.gethostname()} (mcp)")
    held: dict[Path, WriteContext] = field(default_factory=dict)
    log: Callable[[str], None] = lambda _msg: None
    interval: float = HEARTBEAT_SECONDS  # how often the server task calls beat()

    def beats_in_time(self, stale_seconds: float) -> bool:
        """Whether the timer alone keeps a lease live: a heartbeat never older than half the
        stale threshold. Then the writes leave the heartbeat to it (docs/spec.md §7)."""
        return self.interval * 2 <= stale_seconds

    def context(self, ctx: WriteContext) -> WriteContext:
        """``ctx`` acting as this server's session."""
        return replace(ctx, session=self.session)

    def holds(self, session_dir: Path) -> bool:
        return session_dir in self.held

    def ensure(self, ctx: WriteContext, *, takeover: bool = False) -> SessionResult | None:
        """Take the lease of ``ctx``'s session directory unless this process holds it already
        (None then). A live lease of another session: ServiceError SR511 (unless
        ``takeover``); an orphaned one is taken over (logged)."""
        if ctx.session_dir in self.held and not takeover:
            return None
        return self.start(ctx, takeover=takeover)

    def start(self, ctx: WriteContext, *, takeover: bool = False) -> SessionResult:
        """`session start` as this process: the lease names its pid and host."""
        mine = self.context(ctx)
        res = leases.start_session(mine, owner=self.owner, pid=self.pid, takeover=takeover)
        self.held[ctx.session_dir] = mine
        return res

    def after_write(self, ctx: WriteContext, lease_action: str) -> None:
        """A write that created, adopted or took over the lease (the first write to the
        directory, or someone ended or took this process's lease meanwhile) wrote one without
        the pid: record the pid and this server's owner, and hold the lease from now on."""
        if lease_action != "keep" or not self.holds(ctx.session_dir):
            self.start(ctx)

    def end(self, ctx: WriteContext, reason: str | None = None) -> SessionResult:
        """`session end` of this process's lease in ``ctx``'s directory. The lease of another
        session is left alone (SR511 for a live one)."""
        mine = self.context(ctx)
        self.held.pop(ctx.session_dir, None)
        holder = (leases.read_lease(mine).sentinel or {}).get("session")
        if holder is not None and holder != self.session:
            return SessionResult(None, "none")  # another session's lease is not ours to end
        return leases.end_session(mine, reason=reason)

    def beat(self, now: datetime) -> None:
        """Refresh the heartbeat of every lease held. A lease lost to another session (taken
        over, ended), or one the session directory no longer lets this process keep (the
        lease or the lock turned into a directory, a FIFO or a link out of the repository,
        the directory itself into a link: any coded refusal) is dropped, with a note on the
        log; the server keeps serving (issue 25, finding 16)."""
        for d, ctx in list(self.held.items()):
            try:
                leases.ping_session(replace(ctx, now=now))
            except (ServiceError, StoreError) as exc:
                self.held.pop(d, None)
                codes = ", ".join(x.code for x in exc.diagnostics)
                self.log(f"lease of {d} lost ({codes}); the next write takes it again")
            except (OSError, ValueError) as exc:
                self.held.pop(d, None)
                self.log(f"heartbeat of {d} failed ({exc}); the lease is dropped")

    def end_all(self, now: datetime) -> None:
        """End every session this process holds (the client closed stdin)."""
        for d, ctx in list(self.held.items()):
            try:
                self.end(replace(ctx, now=now))
            except (ServiceError, StoreError, OSError, ValueError) as exc:
                self.log(f"could not end the session in {d}: {exc}")
