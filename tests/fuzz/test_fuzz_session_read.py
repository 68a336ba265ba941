"""Fuzz group: reading a session directory. ``load``, ``snapshot.take``, ``decide``,
validation and the integrity checks on random session directories: total, and
reading never writes.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_resume.core.resume_decision import ACTIONS, decide
from session_resume.services.validation import ValidateOptions, session_integrity
from session_resume.storage import snapshot, store, worklog
from session_resume.storage.lease_file import SENTINEL

from .checks import DECISION_SCHEMA, NOW, STATUSES, WORKFLOWS, assert_coded
from .profiles import DIR_PROFILE, tried
from .sessiondirs import HANG_SECONDS, _alarm, entries, with_dir
from .strategies import SESSION_DIRS, dumps
from conftest import apex_state

# Test tier (README "Test tiers"): Hypothesis properties (`nox -s fuzz` runs them at scale).
pytestmark = pytest.mark.slow

# --- session directories: reading -----------------------------------------------------------


@DIR_PROFILE
@given(layout=SESSION_DIRS, step=st.sampled_from([None, "1", "2", "3_5", "9"]))
def test_reading_a_session_directory_is_total(
    layout: dict[str, tuple[str, bytes]], step: str | None
) -> None:
    tried("take+decide+validate(dir)")

    def check(d: Path, root: Path) -> None:
        before = entries(d)
        loaded = store.load(d, root=root)
        assert loaded.status in STATUSES
        assert_coded(loaded.diagnostics)
        snap = snapshot.take(d, root=root)
        out = decide(snap, step, NOW, WORKFLOWS["apex"])
        assert out["action"] in ACTIONS
        assert decide(snapshot.take(d, root=root), step, NOW, WORKFLOWS["apex"]) == out
        DECISION_SCHEMA.validate(out)
        from session_resume.services.validation import validate_file

        if os.path.lexists(d / store.STATE):
            report = validate_file(
                d / store.STATE, ValidateOptions(now=NOW, root=root, check_artifacts=True)
            )
            assert_coded(report.diagnostics)
        assert_coded(session_integrity(d))
        assert entries(d) == before  # reading never writes

    with_dir(layout, check)


# --- regressions: bugs these properties found, since fixed (kept as plain examples) -----
# Each names the commit that fixed it; the properties above would find it again, these keep
# the minimal reproduction in the normal suite whatever the random draw.


def test_worklog_directory_does_not_break_resume(session_dir: Path) -> None:
    """Was IsADirectoryError out of worklog.read_tail, so `resume` ended in SR900 (da8c42d)."""
    (session_dir / store.STATE).write_bytes(dumps(apex_state()))
    (session_dir / worklog.WORKLOG).mkdir()
    snap = snapshot.take(session_dir)
    assert decide(snap, None, NOW, WORKFLOWS["apex"])["action"] in ACTIONS
    assert_coded(session_integrity(session_dir))


def test_worklog_fifo_does_not_hang_validate(session_dir: Path) -> None:
    """Was a blocking open() of the FIFO (fixed in 4160f6a); the alarm turns a hang into a
    failure."""
    from session_resume.services.validation import validate_file

    (session_dir / store.STATE).write_bytes(dumps(apex_state()))
    os.mkfifo(session_dir / worklog.WORKLOG)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    try:
        report = validate_file(session_dir / store.STATE, ValidateOptions(now=NOW))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert_coded(report.diagnostics)


def test_resume_never_stats_artifacts_outside_the_root(tmp_path: Path) -> None:
    """snapshot.take() stat()ed absolute and ../ artifact paths, so `resume` and `report`
    told whether an outside file existed and changed (fixed in 3e71b51)."""
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    repo = tmp_path / "repo"
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    (repo / ".git").mkdir()
    doc = apex_state()
    doc["steps"]["2"]["artifacts"] = [str(outside), "../outside.txt", "../../../outside.txt"]
    (d / store.STATE).write_bytes(dumps(doc))
    snap = snapshot.take(d, root=repo)
    assert snap.state_status == "ok"
    assert all(v is None for v in snap.artifacts.values()), snap.artifacts


# --- limits the properties rely on ---------------------------------------------------------


def test_oversized_or_linked_lease_is_unreadable_not_absent(session_dir: Path) -> None:
    from session_resume.storage import lease_file as sentinel

    lease = session_dir / SENTINEL
    lease.write_bytes(b'{"session": "s", "pad": "' + b"x" * (64 * 1024) + b'"}')
    found, diags = sentinel.read(session_dir)
    assert found == {} and [x.code for x in diags] == ["SR510"]
    lease.unlink()
    (session_dir / "elsewhere").write_bytes(b"{}")
    os.symlink("elsewhere", lease)
    found, diags = sentinel.read(session_dir)
    assert found == {} and [x.code for x in diags] == ["SR510"]


# --- regressions: bugs found, since fixed (issue 18) ---------------------------------------


@pytest.mark.parametrize("pid", [2**31, 2**63, -(2**63)])
def test_lease_pid_beyond_int_range_is_coded(session_dir: Path, pid: int) -> None:
    """Was OverflowError out of os.kill in snapshot.take(): SR900 in resume and report."""
    from session_resume.storage import lease_file

    (session_dir / store.STATE).write_bytes(dumps(apex_state()))
    lease = {"v": 1, "session": "s1", "owner": "o", "host": socket.gethostname()}
    lease.update(started="2026-03-03T11:59:00Z", heartbeat="2026-03-03T11:59:00Z")
    (session_dir / SENTINEL).write_text(json.dumps({**lease, "pid": pid}))
    snap = snapshot.take(session_dir)
    assert decide(snap, None, NOW, WORKFLOWS["apex"])["action"] in ACTIONS
    assert [d.code for d in lease_file.read(session_dir)[1]] == ["SR510"]
    assert lease_file.owner_alive({**lease, "pid": pid}) is None
