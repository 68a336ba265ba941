"""TodoWrite / Tasks lists merged into the steps of a ``generic`` session (pure: no I/O).

Input: a JSON array of TodoWrite items ``{content, status, activeForm}`` (``id`` and
``priority`` optional) or of Tasks items ``{id, subject, description, status, activeForm}``;
also accepted wrapped as ``{"todos": [...]}``, ``{"tasks": [...]}`` or a hook payload's
``{"tool_input": {"todos": [...]}}``.

Nothing is ever deleted: steps missing from the list stay as they are. Which step an item is
(first match wins, each step taken by at most one item of a list):

1. its ``id``, through ``x-todo-ids.ids`` (ids seen before);
2. its text (``content``, else ``subject``, else ``description``), through
   ``x-todo-ids.texts`` (every text an item of that step has had, the first-seen one
   included), then a step whose ``name`` is that text;
3. its ``activeForm``, through ``x-todo-ids.active_forms``;
4. its place in the list (a rename): items matched by 1–3 that were in the previous list
   (``x-todo-ids.order``) are anchors; between two anchors (or a list end), when the
   unmatched items without an id are exactly as many as the steps of the previous list there
   that no item claimed, they are those steps, in order; when the numbers differ (an item
   was also added or dropped there), or the list has no anchor at all (a new list), an item
   is such a step only if its text is alike (difflib ratio ≥ 0.6, best pairs first; with
   more than 10,000 pairs to compare there, none: SR833). The
   step's ``name`` follows the new text and the text is remembered (so the old and the new
   text both find the step);
5. otherwise it is a new step: its key is the item's id when that is a decimal number not
   used yet, else the next free integer.

Statuses: ``pending`` → pending, ``in_progress`` → in_progress, ``completed`` → complete,
``deleted`` (Tasks) → skipped; others are kept under the step's ``x-legacy`` (SR808) and do
not change the status. A complete or skipped step is never moved back (SR832: use
``session-resume start STEP --force``). Only one step may be in progress (SR809): the one
already in progress if the list still says so, else the first in the list; another step left
in progress by an earlier list becomes pending.
"""

from __future__ import annotations

import difflib
import re
from datetime import datetime

from session_resume import records
from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.timeutil import format_ts
from session_resume.core.workflow import pending_step
from session_resume.core.write_moments import copy_document
from session_resume.importers.common import current_step_of, step_int
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TODO_IDS = "x-todo-ids"
_DECIMAL = re.compile(r"^[0-9]{1,9}\Z")  # an id longer than this never becomes a step key
_STEP_KEY = re.compile(r"^[0-9]+(_[0-9]+)?\Z")
STATUS_MAP = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "complete",
    "deleted": "skipped",
}


# --- the id map ------------------------------------------------------------------------------


def empty_ids() -> dict[str, Any]:
    return {"ids": {}, "texts": {}, "active_forms": {}, "order": []}


def remember(
    ids: dict[str, Any],
    key: str,
    *,
    ident: str | None = None,
    namespace: str | None = None,
    text: str | None = None,
    active_form: str | None = None,
    seen: dict[tuple[str, str], set[str]] | None = None,
) -> None:
    """Record that an item with this id / text / active form is step ``key``. An id maps to
    one step for good; a text may name several steps (duplicate items). ``seen``: the keys of
    each list as a set, kept by a caller remembering many items (a list lookup per item is
    quadratic for one text repeated)."""
    if ident:
        ids["ids"].setdefault(f"{namespace}:{ident}" if namespace else ident, key)
    for table, value in (("texts", text), ("active_forms", active_form)):
        if value:
            keys = ids[table].setdefault(value, [])
            known = None
            if seen is not None:
                known = seen.get((table, value))
                if known is None:
                    known = seen[(table, value)] = set(keys)
            if key not in (keys if known is None else known):
                keys.append(key)
                if known is not None:
                    known.add(key)


def load_ids(doc: dict[str, Any]) -> dict[str, Any]:
    """The document's ``x-todo-ids``, with anything malformed left out."""
    raw = doc.get(TODO_IDS)
    out = empty_ids()
    if not isinstance(raw, dict):
        return out
    if isinstance(raw.get("ids"), dict):
        out["ids"] = {k: v for k, v in raw["ids"].items() if isinstance(v, str)}
    for table in ("texts", "active_forms"):
        if isinstance(raw.get(table), dict):
            out[table] = {
                k: [x for x in v if isinstance(x, str)]
                for k, v in raw[table].items()
                if isinstance(v, list)
            }
    if isinstance(raw.get("order"), list):
        out["order"] = [x for x in raw["order"] if isinstance(x, str)]
    return out


