"""Rendering from Jinja templates (``templates/``): the ``00-handoff.md`` companion of a state,
and the skill docs (``SKILL.md``, ``SKILL.digest.md``, ``references/*.md``) of a workflow.

Pure: state and workflow in, text out; the clock is injected. Writing the files is the
command's job (:mod:`session_resume.commands.render`).

Escaping. The templates run with autoescape off (the output is Markdown, not HTML), but the
environment's ``finalize`` refuses any ``{{ value }}`` that did not go through one of this
module's escaping filters (an :class:`Escaped` string) or is not an integer, so a template
cannot print a raw value by mistake. Filters:

``md``
    Untrusted text (everything that comes from a state file): rendered as literal text on one
    line. Line breaks and other control characters become spaces; Markdown punctuation that
    could start markup (``\\ ` * _ [ ] | ~ # $``) is backslash-escaped, ``&`` too, ``<`` and
    ``>`` become ``&lt;`` and ``&gt;``, and a leading block marker (``-``, ``+``, ``=``,
    ``1.``) is escaped. So a value can never open a heading, a list item, a block quote, a
    table cell, a link, emphasis, a code span or HTML.
``md_cell``
    Trusted Markdown from the project's own schema and workflow files (descriptions with
    code spans): flattened to one line, ``|`` escaped for table cells, ``<``/``>`` outside
    code spans written as entities.
``code`` / ``code_cell``
    An identifier as a code span (backtick fence longer than any backtick run inside);
    ``code_cell`` also escapes ``|`` for tables.
``yaml_str``
    A YAML (JSON-compatible) double-quoted scalar, for the skill frontmatter.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .handoff_check import HANDOFF, MAX_LINES, SECTIONS
from .workflow import StepDef, Workflow

__all__ = [
    "ACTION_DOCS",
    "HANDOFF",
    "MAX_LINES",
    "SECTIONS",
    "SKILL_FILES",
    "Escaped",
    "md_inline",
    "render_handoff",
    "render_skill",
]

MAX_VALUE_CHARS = 300
DIGEST_MAX_LINES = 60
SKILL_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SKILL_FILES = (
    "SKILL.md",
    "references/state-file-schema.md",
    "references/context-budgets.md",
    "references/recovery-protocol.md",
)
DIGEST_FILE = "SKILL.digest.md"
SKILL_NOTICE = (
    "<!-- generated from schema/ and templates/ by session-resume (render skill); do not edit -->"
)
FRONTMATTER_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")


class Escaped(str):
    """Text that an escaping filter produced: the only kind of string a template may print."""

    __slots__ = ()


# --- escaping ----------------------------------------------------------------------------

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_LEADING_MARKER = re.compile(r"^([-+=]|[0-9]{1,9}[.)])")
_ALWAYS = {
    "\\": "\\\\",
    "`": "\\`",
    "*": "\\*",
    "[": "\\[",
    "]": "\\]",
    "|": "\\|",
    "~": "\\~",
    "#": "\\#",
    "$": "\\$",
    "&": "\\&",
    "<": "&lt;",
    ">": "&gt;",
}


def flatten(value: object, limit: int | None = MAX_VALUE_CHARS) -> str:
    """One line: control characters, line and paragraph separators and bidi controls become
    spaces, runs of spaces collapse, the ends are trimmed; cut at ``limit`` characters."""
    text = value if isinstance(value, str) else _plain(value)
    chars = [
        " " if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in text
    ]
    flat = re.sub(" {2,}", " ", "".join(chars)).strip()
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat


def _plain(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


def md_inline(value: object) -> Escaped:
    """Untrusted ``value`` as literal Markdown text on one line (see the module docstring)."""
    text = flatten(value)
    out = []
    n = len(text)
    for i, ch in enumerate(text):
        if ch in _ALWAYS:
            out.append(_ALWAYS[ch])
        elif ch == "_":
            # An underscore inside a word never delimits emphasis (CommonMark §6.2); keep
            # `phase_2_waf` readable and escape every other one.
            inside = 0 < i < n - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
            out.append("_" if inside else "\\_")
        else:
            out.append(ch)
    escaped = "".join(out)
    m = _LEADING_MARKER.match(escaped)
    if m:
        marker = m.group(1)
        escaped = marker[:-1] + "\\" + marker[-1] + escaped[len(marker) :]
    return Escaped(escaped)


_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def md_cell(value: object) -> Escaped:
    """Trusted Markdown (the project's own descriptions) made safe for one table cell."""
    text = flatten(value, limit=None)
    out = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_cell_text(text[pos : m.start()]))
        out.append(m.group(0).replace("|", "\\|"))
        pos = m.end()
    out.append(_cell_text(text[pos:]))
    return Escaped("".join(out))


