"""Write an :class:`ImportPlan` into a session directory (storage layer).

Order: refuse an existing session unless ``force`` (which archives it first with
:func:`archive.archive_session`); the state with ``store.save`` (validated, atomic; its
worklog event is ``imported``, the first line of the new worklog); the source's mapped events
with ``worklog.append`` under the session lock; the plan's other files (atomic replace); the
lease with ``sentinel.write`` last. The source is never written to.
"""

from __future__ import annotations

import os
import re
import socket
from datetime import datetime
from pathlib import Path, PurePosixPath

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.timeutil import format_ts
from session_resume.core.validation import ValidateOptions, validate_document
from session_resume.core.workflow import Workflow, load_workflow
from session_resume.importers.common import ImportEvent, ImportPlan, ImportRefused
from session_resume.records import dataclass, field, replace
from session_resume.storage import archive, store, worklog
from session_resume.storage import lease_file as sentinel
from session_resume.storage.held import HeldDir

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any


@dataclass
class ApplyResult:
    to: str
    revision: int
    session: str
    events: int
    lease: dict[str, Any] | None
    archived_to: str | None = None
    files: list[str] = field(default_factory=list)


def existing_files(to: Path, plan: ImportPlan) -> list[str]:
    """The session files (and files of the plan) already in ``to``."""
    if not to.is_dir():
        return []
    names = archive.session_files(to)
    names += [rel for rel in plan.files if os.path.lexists(to / rel)]
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


def _set_aside(s: store.Session, rels: list[str], archived_to: str | None, now: datetime) -> None:
    """Move existing files of the plan (not protocol files) next to the archived session."""
    if not rels:
        return
    to = s.dir
    with store.locked(s) as h:
        if archived_to:
            folder = Path(archived_to).name
        else:
            label = re.sub(r"[^A-Za-z0-9._-]", "-", to.resolve().name)[:64] or "session"
            with h.sub(archive.ARCHIVE_DIR, create=True) as base:
                stem = f"{now.strftime('%Y%m%dT%H%M%SZ')}_{label}"
                folder, n = stem, 1
                while base.exists(folder):
                    n += 1
                    folder = f"{stem}-{n}"
        with h.descend([archive.ARCHIVE_DIR, folder], create=True) as target:
            for rel in rels:
                *dirs, base_name = PurePosixPath(rel).parts
                with h.descend(dirs) as src, target.descend(dirs, create=True) as dst:
                    src.replace(base_name, base_name, into=dst)


def apply_plan(
    plan: ImportPlan,
    to: str | os.PathLike[str],
    *,
    now: datetime,
    force: bool = False,
    root: str | os.PathLike[str] | None = None,
    keep: int = 5,
) -> ApplyResult:
    """Write ``plan`` into the session directory ``to``; raises :class:`ImportRefused`."""
    d = Path(os.path.abspath(to))
    workflow = load_workflow(plan.workflow)
    _check_document(plan, workflow, now, str(d / store.STATE))  # before anything is moved
    s = store.Session(d, Path(root) if root is not None else None)
    try:
        # each missing component made relative to its held parent: never at a link's target
        s.hold(create=True).close()
        existing = existing_files(d, plan)
        archived_to = None
        if existing:
            if not force:
                raise _refuse_existing(d, existing)
            res = archive.archive_session(d, now=now, keep=keep, root=root)
            archived_to = res.archived_to
            _set_aside(s, [rel for rel in plan.files if os.path.lexists(d / rel)], archived_to, now)
    except store.StoreError as exc:
        raise ImportRefused(exc.diagnostics) from None
    except OSError as exc:
        raise ImportRefused(
            [diag("SR164", f"cannot set the old files aside: {exc.strerror or exc}", file=str(d))]
        ) from None
    detail = dict(plan.imported_detail)
    if archived_to is not None:
        detail["archived_to"] = Path(archived_to).relative_to(d).as_posix()
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
        raise ImportRefused(_located(exc.diagnostics, str(d / store.STATE))) from None
    try:
        with store.locked(s) as h:
            _append_events(h, plan.events)
            for rel, data in plan.files.items():
                _write_file(h, rel, data)
            lease = None
            if plan.lease is not None:
                lease = {**plan.lease, "host": plan.lease.get("host") or socket.gethostname()}
                sentinel.write(h, lease)
    except store.StoreError as exc:
        raise ImportRefused(exc.diagnostics) from None
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
