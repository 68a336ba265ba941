"""Write an :class:`ImportPlan` into a session directory (storage layer).

Order: refuse an existing session unless ``force`` (which archives it first with
:func:`archive.archive_session`); the state with ``store.save`` (validated, atomic; its
worklog event is ``imported``, the first line of the new worklog); the source's mapped events
with ``worklog.append`` under the session lock; the plan's other files (atomic replace); the
lease with ``sentinel.write`` last. The source is never written to.
"""

from __future__ import annotations

import contextlib
import os
import socket
from datetime import datetime
from pathlib import Path, PurePosixPath

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.timeutil import format_ts
from session_resume.core.validation import ValidateOptions, validate_document
from session_resume.core.workflow import Workflow, load_workflow
from session_resume.importers.common import ImportEvent, ImportPlan, ImportRefused
from session_resume.records import field, record, replace
from session_resume.storage import archive, store, worklog
from session_resume.storage import lease_file as sentinel
from session_resume.storage.held import HeldDir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record
class ApplyResult:
    to: str
    revision: int
    session: str
    events: int
    lease: dict[str, Any] | None
    archived_to: str | None = None
    files: list[str] = field(default_factory=list)


def existing_files(to: Path | HeldDir, plan: ImportPlan) -> list[str]:
    """The session files (and files of the plan) already in ``to`` (held, or a path: held
    here, as named)."""
    if not isinstance(to, HeldDir):
        try:
            with HeldDir.at(to, to) as h:
                return existing_files(h, plan)
        except store.StoreError:
            return []
    names = archive.session_files(to)
    for rel in plan.files:
        *dirs, base = PurePosixPath(rel).parts
        try:
            with to.descend(dirs) as parent:
                if parent.exists(base):
                    names.append(rel)
        except store.StoreError:
            continue
    return names


def check_target(to: Path, source: Path, *, no_write_under: Path | None = None) -> None:
    """Refuse a target that is the source directory, or inside the part of it an import
    would change (SR803)."""
    t = Path(os.path.realpath(to))
    s = Path(os.path.realpath(source))
    inside = no_write_under is not None and (
        t == Path(os.path.realpath(no_write_under))
        or Path(os.path.realpath(no_write_under)) in t.parents
    )
    if t == s or inside:
        raise ImportRefused(
            [
                diag(
                    "SR803",
                    f"--to {to} is the source directory {source} (or inside it): an import "
                    "never writes into its source; choose another directory",
                    file=str(to),
                )
            ],
            exit_code=2,
        )


def _refuse_existing(to: Path, names: list[str]) -> ImportRefused:
    return ImportRefused(
        [
            diag(
                "SR802",
                f"{to} already holds a session ({', '.join(names)}); nothing was written. "
                "Re-import with --force: the existing files are archived under .archive/ "
                "first (nothing is deleted)",
                file=str(to / store.STATE),
            )
        ]
    )


def _write_file(h: HeldDir, rel: str, data: bytes) -> None:
    """Replace the plan's file ``rel`` inside the held session directory (its directories
    made relative to their held parents, never through a link out of the root)."""
    *dirs, base = PurePosixPath(rel).parts
    with h.descend(dirs, create=True) as parent:
        problem = store.write_target_problem(parent, base)
        if problem is not None:
            raise store.StoreError([problem])
        parent.replace_file(base, data, prefix=store.TMP_PREFIX)


def _check_targets(h: HeldDir, plan: ImportPlan) -> dict[str, list[tuple[str, ...]]]:
    """Before anything moves: every file of the plan can be written (its directories held
    without a link out of the root, or missing; its name no link, directory or hard-linked
    file: :func:`store.write_target_problem`). Returns, for each file, the directories a
    write will make (removed again should the import be undone)."""
    made: dict[str, list[tuple[str, ...]]] = {}
    for rel in plan.files:
        *dirs, base = PurePosixPath(rel).parts
        have = 0
        for i in range(len(dirs)):
            try:
                h.descend(dirs[: i + 1]).close()
            except store.StoreError as exc:
                if any(d.code != "SR100" for d in exc.diagnostics):
                    raise
                break
            have = i + 1
        made[rel] = [tuple(dirs[:k]) for k in range(len(dirs), have, -1)]
        if have == len(dirs):
            with h.descend(dirs) as parent:
                problem = store.write_target_problem(parent, base)
            if problem is not None:
                raise store.StoreError([problem])
    return made


def _undo(
    s: store.Session,
    aside: archive.ArchiveResult | None,
    written: list[str],
    made: dict[str, list[tuple[str, ...]]],
) -> str:
    """Put the session back as it was before the import: the files it wrote removed (every
    protocol file now there is the import's: the old ones are in the archive), the directories
    it made removed, the archived files moved back. Returns what could not be undone."""
    try:
        with store.locked(s) as h:
            for name in archive.session_files(h):
                h.discard(name)
            for rel in written:
                *dirs, base = PurePosixPath(rel).parts
                with contextlib.suppress(OSError, store.StoreError), h.descend(dirs) as parent:
                    parent.discard(base)
            for subs in made.values():  # missing before the import: made by it (if empty)
                for sub in subs:
                    with contextlib.suppress(OSError, store.StoreError), h.descend(sub[:-1]) as p:
                        p.rmdir(sub[-1])
            failed = archive.put_back(h, aside) if aside is not None else []
    except store.StoreError as exc:
        return "; ".join(d.message for d in exc.diagnostics)
    if failed and aside is not None:
        return f"{', '.join(failed)} stayed in {aside.archived_to}"
    return ""


