"""``session-resume mcp``: the tools, resources and prompt served over stdio with the official
``mcp`` SDK (its low-level server: the input schemas are ours, exactly as listed).

The process owns the lease of every session it writes to (:mod:`.lease_keeper`): a background
task refreshes the heartbeats while the process lives, and when the client closes stdin (or
the process gets SIGTERM or SIGINT) every session it holds is ended. Service calls run one at
a time on the event loop: they are short, and one writer per process keeps the lease keeper
simple.
"""

from __future__ import annotations

import os
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from session_resume import __version__
from session_resume.mcp import content
from session_resume.mcp.lease_keeper import HEARTBEAT_SECONDS, LeaseKeeper
from session_resume.mcp.runtime import Runtime
from session_resume.mcp.stdio import envelope, loop_stdio, unreadable, wires_blocking
from session_resume.mcp.tools import call, tools

RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for resources/read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INSTRUCTIONS = (
    "session-resume keeps a multi-step agent workflow resumable. First call `resume` with the "
    "project (or use the `resume` prompt): it says what to do now. Then record every write "
    "moment with its tool when it happens: `start`, `checkpoint`, `complete`, `decide`, "
    "`finding`, `transition`. This server owns the session's lease while it runs. The skill "
    "docs are resources (session-resume://skills/<workflow>/SKILL.md)."
)


def _log(message: str) -> None:
    sys.stderr.write(f"session-resume mcp: {message}\n")
    sys.stderr.flush()


def _tool_list() -> list[types.Tool]:
    return [
        types.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            input_schema=t.input_schema,
            annotations=types.ToolAnnotations(
                title=t.title,
                read_only_hint=t.read_only,
                destructive_hint=False,
                idempotent_hint=t.read_only,
                open_world_hint=False,
            ),
        )
        for t in tools().values()
    ]


