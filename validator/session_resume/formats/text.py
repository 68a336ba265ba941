"""Compiler-style text: ``file:line:col: CODE severity: message [pointer]``."""

from __future__ import annotations

from ..diagnostics import Diagnostic, FileReport


def location(d: Diagnostic) -> str:
    loc = d.file or "<input>"
    if d.line is not None:
        loc += f":{d.line}"
        if d.column is not None:
            loc += f":{d.column}"
    return loc


def render_text(reports: list[FileReport], strict: bool) -> str:
    lines: list[str] = []
    n_err = n_warn = 0
    for r in reports:
        for d in r.diagnostics:
            ptr = f" [{d.pointer}]" if d.pointer else ""
            lines.append(f"{location(d)}: {d.code} {d.severity.value}: {d.message}{ptr}")
            if d.hint:
                lines.append(f"    hint: {d.hint}")
        n_err += len(r.errors())
        n_warn += len(r.warnings())
    bad = sum(1 for r in reports if not r.ok(strict))
    verdict = "invalid" if bad else "valid"
    lines.append(
        f"{len(reports)} file(s) checked: {len(reports) - bad} valid, {bad} invalid "
        f"({n_err} error(s), {n_warn} warning(s)) - {verdict}"
    )
    return "\n".join(lines) + "\n"
