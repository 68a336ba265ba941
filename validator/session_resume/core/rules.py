"""Semantic rules a JSON Schema cannot say (docs/spec.md §2.4, §2.5) and the workflow's rules. Pure.

Every rule reads defensively: the document may also have failed the schema, and a rule
must still not raise on it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from datetime import datetime, timedelta

from session_resume.core import schemas
from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, pointer_join
from session_resume.core.findings import Findings
from session_resume.core.timeutil import looks_like_ts, parse_ts
from session_resume.core.workflow import Workflow
from session_resume.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CORE_KEYS = frozenset(
    {
        "$schema",
        "schema_version",
        "project",
        "workflow",
        "revision",
        "updated",
        "current_step",
        "steps",
        "decisions",
        "open_findings",
        "decision_log",
        "review_audit",
    }
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WINDOWS_ABS = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")
_KEY = re.compile(r"^[0-9]+(_[0-9]+)?\Z")


@record(frozen=True)
class RuleOptions:
    now: datetime | None = None
    skew: timedelta = timedelta(minutes=5)
    # Given when artifacts must exist: returns True if the repository-relative path exists.
    exists: Callable[[str], bool] | None = None


STEP_NUMBER_CAP = 10**18  # a step number of more digits sorts (and counts) as this


def step_number(digits: str) -> int:
    """The value of a step key's digits, capped: no int() of thousands of digits (Python
    refuses over 4,300; a hostile key must not end a command in an internal error)."""
    return int(digits) if len(digits) <= 18 else STEP_NUMBER_CAP


def step_order_key(key: str) -> tuple[int, int]:
    major, _, minor = key.partition("_")
    return step_number(major), step_number(minor or "0")


def ordered_step_keys(doc_steps: dict[str, Any], workflow: Workflow | None) -> list[str]:
    """Workflow order for the workflow's steps, numeric order for the rest."""
    keys = [k for k in doc_steps if isinstance(k, str) and _KEY.match(k)]
    if workflow is not None and not workflow.free_steps:
        known = [k for k in workflow.step_keys if k in doc_steps]
        extra = sorted((k for k in keys if k not in workflow.step_keys), key=step_order_key)
        return known + extra
    return sorted(keys, key=step_order_key)


def _add(
    out: list[Diagnostic], file: str, code: str, message: str, at: list[str | int], hint: str = ""
) -> None:
    """Every finding of these rules: ``code`` with ``message`` at the place ``at`` (the keys
    down to it) in ``file``; the pointer is built only here, for a finding made."""
    out.append(diag(code, message, file=file, pointer=pointer_join(at), hint=hint))


def check_state(
    doc: dict[str, Any], workflow: Workflow | None, opts: RuleOptions, file: str = ""
) -> list[Diagnostic]:
    out = Findings()  # at most 100 of a code listed, the rest counted (core.findings)
    steps = doc.get("steps") if isinstance(doc.get("steps"), dict) else {}
    assert isinstance(steps, dict)
    updated = _ts(doc.get("updated"), ["updated"], out, file)
    _future(updated, ["updated"], opts, out, file)

    in_progress: list[str] = []
    for key, step in steps.items():
        if not isinstance(step, dict):
            continue
        base = ["steps", key]
        status = step.get("status")
        started = _ts(step.get("started"), [*base, "started"], out, file)
        completed = _ts(step.get("completed"), [*base, "completed"], out, file)
        sub = step.get("sub_step")
        _status_rules(status, step, sub, base, out, file)
        if status == "in_progress":
            in_progress.append(key)
        if started and completed and started > completed:
            _add(
                out,
                file,
                "SR304",
                f"step {key}: started ({step['started']}) is after completed ({step['completed']})",
                [*base, "started"],
            )
        for name, value in (("started", started), ("completed", completed)):
            if value and updated and value > updated:
                msg = f"step {key}: {name} ({step[name]}) is after the state's updated"
                _add(out, file, "SR304", f"{msg} ({doc['updated']})", [*base, name])
            _future(value, [*base, name], opts, out, file)
        for list_name in ("artifacts", "context_files_used"):
            _path_rules(
                step.get(list_name),
                [*base, list_name],
                opts,
                out,
                file,
                check_exists=list_name == "artifacts",
            )

    if len(in_progress) > 1:
        _add(out, file, "SR306", f"steps {', '.join(in_progress)} are all in_progress", ["steps"])
    cur = doc.get("current_step")  # 7.0 was read as the integer 7 (core/jsonread.py)
    if len(in_progress) == 1 and isinstance(cur, int) and not isinstance(cur, bool):
        want = step_order_key(in_progress[0])[0] if _KEY.match(in_progress[0]) else None
        if want is not None and cur != want:
            _add(
                out,
                file,
                "SR307",
                f"current_step is {cur} but step {in_progress[0]} is in_progress (expected {want})",
                ["current_step"],
            )
    _progression(steps, workflow, out, file)
    _decision_log(doc.get("decision_log"), out, file)
    field_names = {f.name for f in workflow.fields} if workflow else set()
    for k in doc:
        if k not in CORE_KEYS and k not in field_names and not k.startswith("x-"):
            _add(out, file, "SR330", f"unknown top-level key {k!r}", [k])
    if workflow is not None:
        out.extend(check_workflow(doc, steps, workflow, file))
    return out.listed(file)


