"""Checks of an existing ``00-handoff.md`` (codes SR6xx).

The handoff is the human companion of the state, rendered by ``session-resume render
handoff`` (:mod:`session_resume.rendering.handoff`), never edited by hand. Its shape is fixed:
the header ``# {project} — Handoff (Step {N} complete)``, an ``Updated: {timestamp} | …`` line,
then exactly the six H2 sections of :data:`SECTIONS` in that order, at most :data:`MAX_LINES`
lines in all. :func:`check_handoff_text` is pure; reading the files is
:mod:`session_resume.storage.handoff_file`'s.
"""

from __future__ import annotations

import re
from datetime import datetime

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.timeutil import format_ts, parse_ts

HANDOFF = "00-handoff.md"
MAX_LINES = 60
MAX_HANDOFF_BYTES = 1024 * 1024
SECTIONS = (
    "Completed Steps",
    "Key Decisions",
    "Open Challenger Findings (must_fix only)",
    "Context for Next Step",
    "Skill Context",
    "Artifacts",
)

# Matched one line at a time; as text, compiled (and cached) by `re` on first use: every
# write imports this module for HANDOFF, few check a handoff.
HEADER = r"^# (?P<project>.+) — Handoff \(Step (?P<step>\S+) complete\)$"
UPDATED = r"^Updated: (?P<ts>\S+)(?: \| .*)?$"
_H2 = r"^## (?P<title>.*?)\s*#*\s*$"
_FENCE = r"^ {0,3}(```|~~~)"


def handoff_lines(text: str) -> list[str]:
    """The lines of a handoff as the line limit counts them (every Unicode line break)."""
    return text.splitlines()


def check_handoff_text(
    text: str,
    *,
    file: str = "",
    state_updated: datetime | None = None,
    project: str | None = None,
) -> list[Diagnostic]:
    """Check a handoff's text. ``state_updated``: the ``updated`` of the state it describes
    (None skips the staleness rule); ``project``: the state's project (None skips SR607)."""

    out: list[Diagnostic] = []
    lines = handoff_lines(text)
    if len(lines) > MAX_LINES:
        out.append(
            diag(
                "SR605",
                f"the handoff has {len(lines)} lines; at most {MAX_LINES} are allowed",
                file=file,
                line=MAX_LINES + 1,
                column=1,
            )
        )
    content = [(i, ln) for i, ln in enumerate(lines, start=1) if ln.strip()]
    out += _header_problems(content, file=file, project=project)
    updated_line = content[1] if len(content) > 1 else None
    updated_at, problem = _updated_of(updated_line, file=file)
    if problem is not None:
        out.append(problem)
    out += _section_problems(lines, file=file)
    if updated_at is not None and state_updated is not None and updated_at < state_updated:
        out.append(
            diag(
                "SR606",
                f"the handoff was updated at {format_ts(updated_at)}, before the state it "
                f"describes ({format_ts(state_updated)})",
                file=file,
                line=updated_line[0] if updated_line else None,
                column=1,
            )
        )
    return out


def _header_problems(
    content: list[tuple[int, str]], *, file: str, project: str | None
) -> list[Diagnostic]:
    """SR601 for a first line that is not the header, SR607 for a header naming another
    project. ``content``: the non-blank lines with their numbers."""

    header = re.match(HEADER, content[0][1]) if content else None
    if header is None:
        return [
            diag(
                "SR601",
                "the first line is not the header `# {project} — Handoff (Step {N} complete)`",
                file=file,
                line=content[0][0] if content else 1,
                column=1,
            )
        ]
    # lazy: escaping (unicodedata) for a handoff header only, not every write using HANDOFF
    from session_resume.core.markdown_escape import md_inline

    if project is not None and header.group("project") != md_inline(project):
        return [
            diag(
                "SR607",
                f"the header names project {header.group('project')!r}, the state {project!r}",
                file=file,
                line=content[0][0],
                column=3,
            )
        ]
    return []


def _updated_of(
    updated_line: tuple[int, str] | None, *, file: str
) -> tuple[datetime | None, Diagnostic | None]:
    """The time of the ``Updated:`` line (the second non-blank line), or SR601."""

    m = re.match(UPDATED, updated_line[1]) if updated_line else None
    if m is None or parse_ts(m.group("ts")) is None:
        return None, diag(
            "SR601",
            "the line after the header is not `Updated: {RFC 3339 UTC timestamp} | …`",
            file=file,
            line=updated_line[0] if updated_line else None,
            column=1 if updated_line else None,
        )
    return parse_ts(m.group("ts")), None


def _h2_headings(lines: list[str]) -> list[tuple[int, str]]:
    """The ``## `` headings outside code fences: (line number, title)."""
    found: list[tuple[int, str]] = []
    in_fence = False
    for i, ln in enumerate(lines, start=1):
        if re.match(_FENCE, ln):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        h = re.match(_H2, ln)
        if h:
            found.append((i, h.group("title")))
    return found


def _section_problems(lines: list[str], *, file: str) -> list[Diagnostic]:
    """SR602 (missing), SR603 (twice, out of order), SR604 (unexpected) for the sections."""
    out: list[Diagnostic] = []
    found = _h2_headings(lines)
    titles = [t for _, t in found]
    for i, title in found:
        if title not in SECTIONS:
            out.append(
                diag(
                    "SR604",
                    f"unexpected section `## {title}`; the handoff has exactly the six "
                    "sections of the protocol",
                    file=file,
                    line=i,
                    column=1,
                )
            )
    for name in SECTIONS:
        if name not in titles:
            out.append(diag("SR602", f"the section `## {name}` is missing", file=file))
    known = [(i, t) for i, t in found if t in SECTIONS]
    seen: set[str] = set()
    for i, t in known:
        if t in seen:
            out.append(
                diag("SR603", f"the section `## {t}` appears twice", file=file, line=i, column=1)
            )
        seen.add(t)
    expected = [t for t in SECTIONS if t in seen]
    actual = list(dict.fromkeys(t for _, t in known))
    if actual != expected:
        first_bad = next(k for k, (a, e) in enumerate(zip(actual, expected, strict=True)) if a != e)
        line_no = next(i for i, t in known if t == actual[first_bad])
        out.append(
            diag(
                "SR603",
                f"the sections are out of order: `## {actual[first_bad]}` where "
                f"`## {expected[first_bad]}` belongs (order: {', '.join(SECTIONS)})",
                file=file,
                line=line_no,
                column=1,
            )
        )
    return out
