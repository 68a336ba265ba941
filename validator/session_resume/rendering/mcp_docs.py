"""The rows of the skill's MCP reference (``references/mcp-tools.md``): the write moments and
the other operations as calls of the ``session-resume mcp`` tools (docs/architecture.md).

The tool names here are those of :mod:`session_resume.mcp.tools` (a test keeps the two in
step; this layer cannot import the front end).
"""

from __future__ import annotations

import json

from session_resume.rendering.environment import code, md_cell, md_inline

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# (moment, the tool calls as (tool, arguments besides the session), effect), in the order of
# the CLI's write-moment table; the effect text is the CLI table's when the moment has one.
MCP_WRITE_MOMENTS: tuple[tuple[str, tuple[tuple[str, dict[str, Any]], ...]], ...] = (
    ("Step start", (("start", {"step": "STEP"}),)),
    (
        "Sub-step checkpoint reached",
        (
            (
                "checkpoint",
                {
                    "step": "STEP",
                    "sub_step": "SUB_STEP",
                    "artifacts": ["PATH"],
                    "context_files": ["PATH"],
                },
            ),
        ),
    ),
    ("Step done", (("complete", {"step": "STEP"}),)),
    (
        "Decision made",
        (
            ("decide", {"key": "KEY", "value": "VALUE"}),
            ("decide", {"title": "TITLE", "choice": "CHOICE", "rationale": "RATIONALE"}),
        ),
    ),
    (
        "Challenger review finding",
        (
            ("finding", {"action": "add", "title": "TITLE"}),
            ("finding", {"action": "resolve", "title": "TITLE"}),
        ),
    ),
    ("Gate approved by the user", (("approve", {"step": "STEP", "decisions": {"KEY": "VALUE"}}),)),
)

# Further tools: (what, tool, arguments besides the session).
MCP_OTHER_TOOLS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("The first call of every agent: what to do now", "resume", {"step": "STEP"}),
    ("Create the session", "init", {"workflow": "WORKFLOW"}),
    (
        "At an approval gate, in one write: complete A, record decisions, start B",
        "transition",
        {"complete": "A", "start": "B", "decisions": {"KEY": "VALUE"}},
    ),
    ("Skip a step", "skip", {"step": "STEP", "reason": "REASON"}),
    (
        "Review audit recorded",
        "review_audit",
        {"step": "STEP", "complexity": "TIER", "passes_planned": 2, "passes_executed": 2},
    ),
    ("Take the lease now (otherwise the first write does)", "session_start", {}),
    ("End the session (also done when the client disconnects)", "session_end", {}),
    (
        "Stop before the step is complete: the next answer continues it",
        "session_end",
        {"reason": "paused"},
    ),
    ("Rewrite the handoff at every gate, before showing it", "render_handoff", {}),
    ("What may the step load at startup, and what must it not re-read", "budget", {"step": "STEP"}),
    ("Check the state file", "validate", {}),
    ("After a crash: what the session was doing", "report", {}),
    ("Old state: see the patch, then migrate", "migrate", {"dry_run": True}),
    ("Corrupt state: restore .bak or recreate", "recover", {}),
)


# Where the CLI table's effect text speaks of command-line options.
_EFFECTS = {
    "Sub-step checkpoint reached": "`sub_step` is set to the checkpoint id; the paths in "
    "`artifacts` and `context_files` are appended.",
}


def _call(tool: str, args: dict[str, Any]) -> str:
    return f"{tool} {json.dumps({'project': 'PROJECT', **args}, ensure_ascii=False)}"


def mcp_context(effects: dict[str, str]) -> dict[str, Any]:
    """The template context of references/mcp-tools.md; ``effects``: the CLI table's effect
    text by moment."""
    moments = [
        {
            "n": i,
            "moment": md_inline(moment),
            "calls": [code(_call(tool, args), cell=True) for tool, args in calls],
            "effect": md_cell(_EFFECTS.get(moment) or effects.get(moment, "")),
        }
        for i, (moment, calls) in enumerate(MCP_WRITE_MOMENTS, start=1)
    ]
    others = [
        {"what": md_cell(what), "call": code(_call(tool, args), cell=True)}
        for what, tool, args in MCP_OTHER_TOOLS
    ]
    return {"mcp_moments": moments, "mcp_others": others}


def mcp_tool_names() -> set[str]:
    """Every tool the reference names."""
    return {t for _, calls in MCP_WRITE_MOMENTS for t, _ in calls} | {
        t for _, t, _ in MCP_OTHER_TOOLS
    }
