"""Repairing a session's state file on disk: ``recover`` a corrupt or missing state (from a
valid ``.bak``, else a fresh template state) and ``migrate_session`` an old one (docs/spec.md
§5, §9). Both write through :mod:`session_resume.storage.store`'s lock and atomic save."""

from __future__ import annotations

import contextlib
import copy
import os
import re
import stat
from datetime import datetime

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.jsonread import parse_json_bytes
from session_resume.core.migration import MigrationError, migrate
from session_resume.core.outcomes import MigrateStatus, RecoverAction
from session_resume.core.timeutil import format_ts
from session_resume.core.versions import CURRENT
from session_resume.core.workflow import DEFAULT_WORKFLOW, Workflow, load_workflow
from session_resume.records import field, record
from session_resume.storage import held as held_mod
from session_resume.storage import worklog
from session_resume.storage.fileio import write_all
from session_resume.storage.held import HeldDir
from session_resume.storage.session_files import (
    BAK,
    PRE_MIGRATION_TRIES,
    STATE,
    TMP_PREFIX,
    pre_migration_name,
)
from session_resume.storage.store import (
    Backup,
    Loaded,
    Session,
    StoreError,
    check_writable,
    check_write_paths,
    load,
    locked,
    read_state,
    replace_state,
    repo_relative,
    serialize,
    session_of,
    usable_backup,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record
class RecoverResult:
    action: RecoverAction
    corrupt_kept_as: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    document: dict[str, Any] | None = None
    problems: list[Diagnostic] = field(default_factory=list)  # after the recovery itself
    migrated_from: str | None = None  # the restored .bak was this version, migrated
    pre_migration_kept_as: str | None = None  # that .bak, kept for good under this name
    backup_problems: list[Diagnostic] = field(default_factory=list)  # why .bak was unusable


def _stamp(now: datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ")


def _refuse_unreadable(s: Session, current: Loaded) -> None:
    """A state that could not be read (a FIFO, a directory, mode 000) is neither "readable,
    nothing to recover" nor corrupt: refused with the reader's code (SR101-SR104)."""
    if current.status == "refused":
        raise StoreError(
            current.diagnostics
            or [diag("SR104", "the state file cannot be read", file=str(s.state))]
        )


def refuse_stray(
    session_dir: str | os.PathLike[str] | Session,
    root: str | os.PathLike[str] | None = None,
    *,
    shown: str,
    session_root: str,
) -> None:
    """SR101 (nothing written) for a directory that holds no state file and no ``.bak``:
    `recover` repairs a session, it never creates one where none is (a hint pasted at the
    repository root once made ``./00-session-state.json``, a lock and a worklog there). The
    caller skips this for a directory under the session root (a session whose state was lost)."""
    s = session_of(session_dir, root)
    if not s.dir.is_dir():
        return  # recover says SR100 itself
    if any(os.path.lexists(s.dir / name) for name in (STATE, BAK)):
        return
    raise StoreError(
        [
            diag(
                "SR101",
                f"no {STATE} and no {BAK} in {shown}, and it is not a session directory under "
                f"the session root {session_root}/; recover repairs a session and creates none "
                "here (nothing was written)",
                file=shown,
                hint=f"Give the session's own directory (the one under {session_root}/ "
                "named after its project), or check the path for a typing error.",
            )
        ]
    )


def recover(
    session_dir: str | os.PathLike[str] | Session,
    *,
    now: datetime,
    workflow: Workflow | str | None = None,
    project: str | None = None,
    root: str | os.PathLike[str] | None = None,
    session_id: str = "",
) -> RecoverResult:
    """Restore a corrupt or zero-byte state from a valid ``.bak``, else recreate it fresh
    from the workflow's template. The corrupt file is kept as ``*.corrupt-<stamp>``; a good
    ``.bak`` is never overwritten. Every recovery is recorded in the worklog."""

    s = session_of(session_dir, root)
    if not s.dir.is_dir():  # nothing is created for a session that does not exist
        raise StoreError([diag("SR100", "the session directory does not exist", file=str(s.dir))])
    s.check_paths()
    _refuse_unreadable(s, load(s, root=s.root))  # before the lock file is created
    with locked(s) as h:
        current = read_state(s, held=h)
        _refuse_unreadable(s, current)
        if current.status not in ("corrupt", "absent"):
            return RecoverResult("none", diagnostics=current.diagnostics, document=current.document)
        kept = None
        if current.status == "corrupt" and h.exists(STATE):
            kept = _keep_corrupt(h, now)
        ts = format_ts(now)
        backup, bak_bytes = _backup(s, now, h)
        if backup.document is not None:
            doc = backup.document
            # a 3.0 .bak is restored byte for byte, an older one migrated (docs/spec.md §5)
            data = bak_bytes if backup.migrated_from is None else serialize(doc)
            # an older .bak is kept for good before it is migrated: the next write rotates
            # .bak away, and with it the only copy of the pre-migration state
            pre, made = (
                _keep_pre_migration(h, backup.migrated_from, source=BAK)
                if backup.migrated_from
                else (None, False)
            )
            try:
                replace_state(s, data, rotate_backup=False)
            except StoreError:
                if made and pre is not None:
                    h.discard(pre)
                raise
            res = RecoverResult(
                "restored_backup",
                kept,
                current.diagnostics,
                doc,
                migrated_from=backup.migrated_from,
                pre_migration_kept_as=pre,
            )
            _log(
                res,
                s,
                "recovered",
                ts,
                session_id,
                {
                    "from": BAK,
                    "corrupt_kept_as": kept,
                    "reason": _reason(current),
                    **({"migrated_from": backup.migrated_from} if backup.migrated_from else {}),
                    **({"pre_migration_kept_as": pre} if pre else {}),
                },
            )
            return res
        wf = (
            workflow
            if isinstance(workflow, Workflow)
            else load_workflow(workflow or DEFAULT_WORKFLOW)
        )
        name = project or _project_name(s.dir.resolve().name)
        doc = wf.template_state(name, ts)
        doc["revision"] = 1
        check_writable(doc, wf, now, str(s.state))
        replace_state(s, serialize(doc), rotate_backup=False)
        res = RecoverResult(
            "recreated", kept, current.diagnostics, doc, backup_problems=backup.problems
        )
        _log(
            res,
            s,
            "recreated",
            ts,
            session_id,
            {"corrupt_kept_as": kept, "reason": _reason(current), "workflow": wf.id},
        )
        return res


def _keep_corrupt(h: HeldDir, now: datetime) -> str:
    """Keep the corrupt state as ``*.corrupt-<stamp>`` (a hard link, else an O_EXCL copy
    renamed to a name that is free), in the held directory; returns the name."""
    stem = f"{STATE}.corrupt-{_stamp(now)}"
    name, n = stem, 1
    while h.exists(name):
        n += 1
        name = f"{stem}-{n}"
    try:
        os.link(STATE, name, src_dir_fd=h.fd, dst_dir_fd=h.fd, follow_symlinks=False)
    except OSError:  # no hard links here: keep a copy (O_EXCL, never over a file)
        res = h.read_limited(STATE)
        if res.data is None:
            raise StoreError(res.diagnostics) from None
        staged = h.write_temp(res.data, TMP_PREFIX)
        h.replace(staged, name)
    return name


def _keep_pre_migration(h: HeldDir, version: str, source: str = STATE) -> tuple[str, bool]:
    """Keep the state about to be migrated (``source``: the state, or the ``.bak`` recover
    migrates) for good as ``00-session-state.v<version>.json`` (docs/spec.md §5, §9.1 step
    7): a hard link, else an O_EXCL copy; never over an existing file. A name already held
    by this state's copy (a regular file of the same bytes, no other name elsewhere) is that
    copy; one held by anything else (other bytes, a link, a directory, a FIFO) is never
    trusted: the next free name (``…v<version>-1.json``, …) is taken, and when none of them is
    free the migration is refused (SR163). Returns the name and whether this call made it."""
    res = h.read_limited(source)
    if res.data is None:
        raise StoreError(res.diagnostics) from None
    data = res.data
    source_id = _identity(h, source)
    for n in range(PRE_MIGRATION_TRIES):
        name = pre_migration_name(version, n)
        if _made_here(h, source, name, data):
            return name, True
        if _is_copy(h, name, data, source_id):
            return name, False
    raise StoreError(
        [
            diag(
                "SR163",
                f"the pre-migration file could not be kept: {pre_migration_name(version)} and "
                f"its {PRE_MIGRATION_TRIES - 1} numbered names are taken by files that are not "
                "this state's copy; nothing was migrated",
                file=h.name(pre_migration_name(version)),
                hint="move those files aside (they are not this session's), then migrate again",
            )
        ]
    )


def _made_here(h: HeldDir, source: str, name: str, data: bytes) -> bool:
    """Whether ``name`` is made now as ``source``'s copy: False when the name is taken."""
    try:
        os.link(source, name, src_dir_fd=h.fd, dst_dir_fd=h.fd, follow_symlinks=False)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in held_mod.NO_LINK:
            raise StoreError([_kept_failed(h, name, exc)]) from None
    try:  # no hard links here: an O_EXCL copy, never over anything
        fd = h.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0))
    except FileExistsError:
        return False
    except OSError as exc:
        raise StoreError([_kept_failed(h, name, exc)]) from None
    try:
        write_all(fd, data)
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        h.discard(name)
        raise StoreError([_kept_failed(h, name, exc)]) from None
    os.close(fd)
    return True


