"""Output formats for validation reports: text, json, github, sarif."""

from __future__ import annotations

from collections.abc import Callable

from ..diagnostics import FileReport
from .github import render_github
from .json import render_json
from .sarif import render_sarif
from .text import render_text

Renderer = Callable[[list[FileReport], bool], str]
FORMATS: dict[str, Renderer] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}
