"""Hypothesis strategies shared by the fuzz groups: JSON values, documents mutated field by
field, bytes near a valid file, leases, worklog events and session directories.

Names keep the leading underscore they had in the single test module they come from:
the bounded profile derandomizes each property from its own source, so properties whose
source is unchanged keep drawing the same examples.
"""

from __future__ import annotations

import copy
import json
import socket
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from session_resume.storage import store, worklog
from session_resume.storage.lease_file import SENTINEL

from .checks import NOW
from conftest import REPO, apex_state

_SEEDS = sorted((REPO / "tests" / "fixtures" / "migrate").glob("*.json"))


# --- strategies: JSON values ---------------------------------------------------------------

_TS_GOOD = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
_INTERESTING_TEXT = st.sampled_from(
    [
        "",
        " ",
        "3.0",
        "2.0",
        "1.0",
        "10.0",
        "3.0.0",
        "v3",
        "3.5",
        "3_5",
        "D001",
        "D1000",
        "pending",
        "in_progress",
        "complete",
        "skipped",
        "blocked",
        "phase_2_waf",
        "phase_3_cost",
        "phase_1_prereqs",
        "apex",
        "dotagent",
        "generic",
        "../../etc/passwd",
        "/etc/passwd",
        "C:\\Windows\\win.ini",
        "\\\\server\\share",
        "a/../../b",
        "a\x00b",
        "a\nb",
        "line\r\n",
        "\u202ereversed",
        "\ufeffbom",
        "\ud800",
        "a\udfffb",
        "{{ 7*7 }}",
        "{% raw %}",
        "<script>",
        "2026-02-30T10:00:00Z",
        "2026-03-02T10:15:00+02:00",
        "9999-12-31T23:59:59Z",
        "0001-01-01T00:00:00Z",
        "2026-03-02T10:15:00.123456789Z",
    ]
)
_HUGE_TEXT = st.builds(
    lambda ch, n: ch * n, st.sampled_from(["x", "é", "\U0001f600", "\x00"]), st.integers(1, 70_000)
)
_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(codec="utf-8"), max_size=12),
    _INTERESTING_TEXT,
    _TS_GOOD,
)
_NUMBERS = st.one_of(
    st.integers(-3, 12),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.5, -0.0, 1e308, 5e-324, 3.0]),
)
SCALARS = st.one_of(st.none(), st.booleans(), _NUMBERS, _TEXT)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), _INTERESTING_TEXT), inner, max_size=4),
    ),
    max_leaves=10,
)


def _nest(value: Any, depth: int, kinds: list[bool]) -> Any:
    for i in range(depth):
        value = [value] if kinds[i % len(kinds)] else {"k": value}
    return value


DEEP = st.builds(
    _nest, SCALARS, st.integers(1, 120), st.lists(st.booleans(), min_size=1, max_size=3)
)
VALUES = st.one_of(JSON_VALUES, SCALARS, DEEP, _HUGE_TEXT)


# --- strategies: documents mutated field by field ------------------------------------------


