"""The version registry: the one place that names the state file's schema versions.

Versions are parsed and compared as numbers, never as strings ("10.0" > "9.0"). Adding a
version is its schema (``schema/session-state/<version>.json``), one migration module
(``core/migration/v<N>_to_v<M>.py`` with ``SOURCE``, ``TARGET`` and ``upgrade``) and one
line here; see docs/architecture.md, "Add a schema version".
"""

from __future__ import annotations

import re

from session_resume.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record(frozen=True)
class SchemaVersion:
    """A version of the state file. ``upgrade``: the module of
    :mod:`session_resume.core.migration` that migrates the previous version to this one;
    ``repair``: the module that normalises known defects of documents written at this
    version (applied before they move on)."""

    name: str
    upgrade: str | None = None
    repair: str | None = None

    @property
    def schema(self) -> str:
        """The schema's path under ``schema/``."""
        return f"session-state/{self.name}.json"


REGISTRY: tuple[SchemaVersion, ...] = (
    SchemaVersion("1.0"),
    SchemaVersion("2.0", upgrade="v1_to_v2"),
    SchemaVersion("3.0", upgrade="v2_to_v3", repair="repair_v3"),
)
KNOWN = tuple(v.name for v in REGISTRY)
CURRENT = REGISTRY[-1].name
CURRENT_SCHEMA = REGISTRY[-1].schema
_VERSION = re.compile(r"^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\Z")


def parse_version(raw: str) -> tuple[int, int] | None:
    m = _VERSION.match(raw)
    return (int(m.group(1)), int(m.group(2))) if m else None


def version_of(doc: dict[str, Any]) -> tuple[str | None, tuple[int, int] | None]:
    """The document's version string and number. A missing ``schema_version`` means 1.0;
    a value that is not a version string gives (None, None)."""
    if "schema_version" not in doc:
        return "1.0", (1, 0)
    raw = doc["schema_version"]
    if not isinstance(raw, str):
        return None, None
    num = parse_version(raw)
    return (raw, num) if num else (None, None)


def is_newer_than_known(num: tuple[int, int]) -> bool:
    return num > parse_version(CURRENT)  # type: ignore[operator]


def is_known(raw: str) -> bool:
    return raw in KNOWN
