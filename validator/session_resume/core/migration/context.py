"""What every migration step shares: the context (clock, workflow, coded notes, the
``x-legacy`` aside), the result, and the error."""

from __future__ import annotations

from datetime import datetime

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, DiagnosticsError
from session_resume.core.workflow import Workflow
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LEGACY = "x-legacy"


class MigrationError(DiagnosticsError):
    """A refusal of a migration; ``diagnostics`` say why."""


@record
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
        if _longest_list(self.original) > PATCH_LIST_LIMIT or _longest_list(self.document) > (
            PATCH_LIST_LIMIT
        ):
            return linear_patch(self.original, self.document)
        # lazy: only a dry run shows a patch
        import jsonpatch

        ops: list[dict[str, Any]] = jsonpatch.make_patch(self.original, self.document).patch
        return ops


# jsonpatch's array diff inserts into Python lists one item at a time: quadratic (64,000
# findings took seconds; docs/security.md §6). Longer lists take the linear diff below.
PATCH_LIST_LIMIT = 1000


def _longest_list(value: Any) -> int:
    longest, stack = 0, [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            longest = max(longest, len(v))
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return longest


def linear_patch(a: Any, b: Any) -> list[dict[str, Any]]:
    """An RFC 6902 patch from ``a`` to ``b`` in linear time (add, remove, replace only): objects
    key by key, arrays of one length index by index, anything else replaced whole."""
    ops: list[dict[str, Any]] = []
    stack: list[tuple[Any, Any, str]] = [(a, b, "")]
    while stack:
        x, y, path = stack.pop()
        if isinstance(x, dict) and isinstance(y, dict):
            for k in x:
                if k not in y:
                    ops.append({"op": "remove", "path": f"{path}/{_escape(k)}"})
            for k, v in y.items():
                if k not in x:
                    ops.append({"op": "add", "path": f"{path}/{_escape(k)}", "value": v})
                elif not _same(x[k], v):
                    stack.append((x[k], v, f"{path}/{_escape(k)}"))
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            stack.extend(
                (p, q, f"{path}/{i}")
                for i, (p, q) in enumerate(zip(x, y, strict=True))
                if not _same(p, q)
            )
        elif not _same(x, y):
            ops.append({"op": "replace", "path": path, "value": y})
    return ops


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _same(x: Any, y: Any) -> bool:
    """Equal as JSON values (``1`` and ``true`` differ, ``1`` and ``1.0`` do not)."""
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same(v, y[k]) for k, v in x.items())
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(map(_same, x, y))
    if isinstance(x, bool) or isinstance(y, bool):
        return type(x) is type(y) and x == y
    return not isinstance(x, dict | list) and not isinstance(y, dict | list) and x == y


@record
class MigrationContext:
    now: datetime
    workflow: Workflow | None
    project_hint: str | None
    from_version: str
    file: str
    notes: list[Diagnostic] = field(default_factory=list)
    salvage: bool = False  # resolve contradictions instead of refusing (docs/spec.md §9.4)
    # The session directory relative to the repository root (POSIX; None: unknown), against
    # which a 1.0 or 2.0 state's bare artifact names are resolved (docs/spec.md §9.2 rule 8.8).
    session_dir: str | None = None

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
