"""Which diagnostics a run reports: `select`, `ignore` and `per-file-ignores`, as ruff's.

A selector is a code (`SR301`) or a prefix of codes (`SR3`, `SR`), or `ALL`. A diagnostic is
reported when its code starts with a selected prefix (every code when nothing is selected)
and with no ignored one. Read errors (SR1xx) are always reported: a file that cannot be read
is never called valid.
"""

from __future__ import annotations

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


class PathGlob:
    """A path glob: ``**/`` any number of directories, ``**`` anything, ``*`` and ``?``
    within one directory, every other character itself. Matched in one pass over the path
    that carries the set of pattern positions still alive (a bit mask), so nothing ever
    backtracks: the time is the path's length times the pattern's length in machine words,
    whatever the pattern (``**a**a**a…**c`` made the regular expression this replaced
    backtrack for hours on a 40-character path). Runs of stars collapse as they would match
    (``**`` after ``*`` is ``**``; ``**/`` after ``**`` or ``**/`` adds nothing)."""

    __slots__ = ("_accept", "_lit", "_one", "_seg", "_any", "_skip")

    def __init__(self, glob: str) -> None:
        lit: dict[str, int] = {}
        one = seg = any_ = skip = 0  # `?`; `*`; `**`; `**/`'s entry (its `**`, its `/` after)
        pos = 0  # the next token's position
        last = ""  # the kind of the last token: "*", "**", "**/" or ""
        i = 0
        while i < len(glob):
            if glob.startswith("**/", i):
                i += 3
                if last in ("**", "**/"):
                    continue  # `.*` or `(?:.*/)?` already matches what it adds
                # an entry position that matches nothing: on to the `**` or past the `/`
                skip |= 1 << pos
                any_ |= 1 << (pos + 1)
                lit["/"] = lit.get("/", 0) | 1 << (pos + 2)
                pos += 3
                last = "**/"
            elif glob[i] == "*":
                double = glob.startswith("**", i)
                i += 2 if double else 1
                if last == "**":
                    continue
                if last == "*":  # `*` then `**`: one `**`
                    if double:
                        seg &= ~(1 << (pos - 1))
                        any_ |= 1 << (pos - 1)
                        last = "**"
                    continue
                if double:
                    any_ |= 1 << pos
                else:
                    seg |= 1 << pos
                pos += 1
                last = "**" if double else "*"
            else:
                bit = 1 << pos
                if glob[i] == "?":
                    one |= bit
                else:
                    lit[glob[i]] = lit.get(glob[i], 0) | bit
                pos += 1
                i += 1
                last = ""
        self._accept = 1 << pos
        self._lit, self._one, self._seg, self._any, self._skip = lit, one, seg, any_, skip

    def _closure(self, alive: int) -> int:
        """``alive`` with every position a star or a ``**/`` lets through without a
        character (a few rounds: runs of stars are collapsed)."""
        onward = self._seg | self._any | self._skip
        while True:
            more = alive | (alive & onward) << 1 | (alive & self._skip) << 3
            if more == alive:
                return alive
            alive = more

    def fullmatch(self, path: str) -> bool:
        alive = self._closure(1)
        lit, one, seg, any_ = self._lit, self._one, self._seg, self._any
        for ch in path:
            if ch == "/":
                step = (alive & lit.get(ch, 0)) << 1 | (alive & any_)
            else:
                step = (alive & (lit.get(ch, 0) | one)) << 1 | (alive & (seg | any_))
            if not step:
                return False
            alive = self._closure(step)
        return bool(alive & self._accept)


def glob_regex(glob: str) -> PathGlob:
    """The compiled glob (:class:`PathGlob`; its ``fullmatch(path)`` says whether it
    matches). Kept under its old name: it was a regular expression."""
    return PathGlob(glob)


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
