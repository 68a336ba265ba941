"""Locate the protocol data (schemas, workflows, templates).

Installed from a wheel they are package data under ``session_resume/_data``; in a source
checkout (editable install) they are the top-level folders, which stay the single source.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Any


@functools.lru_cache(maxsize=1)
def data_root() -> Path:
    packaged = Path(str(resources.files("session_resume"))) / "_data"
    if (packaged / "schema").is_dir():
        return packaged
    source = Path(__file__).resolve().parents[2]
    if (source / "schema" / "session-state").is_dir():
        return source
    raise RuntimeError("session-resume's schema files are missing from the installation")


def schema_dir() -> Path:
    return data_root() / "schema"


def templates_dir() -> Path:
    return data_root() / "templates"


@functools.cache
def load_schema(relpath: str) -> dict[str, Any]:
    """A schema by its path under ``schema/``, e.g. ``session-state/3.0.json``."""
    with open(schema_dir() / relpath, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data
