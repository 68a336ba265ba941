"""`session-resume mcp`: serve the protocol as MCP tools over stdio (the optional extra
``session-resume[mcp]``). The server module is imported only when the command runs, by name
(the CLI and the MCP server are sibling front ends: neither imports the other's code)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

from session_resume.cli.commands.common import config_for, root_of
from session_resume.cli.parser import Command
from session_resume.core.codes import diag
from session_resume.services.errors import ServiceError

SERVER_MODULE = "session_resume.mcp.server"
TOOLS_MODULE = "session_resume.mcp.tools"  # the tools' registry (no MCP SDK import)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--root",
        metavar="DIR",
        help="repository root: sessions are looked up and written only inside it (default: "
        "found from .session-resume.yaml, pyproject.toml or .git)",
    )
    p.add_argument(
        "--heartbeat",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how often the lease's heartbeat is refreshed (default 60); at most half the "
        "stale threshold, the server's writes leave the heartbeat to this timer",
    )
    p.set_defaults(func=run)


def _description() -> str:
    """The help's description, naming every tool the server registers (read from its
    registry, by name, only when the help is shown: the registry imports the services)."""
    registry = importlib.import_module(TOOLS_MODULE)
    names = ", ".join(registry.tools())
    return (
        f"Serve the session-resume tools ({names}), the skill docs as resources and a "
        "`resume` prompt over stdio with the Model Context Protocol. The server process owns "
        "the lease of the sessions it writes to (its pid and host), keeps the heartbeat fresh "
        "and ends them when the client closes stdin. Needs the optional extra: pip install "
        "'session-resume[mcp]'."
    )


COMMANDS = (
    Command(
        "mcp",
        order=120,
        help="serve the protocol as MCP tools over stdio (extra session-resume[mcp])",
        description=_description,
        arguments=_arguments,
    ),
)


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("mcp") is None:
        raise ServiceError(
            [
                diag(
                    "SR181",
                    "the MCP server needs the optional extra: pip install "
                    "'session-resume[mcp]' (the `mcp` package is not installed)",
                )
            ],
            exit_code=2,
        )
    if not args.heartbeat > 0:
        raise ServiceError([diag("SR180", "--heartbeat must be a positive number of seconds")], 2)
    cfg = config_for(args.root)
    server = importlib.import_module(SERVER_MODULE)
    sys.stdout.flush()
    result: int = server.run(
        root_of(args.root, cfg),
        workflow=cfg.workflow,
        stale_seconds=cfg.stale_after_seconds,
        archive_keep=cfg.archive_keep,
        heartbeat=args.heartbeat,
        session_root=cfg.session_root,
    )
    return result
