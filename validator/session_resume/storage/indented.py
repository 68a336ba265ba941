"""``json.dumps(value, indent=2, ensure_ascii=False)``, the state file's format, in half the time.

With ``indent`` the standard library falls back from its C encoder to a generator per value
in Python; a save spends more time there than on the rest of its checks but validation. This
encoder writes the same text for plain JSON values (dict with str keys, list, tuple, str, int,
finite float, bool, None: the exact types, no subclasses) and hands anything else (NaN, a
non-str key, a subclass, a cycle) back to ``json.dumps``, so its output and its errors are
always the standard library's (tests/test_indented_json.py compares the two).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

_INF = float("inf")


class _Unusual(Exception):
    """A value this encoder leaves to ``json.dumps``."""


def dumps(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``."""
    out: list[str] = []
    try:
        _encode(value, "\n", out)
    except (_Unusual, RecursionError):
        return json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(out)


def _encode(o: Any, newline: str, out: list[str]) -> None:
    """Append ``o``'s text; ``newline`` is a newline and the indent of ``o``'s own line."""
    t = type(o)
    if t is str:
        out.append(encode_basestring(o))
    elif t is dict:
        if not o:
            out.append("{}")
            return
        inner = newline + "  "
        sep = "{" + inner
        for k, v in o.items():
            if type(k) is not str:
                raise _Unusual
            out.append(sep)
            out.append(encode_basestring(k))
            out.append(": ")
            _encode(v, inner, out)
            sep = "," + inner
        out.append(newline + "}")
    elif t is list or t is tuple:
        if not o:
            out.append("[]")
            return
        inner = newline + "  "
        sep = "[" + inner
        for v in o:
            out.append(sep)
            _encode(v, inner, out)
            sep = "," + inner
        out.append(newline + "]")
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif t is int:
        out.append(int.__repr__(o))
    elif t is float and o == o and o not in (_INF, -_INF):
        out.append(float.__repr__(o))
    else:
        raise _Unusual
