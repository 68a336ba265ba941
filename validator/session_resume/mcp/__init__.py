"""The MCP front end: ``session-resume mcp`` serves the service layer as Model Context Protocol
tools over stdio (docs/architecture.md, "Add a front end").

The server process owns the lease of every session it writes to (its own pid and host in
``00-session.active``), keeps the heartbeat fresh while it lives and ends the session when the
client closes stdin; after a ``kill -9`` the next reader sees the dead owner at once.

Modules: :mod:`.tools` (the tools: input schemas and handlers over ``services``; no SDK
import), :mod:`.lease_keeper` (the lease the process owns), :mod:`.server` (the wiring to the
official ``mcp`` SDK, installed by the extra ``session-resume[mcp]``). Nothing here is imported
by the CLI's start-up: ``cli/commands/mcp.py`` loads the server only when ``mcp`` runs.
"""