def _identity(h: HeldDir, name: str) -> tuple[int, int] | None:
    try:
        st = h.stat(name)
    except OSError:
        return None
    return None if st is None else (st.st_dev, st.st_ino)


def _is_copy(h: HeldDir, name: str, data: bytes, source_id: tuple[int, int] | None) -> bool:
    """Whether ``name`` (taken) is this state's copy: a regular file, not a link, with no
    other name (or the source's own file), holding ``data``."""
    try:
        st = h.stat(name)
    except OSError:
        return False
    if st is None or not stat.S_ISREG(st.st_mode):
        return False
    if st.st_nlink > 1 and (st.st_dev, st.st_ino) != source_id:
        return False  # another name may be outside the repository: not ours to keep
    if st.st_size != len(data):
        return False
    res = h.read_limited(name)
    return res.data == data


def _kept_failed(h: HeldDir, name: str, exc: OSError) -> Diagnostic:
    return diag(
        "SR163",
        f"the pre-migration file could not be kept as {name}: {exc.strerror or exc}; "
        "nothing was migrated",
        file=h.name(name),
    )


def _backup(s: Session, now: datetime, h: HeldDir) -> tuple[Backup, bytes]:
    """The ``.bak`` to restore (3.0, or an older state migrated) and its bytes, or why there
    is none."""

    if not h.exists(BAK):
        return Backup(None), b""  # none: nothing to say about it
    res = h.read_limited(BAK)
    if res.data is None:
        return Backup(None, problems=res.diagnostics), b""
    return (
        usable_backup(
            res.data,
            now=now,
            project_hint=s.dir.resolve().name,
            file=str(s.bak),
            session_dir=repo_relative(s),
        ),
        res.data,
    )


