"""Reports of a conformance run: text (ends with ``N passed, N failed[, N skipped]``), JSON
(schema/conformance/report.json), JUnit XML and a shields.io endpoint badge."""

from __future__ import annotations

import json
import math
import re
from xml.etree import ElementTree as ET

from session_resume.conformance import OPERATIONS
from session_resume.conformance.runner import CaseOutcome, RunReport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def summary_line(r: RunReport) -> str:
    line = f"{r.passed} passed, {r.failed} failed"
    return line + (f", {r.skipped} skipped" if r.skipped else "")


def percent(r: RunReport) -> int:
    """Whole percent, rounded down: 100 only when every case passed."""
    return math.floor(r.pass_rate * 100 + 1e-9)


def counts_by(r: RunReport, key: str) -> dict[str, dict[str, int]]:
    """Outcome counts per ``group`` or ``operation``, in the order cases were run."""
    out: dict[str, dict[str, int]] = {}
    for o in r.outcomes:
        name = o.case.group if key == "group" else o.case.operation
        c = out.setdefault(name, {"total": 0, "passed": 0, "failed": 0, "skipped": 0})
        c["total"] += 1
        c[o.outcome] += 1
    return out


def _counts_line(label: str, counts: dict[str, dict[str, int]]) -> str:
    parts = []
    for name, c in counts.items():
        part = f"{name} {c['passed']}/{c['total']}"
        extra = [f"{c[k]} {k}" for k in ("failed", "skipped") if c[k]]
        parts.append(part + (f" ({', '.join(extra)})" if extra else ""))
    return f"{label}: {', '.join(parts)}"


def _impl(r: RunReport) -> str:
    i = r.implementation
    text = f"{i.get('name', '?')} {i.get('version', '')}".strip()
    if i.get("language"):
        text += f" [{i['language']}]"
    return text


def _head(o: CaseOutcome) -> str:
    c = o.case
    return f"{c.key} [{c.operation}, {c.spec}] {c.title}"


def render_text(r: RunReport, *, verbose: bool = False) -> str:
    lines = [
        f"conformance: {_impl(r)} via `{r.adapter}`",
        f"operations: {', '.join(r.operations) or '(none)'}; {r.total} case(s) selected",
        "",
    ]
    for o in r.outcomes:
        if o.outcome == "failed":
            tag = "STALE" if o.failure == "stale_skip" else "FAIL"
            lines.append(f"{tag} {_head(o)}")
            if o.reason:
                lines.append(f"  {o.failure}: {o.reason}")
            lines += [f"  {d}" for d in o.diff]
        elif o.outcome == "skipped" and (verbose or o.skip in ("skip_list", "adapter")):
            lines.append(f"SKIP {o.case.key}: {o.reason}")
            if verbose:
                lines += [f"  {d}" for d in o.diff]
        elif verbose and o.outcome == "passed":
            lines.append(f"PASS {o.case.key}")
    unsupported: dict[str, int] = {}
    for o in r.outcomes:
        if o.skip in ("unsupported", "platform") and not verbose:
            unsupported[o.reason] = unsupported.get(o.reason, 0) + 1
    for why, n in sorted(unsupported.items()):
        lines.append(f"SKIP {n} case(s): {why}")
    if lines[-1] != "":
        lines.append("")
    by_op = counts_by(r, "operation")
    lines.append(_counts_line("by group", counts_by(r, "group")))
    lines.append(_counts_line("by operation", {op: by_op[op] for op in OPERATIONS if op in by_op}))
    lines.append(
        f"pass rate: {r.pass_rate * 100:.1f}% ({r.passed} of {r.total}) in {r.duration:.1f} s"
    )
    lines.append(summary_line(r))
    return "\n".join(lines) + "\n"


def to_json(r: RunReport) -> dict[str, Any]:
    cases = []
    for o in r.outcomes:
        entry: dict[str, Any] = {
            "id": o.case.id,
            "group": o.case.group,
            "operation": o.case.operation,
            "spec": o.case.spec,
            "title": o.case.title,
            "outcome": o.outcome,
            "duration_s": o.duration,
        }
        if o.failure:
            entry["failure"] = o.failure
        if o.skip:
            entry["skip"] = o.skip
        if o.reason:
            entry["reason"] = o.reason
        if o.diff:
            entry["diff"] = list(o.diff)
        cases.append(entry)
    return {
        "report_version": 1,
        "adapter": r.adapter,
        "implementation": r.implementation,
        "operations": r.operations,
        "summary": {
            "total": r.total,
            "passed": r.passed,
            "failed": r.failed,
            "skipped": r.skipped,
            "pass_rate": round(r.pass_rate, 6),
            "duration_s": round(r.duration, 3),
            "groups": counts_by(r, "group"),
            "operations": counts_by(r, "operation"),
        },
        "cases": cases,
    }


def render_json(r: RunReport) -> str:
    return json.dumps(to_json(r), indent=2, ensure_ascii=False) + "\n"


# Characters XML 1.0 cannot carry at all (not even as references): C0 controls other than
# tab, LF and CR, lone surrogates, U+FFFE and U+FFFF. An adapter may echo any bytes.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold written as ``\\xNN``/``\\uNNNN``."""
    return _NOT_XML.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )


def render_junit(r: RunReport) -> str:
    suites = ET.Element("testsuites", name="session-resume conformance")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=xml_safe(f"conformance: {_impl(r)}"),
        tests=str(r.total),
        failures=str(
            sum(1 for o in r.outcomes if o.outcome == "failed" and o.failure == "mismatch")
        ),
        errors=str(sum(1 for o in r.outcomes if o.outcome == "failed" and o.failure != "mismatch")),
        skipped=str(r.skipped),
        time=f"{r.duration:.3f}",
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="adapter", value=xml_safe(r.adapter))
    ET.SubElement(props, "property", name="operations", value=",".join(r.operations))
    for o in r.outcomes:
        tc = ET.SubElement(
            suite,
            "testcase",
            classname=f"conformance.{o.case.group}",
            name=o.case.id,
            time=f"{o.duration:.3f}",
        )
        body = xml_safe("\n".join([o.reason, *o.diff]).strip())
        if o.outcome == "failed":
            tag = "failure" if o.failure == "mismatch" else "error"
            el = ET.SubElement(
                tc,
                tag,
                message=xml_safe((o.reason or f"{o.case.operation} mismatch")[:500]),
                type=o.failure or "",
            )
            el.text = body
        elif o.outcome == "skipped":
            ET.SubElement(tc, "skipped", message=xml_safe(o.reason[:500]))
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


def badge(r: RunReport) -> dict[str, Any]:
    pct = percent(r)
    if pct >= 100:
        color = "brightgreen"
    elif pct >= 95:
        color = "green"
    elif pct >= 80:
        color = "yellowgreen"
    elif pct >= 60:
        color = "yellow"
    elif pct >= 40:
        color = "orange"
    else:
        color = "red"
    return {"schemaVersion": 1, "label": "conformance", "message": f"{pct}%", "color": color}
