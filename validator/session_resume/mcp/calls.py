"""The resume answer over MCP (docs/spec.md §10.3): the same plan, each command a tool call
``{tool, arguments, when}`` of this server instead of a command line, and refusals that name
tools. The server owns the session (its lease), so no call names one."""

from __future__ import annotations

import json
import re
import shlex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# CLI command → MCP tool (the commands a resume answer or a refusal names).
TOOL_OF = {
    "start": "start",
    "checkpoint": "checkpoint",
    "complete": "complete",
    "skip": "skip",
    "review-audit": "review_audit",
    "transition": "transition",
    "decide": "decide",
    "recover": "recover",
    "migrate": "migrate",
    "resume": "resume",
    "init": "init",
    "validate": "validate",
    "report": "report",
    "budget": "budget",
}
# Options that name the session (the server's own) or the place (the call's own): dropped.
_PLACE = {"--project", "--session-dir", "--session", "--root"}


def tool_call(run: str, where: dict[str, Any]) -> dict[str, Any]:
    """The tool call a CLI command line of a resume answer stands for. ``where``: the
    arguments naming the session directory (``project`` or ``session_dir``)."""
    argv = shlex.split(run)[1:]
    name = argv[0] if argv else ""
    if name == "session":
        tool = "session_start" if argv[1:2] == ["start"] else "session_end"
        args: dict[str, Any] = dict(where)
        if "--takeover" in argv:
            args["takeover"] = True
        return {"tool": tool, "arguments": args}
    tool = TOOL_OF.get(name, name.replace("-", "_"))
    args = dict(where)
    pos: list[str] = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in _PLACE:
            i += 2
            continue
        if a.startswith("--"):
            key = a[2:].replace("-", "_")
            flag = i + 1 >= len(argv) or argv[i + 1].startswith("--")
            if flag:
                args[key] = True
                i += 1
                continue
            value: Any = argv[i + 1]
            if key.startswith("passes") and re.fullmatch(r"[0-9]+", value):
                value = int(value)
            args[key] = value
            i += 2
            continue
        pos.append(a)
        i += 1
    if tool in ("start", "complete", "skip", "review_audit", "checkpoint") and pos:
        args["step"] = pos[0]
        if tool == "checkpoint" and len(pos) > 1:
            args["sub_step"] = pos[1]
    elif tool == "decide" and len(pos) > 1:
        args.update(key=pos[0], value=pos[1])
    elif tool == "init" and pos:
        args = {"project": pos[0]}
    return {"tool": tool, "arguments": args}


def as_tool_calls(decision: dict[str, Any], where: dict[str, Any]) -> dict[str, Any]:
    """``decision`` (schema/decision/2.json) with its commands, alternatives and the plan's
    writes as tool calls of this server."""
    for key in ("commands", "alternatives"):
        decision[key] = [
            {**tool_call(c["run"], where), "when": c["when"]} for c in decision.get(key) or []
        ]
    plan = decision.get("plan")
    if plan is not None:
        for c in plan["checkpoints"]:
            c["write"] = tool_call(c["write"], where)
        plan["complete"] = tool_call(plan["complete"], where)
        if plan["review_audit"] is not None:
            plan["review_audit"]["write"] = tool_call(plan["review_audit"]["write"], where)
        nxt = plan["next_step"]
        if nxt is not None:
            for k in ("start", "skip", "transition"):
                if nxt[k] is not None:
                    nxt[k] = tool_call(nxt[k], where)
        plan["artifacts_rule"] = "a checkpoint call takes `artifacts` per file its work wrote"
    return decision


_CLI = re.compile(r"`session-resume ([^`]*)`")


def tool_text(message: str) -> str:
    """A message or hint with each `session-resume COMMAND ...` named as the tool it is
    (refusals over MCP name tools, not CLI commands)."""

    def sub(m: re.Match[str]) -> str:
        words = m.group(1).split()
        if not words:
            return m.group(0)
        if words[0] == "session":
            tool = "session_start" if words[1:2] == ["start"] else "session_end"
            extra = " with `takeover: true`" if "--takeover" in words else ""
            return f"the `{tool}` tool{extra}"
        if words[0] == "ping":
            return "no call (this server keeps the heartbeat)"
        tool = TOOL_OF.get(words[0], words[0].replace("-", "_"))
        return f"the `{tool}` tool"

    return _DECISION.sub(_decisions_argument, _CLI.sub(sub, message))


# `--decision KEY=VALUE ...`: the `transition` command's option, over MCP its `decisions`
_DECISION = re.compile(r"`(--decision[ =][^`]+)`")


def _decisions_argument(m: re.Match[str]) -> str:
    """A hint's `--decision K=V` as the `transition` tool's argument `{"decisions": {K: V}}`."""
    try:
        words = shlex.split(m.group(1))
    except ValueError:
        return m.group(0)
    decisions: dict[str, str] = {}
    i = 0
    while i < len(words):
        name, eq, inline = words[i].partition("=")
        if name != "--decision":
            return m.group(0)
        item = inline if eq else (words[i + 1] if i + 1 < len(words) else "")
        i += 1 if eq else 2
        key, sep, value = item.partition("=")
        if not (key and sep):
            return m.group(0)
        decisions[key] = value
    shown = json.dumps({"decisions": decisions}, ensure_ascii=False)
    return f"the `transition` tool argument `{shown}`"
