"""The MCP server under the MCP Inspector's CLI mode (@modelcontextprotocol/inspector, a
devDependency of the repository root: `npm ci`): every method of every capability the server
declares at initialize answers the Inspector without an error, and the refusals the
specification (2025-11-25) codes are refused: a prompt without its required argument, an
unknown resource. The server runs over stdio in a temporary repository; nothing reaches the
network and the Inspector's catalogue file is kept under the test's temporary directory.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, run_cli

# Test tier (README "Test tiers"): MCP servers and Node.
pytestmark = [pytest.mark.mcp, pytest.mark.node]

pytest.importorskip("mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')")

import anyio  # noqa: E402  (installed with mcp)
from mcp import Client, StdioServerParameters  # noqa: E402

INSPECTOR = REPO / "node_modules" / ".bin" / "inspector"
# The methods of each capability a server may declare (MCP 2025-11-25, "Server features").
METHODS = {
    "tools": ("tools/list", "tools/call"),
    "resources": ("resources/list", "resources/read", "resources/templates/list"),
    "prompts": ("prompts/list", "prompts/get"),
    "logging": ("logging/setLevel",),
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not INSPECTOR.is_file():
        pytest.skip("the MCP Inspector is not installed: run `npm ci` at the repository root")
    root = tmp_path_factory.mktemp("inspector") / "repo"
    (root / ".git").mkdir(parents=True)
    assert run_cli("init", "demo", cwd=root).returncode == 0
    return root


def _server(root: Path) -> list[str]:
    return [sys.executable, "-m", "session_resume", "mcp", "--root", str(root)]


def inspector(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "HOME": str(root.parent),
        "MCP_CATALOG_PATH": str(root.parent / "catalog.json"),
    }
    return subprocess.run(
        [str(INSPECTOR), "--cli", *_server(root), *args],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        timeout=120,
    )


def declared(root: Path) -> set[str]:
    """The capabilities the server declares at initialize (the SDK's client reads them)."""

    async def go() -> Any:
        params = StdioServerParameters(command=sys.executable, args=_server(root)[1:], cwd=root)
        async with Client(params, read_timeout_seconds=60) as c:
            return c.server_capabilities

    caps = anyio.run(go).model_dump(exclude_none=True)
    return {k for k in caps if k in METHODS}


# Each method with the arguments that make a successful call of it here.
CALLS: dict[str, tuple[str, ...]] = {
    "tools/list": (),
    "tools/call": ("--tool-name", "resume", "--tool-arg", "project=demo"),
    "resources/list": (),
    "resources/read": ("--uri", "session-resume://skills/apex/SKILL.md"),
    "resources/templates/list": (),
    "prompts/list": (),
    "prompts/get": ("--prompt-name", "resume", "--prompt-args", "project=demo"),
    "logging/setLevel": ("--log-level", "info"),
}


def test_every_declared_method_answers_the_inspector(root: Path) -> None:
    caps = declared(root)
    assert {"tools", "resources", "prompts"} <= caps
    methods = [m for cap in sorted(caps) for m in METHODS[cap]]
    answers = {}
    for method in methods:
        proc = inspector(root, "--method", method, *CALLS[method])
        assert proc.returncode == 0, (method, proc.stdout[-2000:], proc.stderr[-2000:])
        answers[method] = json.loads(proc.stdout)
    assert {t["name"] for t in answers["tools/list"]["tools"]} >= {"resume", "start", "init"}
    called = answers["tools/call"]
    assert not called.get("isError") and "action:" in called["content"][0]["text"]
    (template,) = answers["resources/templates/list"]["resourceTemplates"]
    assert template["uriTemplate"] == "session-resume://skills/{workflow}/SKILL.md"
    skill = answers["resources/read"]["contents"][0]["text"]
    assert skill == (REPO / "docs" / "skills" / "apex" / "SKILL.md").read_text()
    assert "resume" in answers["prompts/get"]["messages"][0]["content"]["text"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--method", "prompts/get", "--prompt-name", "resume"), "Missing required arguments"),
        (
            ("--method", "prompts/get", "--prompt-name", "resume", "--prompt-args", "x=1"),
            "Invalid prompt arguments",
        ),
        (("--method", "resources/read", "--uri", "session-resume://nope"), "Resource not found"),
    ],
)
def test_the_specified_refusals_reach_the_inspector(
    root: Path, args: tuple[str, ...], words: str
) -> None:
    proc = inspector(root, *args)
    assert proc.returncode != 0
    assert words in proc.stdout + proc.stderr
