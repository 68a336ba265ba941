"""What every importer shares (pure: no I/O). The plan an importer produces, timestamp and
path normalisation, stable ids."""

from __future__ import annotations

import hashlib
import posixpath
import re
from datetime import UTC, datetime, timedelta

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, DiagnosticsError
from session_resume.core.rules import path_problem, step_number
from session_resume.core.timeutil import format_ts
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SKEW = timedelta(seconds=300)
OLD_SOURCE = timedelta(days=7)
_PROJECT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")


class ImportRefused(DiagnosticsError):
    """The import cannot be done; ``diagnostics`` say why. Nothing was written."""

    def __init__(self, diagnostics: list[Diagnostic], exit_code: int = 1):
        super().__init__(diagnostics)
        self.exit_code = exit_code


@record
class ImportEvent:
    """One worklog event to append after the ``imported`` event."""

    event: str
    ts: str
    session: str
    step: str | None = None
    sub_step: str | None = None
    detail: dict[str, Any] | None = None


@record
class ImportPlan:
    """Everything an import writes into the target session directory.

    ``document``: the v3.0 state (``updated`` and ``revision`` are set by the store when it is
    written). ``imported_detail``: the detail of the first worklog event, ``imported``.
    ``events``: the source's history mapped to worklog events, appended after it. ``lease``:
    the sentinel to write (the source session was still running when it stopped), or None.
    ``files``: further files for the session directory (relative POSIX path → bytes).
    ``possibly_incomplete``: repository-relative files the source marked as being written or
    read when it stopped (``{"path", "status", "step"}``).
    """

    source: str
    workflow: str
    document: dict[str, Any]
    session: str
    imported_detail: dict[str, Any]
    events: list[ImportEvent] = field(default_factory=list)
    lease: dict[str, Any] | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    possibly_incomplete: list[dict[str, Any]] = field(default_factory=list)


# --- timestamps ----------------------------------------------------------------------------


def parse_iso(value: Any) -> tuple[datetime | None, str]:
    """An ISO-8601 timestamp as a UTC instant, and its form: ``z`` (already the protocol's
    form), ``offset`` (``+00:00`` or any other offset), ``naive`` (no zone: taken as UTC) or
    ``bad`` (not a timestamp)."""
    if not isinstance(value, str) or not value.strip():
        return None, "bad"
    text = value.strip()
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None, "bad"
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC), "naive"
    kind = "z" if text.endswith(("Z", "z")) else "offset"
    return dt.astimezone(UTC), kind


class Timestamps:
    """Normalises a source's timestamps to the protocol's form (RFC 3339 UTC, ``Z``, whole
    seconds) and remembers what it had to do, for one summary note per source file."""

    def __init__(self, now: datetime):
        self.now = now
        self.offset: dict[str, int] = {}
        self.naive: dict[str, int] = {}
        self.future: list[tuple[str, str]] = []
        self._seen: set[tuple[str, str, str]] = set()

    def instant(self, value: Any, file: str, where: str = "") -> datetime | None:
        dt, kind = parse_iso(value)
        seen = (file, where, str(value))
        if where and seen in self._seen:
            return dt  # the same field read twice is counted once
        self._seen.add(seen)
        if kind == "offset":
            self.offset[file] = self.offset.get(file, 0) + 1
        elif kind == "naive":
            self.naive[file] = self.naive.get(file, 0) + 1
        return dt

    def ts(self, value: Any, file: str, *, where: str = "") -> str | None:
        """The normalised timestamp; one later than now (beyond the clock skew) is clamped to
        now, since a state may not hold future times (SR305)."""
        first = (file, where, str(value)) not in self._seen
        dt = self.instant(value, file, where)
        if dt is None:
            return None
        if dt > self.now + SKEW:
            if first:
                self.future.append((file, where or str(value)))
            dt = self.now
        return format_ts(dt)

    def notes(self) -> list[Diagnostic]:
        out = []
        for file, n in sorted(self.offset.items()):
            out.append(
                diag(
                    "SR805",
                    f"{n} timestamp(s) with a UTC offset (such as +00:00) were rewritten in "
                    "UTC with Z",
                    file=file,
                )
            )
        for file, n in sorted(self.naive.items()):
            out.append(
                diag(
                    "SR805",
                    f"{n} timestamp(s) without a time zone were taken as UTC",
                    file=file,
                )
            )
        for file, where in self.future:
            out.append(
                diag(
                    "SR805",
                    f"{where} is later than now; it was clamped to now (the original is kept "
                    "under x-legacy)",
                    file=file,
                )
            )
        return out


def latest(*values: str | None) -> str | None:
    """The latest of some normalised timestamps (they sort as strings)."""
    present = [v for v in values if v]
    return max(present) if present else None


def old_source_note(last_activity: str | None, now: datetime, file: str) -> list[Diagnostic]:
    if last_activity is None:
        return []
    dt, _ = parse_iso(last_activity)
    if dt is None or now - dt <= OLD_SOURCE:
        return []
    days = (now - dt).days
    return [
        diag(
            "SR814",
            f"the source was last active {days} days ago ({last_activity}); check the work is "
            "still current before resuming",
            file=file,
        )
    ]


# --- ids and names -------------------------------------------------------------------------


def derive_session_id(prefix: str, *parts: str) -> str:
    """A stable session id from the source's own identity (the same source gives the same id
    on every import)."""
    digest = hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:12]
    return f"{prefix}-{digest}"


def project_name(candidates: list[str | None]) -> str:
    """The first candidate made into a valid project name (letters, digits, ``._-``)."""
    for c in candidates:
        if not c:
            continue
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", c).strip("-._")[:128]
        if name and _PROJECT.match(name):
            return name
    return "imported"


def step_int(key: str) -> int:
    return step_number(key.partition("_")[0])


def current_step_of(steps: dict[str, Any]) -> int:
    """``current_step``: the in-progress step's number, else the last step worked on (the
    highest complete one), else 0."""
    running = [k for k, s in steps.items() if s.get("status") == "in_progress"]
    if running:
        return step_int(running[0])
    done = [step_int(k) for k, s in steps.items() if s.get("status") == "complete"]
    return max(done, default=0)


# --- paths ---------------------------------------------------------------------------------


def under(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` (both absolute POSIX paths, compared lexically), or None
    if it is not inside it."""
    p = posixpath.normpath(path)
    b = posixpath.normpath(base)
    if p == b:
        return "."
    if b == "/":
        return p.lstrip("/")
    if p.startswith(b.rstrip("/") + "/"):
        return p[len(b.rstrip("/")) + 1 :]
    return None


def repo_path(prefix: str | None, rel: str) -> str | None:
    """A path relative to a source's base directory as a repository-relative path, given the
    base's own repository-relative location ``prefix`` ("" for the root itself, None when the
    base is outside the repository). None when the result is not a safe protocol path."""
    if prefix is None:
        return None
    joined = posixpath.normpath(posixpath.join(prefix, rel)) if prefix else posixpath.normpath(rel)
    if joined in ("", ".") or path_problem(joined) is not None:
        return None
    return joined
