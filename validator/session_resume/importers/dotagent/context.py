"""What the parts of one dotagent mapping share (pure): the source, the clock, the notes and
events collected so far, the paths kept under ``x-legacy``."""

from __future__ import annotations

import posixpath
from datetime import datetime

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.timeutil import format_ts
from session_resume.importers.common import ImportEvent, Timestamps, repo_path
from session_resume.importers.dotagent.source import SOURCE, DotagentSource
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record
class MapContext:
    """One mapping in progress. ``current``/``status``: the checked ``current_phase`` and
    ``phase_status``; ``notes`` and ``events`` grow as the parts run, in the order they ran."""

    src: DotagentSource
    now: datetime
    clock: Timestamps
    current: str
    status: str
    notes: list[Diagnostic]
    workflow_id: str | None = None
    sid: str = ""
    started_at: str | None = None
    last_updated: str | None = None
    events: list[ImportEvent] = field(default_factory=list)
    legacy_paths: list[dict[str, Any]] = field(default_factory=list)

    @property
    def now_ts(self) -> str:
        return format_ts(self.now)

    @property
    def f_phase(self) -> str:
        return posixpath.join(self.src.dir, self.src.state_dir, "phase.json")

    @property
    def f_exec(self) -> str:
        return posixpath.join(self.src.dir, self.src.state_dir, "execution.json")

    @property
    def running(self) -> bool:
        """The current phase was started (in progress or failed)."""
        return self.status in ("in_progress", "failed")

    def base(self) -> dict[str, Any]:
        """The detail every synthesized event starts from."""
        return {"source": SOURCE, "synthesized": True}

    def artifact(self, rel: str | None, why: str) -> str | None:
        """The repository path of a memory-relative file; one outside the repository is kept
        under x-legacy (SR812) and None is returned."""
        if rel is None:
            return None
        repo = repo_path(self.src.repo_prefix, rel)
        if repo is None:
            self.legacy_paths.append({"path": rel, "why": why, "code": "SR812"})
            self.notes.append(
                diag(
                    "SR812",
                    f"{rel} ({why}) is outside the repository; it is kept under x-legacy",
                    file=self.f_phase,
                )
            )
        return repo
