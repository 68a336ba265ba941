"""Diagnostic types shared by every layer: a finding with a stable code, where it is, what to do."""

from __future__ import annotations

import enum
from collections.abc import Iterable

from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Severity(enum.StrEnum):
    """How bad a finding is. Errors make a file invalid; warnings do too under ``--strict``."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@record(frozen=True)
class Diagnostic:
    """One finding about one file.

    ``pointer`` is an RFC 6901 JSON pointer into the document ("" for the whole file).
    ``line`` and ``column`` are 1-based and set only for files that failed (they cost a rescan).
    """

    code: str
    severity: Severity
    message: str
    file: str = ""
    pointer: str = ""
    line: int | None = None
    column: int | None = None
    hint: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "file": self.file,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
            "hint": self.hint,
        }


@record
class FileReport:
    """Everything found about one file, plus what was learnt on the way (version, workflow)."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    schema_version: str | None = None
    workflow: str | None = None

    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]

    def ok(self, strict: bool = False) -> bool:
        if self.errors():
            return False
        return not (strict and self.warnings())

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]


def pointer_join(parts: Iterable[str | int]) -> str:
    """Build an RFC 6901 pointer from path parts."""
    out = []
    for p in parts:
        out.append(str(p).replace("~", "~0").replace("/", "~1"))
    return "".join("/" + p for p in out)


def pointer_split(pointer: str) -> list[str]:
    if not pointer:
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


class DiagnosticsError(Exception):
    """An operation was refused; ``diagnostics`` say why. Its message is their codes and
    messages (``SR… message; SR… message``). The refusals of each layer subclass it."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("; ".join(f"{d.code} {d.message}" for d in diagnostics))
        self.diagnostics = diagnostics