def _cell_text(s: str) -> str:
    return s.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def code(value: object, *, cell: bool = False) -> Escaped:
    """``value`` as a code span."""
    text = flatten(value, limit=None)
    longest = max((len(r) for r in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    span = f"{fence}{pad}{text}{pad}{fence}"
    return Escaped(span.replace("|", "\\|") if cell else span)


def yaml_str(value: object) -> Escaped:
    """A double-quoted scalar (JSON string syntax, which YAML 1.2 reads as the same string)."""
    return Escaped(json.dumps(flatten(value, limit=None), ensure_ascii=False))


def _finalize(value: Any) -> Any:
    if isinstance(value, Escaped) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    from jinja2 import TemplateRuntimeError

    raise TemplateRuntimeError(
        f"a template printed {value!r} without an escaping filter (md, md_cell, code, yaml_str)"
    )


@functools.cache
def _env() -> Any:
    import jinja2

    from .resources import templates_dir

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = md_inline
    env.filters["md_cell"] = md_cell
    env.filters["code"] = code
    env.filters["code_cell"] = functools.partial(code, cell=True)
    env.filters["yaml_str"] = yaml_str
    return env


def _render(template: str, **context: Any) -> str:
    text: str = _env().get_template(template).render(**context)
    return text


# --- the handoff -------------------------------------------------------------------------


@dataclass
class Cut:
    """A list shown in a handoff section: the items kept and how many were cut."""

    items: list[Any]
    more: int = 0


def _fit(lists: Sequence[Sequence[Any]], budget: int) -> list[Cut]:
    """Cut the lists so that together they take at most ``budget`` lines. An empty list takes
    one line ("None"); a cut list shows its first items and a "… and N more" line. The longest
    list gives up a line first (the later one on a tie), never below two lines."""
    caps = [max(1, len(x)) for x in lists]
    while sum(caps) > budget:
        i = max(range(len(caps)), key=lambda j: (caps[j], j))
        if caps[i] <= 2:
            raise ValueError("the handoff template leaves no room for its lists")
        caps[i] -= 1
    out = []
    for items, cap in zip(lists, caps, strict=True):
        if len(items) <= cap:
            out.append(Cut(list(items)))
        else:
            out.append(Cut(list(items[: cap - 1]), len(items) - (cap - 1)))
    return out


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _paths(values: Iterable[object], limit: int | None = None) -> Cut:
    seen: list[str] = []
    for v in values:
        if isinstance(v, str) and v not in seen:
            seen.append(v)
    if limit is None or len(seen) <= limit:
        return Cut([md_inline(p) for p in seen])
    return Cut([md_inline(p) for p in seen[:limit]], len(seen) - limit)


def _decision_value(value: object) -> Escaped | None:
    if value is None or value == "":
        return None
    return md_inline(value)


def handoff_context(
    doc: dict[str, Any], workflow: Workflow, *, now: datetime, decision: dict[str, Any]
) -> dict[str, Any]:
    """Everything the handoff template shows, escaped, before the lists are cut."""
    from .rules import ordered_step_keys
    from .timeutil import format_ts, parse_ts

    steps_doc = doc.get("steps") if isinstance(doc.get("steps"), dict) else {}
    assert isinstance(steps_doc, dict)
    order = ordered_step_keys(steps_doc, workflow)
    steps = []
    last_complete = "0"
    for key in order:
        st = steps_doc[key] if isinstance(steps_doc[key], dict) else {}
        status = _str(st.get("status"))
        if status == "complete":
            last_complete = key
        steps.append(
            {
                "key": md_inline(key),
                "name": md_inline(_str(st.get("name"))),
                "status": status,
                "sub_step": md_inline(st["sub_step"]) if st.get("sub_step") is not None else None,
                "paths": _paths(_list(st.get("artifacts")), limit=3),
                "skip_reason": md_inline(st["skip_reason"])
                if st.get("skip_reason") is not None
                else None,
            }
        )

    decisions_doc = doc.get("decisions") if isinstance(doc.get("decisions"), dict) else {}
    assert isinstance(decisions_doc, dict)
    declared = [d.key for d in workflow.decisions if d.key in decisions_doc]
    keys = declared + [k for k in decisions_doc if k not in declared]
    decisions: list[dict[str, Any]] = [
        {"kind": "key", "key": md_inline(k), "value": _decision_value(decisions_doc[k])}
        for k in keys
    ]
    log = [e for e in _list(doc.get("decision_log")) if isinstance(e, dict)]
    for entry in reversed(log):  # the newest first: they matter most to the next step
        decisions.append(
            {
                "kind": "log",
                "id": md_inline(entry.get("id", "")),
                "title": md_inline(entry.get("title", "")),
                "choice": md_inline(entry.get("choice", "")),
            }
        )

    findings = [md_inline(f) for f in _list(doc.get("open_findings"))]

    artifacts: list[object] = []
    for key in order:
        st = steps_doc[key] if isinstance(steps_doc[key], dict) else {}
        artifacts.extend(_list(st.get("artifacts")))

    state_updated = parse_ts(doc.get("updated"))
    shown = now if state_updated is None or now >= state_updated else state_updated
    iac = doc.get("iac_tool") or (decisions_doc.get("iac_tool") if decisions_doc else None)
    header = {
        "project": md_inline(_str(doc.get("project"))),
        "step": md_inline(last_complete),
        "updated": md_inline(format_ts(shown)),
        "apex": workflow.id == "apex",
        "workflow": md_inline(workflow.id),
        "iac": _decision_value(iac),
        "branch": _decision_value(doc.get("branch")),
    }

    target = decision.get("step")
    sdef = workflow.step(target) if isinstance(target, str) else None
    skip = _paths(decision.get("skip_files") or [], limit=4)
    startup = _paths(decision.get("startup_files") or [], limit=None)
    next_ctx = {
        "action": decision.get("action", ""),
        "action_text": md_inline(decision.get("action", "")),
        "step": md_inline(target) if target else None,
        "name": md_inline(decision.get("step_name") or (sdef.name if sdef else "")),
        "sub_step": md_inline(decision["sub_step"])
        if decision.get("sub_step") is not None
        else None,
        "next_checkpoint": md_inline(decision["next_checkpoint"])
        if decision.get("next_checkpoint") is not None
        else None,
        "skip": skip,
        "startup": startup,
        "max_files": sdef.budget.max_startup_files if sdef and sdef.budget else None,
        "findings": len(findings),
    }
    facts = _skill_facts(doc, decisions_doc, workflow, sdef, target)
    return {
        "header": header,
        "steps": steps,
        "decisions": decisions,
        "findings": findings,
        "next": next_ctx,
        "facts": facts,
        "artifacts": _paths(artifacts).items,
    }


def _skill_facts(
    doc: dict[str, Any],
    decisions: dict[str, Any],
    wf: Workflow,
    sdef: StepDef | None,
    target: object,
) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = [
        {"label": md_inline("Workflow"), "value": md_inline(f"{wf.id} (version {wf.version})")}
    ]
    if "region" in doc or "region" in decisions:
        region = doc.get("region") or decisions.get("region") or "(not decided)"
        facts.append({"label": md_inline("Region"), "value": md_inline(region)})
    if "complexity" in decisions or any(d.key == "complexity" for d in wf.decisions):
        value = decisions.get("complexity") or "standard (not set)"
        facts.append({"label": md_inline("Complexity"), "value": md_inline(value)})
    if sdef is None:
        if target:
            facts.append(
                {"label": md_inline("Next step"), "value": md_inline(f"{target} (free step)")}
            )
        return facts
    facts.append(
        {"label": md_inline(f"Step {sdef.key} agent"), "value": md_inline(" or ".join(sdef.agents))}
    )
    if sdef.budget is not None:
        files = ", ".join(sdef.budget.startup_files) or "none"
        facts.append(
            {
                "label": md_inline(f"Step {sdef.key} startup budget"),
                "value": md_inline(f"at most {sdef.budget.max_startup_files} files: {files}"),
            }
        )
    if sdef.checkpoints:
        facts.append(
            {
                "label": md_inline(f"Step {sdef.key} checkpoints"),
                "value": md_inline(" → ".join(sdef.checkpoint_ids)),
            }
        )
    if sdef.gate:
        gate = sdef.gate
        text = f"{gate.get('id', '')} ({gate.get('kind', '')}"
        text += ", session break recommended)" if gate.get("session_break") else ")"
        facts.append({"label": md_inline(f"Step {sdef.key} gate"), "value": md_inline(text)})
    if sdef.review_audited:
        facts.append(
            {
                "label": md_inline(f"Step {sdef.key} review"),
                "value": md_inline(f"challenger review recorded in review_audit.step_{sdef.key}"),
            }
        )
    return facts


def render_handoff(
    doc: dict[str, Any],
    workflow: Workflow,
    *,
    now: datetime,
    decision: dict[str, Any] | None = None,
) -> str:
    """The ``00-handoff.md`` of a (schema-valid) v3.0 state: the header, the six sections in
    order, at most :data:`MAX_LINES` lines.

    ``Updated:`` is ``now`` (the render time), or the state's own ``updated`` if that is
    later (clock skew), so a freshly rendered handoff is never older than its state.
    ``decision``: the resume decision to describe; by default :func:`decide.decide` for the
    orchestrator on this state alone (no lease: the handoff describes the state).
    """
    from .decide import Snapshot, decide

    if decision is None:
        decision = decide(Snapshot(state_status="ok", document=doc), None, now, workflow)
    ctx = handoff_context(doc, workflow, now=now, decision=decision)
    lists = [ctx["steps"], ctx["decisions"], ctx["findings"], ctx["facts"], ctx["artifacts"]]
    empty = _handoff_text(ctx, [Cut([]) for _ in lists])
    budget = MAX_LINES - len(empty.splitlines()) + len(lists)
    text = _handoff_text(ctx, _fit(lists, budget))
    lines = text.splitlines()
    if len(lines) > MAX_LINES:  # a template change broke the budget: never write it
        raise ValueError(f"rendered handoff has {len(lines)} lines (max {MAX_LINES})")
    return text


def _handoff_text(ctx: dict[str, Any], cuts: list[Cut]) -> str:
    steps, decisions, findings, facts, artifacts = cuts
    return _render(
        "handoff.md.j2",
        header=ctx["header"],
        next=ctx["next"],
        steps=steps,
        decisions=decisions,
        findings=findings,
        facts=facts,
        artifacts=artifacts,
        sections=[Escaped(s) for s in SECTIONS],
    )


# --- the skill docs ----------------------------------------------------------------------

# The resume actions of decide.ACTIONS: when each happens, its reason code, what to do.
ACTION_DOCS: dict[str, tuple[str, str, str]] = {
    "fresh_start": (
        "SR700",
        "There is no state file (and no usable `.bak`).",
        "Create the state: `session-resume init PROJECT --workflow WORKFLOW`, then start the "
        "first step.",
    ),
    "needs_recovery": (
        "SR110, SR120, SR130",
        "The state is zero bytes or corrupt, or it is missing while a valid `.bak` exists.",
        "`session-resume recover DIR`: restores `.bak` if it validates, else recreates a fresh "
        "state; the corrupt file is kept. Then ask again.",
    ),
    "migrate_first": (
        "SR140",
        "The state is version 1.0 or 2.0 (a missing `schema_version` means 1.0).",
        "`session-resume migrate DIR` (`--dry-run` shows the JSON Patch first). No step "
        "work before.",
    ),
    "refuse_newer_version": (
        "SR141",
        "The state's version is newer than this tool knows.",
        "Stop and write nothing; upgrade session-resume.",
    ),
    "invalid_state": (
        "SR209",
        "The 3.0 state fails its schema, has a bad version, or its path was refused.",
        "`session-resume validate DIR` lists the problems; fix them before any step work.",
    ),
    "start": (
        "SR701",
        "The step is pending.",
        "`session-resume start STEP --project PROJECT`, then load only the step's startup files.",
    ),
    "restart_step": (
        "SR702",
        "The step is in progress without a checkpoint.",
        "Start the step over from its beginning: `session-resume start STEP --project PROJECT`.",
    ),
    "resume_from_checkpoint": (
        "SR703",
        "The step is in progress at a checkpoint (`sub_step`).",
        "Continue after `sub_step`; do not re-read `skip_files`; the next write is "
        "`session-resume checkpoint STEP NEXT_CHECKPOINT --project PROJECT`, or "
        "`session-resume complete STEP --project PROJECT` after the last checkpoint.",
    ),
    "offer_rerun": (
        "SR704",
        "The step is already complete.",
        "Tell the user; re-run only when asked: `session-resume start STEP --force --project "
        "PROJECT`.",
    ),
    "next_step": (
        "SR705",
        "The step was skipped.",
        "Go on with the step named in `next_step`.",
    ),
    "prerequisites_incomplete": (
        "SR706",
        "A step agent was invoked directly while earlier steps (`incomplete`) are neither "
        "complete nor skipped.",
        "Warn the user and offer two choices: continue anyway (`session-resume start STEP "
        "--force --project PROJECT`) or hand over to the orchestrator.",
    ),
    "session_active": (
        "SR511",
        "Another live session holds the lease `00-session.active`.",
        "Do not write. Wait for it to end, or take over explicitly with `session-resume "
        "session start --takeover --project PROJECT` (logged).",
    ),
    "workflow_complete": (
        "SR707",
        "Orchestrator only: no step is pending or in progress.",
        "Nothing is left to run; report to the user.",
    ),
    "unknown_step": (
        "SR711",
        "The step key is not a step of the workflow.",
        "Use a step key of the workflow (see references/context-budgets.md).",
    ),
}

# The write moments, each with the exact CLI call (one atomic whole-document write each).
WRITE_MOMENTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "Step start",
        ("session-resume start STEP",),
        "`status` becomes `in_progress`, `started` is set (a step in progress is restarted).",
    ),
    (
        "Sub-step checkpoint reached",
        ("session-resume checkpoint STEP SUB_STEP --artifact PATH --context-file PATH",),
        "`sub_step` is set to the checkpoint id; artifacts and loaded context files are "
        "appended (repeat the options for several files).",
    ),
    (
        "Step done",
        ("session-resume complete STEP",),
        "`status` becomes `complete`, `completed` is set, `sub_step` is cleared.",
    ),
    (
        "Decision made",
        (
            "session-resume decide KEY VALUE",
            'session-resume decide --log --title "TITLE" --choice "CHOICE" --rationale "RATIONALE"',
        ),
        "`decisions[KEY]` is set (checked against the workflow's allowed values), or a "
        "`decision_log` entry with the next `D###` id is appended.",
    ),
    (
        "Challenger review finding",
        ('session-resume finding add "TITLE"', 'session-resume finding resolve "TITLE"'),
        "An unresolved must-fix title is added to `open_findings`, and removed once resolved.",
    ),
)

