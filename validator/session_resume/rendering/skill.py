"""The skill docs of a workflow (``SKILL.md``, ``SKILL.digest.md``, ``references/*.md``),
rendered from ``templates/``, and the Agent Skills name rule.

Pure: workflow in, text out. Writing the files is the command's job
(:mod:`session_resume.cli.commands.render`). Every value goes through an escaping filter of
:mod:`session_resume.rendering.environment`.
"""

from __future__ import annotations

import json
import re

from session_resume.core.briefing import STATE_FILES
from session_resume.core.codes import CATALOGUE
from session_resume.core.plan import WRITERS
from session_resume.core.resume_decision import ACTIONS
from session_resume.core.versions import CURRENT_SCHEMA
from session_resume.core.workflow import StepDef, Workflow
from session_resume.rendering.environment import (
    Escaped,
    code,
    flatten,
    md_cell,
    md_inline,
    render_template,
    yaml_str,
)
from session_resume.rendering.mcp_docs import mcp_context
from session_resume.resources import load_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ACTION_DOCS",
    "DIGEST_FILE",
    "FRONTMATTER_KEYS",
    "SKILL_FILES",
    "render_skill",
    "skill_context",
    "skill_name_problem",
]

DIGEST_MAX_LINES = 60
SKILL_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*\Z")
SKILL_FILES = (
    "SKILL.md",
    "references/state-file-schema.md",
    "references/context-budgets.md",
    "references/recovery-protocol.md",
    "references/mcp-tools.md",
)
DIGEST_FILE = "SKILL.digest.md"
SKILL_NOTICE = (
    "<!-- generated from schema/ and templates/ by session-resume (render skill); do not edit -->"
)
FRONTMATTER_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")

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
        "The state fails its schema, has a bad version, or its path was refused.",
        "`session-resume validate DIR` lists the problems; fix them before any step work.",
    ),
    "start": (
        "SR701, SR712",
        "The step is pending, or was started at a gate by `transition` and did no recorded "
        "work (SR712: not a restart, no attempt counted).",
        "`session-resume start STEP --project PROJECT`, then read only `briefing.load`. An "
        "optional step (`briefing.optional`) may be skipped instead: `session-resume skip "
        'STEP --reason "TEXT" --project PROJECT` (listed in `commands`).',
    ),
    "continue_step": (
        "SR713",
        "The live session asking (named with `--session`) just started the step and recorded "
        "no checkpoint; or (reason SR718) a restored `.bak` shows no checkpoint of the step "
        "while the worklog records one.",
        "Do not start it again: do the first checkpoint's work, then run its write (SR718: a "
        "checkpoint whose work is on disk is recorded again, as its hint says).",
    ),
    "restart_step": (
        "SR702",
        "The step is in progress without a checkpoint.",
        "Start the step over from its beginning: `session-resume start STEP --project PROJECT`.",
    ),
    "resume_from_checkpoint": (
        "SR703",
        "The step is in progress at a checkpoint (`sub_step`).",
        "Continue after `sub_step`: read `briefing`, then only `briefing.load` (the partial "
        "deliverables first); the next write is `session-resume checkpoint STEP "
        "NEXT_CHECKPOINT --artifact PATH --project PROJECT`, or "
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
        "Do not write. Ask again with `--session ID` only if that id appears earlier in your "
        "own conversation or notes; else ask again when the lease goes stale (the `when` "
        "names the time), or take over with `session-resume session start --takeover "
        "--project PROJECT` only with the user's consent (logged).",
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
    (
        "Challenger review run (review-audited steps)",
        (
            "session-resume review-audit STEP --complexity TIER --passes-planned 2 "
            '--passes-executed 1 --model MODEL --skipped-pass 2 --skip-reason "TEXT"',
        ),
        "`review_audit.step_STEP` records the tier, the passes planned and run, the model of "
        "each pass run and every skipped pass number with its reason (counts are set, the "
        "lists appended; checked against the workflow).",
    ),
    (
        "Gate approved by the user",
        ("session-resume approve STEP --decision KEY=VALUE",),
        "Each decision the user gave is set, a `decision_log` entry records the approval "
        "(`choice` `approved`, `agent` `user`, `gate`), and `00-handoff.md` is rendered: no "
        "later answer asks for that approval again.",
    ),
)

REVIEW_AUDIT = "session-resume review-audit"

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
    (
        "Stop before the step is complete (after its last checkpoint whose work is done): the "
        "next answer continues it",
        "session-resume session end --reason paused",
    ),
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


# The subcommands that write a session's files: every one the skill shows names the
# session (`--session ID`), as the resume answer's commands do.
NAMES_SESSION = (*WRITERS, "ping")
_WRITE_CALL = re.compile(
    r"`(session-resume (?:" + "|".join(map(re.escape, NAMES_SESSION)) + r")\b[^`]*?)`"
)


def _with_session(command: str, session: str) -> str:
    """The command as an agent types it: writer commands name the session."""
    if " DIR" in command:
        return command.replace(" DIR", f" {session}")
    return _session_named(f"{command} --project PROJECT")


def _session_named(command: str) -> str:
    """``command`` with ``--session ID`` when it writes and names none yet."""
    parts = command.split()
    if len(parts) > 1 and parts[1] in NAMES_SESSION and "--session" not in parts:
        return f"{command} --session ID"
    return command


def _sessions_named(text: str) -> str:
    """Every backticked write command of ``text`` naming the session."""
    return _WRITE_CALL.sub(lambda m: f"`{_session_named(m.group(1))}`", text)


