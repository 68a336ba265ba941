"""Render services: write ``00-handoff.md`` of a session, or the skill docs of a workflow.
Every file is written atomically through :func:`session_resume.storage.fileio.replace_file`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.handoff_rules import HANDOFF
from session_resume.core.resume_decision import Snapshot, decide
from session_resume.core.workflow import WorkflowError, state_workflow_spec
from session_resume.records import dataclass
from session_resume.services.context import load_workflow_or_fail
from session_resume.services.errors import ServiceError
from session_resume.storage import fileio, store, worklog


@dataclass(frozen=True)
class HandoffResult:
    text: str
    path: Path | None  # None: not written (the caller wanted the text only)
    workflow: str

    @property
    def lines(self) -> int:
        return len(self.text.splitlines())


def render_handoff(
    session_dir: Path,
    *,
    now: datetime,
    root: Path | None = None,
    workflow: str | None = None,
    default_workflow: str | None = None,
    out: Path | None = None,
    write: bool = True,
) -> HandoffResult:
    """Render the session's handoff from its state and (with ``write``) replace ``out``
    (default ``<session_dir>/00-handoff.md``; a directory gets ``00-handoff.md`` inside)."""
    # lazy: Jinja and the templates only when rendering
    from session_resume.rendering.handoff import render_handoff as render

    if not session_dir.is_dir():
        raise ServiceError([diag("SR100", "no such session directory", file=str(session_dir))], 2)
    loaded = store.load(session_dir, root=root)
    if loaded.status != "ok" or loaded.document is None:
        why = {
            "absent": [diag("SR101", f"no {store.STATE} in this directory", file=str(session_dir))],
        }.get(loaded.status, loaded.diagnostics)
        hint = diag(
            "SR161",
            f"the state is {loaded.status}: no handoff was written (run `session-resume "
            f"resume {session_dir}` to see what to do)",
            file=str(session_dir / HANDOFF),
        )
        raise ServiceError([*why, hint], 1)
    doc = loaded.document
    try:
        spec = workflow or state_workflow_spec(doc.get("workflow"), default_workflow)
    except WorkflowError as exc:
        raise ServiceError(exc.diagnostics, 2) from None
    wf = load_workflow_or_fail(spec)
    # the decision the handoff describes sees the worklog, as `resume` does: a step handed
    # over at a gate is a start (SR712), never "Restart" (no lease: it describes the state)
    tail = worklog.read_tail(session_dir / worklog.WORKLOG, 10)
    snap = Snapshot(state_status="ok", document=doc, last_events=tuple(tail.events))
    text = render(doc, wf, now=now, decision=decide(snap, None, now, wf))
    if not write:
        return HandoffResult(text, None, wf.id)
    # The default target is never "a directory gets 00-handoff.md inside": a 00-handoff.md
    # that is a link to a directory must not lead the write elsewhere.
    target = session_dir / HANDOFF
    if out is not None:
        target = out / HANDOFF if out.is_dir() else out
    problem = fileio.check_target(target, root or session_dir, write=True)
    if problem is not None:
        raise ServiceError([problem], 1)
    fileio.replace_file(target, text.encode("utf-8"))
    return HandoffResult(text, target, wf.id)


def render_skill(out: Path, workflow: str, *, name: str, digest: bool = False) -> list[Path]:
    """Write the skill docs (SKILL.md and its references) of ``workflow`` under ``out``."""
    # lazy: Jinja and the templates only when rendering
    from session_resume.rendering.skill import render_skill as render

    wf = load_workflow_or_fail(workflow)
    files = render(wf, name=name, digest=digest)
    written = []
    for rel, text in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        fileio.replace_file(path, text.encode("utf-8"))
        written.append(path)
    return written


def skill_docs(workflow: str, *, digest: bool = True) -> dict[str, str]:
    """The skill docs of ``workflow`` as text (relative path → text), written nowhere: what
    the MCP server offers as resources."""
    # lazy: Jinja and the templates only when rendering
    from session_resume.rendering.skill import render_skill as render

    wf = load_workflow_or_fail(workflow)
    return render(wf, name=wf.id, digest=digest)
