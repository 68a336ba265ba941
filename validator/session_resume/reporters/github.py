"""GitHub Actions workflow commands (annotations); the step summary is written by the CLI."""

from __future__ import annotations

from session_resume.core.diagnostics import FileReport, Severity

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render_github(reports: list[FileReport], strict: bool) -> str:
    lines = []
    for r in reports:
        for d in r.diagnostics:
            props = [f"file={_escape_prop(d.file)}"]
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
            msg = d.message.replace("|", "\\|").replace("\n", " ")
            out.append(f"| `{path}` | {d.line or ''} | {d.code} | {d.severity.value} | {msg} |")
    return "\n".join(out) + "\n"
