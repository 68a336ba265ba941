"""The state store (docs/spec.md §4, §5): load, save, recover, migrate on disk. Storage layer.

Write protocol: build the whole document, refresh ``updated`` and ``revision``, validate it
(an invalid state is never written), take the lock, write a unique temp file (O_EXCL) in the
state's own directory, fsync it, hard-link the current file to ``.bak`` only if the current
file is a valid state, ``os.replace`` the temp file over the state, fsync the directory,
append the worklog event. The corrupt file, when there is one, is kept, never deleted. The
lock's end records what the block wrote (storage/written.py)."""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from session_resume.core import schemas
from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, FileReport
from session_resume.core.jsonread import loads_known, parse_json_bytes
from session_resume.core.limits import DEFAULT_MAX_SIZE
from session_resume.core.outcomes import StateStatus
from session_resume.core.timeutil import format_ts
from session_resume.core.validation import ValidateOptions, validate_parsed
from session_resume.core.versions import CURRENT, is_known, is_newer_than_known, version_of
from session_resume.core.workflow import Workflow
from session_resume.records import field, record
from session_resume.storage import held as held_mod
from session_resume.storage import known_ok, worklog, written
from session_resume.storage.held import HeldDir, StoreError
from session_resume.storage.session_files import (
    BAK,
    GITIGNORE,
    LOCK,
    PRE_MIGRATION,
    STATE,
    TMP_PREFIX,
    TMP_SUFFIX,
    WRITTEN_FILES,
    write_gitignore,
    write_target_problem,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# StoreError is defined in storage.held and raised by every layer above it; the names of the
# session's files, its `.gitignore` and the check of a file to write are storage.session_files';
# callers find them here too.
__all__ = [
    "BAK",
    "GITIGNORE",
    "LOCK",
    "PRE_MIGRATION",
    "STATE",
    "StoreError",
    "TMP_PREFIX",
    "TMP_SUFFIX",
    "write_gitignore",
    "write_target_problem",
]


class ConflictError(StoreError):
    """Another writer saved first (``expected_revision`` did not match)."""


@record
class Loaded:
    """What ``load`` found. ``status``: absent | ok | invalid | corrupt | needs_migration |
    too_new | bad_version | refused (unsafe path)."""

    status: StateStatus
    document: dict[str, Any] | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    version: str | None = None
    backup_usable: bool = False
    # The revision of a file known "ok" read without its document (``read_state(parse=False)``).
    known_revision: int | None = None

    @property
    def revision(self) -> int:
        if self.known_revision is not None:
            return self.known_revision
        rev = (self.document or {}).get("revision")
        return rev if isinstance(rev, int) and not isinstance(rev, bool) else 0


@record(frozen=True)
class Session:
    """Paths of one session directory. ``root`` bounds where links may lead."""

    dir: Path
    root: Path | None = None

    # Computed once per Session (a write uses each several times; paths are immutable).
    @functools.cached_property
    def state(self) -> Path:
        return self.dir / STATE

    @functools.cached_property
    def bak(self) -> Path:
        return self.dir / BAK

    @functools.cached_property
    def lock_path(self) -> Path:
        return self.dir / LOCK

    def hold(self, *, create: bool = False) -> HeldDir:
        """The session directory held (:class:`~session_resume.storage.held.HeldDir`): walked
        from ``root`` without following a link out of it; with ``create``, each missing
        component made relative to its parent's descriptor. Raises :class:`StoreError`."""
        return HeldDir.at(self.dir, self.root, create=create)

    def check_paths(self) -> None:
        """Refuse a session directory that cannot be held (a link out of the root on the
        way, not a directory); a missing one is not refused (nothing to write through)."""
        try:
            self.hold().close()
        except StoreError as exc:
            if any(d.code != "SR100" for d in exc.diagnostics):
                raise


def repo_relative(s: Session) -> str | None:
    """The session directory relative to the repository root, POSIX (None: no root, or the
    directory is outside it): what a bare artifact name is resolved against (docs/spec.md
    §4, §9)."""
    if s.root is None:
        return None
    rel = os.path.relpath(os.path.abspath(s.dir), os.path.abspath(s.root))
    return None if rel.startswith("..") else Path(rel).as_posix()


def session_of(
    session_dir: str | os.PathLike[str] | Session, root: str | os.PathLike[str] | None = None
) -> Session:
    if isinstance(session_dir, Session):
        return session_dir
    return Session(Path(session_dir), Path(root) if root is not None else None)


# --- reading -----------------------------------------------------------------------------


def classify(data: bytes, file: str = "") -> Loaded:
    """Pure: what these bytes are as a state file."""
    parsed = parse_json_bytes(data, file=file)
    if parsed.corrupt or parsed.value is None:
        return Loaded("corrupt", diagnostics=parsed.diagnostics)
    doc = parsed.value
    raw, num = version_of(doc)
    if raw is None or num is None:
        return Loaded(
            "bad_version",
            doc,
            [
                diag(
                    "SR142",
                    "schema_version is not a version string",
                    file=file,
                    pointer="/schema_version",
                )
            ],
        )
    if is_newer_than_known(num):
        return Loaded(
            "too_new",
            doc,
            [
                diag(
                    "SR141",
                    f"schema version {raw} is newer than {CURRENT}",
                    file=file,
                    pointer="/schema_version",
                )
            ],
            version=raw,
        )
    if not is_known(raw):
        return Loaded(
            "bad_version",
            doc,
            [
                diag(
                    "SR142",
                    f"schema version {raw} does not exist",
                    file=file,
                    pointer="/schema_version",
                )
            ],
        )
    if raw != CURRENT:
        return Loaded(
            "needs_migration",
            doc,
            [diag("SR140", f"schema version {raw} must be migrated", file=file)],
            version=raw,
        )
    rel = f"session-state/{CURRENT}.json"
    if not schemas.is_valid(rel, doc):
        return Loaded("invalid", doc, schemas.explain(rel, doc, file=file), version=raw)
    return Loaded("ok", doc, parsed.diagnostics, version=raw)


def _classify_read(data: bytes, file: str, *, parse: bool = True) -> Loaded:
    """:func:`classify` of bytes just read from ``file``, without parsing them through the
    strict reader and the schema again when they are bytes this process has already seen
    classify "ok" without findings there (:mod:`~session_resume.storage.known_ok`); not
    ``parse``: such bytes are not parsed at all (a writer needs only their revision)."""
    rev = known_ok.revision(file, data)
    if rev is not None:
        if not parse:
            return Loaded("ok", version=CURRENT, known_revision=rev)
        # The strict reader found nothing in these bytes, so the plain parse is the same value.
        return Loaded("ok", loads_known(data), version=CURRENT)
    loaded = classify(data, file=file)
    if loaded.status == "ok" and not loaded.diagnostics:
        known_ok.remember(file, data, loaded.revision)
    return loaded


def is_valid_state_bytes(data: bytes) -> bool:
    """A file worth keeping as ``.bak``: parses and passes its own version's schema."""
    loaded = classify(data)
    if loaded.status == "ok":
        return True
    if loaded.status == "needs_migration" and loaded.document is not None:
        return schemas.is_valid(f"session-state/{loaded.version}.json", loaded.document)
    return False


def load(
    session_dir: str | os.PathLike[str] | Session,
    *,
    root: str | os.PathLike[str] | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
) -> Loaded:
    """Read the session's state file; never raises for bad content."""
    s = session_of(session_dir, root)
    try:
        with held_mod.using(s.dir, s.root) as h:
            return read_state(s, max_size=max_size, held=h)
    except StoreError as exc:
        if all(d.code == "SR100" for d in exc.diagnostics):  # no directory, so no state
            return Loaded("absent")
        return Loaded("refused", diagnostics=exc.diagnostics)


def read_state(
    s: Session,
    *,
    max_size: int = DEFAULT_MAX_SIZE,
    parse: bool = True,
    held: HeldDir | None = None,
) -> Loaded:
    """:func:`load` of the session directory ``held`` (default: the one the command holds,
    else held now). Not ``parse``: a file this process knows to be "ok" comes without its
    document, only its revision (``save``)."""
    if held is None:
        with held_mod.using(s.dir, s.root) as h:
            return read_state(s, max_size=max_size, parse=parse, held=h)
    res = held.read_limited(STATE, max_size=max_size)
    if res.data is not None:
        loaded = _classify_read(res.data, str(s.state), parse=parse)
    elif any(d.code == "SR100" for d in res.diagnostics):  # nothing there, not even a link
        loaded = Loaded("absent")
    else:
        status: StateStatus = (
            "corrupt" if any(d.code == "SR112" for d in res.diagnostics) else "refused"
        )
        loaded = Loaded(status, diagnostics=res.diagnostics)
    if loaded.status in ("corrupt", "absent") and held.exists(BAK):
        bres = held.read_limited(BAK, max_size=max_size)
        loaded.backup_usable = (
            bres.data is not None
            and usable_backup(bres.data, project_hint=s.dir.resolve().name).document is not None
        )
    return loaded


@record
class Backup:
    """What a ``.bak`` holds for recovery: the 3.0 document to restore (None: unusable), the
    version it was migrated from (None: it is 3.0 already), and why it is unusable."""

    document: dict[str, Any] | None
    migrated_from: str | None = None
    problems: list[Diagnostic] = field(default_factory=list)


def usable_backup(
    data: bytes,
    *,
    now: datetime | None = None,
    project_hint: str | None = None,
    file: str = "",
    session_dir: str | None = None,
) -> Backup:
    """The one definition of a usable backup, shared by recover, resume and validate
    (docs/spec.md §5): it parses and passes the 3.0 schema, or it is an older or repairable
    state that ``migrate`` (without ``--salvage``) turns into one."""
    # lazy: migration (and jsonpatch) only for a usable older .bak
    from session_resume.core.migration import MigrationError, migrate

    loaded = classify(data, file=file)
    if loaded.status == "ok":
        return Backup(loaded.document)
    if loaded.status not in ("needs_migration", "invalid") or loaded.document is None:
        return Backup(None, problems=loaded.diagnostics)
    try:
        res = migrate(
            loaded.document,
            now=now or datetime.now(UTC),
            project_hint=project_hint,
            file=file,
            session_dir=session_dir,
        )
    except MigrationError as exc:
        return Backup(None, problems=exc.diagnostics)
    except (RecursionError, ValueError) as exc:
        return Backup(None, problems=[diag("SR152", f"not migratable: {exc}", file=file)])
    return Backup(res.document, res.from_version)


# --- locking and atomic replacement --------------------------------------------------------


def check_write_paths(s: Session, held: HeldDir | None = None) -> None:
    """The path policy for every file a writer opens in the held session directory: the
    lock, the lease, the worklog and the handoff must be regular files or absent, never links
    out of the root (SR105, SR103, SR102); the state and ``.bak`` never links out of the
    root either (the rename would replace the link, but the refusal says what is wrong);
    a file written in place (lock, worklog) has one
    name only (SR107). Runs before anything is opened; raises :class:`StoreError`."""
    if held is None:
        with held_mod.using(s.dir, s.root) as h:
            return check_write_paths(s, h)
    problems = []
    for name in (STATE, BAK, *WRITTEN_FILES):
        # the state and .bak are only checked for links: what is in their place otherwise
        # (a directory) is the write's own refusal to report (SR163, docs/spec.md §4)
        problem = write_target_problem(held, name, links_only=name in (STATE, BAK))
        if problem is not None:
            problems.append(problem)
    if problems:
        raise StoreError(problems)
    return None


@contextlib.contextmanager
def locked(s: Session, timeout: float = 30.0, *, create: bool = False) -> Iterator[HeldDir]:
    """The advisory lock for read-modify-write (a separate file: never the one replaced),
    in the session directory held once for the whole block (yielded; every session file
    operation inside the block goes through it), taken after the path policy
    (:func:`check_write_paths`). ``create``: make the session directory's missing components
    (relative to their held parents). Failing to take the lock is SR160 (timeout, or a lock
    path that cannot be a lock file)."""
    with s.hold(create=create) as h, held_mod.holding(h, s.dir):
        check_write_paths(s, h)
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(h.lock(LOCK, timeout))
        except held_mod.LockBusy:
            raise StoreError(
                [
                    diag(
                        "SR160",
                        f"could not take the lock {LOCK} within {timeout:g} s",
                        file=str(s.lock_path),
                    )
                ]
            ) from None
        except OSError as exc:
            raise StoreError(
                [
                    diag(
                        "SR160",
                        f"cannot use {LOCK} as a lock file: {exc.strerror or exc}",
                        file=str(s.lock_path),
                    )
                ]
            ) from None
        with stack:
            before = written.snapshot(h)
            try:
                yield h
            except OSError as exc:  # a lease or worklog write of a session command
                raise StoreError(
                    [
                        diag(
                            "SR164",
                            f"a session file could not be written: {exc.strerror or exc}",
                            file=str(exc.filename or s.dir),
                        )
                    ]
                ) from None
            finally:  # what this block wrote, for the hooks' check (storage/written.py)
                written.commit(h, before)


def serialize(doc: dict[str, Any]) -> bytes:
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a "\\ud800" escape) has no UTF-8 form: keep it as an
        # escape, which is valid JSON and reads back as the same string.
        return (json.dumps(doc, indent=2, ensure_ascii=True) + "\n").encode("ascii")


