"""Migration step 2.0 → 3.0: drop 2.0's lock fields, then the 3.0 repair pass."""

from __future__ import annotations

import copy

from session_resume.core.codes import diag
from session_resume.core.diagnostics import pointer_join
from session_resume.core.migration import repair_v3
from session_resume.core.migration.context import MigrationContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOURCE = "2.0"
TARGET = repair_v3.VERSION


def upgrade(doc: dict[str, Any], ctx: MigrationContext) -> dict[str, Any]:
    """2.0 → 3.0: remove ``lock``, ``stale_threshold_ms`` and every ``claim`` (upstream's
    mandatory rules), then normalise every shape 3.0 fixes (:func:`repair_v3.repair`)."""
    out = copy.deepcopy(doc)
    for key in ("lock", "stale_threshold_ms"):
        if key in out:
            value = out.pop(key)
            if _has_content(value) and key == "lock":
                ctx.aside(out, key, value, f"{key} held a live value", f"/{key}")
            else:
                ctx.note(f"removed {key} (dropped in {TARGET})", f"/{key}")
    steps = out.get("steps")
    if isinstance(steps, dict):
        for k, step in steps.items():
            if isinstance(step, dict) and "claim" in step:
                claim = step.pop("claim")
                if _has_content(claim):
                    step.setdefault("x-legacy", {})["claim"] = claim
                    ctx.notes.append(
                        diag(
                            "SR151",
                            f"step {k} claim held values; kept as steps.{k}.x-legacy.claim",
                            file=ctx.file,
                            pointer=pointer_join(["steps", k]),
                        )
                    )
                else:
                    ctx.note(f"removed the empty claim of step {k}", pointer_join(["steps", k]))
    out["schema_version"] = TARGET
    return repair_v3.repair(out, ctx, from_old=True)


def _has_content(value: Any) -> bool:
    if isinstance(value, dict):
        return any(
            _has_content(v) for k, v in value.items() if k not in ("retry_count", "event_log") or v
        )
    if isinstance(value, list):
        return bool(value)
    return value is not None
