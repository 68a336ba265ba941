"""session-resume: the reference toolchain of a file protocol for resumable agent workflows.

The public API is the service layer (every operation the CLI and the MCP server offer) and
the library functions below it. Names are imported on first use, so ``import session_resume``
(and every CLI call) stays cheap.

- files: :func:`validate`, :func:`validate_file`, :func:`validate_document` → :class:`FileReport`
- state: :func:`load`, :func:`save`, :func:`migrate` (a document), :func:`recover`
- workflows: :func:`load_workflow` → :class:`Workflow`
- write moments (each takes a :class:`WriteContext`): :func:`init_session`, :func:`start_step`,
  :func:`checkpoint`, :func:`complete_step`, :func:`skip_step`, :func:`set_decision`,
  :func:`log_decision`, :func:`add_finding`, :func:`resolve_finding`, :func:`review_audit`
  (with a :class:`ReviewAudit`), :func:`transition`, :func:`approve_gate`
- the lease: :func:`start_session`, :func:`end_session`, :func:`ping_session`
- reading: :func:`resume`, :func:`report`, :func:`budget`; maintenance: :func:`migrate_files`,
  :func:`archive`; rendering: :func:`render_handoff`, :func:`render_skill`
- refusals: :class:`ServiceError` (coded diagnostics); :class:`Diagnostic`, :class:`Severity`,
  :data:`CATALOGUE` (every code)
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False

__version__ = "0.1.0"

# name -> the module that defines it
_EXPORTS = {
    "CATALOGUE": "session_resume.core.codes",
    "Code": "session_resume.core.codes",
    "Diagnostic": "session_resume.core.diagnostics",
    "FileReport": "session_resume.core.diagnostics",
    "Severity": "session_resume.core.diagnostics",
    "Workflow": "session_resume.core.workflow",
    "WorkflowError": "session_resume.core.workflow",
    "load_workflow": "session_resume.core.workflow",
    "ValidateOptions": "session_resume.core.validation",
    "validate_document": "session_resume.core.validation",
    "validate": "session_resume.services.validation",
    "validate_file": "session_resume.services.validation",
    "migrate": "session_resume.core.migration",
    "MigrationError": "session_resume.core.migration",
    "load": "session_resume.storage.store",
    "save": "session_resume.storage.store",
    "StoreError": "session_resume.storage.store",
    "ServiceError": "session_resume.services.errors",
    "WriteContext": "session_resume.services.context",
    "init_session": "session_resume.services.writes",
    "start_step": "session_resume.services.writes",
    "checkpoint": "session_resume.services.writes",
    "complete_step": "session_resume.services.writes",
    "skip_step": "session_resume.services.writes",
    "set_decision": "session_resume.services.writes",
    "log_decision": "session_resume.services.writes",
    "add_finding": "session_resume.services.writes",
    "resolve_finding": "session_resume.services.writes",
    "review_audit": "session_resume.services.writes",
    "ReviewAudit": "session_resume.core.write_moments",
    "transition": "session_resume.services.writes",
    "approve_gate": "session_resume.services.writes",
    "start_session": "session_resume.services.leases",
    "end_session": "session_resume.services.leases",
    "ping_session": "session_resume.services.leases",
    "resume": "session_resume.services.resume",
    "report": "session_resume.services.resume",
    "budget": "session_resume.services.budget",
    "recover": "session_resume.services.maintenance",
    "archive": "session_resume.services.maintenance",
    "render_handoff": "session_resume.services.rendering",
    "render_skill": "session_resume.services.rendering",
}
# names whose defining module calls them otherwise
_ALIASES = {"migrate_files": ("session_resume.services.maintenance", "migrate")}

__all__ = [
    "approve_gate",
    "CATALOGUE",
    "Code",
    "Diagnostic",
    "FileReport",
    "MigrationError",
    "ReviewAudit",
    "ServiceError",
    "Severity",
    "StoreError",
    "ValidateOptions",
    "Workflow",
    "WorkflowError",
    "WriteContext",
    "__version__",
    "add_finding",
    "archive",
    "budget",
    "checkpoint",
    "complete_step",
    "end_session",
    "init_session",
    "load",
    "load_workflow",
    "log_decision",
    "migrate",
    "migrate_files",
    "ping_session",
    "recover",
    "render_handoff",
    "render_skill",
    "report",
    "resolve_finding",
    "resume",
    "review_audit",
    "save",
    "set_decision",
    "skip_step",
    "start_session",
    "start_step",
    "transition",
    "validate",
    "validate_document",
    "validate_file",
]

if TYPE_CHECKING:
    from typing import Any

    from session_resume.core.codes import CATALOGUE, Code
    from session_resume.core.diagnostics import Diagnostic, FileReport, Severity
    from session_resume.core.migration import MigrationError, migrate
    from session_resume.core.validation import ValidateOptions, validate_document
    from session_resume.core.workflow import Workflow, WorkflowError, load_workflow
    from session_resume.core.write_moments import ReviewAudit
    from session_resume.services.budget import budget
    from session_resume.services.context import WriteContext
    from session_resume.services.errors import ServiceError
    from session_resume.services.leases import end_session, ping_session, start_session
    from session_resume.services.maintenance import archive, recover
    from session_resume.services.maintenance import migrate as migrate_files
    from session_resume.services.rendering import render_handoff, render_skill
    from session_resume.services.resume import report, resume
    from session_resume.services.validation import validate, validate_file
    from session_resume.services.writes import (
        add_finding,
        approve_gate,
        checkpoint,
        complete_step,
        init_session,
        log_decision,
        resolve_finding,
        review_audit,
        set_decision,
        skip_step,
        start_step,
        transition,
    )
    from session_resume.storage.store import StoreError, load, save


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module, attr = _EXPORTS[name], name
    elif name in _ALIASES:
        module, attr = _ALIASES[name]
    else:
        raise AttributeError(f"module 'session_resume' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