def replace_state(
    s: Session,
    data: bytes,
    *,
    rotate_backup: bool,
    always_backup: bool = False,
    current_valid: bool | None = None,
    held: HeldDir | None = None,
) -> None:
    """Replace the state with ``data`` in the session directory ``held`` (default: the one
    the command holds). With ``rotate_backup`` the current file becomes ``.bak`` if it is a
    valid state (or, with ``always_backup``, if it exists at all: the pre-migration file is
    kept whatever its quality). ``current_valid``: the caller already classified the current
    file under the lock (saves reading it again). Data over the read limit is refused
    (SR166) before anything is written."""
    if held is None:
        with held_mod.using(s.dir, s.root) as h:
            return replace_state(
                s,
                data,
                rotate_backup=rotate_backup,
                always_backup=always_backup,
                current_valid=current_valid,
                held=h,
            )
    check_size(s, data)
    h = held
    try:
        tmp = h.write_temp(data, TMP_PREFIX)
    except OSError as exc:  # disk full, read-only, a directory in the way: nothing changed
        raise StoreError([_write_failed(s, exc)]) from None
    try:
        keep = rotate_backup and h.is_regular(STATE)
        if keep and not always_backup and current_valid is not None:
            keep = current_valid
        elif keep and not always_backup:
            current = h.read_limited(STATE)
            keep = current.data is not None and is_valid_state_bytes(current.data)
        written.stage_state(h, data, rotating=keep)  # the copy the hooks put back from
        if keep:
            h.keep_as(STATE, BAK, prefix=TMP_PREFIX)
        h.replace(tmp, STATE)
    except OSError as exc:
        h.discard(tmp)
        raise StoreError([_write_failed(s, exc)]) from None
    except BaseException:
        h.discard(tmp)
        raise
    try:
        h.fsync()
    except OSError as exc:  # the new state is in place: say so, never a raw OSError
        raise StoreError(
            [
                diag(
                    "SR165",
                    f"the state was written, but the directory could not be synced: "
                    f"{exc.strerror or exc}; the change may not survive a power loss",
                    file=str(s.state),
                )
            ]
        ) from None
    return None


