"""What the repository's git history says about a session, read-only (docs/spec.md §10,
SR708): how many commits since a time touched the repository outside the session directory.
Git runs with optional locks off (no index refresh, nothing written); any failure (no git,
not a repository, no commits, a timeout) is an unknown count, never an error."""

from __future__ import annotations

import os
import subprocess

from session_resume.core.timeutil import format_ts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

TIMEOUT_SECONDS = 5


def commits_since(root: Path, since: datetime, session_rel: str | None) -> int | None:
    """The commits reachable from HEAD committed after ``since`` that touched a path of the
    repository at ``root`` outside ``session_rel`` (the session directory, repository-
    relative: the session's own commits are no sign the project moved on); None when git
    cannot tell."""
    spec = ["--", "."]
    if session_rel not in (None, "", "."):
        spec.append(f":(exclude,literal){session_rel}")
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-list", "--count", f"--since={format_ts(since)}", "HEAD"]
            + spec,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()
    return int(text) if out.returncode == 0 and text.isdigit() else None
