"""Output formats for validation reports: text, json, github, sarif (imported on demand)."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from session_resume.core.diagnostics import FileReport

Renderer = Callable[[list[FileReport], bool], str]
NAMES = ("text", "json", "github", "sarif")


def renderer(name: str) -> Renderer:
    module = importlib.import_module(f"{__name__}.{name}")
    fn: Renderer = getattr(module, f"render_{name}")
    return fn
