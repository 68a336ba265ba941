"""Finding state files under the paths a user gives: directories are searched (through
``git ls-files`` in a repository, so ``.gitignore`` holds, else by walking with the usual
build and tool folders skipped), and globs are expanded by the tool itself (a quoted
``'agent-output/*/00-session-state.json'`` works in any shell and in pre-commit)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic

STATE_FILE = "00-session-state.json"
SKIP_DIRS = frozenset({".git", ".archive", "node_modules", ".venv", "__pycache__", ".nox"})
MAX_DEPTH = 8
_GLOB_CHARS = frozenset("*?[")


def discover(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[str], list[Diagnostic]]:
    """The state files the paths name: files as given, directories searched, globs
    expanded. Links to directories are not followed; every file is listed once."""
    files: list[str] = []
    problems: list[Diagnostic] = []
    for p in paths:
        name = os.fspath(p)
        if not os.path.lexists(name) and is_pattern(name):
            matches = _expand(name)
            if not matches:
                problems.append(diag("SR100", "no file matches this pattern", file=name))
            for m in matches:
                files.extend(_search(m, problems) if _is_dir(m) else [m])
        elif _is_dir(name):
            files.extend(_search(name, problems))
        else:
            files.append(name)
    seen: set[str] = set()
    unique = []
    for f in files:
        key = os.path.normpath(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique, problems


def is_pattern(name: str) -> bool:
    """``name`` is a glob the tool expands itself (a quoted pattern)."""
    return bool(_GLOB_CHARS & set(name))


def pattern_matches(name: str) -> bool:
    """``name`` is a glob that matches something."""
    return is_pattern(name) and bool(_expand(name))


def _expand(pattern: str) -> list[str]:
    # lazy: glob (and fnmatch) only for a quoted pattern, not on every cold start
    import glob

    return sorted(glob.glob(pattern, recursive=True))


def session_dir_of(path: str | os.PathLike[str]) -> Path:
    """A state file's directory, or the directory itself."""
    p = Path(path)
    if p.name.startswith(STATE_FILE) and not p.is_dir():
        return p.parent
    return p


def _is_dir(name: str) -> bool:
    return os.path.isdir(name) and not os.path.islink(name)


def _search(top: str, problems: list[Diagnostic]) -> list[str]:
    listed = git_listed(top)
    found = listed if listed is not None else walk(top)
    if not found:
        problems.append(diag("SR101", f"no {STATE_FILE} under this directory", file=top))
    return found


def git_listed(top: str) -> list[str] | None:
    """The state files under ``top`` that git tracks or would track (``.gitignore``
    honoured); None when ``top`` is not in a git work tree or git is not installed."""
    cmd = [
        "git",
        "-c",
        "core.fsmonitor=false",  # never run a hook named by the repository's config
        "-C",
        top,
        "ls-files",
        "--cached",
        "--others",
        "--exclude-standard",
        "-z",
        "--",
        ".",
    ]
    # lazy: subprocess (~5 ms) only when a directory is searched
    import subprocess

    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    out = []
    for raw in proc.stdout.split(b"\0"):
        rel = os.fsdecode(raw)
        if os.path.basename(rel) != STATE_FILE:
            continue
        parts = rel.split("/")
        if len(parts) > MAX_DEPTH + 1 or SKIP_DIRS & set(parts[:-1]):
            continue
        path = os.path.join(top, *parts)
        if os.path.lexists(path):  # listed in the index but deleted in the work tree: skip
            out.append(path)
    return sorted(out)


def walk(top: str) -> list[str]:
    """The state files under ``top`` by walking it (outside a git work tree)."""
    found = []
    base_depth = top.rstrip(os.sep).count(os.sep)
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        if dirpath.count(os.sep) - base_depth >= MAX_DEPTH:
            dirnames[:] = []
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        if STATE_FILE in filenames:
            found.append(os.path.join(dirpath, STATE_FILE))
    return sorted(found)
