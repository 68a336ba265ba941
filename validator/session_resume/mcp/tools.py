"""The MCP tools' table and how a call runs.

Every tool is one call into ``services`` (:mod:`.write_tools`, :mod:`.other_tools`).
:func:`call` checks the arguments against the tool's input schema, runs the handler and turns
every refusal (:class:`ServiceError`), bad argument (SR180), file error and anything
unexpected (SR900) into a :class:`ToolOutcome` with ``ok`` false, coded diagnostics and a text
that carries each code and its hint: the server never dies of a bad argument or a bad file.
No MCP SDK import here.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from functools import cache

from session_resume.core import schemas
from session_resume.core.codes import CATALOGUE, diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.mcp.calls import tool_text
from session_resume.mcp.other_tools import OTHER_TOOLS, RESUME_TOOL
from session_resume.mcp.runtime import BAD_ARGUMENTS, Runtime, Tool
from session_resume.mcp.schemas import INPUT_SCHEMAS
from session_resume.mcp.write_tools import WRITE_TOOLS
from session_resume.records import record, replace
from session_resume.services.errors import ServiceError
from session_resume.storage.store import StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INTERNAL = "SR900"
MAX_PROBLEMS = 20


@cache
def tools() -> dict[str, Tool]:
    """Every tool by name, in the order the server lists them."""
    return {t.name: t for t in [RESUME_TOOL, *WRITE_TOOLS, *OTHER_TOOLS]}


@record(frozen=True)
class ToolOutcome:
    ok: bool
    result: dict[str, Any]
    text: str
    structured: bool = True  # False: the server sends the text alone, no structured content


@cache
def _fast(name: str) -> Callable[[Any], bool]:
    return schemas.fast_check(INPUT_SCHEMAS[name])


@cache
def _validator(name: str) -> Any:
    return schemas.reference_for(INPUT_SCHEMAS[name])


def check_arguments(name: str, arguments: Any) -> list[Diagnostic]:
    """The arguments' problems against the tool's input schema, as SR180 diagnostics: the
    fast check answers (jsonschema_rs, as for every schema without a generated check); the
    reference engine (jsonschema, imported with its format grammars on first use) explains a
    refusal only."""
    if arguments is None:
        arguments = {}
    if _fast(name)(arguments):
        return []
    errors = sorted(_validator(name).iter_errors(arguments), key=lambda e: list(map(str, e.path)))
    out = []
    for e in errors[:MAX_PROBLEMS]:
        where = "/".join(str(p) for p in e.path)
        out.append(
            diag(
                BAD_ARGUMENTS,
                f"{name}: argument {where or '(the arguments object)'}: {e.message[:300]}",
                pointer="/" + where if where else "",
            )
        )
    if not out:  # refused by the fast check, unexplained by the reference: still refused
        out.append(diag(BAD_ARGUMENTS, f"{name}: the arguments do not fit the tool's input schema"))
    return out


def error_text(diags: list[Diagnostic]) -> str:
    """The text of a refused call: each code, its name, the message, the file and the hint."""
    lines = []
    for d in diags:
        entry = CATALOGUE.get(d.code)
        name = f" {entry.name}" if entry else ""
        where = f" ({d.file}{'#' + d.pointer if d.pointer else ''})" if d.file else ""
        lines.append(f"{d.code}{name} [{d.severity.value}]: {d.message}{where}")
        if d.hint:
            lines.append(f"  hint: {d.hint}")
    return "\n".join(lines)


_COMMAND_SPAN = re.compile(r"`session-resume [^`\n]*`")


def own_words(text: str, arguments: dict[str, Any] | None) -> str:
    """``text`` with the ``PROJECT`` of each command it names replaced by the project the
    call gave: a refusal names the call to make with the caller's own arguments."""
    project = (arguments or {}).get("project")
    if not isinstance(project, str) or "PROJECT" not in text:
        return text
    return _COMMAND_SPAN.sub(
        lambda m: re.sub(r"\bPROJECT\b", lambda _w: shlex.quote(project), m.group(0)), text
    )


def refused(diags: list[Diagnostic], arguments: dict[str, Any] | None = None) -> ToolOutcome:
    diags = [
        replace(d, message=own_words(d.message, arguments), hint=own_words(d.hint, arguments))
        for d in diags
    ]
    where = {k: v for k, v in (arguments or {}).items() if k in ("project", "session_dir")}
    shown = [d.to_json() for d in diags]
    for d in shown:
        for k in ("message", "hint"):
            if isinstance(d.get(k), str):
                d[k] = tool_text(d[k], where)
    result = {"ok": False, "diagnostics": shown}
    return ToolOutcome(False, result, tool_text(error_text(diags), where))


def call(rt: Runtime, name: str, arguments: Any) -> ToolOutcome:
    """Run tool ``name``: check the arguments, run the handler, catch every refusal."""
    tool = tools().get(name)
    if tool is None:
        return refused([diag(BAD_ARGUMENTS, f"no tool {name!r}; tools: {', '.join(tools())}")])
    problems = check_arguments(name, arguments)
    if problems:
        return refused(problems)
    try:
        result = tool.handler(rt, rt.checked(dict(arguments or {})))
    except (ServiceError, StoreError) as exc:  # a store refusal a service let through is coded too
        return refused(exc.diagnostics, arguments if isinstance(arguments, dict) else None)
    except OSError as exc:
        file = str(exc.filename) if exc.filename else ""
        return refused([diag("SR104", f"{name}: {exc.strerror or exc}", file=file)])
    except Exception as exc:  # noqa: BLE001 - the server outlives every call
        text = f"{name}: internal error: {type(exc).__name__}: {exc}"
        return refused([diag(INTERNAL, text[:1000])])
    if tool.text is not None and (arguments or {}).get("format", "text") == "text":
        return ToolOutcome(True, result, tool.text(result), structured=False)
    return ToolOutcome(True, result, json.dumps(result, ensure_ascii=False, default=str))
