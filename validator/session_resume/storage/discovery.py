"""Finding state files under the paths a user gives: directories are searched (through
``git ls-files`` in a repository, so ``.gitignore`` holds, else by walking with the usual
build and tool folders skipped), and globs are expanded by the tool itself (a quoted
``'agent-output/*/00-session-state.json'`` works in any shell and in pre-commit).

A glob is expanded by one walk that never follows a symbolic link to a directory (a link
named by the pattern is a match, never a directory to search), visits each directory once and
keeps to the directories the pattern can still match: linear in the tree, whatever the number of
``**`` and of links to ``.``, and each file listed once. A pattern whose fixed leading
directories lie inside the repository root must resolve inside it (SR105): a pull request
cannot make ``'agent-output/*/…'`` read outside the repository
(docs/security.md §14)."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.storage.fileio import within

STATE_FILE = "00-session-state.json"
SKIP_DIRS = frozenset({".git", ".archive", "node_modules", ".venv", "__pycache__", ".nox"})
MAX_DEPTH = 8
_GLOB_CHARS = frozenset("*?[")


def discover(
    paths: Iterable[str | os.PathLike[str]],
    *,
    root: str | os.PathLike[str] | None = None,
    patterns: bool = True,
    skipped: list[str] | None = None,
) -> tuple[list[str], list[Diagnostic]]:
    """The state files the paths name: files as given, directories searched, globs
    expanded (``patterns``: false takes every path literally, as the MCP server does). Links to
    directories are not followed; every file is listed once. A glob inside ``root`` (default:
    the current directory) stays inside it. ``.gitignore`` applies to the search only: a
    directory named that holds a state file itself is that session, ignored or not; the state
    files the search left out because git ignores them are appended to ``skipped``."""
    files: list[str] = []
    problems: list[Diagnostic] = []
    for p in paths:
        name = os.fspath(p)
        if patterns and not os.path.lexists(name) and is_pattern(name):
            matches, problem = expand(name, root=root)
            if problem is not None:
                problems.append(problem)
            elif not matches:
                problems.append(diag("SR100", "no file matches this pattern", file=name))
            for m in matches:
                files.extend(_search(m, problems, skipped) if _is_dir(m) else [m])
        elif _is_dir(name):
            files.extend(_search(name, problems, skipped))
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


def pattern_matches(name: str, root: str | os.PathLike[str] | None = None) -> bool:
    """``name`` is a glob that matches something (or is refused: the refusal is a finding
    of ``validate``, not a missing path)."""
    if not is_pattern(name):
        return False
    matches, problem = expand(name, root=root)
    return bool(matches) or problem is not None


def expand(
    pattern: str, *, root: str | os.PathLike[str] | None = None
) -> tuple[list[str], Diagnostic | None]:
    """The paths ``pattern`` matches, sorted, as :func:`glob.glob` with ``recursive=True``
    spells them (``*`` and ``?`` never match a leading dot; ``**`` is any number of
    directories), without following a link to a directory; or a refusal (SR105) when the
    pattern's fixed directories lie in ``root`` lexically but resolve outside it."""
    parts = pattern.split(os.sep)
    if os.altsep:
        parts = [q for part in parts for q in part.split(os.altsep)]
    fixed = 0
    while fixed < len(parts) - 1 and not is_pattern(parts[fixed]):
        fixed += 1
    head_parts, comps = parts[:fixed], [c for c in parts[fixed:] if c != ""]
    head = os.sep.join(head_parts) if head_parts else ""
    if pattern.startswith(os.sep) and not head:
        head = os.sep
    top = head or os.curdir
    base = os.path.abspath(os.fspath(root) if root is not None else os.curdir)
    inside = os.path.isdir(top) and within(os.path.abspath(top), base)
    if inside and not within(os.path.realpath(top), os.path.realpath(base)):
        return [], diag(
            "SR105",
            "the pattern's directory leads outside the repository through a link; "
            "it is not searched",
            file=pattern,
            hint="name the directory the link leads to (a pattern inside the repository "
            "never leaves it)",
        )

    def matches(name: str, comp: str) -> bool:
        if name.startswith(".") and not comp.startswith("."):
            return False  # glob's rule: a wildcard never matches a leading dot
        return fnmatch.fnmatch(name, comp)

    def closure(states: set[int]) -> set[int]:
        out = set(states)
        for i in sorted(states):
            j = i
            while j < len(comps) and comps[j] == "**":
                j += 1
                out.add(j)
        return out

    end = len(comps)
    found: list[str] = []
    start = closure({0})
    if end in start and head:
        found.append(head if head.endswith(os.sep) else head + os.sep)
    seen: set[tuple[int, int]] = set()
    stack = [(top, head, start)]
    while stack:
        real, shown, states = stack.pop()
        try:
            st = os.stat(real, follow_symlinks=False)
            if (st.st_dev, st.st_ino) in seen:
                continue  # a directory reached twice (a bind mount): searched once
            seen.add((st.st_dev, st.st_ino))
            with os.scandir(real) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        except OSError:
            continue
        for name, is_dir in entries:
            nxt: set[int] = set()
            for i in states:
                if i >= end:
                    continue
                if comps[i] == "**":
                    if (is_dir or i == end - 1) and not name.startswith("."):
                        nxt.add(i)  # ** goes on below a directory (or ends the pattern)
                elif matches(name, comps[i]):
                    nxt.add(i + 1)
            if not nxt:
                continue
            nxt = closure(nxt)
            path = os.path.join(shown, name) if shown else name
            if end in nxt:
                found.append(path)
            if is_dir and any(i < end for i in nxt):
                stack.append((os.path.join(real, name), path, nxt))
    return sorted(set(found)), None


def session_dir_of(path: str | os.PathLike[str]) -> Path:
    """A state file's directory, or the directory itself."""
    p = Path(path)
    if p.name.startswith(STATE_FILE) and not p.is_dir():
        return p.parent
    return p


def _is_dir(name: str) -> bool:
    return os.path.isdir(name) and not os.path.islink(name)


def _search(top: str, problems: list[Diagnostic], skipped: list[str] | None = None) -> list[str]:
    listed = git_listed(top)
    found = listed if listed is not None else walk(top)
    own = os.path.join(top, STATE_FILE)
    if listed is not None and own not in found and os.path.lexists(own):
        found = [own, *found]  # the session directory named itself: never ignored
    if listed is not None and skipped is not None:
        skipped.extend(p for p in git_listed(top, ignored=True) or [] if p not in found)
    if not found:
        problems.append(diag("SR101", f"no {STATE_FILE} under this directory", file=top))
    return found


def git_listed(top: str, *, ignored: bool = False) -> list[str] | None:
    """The state files under ``top`` that git tracks or would track (``.gitignore``
    honoured), or with ``ignored`` those it ignores; None when ``top`` is not in a git work
    tree or git is not installed."""
    cmd = [
        "git",
        "-c",
        "core.fsmonitor=false",  # never run a hook named by the repository's config
        "-C",
        top,
        "ls-files",
        *(("--others", "--ignored") if ignored else ("--cached", "--others")),
        "--exclude-standard",
        "-z",
        "--",
        f":(glob)**/{STATE_FILE}" if ignored else ".",
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