# Further commands an agent uses around the write moments: (what, command).
OTHER_COMMANDS: tuple[tuple[str, str], ...] = (
    (
        "At an approval gate, in one write: complete A, record decisions, start B",
        "session-resume transition --complete A --start B --decision KEY=VALUE",
    ),
    (
        "Take the lease when a session begins (prints the session id)",
        "session-resume session start",
    ),
    ("Refresh the lease's heartbeat during long work without writes", "session-resume ping"),
    ("Release the lease when the session ends", "session-resume session end"),
    ("Rewrite the handoff at every gate, before showing it", "session-resume render handoff DIR"),
    (
        "What may the step load at startup, and what must it not re-read",
        "session-resume budget STEP",
    ),
)

# Codes a reader meets when it reads, recovers or migrates (from the code catalogue).
RECOVERY_CODES = (
    "SR110",
    "SR111",
    "SR112",
    "SR113",
    "SR114",
    "SR115",
    "SR120",
    "SR121",
    "SR122",
    "SR123",
    "SR124",
    "SR130",
    "SR140",
    "SR141",
    "SR142",
    "SR150",
    "SR151",
    "SR152",
    "SR161",
    "SR162",
    "SR170",
)


def skill_name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid Agent Skills name, or None."""
    if not 1 <= len(name) <= 64:
        return "a skill name has 1 to 64 characters"
    if not SKILL_NAME.match(name):
        return (
            "a skill name has lowercase letters, digits and single hyphens, and does not "
            "start or end with a hyphen"
        )
    return None


def _with_session(command: str, session: str) -> str:
    """The command as an agent types it: writer commands name the session."""
    if " DIR" in command:
        return command.replace(" DIR", f" {session}")
    return f"{command} --project PROJECT"


def _schema_tables() -> list[dict[str, Any]]:
    from .resources import load_schema

    schema = load_schema("session-state/3.0.json")
    tables = [_object_table("Top level", "top-level", schema)]
    for name, sub in schema.get("$defs", {}).items():
        if "properties" in sub:
            tables.append(_object_table(name, name, sub))
            for pname, psub in sub["properties"].items():
                if "properties" in psub:
                    tables.append(_object_table(f"{name}.{pname}", f"{name}.{pname}", psub))
        else:
            tables.append(
                {
                    "title": md_inline(name),
                    "anchor": name,
                    "description": md_cell(_schema_md(sub)),
                    "type": _type_of(sub, detailed=True),
                    "rows": None,
                }
            )
    return tables


def _schema_md(node: dict[str, Any]) -> str:
    """A schema's description as Markdown (the plain ``description`` is derived from it)."""
    return str(node.get("markdownDescription", node.get("description", "")))


