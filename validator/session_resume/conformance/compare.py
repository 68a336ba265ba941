"""Expected versus actual: codes (as sets), actions, decision fields, and file trees.

The rules (docs/conformance.md, "How results are compared"):

- codes are compared as **sets**: every expected code must be reported and no other code may
  be; how often a code is reported is not compared (one fault may break two keywords);
- ``action`` and ``status`` exactly; ``expected.decision`` is a subset: only the keys it names
  are compared (recursively for objects; lists and scalars exactly);
- files after the operation: the same set of paths (the lock file ignored) and, per file,
  ``*.jsonl`` line by line (a line that is a JSON object is compared as JSON without its
  ``detail``; other lines byte for byte), other files whose expected bytes are JSON compared as
  JSON values (key order and whitespace do not matter), everything else byte for byte;
  ``*.corrupt-*`` files always byte for byte, and so is every file the case lists in
  ``expected.bytes`` (where the spec says "byte for byte": a restored ``.bak``);
- free text (docs/spec.md §9: a ``skip_reason``, a finding title, a placeholder rationale migration
  writes itself) is compared by presence and type only: the JSON pointers a case lists in
  ``expected.free_text`` (per file) must hold a string, non-empty when the expected one is.
  Where prose can stand is fixed (:data:`PROSE_POINTERS` in files, :func:`prose_in_decision` in
  a resume answer); the lint refuses a case that would compare prose exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from session_resume.conformance.cases import Entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_DIFF_LINES = 40

# Where a state file (or a .bak compared as JSON) can hold prose an implementation composes
# itself (docs/spec.md §9, "Free text"; docs/conformance.md, "How results are compared"):
# `*` is any key or index.
# A string there that is no string of the case's input files was written by the
# implementation, so a case must list it in `expected.free_text` (the lint checks).
PROSE_POINTERS = (
    "/steps/*/skip_reason",
    "/open_findings/*",
    "/decision_log/*/title",
    "/decision_log/*/choice",
    "/decision_log/*/rationale",
)
# Keys of a resume answer that hold prose, at any depth (a reason's or diagnostic's text) or at
# a fixed place (why the briefing loads or skips a file): never named in `expected.decision`.
PROSE_KEYS = ("message", "hint")
# Values of a file that name the machine the suite runs on, compared by presence and type: the
# lease's `host` (docs/spec.md §7; a sequence's writes take leases, docs/conformance.md).
MACHINE_POINTERS = {"00-session.active": ("/host",)}
PROSE_DECISION_POINTERS = ("/briefing/load/*/why", "/briefing/skip/*/reason")


def _show(value: Any) -> str:
    s = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return s if len(s) <= 120 else s[:117] + "..."


def _codes(value: Any) -> set[str]:
    """The codes of a result: bare strings, or ``{code, message, hint}`` objects (a resume
    decision of version 2)."""
    if not isinstance(value, list):
        return set()
    return {str(c.get("code")) if isinstance(c, dict) else str(c) for c in value}


def compare_codes(label: str, expected: Iterable[str], actual: Any) -> list[str]:
    want = set(expected)
    got = _codes(actual)
    if want == got:
        return []
    missing = sorted(want - got)
    extra = sorted(got - want)
    parts = []
    if missing:
        parts.append(f"missing {', '.join(missing)}")
    if extra:
        parts.append(f"unexpected {', '.join(extra)}")
    return [
        f"{label}: expected [{', '.join(sorted(want))}], got [{', '.join(sorted(got))}] "
        f"({'; '.join(parts)})"
    ]


def json_equal(a: Any, b: Any) -> bool:
    """Equality in the JSON data model: booleans are not numbers, 1 equals 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b) and not (a is None and b is None):
        return False
    return bool(a == b)


def _ptr(parts: list[str | int]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts) or "/"


