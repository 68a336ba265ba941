"""Validation of a state document's bytes → :class:`FileReport` (pure).

Order: parse strictly → version gate → the version's own schema → semantic rules →
workflow rules. Line and column are computed only for files that failed. Reading files and
walking directories is :mod:`session_resume.services.validation`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from session_resume.core import schemas
from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, FileReport, pointer_split
from session_resume.core.jsonread import MAX_LOCATED, Parsed, parse_json_bytes
from session_resume.core.limits import DEFAULT_MAX_SIZE
from session_resume.core.locate import line_col, locate
from session_resume.core.rules import RuleOptions, check_state
from session_resume.core.versions import CURRENT, KNOWN, is_known, is_newer_than_known, version_of
from session_resume.core.workflow import (
    DEFAULT_WORKFLOW,
    Workflow,
    WorkflowError,
    load_workflow,
    state_workflow_spec,
)
from session_resume.records import field, record, replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record(frozen=True)
class ValidateOptions:
    """Options of :func:`validate`.

    ``workflow``: an explicit choice (name, path or Workflow) that overrides the state's own
    ``workflow`` field; ``default_workflow`` applies when neither is given.
    ``root``: the repository root (artifact paths are relative to it; links may not leave it).
    ``now``: the clock, injected; None skips the future-timestamp rule.
    """

    workflow: str | Workflow | None = None
    default_workflow: str = DEFAULT_WORKFLOW
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
    return validate_parsed(
        parse_json_bytes(data, file=file), file=file, options=options, exists=exists
    )


def validate_parsed(
    parsed: Parsed,
    *,
    file: str = "",
    options: ValidateOptions | None = None,
    exists: Callable[[str], bool] | None = None,
) -> FileReport:
    """:func:`validate_document` of bytes the strict reader has parsed (``parse_json_bytes``):
    a writer validates the bytes it is about to write and keeps the value the reader built,
    a copy independent of the caller's document, instead of parsing them a second time."""
    opts = options or ValidateOptions()
    report = FileReport(path=file)
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
                (
                    "schema_version is not set; it must be"
                    if doc.get("schema_version") is None
                    else f"schema_version {doc.get('schema_version')!r} is not"
                )
                + f" a version string like {CURRENT!r}",
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
                f"schema version {raw_version} does not exist (known: {', '.join(KNOWN)})",
                file=file,
                pointer="/schema_version",
            )
        )
    elif raw_version != CURRENT:
        report.schema_version = raw_version
        rel = f"session-state/{raw_version}.json"
        if not schemas.is_valid(rel, doc):
            for d in schemas.explain(rel, doc, file=file):
                message = f"(v{raw_version} schema) {d.message}"
                report.diagnostics.append(replace(d, message=message))
        # lazy: only an old version's hint quotes a path
        import shlex

        report.diagnostics.append(
            diag(
                "SR140",
                f"schema version {raw_version} must be migrated to {CURRENT}",
                file=file,
                pointer="/schema_version" if "schema_version" in doc else "",
                hint=f"run `session-resume migrate {shlex.quote(file) if file else 'PATH'}` "
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


def _add_positions(report: FileReport, text: str) -> None:
    """Line and column for the first MAX_LOCATED findings with a pointer (each lookup rescans
    the text: thousands of findings must not cost quadratic time); the rest keep the pointer."""
    out = []
    located = 0
    for d in report.diagnostics:
        if d.line is None and d.pointer and located < MAX_LOCATED:
            located += 1
            idx = locate(text, list(pointer_split(d.pointer)))
            if idx is not None:
                line, col = line_col(text, idx)
                d = replace(d, line=line, column=col)
        out.append(d)
    report.diagnostics = out