def _ts(value: Any, path: list[str | int], out: list[Diagnostic], file: str) -> datetime | None:
    if value is None:
        return None
    dt = parse_ts(value)
    if dt is None and looks_like_ts(value):
        _add(out, file, "SR340", f"{value!r} is not a real date and time", path)
    return dt


def _future(
    value: datetime | None,
    path: list[str | int],
    opts: RuleOptions,
    out: list[Diagnostic],
    file: str,
) -> None:
    if not value or not opts.now:
        return
    try:
        limit = opts.now + opts.skew
    except OverflowError:  # now at the end of time: nothing can be later
        return
    if value > limit:
        seconds = int(opts.skew.total_seconds())
        where = pointer_join(path)
        _add(
            out, file, "SR305", f"{where} is in the future (more than {seconds} s after now)", path
        )


def _status_rules(
    status: Any,
    step: dict[str, Any],
    sub: Any,
    base: list[str | int],
    out: list[Diagnostic],
    file: str,
) -> None:
    key = base[-1]
    if status == "pending":
        for name in ("started", "completed", "sub_step"):
            if step.get(name) is not None:
                _add(
                    out,
                    file,
                    "SR301",
                    f"step {key} is pending but has {name} set",
                    [*base, name],
                    hint=f"A pending step has no `{name}`: set it to null, or set the status "
                    "the value implies.",
                )
    elif status == "in_progress":
        if step.get("started") is None:
            _add(
                out,
                file,
                "SR301",
                f"step {key} is in_progress but has no started time",
                [*base, "started"],
                hint="Set `started` to when the step started (an RFC 3339 UTC timestamp).",
            )
        if step.get("completed") is not None:
            _add(
                out,
                file,
                "SR301",
                f"step {key} is in_progress but has a completed time",
                [*base, "completed"],
                hint="Set `completed` to null, or the status to complete if it finished.",
            )
    elif status == "complete":
        if step.get("completed") is None:
            msg = f"step {key} is complete but completed is not set"
            _add(out, file, "SR302", msg, [*base, "completed"])
        if sub is not None:
            msg = f"step {key} is complete but sub_step is {sub!r}"
            _add(out, file, "SR303", msg, [*base, "sub_step"])
    elif status == "skipped" and sub is not None:
        _add(
            out,
            file,
            "SR301",
            f"step {key} is skipped but has sub_step {sub!r}",
            [*base, "sub_step"],
            hint="Set `sub_step` to null: a skipped step records no checkpoint.",
        )


def _path_rules(
    paths: Any,
    base: list[str | int],
    opts: RuleOptions,
    out: list[Diagnostic],
    file: str,
    *,
    check_exists: bool,
) -> None:
    if not isinstance(paths, list):
        return
    room = out.room if isinstance(out, Findings) else lambda _code: True
    seen: set[str] = set()
    for i, raw in enumerate(paths):
        if not isinstance(raw, str):
            continue
        bad = path_problem(raw)
        if bad:  # a finding is built only when it will be listed (a list can hold 140,000)
            if room(bad[0]):
                _add(out, file, bad[0], f"{bad[1]}: {raw!r}", [*base, i])
            continue
        if "\\" in raw and room("SR315"):
            _add(out, file, "SR315", f"path uses backslashes: {raw!r}", [*base, i])
        norm = posixpath.normpath(raw.replace("\\", "/"))
        if norm in seen and room("SR313"):
            _add(out, file, "SR313", f"{raw!r} is listed twice", [*base, i])
        seen.add(norm)
        if check_exists and opts.exists is not None and not opts.exists(norm) and room("SR314"):
            _add(out, file, "SR314", f"artifact {raw!r} does not exist", [*base, i])


def path_problem(raw: str) -> tuple[str, str] | None:
    """The code and reason a listed path is unsafe, or None. Lexical: no file system access."""
    if _CONTROL.search(raw):
        return "SR312", "path holds a control character"
    if raw.startswith(("/", "\\")) or _WINDOWS_ABS.match(raw):
        return "SR310", "path is absolute"
    norm = posixpath.normpath(raw.replace("\\", "/"))
    if norm == ".." or norm.startswith("../"):
        return "SR311", "path leaves the repository"
    return None


