"""Validation: bytes → FileReport (pure core), and files/directories → reports (I/O shell).

Order: read safely → parse strictly → version gate → the version's own schema → semantic
rules → workflow rules. Line and column are computed only for files that failed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from . import schemas
from .codes import diag
from .diagnostics import Diagnostic, FileReport, pointer_split
from .fileread import DEFAULT_MAX_SIZE, is_within, read_limited
from .jsonread import CORRUPT_CODES, parse_json_bytes
from .locate import line_col, locate
from .rules import RuleOptions, check_state
from .versions import CURRENT, is_known, is_newer_than_known, version_of
from .workflow import Workflow, WorkflowError, load_workflow, state_workflow_spec

STATE_FILE = "00-session-state.json"
_SKIP_DIRS = {".git", ".archive", "node_modules", ".venv", "__pycache__", ".nox"}
_MAX_DISCOVERY_DEPTH = 8


@dataclass(frozen=True)
class ValidateOptions:
    """Options of :func:`validate`.

    ``workflow``: an explicit choice (name, path or Workflow) that overrides the state's own
    ``workflow`` field; ``default_workflow`` applies when neither is given.
    ``root``: the repository root (artifact paths are relative to it; links may not leave it).
    ``now``: the clock, injected; None skips the future-timestamp rule.
    """

    workflow: str | Workflow | None = None
    default_workflow: str = "apex"
    strict: bool = False
    check_artifacts: bool = False
    now: datetime | None = None
    skew_seconds: int = 300
    max_size: int = DEFAULT_MAX_SIZE
    root: Path | None = None
    positions: bool = False  # line and column for every finding, not only a failed file's
    _cache: dict[str, Workflow | WorkflowError] = field(
        default_factory=dict, compare=False, repr=False
    )

    def resolve_workflow(self, spec: str | Workflow) -> Workflow:
        if isinstance(spec, Workflow):
            return spec
        hit = self._cache.get(spec)
        if hit is None:
            try:
                hit = load_workflow(spec)
            except WorkflowError as exc:
                hit = exc
            self._cache[spec] = hit
        if isinstance(hit, WorkflowError):
            raise hit
        return hit


def _status_code_for(keyword: str, path: list[str | int], _err: Any) -> str | None:
    if keyword == "enum" and len(path) == 3 and path[0] == "steps" and path[2] == "status":
        return "SR309"
    return None


def validate_document(
    data: bytes,
    *,
    file: str = "",
    options: ValidateOptions | None = None,
    exists: Callable[[str], bool] | None = None,
) -> FileReport:
    """Validate one state document given as bytes. Pure apart from loading workflow files."""
    opts = options or ValidateOptions()
    report = FileReport(path=file)
    parsed = parse_json_bytes(data, file=file)
    report.diagnostics.extend(parsed.diagnostics)
    doc = parsed.value
    if doc is None:
        return report
    assert isinstance(doc, dict)
    raw_version, num = version_of(doc)
    if raw_version is None or num is None:
        report.diagnostics.append(
            diag(
                "SR142",
                f'schema_version {doc.get("schema_version")!r} is not a version string like "3.0"',
                file=file,
                pointer="/schema_version",
            )
        )
    elif is_newer_than_known(num):
        report.schema_version = raw_version
        report.diagnostics.append(
            diag(
                "SR141",
                f"schema version {raw_version} is newer than this tool supports ({CURRENT})",
                file=file,
                pointer="/schema_version",
            )
        )
    elif not is_known(raw_version):
        report.diagnostics.append(
            diag(
                "SR142",
                f"schema version {raw_version} does not exist (known: 1.0, 2.0, 3.0)",
                file=file,
                pointer="/schema_version",
            )
        )
    elif raw_version != CURRENT:
        report.schema_version = raw_version
        rel = f"session-state/{raw_version}.json"
        if not schemas.is_valid(rel, doc):
            for d in schemas.explain(rel, doc, file=file):
                report.diagnostics.append(_with_message(d, f"(v{raw_version} schema) {d.message}"))
        report.diagnostics.append(
            diag(
                "SR140",
                f"schema version {raw_version} must be migrated to {CURRENT}",
                file=file,
                pointer="/schema_version" if "schema_version" in doc else "",
                hint=f"run `session-resume migrate {file or 'PATH'}` "
                "(`--dry-run` shows the changes)",
            )
        )
    else:
        report.schema_version = raw_version
        _validate_current(doc, report, opts, exists, file)
    if parsed.text is not None and (opts.positions or not report.ok(opts.strict)):
        _add_positions(report, parsed.text)
    return report


def _validate_current(
    doc: dict[str, Any],
    report: FileReport,
    opts: ValidateOptions,
    exists: Callable[[str], bool] | None,
    file: str,
) -> None:
    rel = f"session-state/{CURRENT}.json"
    if not schemas.is_valid(rel, doc):
        report.diagnostics.extend(schemas.explain(rel, doc, file=file, code_for=_status_code_for))
    wf: Workflow | None = None
    own = doc.get("workflow") if isinstance(doc.get("workflow"), str) else None
    try:
        if opts.workflow:
            wf = opts.resolve_workflow(opts.workflow)
        else:
            wf = opts.resolve_workflow(state_workflow_spec(own, opts.default_workflow))
    except WorkflowError as exc:
        report.diagnostics.extend(
            Diagnostic(
                d.code, d.severity, d.message, d.file or file, d.pointer, d.line, d.column, d.hint
            )
            for d in exc.diagnostics
        )
    if wf is not None:
        report.workflow = wf.id
        if own and own != wf.id:
            report.diagnostics.append(
                diag(
                    "SR404",
                    f"the state names workflow {own!r} but {wf.id!r} is selected",
                    file=file,
                    pointer="/workflow",
                )
            )
    rule_opts = RuleOptions(
        now=opts.now,
        skew=timedelta(seconds=opts.skew_seconds),
        exists=exists if opts.check_artifacts else None,
    )
    report.diagnostics.extend(check_state(doc, wf, rule_opts, file=file))


def _with_message(d: Diagnostic, message: str) -> Diagnostic:
    return Diagnostic(
        code=d.code,
        severity=d.severity,
        message=message,
        file=d.file,
        pointer=d.pointer,
        line=d.line,
        column=d.column,
        hint=d.hint,
    )


def _add_positions(report: FileReport, text: str) -> None:
    out = []
    for d in report.diagnostics:
        if d.line is None and d.pointer:
            idx = locate(text, list(pointer_split(d.pointer)))
            if idx is not None:
                line, col = line_col(text, idx)
                d = Diagnostic(
                    code=d.code,
                    severity=d.severity,
                    message=d.message,
                    file=d.file,
                    pointer=d.pointer,
                    line=line,
                    column=col,
                    hint=d.hint,
                )
        out.append(d)
    report.diagnostics = out


# --- files and directories ---------------------------------------------------------------


def validate_file(
    path: str | os.PathLike[str], options: ValidateOptions | None = None
) -> FileReport:
    """Validate one state file on disk."""
    opts = options or ValidateOptions()
    name = os.fspath(path)
    res = read_limited(name, max_size=opts.max_size, root=opts.root)
    if res.data is None:
        return FileReport(path=name, diagnostics=res.diagnostics)
    exists = None
    if opts.check_artifacts:
        root = (opts.root or Path.cwd()).resolve()
        exists = _exists_under(root, Path(name).resolve().parent)
    report = validate_document(res.data, file=name, options=opts, exists=exists)
    if any(d.code in _CORRUPTISH for d in report.diagnostics):
        _check_backup(name, report, opts)
    if os.path.basename(name) == STATE_FILE:
        report.diagnostics.extend(session_integrity(Path(name).parent))
    return report


_FULL_SCAN_LIMIT = 16 * 1024 * 1024


def session_integrity(session_dir: Path) -> list[Diagnostic]:
    """The session directory's other files: leftover temp files, the worklog, the lease, the
    handoff. Each checker is imported only when its file exists (a cold `validate` of a bare
    state file imports none of them)."""
    try:
        names = set(os.listdir(session_dir))
    except OSError:
        return []
    out = [
        diag("SR170", "leftover temp file of an interrupted write", file=str(session_dir / t))
        for t in sorted(names)
        if t.startswith(_TMP_PREFIX) and t.endswith(_TMP_SUFFIX)
    ]
    if _WORKLOG in names:
        from . import worklog

        log = session_dir / _WORKLOG
        try:
            size = os.path.getsize(log)
        except OSError:
            size = -1
        if 0 <= size <= _FULL_SCAN_LIMIT:
            out.extend(worklog.scan(log))
        elif size > _FULL_SCAN_LIMIT:
            out.extend(worklog.read_tail(log, 10).diagnostics)  # big logs: the tail only
    if _SENTINEL in names:
        from . import sentinel

        out.extend(sentinel.read(session_dir)[1])
    if _HANDOFF in names:
        from .handoff_check import check_session_handoff

        out.extend(check_session_handoff(session_dir))
    return out


# File names of a session (spec §1); the modules that own them define the same names, and
# tests/test_store.py::test_layout_names_agree keeps them equal.
_TMP_PREFIX = "." + STATE_FILE + "."
_TMP_SUFFIX = ".tmp"
_WORKLOG = "00-worklog.jsonl"
_SENTINEL = "00-session.active"
_HANDOFF = "00-handoff.md"


_CORRUPTISH = CORRUPT_CODES  # the read failures that make a file corrupt (spec §2.1)


def _check_backup(name: str, report: FileReport, opts: ValidateOptions) -> None:
    bak = name + ".bak"
    if not os.path.lexists(bak):
        return
    res = read_limited(bak, max_size=opts.max_size, root=opts.root)
    if res.data is None:
        return
    from .store import classify

    # The one definition of a usable backup, shared with recover and resume: it parses and
    # passes the 3.0 schema (semantic warnings or a BOM do not make it unusable).
    if classify(res.data, file=bak).status == "ok":
        directory = os.path.dirname(name) or "."
        report.diagnostics.append(
            diag(
                "SR130",
                f"the state file is corrupt, but {os.path.basename(bak)} is a valid state",
                file=name,
                hint=f"run `session-resume recover {directory}`",
            )
        )


def _exists_under(root: Path, session_dir: Path) -> Callable[[str], bool]:
    """Artifact paths are repository-relative; bare file names are looked up in the session
    directory too (the upstream convention). A path may not resolve out of the root."""

    def exists(rel: str) -> bool:
        candidates = [root / rel]
        if "/" not in rel:
            candidates.append(session_dir / rel)
        for c in candidates:
            real = Path(os.path.realpath(c))
            if is_within(real, root) and real.exists():
                return True
        return False

    return exists


def discover(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[str], list[Diagnostic]]:
    """Expand directories into the state files under them. Links to directories are not
    followed; every state file is listed once."""
    files: list[str] = []
    problems: list[Diagnostic] = []
    for p in paths:
        name = os.fspath(p)
        if os.path.isdir(name) and not os.path.islink(name):
            found = _walk(name)
            if not found:
                problems.append(diag("SR101", f"no {STATE_FILE} under this directory", file=name))
            files.extend(found)
        else:
            files.append(name)
    seen: set[str] = set()
    unique = []
    for f in files:
        key = os.path.normpath(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique, problems


def _walk(top: str) -> list[str]:
    found = []
    base_depth = top.rstrip(os.sep).count(os.sep)
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        if dirpath.count(os.sep) - base_depth >= _MAX_DISCOVERY_DEPTH:
            dirnames[:] = []
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        if STATE_FILE in filenames:
            found.append(os.path.join(dirpath, STATE_FILE))
    return found


def validate(
    paths: Iterable[str | os.PathLike[str]], options: ValidateOptions | None = None
) -> list[FileReport]:
    """Validate state files and directories (each directory searched for state files).

    Returns one :class:`FileReport` per file; a directory without state files yields a
    report carrying SR101.
    """
    opts = options or ValidateOptions()
    files, problems = discover(paths)
    reports = [FileReport(path=d.file, diagnostics=[d]) for d in problems]
    reports.extend(validate_file(f, opts) for f in files)
    return reports
