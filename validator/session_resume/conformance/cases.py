"""Conformance cases: loading ``conformance/cases/<group>/<id>/case.yaml`` and building the
session directory a case describes (the workspace) in a temporary directory.

Workspace layout (every case)::

    <base>/repo/                     the repository root ("root" in the run message)
    <base>/repo/<session_dir>/       the session directory: a byte copy of the case's files/
    <base>/outside/                  a byte copy of the case's outside/ (targets of links that
                                     leave the repository), if any

``session_dir`` defaults to ``agent-output/demo``. After copying, the runner creates what git
cannot store (``setup``: symbolic links, FIFOs, empty directories) and sets every file's
modification time to ``setup.mtime`` (default :data:`DEFAULT_MTIME`), so that nothing depends
on when or where the suite runs.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import stat
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from session_resume.core.timeutil import format_ts, parse_ts
from session_resume.core.yamlsafe import load_yaml_text
from session_resume.records import record
from session_resume.resources import conformance_cases_dir, data_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CASE_FILE = "case.yaml"
DEFAULT_SESSION_DIR = "agent-output/demo"
DEFAULT_MTIME = "2026-01-01T00:00:00Z"
DEFAULT_MAX_SIZE = 8 * 1024 * 1024
DEFAULT_SKEW_SECONDS = 300
DEFAULT_STALE_SECONDS = 300
DEFAULT_OWNER = "conformance"  # the lease owner a sequence's writes name (docs/conformance.md)
BUILTIN_WORKFLOWS = ("apex", "dotagent", "generic")
# Never compared: the advisory lock file may or may not outlive the operation (docs/spec.md §1).
IGNORED_NAMES = frozenset({"00-session-state.json.lock"})
# Never compared either: the record of an implementation's own writes that the optional host
# hooks profile keeps (docs/spec.md §13), which an implementation without it never writes.
IGNORED_DIRS = frozenset({".00-session-written"})


class CaseError(Exception):
    """A case directory cannot be loaded (bad YAML, missing case.yaml)."""


@record(frozen=True)
class Case:
    """One loaded case. ``data`` is case.yaml as parsed (validated by the self-lint)."""

    group: str
    path: Path
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.data.get("id", self.path.name))

    @property
    def key(self) -> str:
        """``group/id``: what ``--cases`` globs are matched against (as well as the id)."""
        return f"{self.group}/{self.id}"

    @property
    def operation(self) -> str:
        return str(self.data.get("operation", ""))

    @property
    def title(self) -> str:
        return str(self.data.get("title", ""))

    @property
    def spec(self) -> str:
        return str(self.data.get("spec", ""))

    @property
    def now(self) -> str:
        return str(self.data.get("now", ""))

    @property
    def arguments(self) -> dict[str, Any]:
        value = self.data.get("arguments") or {}
        return value if isinstance(value, dict) else {}

    @property
    def expected(self) -> dict[str, Any]:
        value = self.data.get("expected") or {}
        return value if isinstance(value, dict) else {}

    @property
    def steps(self) -> list[dict[str, Any]]:
        """A sequence case's steps, in order (empty for the four operations)."""
        value = self.data.get("steps") or []
        return [s for s in value if isinstance(s, dict)] if isinstance(value, list) else []

    @property
    def setup(self) -> dict[str, Any]:
        value = self.data.get("setup") or {}
        return value if isinstance(value, dict) else {}

    @property
    def requires(self) -> list[str]:
        value = self.data.get("requires") or []
        return [str(v) for v in value] if isinstance(value, list) else []

    @property
    def files_dir(self) -> Path:
        return self.path / "files"

    @property
    def expected_dir(self) -> Path:
        return self.path / "expected"

    @property
    def outside_dir(self) -> Path:
        return self.path / "outside"

    @property
    def session_dir(self) -> str:
        return str(self.setup.get("session_dir") or DEFAULT_SESSION_DIR)

    def matches(self, patterns: list[str]) -> bool:
        if not patterns:
            return True
        return any(
            fnmatch.fnmatchcase(self.id, p) or fnmatch.fnmatchcase(self.key, p) for p in patterns
        )


def default_suite() -> Path:
    """The suite that ships with the package: ``conformance/cases`` of the source checkout, or
    ``session_resume/_data/conformance/cases`` of an installed wheel."""
    return conformance_cases_dir() or data_root() / "conformance" / "cases"


