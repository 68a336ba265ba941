"""The shared Jinja environment of the renderers (``templates/``) and its escaping filters.

Escaping. The templates run with autoescape off (the output is Markdown, not HTML), but the
environment's ``finalize`` refuses any ``{{ value }}`` that did not go through one of this
module's escaping filters (an :class:`Escaped` string) or is not an integer, so a template
cannot print a raw value by mistake. Filters:

``md``
    Untrusted text (everything that comes from a state file): rendered as literal text on one
    line. Line breaks and other control characters become spaces; Markdown punctuation that
    could start markup (``\\ ` * _ [ ] | ~ # $``) is backslash-escaped, ``&`` too, ``<`` and
    ``>`` become ``&lt;`` and ``&gt;``, and a leading block marker (``-``, ``+``, ``=``,
    ``1.``) is escaped. So a value can never open a heading, a list item, a block quote, a
    table cell, a link, emphasis, a code span or HTML.
``md_cell``
    Trusted Markdown from the project's own schema and workflow files (descriptions with
    code spans): flattened to one line, ``|`` escaped for table cells, ``<``/``>`` outside
    code spans written as entities.
``code`` / ``code_cell``
    An identifier as a code span (backtick fence longer than any backtick run inside);
    ``code_cell`` also escapes ``|`` for tables.
``yaml_str``
    A YAML (JSON-compatible) double-quoted scalar, for the skill frontmatter.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from typing import Any

__all__ = [
    "MAX_VALUE_CHARS",
    "Escaped",
    "code",
    "environment",
    "flatten",
    "md_cell",
    "md_inline",
    "render_template",
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


def _finalize(value: Any) -> Any:
    if isinstance(value, Escaped) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    from jinja2 import TemplateRuntimeError

    raise TemplateRuntimeError(
        f"a template printed {value!r} without an escaping filter (md, md_cell, code, yaml_str)"
    )


@functools.cache
def environment() -> Any:
    """The Jinja environment over ``templates/`` with the escaping filters (built once)."""
    import jinja2

    from session_resume.resources import templates_dir

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = md_inline
    env.filters["md_cell"] = md_cell
    env.filters["code"] = code
    env.filters["code_cell"] = functools.partial(code, cell=True)
    env.filters["yaml_str"] = yaml_str
    return env


def render_template(template: str, **context: Any) -> str:
    """Render ``templates/{template}`` with ``context``."""
    text: str = environment().get_template(template).render(**context)
    return text
