"""What every MCP tool handler works with: the :class:`Runtime` (root, config values, lease
keeper, clock), the :class:`Tool` record, and the coded refusal of bad arguments (SR180)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.workflow import BUILTINS, DEFAULT_WORKFLOW, WorkflowError, load_workflow
from session_resume.core.yamlsafe import MAX_YAML_BYTES
from session_resume.mcp.lease_keeper import LeaseKeeper
from session_resume.mcp.schemas import INPUT_SCHEMAS
from session_resume.records import field, record
from session_resume.services.context import WriteContext, session_dir_for_project
from session_resume.services.errors import ServiceError
from session_resume.storage.fileio import within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BAD_ARGUMENTS = "SR180"
_YAML = (".yaml", ".yml")


@record
class Runtime:
    """What every handler needs: the repository root, the project config's values, the
    lease keeper and the clock."""

    root: Path
    keeper: LeaseKeeper
    workflow: str | None = None  # the project config's workflow
    stale_seconds: int = 300
    archive_keep: int = 5  # the project config's archive_keep (init's fresh)
    session_root: str = "agent-output"  # the project config's session_root (recover)
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def checked(self, args: dict[str, Any]) -> dict[str, Any]:
        """The arguments with ``workflow`` resolved (:meth:`workflow_spec`) and no path holding
        a NUL (the system refuses it; it was SR900 in every tool)."""
        for key in ("session_dir", "workflow"):
            if isinstance(args.get(key), str) and "\0" in args[key]:
                raise bad(f"{key} holds a NUL character, which no path can hold")
        if isinstance(args.get("workflow"), str):
            args["workflow"] = self.workflow_spec(args["workflow"])
        return args

    def workflow_spec(self, value: str) -> str:
        """A tool's ``workflow`` argument, as the spec to load: a built-in workflow's id, the
        project's configured workflow (its path or its id), or a workflow YAML file
        (``.yaml``/``.yml``) inside the repository, relative to the root. Nothing else is
        read: a path out of the repository (``../x.yaml``, an absolute path, a link out) or to
        any other file is refused (SR180) before it is opened, and the refusal names only the
        argument, never anything read from the file."""
        if value in BUILTINS or (self.workflow is not None and value == self.workflow):
            return value
        if self.workflow is not None and "/" not in value and not value.endswith(_YAML):
            try:
                if load_workflow(self.workflow).id == value:
                    return self.workflow
            except WorkflowError:
                pass
        if not value.endswith(_YAML):
            raise bad(
                f"workflow {value[:200]!r} is neither built in ({', '.join(BUILTINS)}), nor "
                "the project's configured workflow, nor a .yaml file in the repository"
            )
        p = Path(value)
        full = os.path.abspath(p if p.is_absolute() else self.root / p)
        root = os.path.abspath(self.root)
        if not (within(full, root) and within(os.path.realpath(full), os.path.realpath(root))):
            raise bad(f"workflow {value[:200]!r} is outside the repository root {root}; not read")
        try:
            st = os.stat(full)
        except OSError:
            return full  # load_workflow says SR403 (no such file), naming the argument only
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_YAML_BYTES:
            raise bad(
                f"workflow {value[:200]!r} is not a regular file of at most "
                f"{MAX_YAML_BYTES} bytes; not read"
            )
        return full

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
            archive_keep=self.archive_keep,
            default_workflow=self.workflow or DEFAULT_WORKFLOW,
            heartbeat_on_write=not self.keeper.beats_in_time(self.stale_seconds),
        )


def bad(message: str) -> ServiceError:
    return ServiceError([diag(BAD_ARGUMENTS, message)], exit_code=2)


@record(frozen=True)
class Tool:
    """One MCP tool: its name, title, description and handler; the input schema is
    :data:`session_resume.mcp.schemas.INPUT_SCHEMAS` of its name."""

    name: str
    title: str
    description: str
    handler: Callable[[Runtime, dict[str, Any]], dict[str, Any]]
    read_only: bool = False
    # The result as the text an agent reads: a tool that has one answers with that text only
    # unless the call asks `format: "json"` (then the structured result, and its JSON).
    text: Callable[[dict[str, Any]], str] | None = None

    @property
    def input_schema(self) -> dict[str, Any]:
        return INPUT_SCHEMAS[self.name]