def _anchor(title: str) -> str:
    """GitHub's heading anchor for a plain ASCII heading."""
    return re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")


def _object_table(title: str, anchor: str, sub: dict[str, Any]) -> dict[str, Any]:
    required = set(sub.get("required", []))
    rows = []
    for name, prop in sub.get("properties", {}).items():
        nested = f"{title}.{name}"
        rows.append(
            {
                "field": code(name, cell=True),
                "type": Escaped(f"object, see [{md_inline(nested)}](#{_anchor(nested)})")
                if "properties" in prop
                else _type_of(prop),
                "required": Escaped("yes" if name in required else "no"),
                "description": md_cell(_schema_md(prop)),
            }
        )
    for pattern, prop in sub.get("patternProperties", {}).items():
        rows.append(
            {
                "field": Escaped(f"keys matching {code(pattern, cell=True)}"),
                "type": _type_of(prop),
                "required": Escaped("no"),
                "description": md_cell(_schema_md(prop)),
            }
        )
    addl = sub.get("additionalProperties")
    if isinstance(addl, dict) and "properties" not in sub:
        rows.append(
            {
                "field": Escaped("any other key"),
                "type": _type_of(addl),
                "required": Escaped("no"),
                "description": md_cell(_schema_md(addl)),
            }
        )
    return {
        "title": md_inline(title),
        "anchor": anchor,
        "description": md_cell(_schema_md(sub)),
        "rows": rows,
        "type": None,
        "other_keys": Escaped(
            "allowed"
            if addl is True or (addl is None and "properties" in sub)
            else "not allowed"
            if addl is False
            else "see the table"
        ),
    }


