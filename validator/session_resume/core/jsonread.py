"""Strict, total JSON reading: bytes in, a value or coded diagnostics out. Pure: no I/O.

Python's ``json`` accepts things the protocol refuses (NaN, duplicate keys, a BOM after decoding,
1e400 as infinity) and raises things that are not ``JSONDecodeError`` (RecursionError, ValueError
for over-long integers). Everything is caught here and turned into a code.
"""

from __future__ import annotations

import json
import re

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, pointer_join
from session_resume.core.locate import line_col, locate
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object (from an untrusted document), else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array (from an untrusted document), else an empty one."""
    return value if isinstance(value, list) else []


MAX_DEPTH = 64
_MAX_DOUBLE = 1.7976931348623157e308
# docs/spec.md §2.1: a number with a zero fractional part below this magnitude is that integer
# (`7.0` is 7) wherever it stands, as in JSON Schema and in every reader that keeps one number
# type (JavaScript's): so no migration, patch or message can tell `7.0` from `7`. Beyond it a
# float stays a float (1e16, printed `1e+16`).
INTEGRAL_BELOW = 1e16
_JSON_WS = " \t\n\r"


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _has_lone_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class _NonFinite(float):
    """Marks a NaN/Infinity in the parsed tree so its pointer can be reported."""


@record
class Parsed:
    value: Any = None
    text: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def corrupt(self) -> bool:
        """True when the bytes are not a usable JSON object (the recovery trigger)."""
        return any(d.code in CORRUPT_CODES for d in self.diagnostics)


# Codes that make a state file unreadable as state: recovery territory.
CORRUPT_CODES = frozenset(
    {"SR110", "SR111", "SR114", "SR115", "SR116", "SR120", "SR121", "SR122", "SR123", "SR124"}
)


def _detect_wide_encoding(data: bytes) -> str | None:
    head = data[:4]
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    # RFC 4627 §3: NUL bytes among the first four octets betray UTF-16/32 without a BOM.
    if len(head) >= 2 and (head[0] == 0 or head[1] == 0):
        return "UTF-16 or UTF-32"
    return None


def parse_json_bytes(
    data: bytes, *, file: str = "", max_depth: int = MAX_DEPTH, require_object: bool = True
) -> Parsed:
    """Decode and parse ``data``; never raises for any input."""
    out = Parsed()
    text = _decode(data, file, out.diagnostics)
    if text is None:
        return out
    out.text = text
    if text.strip(_JSON_WS) == "":
        out.diagnostics.append(diag("SR111", "the file holds only whitespace", file=file))
        return out
    hooks = _Hooks()
    try:
        value = hooks.loads(text)
    except json.JSONDecodeError as exc:
        out.diagnostics.append(
            diag("SR120", f"invalid JSON: {exc.msg}", file=file, line=exc.lineno, column=exc.colno)
        )
        return out
    except RecursionError:
        out.diagnostics.append(diag("SR123", "the document nests too deeply to parse", file=file))
        return out
    except ValueError as exc:  # e.g. an integer with more digits than Python allows
        out.diagnostics.append(diag("SR120", f"invalid JSON value: {exc}", file=file))
        return out
    if not _tree_ok(value, text, hooks, file=file, max_depth=max_depth, out=out.diagnostics):
        return out
    problem = _value_problem(value, text, file=file, require_object=require_object)
    if problem is not None:
        out.diagnostics.append(problem)
        return out
    out.value = value
    return out


def _decode(data: bytes, file: str, out: list[Diagnostic]) -> str | None:
    """The text of ``data`` (a leading UTF-8 BOM dropped with SR113), or None after SR110,
    SR114 or SR115."""
    if len(data) == 0:
        out.append(diag("SR110", "the file is empty (0 bytes)", file=file))
        return None
    wide = _detect_wide_encoding(data)
    if wide:
        out.append(
            diag("SR114", f"the file is encoded as {wide}, not UTF-8", file=file, line=1, column=1)
        )
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        out.append(
            diag(
                "SR113", "the file starts with a UTF-8 byte order mark", file=file, line=1, column=1
            )
        )
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8", errors="replace")
        line, col = line_col(good, len(good))
        out.append(
            diag(
                "SR115",
                f"invalid UTF-8 byte 0x{data[exc.start]:02x} at byte offset {exc.start}",
                file=file,
                line=line,
                column=col,
            )
        )
        return None


MAX_LOCATED = 50  # findings per document that are given a line and column
MAX_LISTED = 100  # findings of one kind listed per document; the rest in one counted finding


def number(f: float) -> float | int:
    """A JSON float as the protocol reads it: an integral one below 10^16 is the integer."""
    return int(f) if f.is_integer() and abs(f) < INTEGRAL_BELOW else f


def loads_known(data: bytes) -> Any:
    """Bytes the strict reader has already accepted without a finding, parsed again as it
    reads them (its integers included) without its checks."""
    return json.loads(data, parse_float=lambda s: number(float(s)))


class _Hooks:
    """``json.loads`` hooks that note duplicate keys (by the id of their object) and numbers
    that are not finite doubles (NaN, Infinity, beyond the double range)."""

    def __init__(self) -> None:
        self.dup_objects: dict[int, list[str]] = {}
        self.non_finite_seen = False

    def loads(self, text: str) -> Any:
        return json.loads(
            text,
            object_pairs_hook=self.on_pairs,
            parse_constant=self.on_constant,
            parse_float=self.on_float,
            parse_int=self.on_int,
        )

    def on_pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)  # in C; the last value of a repeated key wins, as in the loop below
        if len(obj) == len(pairs):
            return obj
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                self.dup_objects.setdefault(id(obj), []).append(k)
            seen.add(k)
        return obj

    def on_float(self, s: str) -> float | int:
        f = float(s)
        if f in (float("inf"), float("-inf")):
            self.non_finite_seen = True
            return _NonFinite(f)
        return number(f)

    def on_int(self, s: str) -> int | float:
        # Beyond the double range a JSON number overflows to infinity in most readers (and
        # int() refuses more than 4300 digits): the protocol calls both non-finite (SR122).
        digits = len(s) - (s[0] == "-")
        if digits > 308:
            self.non_finite_seen = True
            return _NonFinite("-inf" if s.startswith("-") else "inf")
        value = int(s)
        if digits >= 308 and abs(value) > _MAX_DOUBLE:
            self.non_finite_seen = True
            return _NonFinite("-inf" if value < 0 else "inf")
        return value

    def on_constant(self, s: str) -> float:
        self.non_finite_seen = True
        return _NonFinite(s)


def _tree_ok(
    value: Any, text: str, hooks: _Hooks, *, file: str, max_depth: int, out: list[Diagnostic]
) -> bool:
    """Depth (SR123), duplicate keys (SR121) and non-finite numbers (SR122) of the parsed
    tree, appended to ``out``; False when any of them was found."""
    if not hooks.dup_objects and not hooks.non_finite_seen:
        # The common case: only the depth needs checking, without building any path.
        non_finite: list[list[str | int]] = []
        dup_ptrs: list[tuple[list[str | int], str]] = []
        # No deeper than the number of containers: when the text opens no more than
        # max_depth of them (brackets inside strings counted too), no walk is needed. A
        # state file opens about 30; the walk was 30 us of every strict parse.
        depth_ok = text.count("{") + text.count("[") <= max_depth or _depth_within(value, max_depth)
    else:
        depth_ok, non_finite, dup_ptrs = _scan_tree(value, hooks.dup_objects, max_depth)
    if not depth_ok:
        out.append(diag("SR123", f"the document nests deeper than {max_depth} levels", file=file))
        return False
    # Locating a pointer rescans the text: only the first MAX_LOCATED findings get a line and
    # column, so thousands of duplicates or NaNs cost linear time, not quadratic.
    for n, (ptr_parts, key) in enumerate(dup_ptrs[:MAX_LISTED]):
        ln, cl = (
            _loc(text, ptr_parts, key_occurrence=2, key=key) if n < MAX_LOCATED else (None, None)
        )
        out.append(
            diag(
                "SR121",
                f"duplicate key {key!r}",
                file=file,
                pointer=pointer_join([*ptr_parts, key]),
                line=ln,
                column=cl,
            )
        )
    _count_the_rest(out, "SR121", len(dup_ptrs), "duplicate keys", file)
    for n, ptr_parts in enumerate(non_finite[:MAX_LISTED]):
        ln, cl = _loc(text, ptr_parts) if n < MAX_LOCATED else (None, None)
        out.append(
            diag(
                "SR122",
                "NaN, Infinity or a number beyond the double range is not a usable JSON number",
                file=file,
                pointer=pointer_join(ptr_parts),
                line=ln,
                column=cl,
            )
        )
    _count_the_rest(out, "SR122", len(non_finite), "non-finite numbers", file)
    return not (dup_ptrs or non_finite)


def _count_the_rest(out: list[Diagnostic], code: str, found: int, what: str, file: str) -> None:
    """One finding for all those past :data:`MAX_LISTED`: a file of 1 MB can hold 166,000
    duplicate keys, and listing each would cost seconds and bury the first (issue 18)."""
    if found > MAX_LISTED:
        out.append(
            diag(
                code,
                f"{found - MAX_LISTED:,} more {what} (only the first {MAX_LISTED} are listed)",
                file=file,
            )
        )


def _value_problem(value: Any, text: str, *, file: str, require_object: bool) -> Diagnostic | None:
    """SR116 for a lone surrogate, SR124 for a top level that is not the required object."""
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        return diag(
            "SR116",
            "a \\u escape encodes a lone surrogate (half of a UTF-16 pair), which is "
            "not a Unicode character",
            file=file,
        )
    if require_object and not isinstance(value, dict):
        return diag(
            "SR124",
            f"the top-level value is {_json_type(value)}, not an object",
            file=file,
            line=1,
            column=1,
        )
    return None


def _loc(
    text: str, parts: list[str | int], *, key_occurrence: int = 1, key: str | None = None
) -> tuple[int | None, int | None]:
    idx = locate(text, [*parts, key] if key is not None else parts, key_occurrence=key_occurrence)
    if idx is None:
        return None, None
    return line_col(text, idx)


def _depth_within(root: Any, max_depth: int) -> bool:
    """True if no more than ``max_depth`` containers nest (the same rule as _scan_tree)."""
    level = [root] if isinstance(root, (dict, list)) else []  # only containers from here on
    for _ in range(max_depth):
        nxt: list[Any] = []
        add = nxt.append
        for node in level:
            for v in node.values() if isinstance(node, dict) else node:
                if isinstance(v, (dict, list)):
                    add(v)
        if not nxt:
            return True
        level = nxt
    return False


def _scan_tree(
    root: Any, dup_objects: dict[int, list[str]], max_depth: int
) -> tuple[bool, list[list[str | int]], list[tuple[list[str | int], str]]]:
    """Iteratively walk the tree: depth limit, NaN pointers, duplicate-key pointers."""
    non_finite: list[list[str | int]] = []
    dups: list[tuple[list[str | int], str]] = []
    stack: list[tuple[Any, list[str | int]]] = [(root, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, (dict, list)) and len(path) >= max_depth:
            return False, [], []
        if isinstance(node, dict):
            for k in dup_objects.get(id(node), ()):
                dups.append((path, k))
            stack.extend((v, [*path, k]) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, [*path, i]) for i, v in enumerate(node))
        elif isinstance(node, _NonFinite):
            non_finite.append(path)
    non_finite.sort(key=lambda p: [str(x) for x in p])
    return True, non_finite, dups


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
