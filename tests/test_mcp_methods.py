"""Every method of every capability the MCP server declares at initialize answers the SDK's own
client (the MCP Python SDK, the implementation hosts are tested against), over stdio in a
temporary repository.

The MCP Inspector's CLI mode would be the other real consumer, but `npm ci` cannot install it
reproducibly here: it needs Node >= 22.19 (this machine and CI have Node 20), and its lock
entry misses vite's optional `napi-windows-process-start-time`, so a clean `npm ci` refuses
the lock file. The refusals the specification (2025-11-25) codes are in
tests/test_mcp.py::test_prompt_arguments_and_resource_errors_have_the_specified_codes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, run_cli

# Test tier (README "Test tiers"): MCP servers.
pytestmark = pytest.mark.mcp

pytest.importorskip("mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')")

import anyio  # noqa: E402  (installed with mcp)
from mcp import Client, StdioServerParameters  # noqa: E402

# The methods of each capability a server may declare (MCP 2025-11-25, "Server features").
METHODS = {
    "tools": ("tools/list", "tools/call"),
    "resources": ("resources/list", "resources/read", "resources/templates/list"),
    "prompts": ("prompts/list", "prompts/get"),
    "logging": ("logging/setLevel",),
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sdk") / "repo"
    (root / ".git").mkdir(parents=True)
    assert run_cli("init", "demo", cwd=root).returncode == 0
    return root


async def _call(c: Client, method: str) -> Any:
    """``method`` called with the arguments that make it succeed here."""
    if method == "tools/list":
        return await c.list_tools()
    if method == "tools/call":
        return await c.call_tool("resume", {"project": "demo"})
    if method == "resources/list":
        return await c.list_resources()
    if method == "resources/read":
        return await c.read_resource("session-resume://skills/apex/SKILL.md")
    if method == "resources/templates/list":
        return await c.list_resource_templates()
    if method == "prompts/list":
        return await c.list_prompts()
    if method == "prompts/get":
        return await c.get_prompt("resume", {"project": "demo"})
    assert method == "logging/setLevel"
    return await c.set_logging_level("info")


def test_every_declared_method_answers_the_sdk_client(root: Path) -> None:
    async def go() -> tuple[set[str], dict[str, Any]]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "session_resume", "mcp", "--root", str(root)]
        )
        async with Client(params, read_timeout_seconds=60) as c:
            caps = c.server_capabilities.model_dump(exclude_none=True)
            declared = {k for k in caps if k in METHODS}
            methods = [m for cap in sorted(declared) for m in METHODS[cap]]
            return declared, {m: await _call(c, m) for m in methods}

    declared, answers = anyio.run(go)
    assert {"tools", "resources", "prompts"} <= declared
    assert {t.name for t in answers["tools/list"].tools} >= {"resume", "start", "init"}
    called = answers["tools/call"]
    assert not called.is_error and "action:" in called.content[0].text
    (template,) = answers["resources/templates/list"].resource_templates
    assert template.uri_template == "session-resume://skills/{workflow}/SKILL.md"
    skill = answers["resources/read"].contents[0].text
    assert skill == (REPO / "docs" / "skills" / "apex" / "SKILL.md").read_text()
    assert "resume" in answers["prompts/get"].messages[0].content.text
