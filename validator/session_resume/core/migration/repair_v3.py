"""The 3.0 repair pass: normalise the shapes upstream 3.0 writers produced that the 3.0
schema rejects (``3.5`` step keys, the apex-recall decision-log shape, …). A valid 3.0
document comes out unchanged, so migration stays idempotent. Also the second half of the
2.0 → 3.0 step (``from_old``)."""

from __future__ import annotations

import copy
import re
from datetime import datetime
from typing import Any

from session_resume.core.codes import diag
from session_resume.core.diagnostics import pointer_join
from session_resume.core.migration.context import MigrationContext, MigrationError
from session_resume.core.timeutil import format_ts, parse_ts
from session_resume.core.workflow import Workflow, WorkflowError, load_workflow, state_workflow_spec

VERSION = "3.0"  # the version whose known defects this pass repairs

_DOTTED_KEY = re.compile(r"^([0-9]+)\.([0-9]+)$")
_STEP_KEY = re.compile(r"^[0-9]+(_[0-9]+)?$")
_DECISION_ID = re.compile(r"^D[0-9]{3,}$")
_COMPLEXITY = {"low": "simple", "medium": "standard", "high": "complex"}
_RESOLVED = {"resolved", "closed", "done", "fixed", "wontfix", "won't fix"}
_STATUSES = {"pending", "in_progress", "complete", "skipped"}
_STEP_FIELDS = (
    "name",
    "agent",
    "status",
    "sub_step",
    "started",
    "completed",
    "artifacts",
    "context_files_used",
)
_STEP_OPTIONAL = ("attempts", "telemetry", "skip_reason")


def repair(doc: dict[str, Any], ctx: MigrationContext, *, from_old: bool = False) -> dict[str, Any]:
    """Normalise a 3.0 document: fixes only shapes the 3.0 schema rejects, so a valid 3.0
    document comes out unchanged."""
    out = copy.deepcopy(doc)
    wf = _choose_workflow(out, ctx)
    if from_old:
        if wf is not None and "workflow" not in out:
            out["workflow"] = wf.id
            ctx.note(f"workflow set to {wf.id!r}", "/workflow")
        _top_level_extras(out, wf, ctx)
    _project(out, ctx)
    _updated(out, ctx)
    steps = _steps(out, wf, ctx)
    _current_step(out, steps, ctx)
    _review_audit(out, ctx)
    _findings(out, ctx)
    _decisions(out, wf, ctx)
    _decision_log(out, ctx)
    return out


def _choose_workflow(doc: dict[str, Any], ctx: MigrationContext) -> Workflow | None:
    if ctx.workflow is not None:
        return ctx.workflow
    named = doc.get("workflow")
    try:
        if named is not None:
            return load_workflow(state_workflow_spec(named))
        apex = load_workflow("apex")
    except WorkflowError:
        return None
    names = {s.name for s in apex.steps}
    steps = doc.get("steps") if isinstance(doc.get("steps"), dict) else {}
    assert isinstance(steps, dict)
    foreign = sorted(
        {
            str(s["name"])
            for s in steps.values()
            if isinstance(s, dict) and isinstance(s.get("name"), str) and s["name"] not in names
        }
    )
    if foreign:
        ctx.note(
            f"step names {', '.join(map(repr, foreign))} are not apex steps; the session "
            "is migrated under the generic workflow"
        )
        try:
            return load_workflow("generic")
        except WorkflowError:
            return None
    return apex


def _top_level_extras(doc: dict[str, Any], wf: Workflow | None, ctx: MigrationContext) -> None:
    from session_resume.core.rules import CORE_KEYS

    known = set(CORE_KEYS) | {f.name for f in (wf.fields if wf else ())}
    for key in [k for k in doc if k not in known and not k.startswith("x-")]:
        if key == "complexity":
            continue  # moved into decisions by _decisions
        ctx.aside(
            doc,
            key,
            doc.pop(key),
            f"top-level key {key!r} is not part of {VERSION}",
            pointer_join([key]),
        )


