"""The resume answer over MCP (docs/spec.md §10.3): the same plan, each command a tool call
``{tool, arguments, when}`` of this server instead of a command line, and refusals that name
tools. The server owns the session (its lease), so no call names one."""

from __future__ import annotations

import json
import re
import shlex

from session_resume.mcp.schemas import INPUT_SCHEMAS

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
    "approve": "approve",
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
        if "--reason" in argv[:-1]:
            args["reason"] = argv[argv.index("--reason") + 1]
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
            key = argument_name(tool, a) or a[2:].replace("-", "_")
            flag = (
                i + 1 >= len(argv)
                or argv[i + 1].startswith("--")
                or _property(tool, key).get("type") == "boolean"  # `--salvage PATH`: a flag
            )
            if flag:
                args[key] = True
                i += 1
                continue
            value: Any = argv[i + 1]
            if key.startswith("passes") and re.fullmatch(r"[0-9]+", value):
                value = int(value)
            kind = _property(tool, key).get("type")
            if kind == "array":  # a repeated option (`--artifact PATH`): the list argument
                args.setdefault(key, []).append(value)
            elif kind == "object" and "=" in value:  # `--decision K=V`: `{"decisions": {K: V}}`
                k, _, v = value.partition("=")
                args.setdefault(key, {})[k] = v
            else:
                args[key] = value
            i += 2
            continue
        pos.append(a)
        i += 1
    if tool in ("start", "complete", "skip", "review_audit", "checkpoint", "approve") and pos:
        args["step"] = pos[0]
        if tool == "checkpoint" and len(pos) > 1:
            args["sub_step"] = pos[1]
    elif tool == "decide" and len(pos) > 1:
        args.update(key=pos[0], value=pos[1])
    elif tool == "finding" and pos:
        args["action"] = pos[0]
        if len(pos) > 1:
            args["title"] = pos[1]
    elif tool == "init" and pos:
        args = {"project": pos[0], **({"workflow": args["workflow"]} if "workflow" in args else {})}
    return {"tool": tool, "arguments": args}


def _property(tool: str, name: str) -> dict[str, Any]:
    props = INPUT_SCHEMAS.get(tool, {}).get("properties", {})
    found = props.get(name)
    return found if isinstance(found, dict) else {}


def argument_name(tool: str | None, option: str) -> str | None:
    """The argument a CLI option (``--artifact``) is over MCP (``artifacts``): its name with
    ``_`` for ``-``, or the plural a list argument takes, for ``tool`` (None: any tool); None
    when no tool takes it (``--session``, ``--root``: the server's own)."""
    name = option.lstrip("-").replace("-", "_")
    tools = [tool] if tool is not None else list(INPUT_SCHEMAS)
    for candidate in (name, name + "s"):
        if any(candidate in INPUT_SCHEMAS.get(t, {}).get("properties", {}) for t in tools):
            return candidate
    return None


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
        for g in (plan.get("gate"), plan.get("open_gate")):
            if g is not None:
                g["approve"] = tool_call(g["approve"], where)
        if plan["review_audit"] is not None:
            plan["review_audit"]["write"] = tool_call(plan["review_audit"]["write"], where)
        nxt = plan["next_step"]
        if nxt is not None:
            for k in ("start", "skip", "transition"):
                if nxt[k] is not None:
                    nxt[k] = tool_call(nxt[k], where)
    _prose_as_tools(decision, where)
    return decision


# The answer's prose: the texts the tool writes (a code's words, a command's `when`, the
# plan's rules, why a file is loaded or skipped), which may name CLI commands. Not prose: the
# arguments of a call, and what the state records (decisions, the log, findings' titles,
# review audits, worklog events), kept as recorded.
_PROSE = frozenset({"message", "hint", "when", "rule", "artifacts_rule", "why", "reason"})
_RECORDED = frozenset(
    {"arguments", "decisions", "decision_log", "open_findings", "review_audit", "last_events"}
)


