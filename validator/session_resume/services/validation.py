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
from session_resume.storage.held import HeldDir, StoreError

# lazy imports: a checker only when the session has its file

STATE_FILE = "00-session-state.json"


# --- files and directories ---------------------------------------------------------------


def validate_file(
    path: str | os.PathLike[str], options: ValidateOptions | None = None
) -> FileReport:
    """Validate one state file on disk. Its directory is held once
    (:class:`~session_resume.storage.held.HeldDir`: walked from ``options.root`` without
    following a link out of it; without a root, bounded by the directory itself) and the
    state, its ``.bak`` and the session's other files are read by plain name inside it."""
    opts = options or ValidateOptions()
    name = os.fspath(path)
    parent, base = os.path.split(name.rstrip(os.sep) or name)
    parent = parent or os.curdir
    if base in ("", os.curdir, os.pardir):
        problem = diag("SR101", "this is a directory, not a state file", file=name)
        return FileReport(path=name, diagnostics=[problem])
    try:
        held = HeldDir.at(parent, opts.root if opts.root is not None else parent)
    except StoreError as exc:
        return FileReport(path=name, diagnostics=[_missing(d, name) for d in exc.diagnostics])
    with held:
        return _validate_held(held, name, base, opts)


def _missing(d: Diagnostic, name: str) -> Diagnostic:
    """A directory on the way that is not there: the file is not there (as named). One that
    is a file (ENOTDIR): the file cannot be examined (spec.md §2.1, SR104)."""
    if d.code == "SR100":
        return diag("SR100", "no such file", file=name)
    if d.code == "SR102":
        return diag("SR104", "cannot be examined: a directory on its path is a file", file=name)
    return d


def _validate_held(held: HeldDir, name: str, base: str, opts: ValidateOptions) -> FileReport:
    res = held.read_limited(base, max_size=opts.max_size)
    if res.data is None:
        return FileReport(path=name, diagnostics=_named(res.diagnostics, held.name(base), name))
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
        _check_backup(held, name, base, report, opts.max_size)
    if base == STATE_FILE:
        report.diagnostics.extend(session_integrity(Path(name).parent, held))
    return capped(report)


def _named(diags: list[Diagnostic], held_name: str, name: str) -> list[Diagnostic]:
    """The held directory's diagnostics about ``held_name``, naming the file as given."""
    # lazy: only a file that cannot be read renames its diagnostics
    from session_resume.records import replace

    return [replace(d, file=name) if d.file == held_name else d for d in diags]


def capped(report: FileReport) -> FileReport:
    """The report with at most 100 findings of each code and a count of the rest
    (:mod:`session_resume.core.findings`): the same list in every format."""
    report.diagnostics = cap_findings(report.diagnostics, report.path)
    return report


_FULL_SCAN_LIMIT = 16 * 1024 * 1024


def session_integrity(session_dir: Path, held: HeldDir | None = None) -> list[Diagnostic]:
    """The session directory's other files: leftover temp files, the worklog, the lease, the
    handoff, each read by plain name inside ``held`` (the session directory held; without it,
    held here, bounded by itself). Each checker is imported only when its file exists (a cold
    `validate` of a bare state file imports none of them)."""
    if held is None:
        try:
            with HeldDir.at(session_dir, session_dir) as h:
                return session_integrity(session_dir, h)
        except StoreError:
            return []
    try:
        names = set(held.listdir())
    except OSError:
        return []
    out = [
        diag("SR170", "leftover temp file of an interrupted write", file=str(session_dir / t))
        for t in sorted(names)
        if t.startswith(_TMP_PREFIX) and t.endswith(_TMP_SUFFIX)
    ]
    if _WORKLOG in names:
        from session_resume.storage import worklog

        log = session_dir / _WORKLOG
        try:
            st = held.stat(_WORKLOG)
            size = st.st_size if st is not None else -1
        except OSError:
            size = -1
        if 0 <= size <= _FULL_SCAN_LIMIT:
            out.extend(worklog.scan(log, held=held))
        elif size > _FULL_SCAN_LIMIT:
            out.extend(worklog.read_tail(log, 10, held=held).diagnostics)  # big logs: the tail
    if _SENTINEL in names:
        from session_resume.storage import lease_file as sentinel

        diags = sentinel.read(held)[1]
        out.extend(_named(diags, held.name(_SENTINEL), str(session_dir / _SENTINEL)))
    if _HANDOFF in names:
        from session_resume.storage.handoff_file import check_session_handoff

        out.extend(check_session_handoff(session_dir, held))
    return out


# File names of a session (docs/spec.md §1); the modules that own them define the same names, and
# tests/test_store.py::test_layout_names_agree keeps them equal.
_TMP_PREFIX = "." + STATE_FILE + "."
_TMP_SUFFIX = ".tmp"
_WORKLOG = "00-worklog.jsonl"
_SENTINEL = "00-session.active"
_HANDOFF = "00-handoff.md"


_CORRUPTISH = CORRUPT_CODES  # the read failures that make a file corrupt (docs/spec.md §2.1)


def _check_backup(held: HeldDir, name: str, base: str, report: FileReport, max_size: int) -> None:
    bak = name + ".bak"
    if not held.exists(base + ".bak"):
        return
    res = held.read_limited(base + ".bak", max_size=max_size)
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
    skipped: list[str] | None = None,
) -> list[FileReport]:
    """Validate state files and directories (each directory searched for state files, globs
    expanded unless ``patterns`` is false: :func:`session_resume.storage.discovery.discover`).

    Returns one :class:`FileReport` per file; a directory without state files yields a
    report carrying SR101. ``progress(done, total)`` is called after each file. The state
    files a directory's search left out because git ignores them are appended to
    ``skipped`` (a directory named that holds a state itself is checked, ignored or not).
    """
    opts = options or ValidateOptions()
    files, problems = discover(paths, root=opts.root, patterns=patterns, skipped=skipped)
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