def build_server(rt: Runtime) -> Server[Any]:
    """The low-level SDK server with our handlers."""

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_tool_list())

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        out = call(rt, params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=out.text)],
            structured_content=out.result if out.structured else None,
            is_error=not out.ok,
        )

    async def list_resources(_ctx: Any, _params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r.uri,
                    name=r.name,
                    title=r.title,
                    description=r.description,
                    mime_type=r.mime_type,
                )
                for r in content.skill_resources()
            ]
        )

    async def read_resource(
        _ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        text = content.read_resource(uri)
        if text is None:  # the specification's "Resource not found"
            raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri!r}", {"uri": uri})
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )

    async def list_prompts(_ctx: Any, _params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name="resume",
                    title="Resume the session",
                    description="The resume decision for a project and the agent's first "
                    "action, as tool calls.",
                    arguments=[
                        types.PromptArgument(name=name, description=text, required=required)
                        for name, (required, text) in content.PROMPT_ARGUMENTS.items()
                    ],
                )
            ]
        )

    async def get_prompt(_ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != "resume":
            raise MCPError(types.INVALID_PARAMS, f"Invalid prompt name: {params.name!r}")
        try:
            description, text = content.resume_prompt(rt, params.arguments)
        except content.PromptArgumentError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        return types.GetPromptResult(
            description=description,
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

    async def list_resource_templates(_ctx: Any, _params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=t.uri_template,
                    name=t.name,
                    title=t.title,
                    description=t.description,
                    mime_type=t.mime_type,
                )
                for t in content.skill_templates()
            ]
        )

    return Server(
        "session-resume",
        version=__version__,
        title="session-resume",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_resource_templates=list_resource_templates,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


class AnswerUnreadable:
    """The SDK's read stream, with every line its parser refused answered.

    The SDK's stdio reader puts a line it cannot parse (a lone surrogate escape anywhere in
    it, nesting past its parser's limit of about 200, a shape that is no JSON-RPC message) on
    the stream as an exception, and the server drops it: the request got no reply at all and
    the client waited forever. Here such a line is answered with a JSON-RPC error: to its id
    when the line is a request whose id can be read (:func:`stdio.envelope`, linear, no
    recursion), to id null when nothing in it says what it is; a notification or a response
    gets no answer, as JSON-RPC says. The error names the problem with a code, never the
    line's content."""

    def __init__(self, read: Any, write: Any) -> None:
        self._read, self._write = read, write

    @property
    def last_context(self) -> Any:
        return getattr(self._read, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._read.receive()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    async def _answer(self, exc: Exception) -> None:
        errors = getattr(exc, "errors", None)
        details = errors() if callable(errors) else []
        line = next((e.get("input") for e in details if isinstance(e.get("input"), str)), None)
        doc = next((e.get("input") for e in details if isinstance(e.get("input"), dict)), None)
        if line is not None:
            kind, rid = envelope(line)
            code, message = unreadable(str(details[0].get("msg", "")) if details else "")
        elif doc is not None:
            rid = doc.get("id") if type(doc.get("id")) in (int, str) else None
            kind = "request" if "method" in doc else "unknown"
            if "method" not in doc and ("result" in doc or "error" in doc):
                kind = "response"
            code, message = unreadable("")
        else:
            kind, rid = "unknown", None
            code, message = unreadable(str(exc))
        _log(f"a {kind} the SDK could not read: {message.split(';')[0]}")
        if kind in ("notification", "response"):
            return
        error = types.JSONRPCError(
            jsonrpc="2.0", id=rid, error=types.ErrorData(code=code, message=message)
        )
        await self._write.send(SessionMessage(error))

    def __aiter__(self) -> AnswerUnreadable:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._read.aclose()

    async def __aenter__(self) -> AnswerUnreadable:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _heartbeat(rt: Runtime, every: float) -> None:
    while True:
        await anyio.sleep(every)
        rt.keeper.beat(rt.clock())


async def _on_signal(rt: Runtime) -> None:
    """SIGTERM or SIGINT: end the sessions held, then exit at once. Tool calls run on this
    loop, so none is half-done here; the exit is immediate because with the SDK's own streams
    (stdio.loop_stdio's fallback) a reader thread may sit in a blocking read that nothing
    else would interrupt."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            _log(f"signal {signum}: ending the sessions held")
            rt.keeper.end_all(rt.clock())
            sys.stderr.flush()
            wires_blocking()  # os._exit skips loop_stdio's own cleanup
            os._exit(0)


async def serve(rt: Runtime) -> None:
    """Serve one client over stdio until it closes stdin."""
    server = build_server(rt)
    async with (
        loop_stdio() as (stdin, stdout),
        stdio_server(stdin, stdout) as (read, write),
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(_heartbeat, rt, rt.keeper.interval)
        if sys.platform != "win32":  # no signal receiver on Windows' event loop
            tg.start_soon(_on_signal, rt)
        answered = AnswerUnreadable(read, write)
        await server.run(answered, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


def run(
    root: Path,
    *,
    workflow: str | None = None,
    stale_seconds: int = 300,
    archive_keep: int = 5,
    heartbeat: float = HEARTBEAT_SECONDS,
    session_root: str = "agent-output",
) -> int:
    """Serve until the client goes away (closes stdin, or the server's stdout), then end every
    session this process holds."""
    keeper = LeaseKeeper(log=_log, interval=heartbeat)
    rt = Runtime(
        root=root,
        keeper=keeper,
        workflow=workflow,
        stale_seconds=stale_seconds,
        archive_keep=archive_keep,
        session_root=session_root,
    )
    try:
        _serve_until_gone(rt)
    except KeyboardInterrupt:
        pass
    finally:
        keeper.end_all(datetime.now(UTC))
    return 0


def _serve_until_gone(rt: Runtime) -> None:
    try:
        anyio.run(serve, rt)
    except* OSError as group:
        # A reply found the wire closed (or broken): the client is gone, as when it closes
        # stdin. Tool calls catch their own OSErrors, so only the transport's arrive here.
        first = group.exceptions[0]
        while isinstance(first, BaseExceptionGroup):  # nested task groups keep their nesting
            first = first.exceptions[0]
        why = "closed" if isinstance(first, BrokenPipeError | ConnectionResetError) else first
        _log(f"the client's end of the server's stdout: {why}; ending the sessions held")