def _type_of(s: dict[str, Any], *, detailed: bool = False) -> Escaped:
    """A short Markdown description of a schema's type, for a table cell."""
    if "$ref" in s:
        name = s["$ref"].rsplit("/", 1)[-1]
        return Escaped(f"[{md_inline(name)}](#{_anchor(name)})")
    if "const" in s:
        return Escaped(f"{_jtype(s['const'])} {code(json.dumps(s['const']), cell=True)}")
    if "enum" in s:
        values = ", ".join(
            code(v if isinstance(v, str) else json.dumps(v), cell=True) for v in s["enum"]
        )
        return Escaped(f"one of {values}")
    types = s.get("type")
    type_list = types if isinstance(types, list) else [types] if types else []
    parts = []
    for t in type_list:
        if t == "array" and isinstance(s.get("items"), dict):
            unique = " (unique)" if s.get("uniqueItems") else ""
            parts.append(f"array{unique} of {_type_of(s['items'])}")
        elif t == "object" and isinstance(s.get("additionalProperties"), dict):
            parts.append(f"object of {_type_of(s['additionalProperties'])}")
        else:
            parts.append(str(t))
    text = " or ".join(parts) or "any"
    constraints = []
    if "minimum" in s:
        constraints.append(f"≥ {s['minimum']}")
    if "minLength" in s:
        constraints.append(f"length ≥ {s['minLength']}")
    if "maxLength" in s:
        constraints.append(f"length ≤ {s['maxLength']}")
    if "pattern" in s and (detailed or len(s["pattern"]) <= 24):
        constraints.append(f"pattern {code(s['pattern'], cell=True)}")
    if constraints:
        text += f" ({', '.join(constraints)})"
    return Escaped(text)


