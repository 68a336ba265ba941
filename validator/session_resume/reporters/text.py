"""Compiler-style text: ``file:line:col: CODE severity: message [pointer]``."""

from __future__ import annotations

import re

from session_resume.core.diagnostics import Diagnostic, FileReport
from session_resume.rendering.escape import CONTROL, clean, clean_tree, escape_char

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CONTROL",
    "SafeTextStream",
    "clean",
    "clean_lines",
    "clean_tree",
    "location",
    "render_text",
]

# C0 but newline and tab, DEL, C1, the line/paragraph separators and the bidi controls.
LINE_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]"
WORKFLOW_COMMAND = r"^(\s*):"
_escape = escape_char


def _command_start(m: re.Match[str]) -> str:
    return m.group(1) + "\\x3a"


def clean_lines(text: str) -> str:
    """Text made of lines: every control character but the newline and the tab escaped, and
    no line may start (after blanks) with ``:`` -- the start of a GitHub workflow command
    (``::error ...``) -- so output can never forge one in a CI log."""
    if not all(line.isprintable() for line in text.replace("\t", " ").split("\n")):
        text = re.sub(LINE_CONTROL, _escape, text)
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if ":" in text:
        text = re.sub(WORKFLOW_COMMAND, _command_start, text, flags=re.MULTILINE)
    return text


class SafeTextStream:
    """A text stream that passes everything written through :func:`clean_lines` (line starts
    tracked across writes): the last line of defence of every text-format command."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._bol = True  # the next character starts a line

    def write(self, text: str) -> int:
        if not text:
            return 0
        lead = "" if self._bol else "x"  # a line continued: its ':' is no line start
        out = clean_lines(lead + text)[len(lead) :]
        self._bol = text.endswith("\n")
        self._stream.write(out)
        return len(text)

    def write_styled(self, text: str) -> int:
        """Text already cleaned by the reporter, with colour escapes of our own added
        (:func:`session_resume.terminal.colorize`): written as it is."""
        self._bol = text.endswith("\n")
        self._stream.write(text)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


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