def json_diff(expected: Any, actual: Any, path: list[str | int] | None = None) -> list[str]:
    """Readable differences, one line per differing JSON pointer."""
    path = path or []
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for k in expected:
            if k not in actual:
                out.append(f"{_ptr([*path, k])}: missing (expected {_show(expected[k])})")
            else:
                out.extend(json_diff(expected[k], actual[k], [*path, k]))
        for k in actual:
            if k not in expected:
                out.append(f"{_ptr([*path, k])}: unexpected {_show(actual[k])}")
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        out = []
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            out.extend(json_diff(e, a, [*path, i]))
        return out
    if json_equal(expected, actual):
        return []
    return [f"{_ptr(path)}: expected {_show(expected)}, got {_show(actual)}"]


def subset_diff(expected: Any, actual: Any, path: list[str | int]) -> list[str]:
    """Compare only what ``expected`` names (objects recursively)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{_ptr(path)}: expected an object, got {_show(actual)}"]
        out = []
        for k, v in expected.items():
            if k not in actual:
                out.append(f"{_ptr([*path, k])}: missing (expected {_show(v)})")
            else:
                out.extend(subset_diff(v, actual[k], [*path, k]))
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        # an entry's prose (a briefing file's `why`) is never named, so never compared
        actual = [
            {k: v for k, v in a.items() if not _prose_at([*path, i, k])}
            if isinstance(a, dict)
            else a
            for i, a in enumerate(actual)
        ]
    return json_diff(expected, actual, path)


def _prose_at(path: list[str | int]) -> bool:
    """Whether ``path`` in a decision is one of ``PROSE_DECISION_POINTERS``."""
    parts = [str(p) for p in path]
    for pattern in PROSE_DECISION_POINTERS:
        want = pattern.split("/")[1:]
        if len(want) == len(parts) and all(w in ("*", p) for w, p in zip(want, parts, strict=True)):
            return True
    return False


# --- results -----------------------------------------------------------------------------


def compare_result(operation: str, expected: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """Differences between a case's ``expected`` and an adapter's ``result``."""
    out: list[str] = []
    if operation == "resume":
        decision = result.get("decision")
        if not isinstance(decision, dict):
            return ["result: no decision object"]
        if decision.get("action") != expected.get("action"):
            out.append(f"action: expected {expected.get('action')}, got {decision.get('action')}")
        out += compare_codes("reasons", expected.get("reasons", []), decision.get("reasons"))
        out += compare_codes("warnings", expected.get("warnings", []), decision.get("warnings"))
        if isinstance(expected.get("decision"), dict):
            out += [f"decision{d}" for d in subset_diff(expected["decision"], decision, [])]
        return out
    if "written" in expected or "written" in result:  # a write of a sequence
        for key in ("written", "session", "revision"):
            if key in expected and not json_equal(expected[key], result.get(key)):
                out.append(f"{key}: expected {_show(expected[key])}, got {_show(result.get(key))}")
        return out + compare_codes("codes", expected.get("codes", []), result.get("codes"))
    if "status" in expected and result.get("status") != expected["status"]:
        out.append(f"status: expected {expected['status']}, got {result.get('status')}")
    out += compare_codes("codes", expected.get("codes", []), result.get("codes"))
    return out


# --- file trees --------------------------------------------------------------------------


def _strict_json(data: bytes) -> tuple[bool, Any]:
    def no_constant(_s: str) -> Any:
        raise ValueError("not JSON")

    try:
        return True, json.loads(data.decode("utf-8"), parse_constant=no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False, None


def _without_detail(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k != "detail"}
    return value


def _compare_jsonl(name: str, want: bytes, got: bytes) -> list[str]:
    wl, gl = want.split(b"\n"), got.split(b"\n")
    out = []
    if len(wl) != len(gl):
        out.append(
            f"{name}: expected {len(wl) - 1} line(s) (newline-terminated), got {len(gl) - 1}"
        )
    for i, (w, g) in enumerate(zip(wl, gl, strict=False), start=1):
        ok_w, jw = _strict_json(w)
        if ok_w and isinstance(jw, dict):
            ok_g, jg = _strict_json(g)
            if not ok_g:
                out.append(f"{name} line {i}: expected a JSON object, got {g[:80]!r}")
                continue
            for d in json_diff(_without_detail(jw), _without_detail(jg)):
                out.append(f"{name} line {i}: {d}")
        elif w != g:
            out.append(f"{name} line {i}: expected bytes {w[:80]!r}, got {g[:80]!r}")
    return out


def resolve_pointer(doc: Any, parts: list[str]) -> tuple[bool, Any, Any]:
    """(found, parent, key) of a JSON pointer's parts in ``doc``."""
    parent: Any = None
    key: Any = None
    node = doc
    for part in parts:
        parent = node
        if isinstance(node, dict) and part in node:
            key, node = part, node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            key, node = int(part), node[int(part)]
        else:
            return False, None, None
    return True, parent, key


