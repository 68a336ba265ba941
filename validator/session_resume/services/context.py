"""Where, when and as whom a write happens: the :class:`WriteContext` every write service
takes, and how a front end builds one from a session directory or a project name; and how a
read finds a session's workflow: the :class:`Reading` of the read services."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from session_resume.core import lease as lease_rules
from session_resume.core.codes import diag
from session_resume.core.lease import SENTINEL as SENTINEL_FILE
from session_resume.core.lease import SESSION_ID as SESSION_ID
from session_resume.core.lease import hostname
from session_resume.core.workflow import (
    DEFAULT_WORKFLOW,
    Workflow,
    WorkflowError,
    load_workflow,
    state_workflow_spec,
)
from session_resume.records import field, record
from session_resume.services.errors import ServiceError
from session_resume.storage import store

ENV_SESSION = "SESSION_RESUME_SESSION"
PROJECT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")


UNKNOWN_OWNER = "unknown"


def env_owner() -> str | None:
    """Who runs the session as the environment names them: `$USER`, `$USERNAME`, `$LOGNAME`."""
    return os.environ.get("USER") or os.environ.get("USERNAME") or os.environ.get("LOGNAME")


def default_owner() -> str:
    """The lease's owner (docs/spec.md §7): the environment's name, else this account's
    number on this host (`uid N@HOST`), so that a lease always names who holds it (agent
    shells often set no `$USER`)."""
    named = env_owner()
    if named:
        return named
    getuid = getattr(os, "getuid", None)
    return f"uid {getuid()}@{hostname()}" if getuid is not None else UNKNOWN_OWNER


@record(frozen=True)
class WriteContext:
    """Where and when a write happens, and as which session.

    ``session``: the caller's session id when given explicitly (``--session`` or
    ``$SESSION_RESUME_SESSION``), else None. ``default_workflow``: for a state without a
    ``workflow`` field. ``heartbeat_on_write``: whether every write refreshes the lease's
    heartbeat (false for an owner whose timer does it: then only an old one).
    """

    session_dir: Path
    now: datetime
    root: Path | None = None
    session: str | None = None
    owner: str = field(default_factory=default_owner)
    stale_seconds: int = lease_rules.DEFAULT_STALE_SECONDS
    default_workflow: str = DEFAULT_WORKFLOW
    # The workflow a suggested `init` names (`--workflow`): the one the project's
    # configuration names, as the user would type it; None when it names none.
    init_workflow: str | None = None
    # False: the lease's owner refreshes the heartbeat on a timer well inside the stale
    # threshold (the MCP server, docs/spec.md §7), so a write leaves the sentinel alone
    # unless the heartbeat grew old all the same (writes._heartbeat_due).
    heartbeat_on_write: bool = True
    # How many archives `init --fresh` keeps (`archive_keep` in the config)
    archive_keep: int = 5

    @property
    def store_session(self) -> store.Session:
        return store.Session(self.session_dir, self.root)

    @property
    def state_path(self) -> str:
        return str(self.session_dir / store.STATE)

    @property
    def sentinel_path(self) -> str:
        return str(self.session_dir / SENTINEL_FILE)


@record(frozen=True)
class Reading:
    """Under which root a service that reads a session (``resume``, ``report``, ``budget``,
    ``render_handoff``, ``recover``) reads it, and with which workflow: ``workflow``, the one
    the caller names (``--workflow``, a tool's argument), else the one the state names, else
    ``default_workflow`` (the project's configured one; none: the built-in default)."""

    root: Path | None = None
    workflow: str | None = None
    default_workflow: str | None = None

    def spec_for(self, doc: Mapping[str, object] | None) -> str:
        """The workflow that reads the state ``doc`` (None: no state); a state naming a
        workflow that is neither built in nor the configured one: ServiceError, exit 2."""
        try:
            own = (doc or {}).get("workflow")
            return self.workflow or state_workflow_spec(own, self.default_workflow)
        except WorkflowError as exc:
            raise ServiceError(exc.diagnostics, 2) from None


def make_session_dir(ctx: WriteContext) -> None:
    """Create the session directory: each missing component by ``mkdir`` relative to its
    parent's held descriptor, walked from the root without following a link out of it, so
    nothing is ever created at a link's target (SR105 before anything exists)."""
    try:
        with ctx.store_session.hold(create=True) as h:
            store.write_gitignore(h)  # a new session: its machine files stay out of git
    except store.StoreError as exc:
        raise ServiceError(exc.diagnostics) from None
    except OSError as exc:
        raise ServiceError(
            [diag("SR164", f"cannot write {store.GITIGNORE} in the session directory: {exc}")]
        ) from None


def session_dir_for_project(root: Path, project: str, workflow: str) -> Path:
    """The session directory of ``project``: the workflow's ``session_dir`` pattern
    (default ``agent-output/{project}``) under the repository root."""
    if not PROJECT_NAME.match(project):
        raise ServiceError(
            [
                diag(
                    "SR100",
                    f"project name {project!r} is not allowed (letters, digits, `.`, `_`, "
                    "`-`, starting with a letter or digit)",
                )
            ],
            exit_code=2,
        )
    try:
        wf = load_workflow(state_workflow_spec(None, workflow))
    except WorkflowError as exc:
        raise ServiceError(exc.diagnostics, 2) from None  # an input error, as everywhere
    return Path(os.path.abspath(root / wf.session_dir.replace("{project}", project)))


def project_session_dirs(root: Path, project: str) -> list[tuple[Path, tuple[str, ...]]]:
    """Where ``project``'s session may be when no workflow is named or configured: the
    session directory of every built-in workflow (each once, the default workflow's first),
    with the workflows that keep their sessions there."""
    # lazy: the built-in names only when a project is looked up among them
    from session_resume.core.workflow import BUILTINS

    found: dict[Path, list[str]] = {}
    for name in (DEFAULT_WORKFLOW, *(b for b in BUILTINS if b != DEFAULT_WORKFLOW)):
        found.setdefault(session_dir_for_project(root, project, name), []).append(name)
    return [(d, tuple(names)) for d, names in found.items()]


def holds_session(session_dir: Path) -> bool:
    """Whether ``session_dir`` holds a session: its state file or the state's backup."""
    return any(os.path.lexists(session_dir / n) for n in (store.STATE, store.BAK))


def load_workflow_or_fail(spec: str) -> Workflow:
    """The workflow ``spec`` names, or a ServiceError (exit 2) with its diagnostics."""
    try:
        return load_workflow(spec)
    except WorkflowError as exc:
        raise ServiceError(exc.diagnostics, 2) from None
