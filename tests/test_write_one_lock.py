"""A write moment takes the session lock once (issue 19 point 5): the lease's heartbeat is
refreshed under its save's lock, after the state and its worklog event; the lease's
``session_end`` check reads the tail as before but parses it only when it may hold one."""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from session_resume.core import lease as lease_rules
from session_resume.services import writes
from session_resume.services.context import WriteContext
from session_resume.storage import lease_file as sentinel
from session_resume.storage import store, worklog

from conftest import apex_state

T0 = datetime(2026, 3, 2, 10, 30, tzinfo=UTC)


def _ctx(d: Path, now: datetime, session: str | None = "agent-1") -> WriteContext:
    return WriteContext(session_dir=d, now=now, root=d.parent, session=session)


def _count_locks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    taken: list[str] = []
    real = store.locked

    @contextlib.contextmanager
    def locked(s: store.Session, *a: Any, **k: Any) -> Iterator[Any]:
        with real(s, *a, **k) as held:
            taken.append("lock")
            yield held
            taken.append("unlock")

    monkeypatch.setattr(store, "locked", locked)
    return taken


def test_a_write_with_its_own_lease_takes_the_lock_once(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.save(session_dir, apex_state(), now=T0)
    writes.set_decision(_ctx(session_dir, T0), "complexity", "simple")  # creates the lease
    taken = _count_locks(monkeypatch)
    later = T0 + timedelta(minutes=3)
    res = writes.set_decision(_ctx(session_dir, later), "complexity", "standard")
    assert taken == ["lock", "unlock"]
    held = json.loads((session_dir / sentinel.SENTINEL).read_text())
    assert held["session"] == "agent-1" and held["heartbeat"] == "2026-03-02T10:33:00Z"
    last = (session_dir / worklog.WORKLOG).read_text().splitlines()[-1]
    assert res.event is not None and json.loads(last)["seq"] == res.event["seq"]


def test_the_heartbeat_follows_the_event_and_spares_another_sessions_lease(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refresh re-reads the lease under the lock: one that changed hands since the write
    planned it is not refreshed (the write's own session is the one it refreshes)."""
    store.save(session_dir, apex_state(), now=T0)
    writes.set_decision(_ctx(session_dir, T0), "complexity", "simple")
    real_append = worklog.append

    def append_then_hand_over(*a: Any, **k: Any) -> dict[str, Any]:
        out = real_append(*a, **k)
        sentinel.write(session_dir, lease_rules.make("other", owner="x", now=T0))
        return out

    monkeypatch.setattr(worklog, "append", append_then_hand_over)
    writes.set_decision(_ctx(session_dir, T0 + timedelta(minutes=1)), "complexity", "standard")
    held = json.loads((session_dir / sentinel.SENTINEL).read_text())
    assert held["session"] == "other" and held["heartbeat"] == "2026-03-02T10:30:00Z"


def test_a_lease_write_failure_is_raised_after_the_state_is_written(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.save(session_dir, apex_state(), now=T0)
    writes.set_decision(_ctx(session_dir, T0), "complexity", "simple")

    def refuse(*a: Any, **k: Any) -> None:
        raise store.StoreError([])

    monkeypatch.setattr(sentinel, "write", refuse)
    with pytest.raises(store.StoreError):
        writes.set_decision(_ctx(session_dir, T0), "complexity", "standard")
    assert store.load(session_dir).document["decisions"]["complexity"] == "standard"  # type: ignore[index]
    assert json.loads((session_dir / worklog.WORKLOG).read_text().splitlines()[-1])["event"] == (
        "decision"
    )


def _ended_by_parsing(path: Path, session: Any, n: int) -> bool:
    return any(
        e.get("event") == "session_end" and e.get("session") == session
        for e in worklog.read_tail(path, n).events
    )


def test_session_ended_answers_as_parsing_the_tail_does(tmp_path: Path) -> None:
    """Random worklogs (ends of other sessions, escaped names, garbage, torn lines, windows
    smaller than the file): the same answer as parsing every line of the tail."""
    rng = random.Random(515)
    path = tmp_path / worklog.WORKLOG
    kinds = [
        b'{"v":1,"seq":%d,"session":"s1","event":"session_end"}',
        b'{"v":1,"seq":%d,"session":"s2","event":"session_end"}',
        b'{"v":1,"seq":%d,"session":"s1","event":"session\\u005fend"}',
        b'{"v":1,"seq":%d,"session":"s1","event":"note","detail":{"t":"session_end"}}',
        b'{"v":1,"seq":%d,"session":"s1","event":"note","detail":{"p":"a\\\\b"}}',
        b'{"v":1,"seq":%d,"session":"s1","event":"checkpoint"}',
        b"garbage %d session_end",
        b'{"v":1,"seq":%d,"session":"s1","event":"sess',
    ]
    for trial in range(400):
        lines = [rng.choice(kinds) % i for i in range(rng.randint(0, 12))]
        data = b"\n".join(lines) + (b"\n" if rng.random() < 0.8 else b"")
        path.write_bytes(data)
        for n in (1, 2, 3, 5, 200):
            for who in ("s1", "s2", None):
                expected = _ended_by_parsing(path, who, n)
                assert worklog.session_ended(path, who, n) == expected, (trial, n, who, data)


def test_session_ended_without_a_worklog(tmp_path: Path) -> None:
    assert worklog.session_ended(tmp_path / worklog.WORKLOG, "s1", 200) is False
    (tmp_path / worklog.WORKLOG).mkdir()
    assert worklog.session_ended(tmp_path / worklog.WORKLOG, "s1", 200) is False


def test_a_write_moment_fsyncs_the_state_and_its_event_not_the_lease(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The durable work of a write moment is the state (its temp file and the directory) and
    the worklog line; the lease heartbeat is replaced atomically but not fsynced (docs/spec.md
    §7: a power loss ends the processes it speaks of)."""
    store.save(session_dir, apex_state(), now=T0)
    writes.set_decision(_ctx(session_dir, T0), "complexity", "simple")  # creates the lease
    synced: list[tuple[int, bool]] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        synced.append((st.st_ino, os.path.stat.S_ISDIR(st.st_mode)))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    writes.set_decision(_ctx(session_dir, T0 + timedelta(minutes=3)), "complexity", "standard")
    monkeypatch.undo()
    held = json.loads((session_dir / sentinel.SENTINEL).read_text())
    assert held["heartbeat"] == "2026-03-02T10:33:00Z"  # refreshed, and atomically replaced
    inode = {p.name: p.stat().st_ino for p in session_dir.iterdir()}
    assert sorted(synced) == sorted(
        [
            (inode[store.STATE], False),
            (session_dir.stat().st_ino, True),
            (inode[worklog.WORKLOG], False),
        ]
    )
    assert not list(session_dir.glob(".*.tmp"))  # no temp file of the lease left behind


@pytest.mark.parametrize("chunk", [3, 7, 64 * 1024])
def test_the_tail_search_finds_what_the_tail_lines_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """The lease's pre-check searches the bytes of the last lines chunk by chunk, without
    assembling them: the same answer as looking into each of those lines, with needles cut by
    chunk boundaries (chunks of 3 and 7 bytes) and tails longer or shorter than the file."""
    monkeypatch.setattr(worklog, "_TAIL_CHUNK", chunk)
    rng = random.Random(chunk)
    path = tmp_path / worklog.WORKLOG
    words = [b"session_end", b"sess", b"ion_end", b"a\\b", b"x", b"", b"\n", b"\n\n"]
    needles = (b"session_end", b"\\")
    for trial in range(600):
        data = b"".join(rng.choice(words) for _ in range(rng.randint(0, 30)))
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            for want in (1, 2, 3, 5, 40):
                lines, _ = worklog._last_lines(fd, len(data), want)
                expected = any(line and any(n in line for n in needles) for line in lines)
                got = worklog._tail_has(fd, len(data), want, needles)
                assert got == expected, (trial, want, data)
        finally:
            os.close(fd)