def _project(doc: dict[str, Any], ctx: MigrationContext) -> None:
    p = doc.get("project")
    if isinstance(p, str) and re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", p) and len(p) <= 128:
        return
    hint = ctx.project_hint
    if hint and re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", hint):
        if p is not None:
            ctx.aside(doc, "project", p, f"project {p!r} is not a valid project name", "/project")
        doc["project"] = hint
        ctx.note(f"project set to {hint!r} from the session directory", "/project")


def _ts_value(value: Any) -> tuple[str | None, bool]:
    """(normalised timestamp or None, whether the input was usable)."""
    if value is None or value == "":
        return None, True
    if not isinstance(value, str):
        return None, False
    if parse_ts(value):
        return value, True
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None, False
    if dt.tzinfo is None:
        return None, False
    return format_ts(dt), True


def _updated(doc: dict[str, Any], ctx: MigrationContext) -> None:
    raw = doc.get("updated")
    ts, ok = _ts_value(raw)
    if ts is not None:
        if ts != raw:
            doc["updated"] = ts
            ctx.note(f"updated {raw!r} rewritten as {ts}", "/updated")
        return
    if not ok:
        ctx.aside(doc, "updated", raw, f"updated {raw!r} is not a timestamp", "/updated")
    doc["updated"] = format_ts(ctx.now)
    ctx.note("updated was empty; set to the migration time", "/updated")


def _new_key(key: str) -> str:
    m = _DOTTED_KEY.match(key)
    return f"{m.group(1)}_{m.group(2)}" if m else key


def _steps(doc: dict[str, Any], wf: Workflow | None, ctx: MigrationContext) -> dict[str, Any]:
    steps = doc.get("steps")
    if not isinstance(steps, dict):
        if steps is not None:
            raise MigrationError(
                [diag("SR152", "steps is not an object", file=ctx.file, pointer="/steps")]
            )
        steps = {}
    renamed: dict[str, Any] = {}
    for key, step in steps.items():
        new = _new_key(key)
        if new != key:
            if new in steps:
                ctx.aside(
                    doc,
                    f"step_{key}",
                    step,
                    f"step {key!r} duplicates step {new!r}",
                    pointer_join(["steps", key]),
                )
                continue
            ctx.note(f"step key {key!r} renamed {new!r}", pointer_join(["steps", key]))
        if not _STEP_KEY.match(new):
            ctx.aside(
                doc,
                f"step_{key}",
                step,
                f"step key {key!r} is not N or N_M",
                pointer_join(["steps", key]),
            )
            continue
        renamed[new] = step
    if wf is not None and not wf.free_steps:
        started_orders = [
            wf.step_keys.index(k)
            for k, st in renamed.items()
            if k in wf.step_keys
            and isinstance(st, dict)
            and st.get("status") in ("in_progress", "complete", "skipped")
        ]
        last_started = max(started_orders, default=-1)
        for i, sdef in enumerate(wf.steps):
            if sdef.key in renamed:
                continue
            if i < last_started:
                # The step did not exist when the session passed this point (e.g. apex 3_5,
                # added mid-v1): record it as skipped rather than pretend it is still to do.
                renamed[sdef.key] = {
                    "status": "skipped",
                    "skip_reason": "added by migration: the step did not exist when the "
                    "session passed it",
                }
                ctx.note(
                    f"step {sdef.key} ({sdef.name}) added as skipped (later steps had run)",
                    pointer_join(["steps", sdef.key]),
                )
            else:
                renamed[sdef.key] = {"status": "pending"}
                ctx.note(
                    f"step {sdef.key} ({sdef.name}) added as pending",
                    pointer_join(["steps", sdef.key]),
                )
        order = {k: i for i, k in enumerate(wf.step_keys)}
        renamed = dict(
            sorted(renamed.items(), key=lambda kv: (order.get(kv[0], len(order)), _num(kv[0])))
        )
    fixed: dict[str, Any] = {}
    for key, step in renamed.items():
        fixed[key] = _step(key, step, wf, doc, ctx)
    if fixed != steps or list(fixed) != list(steps):
        doc["steps"] = fixed
    return fixed