# --- parsing the list --------------------------------------------------------------------------


@record(frozen=True)
class TodoItem:
    index: int
    text: str
    status: Any
    ident: str | None
    active_form: str | None
    raw: dict[str, Any]


class TodoListError(Exception):
    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


def _unwrap(value: Any) -> Any:
    for _ in range(3):
        if not isinstance(value, dict):
            return value
        for k in ("todos", "tasks", "newTodos"):
            if isinstance(value.get(k), list):
                return value[k]
        inner = value.get("tool_input") or value.get("tool_response")
        if inner is None:
            return value
        value = inner
    return value


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


# An agent's todo list holds dozens of items; each becomes a step, so 1 MB of them (22,000)
# made a 4 MB state and took seconds to write (issue 18). Larger lists are refused.
MAX_ITEMS = 10_000


def parse_list(value: Any, file: str = "<stdin>") -> list[TodoItem]:
    """The items of a TodoWrite or Tasks list; raises :class:`TodoListError` (SR830)."""
    items = _unwrap(value)
    if not isinstance(items, list):
        raise TodoListError(
            [
                diag(
                    "SR830",
                    "expected a JSON array of TodoWrite items {content, status, activeForm} "
                    "or Tasks items {id, subject, status}",
                    file=file,
                )
            ]
        )
    if len(items) > MAX_ITEMS:
        raise TodoListError(
            [
                diag(
                    "SR830",
                    f"the list holds {len(items):,} items, more than the {MAX_ITEMS:,} a todo "
                    "list may hold (each becomes a step of the state)",
                    file=file,
                )
            ]
        )
    out = []
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise TodoListError(
                [diag("SR830", f"item {i} is not a JSON object", file=file, pointer=f"/{i}")]
            )
        text = _text(it.get("content")) or _text(it.get("subject")) or _text(it.get("description"))
        ident = it.get("id")
        ident_s = (
            str(ident).strip()
            if isinstance(ident, int | str) and not isinstance(ident, bool) and str(ident).strip()
            else None
        )
        if text is None and ident_s is None:
            raise TodoListError(
                [
                    diag(
                        "SR830",
                        f"item {i} has neither a text (content, subject) nor an id",
                        file=file,
                        pointer=f"/{i}",
                    )
                ]
            )
        out.append(
            TodoItem(i, text or "", it.get("status"), ident_s, _text(it.get("activeForm")), it)
        )
    # The same id twice in one list would make the second item unfindable next time: later
    # occurrences get a positional suffix ("1", "1#2", ...), stable for the same list.
    seen: dict[str, int] = {}
    for n, item in enumerate(out):
        if item.ident is not None:
            seen[item.ident] = seen.get(item.ident, 0) + 1
            if seen[item.ident] > 1:
                out[n] = records.replace(item, ident=f"{item.ident}#{seen[item.ident]}")
    return out


# --- merging ------------------------------------------------------------------------------------