def load_case_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(f"{path}: cannot read: {exc}") from None
    res = load_yaml_text(text, file=str(path))
    if res.diagnostics:
        d = res.diagnostics[0]
        where = f":{d.line}" if d.line else ""
        raise CaseError(f"{path}{where}: {d.code} {d.message}")
    if not isinstance(res.value, dict):
        raise CaseError(f"{path}: case.yaml must be a mapping")
    # ruamel's safe loader returns plain dicts and lists; dates stay strings only if quoted.
    plain: dict[str, Any] = _plain(res.value)
    return plain


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):  # an unquoted timestamp: keep the protocol's form
        return format_ts(value)
    return value


def case_dirs(suite: Path) -> list[tuple[str, Path]]:
    """Every ``<group>/<case>`` directory under the suite, sorted."""
    out: list[tuple[str, Path]] = []
    if not suite.is_dir():
        return out
    for group in sorted(p for p in suite.iterdir() if p.is_dir()):
        for case_dir in sorted(p for p in group.iterdir() if p.is_dir()):
            out.append((group.name, case_dir))
    return out


def load_suite(suite: Path, patterns: list[str] | None = None) -> list[Case]:
    """Load every case (raises :class:`CaseError` on the first unloadable one)."""
    cases = []
    for group, case_dir in case_dirs(suite):
        data = load_case_file(case_dir / CASE_FILE)
        case = Case(group, case_dir, data)
        if case.matches(patterns or []):
            cases.append(case)
    return cases


# --- the workspace -----------------------------------------------------------------------


@record(frozen=True)
class Workspace:
    base: Path
    root: Path
    dir: Path
    outside: Path


def platform_supports(feature: str) -> bool:
    if feature == "fifo":
        return hasattr(os, "mkfifo")
    if feature == "symlink":
        return _can_symlink()
    if feature == "posix":
        return os.name == "posix"
    return False


def _can_symlink() -> bool:
    if os.name != "nt":
        return True

    with tempfile.TemporaryDirectory() as tmp:
        try:
            os.symlink("x", os.path.join(tmp, "link"))
            return True
        except OSError:
            return False


