"""Render services: write ``00-handoff.md`` of a session, or the skill docs of a workflow.
Every file is written atomically (temp file, rename) inside a held directory
(:class:`session_resume.storage.held.HeldDir`): never through a link."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path, PurePosixPath

from session_resume.core.codes import diag
from session_resume.core.handoff_rules import HANDOFF
from session_resume.core.resume_decision import Snapshot, decide
from session_resume.records import record
from session_resume.services.context import Reading, load_workflow_or_fail
from session_resume.services.errors import ServiceError
from session_resume.storage import store, worklog
from session_resume.storage.held import HeldDir, StoreError

# lazy imports: Jinja and the templates only when rendering


@record(frozen=True)
class HandoffResult:
    text: str
    path: Path | None  # None: not written (the caller wanted the text only)
    workflow: str

    @property
    def lines(self) -> int:
        return len(self.text.splitlines())


def render_handoff(
    session_dir: Path,
    reading: Reading,
    *,
    now: datetime,
    out: Path | None = None,
    write: bool = True,
) -> HandoffResult:
    """Render the session's handoff from its state and (with ``write``) replace ``out``
    (default ``<session_dir>/00-handoff.md``; a directory gets ``00-handoff.md`` inside)."""
    from session_resume.rendering.handoff import render_handoff as render

    if not session_dir.is_dir():
        raise ServiceError([diag("SR100", "no such session directory", file=str(session_dir))], 2)
    root = reading.root
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
    wf = load_workflow_or_fail(reading.spec_for(doc))
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
        target = out / HANDOFF if out.is_dir() and not out.is_symlink() else out
    try:
        # The target's directory held (walked from the root without following a link out of
        # it); the file replaced by name inside it, never written through a link.
        with HeldDir.at(target.parent, root or session_dir) as h:
            problem = store.write_target_problem(h, target.name)
            if problem is not None:
                raise ServiceError([problem], 1)
            h.replace_file(target.name, text.encode("utf-8"))
    except StoreError as exc:
        raise ServiceError(exc.diagnostics, 1) from None
    except OSError as exc:  # a read-only directory, a full disk: the old handoff is intact
        raise ServiceError(
            [
                diag(
                    "SR164",
                    f"the handoff could not be written: {exc.strerror or exc}; nothing was changed",
                    file=str(target),
                )
            ],
            1,
        ) from None
    return HandoffResult(text, target, wf.id)


def render_skill(out: Path, workflow: str, *, name: str, digest: bool = False) -> list[Path]:
    """Write the skill docs (SKILL.md and its references) of ``workflow`` under ``out``."""
    from session_resume.rendering.skill import render_skill as render

    wf = load_workflow_or_fail(workflow)
    files = render(wf, name=name, digest=digest)
    written = []
    try:
        os.makedirs(out, exist_ok=True)  # the directory the user named, as named
        # ``out`` held as its own root: a link planted below it (``references``) is followed
        # only to a directory inside it, and each file is replaced by name, never written
        # through a link.
        with HeldDir.at(out, out) as top:
            for rel, text in files.items():
                *dirs, base = PurePosixPath(rel).parts
                with top.descend(dirs, create=True) as h:
                    problem = store.write_target_problem(h, base)
                    if problem is not None:
                        raise StoreError([problem])
                    h.replace_file(base, text.encode("utf-8"))
                written.append(out / rel)
    except StoreError as exc:
        raise ServiceError(exc.diagnostics, 1) from None
    except OSError as exc:
        raise ServiceError(
            [
                diag(
                    "SR164",
                    f"the skill could not be written: {exc.strerror or exc}",
                    file=str(exc.filename or out),
                )
            ],
            1,
        ) from None
    return written


def skill_docs(workflow: str, *, digest: bool = True) -> dict[str, str]:
    """The skill docs of ``workflow`` as text (relative path → text), written nowhere: what
    the MCP server offers as resources."""
    from session_resume.rendering.skill import render_skill as render

    wf = load_workflow_or_fail(workflow)
    return render(wf, name=wf.id, digest=digest)
