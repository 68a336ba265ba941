"""At most :data:`MAX_PER_CODE` findings of one code per file, and one finding that counts
the rest: a 0.9 MB state held 140,000 findings (an absolute path per artifact) and took 10 to
60 s to print (issue 25). Every format (text, json, github, sarif) renders the one capped list,
so the cap and the count are the same in each (docs/security.md §6)."""

from __future__ import annotations

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, Severity

MAX_PER_CODE = 100


def count_finding(code: str, rest: int, severity: Severity, file: str) -> Diagnostic:
    """The finding that stands for ``rest`` more of ``code``: the same code and severity, so
    the verdict and the exit code are what the whole list would give."""
    return diag(
        code,
        f"{rest:,} more {code} finding(s) in this file, not listed (only the first "
        f"{MAX_PER_CODE} of each code are)",
        file=file,
        severity=severity,
        hint=f"fix the {MAX_PER_CODE} listed, then validate again to see the next",
    )


class Findings(list[Diagnostic]):
    """A list of findings that keeps the first :data:`MAX_PER_CODE` of each code and counts
    the rest; :meth:`room` lets a rule skip building a finding that would not be listed."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        self.severities: dict[str, Severity] = {}

    def append(self, d: Diagnostic) -> None:
        n = self.counts.get(d.code, 0)
        self.counts[d.code] = n + 1
        if n < MAX_PER_CODE:
            self.severities.setdefault(d.code, d.severity)
            super().append(d)

    def extend(self, ds: object) -> None:
        for d in ds:  # type: ignore[attr-defined]
            self.append(d)

    def room(self, code: str) -> bool:
        """Whether a finding of ``code`` would be listed; if not, it is counted here."""
        n = self.counts.get(code, 0)
        if n < MAX_PER_CODE:
            return True
        self.counts[code] = n + 1
        return False

    def listed(self, file: str) -> list[Diagnostic]:
        """The findings kept, each capped code followed by its count."""
        out: list[Diagnostic] = []
        for d in self:
            out.append(d)
        for code, n in self.counts.items():
            if n > MAX_PER_CODE:
                sev = self.severities.get(code, Severity.ERROR)
                out.append(count_finding(code, n - MAX_PER_CODE, sev, file))
        return out


def capped(diagnostics: list[Diagnostic], file: str) -> list[Diagnostic]:
    """``diagnostics`` with at most :data:`MAX_PER_CODE` of each code, in their order; a code
    that had more is followed (after the last listed one) by one finding counting the rest."""
    counts: dict[str, int] = {}
    for d in diagnostics:
        counts[d.code] = counts.get(d.code, 0) + 1
    # one over the cap is left as it is: the reader and the rules count their own rest in a
    # 101st finding (core.jsonread), which this must not count again
    if all(n <= MAX_PER_CODE + 1 for n in counts.values()):
        return diagnostics
    kept: list[Diagnostic] = []
    listed: dict[str, int] = {}
    for d in diagnostics:
        n = listed.get(d.code, 0)
        listed[d.code] = n + 1
        if n < MAX_PER_CODE or counts[d.code] <= MAX_PER_CODE + 1:
            kept.append(d)
        if n + 1 == MAX_PER_CODE and counts[d.code] > MAX_PER_CODE + 1:
            kept.append(count_finding(d.code, counts[d.code] - MAX_PER_CODE, d.severity, file))
    return kept