def _jtype(v: object) -> str:
    if isinstance(v, str):
        return "string"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        return "number"
    return "value"


def skill_context(workflow: Workflow, name: str) -> dict[str, Any]:
    """Everything the skill templates show (one source for SKILL.md, the digest and the
    references)."""
    from .codes import CATALOGUE
    from .decide import ACTIONS

    missing = [a for a in ACTIONS if a not in ACTION_DOCS]
    if missing:
        raise ValueError(f"ACTION_DOCS lacks resume actions: {', '.join(missing)}")
    wf = workflow
    session = wf.session_dir.replace("{project}", "PROJECT")
    description = (
        f"Resume the {wf.id} workflow ({flatten(wf.title)}) exactly where it stopped after a "
        "crash, a context limit or a new chat, and record progress in 00-session-state.json "
        "with the session-resume CLI at every write moment: step start, checkpoint, step done, "
        "decision, review finding. Use it as the first action of every agent of the "
        "workflow, and whenever the session state, the handoff or a context budget is in "
        "question."
    )[:1024]
    steps = []
    for s in wf.steps:
        steps.append(
            {
                "key": code(s.key, cell=True),
                "key_text": md_inline(s.key),
                "anchor": _anchor(f"step {s.key} {s.name}"),
                "name": md_inline(s.name),
                "agents": Escaped(", ".join(code(a, cell=True) for a in s.agents)),
                "optional": Escaped("yes" if s.optional else "no"),
                "gate": _gate_text(s),
                "review": Escaped("yes" if s.review_audited else "no"),
                "checkpoints": [
                    {"id": code(c.id, cell=True), "after": md_cell(c.after)} for c in s.checkpoints
                ],
                "checkpoint_chain": Escaped(" → ".join(code(c) for c in s.checkpoint_ids)),
                "legacy": [
                    {"old": code(o, cell=True), "new": code(n, cell=True)}
                    for o, n in s.legacy_checkpoints.items()
                ],
                "budget": None
                if s.budget is None
                else {
                    "max": s.budget.max_startup_files,
                    "files": Escaped(
                        ", ".join(code(f, cell=True) for f in s.budget.startup_files) or "none"
                    ),
                    "notes": md_cell(s.budget.notes or ""),
                },
            }
        )
    moments = [
        {
            "n": i,
            "moment": md_inline(moment),
            "commands": [code(_with_session(c, session)) for c in commands],
            "effect": md_cell(effect),
        }
        for i, (moment, commands, effect) in enumerate(WRITE_MOMENTS, start=1)
    ]
    others = [
        {"what": md_cell(what), "command": code(_with_session(c, session))}
        for what, c in OTHER_COMMANDS
    ]
    actions = [
        {
            "action": code(a, cell=True),
            "codes": md_cell(ACTION_DOCS[a][0]),
            "when": md_cell(ACTION_DOCS[a][1]),
            "do": md_cell(
                ACTION_DOCS[a][2].replace("WORKFLOW", wf.id).replace(" DIR", f" {session}")
            ),
        }
        for a in ACTIONS
    ]
    example = next(
        (
            f
            for s in wf.steps
            if s.budget is not None
            for f in s.budget.startup_files
            if f != "00-session-state.json"
        ),
        "notes.md",
    )
    return {
        "notice": Escaped(SKILL_NOTICE),
        "yaml": {"workflow": yaml_str(wf.id), "workflow_version": yaml_str(str(wf.version))},
        "example_path": code(f"{session}/{example}"),
        "name": name,
        "description": description,
        "wf": {
            "id": md_inline(wf.id),
            "id_code": code(wf.id),
            "version": wf.version,
            "title": md_inline(wf.title),
            "description": md_cell(wf.description),
            "session_dir": code(wf.session_dir),
            "session": code(session),
            "free_steps": wf.free_steps,
        },
        "steps": steps,
        "decisions": [
            {
                "key": code(d.key, cell=True),
                "required": Escaped("yes" if d.required else "no"),
                "allowed": Escaped(
                    ", ".join(
                        code(json.dumps(v) if not isinstance(v, str) else v, cell=True)
                        if v != ""
                        else '`""` (not decided)'
                        for v in d.enum
                    )
                    if d.enum is not None
                    else "free text"
                ),
                "description": md_cell(d.description),
            }
            for d in wf.decisions
        ],
        "fields": [
            {
                "name": code(f.name, cell=True),
                "type": _type_of(f.schema),
                "required": Escaped("yes" if f.required else "no"),
                "description": md_cell(f.description),
            }
            for f in wf.fields
        ],
        "moments": moments,
        "others": others,
        "actions": actions,
        "schema_tables": _schema_tables(),
        "recovery_codes": [
            {
                "code": code(c, cell=True),
                "name": code(CATALOGUE[c].name, cell=True),
                "summary": md_cell(CATALOGUE[c].summary),
            }
            for c in RECOVERY_CODES
        ],
        "resume_cmd": code(f"session-resume resume {session} --step STEP --format json"),
        "resume_cmd_orchestrator": code(f"session-resume resume {session} --format json"),
        "init_cmd": code(f"session-resume init PROJECT --workflow {wf.id}"),
        "recover_cmd": code(f"session-resume recover {session}"),
        "migrate_cmd": code(f"session-resume migrate {session}"),
        "migrate_dry_cmd": code(f"session-resume migrate --dry-run {session}"),
        "validate_cmd": code(f"session-resume validate {session}"),
        "report_cmd": code(f"session-resume report {session}"),
    }


