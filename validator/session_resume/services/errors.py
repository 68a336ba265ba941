"""The one error type of the service layer: a refusal with coded diagnostics."""

from __future__ import annotations

from session_resume.core.diagnostics import Diagnostic


class ServiceError(Exception):
    """An operation cannot run; carries coded diagnostics and the exit code a front end
    should give (1: refused on the input, 2: usage or a missing path)."""

    def __init__(self, diagnostics: list[Diagnostic], exit_code: int = 1):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics
        self.exit_code = exit_code