def _prose_as_tools(node: Any, where: dict[str, Any] | None = None) -> None:
    """Every prose text below ``node`` (a resume answer) through :func:`tool_text`."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, str) and k in _PROSE:
                node[k] = tool_text(v, where)
            elif k not in _RECORDED or (k == "open_findings" and isinstance(v, dict)):
                _prose_as_tools(v, where)
    elif isinstance(node, list):
        for v in node:
            _prose_as_tools(v, where)


_CLI = re.compile(r"`session-resume ([^`]*)`")


def tool_text(message: str, where: dict[str, Any] | None = None) -> str:
    """A message or hint with each `session-resume COMMAND ...` named as the tool it is, with
    its arguments, and the CLI commands and options named without `session-resume ` as calls
    and arguments (:func:`_bare_words`): refusals and answers over MCP name tools, not CLI
    commands. ``where``: the arguments naming the caller's session (``project`` or
    ``session_dir``), given to every call that names a session, as the caller gave them."""

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
        try:
            call = tool_call("session-resume " + m.group(1), _session_where(words[0], where))
        except ValueError:  # unbalanced quotes: the tool alone
            return f"the `{TOOL_OF.get(words[0], words[0].replace('-', '_'))}` tool"
        shown = json.dumps(call["arguments"], ensure_ascii=False)
        return f"the `{call['tool']}` tool" + (f" with `{shown}`" if call["arguments"] else "")

    return _bare_words(_DECISION.sub(_decisions_argument, _CLI.sub(sub, message)), where)


# the tools that name a session (all but these)
_NO_SESSION = frozenset({"validate"})


def _session_where(command: str, where: dict[str, Any] | None) -> dict[str, Any]:
    if not where or command in _NO_SESSION or command not in TOOL_OF:
        return {}
    return {k: v for k, v in where.items() if k in ("project", "session_dir")}


# the CLI's commands that a text names without `session-resume ` (`start STEP --force`)
_COMMAND_WORDS = frozenset({*TOOL_OF, "finding", "session", "ping"})
_OPTION = re.compile(r"(?<![\w`-])--([a-z][a-z-]*)")


def _bare_words(text: str, where: dict[str, Any] | None = None) -> str:
    """``text`` with the CLI commands and options it names without `session-resume ` written
    as this server's calls: `start STEP --force` as `start {"step": "STEP", "force": true}`,
    `--artifact` and an unquoted --step as the argument (`artifacts`, `step`). Other
    quoted text (`git log --oneline`, a file name) is kept."""
    if "--" not in text and "`" not in text:
        return text
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: the last part is prose, not a span
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(_OPTION.sub(lambda m: _option_words(m.group(1), None), part))
        else:
            out.append(_span_words(part, where))
    return "".join(out)


def _option_words(option: str, value: str | None) -> str:
    name = argument_name(None, option)
    if name is None:
        return "this server's own session" if option == "session" else f"`{option}`"
    if value and any(_property(t, name).get("type") == "array" for t in INPUT_SCHEMAS):
        return f"`{name}: [{value}]`"
    return f"`{name}: {value}`" if value else f"`{name}`"


def _span_words(span: str, where: dict[str, Any] | None = None) -> str:
    """A quoted span as the call it names (with its backticks), or as it was."""
    if span.startswith("--"):
        option, _, value = span[2:].partition(" ")
        return _option_words(option, value or None)
    words = span.split()
    if not words or words[0] not in _COMMAND_WORDS or "{" in span:
        return f"`{span}`"
    if words[0] == "session":
        return "`session_start`" if words[1:2] == ["start"] else "`session_end`"
    if words[0] == "ping":
        return "no call (this server keeps the heartbeat)"
    if len(words) == 1:  # `complete`, `resume`: already the tool's name
        return f"`{TOOL_OF.get(span, span)}`"
    try:
        call = tool_call("session-resume " + span, _session_where(words[0], where))
    except ValueError:  # unbalanced quotes: not a command line
        return f"`{span}`"
    shown = json.dumps(call["arguments"], ensure_ascii=False)
    return f"`{call['tool']} {shown}`"


# `--decision KEY=VALUE ...`: the option of `approve` and `transition`, over MCP their
# `decisions` argument
_DECISION = re.compile(r"`(--decision[ =][^`]+)`")


def _decisions_argument(m: re.Match[str]) -> str:
    """A hint's `--decision K=V` as the argument `{"decisions": {K: V}}` (of the `approve` or
    `transition` call the hint is about: the sentence names which)."""
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
    return f"the argument `{shown}`"