def _num(key: str) -> tuple[int, int]:
    a, _, b = key.partition("_")
    return int(a), int(b or 0)


def _step(
    key: str, step: Any, wf: Workflow | None, doc: dict[str, Any], ctx: MigrationContext
) -> dict[str, Any]:
    sdef = wf.step(key) if wf is not None else None
    base = ["steps", key]
    if step is None:
        step = {}
    if not isinstance(step, dict):
        ctx.aside(doc, f"step_{key}", step, f"step {key} is not an object", pointer_join(base))
        step = {}
    out = dict(step)
    fresh = set(step) <= {"status", "skip_reason"}  # added by _steps: its note says it all
    # name and agent
    if not isinstance(out.get("name"), str) or not out.get("name"):
        if "name" in out:
            ctx.aside(out, "name", out["name"], "name was not a string", pointer_join(base))
        out["name"] = sdef.name if sdef else f"Step {key}"
        if not fresh:
            ctx.note(f"step {key}: name set to {out['name']!r}", pointer_join([*base, "name"]))
    if not isinstance(out.get("agent"), str):
        if "agent" in out:
            ctx.aside(out, "agent", out["agent"], "agent was not a string", pointer_join(base))
        out["agent"] = sdef.agents[0] if sdef and len(sdef.agents) == 1 else ""
        if not fresh:
            ctx.note(f"step {key}: agent set to {out['agent']!r}", pointer_join([*base, "agent"]))
    # status
    status = out.get("status")
    if not (isinstance(status, str) and status in _STATUSES):
        if status == "blocked":
            out["status"] = "in_progress"
            title = f"step {key} ({out['name']}) is blocked"
            findings = doc.setdefault("open_findings", [])
            if isinstance(findings, list) and title not in findings:
                findings.append(title)
            out.setdefault("x-legacy", {})["status"] = status
            ctx.note(
                f"step {key}: status 'blocked' became in_progress plus the open finding {title!r}",
                pointer_join([*base, "status"]),
            )
        else:
            out.setdefault("x-legacy", {})["status"] = status
            out["status"] = "pending"
            ctx.notes.append(
                diag(
                    "SR151",
                    f"step {key}: status {status!r} is not a {VERSION} status; "
                    "set to pending, kept as x-legacy.status",
                    file=ctx.file,
                    pointer=pointer_join([*base, "status"]),
                )
            )
    # timestamps
    for name in ("started", "completed"):
        raw = out.get(name)
        ts, ok = _ts_value(raw)
        if not ok:
            out.setdefault("x-legacy", {})[name] = raw
            ctx.notes.append(
                diag(
                    "SR151",
                    f"step {key}: {name} {raw!r} is not a timestamp; kept as x-legacy.{name}",
                    file=ctx.file,
                    pointer=pointer_join([*base, name]),
                )
            )
        if ts != raw or name not in out:
            if name in out and raw not in (None, ""):
                ctx.note(
                    f"step {key}: {name} {raw!r} rewritten as {ts}", pointer_join([*base, name])
                )
            out[name] = ts
    if out["status"] == "complete" and out["completed"] is None:
        out["completed"] = doc.get("updated")
        ctx.note(
            f"step {key}: complete without a completion time; completed set to the "
            "state's updated time (the latest it can have been)",
            pointer_join([*base, "completed"]),
        )
    if out["status"] == "in_progress" and out["started"] is None:
        out["started"] = doc.get("updated")
        ctx.note(
            f"step {key}: in_progress without a start time; started set to the state's "
            "updated time",
            pointer_join([*base, "started"]),
        )
    # sub_step
    sub = out.get("sub_step")
    if sub == "" or "sub_step" not in out:
        out["sub_step"] = None
    elif sub is not None and not isinstance(sub, str):
        out.setdefault("x-legacy", {})["sub_step"] = sub
        out["sub_step"] = None
        ctx.notes.append(
            diag(
                "SR151",
                f"step {key}: sub_step {sub!r} is not a string",
                file=ctx.file,
                pointer=pointer_join([*base, "sub_step"]),
            )
        )
    elif isinstance(sub, str) and out["status"] in ("complete", "pending", "skipped"):
        out["sub_step"] = None
        ctx.note(
            f"step {key}: sub_step {sub!r} cleared (a {out['status']} step has none)",
            pointer_join([*base, "sub_step"]),
        )
    elif isinstance(sub, str) and sdef is not None and sub not in sdef.checkpoint_ids:
        new = sdef.legacy_checkpoints.get(sub)
        if new is None and sub.replace(".", "_") in sdef.checkpoint_ids:
            new = sub.replace(".", "_")
        if new is not None:
            out["sub_step"] = new
            ctx.note(
                f"step {key}: checkpoint {sub!r} renamed {new!r}", pointer_join([*base, "sub_step"])
            )
    # lists
    for name in ("artifacts", "context_files_used"):
        value = out.get(name)
        if value is None:
            out[name] = []
            if name in step:
                ctx.note(f"step {key}: {name} null became []", pointer_join([*base, name]))
        elif not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            out.setdefault("x-legacy", {})[name] = value
            out[name] = (
                [v for v in value if isinstance(v, str) and v] if isinstance(value, list) else []
            )
            ctx.notes.append(
                diag(
                    "SR151",
                    f"step {key}: {name} held non-path items; kept as x-legacy.{name}",
                    file=ctx.file,
                    pointer=pointer_join([*base, name]),
                )
            )
    # unknown step keys → x-legacy (3.0 steps are closed)
    for k in [
        k
        for k in out
        if k not in _STEP_FIELDS and k not in _STEP_OPTIONAL and not k.startswith("x-")
    ]:
        value = out.pop(k)
        out.setdefault("x-legacy", {})[k] = value
        ctx.notes.append(
            diag(
                "SR151",
                f"step {key}: field {k!r} is not part of a {VERSION} step; kept as x-legacy.{k}",
                file=ctx.file,
                pointer=pointer_join([*base, k]),
            )
        )
    ordered = {k: out[k] for k in _STEP_FIELDS}
    ordered.update({k: v for k, v in out.items() if k not in ordered})
    return ordered if ordered != step or list(ordered) != list(step) else step