def check_size(s: Session, data: bytes, max_size: int = DEFAULT_MAX_SIZE) -> None:
    """Refuse (SR166) a state the reader would refuse as too large (SR112, corrupt)."""
    if len(data) > max_size:
        raise StoreError(
            [
                diag(
                    "SR166",
                    f"the new state would be {len(data)} bytes, over the read limit of "
                    f"{max_size}; nothing was written",
                    file=str(s.state),
                )
            ]
        )


def _write_failed(s: Session, exc: OSError) -> Diagnostic:
    return diag(
        "SR163",
        f"the state could not be written: {exc.strerror or exc}; the previous "
        "state and .bak are unchanged",
        file=str(s.state),
    )


# --- writing -------------------------------------------------------------------------------


@record
class SaveResult:
    document: dict[str, Any]
    revision: int
    worklog_event: dict[str, Any] | None = None


def _revision_to_replace(
    s: Session, current: Loaded, allow_overwrite: frozenset[str], expected_revision: int | None
) -> int:
    """The revision on disk that a save replaces, or the refusal (StoreError, ConflictError)
    of a save over a file it may not overwrite (missing with a good .bak, unreadable, another
    version) or over another writer's revision."""
    if current.status == "absent" and current.backup_usable:
        # Writing now would rotate the new state over the only good copy.
        raise StoreError(
            [
                diag(
                    "SR161",
                    "the state file is missing but .bak holds a valid "
                    "state; run `session-resume recover` first",
                    file=str(s.state),
                )
            ]
        )
    if current.status not in allow_overwrite:
        raise StoreError(
            current.diagnostics
            or [
                diag(
                    "SR161",
                    f"the state file is {current.status}; run `session-resume "
                    f"{'migrate' if current.status == 'needs_migration' else 'recover'}` first",
                    file=str(s.state),
                )
            ]
        )
    on_disk = current.revision if current.status in ("ok", "invalid") else 0
    if expected_revision is not None and expected_revision != on_disk:
        raise ConflictError(
            [
                diag(
                    "SR162",
                    f"the state is at revision {on_disk}, not {expected_revision}: "
                    "another writer saved first; reload and retry",
                    file=str(s.state),
                )
            ]
        )
    return on_disk


