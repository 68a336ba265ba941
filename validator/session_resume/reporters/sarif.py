"""SARIF 2.1.0, for code-scanning uploads."""

from __future__ import annotations

import json

from session_resume import __version__
from session_resume.core.codes import CATALOGUE
from session_resume.core.diagnostics import FileReport, Severity

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render_sarif(reports: list[FileReport], strict: bool) -> str:
    used = sorted({d.code for r in reports for d in r.diagnostics})
    rules = [
        {
            "id": c,
            "name": CATALOGUE[c].name,
            "shortDescription": {"text": CATALOGUE[c].summary},
            "help": {"text": CATALOGUE[c].fix},
            "helpUri": f"docs/codes/{c}.md",
            "defaultConfiguration": {"level": _LEVEL[CATALOGUE[c].severity]},
        }
        for c in used
    ]
    index = {c: i for i, c in enumerate(used)}
    results = []
    for r in reports:
        for d in r.diagnostics:
            region: dict[str, int] = {}
            if d.line is not None:
                region["startLine"] = d.line
            if d.column is not None:
                region["startColumn"] = d.column
            phys: dict[str, object] = {"artifactLocation": {"uri": d.file}}
            if region:
                phys["region"] = region
            res: dict[str, object] = {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": _LEVEL[d.severity],
                "message": {"text": d.message + (f" Hint: {d.hint}" if d.hint else "")},
                "locations": [{"physicalLocation": phys}],
            }
            if d.pointer:
                res["properties"] = {"jsonPointer": d.pointer}
            results.append(res)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "session-resume",
                        "version": __version__,
                        "informationUri": "docs/spec.md",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
