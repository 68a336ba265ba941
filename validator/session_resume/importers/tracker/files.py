"""The tracker's file inventory → artifacts and context files (pure).

Paths relative to the tracker's project root (relative keys, and absolute ones under it or
under v2.1's hard-coded ``/home/z/my-project``) become repository-relative; one file under
several keys is one file (SR811); a file outside is kept under x-legacy (SR812).
``working``/``completed`` files are their step's artifacts, ``reading`` ones its context
files; files still ``working``/``reading`` are reported as possibly incomplete.
"""

from __future__ import annotations

import posixpath

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.importers.common import repo_path, under
from session_resume.importers.tracker.history import History
from session_resume.importers.tracker.source import DEFAULT_PROJECT_ROOT, TrackerSource, ident_of
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# repository path → the inventory entries naming it: (key, status, purpose)
Groups = dict[str, list[tuple[str, str, str | None]]]


def file_inventory(
    src: TrackerSource,
    steps: dict[str, Any],
    keys: list[str],
    id_key: dict[str, str],
    hist: History,
    notes: list[Diagnostic],
    f_state: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Inventory → artifacts / context files; returns (possibly incomplete, outside repo)."""
    paths = _Paths.of(src)
    groups, outside = _inventory(src, paths, notes, f_state)
    todo_files: dict[str, list[str]] = {}
    for item, key in zip(src.todo, keys, strict=True):
        for f in item.get("files") or []:
            repo = paths.repo(f)
            if repo is not None:
                todo_files.setdefault(key, []).append(repo)
    evidence = _Evidence.of(hist, paths, id_key, todo_files)
    possibly = _assign(src, steps, keys, id_key, groups, todo_files, evidence)
    for o in outside:
        if o["status"] in ("working", "reading"):
            possibly.append({"path": o["key"], "status": o["status"], "step": None, "keys": []})
    return possibly, outside


@record
class _Paths:
    """Where the tracker's paths point: its project root, and v2.1's hard-coded one."""

    project_root: str
    repo_prefix: str | None
    anchors: list[str]

    @classmethod
    def of(cls, src: TrackerSource) -> _Paths:
        anchors = [src.project_root]
        if posixpath.normpath(src.project_root) != DEFAULT_PROJECT_ROOT:
            anchors.append(DEFAULT_PROJECT_ROOT)
        return cls(src.project_root, src.repo_prefix, anchors)

    def locate(self, key: Any) -> str | None:
        """A tracker path relative to its project root, or None."""
        if not isinstance(key, str) or not key or "\0" in key:
            return None
        if key.startswith("/"):
            for a in self.anchors:
                rel = under(key, a)
                if rel not in (None, "."):
                    return rel
            return None
        rel = posixpath.normpath(key)
        if rel == ".." or rel.startswith("../"):
            return self.locate(posixpath.normpath(posixpath.join(self.project_root, key)))
        return None if rel == "." else rel

    def repo(self, key: Any) -> str | None:
        """A tracker path as a repository path, or None (outside the root or repository)."""
        rel = self.locate(key)
        return repo_path(self.repo_prefix, rel) if rel is not None else None


def _inventory(
    src: TrackerSource, paths: _Paths, notes: list[Diagnostic], f_state: str
) -> tuple[Groups, list[dict[str, Any]]]:
    """The inventory's entries by repository path (SR811 for a path under several keys), and
    the ones outside (SR812)."""
    inventory = src.state.get("files")
    if not isinstance(inventory, dict):
        inventory = {}
    groups: Groups = {}
    outside: list[dict[str, Any]] = []
    for key, info in inventory.items():
        info = info if isinstance(info, dict) else {}
        raw_status = info.get("status")
        status: str = raw_status if isinstance(raw_status, str) else "working"
        raw_purpose = info.get("purpose")
        purpose: str | None = raw_purpose if isinstance(raw_purpose, str) else None
        repo = paths.repo(key)
        if repo is None:
            outside.append({"key": key, "status": status, "code": "SR812"})
            notes.append(
                diag(
                    "SR812",
                    f"file {key!r} is outside the tracker's project root "
                    f"({src.project_root}) or the repository; it is not an artifact and is "
                    "kept under x-legacy",
                    file=f_state,
                    pointer="/files",
                )
            )
            continue
        groups.setdefault(repo, []).append((key, status, purpose))
    for repo, entries in groups.items():
        if len(entries) > 1:
            notes.append(
                diag(
                    "SR811",
                    f"{repo} is in the inventory under {len(entries)} keys ("
                    + ", ".join(repr(e[0]) for e in entries)
                    + "); they are one file",
                    file=f_state,
                    pointer="/files",
                )
            )
    return groups, outside


@record
class _Evidence:
    """What the worklog says about each file: its latest status, the first step it was
    seen with, whether it was written (``file --working``) or read (``file --reading``)."""

    paths: _Paths
    id_key: dict[str, str]
    status: dict[str, str] = field(default_factory=dict)
    first_step: dict[str, str] = field(default_factory=dict)
    written: set[str] = field(default_factory=set)
    read: set[str] = field(default_factory=set)

    @classmethod
    def of(
        cls,
        hist: History,
        paths: _Paths,
        id_key: dict[str, str],
        todo_files: dict[str, list[str]],
    ) -> _Evidence:
        ev = cls(paths, id_key)
        for _ts, step_id, what, value in hist.file_events:
            if what == "declared":  # step --start --files: being worked on, read or written
                ev.note(value, "working", step_id)
            elif what == "step_done":
                for repo in todo_files.get(id_key.get(value, ""), []):
                    ev.status[repo] = "completed"
            elif what == "rename":
                old, new = value
                old_repo = paths.repo(old)
                if old_repo is not None and old_repo in ev.status:
                    ev.note(new, ev.status.pop(old_repo), step_id)
            else:
                ev.note(value, what, step_id, explicit=True)
        return ev

    def note(self, path: Any, status: str, step_id: str | None, *, explicit: bool = False) -> None:
        repo = self.paths.repo(path)
        if repo is None:
            return
        self.status[repo] = status
        if explicit and status == "working":
            self.written.add(repo)
        if status == "reading":
            self.read.add(repo)
        key = self.id_key.get(step_id or "")
        if key is not None:
            self.first_step.setdefault(repo, key)


def _assign(
    src: TrackerSource,
    steps: dict[str, Any],
    keys: list[str],
    id_key: dict[str, str],
    groups: Groups,
    todo_files: dict[str, list[str]],
    evidence: _Evidence,
) -> list[dict[str, Any]]:
    """Each inventory file to its step, as artifact or context file; returns the files still
    being written or read (possibly incomplete)."""
    content_key: dict[str, list[str]] = {}
    for item, key in zip(src.todo, keys, strict=True):
        if isinstance(item.get("content"), str):
            content_key.setdefault(item["content"], []).append(key)
    current_key = id_key.get(ident_of(src.state.get("current_step_id")) or "")
    possibly: list[dict[str, Any]] = []
    for repo, entries in groups.items():
        statuses = list(dict.fromkeys(e[1] for e in entries))
        if len(statuses) == 1:
            status = statuses[0]
        elif evidence.status.get(repo) in statuses:
            status = evidence.status[repo]
        else:  # no evidence which key is newer: the cautious reading
            status = next((s for s in ("working", "reading") if s in statuses), statuses[0])
        owner = next((k for k in keys if repo in todo_files.get(k, [])), None)
        if owner is None:
            purposes = [e[2] for e in entries if e[2] and len(content_key.get(e[2], [])) == 1]
            owner = content_key[purposes[0]][0] if purposes else None
        owner = owner or evidence.first_step.get(repo) or current_key
        # An input: read (`file --reading`, or an inventory status) and never written.
        is_input = status == "reading" or (
            repo not in evidence.written
            and (repo in evidence.read or any(e[1] == "reading" for e in entries))
        )
        if owner is not None and owner in steps:
            target = "context_files_used" if is_input else "artifacts"
            if repo not in steps[owner][target]:
                steps[owner][target].append(repo)
        if status in ("working", "reading"):
            possibly.append(
                {"path": repo, "status": status, "step": owner, "keys": [e[0] for e in entries]}
            )
    return possibly
