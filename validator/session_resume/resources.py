"""Locate the protocol data (schemas, workflows, templates, the conformance suite and the
specification it cites).

Installed from a wheel they are package data under ``session_resume/_data``; in a source
checkout (editable install) they are the top-level folders, which stay the single source.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@functools.lru_cache(maxsize=1)
def data_root() -> Path:
    # The package directory is checked first without importlib.resources (whose import
    # costs ~10 ms of a cold `validate`); importlib.resources covers zipped installs.
    here = Path(__file__).parent
    for candidate in (here / "_data", here.parents[1]):
        if (candidate / "schema" / "session-state").is_dir():
            return candidate
    # lazy: only a zipped install needs it
    from importlib import resources

    packaged = Path(str(resources.files("session_resume"))) / "_data"
    if (packaged / "schema").is_dir():
        return packaged
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


def conformance_cases_dir() -> Path | None:
    """The conformance suite's cases (``conformance/cases``), or None if not installed."""
    candidate = data_root() / "conformance" / "cases"
    return candidate if candidate.is_dir() else None


def spec_path(base: Path | None = None) -> Path | None:
    """``docs/spec.md`` under ``base`` (default: the data root), or None if it is not there."""
    candidate = (base or data_root()) / "docs" / "spec.md"
    return candidate if candidate.is_file() else None