def _schema_tables() -> list[dict[str, Any]]:

    schema = load_schema(CURRENT_SCHEMA)
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
    wf = workflow
    session = wf.session_dir.replace("{project}", "PROJECT")
    description = (
        f"Resume the {wf.id} workflow ({flatten(wf.title)}) where it stopped (a crash, a "
        "context limit, a new chat) and record each step start, checkpoint, completion, "
        "decision and finding with session-resume. The first action of every agent of the "
        "workflow."
    )[:1024]
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
        "steps": [_step_row(s) for s in wf.steps],
        "decisions": _decision_rows(wf),
        "fields": [
            {
                "name": code(f.name, cell=True),
                "type": _type_of(f.schema),
                "required": Escaped("yes" if f.required else "no"),
                "description": md_cell(f.description),
            }
            for f in wf.fields
        ],
        **_command_rows(wf, session),
        "schema_tables": _schema_tables(),
        "recovery_codes": _recovery_code_rows(),
        "agent_codes": _agent_code_rows(),
        **_command_lines(wf, session),
        **mcp_context({moment: effect for moment, _, effect in WRITE_MOMENTS}),
    }


def _step_row(s: StepDef) -> dict[str, Any]:
    """A workflow step as the skill's step tables and budget sections show it."""
    return {
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
        "deliverables": Escaped(
            ", ".join(f"{code(d.file)} (recorded at {code(d.written_at)})" for d in s.deliverables)
        ),
        "legacy": [
            {"old": code(o, cell=True), "new": code(n, cell=True)}
            for o, n in s.legacy_checkpoints.items()
        ],
        "budget": None
        if s.budget is None
        else {
            "max": s.budget.max_startup_files,
            # the state file and handoff are never read (the answer carries them)
            "files": Escaped(
                ", ".join(
                    code(f, cell=True) for f in s.budget.startup_files if f not in STATE_FILES
                )
                or "none beyond the resume answer"
            ),
            "notes": md_cell(s.budget.notes or ""),
        },
    }


def _decision_rows(wf: Workflow) -> list[dict[str, Any]]:
    """The workflow's declared decisions with their allowed values."""
    return [
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
    ]


def _command_rows(wf: Workflow, session: str) -> dict[str, list[dict[str, Any]]]:
    """The tables of commands: the write moments, the other commands, the resume actions."""
    missing = [a for a in ACTIONS if a not in ACTION_DOCS]
    if missing:
        raise ValueError(f"ACTION_DOCS lacks resume actions: {', '.join(missing)}")
    audits = wf.free_steps or any(s.review_audited for s in wf.steps)
    moments = [
        {
            "n": i,
            "moment": md_inline(moment),
            "commands": [code(_with_session(c, session)) for c in commands],
            "effect": md_cell(effect),
        }
        for i, (moment, commands, effect) in enumerate(
            (m for m in WRITE_MOMENTS if audits or not m[1][0].startswith(REVIEW_AUDIT)), start=1
        )
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
                _sessions_named(
                    ACTION_DOCS[a][2].replace("WORKFLOW", wf.id).replace(" DIR", f" {session}")
                )
            ),
        }
        for a in ACTIONS
    ]
    return {"moments": moments, "others": others, "actions": actions}


def _recovery_code_rows() -> list[dict[str, Any]]:
    """The codes of :data:`RECOVERY_CODES` with their names and summaries."""

    return [
        {
            "code": code(c, cell=True),
            "name": code(CATALOGUE[c].name, cell=True),
            "summary": md_cell(CATALOGUE[c].summary),
        }
        for c in RECOVERY_CODES
    ]


def _agent_code_rows() -> list[dict[str, Any]]:
    """Every code of the catalogue (an agent meets them in `resume` and in writer output,
    whose refusals carry the state's own diagnostics), with what to do."""

    return [
        {
            "code": code(c.code, cell=True),
            "severity": md_cell(c.severity.value),
            "summary": md_cell(c.summary),
            "fix": md_cell(_sessions_named(c.fix)),
        }
        for c in sorted(CATALOGUE.values(), key=lambda c: c.code)
    ]


def _command_lines(wf: Workflow, session: str) -> dict[str, Escaped]:
    """The single commands the skill quotes, for this workflow's session directory."""
    return {
        "resume_cmd": code(f"session-resume resume {session} --step STEP"),
        "resume_cmd_orchestrator": code(f"session-resume resume {session}"),
        "init_cmd": code(f"session-resume init PROJECT --workflow {wf.id}"),
        "recover_cmd": code(f"session-resume recover {session}"),
        "migrate_cmd": code(f"session-resume migrate {session}"),
        "migrate_dry_cmd": code(f"session-resume migrate --dry-run {session}"),
        "validate_cmd": code(f"session-resume validate {session}"),
        "report_cmd": code(f"session-resume report {session}"),
        "session_start_cmd": code(_with_session("session-resume session start", session)),
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
    out = {rel: render_template(f"{rel}.j2", **ctx_public) for rel in SKILL_FILES}
    if digest:
        out[DIGEST_FILE] = _render_digest(ctx_public)
    return out


def _render_digest(ctx: dict[str, Any]) -> str:
    steps = ctx["steps"]
    empty = render_template("SKILL.digest.md.j2", **{**ctx, "steps": [], "steps_more": 0})
    room = DIGEST_MAX_LINES - len(empty.splitlines())
    if len(steps) > room:
        shown, more = steps[: max(room - 1, 0)], len(steps) - max(room - 1, 0)
    else:
        shown, more = steps, 0
    text = render_template("SKILL.digest.md.j2", **{**ctx, "steps": shown, "steps_more": more})
    if len(text.splitlines()) > DIGEST_MAX_LINES:
        raise ValueError(f"the digest has {len(text.splitlines())} lines (max {DIGEST_MAX_LINES})")
    return text
