"""Migration step 1.0 → 2.0."""

from __future__ import annotations

import copy

from session_resume.core.migration.context import MigrationContext
from session_resume.core.migration.repair_v3.steps import rename_letter_keys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOURCE = "1.0"
TARGET = "2.0"


def upgrade(doc: dict[str, Any], ctx: MigrationContext) -> dict[str, Any]:
    """1.0 → 2.0: v2 only added the (never exercised) lock/claim fields, so this sets the
    version and drops the informal ``"$schema": "session-state-v1"`` marker."""
    out = copy.deepcopy(doc)
    marker = out.get("$schema")
    if isinstance(marker, str) and not marker.endswith(".json"):
        del out["$schema"]
        ctx.note(f"removed the informal version marker $schema {marker!r}", "/$schema")
    cur = out.get("current_step")
    if isinstance(cur, float) and not cur.is_integer():
        out["current_step"] = repr(cur)  # 3.5: step "3.5", which 2.0 can hold (a string)
    rename_letter_keys(out, ctx)  # `3a`: no version has a form for it (docs/spec.md §9)
    out["schema_version"] = TARGET
    return out