def _current_step(doc: dict[str, Any], steps: dict[str, Any], ctx: MigrationContext) -> None:
    cur = doc.get("current_step")
    if isinstance(cur, int) and not isinstance(cur, bool) and cur >= 0:
        return
    if isinstance(cur, float) and cur.is_integer() and cur >= 0:
        doc["current_step"] = int(cur)  # 2.0 is the integer 2
        return
    new: int | None = None
    if isinstance(cur, str) and re.match(r"^[0-9]+([._][0-9]+)?$", cur):
        new = int(re.split(r"[._]", cur)[0])
    else:
        running = [k for k, s in steps.items() if s.get("status") == "in_progress"]
        new = _num(running[0])[0] if running else 0
        if cur is not None:
            ctx.aside(
                doc,
                "current_step",
                cur,
                f"current_step {cur!r} is not a step number",
                "/current_step",
            )
    doc["current_step"] = new
    ctx.note(f"current_step {cur!r} became {new}", "/current_step")


def _review_audit(doc: dict[str, Any], ctx: MigrationContext) -> None:
    audit = doc.get("review_audit")
    if audit is None:
        return
    if not isinstance(audit, dict):
        ctx.aside(
            doc,
            "review_audit",
            doc.pop("review_audit"),
            "review_audit is not an object",
            "/review_audit",
        )
        return
    fixed: dict[str, Any] = {}
    for key, entry in audit.items():
        new = key
        m = re.match(r"^step_([0-9]+)\.([0-9]+)$", key)
        if m:
            new = f"step_{m.group(1)}_{m.group(2)}"
            ctx.note(
                f"review_audit key {key!r} renamed {new!r}", pointer_join(["review_audit", key])
            )
        if not re.match(r"^step_[0-9]+(_[0-9]+)?$", new) or new in fixed:
            ctx.aside(
                doc,
                f"review_audit_{key}",
                entry,
                f"review_audit key {key!r} is invalid",
                pointer_join(["review_audit", key]),
            )
            continue
        if isinstance(entry, dict) and isinstance(entry.get("skipped"), list):
            items = entry["skipped"]
            ints = [int(x) if isinstance(x, str) and x.isdigit() else x for x in items]
            if ints != items:
                entry = {**entry, "skipped": ints}
                ctx.note(
                    f"review_audit {new}: skipped pass numbers converted to integers",
                    pointer_join(["review_audit", new, "skipped"]),
                )
        fixed[new] = entry
    if fixed != audit or list(fixed) != list(audit):
        doc["review_audit"] = fixed


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


