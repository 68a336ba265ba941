"""Protocol files changed by anything but the tool, put back (docs/spec.md §13): the
post-tool-use and stop events compare every session's state, ``.bak``, worklog and lease with
the tool's record of its own last writes (``storage/written.py``)."""

from __future__ import annotations

from session_resume.services.hooks import Sessions, lease_of, shown_path

# lazy imports: only the post-tool-use and stop events check (the host waits)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path


def restore_changed(sessions: Sessions, *, now: datetime, host: str) -> list[str]:
    """Compare every session's protocol files with the tool's record of its own last writes
    (storage/written.py) and put back each one that anything else changed, under the session
    lock; each is logged in the worklog as a ``note`` (``protocol_file_restored``). Returns
    one line per session with a file put back, for the agent (escaped)."""
    # lazy: only the post-tool-use and stop events check
    from session_resume.core.timeutil import format_ts
    from session_resume.storage import written
    from session_resume.storage.worklog import NewEvent

    lines = []
    for d in sessions.dirs:

        def note(done: list[written.Restored], d: Path = d) -> list[NewEvent]:
            lease = lease_of(d)
            session = lease["session"] if lease is not None else ""
            detail = {"note": "protocol_file_restored", "host": host}
            return [
                NewEvent(
                    "note",
                    format_ts(now),
                    session if isinstance(session, str) else "",
                    detail={**detail, "file": r.name, "found": r.found, "kept_as": r.kept_as},
                )
                for r in done
            ]

        done = written.check_session(d, sessions.root, now, note)
        if not done:
            continue
        shown = shown_path(d, sessions)
        names = ", ".join(r.name for r in done)
        kept = [r.kept_as for r in done if r.kept_as]
        kept_text = f" (what was found is kept as {', '.join(kept)})" if kept else ""
        verb = "was" if len(done) == 1 else "were"
        # every value is a protocol file's name, a name made here or ``shown`` (escaped)
        lines.append(
            f"session-resume: {names} in {shown} {verb} changed outside session-resume and "
            f"{verb} put back as session-resume last wrote {'it' if len(done) == 1 else 'them'}"
            f"{kept_text}. Change a session only with session-resume's commands: "
            f"`session-resume resume {shown}` says which write is next."
        )
    return lines
