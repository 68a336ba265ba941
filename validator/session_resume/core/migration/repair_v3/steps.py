"""The 3.0 repair of the step records."""

from __future__ import annotations

import re

from session_resume.core.codes import diag
from session_resume.core.diagnostics import pointer_join
from session_resume.core.migration.context import MigrationContext, MigrationError
from session_resume.core.migration.repair_v3.values import (
    DOTTED_KEY,
    STATUSES,
    STEP_FIELDS,
    STEP_KEY,
    STEP_OPTIONAL,
    VERSION,
    ts_value,
)
from session_resume.core.workflow import (
    StepDef,
    Workflow,
)
from session_resume.core.write_moments import one_form

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def new_key(key: str) -> str:
    m = DOTTED_KEY.match(key)
    return f"{m.group(1)}_{m.group(2)}" if m else key


LETTER_KEY = re.compile(r"^([0-9]+)([a-z])\Z")


def rename_letter_keys(doc: dict[str, Any], ctx: MigrationContext) -> None:
    """Letter-suffixed step keys (``3a``, ``3b``: an execution plan's inserted steps) have no
    form in any version: each becomes the next free sub-number of its step (``3a`` → ``3_1``,
    in key order), the original key kept as the step's ``x-legacy.key`` (SR151; docs/spec.md
    §9)."""
    steps = doc.get("steps")
    if not isinstance(steps, dict) or not any(LETTER_KEY.match(k) for k in steps):
        return
    taken = {new_key(k) for k in steps}
    out: dict[str, Any] = {}
    for key, step in steps.items():
        m = LETTER_KEY.match(key)
        if m is None:
            out[key] = step
            continue
        n = 1
        while f"{m.group(1)}_{n}" in taken:
            n += 1
        new = f"{m.group(1)}_{n}"
        taken.add(new)
        if isinstance(step, dict):
            step = {**step, "x-legacy": {**_legacy_of(step), "key": key}}
            why = f"step key {key!r} renamed {new!r}; kept as steps.{new}.x-legacy.key"
        else:
            why = f"step key {key!r} renamed {new!r}"
        out[new] = step
        ctx.notes.append(diag("SR151", why, file=ctx.file, pointer=pointer_join(["steps", key])))
    doc["steps"] = out


def _legacy_of(step: dict[str, Any]) -> dict[str, Any]:
    legacy = step.get("x-legacy")
    return dict(legacy) if isinstance(legacy, dict) else {}


def repair_steps(doc: dict[str, Any], wf: Workflow | None, ctx: MigrationContext) -> dict[str, Any]:
    rename_letter_keys(doc, ctx)
    steps = doc.get("steps")
    if not isinstance(steps, dict):
        if steps is not None:
            raise MigrationError(
                [diag("SR152", "steps is not an object", file=ctx.file, pointer="/steps")]
            )
        steps = {}
    renamed: dict[str, Any] = {}
    for key, step in steps.items():
        new = new_key(key)
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
        if not STEP_KEY.match(new):
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
    fresh = set(step) <= {"status", "skip_reason"}  # added by repair_steps: its note says it all
    _step_names(key, out, sdef, ctx, base, fresh)
    _step_status(key, out, doc, ctx, base)
    _step_times(key, out, doc, ctx, base)
    _step_sub_step(key, out, sdef, ctx, base)
    _step_lists(key, out, step, ctx, base)
    _step_unknown_fields(key, out, ctx, base)
    ordered = {k: out[k] for k in STEP_FIELDS}
    ordered.update({k: v for k, v in out.items() if k not in ordered})
    return ordered if ordered != step or list(ordered) != list(step) else step


def _step_names(
    key: str,
    out: dict[str, Any],
    sdef: StepDef | None,
    ctx: MigrationContext,
    base: list[str],
    fresh: bool,
) -> None:
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


def _step_status(
    key: str, out: dict[str, Any], doc: dict[str, Any], ctx: MigrationContext, base: list[str]
) -> None:
    # status
    status = out.get("status")
    if not (isinstance(status, str) and status in STATUSES):
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
                    (
                        f"step {key} has no status; "
                        if status is None
                        else f"step {key}: status {status!r} is not a {VERSION} status; "
                    )
                    + "set to pending, kept as x-legacy.status",
                    file=ctx.file,
                    pointer=pointer_join([*base, "status"]),
                )
            )


def _step_times(
    key: str, out: dict[str, Any], doc: dict[str, Any], ctx: MigrationContext, base: list[str]
) -> None:
    # timestamps
    for name in ("started", "completed"):
        raw = out.get(name)
        ts, ok = ts_value(raw)
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
            if name in out and raw not in (None, "") and ts is not None:
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


def _step_sub_step(
    key: str, out: dict[str, Any], sdef: StepDef | None, ctx: MigrationContext, base: list[str]
) -> None:
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
        out["x-legacy"] = {**_legacy_of(out), "sub_step": sub}
        ctx.notes.append(
            diag(
                "SR151",
                f"step {key}: sub_step {sub!r} cleared (a {out['status']} step has none); "
                "kept as x-legacy.sub_step",
                file=ctx.file,
                pointer=pointer_join([*base, "sub_step"]),
            )
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


def _step_lists(
    key: str, out: dict[str, Any], step: dict[str, Any], ctx: MigrationContext, base: list[str]
) -> None:
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
        if ctx.from_version in ("1.0", "2.0"):
            _one_form(key, out, name, ctx, base)


def _one_form(
    key: str, out: dict[str, Any], name: str, ctx: MigrationContext, base: list[str]
) -> None:
    """A 1.0 or 2.0 step's listed paths in the one form every write stores (docs/spec.md §4,
    §9.2 rule 8.8): normalised, a bare name resolved against the session directory once; a
    later item naming a file already listed is dropped (it is the same file)."""
    seen: set[str] = set()
    fixed: list[str] = []
    for p in out[name]:
        q = one_form(p, ctx.session_dir)
        if q in seen:
            ctx.note(
                f"step {key}: {name} item {p!r} names {q} again; dropped",
                pointer_join([*base, name]),
            )
            continue
        if q != p:
            ctx.note(f"step {key}: {name} item {p!r} stored as {q}", pointer_join([*base, name]))
        seen.add(q)
        fixed.append(q)
    if fixed != out[name]:
        out[name] = fixed


def _step_unknown_fields(
    key: str, out: dict[str, Any], ctx: MigrationContext, base: list[str]
) -> None:
    # unknown step keys → x-legacy (3.0 steps are closed)
    for k in [
        k for k in out if k not in STEP_FIELDS and k not in STEP_OPTIONAL and not k.startswith("x-")
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


def repair_current_step(doc: dict[str, Any], steps: dict[str, Any], ctx: MigrationContext) -> None:
    cur = doc.get("current_step")  # 2.0 was read as the integer 2 (docs/spec.md §2.1)
    if isinstance(cur, int) and not isinstance(cur, bool) and cur >= 0:
        return
    new: int | None = None
    if isinstance(cur, str) and re.match(r"^[0-9]+([._][0-9]+)?\Z", cur):
        new = int(re.split(r"[._]", cur)[0])
        if not cur.isdigit():  # "3.5": the step number is 3, the sub-step kept
            ctx.aside(doc, "current_step", cur, f"current_step {cur!r} names a sub-step")
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
    was = "was not set" if cur is None else f"was {cur!r}"
    ctx.note(f"current_step set to {new} (it {was})", "/current_step")