def _pointers(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.extend(_pointers(v, (*prefix, k)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.extend(_pointers(v, (*prefix, i)))
    return out


def _seed_docs() -> list[dict[str, Any]]:
    docs = [apex_state()]
    for p in _SEEDS:
        docs.append(json.loads(p.read_text()))
    return docs


SEED_DOCS = _seed_docs()


@st.composite
def mutated_docs(draw: st.DrawFn, max_mutations: int = 4) -> dict[str, Any]:
    """A valid document of some version with 0..N random edits at random JSON pointers."""
    doc: Any = copy.deepcopy(draw(st.sampled_from(SEED_DOCS)))
    for _ in range(draw(st.integers(0, max_mutations))):
        ptrs = _pointers(doc)
        path = draw(st.sampled_from(ptrs))
        op = draw(st.sampled_from(["replace", "delete", "insert"]))
        parent: Any = doc
        for part in path[:-1]:
            parent = parent[part]
        if not path:  # the root itself
            if op == "insert" and isinstance(doc, dict):
                doc[draw(st.one_of(st.text(max_size=10), _INTERESTING_TEXT))] = draw(VALUES)
            continue
        last = path[-1]
        if op == "replace":
            parent[last] = draw(VALUES)
        elif op == "delete":
            del parent[last]
        else:
            target = parent[last]
            if isinstance(target, dict):
                key = draw(st.one_of(st.text(max_size=10), _INTERESTING_TEXT))
                target[key] = draw(VALUES)
            elif isinstance(target, list):
                target.insert(draw(st.integers(0, len(target))), draw(VALUES))
            else:
                parent[last] = draw(VALUES)
    assume(isinstance(doc, dict))
    result: dict[str, Any] = doc
    return result


def dumps(doc: Any, indent: int | None = 2) -> bytes:
    """JSON bytes as an editor would write them (ensure_ascii: lone surrogates as escapes)."""
    return json.dumps(doc, indent=indent).encode("utf-8")


# --- strategies: bytes near a valid file ---------------------------------------------------

_BOMS = [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"]


@st.composite
def near_valid_bytes(draw: st.DrawFn) -> bytes:
    doc = draw(st.one_of(st.sampled_from(SEED_DOCS), mutated_docs(max_mutations=1)))
    data = dumps(doc, indent=draw(st.sampled_from([None, 2])))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(
            st.sampled_from(
                [
                    "truncate",
                    "bom",
                    "utf16",
                    "flip",
                    "insert",
                    "delete",
                    "dup_key",
                    "nonfinite",
                    "trailing",
                    "deep",
                    "nul",
                    "crlf",
                ]
            )
        )
        n = len(data)
        i = draw(st.integers(0, max(n - 1, 0)))
        if kind == "truncate":
            data = data[:i]
        elif kind == "bom":
            data = draw(st.sampled_from(_BOMS)) + data
        elif kind == "utf16":
            data = data.decode("utf-8", "replace").encode(
                draw(st.sampled_from(["utf-16-le", "utf-16-be", "utf-32"]))
            )
        elif kind == "flip" and n:
            data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1 :]
        elif kind == "insert":
            data = data[:i] + draw(st.binary(min_size=1, max_size=8)) + data[i:]
        elif kind == "delete":
            data = data[:i] + data[i + draw(st.integers(1, 16)) :]
        elif kind == "dup_key" and data.startswith(b"{"):
            data = b'{"project": "dup", ' + data[1:]
        elif kind == "nonfinite":
            data = data.replace(b"3,", b"NaN,", 1).replace(b": 2,", b": 1e999,", 1)
        elif kind == "trailing":
            data = data + draw(st.sampled_from([b"x", b"}", b" {}", b"\x00", b"\n\n"]))
        elif kind == "deep":
            depth = draw(st.integers(60, 3000))
            data = data.replace(b"[]", b"[" * depth + b"]" * depth, 1)
        elif kind == "nul":
            data = data[:i] + b"\x00" + data[i:]
        elif kind == "crlf":
            data = data.replace(b"\n", b"\r\n")
    return data


ANY_BYTES = st.one_of(st.binary(max_size=512), near_valid_bytes())


# --- strategies: leases and worklog events --------------------------------------------------

_SENTINELS = st.one_of(
    st.none(),
    st.just({}),
    st.fixed_dictionaries(
        {
            "v": st.just(1),
            "session": st.one_of(st.sampled_from(["s1", "s2"]), st.text(max_size=5)),
            "owner": st.text(max_size=5),
            "host": st.sampled_from([socket.gethostname(), "elsewhere"]),
            "started": _TS_GOOD,
            "heartbeat": st.one_of(
                _TS_GOOD,
                st.just(NOW.strftime("%Y-%m-%dT%H:%M:%SZ")),
                st.just((NOW - timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")),
                _TEXT,
            ),
        },
        optional={"pid": st.one_of(st.none(), st.integers(), _TEXT)},
    ),
    st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4),
)
_EVENTS = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "v": st.just(1),
                "ts": st.one_of(_TS_GOOD, _TEXT),
                "seq": st.integers(0, 100),
                "session": st.sampled_from(["s1", "s2"]),
                "event": st.sampled_from(list(worklog.EVENTS)),
            },
            optional={"step": _TEXT, "sub_step": _TEXT},
        ),
        st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3),
    ),
    max_size=5,
)


# --- strategies: session directories --------------------------------------------------------

KINDS = ["absent", "file", "empty", "dir", "fifo", "link_inside", "link_dangling", "link_out"]


def _doc_bytes() -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.sampled_from(SEED_DOCS).map(dumps),
        mutated_docs(max_mutations=2).map(dumps),
        near_valid_bytes(),
        st.binary(max_size=64),
    )


@st.composite
def entry(draw: st.DrawFn, contents: st.SearchStrategy[bytes], weights: bool = True) -> Any:
    kind = draw(st.sampled_from(["file"] * 6 + ["absent"] * 4 + KINDS) if weights else KINDS)
    return (kind, draw(contents) if kind == "file" else b"")


def _worklog_bytes() -> st.SearchStrategy[bytes]:
    line = st.one_of(
        _EVENTS.map(lambda evs: b"".join(json.dumps(e).encode() + b"\n" for e in evs)),
        st.binary(max_size=40),
        st.just(b'{"v": 1, "seq": 3, "ev'),
    )
    return st.lists(line, max_size=4).map(b"".join)


def _sentinel_bytes() -> st.SearchStrategy[bytes]:
    return st.one_of(
        _SENTINELS.map(lambda s: json.dumps(s).encode()),
        st.binary(max_size=40),
    )


SESSION_DIRS = st.fixed_dictionaries(
    {
        store.STATE: entry(_doc_bytes()),
        store.BAK: entry(_doc_bytes()),
        store.LOCK: entry(st.binary(max_size=8)),
        worklog.WORKLOG: entry(_worklog_bytes()),
        SENTINEL: entry(_sentinel_bytes()),
        ".00-session-state.json.abc123.tmp": entry(_doc_bytes()),
        store.STATE + ".corrupt-20260101T000000Z": entry(st.binary(max_size=16)),
    }
)


# --- fixtures by name -----------------------------------------------------------------------


def _seed(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPO / "tests" / "fixtures" / "migrate" / name).read_text())
    return data
