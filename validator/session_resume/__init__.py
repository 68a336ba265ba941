"""session-resume: the reference toolchain of a file protocol for resumable agent workflows.

Public API (the CLI is a thin shell over these):

- :func:`validate` / :func:`validate_file` / :func:`validate_document` → :class:`FileReport`
- :func:`load_workflow` → :class:`Workflow`
- :class:`Diagnostic`, :class:`Severity`, :data:`CATALOGUE` (every code)
"""

from __future__ import annotations

__version__ = "0.1.0"

from session_resume.core.codes import CATALOGUE, Code  # noqa: E402
from session_resume.core.diagnostics import Diagnostic, FileReport, Severity  # noqa: E402
from session_resume.core.workflow import Workflow, WorkflowError, load_workflow  # noqa: E402
from session_resume.services.validation import (  # noqa: E402
    ValidateOptions,
    validate,
    validate_document,
    validate_file,
)

__all__ = [
    "CATALOGUE",
    "Code",
    "Diagnostic",
    "FileReport",
    "Severity",
    "ValidateOptions",
    "Workflow",
    "WorkflowError",
    "__version__",
    "load_workflow",
    "validate",
    "validate_document",
    "validate_file",
]
