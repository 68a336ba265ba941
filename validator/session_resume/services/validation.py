"""The validate service: files and directories → reports (the I/O shell around
:func:`session_resume.core.validation.validate_document`): read safely, validate, check the
session's other files, discover state files under directories."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, FileReport
from session_resume.core.findings import capped as cap_findings
from session_resume.core.jsonread import CORRUPT_CODES
from session_resume.core.validation import ValidateOptions, validate_document
from session_resume.storage.artifacts import ArtifactLookup
from session_resume.storage.discovery import discover
from session_resume.storage.fileio import read_limited

STATE_FILE = "00-session-state.json"


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
    look = None
    if opts.check_artifacts:
        root = (opts.root or Path.cwd()).resolve()
        look = ArtifactLookup(root, Path(name).resolve().parent)
        exists = look.exists
    try:
        report = validate_document(res.data, file=name, options=opts, exists=exists)
    finally:
        if look is not None:
            look.close()
    if any(d.code in _CORRUPTISH for d in report.diagnostics):
        _check_backup(name, report, opts)
    if os.path.basename(name) == STATE_FILE:
        report.diagnostics.extend(session_integrity(Path(name).parent))
    return capped(report)


def capped(report: FileReport) -> FileReport:
    """The report with at most 100 findings of each code and a count of the rest
    (:mod:`session_resume.core.findings`): the same list in every format."""
    report.diagnostics = cap_findings(report.diagnostics, report.path)
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
        # lazy: a checker only when the session has its file
        from session_resume.storage import worklog

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
        # lazy: a checker only when the session has its file
        from session_resume.storage import lease_file as sentinel

        out.extend(sentinel.read(session_dir)[1])
    if _HANDOFF in names:
        # lazy: a checker only when the session has its file
        from session_resume.storage.handoff_file import check_session_handoff

        out.extend(check_session_handoff(session_dir))
    return out


# File names of a session (docs/spec.md §1); the modules that own them define the same names, and
# tests/test_store.py::test_layout_names_agree keeps them equal.
_TMP_PREFIX = "." + STATE_FILE + "."
_TMP_SUFFIX = ".tmp"
_WORKLOG = "00-worklog.jsonl"
_SENTINEL = "00-session.active"
_HANDOFF = "00-handoff.md"


_CORRUPTISH = CORRUPT_CODES  # the read failures that make a file corrupt (docs/spec.md §2.1)


def _check_backup(name: str, report: FileReport, opts: ValidateOptions) -> None:
    bak = name + ".bak"
    if not os.path.lexists(bak):
        return
    res = read_limited(bak, max_size=opts.max_size, root=opts.root)
    if res.data is None:
        return
    # lazy: only a corrupt file needs the backup check
    from session_resume.storage.store import usable_backup

    # The one definition of a usable backup, shared with recover and resume: it parses and
    # passes the 3.0 schema, or migrate turns it into such a state (docs/spec.md §5).
    hint = os.path.basename(os.path.dirname(os.path.abspath(name)))
    if usable_backup(res.data, project_hint=hint, file=bak).document is not None:
        # lazy: only a corrupt file with a good .bak quotes a path
        import shlex

        directory = os.path.dirname(name) or "."
        report.diagnostics.append(
            diag(
                "SR130",
                f"the state file is corrupt, but {os.path.basename(bak)} is a valid state",
                file=name,
                hint=f"run `session-resume recover {shlex.quote(directory)}`",
            )
        )


def _exists_under(root: Path, session_dir: Path) -> Callable[[str], bool]:
    """Artifact paths are repository-relative; bare file names are looked up in the session
    directory too (the upstream convention). A path may not resolve out of the root. One
    ``fstatat`` per artifact relative to held directories (storage.artifacts); the
    descriptors are closed when the lookup is collected (validate_file closes it itself)."""
    return ArtifactLookup(root, session_dir).exists


def validate(
    paths: Iterable[str | os.PathLike[str]],
    options: ValidateOptions | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    patterns: bool = True,
) -> list[FileReport]:
    """Validate state files and directories (each directory searched for state files, globs
    expanded unless ``patterns`` is false: :func:`session_resume.storage.discovery.discover`).

    Returns one :class:`FileReport` per file; a directory without state files yields a
    report carrying SR101. ``progress(done, total)`` is called after each file.
    """
    opts = options or ValidateOptions()
    files, problems = discover(paths, root=opts.root, patterns=patterns)
    reports = [FileReport(path=d.file, diagnostics=[d]) for d in problems]
    for n, f in enumerate(files, start=1):
        reports.append(validate_file(f, opts))
        if progress is not None:
            progress(n, len(files))
    return reports


def validate_bytes(data: bytes, name: str, options: ValidateOptions | None = None) -> FileReport:
    """Validate a state document that is not a file (standard input): no session
    directory, so no checks of the session's other files; ``name`` is used in messages."""
    return capped(validate_document(data, file=name, options=options or ValidateOptions()))
