"""The decision log's entries that write moments append (docs/spec.md §2.3, §4.1): the next
free ``D<nnn>`` id, a value shown as text, and the entry of a gate approval."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from session_resume.core.timeutil import format_ts
from session_resume.core.write_checks import APPROVED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_DECISION_ID = re.compile(r"^D([0-9]+)\Z")


def json_text(value: Any) -> str:
    # lazy: a non-text decision value shown in a hint only
    import json

    return json.dumps(value, ensure_ascii=False)


def next_decision_id(doc: Mapping[str, Any]) -> str:
    log = doc.get("decision_log")
    highest = 0
    if isinstance(log, list):
        for entry in log:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                m = _DECISION_ID.match(entry["id"])
                if m:
                    highest = max(highest, int(m.group(1)))
    return f"D{highest + 1:03d}"


def approval_entry(
    doc: Mapping[str, Any], gate_id: str, key: str, decisions: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    """The ``decision_log`` entry of an approval (docs/spec.md §4.1): ``title`` "<gate id>
    approval", ``choice`` ``approved``, ``step`` the key (an integer when it is one),
    ``agent`` ``user``, ``gate`` the gate's id and ``decisions`` what the user gave with it."""
    given = ", ".join(
        f"{k}={json_text(v) if not isinstance(v, str) else v}" for k, v in decisions.items()
    )
    return {
        "id": next_decision_id(doc),
        "title": f"{gate_id} approval",
        "choice": APPROVED,
        "rationale": f"the user approved {gate_id} of step {key}"
        + (f" with {given}" if given else ""),
        "step": int(key) if key.isdigit() else key,
        "agent": "user",
        "gate": gate_id,
        "decisions": dict(decisions),
        "timestamp": format_ts(now),
    }
