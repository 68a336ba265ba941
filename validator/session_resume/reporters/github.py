"""GitHub Actions workflow commands (annotations); the step summary is written by the CLI."""

from __future__ import annotations

import os
import re

from session_resume.core.diagnostics import FileReport, Severity
from session_resume.reporters.text import clean

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _annotated(file: str) -> str:
    """The path an annotation names: absolute, since the runner makes a path inside
    GITHUB_WORKSPACE relative to it but reads any relative path from the repository root
    (wrong for `../x` from a subdirectory); standard input's name stays as it is."""
    if not file or file == "<stdin>":
        return file
    return os.path.abspath(file)


def render_github(reports: list[FileReport], strict: bool) -> str:
    lines = []
    for r in reports:
        for d in r.diagnostics:
            props = [f"file={_escape_prop(_annotated(d.file))}"]
            if d.line is not None:
                props.append(f"line={d.line}")
            if d.column is not None:
                props.append(f"col={d.column}")
            props.append(f"title={_escape_prop(d.code)}")
            msg = d.message + (f" ({d.pointer})" if d.pointer else "")
            if d.hint:
                msg += f"\nhint: {d.hint}"
            lines.append(f"::{_LEVEL[d.severity]} {','.join(props)}::{_escape_data(msg)}")
    return "\n".join(lines) + ("\n" if lines else "")


# The ASCII punctuation that means something inline in GitHub Flavored Markdown (a table cell
# holds inline content only): a backslash before ASCII punctuation always makes it a literal.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>!|~&$])")


def table_cell(text: str) -> str:
    """One cell of a GFM table: on one line (control characters, newlines included, are
    written as ``\\xNN``), with every Markdown special character, ``|`` above all, escaped,
    so a hostile path or message can neither add a column or a row nor inject markup."""
    return _MD_SPECIAL.sub(r"\\\1", clean(text))


def step_summary(reports: list[FileReport], strict: bool) -> str:
    """Markdown for $GITHUB_STEP_SUMMARY."""
    bad = sum(1 for r in reports if not r.ok(strict))
    out = [
        "## session-resume validate",
        "",
        f"{len(reports)} file(s): {len(reports) - bad} valid, {bad} invalid",
        "",
    ]
    rows = [(r.path, d) for r in reports for d in r.diagnostics]
    if rows:
        out += ["| file | line | code | severity | message |", "| --- | --- | --- | --- | --- |"]
        for path, d in rows[:200]:
            cells = [path, str(d.line or ""), d.code, d.severity.value, d.message]
            out.append("| " + " | ".join(table_cell(c) for c in cells) + " |")
    return "\n".join(out) + "\n"
