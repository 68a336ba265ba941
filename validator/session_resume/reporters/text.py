"""Compiler-style text: ``file:line:col: CODE severity: message [pointer]``."""

from __future__ import annotations

import re

from session_resume.core.diagnostics import Diagnostic, FileReport

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def clean(text: str) -> str:
    """One printable line: values from untrusted files (keys, paths) must not start a new
    line (a forged `::error` command in a CI log) or carry terminal escape sequences. Lone
    surrogates are escaped too, so printing never fails."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def location(d: Diagnostic) -> str:
    loc = clean(d.file) if d.file else "<input>"
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
            ptr = f" [{clean(d.pointer)}]" if d.pointer else ""
            lines.append(f"{location(d)}: {d.code} {d.severity.value}: {clean(d.message)}{ptr}")
            if d.hint:
                lines.append(f"    hint: {clean(d.hint)}")
        n_err += len(r.errors())
        n_warn += len(r.warnings())
    bad = sum(1 for r in reports if not r.ok(strict))
    verdict = "invalid" if bad else "valid"
    lines.append(
        f"{len(reports)} file(s) checked: {len(reports) - bad} valid, {bad} invalid "
        f"({n_err} error(s), {n_warn} warning(s)) - {verdict}"
    )
    return "\n".join(lines) + "\n"
