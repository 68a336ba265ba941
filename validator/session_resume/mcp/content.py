"""What the MCP server offers beside tools: the skill docs as resources and the ``resume``
prompt (an agent's first action). No MCP SDK import here."""

from __future__ import annotations

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


@record(frozen=True)
class SkillTemplate:
    uri_template: str  # RFC 6570
    name: str
    title: str
    description: str
    mime_type: str = "text/markdown"


def skill_templates() -> list[SkillTemplate]:
    """The skill's SKILL.md of any built-in workflow, as one template (``resources/list``
    names each expansion; :func:`read_resource` reads them)."""
    return [
        SkillTemplate(
            uri_template=f"{RESOURCE_PREFIX}{{workflow}}/SKILL.md",
            name="skill",
            title="session-resume skill of a workflow",
            description="The generated SKILL.md of a built-in workflow's skill; workflow: "
            + ", ".join(BUILTINS)
            + ".",
        )
    ]


def read_resource(uri: str) -> str | None:
    """The text of a skill resource, or None when ``uri`` names none."""
    if not uri.startswith(RESOURCE_PREFIX):
        return None
    wf, _, rel = uri[len(RESOURCE_PREFIX) :].partition("/")
    if wf not in BUILTINS:
        return None
    return _docs(wf).get(rel)


# --- the resume prompt ---------------------------------------------------------------------


# The ``resume`` prompt's arguments: name -> (required, description).
PROMPT_ARGUMENTS = {
    "project": (True, "the project name"),
    "step": (False, "the step asking (default: the orchestrator)"),
}


class PromptArgumentError(ValueError):
    """The prompt's arguments are missing or invalid (the server answers JSON-RPC -32602,
    as the MCP specification asks of prompts/get)."""


def resume_prompt(rt: Runtime, arguments: dict[str, str] | None) -> tuple[str, str]:
    """(description, text) of the ``resume`` prompt: the plan the ``resume`` tool answers.
    :class:`PromptArgumentError` for a missing required argument, an unknown one, or one the
    ``resume`` tool refuses as an argument (SR180)."""
    given = dict(arguments or {})
    unknown = sorted(k for k in given if k not in PROMPT_ARGUMENTS)
    if unknown:
        raise PromptArgumentError(
            f"Invalid prompt arguments: unknown {', '.join(map(repr, unknown))} (the resume "
            f"prompt takes {', '.join(PROMPT_ARGUMENTS)})"
        )
    missing = [k for k, (req, _) in PROMPT_ARGUMENTS.items() if req and not given.get(k)]
    if missing:
        raise PromptArgumentError(f"Missing required arguments: {', '.join(missing)}")
    args: dict[str, Any] = {k: v for k, v in given.items() if v}
    out = call(rt, "resume", args)
    # no session yet: the `resume` tool answers `fresh_start`, its plan `init` first
    codes = [d.get("code") for d in out.result.get("diagnostics", [])]
    if not out.ok and "SR180" in codes:
        raise PromptArgumentError("Invalid prompt arguments: " + out.text.strip())
    if not out.ok:
        return (
            "session-resume could not decide how to resume",
            "The resume decision was refused:\n\n" + out.text,
        )
    d = out.result
    action = str(d.get("action"))
    step = f", step {d['step']}" if d.get("step") else ""
    sub = f" at checkpoint {d['sub_step']}" if d.get("sub_step") else ""
    text = (
        f"Resume the session of project {args.get('project') or args.get('session_dir')} "
        "with the session-resume MCP tools: follow this plan (the `resume` tool's answer). "
        "Make its tool calls in order, each when its [condition] holds; do not edit "
        "00-session-state.json by hand.\n\n" + out.text
    )
    return f"Resume: {action}{step}{sub}", text
