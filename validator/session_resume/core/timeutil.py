"""RFC 3339 UTC timestamps as the protocol writes them (``2026-03-02T10:15:00Z``)."""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime

# ASCII digits only ([0-9], not \d: no Arabic-Indic digits) and \Z, not $ (which also matches
# before a trailing newline).
_TS = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z\Z", re.ASCII)


def parse_ts(value: object) -> datetime | None:
    """The instant, or None if ``value`` is not a well-formed, real UTC timestamp."""
    if not isinstance(value, str):
        return None
    return _parse_str(str(value))  # str(): a subclass's own __eq__/__hash__ never meets the cache


# A state holds a few dozen timestamps and every write validates them all again: the same
# strings, mostly. A datetime is immutable, so a cached answer is the answer.
@functools.lru_cache(maxsize=1024)
def _parse_str(value: str) -> datetime | None:
    m = _TS.match(value)
    if not m:
        return None
    frac = (m.group(2) or "0")[:6].ljust(6, "0")
    s = m.group(1)
    try:  # direct construction: strptime costs ~8 us a call and 3 ms to import
        return datetime(
            int(s[0:4]),
            int(s[5:7]),
            int(s[8:10]),
            int(s[11:13]),
            int(s[14:16]),
            int(s[17:19]),
            int(frac),
            tzinfo=UTC,
        )
    except ValueError:
        return None


def looks_like_ts(value: object) -> bool:
    return isinstance(value, str) and bool(_TS.match(value))


def format_ts(dt: datetime) -> str:
    """Second precision, UTC, ``Z`` suffix: the form every writer uses."""
    u = dt.astimezone(UTC)  # the year always four digits (strftime writes year 1 as "1")
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


EARLIEST_NOW = datetime(1970, 1, 1, tzinfo=UTC)


def parse_now(value: str) -> datetime:
    """Parse a ``--now`` argument: RFC 3339 with Z or an offset, from 1970 (the clock's and
    the file times' epoch) to the end of year 9999 (year 1 and its neighbours overflow the
    clock arithmetic of a write; issue 18 found a lease written with such a heartbeat)."""
    dt = parse_ts(value)
    if dt is None:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            raise ValueError(f"timestamp {value!r} has no timezone; add Z")
        try:
            dt = parsed.astimezone(UTC)
        except OverflowError:
            dt = None
    if dt is None or dt < EARLIEST_NOW:
        raise ValueError(
            f"{value!r} is outside 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59Z; nothing was done"
        )
    return dt
