"""What the write moments (:mod:`session_resume.core.write_moments`) share: the coded
refusal (:class:`TransitionError`), the copy of a document they change, the step lookups and the
one form of a listed path (spec.md §4). Pure core: no I/O."""

from __future__ import annotations

import copy
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence

from session_resume.core.codes import diag
from session_resume.core.diagnostics import DiagnosticsError, pointer_join
from session_resume.core.rules import path_problem
from session_resume.core.timeutil import parse_ts
from session_resume.core.workflow import StepDef, Workflow, pending_step

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STEP_KEY = re.compile(r"^[0-9]+(_[0-9]+)?\Z")


class TransitionError(DiagnosticsError):
    """The change is not allowed; ``diagnostics`` say why and what to do. Nothing changed."""


def copy_document(value: Any) -> Any:
    """A copy of a JSON document that shares nothing mutable with it (what ``copy.deepcopy``
    gives for JSON values, a quarter of its time: no memo, no dispatch by type). Anything that
    is not a JSON value is deep-copied as before."""
    if isinstance(value, dict):
        return {k: copy_document(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_document(v) for v in value]
    if value is None or isinstance(value, (str, int, float)):
        return value  # immutable (bool is an int)
    return copy.deepcopy(value)


def refuse(code: str, message: str, pointer: str = "") -> TransitionError:
    return TransitionError([diag(code, message, pointer=pointer)])


def pointer_to(*parts: str | int) -> str:
    return pointer_join(list(parts))


# --- helpers -----------------------------------------------------------------------------


def step_label(key: str, step: Mapping[str, Any] | None, sdef: StepDef | None) -> str:
    name = sdef.name if sdef is not None else (step or {}).get("name")
    return f"{key} ({name})" if isinstance(name, str) and name else key


def steps_of(doc: dict[str, Any]) -> dict[str, Any]:
    steps = doc.get("steps")
    if not isinstance(steps, dict):
        steps = {}
        doc["steps"] = steps
    return steps


def check_key(wf: Workflow, key: str) -> None:
    if not isinstance(key, str) or not STEP_KEY.match(key):
        raise refuse(
            "SR711",
            f"{key!r} is not a step key (digits, optionally `_` and digits, e.g. 1 or 3_5)",
        )
    if not wf.free_steps and wf.step(key) is None:
        raise refuse(
            "SR711",
            f"step {key!r} is not a step of workflow {wf.id!r} (steps: {', '.join(wf.step_keys)})",
            pointer_to("steps", key),
        )


def existing_step(doc: dict[str, Any], wf: Workflow, key: str) -> dict[str, Any]:
    """The step record to change (a workflow step missing from the document is added)."""
    check_key(wf, key)
    steps = steps_of(doc)
    step = steps.get(key)
    if isinstance(step, dict):
        return step
    sdef = wf.step(key)
    if sdef is None:
        raise refuse(
            "SR711",
            f"step {key!r} is not in the state yet; start it first "
            f"(`session-resume start {key} --name NAME`)",
            pointer_to("steps", key),
        )
    step = pending_step(sdef.name, sdef.default_agent)
    steps[key] = step
    return step


def int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_paths(paths: Iterable[str], pointer: str) -> list[str]:
    out = []
    problems = []
    for raw in paths:
        if not isinstance(raw, str) or not raw:
            problems.append(diag("SR710", "a listed path is empty", pointer=pointer))
            continue
        bad = path_problem(raw)
        if bad:
            problems.append(
                diag(
                    bad[0],
                    f"{bad[1]}: {raw!r}; list files as paths relative to the repository "
                    "root, inside it",
                    pointer=pointer,
                )
            )
            continue
        out.append(raw)
    if problems:
        raise TransitionError(problems)
    return out


def one_form(path: str, base: str | None) -> str:
    """A listed path in its one stored form (docs/spec.md §4): repository-relative POSIX,
    normalised (``./``, doubled and trailing separators gone), and a bare file name resolved
    against the session directory ``base`` (repository-relative; None: unknown, kept)."""
    p = posixpath.normpath(path) if path and not path.startswith("/") else path
    if base not in (None, "", ".") and "/" not in p and p not in (".", ".."):
        p = f"{base}/{p}"
    return p


def one_form_list(target: list[Any], base: str | None) -> None:
    """``target`` (a step's listed paths) in the one form, each once, in order."""
    seen: set[str] = set()
    out: list[Any] = []
    for p in target:
        if isinstance(p, str):
            p = one_form(p, base)
            if p in seen:
                continue
            seen.add(p)
        out.append(p)
    target[:] = out


def append_unique(target: list[Any], new: Iterable[str]) -> None:
    seen = {posixpath.normpath(p.replace("\\", "/")) for p in target if isinstance(p, str)}
    for p in new:
        norm = posixpath.normpath(p.replace("\\", "/"))
        if norm not in seen:
            target.append(p)
            seen.add(norm)


def started_at_gate(events: Sequence[Mapping[str, Any]], key: str) -> bool:
    """Whether the latest event of step ``key`` in ``events`` (the worklog's tail) is its
    start by an orchestrator ``transition`` (a ``step_start`` naming the step it completed),
    with no checkpoint since: the step was handed over at a gate and did no recorded work."""
    for ev in reversed(events):
        if ev.get("step") != key:
            continue
        if ev.get("event") == "step_start":
            detail = ev.get("detail")
            return isinstance(detail, dict) and "completed" in detail
        if ev.get("event") in ("checkpoint", "step_complete", "step_skip"):
            return False
    return False


APPROVED = "approved"


def gate_approval(doc: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    """The ``decision_log`` entry recording the user's approval of step ``key``'s gate
    (docs/spec.md §4.1), or None: the last entry whose ``choice`` is ``approved`` and whose
    ``step`` is ``key`` (as a string or an integer), unless both it and the step carry a
    time and the entry's is earlier than the step's ``started`` (an approval of an earlier
    run). An approval imported from dotagent (``user_checkpoints``) has this form too."""
    log = doc.get("decision_log")
    steps = doc.get("steps")
    step = steps.get(key) if isinstance(steps, dict) else None
    started = step.get("started") if isinstance(step, dict) else None
    for entry in reversed(log if isinstance(log, list) else []):
        if not isinstance(entry, dict) or entry.get("choice") != APPROVED:
            continue
        at = entry.get("step")
        if isinstance(at, bool) or str(at) != key:
            continue
        ts = entry.get("timestamp")
        if isinstance(ts, str) and isinstance(started, str) and _earlier(ts, started):
            continue
        return entry
    return None


def _earlier(a: str, b: str) -> bool:
    ta, tb = parse_ts(a), parse_ts(b)
    return ta is not None and tb is not None and ta < tb