def save(
    session_dir: str | os.PathLike[str] | Session,
    doc: dict[str, Any],
    *,
    now: datetime,
    expected_revision: int | None = None,
    workflow: Workflow | str | None = None,
    event: str | None = None,
    event_step: str | None = None,
    event_sub_step: str | None = None,
    event_detail: dict[str, Any] | None = None,
    session_id: str = "",
    root: str | os.PathLike[str] | None = None,
    lock_timeout: float = 30.0,
    allow_overwrite: frozenset[str] = frozenset({"ok", "absent", "invalid"}),
    then: Callable[[], object] | None = None,
) -> SaveResult:
    """Write ``doc`` as the session's state (one whole-document atomic write).

    ``expected_revision``: the revision the caller read; if the file on disk has another one,
    :class:`ConflictError` is raised and nothing is written (lost-update detection).
    ``then``: called under the same lock once the state and its worklog event are written
    (a write's lease heartbeat: one lock per write moment).
    """
    s = session_of(session_dir, root)
    with locked(s, lock_timeout), held_mod.using(s.dir, s.root) as h:  # the one locked
        current = read_state(s, parse=False, held=h)  # its status and revision are all save() needs
        on_disk = _revision_to_replace(s, current, allow_overwrite, expected_revision)
        # A new top-level object: ``doc`` is not changed, and nothing but ``data`` (serialized
        # here, once) is validated, written and remembered.
        new = {**doc, "updated": format_ts(now), "revision": on_disk + 1}
        data = serialize(new)
        check_size(s, data)
        checked = check_writable(new, workflow, now, str(s.state), data=data)
        replace_state(s, data, rotate_backup=True, current_valid=current.status == "ok", held=h)
        if not checked.report.diagnostics:  # no finding: it classifies "ok" without findings
            known_ok.remember(str(s.state), data, new["revision"])
        record = None
        if event is not None:
            try:
                record = worklog.append(
                    h,
                    event,
                    ts=format_ts(now),
                    session=session_id,
                    step=event_step,
                    sub_step=event_sub_step,
                    detail=event_detail,
                )
            except (OSError, ValueError) as exc:
                raise StoreError(
                    [
                        diag(
                            "SR505",
                            "the state was written (revision "
                            f"{new['revision']}) but its worklog event could not "
                            f"be appended: {exc}",
                            file=str(s.dir / worklog.WORKLOG),
                        )
                    ]
                ) from None
        if then is not None:
            then()
        # The caller's copy, independent of ``doc``: what the file holds, as the strict reader
        # built it when it validated those bytes.
        return SaveResult(checked.document, new["revision"], record)


@record
class Writable:
    """What :func:`check_writable` found: the report (warnings at most) and the value of the
    bytes as the strict reader built it (a tree independent of the caller's document)."""

    report: FileReport
    document: dict[str, Any]


def check_writable(
    doc: dict[str, Any],
    workflow: Workflow | str | None,
    now: datetime,
    file: str,
    *,
    data: bytes | None = None,
) -> Writable:
    """Refuse (SR161) a document that is not a valid state; else its report (warnings).
    ``data``: ``doc`` serialized, the bytes to be written (they are what is validated)."""
    opts = ValidateOptions(workflow=workflow, now=now)
    parsed = parse_json_bytes(serialize(doc) if data is None else data, file=file)
    report = validate_parsed(parsed, file=file, options=opts)
    if report.errors():
        raise StoreError(
            [
                diag(
                    "SR161",
                    f"refusing to write an invalid state: {d.code} {d.message}",
                    file=file,
                    pointer=d.pointer,
                )
                for d in report.errors()
            ]
        )
    return Writable(report, parsed.value)