@record
class MergeResult:
    document: dict[str, Any]
    changes: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # the step key of each item, in list order

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def _claim(
    items: list[TodoItem], steps: dict[str, Any], ids: dict[str, Any], notes: list[Diagnostic]
) -> tuple[dict[int, str], dict[int, str]]:
    """Which existing step each item is, and how it was found (rules 1–4)."""
    taken: dict[int, str] = {}
    how: dict[int, str] = {}
    used: set[str] = set()

    def take(it: TodoItem, key: str | None, why: str) -> bool:
        if key is None or key not in steps or key in used or it.index in taken:
            return False
        taken[it.index] = key
        how[it.index] = why
        used.add(key)
        return True

    # A key that cannot be taken now never can later in this list (`used` only grows), so
    # each candidate list is walked once, from where the last item with that text stopped:
    # rescanning it (and sorting every step) per item was quadratic (docs/security.md §6).
    cursors: dict[tuple[str, str], int] = {}

    def take_first(it: TodoItem, table: str, value: str, keys: list[str], why: str) -> bool:
        at = cursors.get((table, value), 0)
        while at < len(keys):
            key = keys[at]
            at += 1
            if take(it, key, why):
                cursors[(table, value)] = at
                return True
        cursors[(table, value)] = at
        return False

    by_name: dict[str, list[str]] = {}
    for step_key in sorted(steps, key=_order):
        name = steps[step_key].get("name")
        if isinstance(name, str):
            by_name.setdefault(name, []).append(step_key)
    for it in items:
        if it.ident is not None:
            take(it, ids["ids"].get(it.ident), "id")
    for it in items:
        if it.index in taken or not it.text:
            continue
        if not take_first(it, "texts", it.text, ids["texts"].get(it.text, []), "text"):
            take_first(it, "names", it.text, by_name.get(it.text, []), "text")
    for it in items:
        if it.index in taken or not it.active_form:
            continue
        forms = ids["active_forms"].get(it.active_form, [])
        take_first(it, "active_forms", it.active_form, forms, "active_form")
    # rule 4: renames. Items matched above that were also in the previous list are anchors;
    # between two anchors (or an end), as many unmatched items without an id as unclaimed
    # steps of the previous list are those steps, in order (only when the list has an
    # anchor); otherwise only look-alike texts pair up.
    prev = ids["order"]
    pos = {k: j for j, k in enumerate(prev)}
    anchors: list[tuple[int, int]] = [(-1, -1)]
    for it in items:
        key = taken.get(it.index)
        if key in pos and pos[key] > anchors[-1][1]:
            anchors.append((it.index, pos[key]))
    anchored = len(anchors) > 1  # a list sharing no item with the previous one is a new list
    anchors.append((len(items), len(prev)))
    for (na, pa), (nb, pb) in zip(anchors, anchors[1:], strict=False):
        old = [prev[j] for j in range(pa + 1, pb) if prev[j] in steps and prev[j] not in used]
        new = [it for it in items[na + 1 : nb] if it.index not in taken and it.ident is None]
        if anchored and old and len(old) == len(new):
            for it, key in zip(new, old, strict=True):
                take(it, key, "position")
        elif old and new and len(old) * len(new) > LIKENESS_PAIRS:
            notes.append(
                diag(
                    "SR833",
                    f"{len(new)} unmatched items and {len(old)} unclaimed steps of the previous "
                    f"list are more than {LIKENESS_PAIRS} pairs to compare; none is paired by "
                    "likeness, the items are new steps",
                    pointer=f"/{new[0].index}",
                )
            )
        elif old and new:  # also an insertion or a removal here: pair only look-alikes
            pairs = sorted(
                (
                    (_likeness(steps[key].get("name"), it.text), -j, -it.index, key, it)
                    for j, key in enumerate(old)
                    for it in new
                ),
                key=lambda x: x[:3],
                reverse=True,
            )
            for score, _j, _i, key, it in pairs:
                if score >= LIKENESS:
                    take(it, key, "position")
    return taken, how


LIKENESS = 0.6
# Pairing look-alikes compares every item with every step (difflib each time): quadratic, so
# a gap with more pairs than this pairs none (2,000 new items took 106 s; docs/security.md §6).
LIKENESS_PAIRS = 10_000


def _likeness(a: Any, b: str) -> float:
    if not isinstance(a, str) or not a or not b:
        return 0.0
    return difflib.SequenceMatcher(None, a.casefold(), b.casefold()).ratio()


def _order(key: str) -> tuple[int, int]:
    if not _STEP_KEY.match(key):
        return (1 << 30, 0)
    major, _, minor = key.partition("_")
    return int(major), int(minor or 0)


def _add_new_steps(
    items: list[TodoItem],
    steps: dict[str, Any],
    mapped_ids: set[str],
    taken: dict[int, str],
    how: dict[int, str],
    res: MergeResult,
) -> None:
    """Rule 5: a step for each item no step claimed, keyed by the item's decimal id when that
    key is free, else by the next number."""
    # rule 5: new steps (the highest number kept as it grows: linear in the list, not quadratic)
    highest = max((step_int(k) for k in steps if _STEP_KEY.match(k)), default=0)

    def next_free() -> str:
        nonlocal highest
        highest += 1
        return str(highest)

    for it in items:
        if it.index in taken:
            continue
        key = None
        if it.ident is not None and _DECIMAL.match(it.ident):
            cand = it.ident.lstrip("0") or "0"  # its decimal value, with no int() of its
            # digits (over 4,300 of them int() refuses)
            if cand not in steps and cand not in mapped_ids:
                key = cand
                if _STEP_KEY.match(cand):
                    highest = max(highest, step_int(cand))
        key = key or next_free()
        steps[key] = pending_step(it.text or f"task {it.ident}")
        taken[it.index] = key
        how[it.index] = "new"
        res.changes.append({"step": key, "change": "added", "text": it.text, "id": it.ident})


