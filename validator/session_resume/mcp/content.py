"""What the MCP server offers beside tools: the skill docs as resources and the ``resume``
prompt (an agent's first action). No MCP SDK import here."""

from __future__ import annotations

import json
from functools import cache

from session_resume.core.workflow import BUILTINS
from session_resume.mcp.runtime import Runtime
from session_resume.mcp.tools import call
from session_resume.records import record
from session_resume.services.rendering import skill_docs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEME = "session-resume"
RESOURCE_PREFIX = f"{SCHEME}://skills/"


@record(frozen=True)
class SkillResource:
    uri: str
    name: str
    title: str
    description: str
    mime_type: str = "text/markdown"


@cache
def _docs(workflow: str) -> dict[str, str]:
    return skill_docs(workflow)


def skill_resources() -> list[SkillResource]:
    """SKILL.md, its digest and references of every built-in workflow."""
    out = []
    for wf in BUILTINS:
        for rel in _docs(wf):
            out.append(
                SkillResource(
                    uri=f"{RESOURCE_PREFIX}{wf}/{rel}",
                    name=f"{wf}/{rel}",
                    title=f"session-resume skill ({wf}): {rel}",
                    description=f"The generated {rel} of the {wf} workflow's skill.",
                )
            )
    return out


def read_resource(uri: str) -> str | None:
    """The text of a skill resource, or None when ``uri`` names none."""
    if not uri.startswith(RESOURCE_PREFIX):
        return None
    wf, _, rel = uri[len(RESOURCE_PREFIX) :].partition("/")
    if wf not in BUILTINS:
        return None
    return _docs(wf).get(rel)


# --- the resume prompt ---------------------------------------------------------------------

# The first action for each resume action, as a tool call.
FIRST_ACTION: dict[str, str] = {
    "fresh_start": "call `init` with the project (and its workflow), then `start` the first step",
    "needs_recovery": "call `recover`, then `resume` again",
    "migrate_first": "call `migrate` with dry_run true to see the patch, then `migrate`, "
    "then `resume` again",
    "refuse_newer_version": "stop and write nothing: this session-resume is too old for the state",
    "invalid_state": "call `validate` and fix the problems it lists before any step work",
    "start": "call `start` with the step, then load only the step's startup files",
    "restart_step": "call `start` with the step and do the step from its beginning",
    "continue_step": "do not call `start` again (this server just started the step): do the "
    "first checkpoint's work, then call `checkpoint`",
    "resume_from_checkpoint": "continue after the recorded checkpoint (sub_step); do not "
    "re-read skip_files; record the next checkpoint with `checkpoint`, or `complete` after "
    "the last one",
    "offer_rerun": "tell the user the step is complete; re-run only when asked (`start` with "
    "force true)",
    "next_step": "go on with the step named in next_step",
    "prerequisites_incomplete": "warn the user: earlier steps are incomplete; continue only "
    "when asked (`start` with force true) or hand over to the orchestrator",
    "session_active": "do not write: another live session holds the lease; wait, or call "
    "`session_start` with takeover true when the user asks (logged)",
    "workflow_complete": "nothing is left to run; report to the user",
    "unknown_step": "use a step key of the workflow (the `budget` tool and the skill's "
    "references list them)",
}


def resume_prompt(rt: Runtime, arguments: dict[str, str] | None) -> tuple[str, str]:
    """(description, text) of the ``resume`` prompt: the decision and the first action."""
    args: dict[str, Any] = {k: v for k, v in (arguments or {}).items() if v}
    out = call(rt, "resume", args)
    codes = [d.get("code") for d in out.result.get("diagnostics", [])]
    if not out.ok and codes == ["SR100"] and args.get("project"):
        # services.resume refuses a directory that does not exist: no session yet.
        return (
            "Resume: no session yet",
            f"There is no session of project {args['project']} yet (the decision would be "
            f"`fresh_start`).\n\nFirst action: {FIRST_ACTION['fresh_start']}.\n\n"
            "Then record progress with the write-moment tools (start, checkpoint, complete, "
            "decide, finding, transition), each right when it happens.\n",
        )
    if not out.ok:
        return (
            "session-resume could not decide how to resume",
            "The resume decision was refused:\n\n" + out.text,
        )
    d = out.result
    action = str(d.get("action"))
    first = FIRST_ACTION.get(action, "follow the decision's commands")
    step = f", step {d['step']}" if d.get("step") else ""
    sub = f" at checkpoint {d['sub_step']}" if d.get("sub_step") else ""
    text = (
        f"Resume the session of project {args.get('project') or args.get('session_dir')} "
        f"with the session-resume MCP tools. The decision is `{action}`{step}{sub}.\n\n"
        f"First action: {first}.\n\n"
        "Record progress with the write-moment tools (start, checkpoint, complete, decide, "
        "finding, transition), each right when it happens; do not edit "
        "00-session-state.json by hand.\n\n"
        "The decision (JSON):\n\n```json\n"
        + json.dumps(d, indent=2, ensure_ascii=False, default=str)
        + "\n```\n"
    )
    return f"Resume: {action}{step}{sub}", text