def _gate_text(s: StepDef) -> Escaped:
    if not s.gate:
        return Escaped("none")
    text = md_inline(f"{s.gate.get('id', '')} ({s.gate.get('kind', '')})")
    if s.gate.get("session_break"):
        text = Escaped(f"{text}, session break recommended")
    return text


def render_skill(
    workflow: Workflow, *, name: str | None = None, digest: bool = True
) -> dict[str, str]:
    """The skill docs of ``workflow``: relative path → text. ``name`` (the Agent Skills name,
    which must equal the skill's directory name) defaults to the workflow id."""
    skill = name or workflow.id
    problem = skill_name_problem(skill)
    if problem:
        raise ValueError(f"{skill!r} is not a valid skill name: {problem}")
    ctx = skill_context(workflow, skill)
    ctx_public = {**ctx, "name": yaml_str(skill), "description": yaml_str(ctx["description"])}
    out = {rel: _render(f"{rel}.j2", **ctx_public) for rel in SKILL_FILES}
    if digest:
        out[DIGEST_FILE] = _render_digest(ctx_public)
    return out


def _render_digest(ctx: dict[str, Any]) -> str:
    steps = ctx["steps"]
    empty = _render("SKILL.digest.md.j2", **{**ctx, "steps": [], "steps_more": 0})
    room = DIGEST_MAX_LINES - len(empty.splitlines())
    if len(steps) > room:
        shown, more = steps[: max(room - 1, 0)], len(steps) - max(room - 1, 0)
    else:
        shown, more = steps, 0
    text = _render("SKILL.digest.md.j2", **{**ctx, "steps": shown, "steps_more": more})
    if len(text.splitlines()) > DIGEST_MAX_LINES:
        raise ValueError(f"the digest has {len(text.splitlines())} lines (max {DIGEST_MAX_LINES})")
    return text
