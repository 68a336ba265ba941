"""The 3.0 repair of the session-wide records: review audit, findings, decisions and the
decision log."""

from __future__ import annotations

import re

from session_resume.core.codes import diag
from session_resume.core.diagnostics import pointer_join
from session_resume.core.migration.context import MigrationContext
from session_resume.core.migration.repair_v3.steps import new_key
from session_resume.core.migration.repair_v3.values import (
    COMPLEXITY,
    DECISION_ID,
    DOTTED_KEY,
    RESOLVED,
    STEP_KEY,
    VERSION,
    legacy_top_level_keys,
    ts_value,
)
from session_resume.core.timeutil import parse_ts
from session_resume.core.workflow import (
    Workflow,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _value_of(doc: dict[str, Any], key: str, kind: type, what: str, ctx: MigrationContext) -> Any:
    """``doc[key]``; None when it is absent or not ``what`` (``kind``): such a value is set
    aside under ``x-legacy`` (SR151)."""
    value = doc.get(key)
    if value is not None and not isinstance(value, kind):
        ctx.aside(doc, key, doc.pop(key), f"{key} is not {what}", f"/{key}")
        return None
    return value


def repair_review_audit(doc: dict[str, Any], ctx: MigrationContext) -> None:
    audit = _value_of(doc, "review_audit", dict, "an object", ctx)
    if audit is None:
        return
    fixed: dict[str, Any] = {}
    for key, entry in audit.items():
        new = key
        m = re.match(r"^step_([0-9]+)\.([0-9]+)\Z", key)
        if m:
            new = f"step_{m.group(1)}_{m.group(2)}"
            ctx.note(
                f"review_audit key {key!r} renamed {new!r}", pointer_join(["review_audit", key])
            )
        if not re.match(r"^step_[0-9]+(_[0-9]+)?\Z", new) or new in fixed:
            ctx.aside(
                doc,
                f"review_audit_{key}",
                entry,
                f"review_audit key {key!r} is invalid",
                pointer_join(["review_audit", key]),
            )
            continue
        if isinstance(entry, dict) and isinstance(entry.get("skipped"), list):
            entry = _skipped(new, entry, ctx)
        fixed[new] = entry
    if fixed != audit or list(fixed) != list(audit):
        doc["review_audit"] = fixed


PASS_NAME = re.compile(r"^(?:pass_?)?([0-9]+)\Z")


def _skipped(key: str, entry: dict[str, Any], ctx: MigrationContext) -> dict[str, Any]:
    """``skipped`` holds pass numbers. Upstream wrote strings: ``"2"`` and ``"pass_3"`` are
    the pass numbers 2 and 3 (SR150); a name such as ``"challenger-review"`` names no pass and
    moves to the entry's ``x-legacy.skipped`` (SR151; docs/spec.md §9)."""
    items = entry["skipped"]
    ints: list[Any] = []
    named: list[Any] = []
    for x in items:
        m = PASS_NAME.match(x) if isinstance(x, str) else None
        if m is not None:
            ints.append(int(m.group(1)))
        elif isinstance(x, int) and not isinstance(x, bool):
            ints.append(x)
        else:
            named.append(x)
    if ints == items:
        return entry
    ptr = pointer_join(["review_audit", key, "skipped"])
    out = {**entry, "skipped": ints}
    if any(isinstance(x, str) and PASS_NAME.match(x) for x in items):
        ctx.note(f"review_audit {key}: skipped pass names converted to pass numbers", ptr)
    if named:
        legacy = out.get("x-legacy")
        legacy = dict(legacy) if isinstance(legacy, dict) else {}
        if "x-legacy" in out and not isinstance(out["x-legacy"], dict):
            legacy["x-legacy"] = out["x-legacy"]
        legacy["skipped"] = named
        out["x-legacy"] = legacy
        ctx.notes.append(
            diag(
                "SR151",
                f"review_audit {key}: skipped items {named!r} name no pass; kept as "
                f"review_audit.{key}.x-legacy.skipped",
                file=ctx.file,
                pointer=ptr,
            )
        )
    return out


def _finding_text(item: dict[str, Any]) -> str:
    if item.get("type") == "circuit_breaker":
        parts = [str(item.get("failure_category") or "failure")]
        if item.get("last_error"):
            parts.append(str(item["last_error"]))
        return "circuit breaker: " + " - ".join(parts)
    for k in ("title", "description", "text", "id"):
        if isinstance(item.get(k), str) and item[k].strip():
            return str(item[k]).strip()
    return str(item)


def repair_findings(doc: dict[str, Any], ctx: MigrationContext) -> None:
    findings = doc.get("open_findings")
    if findings is None:
        doc["open_findings"] = []
        ctx.note("open_findings added (empty)", "/open_findings")
        return
    if not isinstance(findings, list):
        ctx.aside(doc, "open_findings", findings, "open_findings is not a list", "/open_findings")
        doc["open_findings"] = []
        return
    out: list[str] = []
    seen: set[str] = set()  # `text not in out` was quadratic (docs/security.md §6)
    resolved: list[Any] = []
    converted: list[Any] = []
    duplicates: list[str] = []
    for i, item in enumerate(findings):
        if isinstance(item, str):
            text = item
        elif isinstance(item, dict):
            if str(item.get("status", "")).lower() in RESOLVED:
                resolved.append(item)
                continue
            text = _finding_text(item)
            converted.append(item)
            ctx.note(
                f"finding object {i} became the string {text!r}", pointer_join(["open_findings", i])
            )
        else:
            text = str(item)
        if text and text not in seen:
            seen.add(text)
            out.append(text)
        elif text and isinstance(item, str):
            duplicates.append(text)
    if converted:
        ctx.aside(
            doc,
            "open_finding_objects",
            converted,
            f"{len(converted)} open finding object(s) became strings; the original "
            "objects hold more than a title",
            "/open_findings",
        )
    if duplicates:
        ctx.aside(
            doc,
            "duplicate_findings",
            duplicates,
            f"{len(duplicates)} open finding(s) repeated an earlier one",
            "/open_findings",
        )
    if resolved:
        ctx.aside(
            doc,
            "resolved_findings",
            resolved,
            f"{len(resolved)} resolved finding object(s) are not open findings",
            "/open_findings",
        )
    if out != findings:
        doc["open_findings"] = out


def repair_decisions(doc: dict[str, Any], wf: Workflow | None, ctx: MigrationContext) -> None:
    dec = doc.get("decisions")
    if dec is None:
        dec = doc["decisions"] = {}
        ctx.note("decisions added", "/decisions")
    if not isinstance(dec, dict):
        ctx.aside(doc, "decisions", dec, "decisions is not an object", "/decisions")
        dec = doc["decisions"] = {}
    if "complexity" in doc and wf is not None and wf.id == "apex":
        top = doc.pop("complexity")
        if "complexity" not in dec:
            dec["complexity"] = top
            ctx.note("top-level complexity moved into decisions", "/complexity")
        else:
            ctx.aside(
                doc, "complexity", top, "top-level complexity duplicates decisions", "/complexity"
            )
    elif "complexity" in doc:
        ctx.aside(doc, "complexity", doc.pop("complexity"), "top-level complexity", "/complexity")
    if wf is None:
        return
    enums = {d.key: d.enum for d in wf.decisions if d.enum is not None}
    comp = dec.get("complexity")
    if "complexity" in enums and isinstance(comp, str) and comp not in (enums["complexity"] or ()):
        mapped = COMPLEXITY.get(comp.lower())
        if mapped is not None and mapped in (enums["complexity"] or ()):
            dec["complexity"] = mapped
            ctx.note(f"complexity {comp!r} mapped to {mapped!r}", "/decisions/complexity")
    for d in wf.decisions:
        if d.required and d.key not in dec:
            dec[d.key] = ""
            ctx.note(
                f"required decision {d.key!r} added (empty: not yet decided)",
                pointer_join(["decisions", d.key]),
            )
    _mirrored_fields(doc, dec, wf, ctx)


def _log_step(e: dict[str, Any]) -> dict[str, Any]:
    """A decision's ``step`` as 3.0 writes it: ``"3.5"`` and the number ``3.5`` are the step
    key ``"3_5"`` (``2.0`` was read as ``2``: docs/spec.md §2.1); anything else moves to
    ``x-legacy-step``."""
    step = e.get("step")
    if isinstance(step, float):
        if DOTTED_KEY.match(repr(step)):
            e["step"] = new_key(repr(step))
        else:
            e["x-legacy-step"] = e.pop("step")
    elif isinstance(step, str) and DOTTED_KEY.match(step):
        e["step"] = new_key(step)
    elif step is not None and not (
        (isinstance(step, int) and not isinstance(step, bool) and step >= 0)
        or (isinstance(step, str) and STEP_KEY.match(step))
    ):
        e["x-legacy-step"] = e.pop("step")
    return e


def _entry_is_v3(e: dict[str, Any]) -> bool:
    step = e.get("step")
    step_ok = (
        step is None
        or (isinstance(step, int) and not isinstance(step, bool) and step >= 0)
        or (isinstance(step, str) and bool(STEP_KEY.match(step)))
    )
    return (
        all(isinstance(e.get(k), str) and e[k] for k in ("id", "title", "choice", "rationale"))
        and bool(DECISION_ID.match(e["id"]))
        and step_ok
        and ("timestamp" not in e or parse_ts(e["timestamp"]) is not None)
    )


def repair_decision_log(doc: dict[str, Any], ctx: MigrationContext) -> None:
    log = _value_of(doc, "decision_log", list, "a list", ctx)
    if log is None:
        return
    used = {
        e["id"]
        for e in log
        if isinstance(e, dict) and isinstance(e.get("id"), str) and DECISION_ID.match(e["id"])
    }
    nums = [int(i[1:]) for i in used]
    next_n = max(nums, default=0) + 1
    out: list[Any] = []
    changed = False
    for i, entry in enumerate(log):
        if not isinstance(entry, dict):
            ctx.aside(
                doc,
                f"decision_log_{i}",
                entry,
                f"decision_log[{i}] is not an object",
                pointer_join(["decision_log", i]),
            )
            changed = True
            continue
        e = dict(entry)
        ptr = pointer_join(["decision_log", i])
        if _entry_is_v3(e):
            out.append(e)
            continue
        if not (isinstance(e.get("id"), str) and DECISION_ID.match(e["id"])):
            if "id" in e:
                e["x-legacy-id"] = e["id"]
            e["id"] = f"D{next_n:03d}"
            next_n += 1
            ctx.note(f"decision_log[{i}] given id {e['id']}", ptr)
        # apex-recall {decision, rationale, step, timestamp}; docs-site {key, value, reason}
        if "title" not in e:
            title = e.get("decision") or e.get("key")
            if isinstance(title, str) and title.strip():
                e["title"] = title.strip()[:120]
        if "choice" not in e:
            choice = e.pop("decision", None) if "decision" in e else e.get("value")
            if "value" in e and choice is e.get("value"):
                e.pop("value")
            if choice is not None:
                e["choice"] = choice if isinstance(choice, str) else str(choice)
        if "rationale" not in e:
            reason = e.pop("reason", None)
            e["rationale"] = reason if isinstance(reason, str) and reason else "(not recorded)"
        if "key" in e and e.get("title") == e["key"]:
            e.pop("key")
        for req in ("title", "choice", "rationale"):
            if not isinstance(e.get(req), str) or not e[req]:
                if e.get(req) not in (None, ""):
                    e[f"x-legacy-{req}"] = e[req]  # not a string: kept beside
                e[req] = "(not recorded)"
        e = _log_step(e)
        ts = e.get("timestamp")
        if ts is not None:
            norm, ok = ts_value(ts)
            if not ok or norm is None:
                e["x-legacy-timestamp"] = e.pop("timestamp")
            elif norm != ts:
                e["timestamp"] = norm
        if e != entry:
            ctx.note(f"decision_log[{i}] converted to the {VERSION} entry shape", ptr)
            changed = True
        out.append(e)
    if changed:
        doc["decision_log"] = out


def _mirrored_fields(
    doc: dict[str, Any], dec: dict[str, Any], wf: Workflow, ctx: MigrationContext
) -> None:
    """A top-level field the workflow keeps twice (``mirrors_decision``, an upstream
    ambiguity): fill the empty copy from the other; report a disagreement."""
    for f in wf.fields:
        if f.mirrors_decision is None:
            continue
        name, key = f.name, f.mirrors_decision
        top, inner = doc.get(name), dec.get(key)
        if not (isinstance(top, str) and isinstance(inner, str) and top != inner):
            continue
        if not top:
            doc[name] = inner
            ctx.note(f"{name} filled from decisions.{key} ({inner!r})", f"/{name}")
        elif not inner:
            dec[key] = top
            ctx.note(f"decisions.{key} filled from {name} ({top!r})", f"/decisions/{key}")
        else:
            ctx.notes.append(
                diag(
                    "SR151",
                    f"{name} {top!r} and decisions.{key} {inner!r} disagree; both kept, "
                    "resolve by hand",
                    file=ctx.file,
                    pointer=f"/{name}",
                )
            )


def _legacy_top_level_keys(
    doc: dict[str, Any], dec: dict[str, Any], wf: Workflow | None, ctx: MigrationContext
) -> None:
    """Old top-level keys that a workflow keeps in ``decisions`` (``legacy_top_level``):
    moved there under such a workflow, else kept under ``x-legacy``."""
    mine = {d.key for d in wf.decisions if d.legacy_top_level} if wf is not None else set()
    for key in sorted(k for k in legacy_top_level_keys() if k in doc):
        top = doc.pop(key)
        if key in mine and key not in dec:
            dec[key] = top
            ctx.note(f"top-level {key} moved into decisions", f"/{key}")
        elif key in mine:
            ctx.aside(doc, key, top, f"top-level {key} duplicates decisions", f"/{key}")
        else:
            ctx.aside(doc, key, top, f"top-level {key}", f"/{key}")
