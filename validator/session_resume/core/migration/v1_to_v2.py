"""Migration step 1.0 → 2.0."""

from __future__ import annotations

import copy
from typing import Any

from session_resume.core.migration.context import MigrationContext

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
    out["schema_version"] = TARGET
    return out
