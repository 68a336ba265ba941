"""The append-only worklog ``00-worklog.jsonl`` (docs/spec.md §6): one JSON object per line.

Appends happen under the session lock, one ``write()`` per line, so ``seq`` is monotonic.
Readers tolerate a torn last line (a crash mid-append) and report garbage elsewhere with its
line number. The tail is read from the end of the file, never by scanning it whole.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.storage import fileio

WORKLOG = "00-worklog.jsonl"
EVENT_VERSION = 1
EVENTS = (
    "session_start",
    "session_end",
    "step_start",
    "checkpoint",
    "step_complete",
    "step_skip",
    "decision",
    "finding_add",
    "finding_resolve",
    "review_audit",
    "migrated",
    "recovered",
    "recreated",
    "heartbeat",
    "note",
    "takeover",
    "archived",
    "imported",
)
_TAIL_CHUNK = 64 * 1024
_RECORD_START = b'{"v":'  # every record this module writes starts so


@dataclass
class Tail:
    """The last events of a worklog, newest last."""

    events: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    last_seq: int = 0


def as_int(value: Any) -> int | None:
    """An integer in the JSON sense: 2 and 2.0 are both the integer 2 (JSON Schema agrees)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def read_tail(path: str | os.PathLike[str], n: int = 10) -> Tail:
    """The last ``n`` parseable events, reading backwards from the end in chunks."""
    out = Tail()
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return out
    except OSError as exc:
        out.diagnostics.append(diag("SR501", f"cannot read the worklog: {exc.strerror}", file=name))
        return out
    try:
        return _tail_from(fd, name, n, out)
    except OSError as exc:
        out.diagnostics.append(diag("SR501", f"cannot read the worklog: {exc.strerror}", file=name))
        return out
    finally:
        os.close(fd)


def _tail_from(fd: int, name: str, n: int, out: Tail) -> Tail:
    size = os.fstat(fd).st_size
    buf = b""
    pos = size
    lines: list[bytes] = []
    # Read backwards until we hold n complete lines after the first (possibly partial) one.
    while pos > 0 and len(lines) <= n:
        step = min(_TAIL_CHUNK, pos)
        pos -= step
        buf = os.pread(fd, step, pos) + buf
        lines = buf.split(b"\n")
    torn = not buf.endswith(b"\n") and size > 0
    if buf.endswith(b"\n"):
        lines = lines[:-1]
    if pos > 0:
        lines = lines[1:]  # the first piece may start mid-line
    # line numbers only when we read the whole file (a tail read does not know them)
    first_line_no = 1 if pos == 0 else None
    parsed: list[dict[str, Any]] = []
    for i, raw in enumerate(lines):
        last = i == len(lines) - 1
        if not raw.strip():
            continue
        ev = _parse_line(raw)
        if ev is None:
            if (last and torn) or raw.startswith(_RECORD_START):
                out.diagnostics.append(
                    diag(
                        "SR502",
                        "the last worklog line is incomplete (a crash mid-append); it is ignored",
                        file=name,
                        line=(first_line_no + i) if first_line_no else None,
                    )
                )
            else:
                out.diagnostics.append(
                    diag(
                        "SR503",
                        "a worklog line is not a JSON object",
                        file=name,
                        line=(first_line_no + i) if first_line_no else None,
                    )
                )
            continue
        parsed.append(ev)
    out.events = parsed[-n:] if n else []
    seqs: list[int] = [v for v in (as_int(e.get("seq")) for e in parsed) if v is not None]
    out.last_seq = max(seqs, default=0)
    return out


def scan(path: str | os.PathLike[str]) -> list[Diagnostic]:
    """Check every line (for `validate`): garbage with its line number, seq order."""
    name = os.fspath(path)
    out: list[Diagnostic] = []
    try:
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        fh = os.fdopen(fd, "rb")
    except FileNotFoundError:
        return out
    except OSError as exc:
        return [diag("SR501", f"cannot read the worklog: {exc.strerror}", file=name)]
    with fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return [diag("SR501", "the worklog is not a regular file", file=name)]
        last_seq = 0
        line_no = 0
        for raw in fh:
            line_no += 1
            if not raw.strip():
                continue
            ev = _parse_line(raw)
            if ev is None:
                if raw.startswith(_RECORD_START) and raw.endswith(b"\n"):
                    # An append cut short by a crash and terminated by the next append
                    # (which writes a newline first): a torn record, not foreign garbage.
                    out.append(
                        diag(
                            "SR502",
                            "an incomplete worklog line (an append cut short "
                            "by a crash); it is ignored",
                            file=name,
                            line=line_no,
                        )
                    )
                elif raw.endswith(b"\n"):
                    out.append(
                        diag(
                            "SR503", "a worklog line is not a JSON object", file=name, line=line_no
                        )
                    )
                else:
                    out.append(
                        diag(
                            "SR502",
                            "the last worklog line is incomplete (a crash "
                            "mid-append); it is ignored",
                            file=name,
                            line=line_no,
                        )
                    )
                continue
            seq = as_int(ev.get("seq"))
            if seq is not None:
                if seq <= last_seq:
                    out.append(
                        diag(
                            "SR504",
                            f"seq {seq} does not increase (previous {last_seq})",
                            file=name,
                            line=line_no,
                        )
                    )
                last_seq = max(last_seq, seq)
    return out


@dataclass(frozen=True)
class NewEvent:
    """An event to append; ``seq`` (and ``v``) are the worklog's to assign."""

    event: str
    ts: str
    session: str = ""
    step: str | None = None
    sub_step: str | None = None
    detail: dict[str, Any] | None = None


def append(
    session_dir: str | os.PathLike[str],
    event: str,
    *,
    ts: str,
    session: str = "",
    step: str | None = None,
    sub_step: str | None = None,
    detail: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Append one event. The caller holds the session lock."""
    return append_many(session_dir, [NewEvent(event, ts, session, step, sub_step, detail)])[0]


def append_many(
    session_dir: str | os.PathLike[str], events: Sequence[NewEvent]
) -> list[dict[str, Any]]:
    """Append ``events`` in order (the next ``seq`` numbers), one ``write()`` per record and
    one fsync for all. A torn last line is terminated first (its bytes are kept). Refuses
    (OSError) when the tail cannot be read: the new records would restart ``seq`` at 1. The
    caller holds the session lock."""
    for ev in events:
        if ev.event not in EVENTS:
            raise ValueError(f"unknown worklog event {ev.event!r}")
    if not events:
        return []
    path = Path(session_dir) / WORKLOG
    tail = read_tail(path, 1)
    if tail.diagnostics and any(d.code == "SR501" for d in tail.diagnostics):
        raise OSError(f"cannot read the worklog's tail: {tail.diagnostics[0].message}")
    records = [_record(ev, tail.last_seq + n) for n, ev in enumerate(events, start=1)]
    lines = [
        json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        for r in records
    ]
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            lines[0] = b"\n" + lines[0]  # terminate a torn last line; its bytes are kept
        for line in lines:
            fileio.write_all(fd, line)  # one write per record; short writes continue
        os.fsync(fd)
    finally:
        os.close(fd)
    return records


def _record(ev: NewEvent, seq: int) -> dict[str, Any]:
    record: dict[str, Any] = {
        "v": EVENT_VERSION,
        "ts": ev.ts,
        "seq": seq,
        "session": ev.session,
        "event": ev.event,
    }
    if ev.step is not None:
        record["step"] = ev.step
    if ev.sub_step is not None:
        record["sub_step"] = ev.sub_step
    if ev.detail:
        record["detail"] = ev.detail
    return record
