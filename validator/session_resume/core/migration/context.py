"""What every migration step shares: the context (clock, workflow, coded notes, the
``x-legacy`` aside), the result, and the error."""

from __future__ import annotations

from datetime import datetime

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.workflow import Workflow
from session_resume.records import dataclass, field

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any

LEGACY = "x-legacy"


class MigrationError(Exception):
    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("; ".join(f"{d.code} {d.message}" for d in diagnostics))
        self.diagnostics = diagnostics


@dataclass
class MigrationResult:
    """The migrated document and what happened to it."""

    original: dict[str, Any]
    document: dict[str, Any]
    from_version: str
    to_version: str
    steps: list[str] = field(default_factory=list)
    notes: list[Diagnostic] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.document != self.original

    def patch(self) -> list[dict[str, Any]]:
        """RFC 6902 JSON Patch from the original to the migrated document."""
        # lazy: only a dry run shows a patch
        import jsonpatch

        ops: list[dict[str, Any]] = jsonpatch.make_patch(self.original, self.document).patch
        return ops


@dataclass
class MigrationContext:
    now: datetime
    workflow: Workflow | None
    project_hint: str | None
    from_version: str
    file: str
    notes: list[Diagnostic] = field(default_factory=list)
    salvage: bool = False  # resolve contradictions instead of refusing (docs/spec.md §9.4)

    def note(self, message: str, pointer: str = "") -> None:
        self.notes.append(diag("SR150", message, file=self.file, pointer=pointer))

    def aside(self, doc: dict[str, Any], key: str, value: Any, why: str, pointer: str = "") -> None:
        """Keep a value that 3.0 has no place for under ``x-legacy`` (SR151)."""
        legacy = doc.setdefault(LEGACY, {})
        if key in legacy and legacy[key] != value:
            n = 2
            while f"{key}_{n}" in legacy:
                n += 1
            key = f"{key}_{n}"
        legacy[key] = value
        self.notes.append(
            diag("SR151", f"{why}; kept as {LEGACY}.{key}", file=self.file, pointer=pointer)
        )
