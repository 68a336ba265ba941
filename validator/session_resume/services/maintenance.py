"""The maintenance services: `recover` a corrupt state, `migrate` old ones, `archive` a
session. Each is one call into the store, with refusals as :class:`ServiceError`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from session_resume.core.diagnostics import Diagnostic, Severity
from session_resume.records import field, record
from session_resume.services.context import Reading
from session_resume.services.errors import ServiceError
from session_resume.storage import archive as archive_store
from session_resume.storage import state_repair, store
from session_resume.storage.discovery import discover, session_dir_of
from session_resume.storage.state_repair import MigrateOutcome, RecoverResult


def under_session_root(session_dir: Path, root: Path | None, session_root: str) -> bool:
    """Whether ``session_dir`` is a session's place: inside the session root, or where a
    built-in workflow's ``session_dir`` pattern puts a project (``memory/NAME``). Paths only."""
    d = Path(os.path.abspath(session_dir))
    base = Path(os.path.abspath(root or Path.cwd()))
    if d.is_relative_to(base / session_root) and d != base / session_root:
        return True
    # lazy: the workflow loader only for a directory outside the session root
    from session_resume.core.workflow import BUILTINS, load_workflow

    for name in BUILTINS:
        pattern = load_workflow(name).session_dir
        if d == base / pattern.replace("{project}", d.name):
            return True
    return False


def refuse_stray(session_dir: Path, root: Path | None, session_root: str) -> None:
    """Refuse (SR101, exit 1, nothing written) to recover a directory that holds no state and
    no ``.bak`` and is no session's place (:func:`under_session_root`)."""
    if under_session_root(session_dir, root, session_root):
        return
    try:
        state_repair.refuse_stray(
            session_dir, root, shown=_shown(session_dir, root), session_root=session_root
        )
    except store.StoreError as exc:
        raise ServiceError(exc.diagnostics, exit_code=1) from None


def _shown(path: Path, root: Path | None) -> str:
    """``path`` relative to the repository root when inside it (the one path style)."""
    base = os.path.abspath(root or Path.cwd())
    full = os.path.abspath(path)
    rel = os.path.relpath(full, base)
    return full if rel.startswith("..") else ("." if rel == "." else rel)


def recover(
    session_dir: Path,
    reading: Reading,
    *,
    now: datetime,
    project: str | None = None,
    session_root: str | None = None,
) -> RecoverResult:
    """Restore a corrupt or missing state from a valid ``.bak``, else recreate it from the
    template of the reading's workflow (the caller's, else the configured one); the corrupt
    file is kept as ``*.corrupt-<stamp>``. ``session_root`` (the configured one): a
    directory with no state and no ``.bak`` outside it is refused (:func:`refuse_stray`)."""
    spec, root = reading.spec_for(None), reading.root
    if session_root is not None:
        refuse_stray(session_dir, root, session_root)
    # a broken workflow (SR400-SR403) is refused before anything is read or written, exit 2
    # as in every command (it was an internal error once recover needed it for a fresh state)
    # lazy: the workflow loader only when a workflow is named
    from session_resume.core.workflow import WorkflowError, load_workflow

    try:
        workflow = load_workflow(spec) if spec is not None else None
    except WorkflowError as exc:
        raise ServiceError(exc.diagnostics, exit_code=2) from None
    try:
        return state_repair.recover(
            session_dir, now=now, workflow=workflow, project=project, root=root
        )
    except store.StoreError as exc:
        missing = any(d.code == "SR100" for d in exc.diagnostics)  # a missing path: exit 2
        raise ServiceError(exc.diagnostics, exit_code=2 if missing else 1) from None


@record
class MigrateReport:
    outcomes: list[MigrateOutcome] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)  # paths that could not be used

    @property
    def refused(self) -> bool:
        return (
            bool(self.problems)
            or any(o.status == "refused" for o in self.outcomes)
            or any(d.severity is Severity.ERROR for o in self.outcomes for d in o.notes)
        )

    @property
    def pending(self) -> bool:
        """Some file would change (``--check`` fails on it)."""
        return any(o.status == "would_migrate" for o in self.outcomes)


def migrate(
    paths: Iterable[str],
    *,
    now: datetime,
    write: bool = True,
    workflow: str | None = None,
    root: Path | None = None,
    salvage: bool = False,
    progress: Callable[[int, int], None] | None = None,
    patterns: bool = True,
) -> MigrateReport:
    """Migrate every state file found under ``paths`` to the current version (chained one
    version at a time; the pre-migration file is kept as ``.bak``). ``write=False``: report
    what would change (the JSON Patch) and write nothing. ``salvage``: resolve contradictions
    (docs/spec.md §9.4) instead of refusing them. ``patterns`` false: no path is a glob (the
    MCP server names one directory, literally)."""
    if workflow is not None:
        # a broken --workflow is refused once, in its own words and place (SR400-SR403, exit 2
        # as validate and resume refuse it), before any file is read
        # lazy: the workflow loader only when a --workflow is given
        from session_resume.core.workflow import WorkflowError, load_workflow

        try:
            load_workflow(workflow)
        except WorkflowError as exc:
            raise ServiceError(exc.diagnostics, exit_code=2) from None
    files, problems = discover(paths, root=root, patterns=patterns)
    report = MigrateReport(problems=problems)
    for n, f in enumerate(files, start=1):
        report.outcomes.append(
            state_repair.migrate_session(
                session_dir_of(f),
                now=now,
                write=write,
                workflow=workflow,
                root=root,
                salvage=salvage,
            )
        )
        if progress is not None:
            progress(n, len(files))
    return report


def archive(
    session_dir: Path,
    *,
    now: datetime,
    keep: int,
    prune_only: bool = False,
    root: Path | None = None,
) -> archive_store.ArchiveResult:
    """Move the session's protocol files into ``.archive/<UTC stamp>_<session>/`` and keep
    the newest ``keep`` archives (the session directory held from ``root``: never through a
    link out of it)."""
    try:
        return archive_store.archive_session(
            session_dir, now=now, keep=keep, prune_only=prune_only, root=root
        )
    except store.StoreError as exc:
        raise ServiceError(exc.diagnostics) from None
