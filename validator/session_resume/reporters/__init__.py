"""Output formats for validation reports: one table, :data:`REPORTERS`, of each format and
what it needs (imported on demand: a format's module loads only when it renders)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from session_resume.core.diagnostics import FileReport
from session_resume.records import record

Renderer = Callable[[list[FileReport], bool], str]


@record(frozen=True)
class Reporter:
    """One ``validate --format``: module ``reporters/<name>.py`` renders with
    ``render_<name>(reports, strict, ...)``, given only what the format declares it needs.

    ``needs_positions``: the diagnostics' line and column (the validator finds them only when
    asked); ``needs_root``: the repository root (paths relative to it); ``needs_docs_url``: the
    base URL of the docs pages (links per code); ``refusal``: the keyword through which the
    format reports a run refused before it checked anything (a document of its own format,
    valid against its schema; ``None``: the refusal is on stderr only); ``terminal``: written
    for a person (progress display, colour, ``--quiet``); ``step_summary``: also appends a
    Markdown summary to ``$GITHUB_STEP_SUMMARY``."""

    name: str
    needs_positions: bool = False
    needs_root: bool = False
    needs_docs_url: bool = False
    refusal: str | None = None
    terminal: bool = False
    step_summary: bool = False

    def render(
        self,
        reports: list[FileReport],
        strict: bool,
        *,
        root: Path | None = None,
        docs_url: str | None = None,
        refused: str | None = None,
    ) -> str:
        """The report in this format; ``refused``: the reason a run was refused (only for a
        format with a ``refusal``)."""
        kwargs: dict[str, object] = {}
        if self.needs_root:
            kwargs["root"] = root
        if self.needs_docs_url:
            kwargs["docs_url"] = docs_url
        if refused is not None and self.refusal is not None:
            kwargs[self.refusal] = refused
        module = importlib.import_module(f"{__name__}.{self.name}")
        text: str = getattr(module, f"render_{self.name}")(reports, strict, **kwargs)
        return text


REPORTERS: dict[str, Reporter] = {
    r.name: r
    for r in (
        Reporter("text", terminal=True),
        Reporter("json", refusal="error"),
        Reporter("github", needs_positions=True, step_summary=True),
        Reporter(
            "sarif", needs_positions=True, needs_root=True, needs_docs_url=True, refusal="failure"
        ),
    )
}
NAMES = tuple(REPORTERS)


def renderer(name: str) -> Renderer:
    """The plain ``render_<name>(reports, strict)`` of a format (its defaults for the rest)."""
    module = importlib.import_module(f"{__name__}.{name}")
    fn: Renderer = getattr(module, f"render_{name}")
    return fn