def _project_name(dir_name: str) -> str:
    """A valid project name from a directory name (``my project`` → ``my-project``)."""

    name = re.sub(r"[^A-Za-z0-9._-]", "-", dir_name).lstrip("-._")[:128]
    return name or "project"


def _log(
    res: RecoverResult, s: Session, event: str, ts: str, session_id: str, detail: dict[str, Any]
) -> None:
    """Record the recovery; the state is already safe, so a worklog failure is reported
    (SR505) rather than raised."""

    try:
        worklog.append(s.dir, event, ts=ts, session=session_id, detail=detail)
    except (OSError, ValueError) as exc:
        res.problems.append(
            diag(
                "SR505",
                f"recovered ({res.action}) but the {event} event "
                f"could not be appended to the worklog: {exc}",
                file=str(s.dir / worklog.WORKLOG),
            )
        )


def _reason(loaded: Loaded) -> str:
    if loaded.status == "absent":
        return "absent"
    return ",".join(d.code for d in loaded.diagnostics) or loaded.status


# --- migration on disk ---------------------------------------------------------------------


@record
class MigrateOutcome:
    path: str
    status: MigrateStatus
    from_version: str | None = None
    patch: list[dict[str, Any]] = field(default_factory=list)
    notes: list[Diagnostic] = field(default_factory=list)
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    kept_as: str | None = None  # the name the pre-migration file is kept under (migrated)


