"""Map a JSON pointer back to a line and column in the source text. Pure; iterative.

Only failing files pay for this: the valid path never rescans the text.
"""

from __future__ import annotations

import json.decoder
import re
from collections.abc import Callable

# The C scanner json itself uses; typeshed does not declare it.
scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

_WS = re.compile(r"[ \t\n\r]*")
_STRUCT = re.compile(r'["{}\[\]]')


def line_col(text: str, index: int) -> tuple[int, int]:
    """1-based line and column (in code points) of ``text[index]``."""
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


def _skip_ws(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m else i


def _skip_value(text: str, i: int) -> int:
    """Index just past the value starting at ``i`` (which must be valid JSON)."""
    c = text[i]
    if c == '"':
        return scanstring(text, i + 1)[1]
    if c not in "{[":
        m = re.compile(r"[^,\]}\s]*").match(text, i)
        return m.end() if m else i + 1
    depth = 0
    while True:
        m = _STRUCT.search(text, i)
        if m is None:
            return len(text)
        i = m.start()
        ch = text[i]
        if ch == '"':
            i = scanstring(text, i + 1)[1]
            continue
        depth += 1 if ch in "{[" else -1
        i += 1
        if depth == 0:
            return i


def locate(text: str, parts: list[str | int], *, key_occurrence: int = 1) -> int | None:
    """Index of the value at ``parts``; for the last part of an object path with
    ``key_occurrence`` > 1, the index of that (duplicate) key instead. None if not found."""
    try:
        i = _skip_ws(text, 0)
        for n, part in enumerate(parts):
            last = n == len(parts) - 1
            if text[i] == "{":
                i = _skip_ws(text, i + 1)
                seen = 0
                found = False
                while text[i] != "}":
                    key_start = i
                    key, i = scanstring(text, i + 1)
                    i = _skip_ws(text, i)
                    i = _skip_ws(text, i + 1)  # past ':'
                    if key == str(part):
                        seen += 1
                        if last and key_occurrence > 1:
                            if seen == key_occurrence:
                                return key_start
                        else:
                            found = True
                            break
                    i = _skip_ws(text, _skip_value(text, i))
                    if text[i] == ",":
                        i = _skip_ws(text, i + 1)
                if not found:
                    return None
            elif text[i] == "[":
                idx = int(part)
                i = _skip_ws(text, i + 1)
                for _ in range(idx):
                    if text[i] == "]":
                        return None
                    i = _skip_ws(text, _skip_value(text, i))
                    if text[i] == ",":
                        i = _skip_ws(text, i + 1)
                if text[i] == "]":
                    return None
            else:
                return None
        return i
    except (IndexError, ValueError):
        return None
