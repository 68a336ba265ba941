"""A full disk (issue 8, DESIGN §5): writes that fail for lack of space change nothing.

Two ways to run out of space:

* **a real, tiny tmpfs** (Linux, root: ``mount -t tmpfs -o size=128k``): the session lives on
  it, a filler file takes every free page, then exactly *k* pages are given back, for every
  *k* from 0 to more than a save needs, so ENOSPC lands on every write a save makes (the temp
  file's first page, a page in the middle of it, the worklog's next page). These tests skip,
  naming what is missing, where mounting is not permitted;
* **an injected ENOSPC** (everywhere, in-process): ``os.write``/``os.fsync`` fail at the
  *n*-th call a save makes, for every *n*, the other failures of a full disk
  (``os.replace``/``os.link``/``os.open``) too.

Whatever happens: the state on disk is the old document or the new one, byte for byte
(never a partial state), ``.bak`` is a valid state, no temp file is left behind, the worklog
has no garbage in the middle, and after space is freed the next save works. The error itself
is a coded :class:`store.StoreError` (the lease write: SR515; the directory fsync after the
rename: SR165, the new state in place), never a raw ``OSError``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from session_resume.services.validation import ValidateOptions, validate_file
from session_resume.storage import state_repair, store, worklog

from conftest import apex_state, run_cli

NOW = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)
PAGE = 4096
TMPFS_SIZE = 128 * 1024
FIXTURES = Path(__file__).parent / "fixtures" / "migrate"


# --- reporting ---------------------------------------------------------------------------


class _Figures:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.section("session-resume full-disk figures")
            for line in self.lines:
                terminalreporter.write_line(line)


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> _Figures:
    pm = request.config.pluginmanager
    name = "session-resume-full-disk-figures"
    plugin = pm.get_plugin(name)
    if plugin is None:
        plugin = _Figures()
        pm.register(plugin, name)
    assert isinstance(plugin, _Figures)
    return plugin


# --- a real tiny tmpfs ---------------------------------------------------------------------


def _mount_problem() -> str | None:
    if not sys.platform.startswith("linux"):
        return f"a tmpfs mount needs Linux (this is {sys.platform})"
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root (CAP_SYS_ADMIN); the tests run as uid " + str(
            os.geteuid()
        )
    if shutil.which("mount") is None or shutil.which("umount") is None:
        return "mount(8)/umount(8) are not installed"
    return None


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 128 KiB tmpfs of its own: a repository root (``.git``) with agent-output/demo."""
    problem = _mount_problem()
    if problem:
        pytest.skip(problem)
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0755", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {proc.stderr.strip()}")
    try:
        (mnt / ".git").mkdir()
        (mnt / "agent-output" / "demo").mkdir(parents=True)
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