def _progression(
    steps: dict[str, Any], workflow: Workflow | None, out: list[Diagnostic], file: str
) -> None:
    order = ordered_step_keys(steps, workflow)
    latest = None
    for i, k in enumerate(order):
        st = steps[k]
        if isinstance(st, dict) and st.get("status") in ("in_progress", "complete"):
            latest = i
    if latest is None:
        return
    key = order[latest]
    behind = [
        k
        for k in order[:latest]
        if isinstance(steps[k], dict) and steps[k].get("status") not in ("complete", "skipped")
    ]
    if behind:
        msg = f"earlier step(s) {', '.join(behind)} are neither complete nor skipped"
        _add(out, file, "SR308", f"step {key} has started but {msg}", ["steps", key])


def _decision_log(log: Any, out: list[Diagnostic], file: str) -> None:
    if not isinstance(log, list):
        return
    seen: dict[str, int] = {}
    last = -1
    for i, entry in enumerate(log):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        m = re.match(r"^D([0-9]+)\Z", entry["id"])
        if not m:
            continue
        ptr: list[str | int] = ["decision_log", i, "id"]
        if entry["id"] in seen:
            _add(out, file, "SR320", f"decision id {entry['id']} is used twice", ptr)
        seen[entry["id"]] = i
        n = int(m.group(1))
        if n <= last:
            _add(out, file, "SR321", f"decision id {entry['id']} comes after a higher id", ptr)
        last = max(last, n)
    for i, entry in enumerate(log):
        superseded = entry.get("superseded_by") if isinstance(entry, dict) else None
        if isinstance(superseded, str) and superseded not in seen:
            msg = f"superseded_by {superseded} is not in the log"
            _add(out, file, "SR322", msg, ["decision_log", i, "superseded_by"])


def check_workflow(
    doc: dict[str, Any], steps: dict[str, Any], wf: Workflow, file: str
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if not wf.free_steps:
        for key in steps:
            if wf.step(key) is None:
                msg = f"is not a step of workflow {wf.id!r} (steps: {', '.join(wf.step_keys)})"
                _add(out, file, "SR410", f"step {key!r} {msg}", ["steps", key])
        for wanted in wf.steps:
            if wanted.key not in steps:
                msg = f"step {wanted.key} ({wanted.name}) of workflow {wf.id!r} is missing"
                _add(out, file, "SR411", msg, ["steps"])
    for key, step in steps.items():
        sdef = wf.step(key)
        if sdef is None or not isinstance(step, dict):
            continue
        base = ["steps", key]
        if isinstance(step.get("name"), str) and step["name"] != sdef.name:
            msg = f"step {key} is named {step['name']!r}; workflow {wf.id!r} calls it {sdef.name!r}"
            _add(out, file, "SR412", msg, [*base, "name"])
        agent = step.get("agent")
        if isinstance(agent, str) and agent and agent not in sdef.agents:
            msg = f"step {key} agent {agent!r} is not one of {', '.join(sdef.agents)}"
            _add(out, file, "SR413", msg, [*base, "agent"])
        sub = step.get("sub_step")
        if isinstance(sub, str) and sdef.checkpoints and sub not in sdef.checkpoint_ids:
            if sub in sdef.legacy_checkpoints:
                msg = f"is the legacy name of {sdef.legacy_checkpoints[sub]!r}"
                _add(out, file, "SR416", f"step {key} sub_step {sub!r} {msg}", [*base, "sub_step"])
            else:
                msg = f"{sdef.name}; checkpoints: {', '.join(sdef.checkpoint_ids)}"
                msg = f"step {key} sub_step {sub!r} is not a checkpoint of {msg}"
                _add(out, file, "SR414", msg, [*base, "sub_step"])
        ctx = step.get("context_files_used")
        if sdef.budget and isinstance(ctx, list) and len(ctx) > sdef.budget.max_startup_files:
            msg = f"its startup budget is {sdef.budget.max_startup_files}"
            msg = f"step {key} recorded {len(ctx)} context files; {msg}"
            _add(out, file, "SR415", msg, [*base, "context_files_used"])
    audit = doc.get("review_audit")
    if isinstance(audit, dict) and not wf.free_steps:
        for k in audit:
            reviewed = (
                wf.step(k[len("step_") :]) if isinstance(k, str) and k.startswith("step_") else None
            )
            if reviewed is None or not reviewed.review_audited:
                msg = f"review_audit has {k!r} but workflow {wf.id!r} does not review that step"
                _add(out, file, "SR421", msg, ["review_audit", k])
    fragment = wf.state_fragment()
    if not wf.fragment_check(doc):
        out.extend(schemas.explain_schema(fragment, doc, file=file, code="SR420"))
    return out
