"""One held directory (issue 25): every session file operation relative to one directory
descriptor, and the findings of the third hostile pass that it (and the retention, size and
rollback rules beside it) answers.

Every link planted here points at a decoy tree inside the test's temp directory (never at a
real system file); the decoy is hashed before and after each command.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from test_hostile_dirs import CANARY, cli, make_repo, tree_hash

from session_resume.services import writes
from session_resume.services.context import WriteContext
from session_resume.services.errors import ServiceError
from session_resume.storage import archive, held, snapshot, store, worklog
from session_resume.storage.held import HeldDir, StoreError

from conftest import apex_state, dump

NOW = "2026-03-03T12:00:00Z"
T = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


# --- the held directory itself ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "../x", "/abs", "a\0b"])
def test_a_name_that_is_not_one_plain_component_is_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / "x").write_text("keep")
    before = tree_hash(tmp_path)
    with HeldDir.at(tmp_path) as h:
        ops = [
            lambda: h.open(name, os.O_RDONLY),
            lambda: h.unlink(name),
            lambda: h.mkdir(name),
            lambda: h.stat(name),
            lambda: h.replace("x", name),
            lambda: h.sub(name),
            lambda: h.replace_file(name, b"data"),
        ]
        for op in ops:
            with pytest.raises(StoreError) as exc:
                op()
            assert [d.code for d in exc.value.diagnostics] == ["SR106"]
        assert [d.code for d in h.read_limited(name).diagnostics] == ["SR106"]
    assert tree_hash(tmp_path) == before


def test_a_parent_swapped_for_a_link_after_the_hold_cannot_redirect_a_write(
    tmp_path: Path,
) -> None:
    """The descriptor names the directory, not its path: a parent renamed and replaced by a
    link to a decoy between two operations of a command leaves every operation where it was."""
    repo, d, decoy = make_repo(tmp_path)
    before = tree_hash(decoy)
    with HeldDir.at(d, repo) as h:
        os.rename(repo / "agent-output", repo / "moved")
        os.symlink(decoy, repo / "agent-output")
        h.replace_file("note.txt", b"inside")
        assert h.read_limited(store.STATE).data == dump(apex_state())
    assert (repo / "moved" / "demo" / "note.txt").read_bytes() == b"inside"
    assert tree_hash(decoy) == before


def test_a_link_on_the_way_inside_the_root_is_followed_and_one_out_is_refused(
    tmp_path: Path,
) -> None:
    repo, d, decoy = make_repo(tmp_path)
    os.symlink(d, repo / "alias")
    with HeldDir.at(repo / "alias", repo) as h:
        assert h.read_limited(store.STATE).data == dump(apex_state())
    os.symlink(decoy, repo / "out")
    with pytest.raises(StoreError) as exc:
        HeldDir.at(repo / "out" / "sub", repo)
    assert exc.value.diagnostics[0].code == "SR105"


# --- finding 1 and 2: retention --------------------------------------------------------------


def test_archive_keep_below_one_is_a_config_error(tmp_path: Path) -> None:
    repo, d, decoy = make_repo(tmp_path)
    (repo / ".session-resume.yaml").write_text("archive_keep: 0\n")
    files = _files(d)
    for argv in (
        ["archive", str(d), "--now", NOW],
        ["init", "demo", "--session-dir", str(d), "--now", NOW, "--fresh"],
    ):
        cwd = os.getcwd()
        os.chdir(repo)
        try:
            code, output = cli(*argv)
        finally:
            os.chdir(cwd)
        assert code == 2 and "SR405" in output and "archive_keep" in output, output
        assert _files(d) == files and not (d / archive.ARCHIVE_DIR).exists()


@pytest.mark.parametrize("keep", [0, 1])
def test_the_archive_a_command_has_just_made_is_never_pruned(tmp_path: Path, keep: int) -> None:
    repo, d, _decoy = make_repo(tmp_path)
    state = (d / store.STATE).read_bytes()
    res = archive.archive_session(d, now=T, keep=keep, root=repo)
    assert res.archived_to is not None and res.pruned == []
    assert (Path(res.archived_to) / store.STATE).read_bytes() == state
    loaded = store.load(Path(res.archived_to), root=repo)
    assert loaded.status == "ok" and loaded.document == apex_state()


@pytest.mark.parametrize("label", ["archive", "init --fresh"])
def test_planted_future_archives_never_make_a_command_delete_its_own(
    tmp_path: Path, label: str
) -> None:
    """Finding 2: five folders stamped 9999-12-31 sort after the new archive; retention
    ignores them (and names it does not make, and links), keeps the new archive, and still
    prunes the oldest real archives beyond --keep."""
    repo, d, decoy = make_repo(tmp_path)
    base = d / archive.ARCHIVE_DIR
    for i in range(5):
        (base / f"99991231T235959Z_x{i}").mkdir(parents=True)
        (base / f"99991231T235959Z_x{i}" / "keep.txt").write_text(CANARY)
    (base / "notes").mkdir()
    (base / "notes" / "keep.txt").write_text(CANARY)
    os.symlink(decoy / "sub", base / "20000101T000000Z_link")
    for i in range(6):
        (base / f"2020010{i}T000000Z_old").mkdir()
    planted = {n: tree_hash(base / n) for n in os.listdir(base) if not n.startswith("2020")}
    state = (d / store.STATE).read_bytes()
    before = tree_hash(decoy)
    argv = {
        "archive": ["archive", str(d), "--root", str(repo), "--now", NOW, "--format", "json"],
        "init --fresh": ["init", "demo", "--session-dir", str(d), "--root", str(repo),
                         "--now", NOW, "--fresh", "--format", "json"],
    }[label]  # fmt: skip
    code, output = cli(*argv)
    assert code == 0, output
    new = [n for n in os.listdir(base) if n.startswith("20260303T120000Z_")]
    assert len(new) == 1, os.listdir(base)
    assert (base / new[0] / store.STATE).read_bytes() == state
    assert {n: tree_hash(base / n) for n in planted} == planted
    old = sorted(n for n in os.listdir(base) if n.startswith("2020"))
    assert old == [f"2020010{i}T000000Z_old" for i in (2, 3, 4, 5)]  # 4 old + the new = 5
    assert tree_hash(decoy) == before


# --- finding 3: the read limit ---------------------------------------------------------------


def test_a_save_over_the_read_limit_is_refused_and_the_state_kept(session_dir: Path) -> None:
    store.save(session_dir, apex_state(), now=T)
    store.save(session_dir, apex_state(), now=T)
    files = _files(session_dir)
    big = apex_state()
    big["decisions"]["notes"] = "x" * (8 * 1024 * 1024)
    with pytest.raises(StoreError) as exc:
        store.save(session_dir, big, now=T)
    assert [d.code for d in exc.value.diagnostics] == ["SR166"]
    assert _files(session_dir) == files
    assert store.load(session_dir).status == "ok"


def test_a_decide_over_the_read_limit_is_refused(tmp_path: Path) -> None:
    repo, d, _decoy = make_repo(tmp_path)
    ctx = WriteContext(session_dir=d, now=T, root=repo, session="s1")
    files = _files(d)
    with pytest.raises(ServiceError) as exc:
        writes.set_decision(ctx, "compliance", "y" * (8 * 1024 * 1024 + 1))
    assert "SR166" in [x.code for x in exc.value.diagnostics]
    # the state is untouched; the lease the refused write took is gone again (its start and
    # end are in the worklog)
    assert (d / store.STATE).read_bytes() == files[store.STATE]
    assert not (d / "00-session.active").exists()
    assert store.load(d, root=repo).document == apex_state()


def test_an_import_over_the_read_limit_is_refused_before_anything_moves(tmp_path: Path) -> None:
    from session_resume.importers.apply import apply_plan
    from session_resume.importers.common import ImportPlan, ImportRefused

    repo, d, _decoy = make_repo(tmp_path)
    doc = store.load(d, root=repo).document
    assert doc is not None
    plan = ImportPlan(
        source="test",
        workflow="apex",
        document={**doc, "decisions": {"notes": "z" * (8 * 1024 * 1024)}},
        session="s1",
        imported_detail={},
    )
    files = _files(d)
    with pytest.raises(ImportRefused) as exc:
        apply_plan(plan, d, now=T, force=True, root=repo)
    assert [x.code for x in exc.value.diagnostics] == ["SR166"]
    assert _files(d) == files and not (d / archive.ARCHIVE_DIR).exists()


# --- finding 4: all moves or none ------------------------------------------------------------


def _full_session(d: Path) -> None:
    store.save(d, apex_state(), now=T, event="note")
    store.save(d, apex_state(), now=T, event="note")
    (d / "00-handoff.md").write_text("# handoff\n")


def _fail_rename_into_archive(monkeypatch: pytest.MonkeyPatch, fail_at: int) -> list[Any]:
    """Make the ``fail_at``-th rename between two directories (0: the first) fail with EPERM,
    as a file system refusing it would; returns the names of every such rename tried."""
    real = os.replace
    calls: list[Any] = []

    def failing(src: Any, dst: Any, **k: Any) -> None:
        if k.get("src_dir_fd") is not None and k.get("src_dir_fd") != k.get("dst_dir_fd"):
            calls.append(src)
            if len(calls) == fail_at + 1:
                raise PermissionError(errno.EPERM, "Operation not permitted", src)
        real(src, dst, **k)

    monkeypatch.setattr(os, "replace", failing)
    return calls


@pytest.mark.parametrize("fail_at", [0, 1, 2, 3])
def test_a_failed_move_puts_back_what_was_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    """Finding 4: the n-th rename into the archive fails (EPERM); the files already moved go
    back, the new folder is removed, and the session reads as before (not fresh_start)."""
    repo, d, _decoy = make_repo(tmp_path)
    _full_session(d)
    files = _files(d)
    calls = _fail_rename_into_archive(monkeypatch, fail_at)
    ctx = WriteContext(session_dir=d, now=T, root=repo, session="s1")
    with pytest.raises(ServiceError) as exc:
        writes.init_session(ctx, "demo", fresh=True)
    monkeypatch.undo()
    assert "SR164" in [x.code for x in exc.value.diagnostics], exc.value.diagnostics
    assert "nothing was archived" in str(exc.value.diagnostics[0].message)
    assert len(calls) == 2 * fail_at + 1  # the failed rename, then one back per file moved
    assert {k: v for k, v in _files(d).items() if not _bookkeeping(k)} == {
        k: v for k, v in files.items() if not _bookkeeping(k)
    }
    assert not (d / archive.ARCHIVE_DIR).exists()  # the command made it: removed again
    assert store.load(d, root=repo).document is not None
    code, output = cli("resume", str(d), "--root", str(repo), "--now", NOW, "--format", "json")
    assert code == 0 and json.loads(output)["action"] != "fresh_start", output


@pytest.mark.parametrize("fail_at", [1, 3])
def test_archive_puts_back_what_was_moved_when_a_later_move_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    """Finding 4 for `archive` (the CLI, in this process): a rename after the first fails;
    every file moved goes back, the folder and `.archive` go, the tree is byte-identical."""
    repo, d, _decoy = make_repo(tmp_path)
    _full_session(d)
    before = {k: v for k, v in tree_hash(d).items() if not _bookkeeping(k)}
    calls = _fail_rename_into_archive(monkeypatch, fail_at)
    code, output = cli("archive", str(d), "--root", str(repo), "--now", NOW)
    monkeypatch.undo()
    assert code == 1 and "SR164" in output and "the session is as it was" in output, output
    assert len(calls) == 2 * fail_at + 1
    assert {k: v for k, v in tree_hash(d).items() if not _bookkeeping(k)} == before


# --- import --force: all or nothing ----------------------------------------------------------


def _import_plan(d: Path, files: dict[str, bytes]) -> Any:
    from session_resume.importers.common import ImportPlan

    doc = store.load(d).document
    assert doc is not None
    return ImportPlan(
        source="test", workflow="apex", document=doc, session="s2", imported_detail={}, files=files
    )


def _bookkeeping(name: str) -> bool:
    """The lock, and the tool's record of its own writes (storage/written.py: rewritten by a
    locked block that moved files and put them back, their change times being new)."""
    return name.endswith(".lock") or ".00-session-written" in name


def _without_lock(tree: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in tree.items() if not _bookkeeping(k)}


@pytest.mark.parametrize("planted", ["link_out", "file_for_dir"])
def test_import_force_refuses_before_anything_moves_when_a_later_move_cannot_happen(
    tmp_path: Path, planted: str
) -> None:
    """`import --force` archived the session and then set the plan's files aside one by one:
    a later one that could not move (under a directory linked out of the repository, or under
    a name that is a file, not a directory) left the session archived, half moved. Every move
    and write is checked first now: refused, the session and the decoy byte-identical."""
    from session_resume.importers.apply import apply_plan
    from session_resume.importers.common import ImportRefused

    repo, d, decoy = make_repo(tmp_path)
    _full_session(d)
    (d / "notes").mkdir()
    (d / "notes" / "a.md").write_text("mine\n")
    if planted == "link_out":
        (decoy / "zz").mkdir()
        (decoy / "zz" / "b.md").write_text(CANARY)
        os.symlink(decoy / "zz", d / "zz")
    else:
        (d / "zz").write_text("a file where the plan wants a directory\n")
    plan = _import_plan(d, {"notes/a.md": b"new\n", "zz/b.md": b"new\n"})
    before, decoy_before = tree_hash(d), tree_hash(decoy)
    with pytest.raises(ImportRefused) as exc:
        apply_plan(plan, d, now=T, force=True, root=repo)
    codes = [x.code for x in exc.value.diagnostics]
    assert codes == ["SR105" if planted == "link_out" else "SR102"], exc.value.diagnostics
    assert tree_hash(d) == before and tree_hash(decoy) == decoy_before
    assert store.load(d, root=repo).status == "ok"


@pytest.mark.parametrize("fail_at", [0, 2, 4])
def test_import_force_moves_everything_back_when_a_move_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    """The n-th rename into the archive fails (EPERM) after the ones before it happened
    (protocol files, then the plan's own files): each is moved back, the folder and the
    `.archive` the command made are removed, and the session tree is byte-identical."""
    from session_resume.importers.apply import apply_plan
    from session_resume.importers.common import ImportRefused

    repo, d, _decoy = make_repo(tmp_path)
    _full_session(d)
    (d / "notes").mkdir()
    (d / "notes" / "a.md").write_text("mine\n")
    plan = _import_plan(d, {"notes/a.md": b"new\n"})
    before = _without_lock(tree_hash(d))
    calls = _fail_rename_into_archive(monkeypatch, fail_at)
    with pytest.raises(ImportRefused) as exc:
        apply_plan(plan, d, now=T, force=True, root=repo)
    monkeypatch.undo()
    assert len(calls) == 2 * fail_at + 1  # the failed rename, then one back per file moved
    if fail_at == 4:
        assert calls[fail_at] == "a.md"  # the plan's own file, after every protocol file
    assert [x.code for x in exc.value.diagnostics] == ["SR164"], exc.value.diagnostics
    assert "the session is as it was" in exc.value.diagnostics[0].message
    assert _without_lock(tree_hash(d)) == before


def test_import_force_is_undone_when_a_write_after_the_state_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new state is saved, then writing a file of the plan fails: the import removes what
    it wrote (state, worklog, the file, the directory it made) and moves the archived session
    back; the tree is byte-identical and the old state reads as before."""
    from session_resume.importers.apply import apply_plan
    from session_resume.importers.common import ImportRefused

    repo, d, _decoy = make_repo(tmp_path)
    _full_session(d)
    plan = _import_plan(d, {"new/dir/x.md": b"new\n"})
    before = _without_lock(tree_hash(d))
    state_before = (d / store.STATE).read_bytes()
    real = os.replace

    def failing(src: Any, dst: Any, **k: Any) -> None:
        if dst == "x.md":
            raise OSError(errno.ENOSPC, "No space left on device", dst)
        real(src, dst, **k)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(ImportRefused) as exc:
        apply_plan(plan, d, now=T, force=True, root=repo)
    monkeypatch.undo()
    codes = [x.code for x in exc.value.diagnostics]
    assert codes[-1] == "SR164", exc.value.diagnostics
    assert "as it was before the import" in exc.value.diagnostics[-1].message
    assert _without_lock(tree_hash(d)) == before
    assert (d / store.STATE).read_bytes() == state_before


# --- finding 5, 7, 8: nothing created or moved outside ---------------------------------------


def _linked_parent(tmp_path: Path, *, with_session: bool) -> tuple[Path, Path, Path]:
    """``repo/agent-output`` a link to the decoy; the session directory named below it."""
    repo, d, decoy = make_repo(tmp_path)
    os.rename(repo / "agent-output", tmp_path / "moved")
    if with_session:
        (decoy / "demo").mkdir()
        (decoy / "demo" / store.STATE).write_bytes(dump(apex_state()))
        (decoy / "demo" / ".archive" / "20000101T000000Z_x").mkdir(parents=True)
    os.symlink(decoy, repo / "agent-output")
    return repo, d, decoy


def test_archive_through_a_linked_parent_is_refused(tmp_path: Path) -> None:
    repo, d, decoy = _linked_parent(tmp_path, with_session=True)
    before = tree_hash(decoy)
    for argv in (
        ["archive", str(d), "--root", str(repo), "--now", NOW],
        ["archive", str(d), "--root", str(repo), "--now", NOW, "--prune-only", "--keep", "0"],
    ):
        code, output = cli(*argv)
        assert code in (1, 2) and "SR105" in output, output
        assert tree_hash(decoy) == before


@pytest.mark.parametrize("label", ["init", "session start", "import --to"])
def test_no_session_directory_is_created_at_a_links_target(tmp_path: Path, label: str) -> None:
    repo, d, decoy = _linked_parent(tmp_path, with_session=False)
    before = tree_hash(decoy)
    if label == "import --to":
        src = tmp_path / "src" / ".session"
        src.mkdir(parents=True)
        (src / "session.json").write_text("{}")
        argv = ["import", "session-tracker", str(src.parent), "--to", str(d), "--root",
                str(repo), "--now", NOW]  # fmt: skip
    elif label == "init":
        argv = ["init", "demo", "--session-dir", str(d), "--root", str(repo), "--now", NOW]
    else:
        argv = ["session", "start", "--project", "demo", "--root", str(repo), "--now", NOW,
                "--session", "s1"]  # fmt: skip
    code, output = cli(*argv)
    assert code in (1, 2), output
    assert tree_hash(decoy) == before, output
    if label != "import --to":  # the tracker reader may refuse the empty source first
        assert "SR105" in output, output


def test_render_skill_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    repo, _d, decoy = make_repo(tmp_path)
    out = repo / "skill"
    out.mkdir()
    os.symlink(decoy / "sub", out / "references")
    before = tree_hash(decoy)
    code, output = cli("render", "skill", "--workflow", "apex", "--out", str(out))
    assert code == 1 and "SR105" in output, output
    assert tree_hash(decoy) == before
    (out / "SKILL.md").unlink()
    os.symlink(decoy / "file.txt", out / "SKILL.md")
    (out / "references").unlink()
    code, output = cli("render", "skill", "--workflow", "apex", "--out", str(out))
    assert code == 1 and "SR105" in output, output
    assert tree_hash(decoy) == before


# --- render handoff into a read-only directory -------------------------------------------------


def _read_only(d: Path) -> tuple[Any, Any]:
    """Make ``d`` read-only in a way that holds for root too: a read-only tmpfs mounted on it
    (root), or its mode (anyone else). Returns (undo, skip reason or None)."""
    if os.geteuid() != 0:
        d.chmod(0o555)
        return (lambda: d.chmod(0o755)), None
    files = _files(d)
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(d)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return None, f"running as root, and mounting a tmpfs is not permitted: {proc.stderr}"
    for name, data in files.items():
        (d / name).write_bytes(data)
    subprocess.run(["mount", "-o", "remount,ro", str(d)], check=True)
    return (lambda: subprocess.run(["umount", str(d)], check=True)), None


def test_render_handoff_into_a_read_only_session_directory_is_coded(tmp_path: Path) -> None:
    repo, d, _decoy = make_repo(tmp_path)
    undo, why = _read_only(d)
    if undo is None:
        pytest.skip(why)
    try:
        before = _files(d)
        code, output = cli("render", "handoff", str(d), "--root", str(repo), "--now", NOW)
        assert code == 1 and "SR164" in output and "SR900" not in output, output
        assert _files(d) == before
    finally:
        undo()


# --- finding 16: the MCP heartbeat keeps serving ----------------------------------------------


@pytest.mark.parametrize("kind", ["lease_dir", "lock_dir", "lock_fifo", "lock_link", "dir_link"])
def test_a_heartbeat_refused_drops_the_lease_and_keeps_serving(tmp_path: Path, kind: str) -> None:
    from session_resume.mcp.lease_keeper import LeaseKeeper

    repo, d, decoy = make_repo(tmp_path)
    notes: list[str] = []
    keeper = LeaseKeeper(log=notes.append)
    keeper.start(WriteContext(session_dir=d, now=T, root=repo))
    assert keeper.holds(d)
    if kind == "lease_dir":
        (d / "00-session.active").unlink()
        (d / "00-session.active").mkdir()
    elif kind == "lock_dir":
        (d / store.LOCK).unlink()
        (d / store.LOCK).mkdir()
    elif kind == "lock_fifo":
        (d / store.LOCK).unlink()
        os.mkfifo(d / store.LOCK)
    elif kind == "lock_link":
        (d / store.LOCK).unlink()
        os.symlink(decoy / store.LOCK, d / store.LOCK)
    else:
        os.rename(d, tmp_path / "moved")
        os.symlink(decoy / "sub", d)
    before = tree_hash(decoy)
    keeper.beat(T)  # never raises
    assert not keeper.holds(d) and any("lost" in n or "dropped" in n for n in notes), notes
    keeper.beat(T)
    assert tree_hash(decoy) == before


# --- finding 21: linear artifact look-ups -----------------------------------------------------


def _state_with_artifacts(d: Path, n: int) -> None:
    doc = apex_state()
    arts = [f"agent-output/demo/a{i % 7}/f{i}.md" for i in range(n)]
    arts += [f"bare{i}.md" for i in range(n)]
    doc["steps"]["1"]["artifacts"] = arts
    (d / store.STATE).write_bytes(dump(doc))
    for i in range(0, n, 3):
        (d / f"a{i % 7}").mkdir(exist_ok=True)
        (d / f"a{i % 7}" / f"f{i}.md").write_text("x")


def _calls_of_take(d: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    counted = ("stat", "lstat", "open", "readlink", "listdir", "scandir")
    n = 0
    reals = {name: getattr(os, name) for name in counted}

    def wrap(real: Any) -> Any:
        def call(*a: Any, **k: Any) -> Any:
            nonlocal n
            n += 1
            return real(*a, **k)

        return call

    with monkeypatch.context() as m:
        for name, real in reals.items():
            m.setattr(os, name, wrap(real))
        snap = snapshot.take(d, root=repo)
    assert snap.document is not None
    return n


def test_resume_looks_up_artifacts_in_linear_operations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 21: the system calls a snapshot makes grow with the number of artifacts (at
    most two per artifact, with or without a file: a bare name is looked up in two places),
    not with artifacts times the depth of the root."""
    counts = {}
    for n in (500, 2000):
        repo, d, _decoy = make_repo(tmp_path / str(n))
        _state_with_artifacts(d, n)
        counts[n] = _calls_of_take(d, repo, monkeypatch)
    per_artifact = (counts[2000] - counts[500]) / (2 * (2000 - 500))
    assert per_artifact <= 1.5, counts


# --- the held directory is the command's: one walk per write ----------------------------------


def test_a_save_walks_to_the_session_directory_once(
    session_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.save(session_dir, apex_state(), now=T, event="note")
    walks: list[str] = []
    real = held.HeldDir.at.__func__  # type: ignore[attr-defined]

    def counting(cls: Any, path: Any, *a: Any, **k: Any) -> Any:
        walks.append(os.fspath(path))
        return real(cls, path, *a, **k)

    monkeypatch.setattr(held.HeldDir, "at", classmethod(counting))
    store.save(session_dir, apex_state(), now=T, event="note", root=session_dir.parents[1])
    assert walks == [str(session_dir)]
    assert worklog.read_tail(session_dir / worklog.WORKLOG, 5).last_seq == 2


# --- the MCP writers (finding 8 and 3 through the real server) --------------------------------


@pytest.mark.mcp  # the real server, through the SDK's client
def test_mcp_writers_create_nothing_at_a_links_target_and_refuse_an_oversized_decide(
    tmp_path: Path,
) -> None:
    pytest.importorskip(
        "mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')"
    )
    import sys

    import anyio
    from mcp import Client, StdioServerParameters

    repo, _d, decoy = _linked_parent(tmp_path, with_session=False)
    before = tree_hash(decoy)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_resume", "mcp", "--root", str(repo)],
        cwd=str(repo),
    )
    seen: dict[str, Any] = {}

    async def go() -> None:
        async with Client(params, read_timeout_seconds=120) as c:
            for tool, args in (
                ("init", {"workflow": "apex"}),
                ("session_start", {}),
                ("decide", {"key": "complexity", "value": "standard"}),
            ):
                r = await c.call_tool(tool, {"project": "demo", **args})
                seen[tool] = (r.is_error, r.structured_content)
            # an ordinary session next to it, then one decide of 8 MiB
            os.unlink(repo / "agent-output")
            r = await c.call_tool("init", {"project": "big", "workflow": "apex"})
            assert not r.is_error, r
            state = (repo / "agent-output" / "big" / store.STATE).read_bytes()
            r = await c.call_tool(
                "decide", {"project": "big", "key": "compliance", "value": "v" * (8 * 1024 * 1024)}
            )
            seen["big"] = (r.is_error, r.structured_content)
            assert (repo / "agent-output" / "big" / store.STATE).read_bytes() == state
            r = await c.call_tool("resume", {"project": "big"})
            assert not r.is_error, r  # the server still answers, the state reads

    anyio.run(go)
    for tool in ("init", "session_start", "decide"):
        is_error, content = seen[tool]
        codes = [d["code"] for d in (content or {}).get("diagnostics", [])]
        assert is_error and "SR105" in codes, (tool, content)
    assert tree_hash(decoy) == before
    is_error, content = seen["big"]
    assert is_error and "SR166" in [d["code"] for d in content["diagnostics"]], content


# --- validate reads through the held directory -----------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("named", ["file", "directory"])
def test_validate_never_reads_through_a_linked_parent(tmp_path: Path, fmt: str, named: str) -> None:
    """`validate` read the state named by its path: only the last component was checked, so
    under `agent-output -> decoy` it validated (and quoted) a file outside the repository. It
    holds the directory walked from the root now: SR105, and nothing of the decoy read."""
    repo, d, decoy = _linked_parent(tmp_path, with_session=True)
    (decoy / "demo" / store.STATE).write_bytes(dump({**apex_state(), CANARY: 1}))
    before = tree_hash(decoy)
    target = d / store.STATE if named == "file" else d
    code, output = cli("validate", str(target), "--root", str(repo), "--now", NOW, "--format", fmt)
    assert code in (1, 2) and "SR105" in output, output
    assert CANARY not in output
    assert tree_hash(decoy) == before


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_validate_never_follows_a_state_or_bak_link_out(tmp_path: Path, fmt: str) -> None:
    """A state linked to a decoy is SR105 (read by plain name inside the held directory, a
    link followed only inside the root); a corrupt state beside a `.bak` linked to a valid
    decoy state is reported corrupt without SR130 (the decoy is no backup of this session),
    and a worklog, lease and handoff linked out are never read. Decoys stay byte-identical."""
    repo, d, decoy = make_repo(tmp_path)
    good = dump({**apex_state(), CANARY: 1})
    (decoy / store.STATE).write_bytes(good)
    (decoy / store.BAK).write_bytes(good)
    before = tree_hash(decoy)
    state = d / store.STATE
    argv = ["validate", str(state), "--root", str(repo), "--now", NOW, "--format", fmt]
    state.unlink()
    os.symlink(decoy / store.STATE, state)
    code, output = cli(*argv)
    assert code == 1 and "SR105" in output and CANARY not in output, output
    state.unlink()
    state.write_bytes(b"{ not json")
    os.symlink(decoy / store.BAK, d / store.BAK)
    for name in (worklog.WORKLOG, "00-session.active", "00-handoff.md"):
        os.symlink(decoy / "file.txt", d / name)
    code, output = cli(*argv)
    assert code == 1 and "SR130" not in output and CANARY not in output, output
    assert "SR501" in output  # the linked worklog is refused, not read
    assert tree_hash(decoy) == before
    os.unlink(d / store.BAK)  # the same .bak inside the session: SR130, it is a backup
    (d / store.BAK).write_bytes(dump(apex_state()))
    code, output = cli(*argv)
    assert code == 1 and "SR130" in output, output