def pointer_parts(pointer: str) -> list[str]:
    if pointer in ("", "/"):
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]


def free_text_diff(name: str, want: Any, got: Any, pointers: Iterable[str]) -> list[str]:
    """Check the free-text fields and blank them out of ``got`` (a copy) so that the JSON
    comparison that follows ignores their wording. Returns the shape problems."""
    out = []
    for ptr in pointers:
        parts = pointer_parts(ptr)
        ok_w, wp, wk = resolve_pointer(want, parts)
        ok_g, gp, gk = resolve_pointer(got, parts)
        if not ok_w or not parts:
            out.append(f"{name}: free_text {ptr} names nothing in the expected file")
            continue
        if not ok_g:
            continue  # reported as missing by the JSON comparison
        expected, actual = wp[wk], gp[gk]
        if not isinstance(actual, str):
            out.append(f"{name}: {ptr}: expected free text (a string), got {_show(actual)}")
        elif bool(actual) != bool(expected):
            out.append(f"{name}: {ptr}: expected {'non-' if expected else ''}empty free text")
        else:
            gp[gk] = expected
    return out


def _machine_diff(name: str, want: Any, got: Any, pointers: Iterable[str]) -> list[str]:
    """A value naming the machine (:data:`MACHINE_POINTERS`) must be a string where the
    expected file has one; its text is not compared (``got`` is changed to match)."""
    out = []
    for ptr in pointers:
        ok_w, wp, wk = resolve_pointer(want, pointer_parts(ptr))
        ok_g, gp, gk = resolve_pointer(got, pointer_parts(ptr))
        if not (ok_w and ok_g) or not isinstance(wp[wk], str):
            continue  # a missing one is reported by the JSON comparison
        if isinstance(gp[gk], str):
            gp[gk] = wp[wk]
        else:
            out.append(f"{name}: {ptr}: expected a string, got {_show(gp[gk])}")
    return out


def compare_file(
    name: str,
    want: Entry,
    got: Entry,
    *,
    as_bytes: bool = False,
    free_text: Iterable[str] = (),
) -> list[str]:
    if want.kind != got.kind:
        return [f"{name}: expected a {want.kind}, got a {got.kind}"]
    if want.kind == "link":
        return (
            []
            if want.target == got.target
            else [f"{name}: link to {got.target!r}, expected {want.target!r}"]
        )
    if want.kind != "file" or want.data == got.data:
        return []
    base = name.rsplit("/", 1)[-1]
    if ".corrupt-" in base:
        return [f"{name}: bytes differ (a kept corrupt file must be byte-identical)"]
    if as_bytes:
        return [
            f"{name}: bytes differ (the spec says byte for byte: {len(want.data)} bytes "
            f"expected, {len(got.data)} found{_first_difference(want.data, got.data)})"
        ]
    if base.endswith(".jsonl"):
        return _compare_jsonl(name, want.data, got.data)
    ok_w, jw = _strict_json(want.data)
    if ok_w:
        ok_g, jg = _strict_json(got.data)
        if not ok_g:
            return [f"{name}: expected JSON, got bytes that do not parse ({got.data[:60]!r})"]
        shape = free_text_diff(name, jw, jg, free_text)
        shape += _machine_diff(name, jw, jg, MACHINE_POINTERS.get(base, ()))
        return shape + [f"{name}: {d}" for d in json_diff(jw, jg)]
    return [f"{name}: bytes differ ({len(want.data)} expected, {len(got.data)} found)"]


