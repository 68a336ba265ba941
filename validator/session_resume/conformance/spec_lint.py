"""The spec's side of the suite's self-lint: the numbered rules of docs/spec.md and the codes
each names (what a case's ``spec`` must cite), the spec's own lint (every code its normative
sections name says when it applies), and the fields it defines for the lease and a worklog
record (what a sequence's expected files may hold).

Used by :mod:`~session_resume.conformance.lint`.
"""

from __future__ import annotations

import re
from pathlib import Path

from session_resume.core.codes import CATALOGUE
from session_resume.resources import load_schema

_SECTION = re.compile(r"^(#{2,3}) ([0-9]+(?:\.[0-9]+)?)[. ]")
_ITEM = re.compile(r"^( *)([0-9]+)\. ")  # a numbered item of an ordered list
_CODE = re.compile(r"\bSR([0-9]{3})\b")
# ``SR110–SR124`` (en dash or hyphen) names every catalogue code in the range.
_CODE_RANGE = re.compile(r"\bSR([0-9]{3})\s*[–-]\s*SR([0-9]{3})\b")


def spec_sections(text: str) -> dict[str, set[str]]:
    """Each numbered rule of spec.md and the codes its section names: a numbered section
    (``## 5.`` / ``### 2.1``, subsections included) and each numbered item of a section's
    ordered lists (``§9.2.6``: item 6 of §9.2; ``§9.2.8.4``: item 4 nested under it), which
    shares its section's codes. A code is written out (``SR152``) or inside a range
    (``SR110–SR124``). A section number wins over an item of the same number."""
    texts: dict[str, list[str]] = {}
    items: dict[str, str] = {}  # item number -> its section
    open_: list[tuple[str, int]] = []
    fenced = False
    path: list[tuple[int, str]] = []  # (indent, number) of the open list items
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else _SECTION.match(line)
        if m:
            level = len(m.group(1))
            open_ = [(s, lv) for s, lv in open_ if lv < level]
            open_.append((m.group(2), level))
            texts.setdefault(m.group(2), [])
            path = []
        elif line.startswith("## ") and not fenced:
            open_ = []  # an unnumbered top-level section ends the numbered ones
            path = []
        item = None if fenced or not open_ else _ITEM.match(line)
        if item:
            indent = len(item.group(1))
            path = [(i, n) for i, n in path if i < indent]
            path.append((indent, item.group(2)))
            section = open_[-1][0]
            items.setdefault(".".join([section, *(n for _, n in path)]), section)
        for s, _ in open_:
            texts[s].append(line)
    out: dict[str, set[str]] = {}
    for s, lines in texts.items():
        body = "\n".join(lines)
        codes = {f"SR{c}" for c in _CODE.findall(body)}
        for lo, hi in _CODE_RANGE.findall(body):
            codes |= {c for c in CATALOGUE if lo <= c[2:] <= hi}
        out[s] = codes
    for number, section in items.items():
        out.setdefault(number, out[section])
    return out


# --- every code the spec names has its condition -------------------------------------------

# Words that state when a rule applies (docs/conformance.md, "Maintaining the suite").
_CONDITION = re.compile(
    r"\b(when|if|unless|whose|where|while|after|before|without|than|once|only)\b", re.I
)
_TABLE_ROW = re.compile(r"^\s*\|")
_LIST_ITEM = re.compile(r"^\s*(?:[-*]|[0-9]+\.)\s")
_SENTENCE_END = re.compile(r"(?<=[.;])\s+(?=[A-Z`*(])")
_LABEL = re.compile(r"\s*(?:\(([^()]*(?:\([^()]*\)[^()]*)*)\))?\s*(?::\s*([^;]*))?")
_MAPPING = re.compile(r"\s[a-z][a-z/_-]*(?:\s[a-z][a-z/_-]*){0,2}\s*[,.;()]")
_TAGGED = re.compile(r"([^,;:()]*)\(\Z")
_STATED = re.compile(r"([^,;:()]*)\b(?:is|are|with)\s+\Z")
NORMATIVE = range(1, 12)  # §1-§11; §12 records decisions, §13 is an optional profile


