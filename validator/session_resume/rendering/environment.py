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

from session_resume.core.markdown_escape import (
    MAX_VALUE_CHARS,
    Escaped,
    code,
    flatten,
    md_cell,
    md_inline,
    yaml_str,
)
from session_resume.resources import templates_dir

# lazy imports: Jinja (~20 ms to import) only when rendering

TYPE_CHECKING = False
if TYPE_CHECKING:
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
