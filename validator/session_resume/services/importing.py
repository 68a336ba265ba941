"""The import services: map another tool's session (session-tracker, dotagent) onto a state
and write it (`import`), and merge a TodoWrite/Tasks list into a free-steps session's steps
(`sync-todos`), the latter as one write moment."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from session_resume.core.changes import Change
from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.jsonread import parse_json_bytes
from session_resume.core.timeutil import format_ts
from session_resume.core.workflow import Workflow, WorkflowError, load_workflow, state_workflow_spec
from session_resume.core.write_moments import TransitionError
from session_resume.importers import dotagent, todos, tracker
from session_resume.importers.apply import ApplyResult, apply_plan, check_target, existing_files
from session_resume.importers.common import ImportPlan, project_name
from session_resume.records import field, record
from session_resume.services.context import PROJECT_NAME, WriteContext
from session_resume.services.errors import ServiceError
from session_resume.services.writes import WriteResult, refuse_unwritable, write_state
from session_resume.storage import store
from session_resume.storage.held import read_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_TODO_INPUT = 8 * 1024 * 1024
SOURCES = ("session-tracker", "dotagent")


def plan_import(
    source: str,
    src: Path,
    to: Path,
    *,
    now: datetime,
    root: Path,
    project: str | None = None,
    project_root: str | None = None,
    archive: str | None = None,
) -> ImportPlan:
    """Read the source session and map it onto a state (pure after the read; no writing).
    Raises ``ImportRefused`` or :class:`ServiceError`."""
    to = Path(os.path.abspath(to))
    if project is not None and not PROJECT_NAME.match(project):
        raise ServiceError(
            [
                diag(
                    "SR100",
                    f"project {project!r} is not a project name (letters, digits, `.`, `_`, "
                    "`-`, starting with a letter or digit)",
                )
            ],
            2,
        )
    src = Path(os.path.abspath(src))
    if source == "session-tracker":
        check_target(to, src, no_write_under=src)
        tsrc = tracker.read_source(src, repo_root=root, project_root=project_root)
        return tracker.map_tracker(tsrc, now=now, project=project or project_name([to.name]))
    dsrc = dotagent.read_source(src, repo_root=root, archive=archive)
    check_target(to, Path(dsrc.dir), no_write_under=Path(dsrc.dir) / "state")
    wid = dsrc.phase.get("workflow_id")
    name = project or project_name([wid if isinstance(wid, str) else None, to.name])
    try:
        wf = load_workflow("dotagent")
    except WorkflowError as exc:
        raise ServiceError(exc.diagnostics, 3) from None
    template = wf.template_state(name, format_ts(now))["steps"]
    return dotagent.map_dotagent(dsrc, now=now, project=name, template_steps=template)


def apply_import(
    plan: ImportPlan, to: Path, *, now: datetime, root: Path, force: bool = False, keep: int = 5
) -> ApplyResult:
    """Write the planned session into ``to`` (an existing session only with ``force``: it is
    archived first)."""
    return apply_plan(plan, Path(os.path.abspath(to)), now=now, force=force, root=root, keep=keep)


def files_in_the_way(plan: ImportPlan, to: Path) -> list[str]:
    """Files of ``to`` that a real import would replace (a dry run's warning)."""
    return existing_files(Path(os.path.abspath(to)), plan)


def read_todo_list(data: bytes | None, name: str) -> list[todos.TodoItem]:
    """Parse a TodoWrite/Tasks list given as bytes (``data``) or in the file ``name``."""
    if data is None:
        res = read_path(name, max_size=MAX_TODO_INPUT)
        if res.data is None:
            raise ServiceError(res.diagnostics, 2)
        data = res.data
    elif len(data) > MAX_TODO_INPUT:
        raise ServiceError([diag("SR830", "the list is larger than 8 MiB", file=name)])
    parsed = parse_json_bytes(data, file=name, require_object=False)
    if parsed.corrupt or parsed.value is None:
        raise ServiceError(
            [
                diag(
                    "SR830",
                    "the input is not JSON"
                    + "".join(f" ({d.code}: {d.message})" for d in parsed.diagnostics[:1]),
                    file=name,
                )
            ]
        )
    try:
        return todos.parse_list(parsed.value, file=name)
    except todos.TodoListError as exc:
        raise ServiceError(exc.diagnostics) from None


@record
class SyncResult:
    changes: list[dict[str, Any]]
    notes: list[Diagnostic] = field(default_factory=list)
    written: WriteResult | None = None  # None: nothing written (no change, or a dry run)


def sync_todos(
    ctx: WriteContext,
    items: list[todos.TodoItem],
    *,
    dry_run: bool = False,
    config_workflow: str | None = None,
) -> SyncResult:
    """Merge ``items`` into the steps of a free-steps session: one write moment (a ``note``
    event holding the changes), or with ``dry_run`` only the changes it would make."""
    loaded = store.load(ctx.session_dir, root=ctx.root)
    refuse_unwritable(loaded, ctx)
    assert loaded.document is not None
    try:
        wf = load_workflow(state_workflow_spec(loaded.document.get("workflow"), config_workflow))
    except WorkflowError as exc:
        raise ServiceError(exc.diagnostics, 2) from None  # an input error, as everywhere
    if not wf.free_steps:
        raise ServiceError([_closed(wf.id, ctx.state_path)])
    preview = todos.merge(loaded.document, items, ctx.now)
    notes: list[Diagnostic] = preview.diagnostics
    if not preview.changed or dry_run:
        return SyncResult(preview.changes, notes)

    def build(doc: dict[str, Any], wf: Workflow, _orphaned: bool) -> Change:
        if not wf.free_steps:
            raise TransitionError([_closed(wf.id, "")])
        # merge is pure: on the state the preview merged (no writer in between, the common
        # case) its result is this one (10,000 items: a tenth of a second not spent twice).
        r = preview if doc == loaded.document else todos.merge(doc, items, ctx.now)
        notes[:] = r.diagnostics
        detail = {
            "todo_sync": {
                "items": len(items),
                "changes": r.changes,
                "codes": sorted({x.code for x in r.diagnostics}),
            }
        }
        return Change(r.document, "note", detail=detail)

    res = write_state(ctx, build)
    changes = res.event["detail"]["todo_sync"]["changes"] if res.event else []
    return SyncResult(changes, notes, res)


def _closed(wf_id: str, file: str) -> Diagnostic:
    return diag(
        "SR831",
        f"the session's workflow {wf_id!r} has a fixed step list; sync-todos adds steps, "
        "which only a free-steps workflow (generic) allows",
        file=file,
    )