def _spec_units(text: str) -> list[tuple[int, int, str, bool]]:
    """(section, line, text, is a table row) of every sentence and table row of spec.md
    outside code fences, in the numbered sections."""
    out: list[tuple[int, int, str, bool]] = []
    section = 0
    para: list[str] = []
    start = 0
    fenced = False

    def flush() -> None:
        if para:
            for sentence in _SENTENCE_END.split(" ".join(para)):
                out.append((section, start, sentence, False))
            para.clear()

    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("#"):
            flush()
            m = _SECTION.match(line)
            if line.startswith("## "):
                section = int(m.group(2).split(".")[0]) if m else 0
            continue
        if _TABLE_ROW.match(line):
            flush()
            out.append((section, number, line, True))
            continue
        if not line.strip() or _LIST_ITEM.match(line):
            flush()
        if line.strip():
            if not para:
                start = number
            para.append(line.strip())
    flush()
    return out


def _conditioned(unit: str, is_row: bool, m: re.Match[str]) -> bool:
    """Whether this mention of a code states when it applies (the forms are listed in
    docs/conformance.md, "Maintaining the suite")."""
    if is_row:  # a table row with a condition cell: another cell of two words or more
        cells = [c.strip() for c in unit.strip().strip("|").split("|")]
        return any(not _CODE.search(c) and len(c.split()) >= 2 for c in cells)
    if len(set(_CODE.findall(unit))) == 1 and _CONDITION.search(unit):
        return True  # the sentence's only code, and it says when
    rest, before = unit[m.end() :], unit[: m.start()]
    label = _LABEL.match(rest)
    if label and label.group(1) and _CONDITION.search(label.group(1)):
        return True  # SR716 (warning, when …)
    if (
        label
        and label.group(2)
        and (_CONDITION.search(label.group(2)) or len(label.group(2).split()) >= 3)
    ):
        return True  # SR504: a record's seq is not greater than …
    if _MAPPING.match(rest) and not (label and label.group(1)):
        return True  # SR202 type, SR203 enum/const
    for form in (_TAGGED, _STATED):  # a step key not in it (SR410); a dangling one is SR103
        t = form.search(before)
        if t and len(t.group(1).split()) >= 2 and not _CODE.search(t.group(1)):
            return True
    return False


def unconditioned_codes(text: str) -> list[tuple[str, int]]:
    """Codes that spec.md's normative sections (§1-§11) name without ever saying when they
    apply: (code, the line of its first mention). A code needs one conditioned mention."""
    first: dict[str, int] = {}
    ok: set[str] = set()
    for section, line, unit, is_row in _spec_units(text):
        if section not in NORMATIVE:
            continue
        for m in _CODE.finditer(unit):
            code = m.group(0)
            first.setdefault(code, line)
            if code not in ok and _conditioned(unit, is_row, m):
                ok.add(code)
    return sorted(((c, n) for c, n in first.items() if c not in ok), key=lambda x: x[1])


_LEASE_KEY_ROW = re.compile(r"^\|\s*`([a-z_]+)`\s*\|")
WORKLOG_SCHEMA = "worklog-event/1.json"  # §6: every record is valid against it
LEASE_FILE = "00-session.active"
WORKLOG_FILE = "00-worklog.jsonl"


def spec_fields(text: str) -> dict[str, set[str]]:
    """The fields the spec defines for the files a sequence compares: the lease's keys (the
    first column of §7's key table) and a worklog record's (§6: its schema's properties)."""
    lease: set[str] = set()
    section = ""
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m or line.startswith("## "):
            section = m.group(2) if m else ""
        elif section == "7":
            key = _LEASE_KEY_ROW.match(line)
            if key:
                lease.add(key.group(1))
    record = set(load_schema(WORKLOG_SCHEMA).get("properties", {}))
    return {LEASE_FILE: lease, WORKLOG_FILE: record}


def spec_problems(text: str) -> list[str]:
    """The spec's own lint: every code its normative sections name has its condition."""
    return [
        f"docs/spec.md line {line}: {code} is named, but no mention of it in §1-§11 says when "
        "it applies (a table row with a condition cell, a sentence naming only it with a "
        "condition word, `CODE (when …)`, `CODE: condition`, or `condition (CODE)`)"
        for code, line in unconditioned_codes(text)
    ]


def read_spec_sections(repo: Path) -> dict[str, set[str]] | None:
    """:func:`spec_sections` of ``repo``'s docs/spec.md (None: there is none to read)."""
    spec = repo / "docs" / "spec.md"
    try:
        text = spec.read_text(encoding="utf-8")
    except OSError:
        return None
    return spec_sections(text)
