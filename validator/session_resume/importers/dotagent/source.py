"""The parsed dotagent checkpoint (:class:`DotagentSource`), its file facts, and the paths it
names (pure)."""

from __future__ import annotations

import posixpath
import re

from session_resume.importers.common import under
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOURCE = "dotagent"
PHASES = ("REQUIREMENTS", "ARCHITECTURE", "IMPLEMENTATION", "VERIFICATION", "REFLECTION")
PHASE_STATUSES = ("pending", "in_progress", "complete", "failed")
RUNNING = ("running", "in_progress")
TASK_DONE = ("pre_complete", "verified", "complete", "completed", "done")
PHASE_FILE = "state/phase.json"
EXECUTION_FILE = "state/execution.json"
ARCHIVE_DIR = "state/.archive"
DEMAND = "reports/demand.json"
FINAL_DESIGN = "reports/final_design.json"
DESIGNS = "reports/designs"
VERIFICATION = ("reports/verification.json", "verification.json")
REFLECTIONS = "reflections"
MEMORY = "memory"
# The step of the ``dotagent`` workflow each phase becomes.
STEP_KEY = {p: str(i + 1) for i, p in enumerate(PHASES)}


@record(frozen=True)
class FileFacts:
    """What is known about a file the checkpoint names (read by :func:`read_source`)."""

    mtime: float | None = None  # None: missing
    json_ok: bool = False
    value: Any = None  # the parsed JSON of task outputs


@record(frozen=True)
class ArchiveEntry:
    name: str
    workflow_id: str | None
    last_updated: str | None
    files: tuple[str, ...]


@record
class DotagentSource:
    """The parsed checkpoint. Paths in ``facts``, ``designs`` and ``reflections`` are relative
    to the memory directory; ``repo_prefix`` is the memory directory's repository-relative
    path (None when it is outside the repository)."""

    dir: str
    phase: dict[str, Any]
    execution: dict[str, Any] | None = None
    facts: dict[str, FileFacts] = field(default_factory=dict)
    designs: list[str] = field(default_factory=list)
    reflections: list[str] = field(default_factory=list)
    archives: list[ArchiveEntry] = field(default_factory=list)
    temp_files: list[str] = field(default_factory=list)
    repo_prefix: str | None = ""
    from_archive: str | None = None

    @property
    def state_dir(self) -> str:
        return f"{ARCHIVE_DIR}/{self.from_archive}" if self.from_archive else "state"

    def resolve(self, rel: str | None) -> str | None:
        """An archived workflow's own state files are in its archive folder."""
        if self.from_archive and rel in ("state/execution.json", "state/phase.json"):
            return f"{self.state_dir}/{posixpath.basename(rel)}"
        return rel

    def fact(self, rel: str | None) -> FileFacts:
        return self.facts.get(self.resolve(rel) or "", FileFacts())


def memory_relative(path: Any, memory_dir: str) -> str | None:
    """A path as the checkpoint writes it (``memory/reports/demand.json``, from the project
    root) relative to the memory directory; None when it points elsewhere."""
    if not isinstance(path, str) or not path.strip() or "\0" in path:
        return None
    p = path.strip().replace("\\", "/")
    if p.startswith("/"):
        rel = under(p, memory_dir)
        return rel if rel not in (None, ".") else None
    norm = posixpath.normpath(p)
    head, _, rest = norm.partition("/")
    if head in (MEMORY, posixpath.basename(memory_dir)) and rest:
        norm = rest
    if norm in (".", "") or norm == ".." or norm.startswith("../"):
        return None
    return norm


def task_output(task: dict[str, Any], memory_dir: str) -> str | None:
    for k in ("output_path", "output", "output_file"):
        rel = memory_relative(task.get(k), memory_dir)
        if rel is not None:
            return rel
    ident = task.get("id")
    if isinstance(ident, str) and re.match(r"^[A-Za-z0-9._-]+\Z", ident):
        return f"tasks/{ident}/output.json"
    return None
