"""Schema versions: parsed and compared as numbers, never as strings ("10.0" > "3.0")."""

from __future__ import annotations

import re
from typing import Any

KNOWN = ("1.0", "2.0", "3.0")
CURRENT = "3.0"
_VERSION = re.compile(r"^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$")


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
