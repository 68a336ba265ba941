"""SARIF 2.1.0, for code-scanning uploads (GitHub code scanning and other SARIF consumers).

- Artifact locations are relative to ``%SRCROOT%``, the repository root (``--root``, else the
  root found from the configuration), percent-encoded, with the root itself given as an
  absolute ``file:`` URI in ``originalUriBaseIds``. A file outside the root keeps an absolute
  ``file:`` URI.
- Every rule has a short and a full description, help text and an absolute ``helpUri`` built
  from the documentation base URL (``--docs-url`` or the ``docs_url`` configuration key).
- ``partialFingerprints`` identify a result by its code, its file relative to the root and its
  JSON pointer (and the occurrence among equal ones), never by a line number or an absolute
  path, so they are the same in every run and from every working directory.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from urllib.parse import quote

from session_resume import __version__
from session_resume.core.codes import CATALOGUE
from session_resume.core.diagnostics import Diagnostic, FileReport, Severity

#: Where the docs live: ``<base>codes/SRnnn.md`` is a code's page, ``<base>spec.md`` the spec.
#: ``--docs-url`` or the ``docs_url`` configuration key replaces it.
DEFAULT_DOCS_URL = "https://github.com/session-resume/session-resume/blob/main/docs/"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "sessionResumeResult/v1"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _quote(path: str) -> str:
    try:
        return quote(path, safe="/", errors="surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
        return quote(path, safe="/", errors="backslashreplace")


def _file_uri(path: Path) -> str:
    """An absolute ``file:`` URI, percent-encoded (a directory's ends with ``/``)."""
    return "file://" + _quote(path.as_posix())


def _location(file: str, root: Path) -> tuple[dict[str, str], str]:
    """(artifactLocation, the path the fingerprint uses)."""
    absolute = Path(os.path.abspath(file))
    try:
        rel = absolute.relative_to(root)
    except ValueError:
        return {"uri": _file_uri(absolute)}, absolute.as_posix()
    return {"uri": _quote(rel.as_posix()), "uriBaseId": SRCROOT}, rel.as_posix()


def _rule(code: str, docs_url: str) -> dict[str, object]:
    c = CATALOGUE[code]
    help_uri = f"{docs_url}codes/{code}.md"
    full = c.summary if not c.fix else f"{c.summary} Fix: {c.fix}"
    return {
        "id": code,
        "name": c.name,
        "shortDescription": {"text": c.summary},
        "fullDescription": {"text": full},
        "help": {
            "text": c.fix or c.summary,
            "markdown": f"{c.summary}\n\n**Fix:** {c.fix}\n\nSee [{code}]({help_uri}).",
        },
        "helpUri": help_uri,
        "defaultConfiguration": {"level": _LEVEL[c.severity]},
        "properties": {"tags": ["session-resume"]},
    }


def _fingerprint(d: Diagnostic, path: str, seen: dict[str, int]) -> str:
    key = "\0".join((d.code, path, d.pointer))
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    seen[digest] = seen.get(digest, 0) + 1
    return f"{digest}:{seen[digest]}"


def render_sarif(
    reports: list[FileReport],
    strict: bool,
    *,
    root: Path | None = None,
    docs_url: str | None = None,
    failure: str | None = None,
) -> str:
    """The SARIF log; ``failure``: the run was refused before checking (a usage error): its
    invocation says ``executionSuccessful: false`` with the reason as a notification."""
    base = Path(os.path.abspath(root if root is not None else os.getcwd()))
    docs = docs_url or DEFAULT_DOCS_URL
    docs = docs if docs.endswith("/") else docs + "/"
    used = sorted({d.code for r in reports for d in r.diagnostics})
    index = {c: i for i, c in enumerate(used)}
    seen: dict[str, int] = {}
    results = []
    for r in reports:
        for d in r.diagnostics:
            artifact, fp_path = _location(d.file or r.path, base)
            # GitHub code scanning needs a region with a start line; a finding about the
            # whole file (no position) points at its first line.
            region: dict[str, int] = {"startLine": d.line if d.line is not None else 1}
            if d.line is not None and d.column is not None:
                region["startColumn"] = d.column
            phys = {"artifactLocation": artifact, "region": region}
            res: dict[str, object] = {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": _LEVEL[d.severity],
                "message": {"text": d.message + (f" Hint: {d.hint}" if d.hint else "")},
                "locations": [{"physicalLocation": phys}],
                "partialFingerprints": {FINGERPRINT_KEY: _fingerprint(d, fp_path, seen)},
            }
            if d.pointer:
                res["properties"] = {"jsonPointer": d.pointer}
            results.append(res)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "session-resume",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": f"{docs}spec.md",
                        "rules": [_rule(c, docs) for c in used],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": _file_uri(base).rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    if failure is not None:
        doc["runs"][0]["invocations"] = [  # type: ignore[index]
            {
                "executionSuccessful": False,
                "exitCode": 2,
                "toolExecutionNotifications": [{"level": "error", "message": {"text": failure}}],
            }
        ]
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