def _findings(doc: dict[str, Any], ctx: MigrationContext) -> None:
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
    resolved: list[Any] = []
    converted: list[Any] = []
    for i, item in enumerate(findings):
        if isinstance(item, str):
            text = item
        elif isinstance(item, dict):
            if str(item.get("status", "")).lower() in _RESOLVED:
                resolved.append(item)
                continue
            text = _finding_text(item)
            converted.append(item)
            ctx.note(
                f"finding object {i} became the string {text!r}", pointer_join(["open_findings", i])
            )
        else:
            text = str(item)
        if text and text not in out:
            out.append(text)
    if converted:
        ctx.aside(
            doc,
            "open_finding_objects",
            converted,
            f"{len(converted)} open finding object(s) became strings; the original "
            "objects hold more than a title",
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


def _decisions(doc: dict[str, Any], wf: Workflow | None, ctx: MigrationContext) -> None:
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
        mapped = _COMPLEXITY.get(comp.lower())
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
    # apex keeps iac_tool twice (upstream ambiguity): fill the empty copy from the other.
    if wf.id == "apex":
        top, inner = doc.get("iac_tool"), dec.get("iac_tool")
        if isinstance(top, str) and isinstance(inner, str) and top != inner:
            if not top:
                doc["iac_tool"] = inner
                ctx.note(f"iac_tool filled from decisions.iac_tool ({inner!r})", "/iac_tool")
            elif not inner:
                dec["iac_tool"] = top
                ctx.note(
                    f"decisions.iac_tool filled from iac_tool ({top!r})", "/decisions/iac_tool"
                )
            else:
                ctx.notes.append(
                    diag(
                        "SR151",
                        f"iac_tool {top!r} and decisions.iac_tool "
                        f"{inner!r} disagree; both kept, resolve by hand",
                        file=ctx.file,
                        pointer="/iac_tool",
                    )
                )


def _entry_is_v3(e: dict[str, Any]) -> bool:
    step = e.get("step")
    step_ok = (
        step is None
        or (isinstance(step, int) and not isinstance(step, bool) and step >= 0)
        or (isinstance(step, str) and bool(_STEP_KEY.match(step)))
    )
    return (
        all(isinstance(e.get(k), str) and e[k] for k in ("id", "title", "choice", "rationale"))
        and bool(_DECISION_ID.match(e["id"]))
        and step_ok
        and ("timestamp" not in e or parse_ts(e["timestamp"]) is not None)
    )


def _decision_log(doc: dict[str, Any], ctx: MigrationContext) -> None:
    log = doc.get("decision_log")
    if log is None:
        return
    if not isinstance(log, list):
        ctx.aside(
            doc,
            "decision_log",
            doc.pop("decision_log"),
            "decision_log is not a list",
            "/decision_log",
        )
        return
    used = {
        e["id"]
        for e in log
        if isinstance(e, dict) and isinstance(e.get("id"), str) and _DECISION_ID.match(e["id"])
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
        if not (isinstance(e.get("id"), str) and _DECISION_ID.match(e["id"])):
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
        for req in ("title", "choice"):
            if not isinstance(e.get(req), str) or not e[req]:
                e[req] = "(not recorded)"
        step = e.get("step")
        if isinstance(step, str) and _DOTTED_KEY.match(step):
            e["step"] = _new_key(step)
        ts = e.get("timestamp")
        if ts is not None:
            norm, ok = _ts_value(ts)
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