class Filler:
    """Takes every free page of a file system, and gives back exactly ``k`` of them."""

    def __init__(self, root: Path) -> None:
        self.path = root / "filler.bin"
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.size = 0
        chunk = b"\0" * PAGE
        while True:
            try:
                n = os.write(self.fd, chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
            self.size += n
        assert os.statvfs(root).f_bavail == 0

    def leave(self, pages: int) -> None:
        """Free exactly ``pages`` pages (tmpfs frees whole pages on truncate)."""
        self.size = max(self.size - pages * PAGE, 0)
        os.ftruncate(self.fd, self.size)

    def remove(self) -> None:
        os.close(self.fd)
        os.unlink(self.path)


def big_state() -> dict[str, Any]:
    """A valid state of about three pages (many artifacts), so a save needs several pages."""
    doc = apex_state()
    doc["steps"]["1"]["artifacts"] = [f"agent-output/demo/artifact-{i:04d}.md" for i in range(300)]
    return doc


def _worklog_of_exactly(size: int) -> bytes:
    """Valid worklog lines filling exactly ``size`` bytes: the next append needs a new page."""
    lines = []
    for seq in (1, 2):
        ev = {"v": 1, "ts": "2026-03-02T10:00:00Z", "seq": seq, "session": "s", "event": "note"}
        lines.append(json.dumps(ev, separators=(",", ":")).encode() + b"\n")
    head = b"".join(lines)
    ev3 = {"v": 1, "ts": "2026-03-02T10:00:00Z", "seq": 3, "session": "s", "event": "note"}
    ev3["detail"] = {"pad": ""}
    bare = json.dumps(ev3, separators=(",", ":")).encode() + b"\n"
    ev3["detail"] = {"pad": "x" * (size - len(head) - len(bare))}
    out = head + json.dumps(ev3, separators=(",", ":")).encode() + b"\n"
    assert len(out) == size
    return out


# --- what must hold after any failed or successful write ------------------------------------


def _clear(d: Path) -> None:
    """Empty the session directory (the tool's record of its writes is a directory)."""
    for p in d.iterdir():
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


def snapshot_files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def temp_files(d: Path) -> list[str]:
    return sorted(
        n for n in os.listdir(d) if n.startswith(store.TMP_PREFIX) and n.endswith(store.TMP_SUFFIX)
    )


def check_consistent(d: Path, root: Path, before: dict[str, bytes]) -> str:
    """The state is the old document or a new valid one, .bak valid, no temp file, the
    worklog without garbage in the middle. Returns "old" or "new"."""
    state = (d / store.STATE).read_bytes()
    loaded = store.load(d, root=root)
    assert loaded.status == "ok", loaded.diagnostics
    assert temp_files(d) == [], "a temp file was left behind"
    if (d / store.BAK).exists():
        assert store.classify((d / store.BAK).read_bytes()).status == "ok", ".bak is not valid"
    # no garbage in the middle (SR503), seq increasing (SR504)
    log_problems = [x for x in worklog.scan(d / worklog.WORKLOG) if x.code in ("SR503", "SR504")]
    assert log_problems == [], log_problems
    if state == before[store.STATE]:
        # .bak is untouched, or (a failure between the rotation and the rename) already
        # holds the current state: valid either way, and nothing current is lost
        assert (d / store.BAK).read_bytes() in (before.get(store.BAK, b""), state), ".bak"
        return "old"
    # a new state: the previous one is now .bak
    assert loaded.revision == json.loads(before[store.STATE])["revision"] + 1
    assert (d / store.BAK).read_bytes() == before[store.STATE]
    return "new"


def prepare(d: Path, root: Path, doc: dict[str, Any], worklog_size: int | None = None) -> None:
    """Revision 2 on disk with revision 1 as .bak (and a worklog)."""
    store.save(d, doc, now=NOW - timedelta(hours=2), root=root, event="note", session_id="s")
    first = store.load(d, root=root)
    assert first.document is not None
    store.save(d, first.document, now=NOW - timedelta(hours=1), root=root)
    if worklog_size is not None:
        (d / worklog.WORKLOG).write_bytes(_worklog_of_exactly(worklog_size))


def next_doc(d: Path, root: Path) -> tuple[dict[str, Any], int]:
    """The next document a writer would save (read-modify-write), and the revision read."""
    loaded = store.load(d, root=root)
    assert loaded.document is not None
    doc = loaded.document
    doc["open_findings"] = [*doc["open_findings"], f"finding at revision {loaded.revision}"]
    return doc, loaded.revision


def save_next(d: Path, root: Path, doc: dict[str, Any], revision: int) -> store.SaveResult:
    return store.save(
        d,
        doc,
        now=NOW,
        root=root,
        expected_revision=revision,
        event="finding_add",
        session_id="s",
    )


def next_save(d: Path, root: Path) -> store.SaveResult:
    return save_next(d, root, *next_doc(d, root))


# --- real tmpfs ----------------------------------------------------------------------------


def test_save_on_a_full_tmpfs_changes_nothing_and_works_once_space_is_freed(
    tiny_fs: Path,
) -> None:
    d = tiny_fs / "agent-output" / "demo"
    prepare(d, tiny_fs, big_state())
    before = snapshot_files(d)
    filler = Filler(tiny_fs)
    with pytest.raises(store.StoreError) as exc:  # a coded refusal, SR163 (was a raw OSError)
        next_save(d, tiny_fs)
    assert [x.code for x in exc.value.diagnostics] == ["SR163"]
    assert check_consistent(d, tiny_fs, before) == "old"
    assert snapshot_files(d) == before  # nothing at all changed, worklog included
    # validate still reads it, and says nothing about leftovers
    report = validate_file(d / store.STATE, ValidateOptions(now=NOW, root=tiny_fs))
    assert report.ok(), report.diagnostics
    filler.remove()
    res = next_save(d, tiny_fs)
    assert res.revision == 3
    assert check_consistent(d, tiny_fs, before) == "new"
    assert worklog.read_tail(d / worklog.WORKLOG, 1).events[-1]["event"] == "finding_add"


def test_every_amount_of_free_space(tiny_fs: Path, figures: _Figures) -> None:
    """Give back k pages, k = 0, 1, 2, …: ENOSPC lands on the temp file's first page, in its
    middle (a short write), on the worklog's next page, or nowhere. Every outcome is
    consistent; once everything is freed the next save works."""
    d = tiny_fs / "agent-output" / "demo"
    outcomes: dict[int, str] = {}
    k = 0
    while True:
        _clear(d)
        prepare(d, tiny_fs, big_state(), worklog_size=PAGE)  # the next append needs a page
        before = snapshot_files(d)
        filler = Filler(tiny_fs)
        filler.leave(k)
        try:
            next_save(d, tiny_fs)
            outcome = "saved"
        except store.StoreError as exc:
            outcome = "StoreError " + ",".join(x.code for x in exc.diagnostics)
        except OSError as exc:  # never: a full disk is a coded refusal
            pytest.fail(f"a raw {exc!r} escaped save() with {k} free pages")
        which = check_consistent(d, tiny_fs, before)
        if outcome == "saved" or outcome == "StoreError SR505":
            assert which == "new", outcome  # SR505: the state was written, its event not
        else:
            assert which == "old", outcome
        outcomes[k] = f"{outcome} (state {which})"
        filler.remove()
        again = snapshot_files(d)
        res = next_save(d, tiny_fs)  # space is back: the next save works
        assert check_consistent(d, tiny_fs, again) == "new"
        assert store.load(d, root=tiny_fs).revision == res.revision
        if outcome == "saved":
            break
        k += 1
        assert k < 32, "a save never succeeded"
    figures.lines.append(
        f"tmpfs {TMPFS_SIZE // 1024} KiB, state {len(before[store.STATE])} bytes: "
        "free pages -> outcome of save()"
    )
    figures.lines.extend(f"  {k:>2} -> {o}" for k, o in outcomes.items())
    assert outcomes[0].endswith("(state old)")
    assert len(outcomes) >= 3  # the state needs more than one page: a short write was hit


def test_recover_on_a_full_tmpfs_keeps_bak_and_the_corrupt_file(tiny_fs: Path) -> None:
    d = tiny_fs / "agent-output" / "demo"
    prepare(d, tiny_fs, big_state())
    bak = (d / store.BAK).read_bytes()
    (d / store.STATE).write_bytes(b'{"schema_version": "3.0", "pro')  # torn
    filler = Filler(tiny_fs)
    with pytest.raises(store.StoreError) as exc:  # coded (SR163), never a raw OSError
        state_repair.recover(d, now=NOW, root=tiny_fs)
    assert "SR163" in [x.code for x in exc.value.diagnostics]
    assert (d / store.BAK).read_bytes() == bak
    torn = b'{"schema_version": "3.0", "pro'
    corrupt = [p for p in d.iterdir() if p.is_file() and p.read_bytes() == torn]
    assert corrupt, "the corrupt file was lost"
    assert temp_files(d) == []
    filler.remove()
    res = state_repair.recover(d, now=NOW, root=tiny_fs)
    assert res.action == "restored_backup"
    assert (d / store.STATE).read_bytes() == bak == (d / store.BAK).read_bytes()
    assert any(p.name.startswith(store.STATE + ".corrupt-") for p in d.iterdir())


def test_migrate_on_a_full_tmpfs_keeps_the_old_version(tiny_fs: Path) -> None:
    d = tiny_fs / "agent-output" / "demo"
    old = (FIXTURES / "v2-nordic-fresh-foods.json").read_bytes()
    (d / store.STATE).write_bytes(old)
    filler = Filler(tiny_fs)
    # --salvage: the fixture holds contradictions (docs/spec.md §9.4), resolved on the way
    out = state_repair.migrate_session(d, now=NOW, write=True, root=tiny_fs, salvage=True)
    assert out.status == "refused" and "SR163" in [x.code for x in out.notes], out.notes
    assert (d / store.STATE).read_bytes() == old
    assert temp_files(d) == []
    filler.remove()
    out = state_repair.migrate_session(d, now=NOW, write=True, root=tiny_fs, salvage=True)
    assert out.status == "migrated"
    assert (d / store.BAK).read_bytes() == old
    assert store.load(d, root=tiny_fs).status == "ok"


def test_cli_write_on_a_full_tmpfs_leaves_the_state_intact(tiny_fs: Path) -> None:
    d = tiny_fs / "agent-output" / "demo"
    prepare(d, tiny_fs, apex_state())
    before = snapshot_files(d)
    filler = Filler(tiny_fs)
    proc = run_cli(
        "checkpoint", "2", "phase_3_cost", "--session-dir", str(d), "--root", str(tiny_fs),
        "--now", "2026-03-03T12:00:00Z",
    )  # fmt: skip
    assert proc.returncode != 0
    assert check_consistent(d, tiny_fs, before) == "old"
    filler.remove()
    proc = run_cli(
        "checkpoint", "2", "phase_3_cost", "--session-dir", str(d), "--root", str(tiny_fs),
        "--now", "2026-03-03T12:00:00Z",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert store.load(d, root=tiny_fs).document["steps"]["2"]["sub_step"] == "phase_3_cost"  # type: ignore[index]


def test_full_tmpfs_cli_write_is_coded(tiny_fs: Path) -> None:
    d = tiny_fs / "agent-output" / "demo"
    prepare(d, tiny_fs, apex_state())
    Filler(tiny_fs)
    proc = run_cli(
        "checkpoint", "2", "phase_3_cost", "--session-dir", str(d), "--root", str(tiny_fs),
        "--now", "2026-03-03T12:00:00Z",
    )  # fmt: skip
    assert proc.returncode in (1, 2) and "SR900" not in proc.stderr, proc.stderr


# --- injected ENOSPC (no root needed) -------------------------------------------------------


class Injector:
    """Counts the calls a save makes to ``os.<name>`` and fails the ``fail_at``-th one."""

    def __init__(self, name: str, fail_at: int, err: int = errno.ENOSPC) -> None:
        self.name, self.fail_at, self.err = name, fail_at, err
        self.calls = 0
        self.real: Callable[..., Any] = getattr(os, name)
        self.fired = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls == self.fail_at:
            self.fired = True
            if self.name == "write" and self.err == -1:  # a short write, then ENOSPC
                fd, data = args
                return self.real(fd, bytes(data)[: max(len(data) // 2, 1)])
            raise OSError(self.err, os.strerror(self.err))
        return self.real(*args, **kwargs)


@contextlib.contextmanager
def injected(name: str, fail_at: int, err: int = errno.ENOSPC) -> Iterator[Injector]:
    inj = Injector(name, fail_at, err)
    mp = pytest.MonkeyPatch()
    mp.setattr(os, name, inj)
    try:
        yield inj
    finally:
        mp.undo()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-output" / "demo").mkdir(parents=True)
    return tmp_path


# os.write(ENOSPC or a short write), os.fsync (EIO/ENOSPC: delayed allocation), the rename
# and link a full disk can refuse, and os.open (no inode left).
FAULTS = [
    ("write", errno.ENOSPC),
    ("write", -1),
    ("fsync", errno.ENOSPC),
    ("fsync", errno.EIO),
    ("replace", errno.ENOSPC),
    ("link", errno.ENOSPC),
    ("open", errno.ENOSPC),
]


@pytest.mark.parametrize(("name", "err"), FAULTS, ids=[f"{n}-{e}" for n, e in FAULTS])
def test_injected_failure_at_every_call_of_a_save(
    repo: Path, name: str, err: int, figures: _Figures
) -> None:
    d = repo / "agent-output" / "demo"
    seen: Counter[str] = Counter()
    n = 1
    while True:
        _clear(d)
        prepare(d, repo, big_state())
        before = snapshot_files(d)
        doc, rev = next_doc(d, repo)
        with injected(name, n, err) as inj:  # only the save itself fails
            try:
                save_next(d, repo, doc, rev)
                outcome = "saved"
            except store.StoreError as exc:
                outcome = "StoreError " + ",".join(x.code for x in exc.diagnostics)
            except OSError as exc:
                outcome = f"raw OSError {errno.errorcode.get(exc.errno or 0, exc.errno)}"
        if not inj.fired:
            assert outcome == "saved"
            break
        which = check_consistent(d, repo, before)
        seen[f"{outcome} (state {which})"] += 1
        if outcome == "saved" or outcome.startswith(("StoreError SR505", "StoreError SR165")):
            assert which == "new", outcome
        assert not outcome.startswith("raw"), outcome  # SR165 since issue 18
        if which == "old":
            assert outcome.startswith("StoreError"), outcome  # refused, with a code
        if outcome == "saved":
            # a save that reports success has its event, complete, as the last line
            assert worklog.read_tail(d / worklog.WORKLOG, 1).events[-1]["event"] == "finding_add"
        again = snapshot_files(d)
        res = next_save(d, repo)  # the fault is gone: the next save works
        assert check_consistent(d, repo, again) == "new"
        assert store.load(d, root=repo).revision == res.revision
        n += 1
    figures.lines.append(
        f"injected os.{name} failure ({'short write' if err == -1 else errno.errorcode[err]}) "
        f"at each of its {n - 1} calls in a save: "
        + "; ".join(f"{v}x {k}" for k, v in sorted(seen.items()))
    )


def test_injected_enospc_is_coded(repo: Path) -> None:
    """Was a raw OSError out of save() (fixed in 3e71b51: SR163, nothing changed)."""
    d = repo / "agent-output" / "demo"
    prepare(d, repo, apex_state())
    before = snapshot_files(d)
    doc, rev = next_doc(d, repo)
    with injected("write", 1), pytest.raises(store.StoreError) as exc:
        save_next(d, repo, doc, rev)
    assert [x.code for x in exc.value.diagnostics] == ["SR163"]
    assert snapshot_files(d) == before


def test_worklog_short_write_keeps_the_event(repo: Path) -> None:
    """worklog.append ignored a short write(): the save reported success with its event torn
    (fixed in 3e71b51: it loops until the record is written)."""
    d = repo / "agent-output" / "demo"
    prepare(d, repo, apex_state())
    doc, rev = next_doc(d, repo)
    with injected("write", 2, -1):  # call 1: the temp file; call 2: the worklog record
        res = save_next(d, repo, doc, rev)
    assert res.worklog_event is not None
    tail = worklog.read_tail(d / worklog.WORKLOG, 1)
    assert tail.events[-1] == res.worklog_event, tail.diagnostics


def test_worklog_seq_never_restarts_when_the_tail_cannot_be_read(repo: Path) -> None:
    """worklog.append numbered from read_tail(); when that read failed (EMFILE, say) it
    restarted at seq 1 (fixed in 3e71b51: it refuses)."""
    d = repo / "agent-output" / "demo"
    prepare(d, repo, apex_state())  # the worklog holds seq 1
    real_open = os.open

    def flaky_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith(worklog.WORKLOG) and not flags & os.O_CREAT:
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return real_open(path, flags, *args, **kwargs)

    mp = pytest.MonkeyPatch()
    mp.setattr(os, "open", flaky_open)
    try:
        record = worklog.append(d, "note", ts="2026-03-03T12:00:00Z", session="s")
    except OSError:
        return  # refused: nothing appended
    finally:
        mp.undo()
    assert record["seq"] == 2, record


def test_directory_fsync_error_after_the_rename_is_coded(repo: Path) -> None:
    d = repo / "agent-output" / "demo"
    prepare(d, repo, apex_state())
    doc, rev = next_doc(d, repo)
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    mp = pytest.MonkeyPatch()
    mp.setattr(os, "fsync", fsync)
    try:
        with pytest.raises(store.StoreError):
            save_next(d, repo, doc, rev)
    finally:
        mp.undo()
    assert store.load(d, root=repo).revision == rev + 1  # it was written
