"""Machine-readable JSON report of `validate` (its fields: docs/cli.md)."""

from __future__ import annotations

import json

from session_resume.core.diagnostics import FileReport


def report_dict(
    reports: list[FileReport], strict: bool, *, error: str | None = None
) -> dict[str, object]:
    """The report; ``error``: the run was refused (a usage error) and why."""
    files = [
        {
            "path": r.path,
            "valid": r.ok(strict),
            "schema_version": r.schema_version,
            "workflow": r.workflow,
            "diagnostics": [d.to_json() for d in r.diagnostics],
        }
        for r in reports
    ]
    bad = sum(1 for r in reports if not r.ok(strict))
    out: dict[str, object] = {
        "report_version": 1,
        "tool": "session-resume",
        "valid": bad == 0 and error is None,
        "summary": {
            "files": len(reports),
            "valid": len(reports) - bad,
            "invalid": bad,
            "errors": sum(len(r.errors()) for r in reports),
            "warnings": sum(len(r.warnings()) for r in reports),
        },
        "files": files,
    }
    if error is not None:
        out["error"] = error
    return out


def render_json(reports: list[FileReport], strict: bool, *, error: str | None = None) -> str:
    doc = report_dict(reports, strict, error=error)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