def _first_difference(a: bytes, b: bytes) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"; first difference at byte {n}"


def compare_trees(
    expected: dict[str, Entry],
    actual: dict[str, Entry],
    *,
    as_bytes: Iterable[str] = (),
    free_text: dict[str, list[str]] | None = None,
) -> list[str]:
    """``as_bytes``: names compared byte for byte; ``free_text``: name → JSON pointers of free
    text in that file (names as in the trees)."""
    byte_names = set(as_bytes)
    free_text = free_text or {}
    out = []
    for name in sorted(expected.keys() - actual.keys()):
        out.append(f"{name}: missing")
    for name in sorted(actual.keys() - expected.keys()):
        out.append(f"{name}: unexpected file")
    for name in sorted(expected.keys() & actual.keys()):
        out.extend(
            compare_file(
                name,
                expected[name],
                actual[name],
                as_bytes=name in byte_names,
                free_text=free_text.get(name, ()),
            )
        )
    return out


def clip(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_DIFF_LINES:
        return lines
    return [*lines[:MAX_DIFF_LINES], f"... and {len(lines) - MAX_DIFF_LINES} more difference(s)"]


def _expand(doc: Any, parts: list[str], path: list[str]) -> list[tuple[str, Any]]:
    if not parts:
        return [(_ptr(list(path)), doc)]
    head, rest = parts[0], parts[1:]
    if isinstance(doc, dict):
        keys = list(doc) if head == "*" else [head] if head in doc else []
        return [x for k in keys for x in _expand(doc[k], rest, [*path, k])]
    if isinstance(doc, list):
        idx = range(len(doc)) if head == "*" else [int(head)] if head.isdigit() else []
        return [x for i in idx if i < len(doc) for x in _expand(doc[i], rest, [*path, str(i)])]
    return []


def prose_strings(doc: Any, patterns: Iterable[str] = PROSE_POINTERS) -> list[tuple[str, str]]:
    """(JSON pointer, text) of every string ``doc`` holds where prose can stand."""
    out = []
    fixed = _approval_texts(doc)
    for pattern in patterns:
        for ptr, value in _expand(doc, pointer_parts(pattern), []):
            if isinstance(value, str) and ptr not in fixed:
                out.append((ptr, value))
    return out


def _approval_texts(doc: Any) -> set[str]:
    """The texts of gate approval entries (``choice`` ``approved`` with a ``gate``), which
    docs/spec.md §4.1 words exactly: compared as any other value, never prose."""
    log = doc.get("decision_log") if isinstance(doc, dict) else None
    out: set[str] = set()
    for i, e in enumerate(log if isinstance(log, list) else []):
        if isinstance(e, dict) and e.get("choice") == "approved" and isinstance(e.get("gate"), str):
            out.update(f"/decision_log/{i}/{k}" for k in ("title", "choice", "rationale"))
    return out


def prose_in_decision(decision: Any) -> list[str]:
    """Pointers of an ``expected.decision`` that name prose (which is never compared)."""
    out = [p for p, _ in _expand_any(decision, [])]
    for pattern in PROSE_DECISION_POINTERS:
        out += [p for p, _ in _expand(decision, pointer_parts(pattern), [])]
    return sorted(set(out))


def _expand_any(doc: Any, path: list[str]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in PROSE_KEYS:
                out.append((_ptr([*path, k]), v))
            out += _expand_any(v, [*path, k])
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _expand_any(v, [*path, str(i)])
    return out
