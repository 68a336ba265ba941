"""Escaping values for Markdown: the handoff's protocol (docs/spec.md §3.1) and the filters
the renderers' templates use. Pure; see :mod:`session_resume.rendering.environment` for the
filters' contract in the templates.

``md_inline``: untrusted text (everything that comes from a state file) as literal text on
one line. ``md_cell``: trusted Markdown (the project's own descriptions) for one table cell.
``code``: an identifier as a code span. ``yaml_str``: a YAML double-quoted scalar.
"""

from __future__ import annotations

import json
import re
import unicodedata

__all__ = [
    "MAX_VALUE_CHARS",
    "Escaped",
    "code",
    "flatten",
    "md_cell",
    "md_inline",
    "yaml_str",
]

MAX_VALUE_CHARS = 300


class Escaped(str):
    """Text that an escaping filter produced: the only kind of string a template may print."""

    __slots__ = ()


# --- escaping ----------------------------------------------------------------------------

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_LEADING_MARKER = re.compile(r"^([-+=]|[0-9]{1,9}[.)])")
_ALWAYS = {
    "\\": "\\\\",
    "`": "\\`",
    "*": "\\*",
    "[": "\\[",
    "]": "\\]",
    "|": "\\|",
    "~": "\\~",
    "#": "\\#",
    "$": "\\$",
    "&": "\\&",
    "<": "&lt;",
    ">": "&gt;",
}


def flatten(value: object, limit: int | None = MAX_VALUE_CHARS) -> str:
    """One line: control characters, line and paragraph separators and bidi controls become
    spaces, runs of spaces collapse, the ends are trimmed; cut at ``limit`` characters."""
    text = value if isinstance(value, str) else _plain(value)
    chars = [
        " " if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in text
    ]
    flat = re.sub(" {2,}", " ", "".join(chars)).strip()
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat


def _plain(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


def md_inline(value: object) -> Escaped:
    """Untrusted ``value`` as literal Markdown text on one line (see the module docstring)."""
    text = flatten(value)
    out = []
    n = len(text)
    for i, ch in enumerate(text):
        if ch in _ALWAYS:
            out.append(_ALWAYS[ch])
        elif ch == "_":
            # An underscore inside a word never delimits emphasis (CommonMark §6.2); keep
            # `phase_2_waf` readable and escape every other one.
            inside = 0 < i < n - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
            out.append("_" if inside else "\\_")
        else:
            out.append(ch)
    escaped = "".join(out)
    m = _LEADING_MARKER.match(escaped)
    if m:
        marker = m.group(1)
        escaped = marker[:-1] + "\\" + marker[-1] + escaped[len(marker) :]
    return Escaped(escaped)


_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def md_cell(value: object) -> Escaped:
    """Trusted Markdown (the project's own descriptions) made safe for one table cell."""
    text = flatten(value, limit=None)
    out = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_cell_text(text[pos : m.start()]))
        out.append(m.group(0).replace("|", "\\|"))
        pos = m.end()
    out.append(_cell_text(text[pos:]))
    return Escaped("".join(out))


def _cell_text(s: str) -> str:
    return s.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def code(value: object, *, cell: bool = False) -> Escaped:
    """``value`` as a code span."""
    text = flatten(value, limit=None)
    longest = max((len(r) for r in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    span = f"{fence}{pad}{text}{pad}{fence}"
    return Escaped(span.replace("|", "\\|") if cell else span)


def yaml_str(value: object) -> Escaped:
    """A double-quoted scalar (JSON string syntax, which YAML 1.2 reads as the same string)."""
    return Escaped(json.dumps(flatten(value, limit=None), ensure_ascii=False))
