"""The input JSON Schemas of the MCP tools (draft 2020-12, the dialect MCP tool schemas use).

Every tool that works on one session names it by ``project`` (its directory is the
workflow's ``session_dir`` pattern under the repository root) or by ``session_dir`` (inside
the repository root). No other property is accepted (``additionalProperties: false``), so a
misspelt argument is a coded refusal, never silently ignored.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


PROJECT = {
    "type": "string",
    "pattern": r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$",
    "description": "the project (its session directory: agent-output/PROJECT by default)",
}
SESSION_DIR = {
    "type": "string",
    "minLength": 1,
    "maxLength": 4096,
    "description": "instead of project: the session directory, inside the repository",
}
WORKFLOW = {
    "type": "string",
    "minLength": 1,
    "maxLength": 256,
    "description": "apex, dotagent, generic, or a .yaml file in the repository (default: the "
    "state's, then the configured one)",
}
STEP = {"type": "string", "minLength": 1, "maxLength": 128, "description": "the step key"}
TEXT = {"type": "string", "minLength": 1, "maxLength": 4096}
PATHS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 4096},
    "maxItems": 1000,
}
FORCE = {"type": "boolean", "default": False}


def tool_schema(
    properties: dict[str, Any] | None = None,
    required: tuple[str, ...] = (),
    *,
    session: bool = True,
) -> dict[str, Any]:
    """An object schema with ``properties`` (plus ``project``/``session_dir`` for tools on a
    session) and no other key."""
    props: dict[str, Any] = {}
    if session:
        props = {"project": PROJECT, "session_dir": SESSION_DIR}
    props.update(properties or {})
    schema: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


# The tools' input schemas, by tool name.
INPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "resume": tool_schema(
        {
            "step": {**STEP, "description": "the step asking (default: the orchestrator)"},
            "workflow": WORKFLOW,
            "format": {
                "enum": ["text", "json"],
                "default": "text",
                "description": "text: the plan to follow; json: the decision "
                "(schema/decision/2.json) as structured content, for programs",
            },
        }
    ),
    "init": tool_schema(
        {
            "workflow": WORKFLOW,
            "fresh": {
                "type": "boolean",
                "default": False,
                "description": "archive an existing session's files and start over",
            },
        },
        ("project",),
    ),
    "start": tool_schema(
        {
            "step": STEP,
            "force": {**FORCE, "description": "re-run a complete step, or skip prerequisites"},
            "name": {**TEXT, "description": "the step's name (free-step workflows)"},
        },
        ("step",),
    ),
    "checkpoint": tool_schema(
        {
            "step": STEP,
            "sub_step": {**STEP, "description": "the checkpoint id reached"},
            "artifacts": {**PATHS, "description": "artifacts written so far (paths)"},
            "context_files": {**PATHS, "description": "context files loaded (paths)"},
        },
        ("step", "sub_step"),
    ),
    "complete": tool_schema({"step": STEP}, ("step",)),
    "skip": tool_schema(
        {
            "step": STEP,
            "reason": {**TEXT, "description": "why the step is skipped"},
            "force": {**FORCE, "description": "skip a step that is not optional"},
        },
        ("step", "reason"),
    ),
    "review_audit": tool_schema(
        {
            "step": STEP,
            "complexity": {**TEXT, "description": "the complexity tier (the workflow's values)"},
            "passes_planned": {"type": "integer", "minimum": 0, "maximum": 100},
            "passes_executed": {"type": "integer", "minimum": 0, "maximum": 100},
            "models": {
                "type": "array",
                "items": TEXT,
                "maxItems": 100,
                "description": "models that ran the review passes",
            },
            "skipped": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": 100},
                "maxItems": 100,
                "description": "numbers of the passes skipped",
            },
            "skip_reasons": {
                "type": "array",
                "items": TEXT,
                "maxItems": 100,
                "description": "why each skipped pass was skipped",
            },
        },
        ("step",),
    ),
    "decide": tool_schema(
        {
            "key": {**STEP, "description": "a decision key (with value)"},
            "value": {"description": "the decision's value (checked against the workflow)"},
            "title": {**TEXT, "description": "decision log: the question decided"},
            "choice": {**TEXT, "description": "decision log: what was chosen"},
            "rationale": {**TEXT, "description": "decision log: why"},
            "step": {**STEP, "description": "decision log: the step it belongs to"},
            "alternatives": {
                "type": "array",
                "items": TEXT,
                "maxItems": 100,
                "description": "decision log: the options not chosen",
            },
        }
    ),
    "finding": tool_schema(
        {
            "action": {"type": "string", "enum": ["add", "resolve"]},
            "title": {**TEXT, "description": "the must-fix finding's title"},
        },
        ("action", "title"),
    ),
    "transition": tool_schema(
        {
            "complete": {**STEP, "description": "the step to complete"},
            "start": {**STEP, "description": "the step to start"},
            "decisions": {
                "type": "object",
                "maxProperties": 100,
                "description": "decisions to record in the same write",
            },
            "force": FORCE,
        },
        ("complete", "start"),
    ),
    "approve": tool_schema(
        {
            "step": {**STEP, "description": "the complete step whose gate the user approved"},
            "decisions": {
                "type": "object",
                "maxProperties": 100,
                "description": "decisions the user gave with the approval",
            },
        },
        ("step",),
    ),
    "validate": tool_schema(
        {
            "workflow": WORKFLOW,
            "strict": {"type": "boolean", "default": False},
            "check_artifacts": {"type": "boolean", "default": False},
        }
    ),
    "migrate": tool_schema(
        {
            "workflow": WORKFLOW,
            "dry_run": {
                "type": "boolean",
                "default": False,
                "description": "report the JSON Patch that would be written; write nothing",
            },
            "salvage": {
                "type": "boolean",
                "default": False,
                "description": "resolve the contradictions a migration refuses (docs/spec.md "
                "§9.4), each one named in the answer",
            },
        }
    ),
    "recover": tool_schema({"workflow": WORKFLOW}),
    "render_handoff": tool_schema(
        {
            "workflow": WORKFLOW,
            "write": {
                "type": "boolean",
                "default": True,
                "description": "write 00-handoff.md (false: return the text only)",
            },
        }
    ),
    "budget": tool_schema({"step": STEP, "workflow": WORKFLOW}, ("step",)),
    "report": tool_schema({"workflow": WORKFLOW}),
    "session_start": tool_schema(
        {
            "takeover": {
                "type": "boolean",
                "default": False,
                "description": "take over a live lease of another session (logged)",
            }
        }
    ),
    "session_end": tool_schema(
        {
            "reason": {
                "type": "string",
                "enum": ["paused"],
                "description": "paused: stop before the step is complete (the next resume "
                "continues it)",
            }
        }
    ),
}
