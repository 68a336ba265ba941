"""Which diagnostics a run reports: `select`, `ignore` and `per-file-ignores`, as ruff's.

A selector is a code (`SR301`) or a prefix of codes (`SR3`, `SR`), or `ALL`. A diagnostic is
reported when its code starts with a selected prefix (every code when nothing is selected)
and with no ignored one. Read errors (SR1xx) are always reported: a file that cannot be read
is never called valid.
"""

from __future__ import annotations

import re

from session_resume.core.diagnostics import Diagnostic, FileReport
from session_resume.records import record

ALWAYS = "SR1"  # read and parse errors


@record(frozen=True)
class Selection:
    select: tuple[str, ...] | None = None  # None: every code
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def everything(self) -> bool:
        return (
            (self.select is None or "ALL" in self.select)
            and not self.ignore
            and not self.per_file_ignores
        )


def _matches(code: str, selectors: tuple[str, ...]) -> bool:
    return any(s == "ALL" or code.startswith(s) for s in selectors)


def glob_regex(glob: str) -> re.Pattern[str]:
    """A path glob: `**` any number of directories, `*` and `?` within one."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


def kept(d: Diagnostic, selection: Selection, path: str | None) -> bool:
    """Whether ``d`` (of the file at repository-relative ``path``) is reported."""
    if d.code.startswith(ALWAYS):
        return True
    if selection.select is not None and not _matches(d.code, selection.select):
        return False
    if _matches(d.code, selection.ignore):
        return False
    if path is not None:
        for glob, codes in selection.per_file_ignores:
            if glob_regex(glob).fullmatch(path) and _matches(d.code, codes):
                return False
    return True


def apply(reports: list[FileReport], selection: Selection, rel: dict[str, str | None]) -> None:
    """Drop, in place, the diagnostics ``selection`` does not report; ``rel`` maps a report's
    path to the path per-file globs match (relative to the repository root)."""
    if selection.everything:
        return
    for r in reports:
        r.diagnostics = [d for d in r.diagnostics if kept(d, selection, rel.get(r.path))]
