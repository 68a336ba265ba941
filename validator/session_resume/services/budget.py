"""The budget service: what a step may load at start-up, and what it already loaded."""

from __future__ import annotations

from pathlib import Path

from session_resume.core.codes import diag
from session_resume.services.context import Reading, load_workflow_or_fail
from session_resume.services.errors import ServiceError
from session_resume.storage.store import load

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def budget(
    step: str, reading: Reading, *, session_dir: Path | None = None, project: str | None = None
) -> dict[str, Any]:
    """The step's context budget (``max_startup_files``, ``startup_files``) and the context
    files its state already records (``do_not_reread``), with SR415 when over budget. The
    session: ``session_dir``, else ``project``'s directory under the root, else none."""
    doc: dict[str, Any] = {}
    spec = reading.spec_for(None)
    if session_dir is None and project:
        pattern = load_workflow_or_fail(spec).session_dir.replace("{project}", project)
        session_dir = (reading.root or Path.cwd()) / pattern
    if session_dir is not None:
        loaded = load(session_dir, root=reading.root)
        if loaded.status == "ok" and loaded.document:
            doc = loaded.document
            spec = reading.spec_for(doc)
    wf = load_workflow_or_fail(spec)
    sdef = wf.step(step)
    if sdef is None and not wf.free_steps:
        raise ServiceError(
            [
                diag(
                    "SR711",
                    f"step {step!r} is not a step of workflow "
                    f"{wf.id!r} (steps: {', '.join(wf.step_keys)})",
                )
            ]
        )
    record = (doc.get("steps") or {}).get(step) or {}
    used = list(record.get("context_files_used") or [])
    limits = sdef.budget if sdef else None
    warnings = []
    if limits and len(used) > limits.max_startup_files:
        warnings.append("SR415")
    return {
        "step": step,
        "step_name": sdef.name if sdef else record.get("name"),
        "workflow": wf.id,
        "max_startup_files": limits.max_startup_files if limits else None,
        "startup_files": list(limits.startup_files) if limits else [],
        "do_not_reread": used,
        "warnings": warnings,
        "notes": limits.notes if limits else "",
    }