def migrate_session(
    session_dir: str | os.PathLike[str] | Session,
    *,
    now: datetime,
    write: bool,
    workflow: Workflow | str | None = None,
    root: str | os.PathLike[str] | None = None,
    salvage: bool = False,
) -> MigrateOutcome:
    """Migrate the session's state file; with ``write`` it is replaced atomically and the
    pre-migration file becomes ``.bak``. ``salvage``: resolve contradictions (docs/spec.md
    §9.4) instead of refusing."""

    s = session_of(session_dir, root)
    name = str(s.state)
    try:  # a write runs the whole path policy (issue 18): refused before anything is opened
        check_write_paths(s) if write else s.check_paths()
    except StoreError as exc:
        return MigrateOutcome(name, "refused", notes=exc.diagnostics)
    wf = load_workflow(workflow) if isinstance(workflow, str) else workflow
    # --check and --dry-run only read: no lock (which would create a lock file).
    with locked(s) if write else contextlib.nullcontext():
        try:
            with held_mod.using(s.dir, s.root) as h:  # the locked one when writing
                res = h.read_limited(STATE)
        except StoreError as exc:
            return MigrateOutcome(name, "refused", notes=exc.diagnostics)
        if res.data is None:
            return MigrateOutcome(name, "refused", notes=res.diagnostics)
        parsed = parse_json_bytes(res.data, file=name)
        if parsed.value is None or parsed.corrupt:
            return MigrateOutcome(
                name,
                "refused",
                notes=parsed.diagnostics
                + [
                    diag(
                        "SR152",
                        "the file is corrupt; run `session-resume recover` first",
                        file=name,
                    )
                ],
            )
        try:
            result = migrate(
                parsed.value,
                now=now,
                workflow=wf,
                file=name,
                project_hint=s.dir.resolve().name,
                salvage=salvage,
                session_dir=repo_relative(s),
            )
        except MigrationError as exc:
            return MigrateOutcome(name, "refused", notes=exc.diagnostics)
        out = MigrateOutcome(
            name,
            "current",
            result.from_version,
            result.patch(),
            result.notes,
            parsed.value,
            result.document,
        )
        if not result.changed:
            return out
        if not write:
            out.status = "would_migrate"
            return out
        return _write_migrated(s, out, result, now)


def _write_migrated(s: Session, out: MigrateOutcome, result: Any, now: datetime) -> MigrateOutcome:
    """Under the lock: keep the pre-migration file, replace the state (its old file becomes
    ``.bak``), append the ``migrated`` event; a refused replace keeps nothing."""
    # migrate() set revision and updated and refused contradictions: what the dry-run
    # patch shows is exactly what is written (docs/spec.md §9.3).
    new = copy.deepcopy(result.document)
    kept: str | None = None
    try:
        with held_mod.using(s.dir, s.root) as h:  # the locked one
            kept, made = _keep_pre_migration(h, result.from_version)
            try:
                replace_state(s, serialize(new), rotate_backup=True, always_backup=True, held=h)
            except StoreError:
                if made:  # nothing changed: not even the kept copy
                    h.discard(kept)
                raise
    except StoreError as exc:
        out.status = "refused"
        out.notes = [*out.notes, *exc.diagnostics]
        return out
    out.status = "migrated"
    out.after = new
    out.kept_as = kept
    try:
        worklog.append(
            s.dir,
            "migrated",
            ts=format_ts(now),
            detail={"from": result.from_version, "to": CURRENT, "changes": len(out.patch)},
        )
    except (OSError, ValueError) as exc:
        out.notes = [
            *out.notes,
            diag(
                "SR505",
                f"the state was migrated but its worklog event could not be appended: {exc}",
                file=str(s.dir / worklog.WORKLOG),
            ),
        ]
    return out