def _copy_tree(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    if not src.is_dir():
        return
    for entry in sorted(src.rglob("*")):
        rel = entry.relative_to(src)
        target = dst / rel
        if entry.is_symlink():
            raise CaseError(f"{entry}: links in a case are declared in setup.symlinks, not stored")
        if entry.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(entry.read_bytes())


def _ts_epoch(value: str) -> float:
    dt = parse_ts(value)
    if dt is None:
        raise CaseError(f"not a timestamp: {value!r}")
    return dt.timestamp()


def materialize(case: Case, base: Path) -> Workspace:
    """Build the case's workspace under ``base`` (an empty directory)."""
    root = base / "repo"
    session = root / case.session_dir
    outside = base / "outside"
    root.mkdir(parents=True, exist_ok=True)
    _copy_tree(case.files_dir, session)
    if case.outside_dir.is_dir():
        _copy_tree(case.outside_dir, outside)
    setup = case.setup
    for d in setup.get("directories") or []:
        (session / d).mkdir(parents=True, exist_ok=True)
    for step in case.steps:  # the directories a sequence's steps run from
        if step.get("cwd"):
            (root / step["cwd"]).mkdir(parents=True, exist_ok=True)
    for fifo in setup.get("fifos") or []:
        os.mkfifo(session / fifo)
    for link in setup.get("symlinks") or []:
        where = session / link["path"]
        where.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(link["target"], where)
    default = _ts_epoch(str(setup.get("mtime") or DEFAULT_MTIME))
    overrides = {str(k): _ts_epoch(str(v)) for k, v in (setup.get("mtimes") or {}).items()}
    for top in (session, outside):
        if not top.is_dir():
            continue
        for p in top.rglob("*"):
            if p.is_symlink() or not p.is_file():
                continue
            t = (
                overrides.get(p.relative_to(session).as_posix(), default)
                if top == session
                else default
            )
            os.utime(p, (t, t))
    return Workspace(base=base, root=root, dir=session, outside=outside)


def run_arguments(case: Case, ws: Workspace) -> dict[str, Any]:
    """The case's arguments for the run message: every default filled in, every path absolute."""
    a = case.arguments
    wf: str | None = a.get("workflow")
    if a.get("workflow_file"):
        wf = str(ws.dir / a["workflow_file"])
    op = case.operation
    if op == "validate":
        return {
            "path": str(ws.dir / a.get("path", "00-session-state.json")),
            "workflow": wf,
            "check_artifacts": bool(a.get("check_artifacts", False)),
            "max_size": int(a.get("max_size", DEFAULT_MAX_SIZE)),
            "skew_seconds": int(a.get("skew_seconds", DEFAULT_SKEW_SECONDS)),
        }
    if op == "migrate":
        return {"workflow": wf, "salvage": bool(a.get("salvage", False))}
    if op == "recover":
        return {"workflow": wf, "project": a.get("project")}
    if op == "resume":
        return {
            "step": a.get("step"),
            "workflow": wf,
            "session": a.get("session"),
            "stale_seconds": int(a.get("stale_seconds", DEFAULT_STALE_SECONDS)),
            "takeover": bool(a.get("takeover", False)),
            "owner_alive": a.get("owner_alive"),
        }
    return dict(a)


def step_now(case: Case, index: int) -> str:
    """The clock of step ``index`` (0-based): its own ``now``, else the previous step's, else
    the case's."""
    for step in reversed(case.steps[: index + 1]):
        if step.get("now"):
            return str(step["now"])
    return case.now


def step_message(case: Case, index: int, ws: Workspace) -> dict[str, Any]:
    """The ``case`` member of the run request for step ``index`` of a sequence: its operation,
    the session directory (null when the step names it by ``project`` or a relative ``path``,
    which the implementation resolves from ``root`` and ``cwd``), and every argument."""
    step = case.steps[index]
    op = str(step["op"])
    a = dict(step.get("arguments") or {})
    cwd = ws.root / step["cwd"] if step.get("cwd") else ws.root
    name: dict[str, str] | None = None
    if op == "init":
        name = {"path": step["path"]} if step.get("path") else {"project": a["project"]}
    elif step.get("project"):
        name = {"project": str(step["project"])}
    elif step.get("path"):
        name = {"path": str(step["path"])}
    if op in ("validate", "migrate", "recover", "resume"):
        view = Case(case.group, case.path, {**case.data, "operation": op, "arguments": a})
        args = run_arguments(view, ws)
    else:
        args = {
            "session": a.pop("session", None),
            "new_session": a.pop("new_session", f"new-{index + 1}"),
            "owner": a.pop("owner", DEFAULT_OWNER),
            "stale_seconds": int(a.pop("stale_seconds", DEFAULT_STALE_SECONDS)),
            **_write_defaults(op),
            **a,
        }
    return {
        "id": case.id,
        "operation": op,
        "dir": None if name is not None else str(ws.dir),
        "root": str(ws.root),
        "cwd": str(cwd),
        "name": name,
        "now": step_now(case, index),
        "arguments": args,
    }


def _write_defaults(op: str) -> dict[str, Any]:
    defaults: dict[str, dict[str, Any]] = {
        "init": {"workflow": None},
        "session_start": {"takeover": False},
        "start": {"force": False},
        "checkpoint": {"artifacts": [], "context_files": []},
        "skip": {"force": False},
        "transition": {"decisions": {}, "force": False},
        "approve": {"decisions": {}},
    }
    return defaults.get(op, {})


def apply_runner_step(step: dict[str, Any], ws: Workspace, now: str) -> None:
    """A step the runner does itself: ``write`` a file of the session directory (its
    ``text``, UTF-8, as given: a torn state, a leftover temp file, an artifact; modified at
    the step's clock) or ``remove`` one."""
    target = ws.dir / str(step["path"])
    if step["op"] == "write":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(str(step.get("text", "")).encode("utf-8"))
        t = _ts_epoch(now)
        os.utime(target, (t, t))
    elif step["op"] == "remove":
        target.unlink()


# --- file trees --------------------------------------------------------------------------


@record(frozen=True)
class Entry:
    """One non-directory entry of a tree: a regular file (``data``), a link (``target``) or
    another kind of file (``kind`` fifo/socket/device)."""

    kind: str
    data: bytes = b""
    target: str = ""


def snapshot(top: Path) -> dict[str, Entry]:
    """Every file, link and special file under ``top`` (directories are implied), keyed by
    POSIX relative path; the lock file and the hooks profile's record directory are left out
    (see :data:`IGNORED_NAMES`, :data:`IGNORED_DIRS`)."""
    out: dict[str, Entry] = {}
    if not top.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS]
        names = list(filenames)
        # os.walk lists links to directories among dirnames; they are entries, not trees.
        for d in list(dirnames):
            if (here / d).is_symlink():
                dirnames.remove(d)
                names.append(d)
        for name in names:
            p = here / name
            if name in IGNORED_NAMES:
                continue
            rel = p.relative_to(top).as_posix()
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = Entry("link", target=os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = Entry("file", data=p.read_bytes())
            elif stat.S_ISFIFO(st.st_mode):
                out[rel] = Entry("fifo")
            else:
                out[rel] = Entry("special")
    return out


def remove_tree(path: Path) -> None:
    """Remove a workspace, whatever an adapter left in it (read-only files, links, FIFOs)."""

    def onerror(func: Any, p: str, _exc: Any) -> None:
        try:
            os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=onerror)
    else:
        shutil.rmtree(path, onerror=onerror)
