"""Reading ``00-handoff.md`` and the state beside it, to check the handoff against it (the
rules are :mod:`session_resume.core.handoff_rules`')."""

from __future__ import annotations

import os
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.handoff_rules import HANDOFF, MAX_HANDOFF_BYTES, check_handoff_text
from session_resume.core.jsonread import parse_json_bytes
from session_resume.core.timeutil import parse_ts
from session_resume.storage.held import HeldDir, StoreError


def check_session_handoff(
    session_dir: str | os.PathLike[str], held: HeldDir | None = None
) -> list[Diagnostic]:
    """Check the session directory's ``00-handoff.md`` against its state (I/O shell);
    nothing to say when there is no handoff. Both are read by plain name inside ``held`` (the
    session directory held; without it, held here: a link is followed only inside it)."""
    d = Path(session_dir)
    name = str(d / HANDOFF)
    if held is None:
        try:
            with HeldDir.at(d, d) as h:
                return check_session_handoff(d, h)
        except StoreError:
            return []  # no directory to hold: no handoff either
    if not held.exists(HANDOFF):
        return []
    res = held.read_limited(HANDOFF, max_size=MAX_HANDOFF_BYTES)
    state = held.read_limited("00-session-state.json")
    if res.data is None:
        why = "; ".join(x.message for x in res.diagnostics) or "cannot read it"
        return [diag("SR600", f"the handoff cannot be read: {why}", file=name)]
    try:
        text = res.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [diag("SR600", f"the handoff is not UTF-8 (byte {exc.start})", file=name)]
    state_updated = None
    project = None
    if state.data is not None:
        parsed = parse_json_bytes(state.data)
        if isinstance(parsed.value, dict) and not parsed.corrupt:
            state_updated = parse_ts(parsed.value.get("updated"))
            p = parsed.value.get("project")
            project = p if isinstance(p, str) else None
    return check_handoff_text(text, file=name, state_updated=state_updated, project=project)