def _refused(diags: list[Diagnostic], undone: str, exit_code: int = 1) -> ImportRefused:
    note = (
        "the session is as it was before the import"
        if not undone
        else f"the import could not be fully undone: {undone}"
    )
    return ImportRefused(
        [*diags, diag("SR164", f"the import failed part way; {note}", file=diags[0].file)],
        exit_code=exit_code,
    )


def apply_plan(
    plan: ImportPlan,
    to: str | os.PathLike[str],
    *,
    now: datetime,
    force: bool = False,
    root: str | os.PathLike[str] | None = None,
    keep: int = 5,
) -> ApplyResult:
    """Write ``plan`` into the session directory ``to``; raises :class:`ImportRefused`.
    All or nothing: every write is checked before anything moves, and a failure after the
    old session was archived removes what the import wrote and moves the old files back."""
    d = Path(os.path.abspath(to))
    workflow = load_workflow(plan.workflow)
    _check_document(plan, workflow, now, str(d / store.STATE))  # before anything is moved
    s = store.Session(d, Path(root) if root is not None else None)
    aside = None
    try:
        # each missing component made relative to its held parent: never at a link's target
        with s.hold(create=True) as h:
            made = _check_targets(h, plan)
            existing = existing_files(h, plan)
        if existing:
            if not force:
                raise _refuse_existing(d, existing)
            aside = archive.archive_session(
                d, now=now, keep=keep, root=root, extra=list(plan.files), prune=False
            )
    except store.StoreError as exc:
        raise ImportRefused(exc.diagnostics) from None
    except OSError as exc:
        raise ImportRefused(
            [diag("SR164", f"cannot set the old files aside: {exc.strerror or exc}", file=str(d))]
        ) from None
    archived_to = aside.archived_to if aside is not None else None
    detail = dict(plan.imported_detail)
    if archived_to is not None:
        detail["archived_to"] = Path(archived_to).relative_to(d).as_posix()
    written: list[str] = []
    try:
        saved = store.save(
            d,
            plan.document,
            now=now,
            expected_revision=0,
            workflow=workflow,
            event="imported",
            event_detail=detail,
            session_id=plan.session,
            root=root,
        )
    except store.StoreError as exc:
        diags = _located(exc.diagnostics, str(d / store.STATE))
        raise _refused(diags, _undo(s, aside, written, made)) from None
    try:
        with store.locked(s) as h:
            _append_events(h, plan.events)
            for rel, data in plan.files.items():
                _write_file(h, rel, data)
                written.append(rel)
            lease = None
            if plan.lease is not None:
                lease = {**plan.lease, "host": plan.lease.get("host") or socket.gethostname()}
                sentinel.write(h, lease)
    except store.StoreError as exc:
        raise _refused(exc.diagnostics, _undo(s, aside, written, made)) from None
    if aside is not None:
        archive.prune(d, keep=keep, now=now, made=aside.folder, root=root)
    return ApplyResult(
        to=str(d),
        revision=saved.revision,
        session=plan.session,
        events=1 + len(plan.events),
        lease=lease,
        archived_to=archived_to,
        files=sorted(plan.files),
    )


def _check_document(plan: ImportPlan, workflow: Workflow, now: datetime, file: str) -> None:
    """The state the store would write is valid (it refuses otherwise, but only after the
    old session was archived)."""

    doc = {**plan.document, "updated": format_ts(now), "revision": 1}
    data = store.serialize(doc)
    try:
        store.check_size(store.Session(Path(file).parent), data)  # SR166: over the read limit
    except store.StoreError as exc:
        raise ImportRefused(exc.diagnostics, exit_code=1) from None
    report = validate_document(data, file=file, options=ValidateOptions(workflow=workflow, now=now))
    if report.errors():
        raise ImportRefused(
            [
                diag(
                    "SR161",
                    f"the imported state would be invalid: {d.code} {d.message} (this is a "
                    "bug of the importer: please report it with the source files)",
                    file=file,
                    pointer=d.pointer,
                )
                for d in report.errors()
            ],
            exit_code=3,
        )


def _append_events(d: HeldDir, events: list[ImportEvent]) -> None:
    """Append the source's history after the ``imported`` event (a tracker worklog has
    thousands of lines: one fsync for all of them). The caller holds the lock."""
    worklog.append_many(
        d,
        [
            worklog.NewEvent(ev.event, ev.ts, ev.session, ev.step, ev.sub_step, ev.detail)
            for ev in events
        ],
    )


def _located(diags: list[Diagnostic], file: str) -> list[Diagnostic]:

    return [d if d.file else replace(d, file=file) for d in diags]
