"""What every MCP tool handler works with: the :class:`Runtime` (root, config values, lease
keeper, clock), the :class:`Tool` record, and the coded refusal of bad arguments (SR180)."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.workflow import DEFAULT_WORKFLOW
from session_resume.mcp.lease_keeper import LeaseKeeper
from session_resume.mcp.schemas import INPUT_SCHEMAS
from session_resume.records import dataclass, field
from session_resume.services.context import WriteContext, session_dir_for_project
from session_resume.services.errors import ServiceError

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any

BAD_ARGUMENTS = "SR180"


@dataclass
class Runtime:
    """What every handler needs: the repository root, the project config's values, the
    lease keeper and the clock."""

    root: Path
    keeper: LeaseKeeper
    workflow: str | None = None  # the project config's workflow
    stale_seconds: int = 300
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def session_dir(self, args: dict[str, Any]) -> Path:
        """The session directory named by ``project`` or ``session_dir``, inside the root."""
        project, given = args.get("project"), args.get("session_dir")
        if project is not None and given is not None:
            raise bad("give project or session_dir, not both")
        if given is not None:
            p = Path(given)
            d = Path(os.path.abspath(p if p.is_absolute() else self.root / p))
            root = Path(os.path.abspath(self.root))
            real_d, real_root = Path(os.path.realpath(d)), Path(os.path.realpath(root))
            if not (d.is_relative_to(root) and real_d.is_relative_to(real_root)):
                raise bad(f"session_dir {given!r} is outside the repository root {root}")
            return d
        if project is not None:
            spec = args.get("workflow") or self.workflow or DEFAULT_WORKFLOW
            return session_dir_for_project(self.root, project, spec)
        raise bad("name the session: give project (or session_dir)")

    def context(self, args: dict[str, Any]) -> WriteContext:
        """The write context of the session, acting as this server's session."""
        return WriteContext(
            session_dir=self.session_dir(args),
            now=self.clock(),
            root=self.root,
            session=self.keeper.session,
            stale_seconds=self.stale_seconds,
            default_workflow=self.workflow or DEFAULT_WORKFLOW,
            heartbeat_on_write=not self.keeper.beats_in_time(self.stale_seconds),
        )


def bad(message: str) -> ServiceError:
    return ServiceError([diag(BAD_ARGUMENTS, message)], exit_code=2)


@dataclass(frozen=True)
class Tool:
    """One MCP tool: its name, title, description and handler; the input schema is
    :data:`session_resume.mcp.schemas.INPUT_SCHEMAS` of its name."""

    name: str
    title: str
    description: str
    handler: Callable[[Runtime, dict[str, Any]], dict[str, Any]]
    read_only: bool = False

    @property
    def input_schema(self) -> dict[str, Any]:
        return INPUT_SCHEMAS[self.name]