def merge(doc: dict[str, Any], items: list[TodoItem], now: datetime) -> MergeResult:
    """Merge ``items`` into the steps of ``doc`` (a v3.0 generic state). Pure: returns a new
    document; ``changes`` lists what happened (empty: nothing to write)."""
    if not items:  # an emptied list says nothing about the steps, and keeps the last order
        return MergeResult(copy_document(doc))
    new: dict[str, Any] = copy_document(doc)  # a JSON document: no memo needed
    steps: dict[str, Any] = new.setdefault("steps", {})
    ids = load_ids(new)
    res = MergeResult(new)
    ts = format_ts(now)
    taken, how = _claim(items, steps, ids, res.diagnostics)

    _add_new_steps(items, steps, set(ids["ids"].values()), taken, how, res)

    # statuses wanted by the list
    wanted: dict[int, str | None] = {}
    for it in items:
        status = STATUS_MAP.get(it.status) if isinstance(it.status, str) else None
        if status is None and it.status is not None:
            key = taken[it.index]
            steps[key].setdefault("x-legacy", {})["todo_status"] = {
                "original": it.status,
                "code": "SR808",
            }
            res.diagnostics.append(
                diag(
                    "SR808",
                    f"item {it.index} ({it.text or it.ident}) has status {it.status!r}, "
                    "not pending/in_progress/completed/deleted; step "
                    f"{key}'s status is unchanged and the value is kept under x-legacy",
                    pointer=f"/{it.index}/status",
                )
            )
        wanted[it.index] = status
    running = [it for it in items if wanted[it.index] == "in_progress"]
    keep: str | None = None
    if running:
        already = [it for it in running if steps[taken[it.index]].get("status") == "in_progress"]
        keep = taken[(already or running)[0].index]
        if len(running) > 1:
            res.diagnostics.append(
                diag(
                    "SR809",
                    f"{len(running)} items are in_progress; only step {keep} may be in "
                    "progress, the others keep their status",
                    pointer="",
                )
            )
            for it in running:
                if taken[it.index] != keep:
                    wanted[it.index] = None

    for it in items:
        key = taken[it.index]
        step = steps[key]
        _rename(step, key, it, how[it.index], res)
        target = wanted[it.index]
        if target is not None:
            _apply(step, key, target, ts, it, res)

    if keep is not None:
        for key, step in steps.items():
            if key != keep and step.get("status") == "in_progress":
                res.changes.append(
                    {"step": key, "change": "status", "from": "in_progress", "to": "pending"}
                )
                res.diagnostics.append(
                    diag(
                        "SR809",
                        f"step {key} was in progress; step {keep} is now, so step {key} is "
                        "pending again",
                        pointer=f"/steps/{key}",
                    )
                )
                step.update(status="pending", started=None, completed=None, sub_step=None)
        new["current_step"] = step_int(keep)
    elif not any(s.get("status") == "in_progress" for s in steps.values()):
        new["current_step"] = current_step_of(steps) or new.get("current_step", 0)

    seen: dict[tuple[str, str], set[str]] = {}
    for it in items:
        key = taken[it.index]
        remember(ids, key, ident=it.ident, text=it.text, active_form=it.active_form, seen=seen)
    ids["order"] = [taken[it.index] for it in items]
    res.keys = list(ids["order"])
    if ids != load_ids(doc) or TODO_IDS not in doc:
        new[TODO_IDS] = ids
    if not res.changes and new != doc:
        res.changes.append({"change": "metadata"})  # remembered ids, texts or the list order
    return res


def _rename(step: dict[str, Any], key: str, it: TodoItem, how: str, res: MergeResult) -> None:
    if how in ("id", "active_form", "position") and it.text and step.get("name") != it.text:
        res.changes.append(
            {"step": key, "change": "renamed", "from": step.get("name"), "to": it.text, "by": how}
        )
        step["name"] = it.text


def _apply(
    step: dict[str, Any], key: str, target: str, ts: str, it: TodoItem, res: MergeResult
) -> None:
    cur = step.get("status")
    if target == cur:
        return
    if cur in ("complete", "skipped"):
        res.diagnostics.append(
            diag(
                "SR832",
                f"item {it.index} ({it.text or it.ident}) says {it.status!r} but step {key} is "
                f"{cur}; a finished step is not reopened by a todo list (use `session-resume "
                f"start {key} --force`)",
                pointer=f"/{it.index}/status",
            )
        )
        return
    if target == "in_progress":
        step.update(status="in_progress", started=ts, completed=None, sub_step=None)
        prev = step.get("attempts")
        step["attempts"] = (prev if isinstance(prev, int) and not isinstance(prev, bool) else 0) + 1
    elif target == "complete":
        step.update(status="complete", completed=ts, sub_step=None)
    elif target == "pending":
        step.update(status="pending", started=None, completed=None, sub_step=None)
    elif target == "skipped":
        step.update(status="skipped", sub_step=None, completed=None)
        step["skip_reason"] = "deleted from the todo list"
    res.changes.append({"step": key, "change": "status", "from": cur, "to": target})
