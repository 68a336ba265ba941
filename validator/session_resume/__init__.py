"""session-resume: the reference toolchain of a file protocol for resumable agent workflows.

Public API (the CLI is a thin shell over these):

- :func:`validate` / :func:`validate_file` / :func:`validate_document` → :class:`FileReport`
- :func:`load_workflow` → :class:`Workflow`
- :class:`Diagnostic`, :class:`Severity`, :data:`CATALOGUE` (every code)
"""

from __future__ import annotations

__version__ = "0.1.0"

from .codes import CATALOGUE, Code  # noqa: E402
from .diagnostics import Diagnostic, FileReport, Severity  # noqa: E402
from .validate import ValidateOptions, validate, validate_document, validate_file  # noqa: E402
from .workflow import Workflow, WorkflowError, load_workflow  # noqa: E402

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
