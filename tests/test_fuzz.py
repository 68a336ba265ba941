"""Fuzzing (issue 8): Hypothesis properties over validate, migrate, recover and decide.

Inputs come in three families:

* **structured documents**: a valid state (``apex_state()``, or a real v1/v2/v3 file from
  ``fixtures/migrate``) mutated field by field: a value replaced, deleted or inserted at a
  random JSON pointer, with random JSON values, wrong types, hostile strings (paths that
  escape, control characters, lone surrogates, huge strings) and deep nesting;
* **bytes**: random bytes, and bytes near a valid file (truncated, byte order marks, UTF-16,
  flipped, inserted and deleted bytes, duplicate keys, NaN, trailing garbage, deep arrays);
* **session directories**: random combinations of state, ``.bak``, worklog, sentinel, lock,
  temp and ``.corrupt-*`` entries, each absent, a regular file with random contents, a
  directory, a FIFO or a symbolic link (inside the directory, dangling, or out of the root).

Properties: nothing escapes but a coded diagnostic (or the coded ``MigrationError`` /
``StoreError``); ``migrate`` is pure and idempotent, its result validates against the 3.0
schema and its JSON Patch reproduces it; ``decide`` is total, deterministic, pure and its
output follows ``schema/decision/1.json``; ``recover`` never touches ``.bak`` and never loses
the corrupt file; a failed ``save`` leaves state and ``.bak`` byte for byte as they were; the
CLI answers random bytes with an exit code, never a traceback or SR900.

Profiles (registered here, selected with ``HYPOTHESIS_PROFILE``): ``bounded`` (default, part
of the normal suite: ~150 examples per property, derandomized so the suite is reproducible)
and ``fuzz`` (``nox -s fuzz``: 5,000 examples per property, random seed, the CLI 200 runs).
``SESSION_RESUME_FUZZ_EXAMPLES`` overrides the per-property count of either profile. The
number of inputs each property tried is printed in the terminal summary.

Bugs these properties found are kept at the end of this file as plain examples (the
minimal reproduction, with the commit that fixed it). A bug found and not yet fixed gets a
``test_known_bug_*`` test marked ``xfail(strict=True)``, and the properties step around
exactly its inputs with an ``assume`` naming that test, so they keep looking for new ones;
when the fix lands the xfail flips to XPASS (a failure under strict): delete the marker and
the ``assume`` together.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import socket
import stat
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonpatch
import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from session_resume.core import schemas
from session_resume.core.codes import CATALOGUE
from session_resume.core.diagnostics import Diagnostic, Severity
from session_resume.core.jsonread import parse_json_bytes
from session_resume.core.migration import MigrationError, migrate
from session_resume.core.resume_decision import ACTIONS, Options, Snapshot, decide
from session_resume.core.workflow import WorkflowError, load_workflow
from session_resume.core.yamlsafe import load_yaml_text
from session_resume.services.validation import ValidateOptions, session_integrity, validate_document
from session_resume.storage import snapshot, store, worklog
from session_resume.storage.lease_file import SENTINEL

from conftest import REPO, apex_state, run_cli

# --- profiles ------------------------------------------------------------------------------

_HEALTH = [
    HealthCheck.too_slow,
    HealthCheck.filter_too_much,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
]
settings.register_profile(
    "bounded",
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_HEALTH,
    print_blob=True,
)
settings.register_profile(
    "fuzz",
    max_examples=5000,
    deadline=None,
    suppress_health_check=_HEALTH,
    print_blob=True,
)
PROFILE_NAME = os.environ.get("HYPOTHESIS_PROFILE", "bounded")
if PROFILE_NAME not in ("bounded", "fuzz"):
    PROFILE_NAME = "bounded"  # another suite's profile: this module keeps its own bound
_BASE = settings.get_profile(PROFILE_NAME)
_N = int(os.environ.get("SESSION_RESUME_FUZZ_EXAMPLES") or 0) or _BASE.max_examples
# Not load_profile(): that would change the settings of every other module's tests too.
PROFILE = settings(_BASE, max_examples=_N)
DIR_PROFILE = PROFILE  # the session-directory properties (real files, fsync) share the count
# The CLI property starts a process per example: "a few dozen" in the normal suite.
CLI_PROFILE = settings(_BASE, max_examples=24 if PROFILE_NAME == "bounded" else 200)

NOW = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)
WORKFLOWS = {name: load_workflow(name) for name in ("apex", "dotagent", "generic")}
DECISION_SCHEMA = jsonschema.Draft202012Validator(
    json.loads((REPO / "schema" / "decision" / "1.json").read_text())
)
STATUSES = {
    "absent",
    "ok",
    "invalid",
    "corrupt",
    "needs_migration",
    "too_new",
    "bad_version",
    "refused",
}
_SEEDS = sorted((Path(__file__).parent / "fixtures" / "migrate").glob("*.json"))


# --- counting what was tried, printed in the terminal summary ------------------------------

TRIED: Counter[str] = Counter()
SECONDS: Counter[str] = Counter()
_LABEL: dict[str, str] = {}  # test function -> the label its inputs are counted under


class _FuzzSummary:
    """Prints how many inputs each property tried, whatever the capture mode."""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not TRIED:
            return
        terminalreporter.section("session-resume fuzz: inputs tried")
        terminalreporter.write_line(
            f"profile {PROFILE_NAME!r}: {PROFILE.max_examples} examples per property, "
            f"{CLI_PROFILE.max_examples} CLI runs; an input is counted each time a property "
            "body runs (including inputs rejected by assume() and Hypothesis' shrinking)"
        )
        width = max(len(k) for k in TRIED)
        for name in sorted(TRIED):
            terminalreporter.write_line(
                f"  {name:<{width}}  {TRIED[name]:>7} inputs  {SECONDS[name]:7.1f} s"
            )
        terminalreporter.write_line(
            f"  {'total':<{width}}  {sum(TRIED.values()):>7} inputs  {sum(SECONDS.values()):7.1f} s"
        )


@pytest.fixture(autouse=True)
def _count_time(request: pytest.FixtureRequest) -> Iterator[None]:
    pm = request.config.pluginmanager
    if pm.get_plugin("session-resume-fuzz-summary") is None:
        pm.register(_FuzzSummary(), "session-resume-fuzz-summary")
    _LABEL["current"] = request.node.name
    start = time.perf_counter()
    yield
    label = _LABEL.get(request.node.name)
    if label is not None:
        SECONDS[label] += time.perf_counter() - start


def tried(label: str) -> None:
    TRIED[label] += 1
    _LABEL[_LABEL["current"]] = label


# --- checks shared by the properties -------------------------------------------------------

_CODE = re.compile(r"^SR[1-9][0-9]{2}$")


def assert_coded(diags: list[Diagnostic]) -> None:
    """Every finding is a catalogued code with a severity and a message; never SR900."""
    for d in diags:
        assert _CODE.match(d.code) and d.code in CATALOGUE, d
        assert d.code != "SR900", d
        assert isinstance(d.severity, Severity), d
        assert isinstance(d.message, str) and d.message, d
        assert d.line is None or (isinstance(d.line, int) and d.line >= 1), d
        assert d.column is None or (isinstance(d.column, int) and d.column >= 1), d


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def _known_bug_deep(doc: Any) -> bool:
    """test_known_bug_migration_result_can_exceed_the_depth_limit: near the reader's depth
    limit, migration may nest one level too deep."""
    return depth(doc) >= 63


def _known_bug_huge_float(doc: Any) -> bool:
    """test_known_bug_migrated_integral_float_overflows_the_number_limit."""
    cur = doc.get("current_step") if isinstance(doc, dict) else None
    return isinstance(cur, float) and abs(cur) >= 1e300


def _known_bug_lease_pid(layout: dict[str, tuple[str, bytes]]) -> bool:
    """test_known_bug_lease_pid_beyond_int_range_crashes_resume."""
    kind, data = layout[SENTINEL]
    if kind != "file":
        return False
    value = parse_json_bytes(data).value
    pid = value.get("pid") if isinstance(value, dict) else None
    return isinstance(pid, int) and not isinstance(pid, bool) and abs(pid) >= 2**31


def _known_bug_deep_state(layout: dict[str, tuple[str, bytes]]) -> bool:
    kind, data = layout[store.STATE]
    value = parse_json_bytes(data).value if kind == "file" else None
    return _known_bug_deep(value) or _known_bug_huge_float(value)


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


# --- 1. bytes: parse, validate, classify ---------------------------------------------------


@PROFILE
@given(data=ANY_BYTES)
def test_parse_json_bytes_is_total_and_agrees_with_json(data: bytes) -> None:
    tried("parse_json_bytes")
    parsed = parse_json_bytes(data, file="s.json")
    assert_coded(parsed.diagnostics)
    if parsed.value is not None:
        assert isinstance(parsed.value, dict)
    if not parsed.diagnostics:
        # Strict parsing accepted it: Python's own parser reads the same value.
        assert json.loads(data.decode("utf-8")) == parsed.value
    else:
        assert parsed.corrupt or parsed.value is not None


@PROFILE
@given(data=ANY_BYTES, now=st.sampled_from([NOW, None]))
def test_validate_document_never_raises_on_bytes(data: bytes, now: datetime | None) -> None:
    tried("validate(bytes)")
    report = validate_document(data, file="s.json", options=ValidateOptions(now=now))
    assert_coded(report.diagnostics)
    loaded = store.classify(data, file="s.json")
    assert loaded.status in STATUSES
    assert_coded(loaded.diagnostics)
    if parse_json_bytes(data).corrupt:
        assert loaded.status == "corrupt" and not report.ok()
    if report.ok() and report.schema_version == "3.0":
        # what the validator accepts, the store reads as a usable state
        assert loaded.status == "ok"


# --- 2. structured documents: validate -----------------------------------------------------


@PROFILE
@given(doc=mutated_docs(), wf=st.sampled_from([None, "apex", "dotagent", "generic"]))
def test_validate_document_never_raises_on_mutated_documents(
    doc: dict[str, Any], wf: str | None
) -> None:
    tried("validate(mutated)")
    data = dumps(doc)
    report = validate_document(data, file="s.json", options=ValidateOptions(now=NOW, workflow=wf))
    assert_coded(report.diagnostics)
    assert all(d.pointer == "" or d.pointer.startswith("/") for d in report.diagnostics)
    loaded = store.classify(data)
    assert loaded.status in STATUSES
    if report.ok() and report.schema_version == "3.0":
        assert loaded.status == "ok"
    check_output_formats(report)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def check_output_formats(report: Any) -> None:
    """What a state file's content can do to the output a CI log shows: the GitHub format is
    one workflow command per line, JSON and SARIF parse, the text format has no line a
    runner would take for a workflow command and no terminal escape."""
    from session_resume.reporters import renderer

    # Runners and terminals split lines on LF (and CR); U+2028, U+0085 and the like are text.
    github = renderer("github")([report], False)
    for line in github.split("\n")[:-1]:
        assert re.match(r"^::(error|warning|notice) file=[^\n]*::", line), line
    json.loads(renderer("json")([report], False))
    json.loads(renderer("sarif")([report], False))
    text = renderer("text")([report], False)
    for line in text.split("\n"):
        assert not line.startswith("::"), line
        assert not _CONTROL.search(line), line


# --- 3. structured documents: migrate ------------------------------------------------------


@PROFILE
@given(
    doc=mutated_docs(),
    wf=st.sampled_from([None, "apex", "dotagent", "generic"]),
    now=st.sampled_from([NOW, NOW - timedelta(days=400), NOW + timedelta(days=4000)]),
)
def test_migrate_is_pure_idempotent_and_valid_or_coded(
    doc: dict[str, Any], wf: str | None, now: datetime
) -> None:
    tried("migrate(mutated)")
    parsed = parse_json_bytes(dumps(doc))  # as the reader hands it over (depth ≤ 64, …)
    assume(not parsed.corrupt and isinstance(parsed.value, dict))
    doc = parsed.value
    assume(not _known_bug_deep(doc) and not _known_bug_huge_float(doc))
    before = copy.deepcopy(doc)
    workflow = WORKFLOWS[wf] if wf else None
    try:
        res = migrate(doc, now=now, workflow=workflow, file="s.json")
    except MigrationError as exc:
        assert exc.diagnostics
        assert_coded(exc.diagnostics)
        assert {d.code for d in exc.diagnostics} <= {"SR141", "SR142", "SR152"}
        assert doc == before  # pure: the input is untouched
        return
    assert doc == before
    assert_coded(res.notes)
    # every migrated document is a 3.0 document by its schema
    assert res.document.get("schema_version") == "3.0"
    assert schemas.is_valid("session-state/3.0.json", res.document), res.document
    # the dry-run patch is exactly the change
    assert jsonpatch.apply_patch(before, res.patch()) == res.document
    # idempotent: migrating the result changes nothing
    again = migrate(copy.deepcopy(res.document), now=now, workflow=workflow, file="s.json")
    assert again.changed is False, again.patch()
    # and the validator agrees there is nothing left to migrate
    report = validate_document(dumps(res.document), options=ValidateOptions(now=None))
    assert_coded(report.diagnostics)
    assert report.schema_version == "3.0"
    assert not [d for d in report.diagnostics if d.code.startswith(("SR1", "SR2"))]


# --- 4. decide ----------------------------------------------------------------------------

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


@st.composite
def snapshots(draw: st.DrawFn) -> tuple[Snapshot, str | None]:
    """A snapshot as ``snapshot.take`` builds one (the document only when it is ``ok``), with
    a random lease, worklog tail, artifact times and temp files; and a step to ask about."""
    doc = draw(mutated_docs())
    loaded = store.classify(dumps(doc))
    real = draw(st.booleans())  # the status the bytes really have, or any other
    status = loaded.status if real else draw(st.sampled_from(sorted(STATUSES)))
    document = loaded.document if status == "ok" and loaded.status == "ok" else None
    if status == "ok" and document is None:
        status = "invalid"
    steps = list((document or {}).get("steps", {}))
    step = draw(
        st.one_of(
            st.none(),
            st.sampled_from(steps) if steps else st.none(),
            st.sampled_from(["1", "2", "3_5", "7", "99", "3.5"]),
            st.text(max_size=6),
        )
    )
    snap = Snapshot(
        state_status=status,
        document=document,
        state_codes=tuple(d.code for d in loaded.diagnostics),
        backup_usable=draw(st.booleans()),
        sentinel=draw(_SENTINELS),
        session_ended=draw(st.booleans()),
        owner_alive=draw(st.sampled_from([None, True, False])),
        last_events=tuple(draw(_EVENTS)),
        artifacts=draw(
            st.dictionaries(
                st.text(max_size=12),
                st.one_of(st.none(), st.floats(0, 4e9, allow_nan=False)),
                max_size=3,
            )
        ),
        temp_files=tuple(draw(st.lists(st.text(max_size=10), max_size=2))),
    )
    return snap, step


_NOWS = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)


@PROFILE
@given(
    case=snapshots(),
    now=st.one_of(st.just(NOW), _NOWS),
    wf=st.sampled_from(sorted(WORKFLOWS)),
    opts=st.builds(
        Options,
        session=st.sampled_from([None, "s1", "s2"]),
        stale_seconds=st.integers(0, 10**6),
        takeover=st.booleans(),
    ),
)
def test_decide_is_total_deterministic_and_pure(
    case: tuple[Snapshot, str | None], now: datetime, wf: str, opts: Options
) -> None:
    tried("decide(snapshot)")
    snap, step = case
    frozen = copy.deepcopy(snap)
    out = decide(snap, step, now, WORKFLOWS[wf], opts)
    assert out["action"] in ACTIONS
    assert decide(snap, step, now, WORKFLOWS[wf], opts) == out  # deterministic
    assert snap == frozen  # pure: the snapshot is not modified
    DECISION_SCHEMA.validate(out)
    json.dumps(out, allow_nan=False)  # JSON-ready
    assert_coded_list(out["reasons"] + out["warnings"])


def assert_coded_list(codes: list[str]) -> None:
    for c in codes:
        assert c in CATALOGUE and c != "SR900", c


# --- 4b. rendering the handoff from a state ------------------------------------------------

_TEMPLATE_SYNTAX = st.sampled_from(
    ["{{ 7*7 }}", "{% if true %}X{% endif %}", "{# c #}", "{{ config }}", "{%raw%}", "}}{{"]
)


def _v3_docs() -> st.SearchStrategy[dict[str, Any]]:
    """Schema-valid 3.0 states mostly: apex_state() or a v3 fixture with at most one edit."""
    v3 = [d for d in SEED_DOCS if d.get("schema_version") == "3.0"]

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        doc: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(v3)))
        if draw(st.integers(0, 3)) == 0:  # sometimes another string in a free-text place
            places = [p for p in _pointers(doc) if p and p[0] in ("decisions", "open_findings")]
            places = [p for p in places if isinstance(_get(doc, p), str)]
            if places:
                path = draw(st.sampled_from(places))
                _get(doc, path[:-1])[path[-1]] = draw(_TEXT)
        return doc

    return build()


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _put(doc: dict[str, Any], where: str, value: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    if where == "region":
        doc["decisions"]["region"] = value
    elif where == "finding":
        doc["open_findings"].append(value)
    elif where == "artifact":
        doc["steps"]["1"]["artifacts"].append("agent-output/demo/" + value)
    else:
        doc["decision_log"] = [{"id": "D001", "title": value, "choice": "c", "rationale": "r"}]
    return doc


@PROFILE
@given(
    doc=_v3_docs(),
    jinja=st.lists(_TEMPLATE_SYNTAX, min_size=1, max_size=3),
    where=st.sampled_from(["region", "finding", "artifact", "decision_title"]),
)
def test_handoff_of_any_valid_state_renders_and_checks(
    doc: dict[str, Any], jinja: list[str], where: str
) -> None:
    """State values are data, never template source: Jinja syntax in them is printed (escaped),
    never evaluated; any schema-valid state renders into a handoff that passes its checks."""
    from session_resume.core.handoff_rules import check_handoff_text
    from session_resume.rendering.handoff import render_handoff

    tried("render handoff")
    try:
        hostile, benign = _put(doc, where, "".join(jinja)), _put(doc, where, "x")
    except (KeyError, TypeError, AttributeError):
        assume(False)  # the random edit removed the place the value goes
        return
    loaded = store.classify(dumps(hostile))
    assume(loaded.status == "ok" and loaded.document is not None)
    assume(store.classify(dumps(benign)).status == "ok")
    wf = WORKFLOWS.get(str(loaded.document.get("workflow")), WORKFLOWS["apex"])
    text = render_handoff(loaded.document, wf, now=NOW)
    plain = render_handoff(benign, wf, now=NOW)
    if "{{ 7*7 }}" in jinja:
        assert text.count("49") == plain.count("49"), text  # {{ 7*7 }} was not evaluated
    problems = [d for d in check_handoff_text(text, file="h.md") if d.severity is Severity.ERROR]
    assert problems == [], problems


# --- 5. workflow YAML ----------------------------------------------------------------------

_YAML_PIECES = st.sampled_from(
    [
        "id: x\n",
        "id: x\nid: y\n",
        "a: &a [1, 2]\nb: *a\n",
        "a: !!python/object:os.system 'true'\n",
        "steps:\n  - key: '1'\n    name: A\n",
        "{",
        "- [",
        "? [a, b]\n: c\n",
        "x: 2026-03-02\n",
        "x: !!set {a, b}\n",
        "\t- a\n",
        "%YAML 1.1\n---\n",
        "---\n...\n---\n",
        "x: " + "[" * 200 + "]" * 200 + "\n",
    ]
)


@PROFILE
@given(parts=st.lists(st.one_of(_YAML_PIECES, st.text(max_size=30)), max_size=4))
def test_workflow_yaml_is_total(parts: list[str]) -> None:
    tried("workflow yaml")
    text = "".join(parts)
    res = load_yaml_text(text, file="w.yaml")
    assert_coded(res.diagnostics)
    saved = os.environ.get("SESSION_RESUME_NO_CACHE")
    os.environ["SESSION_RESUME_NO_CACHE"] = "1"  # random definitions stay out of the cache
    try:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "w.yaml"
            path.write_bytes(text.encode("utf-8", "surrogatepass"))
            try:
                load_workflow(path)
            except WorkflowError as exc:
                assert exc.diagnostics
                assert_coded(exc.diagnostics)
    finally:
        if saved is None:
            del os.environ["SESSION_RESUME_NO_CACHE"]
        else:
            os.environ["SESSION_RESUME_NO_CACHE"] = saved


# --- 6. session directories ----------------------------------------------------------------

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


def build_dir(top: Path, layout: dict[str, tuple[str, bytes]]) -> Path:
    """``top``/repo is the root (a ``.git`` marks it), the session is repo/agent-output/demo;
    ``top``/outside holds a valid state that links may point at."""
    repo = top / "repo"
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    (repo / ".git").mkdir()
    outside = top / "outside"
    outside.mkdir()
    (outside / "secret.json").write_bytes(dumps(apex_state()))
    for name, (kind, data) in layout.items():
        p = d / name
        if kind == "file":
            p.write_bytes(data)
        elif kind == "empty":
            p.write_bytes(b"")
        elif kind == "dir":
            p.mkdir()
            (p / "inner").write_bytes(b"{}")
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "link_inside":
            other = store.BAK if name != store.BAK else store.STATE
            os.symlink(other, p)
        elif kind == "link_dangling":
            os.symlink("gone.json", p)
        elif kind == "link_out":
            os.symlink("../../../outside/secret.json", p)
    return d


def entries(d: Path) -> dict[str, bytes | str]:
    """What the directory holds: regular files' bytes; other entries by their type."""
    out: dict[str, bytes | str] = {}
    for name in sorted(os.listdir(d)):
        p = d / name
        st_ = os.lstat(p)
        if stat.S_ISLNK(st_.st_mode):
            out[name] = "link->" + os.readlink(p)
        elif stat.S_ISREG(st_.st_mode):
            out[name] = p.read_bytes()
        elif stat.S_ISDIR(st_.st_mode):
            out[name] = "dir"
        else:
            out[name] = "special"
    return out


def _read(p: Path) -> bytes | None:
    try:
        return p.read_bytes() if p.is_file() else None
    except OSError:
        return None


def temps(d: Path) -> set[str]:
    return {n for n in os.listdir(d) if n.startswith(store.TMP_PREFIX) and n.endswith(".tmp")}


class Hang(Exception):
    """An operation on a session directory took longer than HANG_SECONDS (a blocking read)."""


HANG_SECONDS = 5


def _alarm(signum: int, frame: Any) -> None:
    raise Hang(f"no answer within {HANG_SECONDS} s: something blocks (a FIFO read?)")


def with_dir(layout: dict[str, tuple[str, bytes]], fn: Callable[[Path, Path], None]) -> None:
    """Build the layout in a fresh temporary directory and run ``fn`` on it; a hang becomes a
    failure Hypothesis can shrink, not a stuck test run."""
    with tempfile.TemporaryDirectory(prefix="sr-fuzz-") as top:
        d = build_dir(Path(top), layout)
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(HANG_SECONDS)
        try:
            fn(d, Path(top) / "repo")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


@DIR_PROFILE
@given(layout=SESSION_DIRS, step=st.sampled_from([None, "1", "2", "3_5", "9"]))
def test_reading_a_session_directory_is_total(
    layout: dict[str, tuple[str, bytes]], step: str | None
) -> None:
    tried("take+decide+validate(dir)")
    assume(not _known_bug_lease_pid(layout))

    def check(d: Path, root: Path) -> None:
        before = entries(d)
        loaded = store.load(d, root=root)
        assert loaded.status in STATUSES
        assert_coded(loaded.diagnostics)
        snap = snapshot.take(d, root=root)
        out = decide(snap, step, NOW, WORKFLOWS["apex"])
        assert out["action"] in ACTIONS
        assert decide(snapshot.take(d, root=root), step, NOW, WORKFLOWS["apex"]) == out
        DECISION_SCHEMA.validate(out)
        from session_resume.services.validation import validate_file

        if os.path.lexists(d / store.STATE):
            report = validate_file(
                d / store.STATE, ValidateOptions(now=NOW, root=root, check_artifacts=True)
            )
            assert_coded(report.diagnostics)
        assert_coded(session_integrity(d))
        assert entries(d) == before  # reading never writes

    with_dir(layout, check)


@DIR_PROFILE
@given(layout=SESSION_DIRS)
def test_recover_never_touches_bak_and_never_loses_the_corrupt_file(
    layout: dict[str, tuple[str, bytes]],
) -> None:
    tried("recover(dir)")

    def check(d: Path, root: Path) -> None:
        before = entries(d)
        loaded = store.load(d, root=root)
        try:
            res = store.recover(d, now=NOW, root=root)
        except store.StoreError as exc:
            assert_coded(exc.diagnostics)
            assert entries(d) == before  # refused: nothing written
            return
        after = entries(d)
        # .bak is never written by recovery
        assert after.get(store.BAK) == before.get(store.BAK)
        if loaded.status == "corrupt" and isinstance(before.get(store.STATE), bytes):
            # the corrupt bytes are still there, as *.corrupt-<stamp>
            assert res.corrupt_kept_as is not None
            assert after[res.corrupt_kept_as] == before[store.STATE]
        # no file that was there is deleted or changed, except the state itself
        for name, content in before.items():
            if name not in (store.STATE, store.LOCK, worklog.WORKLOG):
                assert after.get(name) == content, name
        assert temps(d) == {n for n in before if n in temps(d)}  # no new temp file left
        if res.action == "none":
            assert after.get(store.STATE) == before.get(store.STATE)
        else:
            assert store.load(d, root=root).status == "ok"
            if res.action == "restored_backup":
                assert after[store.STATE] == before[store.BAK]

    with_dir(layout, check)


@DIR_PROFILE
@given(layout=SESSION_DIRS, event=st.sampled_from([None, "note", "checkpoint"]))
def test_save_either_succeeds_or_leaves_everything_as_it_was(
    layout: dict[str, tuple[str, bytes]], event: str | None
) -> None:
    tried("save(dir)")
    doc = apex_state()

    def check(d: Path, root: Path) -> None:
        before = entries(d)
        try:
            res = store.save(d, doc, now=NOW, root=root, event=event, lock_timeout=5)
        except store.StoreError as exc:
            assert_coded(exc.diagnostics)
            after = entries(d)
            if [x.code for x in exc.diagnostics] == ["SR505"]:
                # documented: the state was written, only its worklog event failed
                assert store.load(d, root=root).status == "ok"
                return
            assert after.get(store.STATE) == before.get(store.STATE)
            assert after.get(store.BAK) == before.get(store.BAK)
            assert temps(d) == {n for n in before if n.endswith(".tmp")} & temps(d)
            return
        after = entries(d)
        loaded = store.load(d, root=root)
        assert loaded.status == "ok" and loaded.document == res.document
        if after.get(store.BAK) != before.get(store.BAK):
            # .bak changed: it is now exactly the previous state, which was valid
            assert after[store.BAK] == before[store.STATE]
            assert isinstance(before[store.STATE], bytes)
            assert store.is_valid_state_bytes(before[store.STATE])
        assert temps(d) <= {n for n in before if n.endswith(".tmp")}

    with_dir(layout, check)


@DIR_PROFILE
@given(layout=SESSION_DIRS, write=st.booleans())
def test_migrate_session_is_total(layout: dict[str, tuple[str, bytes]], write: bool) -> None:
    tried("migrate_session(dir)")
    assume(not _known_bug_deep_state(layout))

    def check(d: Path, root: Path) -> None:
        before = entries(d)
        old_state = _read(d / store.STATE)  # through a link inside the root, as the store reads
        try:
            out = store.migrate_session(d, now=NOW, write=write, root=root)
        except store.StoreError as exc:
            assert_coded(exc.diagnostics)
            assert entries(d) == before
            return
        assert out.status in ("current", "migrated", "would_migrate", "refused")
        assert_coded(out.notes)
        after = entries(d)
        if out.status != "migrated":
            assert after.get(store.STATE) == before.get(store.STATE)
            assert after.get(store.BAK) == before.get(store.BAK)
        else:
            # the pre-migration content is kept as .bak (a state that was a link to .bak is
            # replaced by a file, the link's target stays), the new state is a 3.0 state
            assert after[store.BAK] == old_state
            assert store.load(d, root=root).version == "3.0"

    with_dir(layout, check)


# --- 7. the CLI on random bytes (a few dozen processes) ------------------------------------

_COMMANDS = [
    ["validate", "{state}", "--format", "json"],
    ["validate", "{state}", "--format", "sarif"],
    ["validate", "{state}", "--format", "github"],
    ["resume", "{dir}", "--format", "json"],
    ["report", "{dir}"],
    ["recover", "{dir}"],
    ["migrate", "{dir}", "--dry-run"],
    ["migrate", "{dir}"],
]


@CLI_PROFILE
@given(data=ANY_BYTES, bak=st.one_of(st.none(), ANY_BYTES), cmd=st.sampled_from(_COMMANDS))
def test_cli_never_prints_a_traceback_for_random_bytes(
    data: bytes, bak: bytes | None, cmd: list[str]
) -> None:
    tried("cli(bytes)")
    with tempfile.TemporaryDirectory(prefix="sr-fuzz-cli-") as top:
        repo = Path(top)
        (repo / ".git").mkdir()
        d = repo / "agent-output" / "demo"
        d.mkdir(parents=True)
        (d / store.STATE).write_bytes(data)
        if bak is not None:
            (d / store.BAK).write_bytes(bak)
        args = [a.format(state=d / store.STATE, dir=d) for a in cmd]
        proc = run_cli(*args, "--now", "2026-03-03T12:00:00Z", "--root", str(repo), cwd=repo)
        assert proc.returncode in (0, 1, 2), (proc.returncode, proc.stderr)
        assert "SR900" not in proc.stderr and "SR900" not in proc.stdout, proc.stderr
        if "--format" in cmd and cmd[cmd.index("--format") + 1] in ("json", "sarif"):
            json.loads(proc.stdout)


# --- regressions: bugs these properties found, since fixed (kept as plain examples) -----
# Each names the commit that fixed it; the properties above would find it again, these keep
# the minimal reproduction in the normal suite whatever the random draw.


@pytest.mark.parametrize("version", ["3.0", "2.0"])
@pytest.mark.parametrize("status", [[], {}, ["pending"]])
def test_migrate_unhashable_step_status_is_coded(version: str, status: Any) -> None:
    """Was TypeError (unhashable) out of migrate (fixed in da8c42d)."""
    doc = apex_state()
    doc["schema_version"] = version
    doc["steps"]["1"]["status"] = status
    try:
        res = migrate(doc, now=NOW)
    except MigrationError as exc:
        assert_coded(exc.diagnostics)
        return
    assert schemas.is_valid("session-state/3.0.json", res.document)


def test_worklog_directory_does_not_break_resume(session_dir: Path) -> None:
    """Was IsADirectoryError out of worklog.read_tail, so `resume` ended in SR900 (da8c42d)."""
    (session_dir / store.STATE).write_bytes(dumps(apex_state()))
    (session_dir / worklog.WORKLOG).mkdir()
    snap = snapshot.take(session_dir)
    assert decide(snap, None, NOW, WORKFLOWS["apex"])["action"] in ACTIONS
    assert_coded(session_integrity(session_dir))


def test_validate_now_at_the_end_of_time(session_dir: Path) -> None:
    """Was SR900 (OverflowError in now + skew), fixed in 4160f6a."""
    (session_dir / store.STATE).write_bytes(dumps(apex_state()))
    proc = run_cli("validate", str(session_dir), "--now", "9999-12-31T23:59:59Z")
    assert proc.returncode in (0, 1) and "SR900" not in proc.stderr, proc.stderr


def test_worklog_fifo_does_not_hang_validate(session_dir: Path) -> None:
    """Was a blocking open() of the FIFO (fixed in 4160f6a); the alarm turns a hang into a
    failure."""
    from session_resume.services.validation import validate_file

    (session_dir / store.STATE).write_bytes(dumps(apex_state()))
    os.mkfifo(session_dir / worklog.WORKLOG)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    try:
        report = validate_file(session_dir / store.STATE, ValidateOptions(now=NOW))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert_coded(report.diagnostics)


@pytest.mark.parametrize("kind", ["directory", "symlink"])
def test_lock_path_not_a_regular_file_is_coded(session_dir: Path, kind: str) -> None:
    """Was a raw IsADirectoryError / ELOOP out of filelock (fixed in 4160f6a)."""
    root = session_dir.parents[1]  # the repository (the fixture's .git marks it)
    if kind == "directory":
        (session_dir / store.LOCK).mkdir()
    else:
        (session_dir / "elsewhere.lock").write_bytes(b"")
        os.symlink("elsewhere.lock", session_dir / store.LOCK)  # inside the root: allowed
    with pytest.raises(store.StoreError) as exc:
        store.save(session_dir, apex_state(), now=NOW, root=root)
    assert [d.code for d in exc.value.diagnostics] == ["SR160"]


@pytest.mark.parametrize("kind", ["directory", "symlink"])
def test_recover_reports_a_worklog_it_cannot_append(session_dir: Path, kind: str) -> None:
    """Was a raw OSError after the state was restored (fixed in 4160f6a): now SR505."""
    root = session_dir.parents[1]
    (session_dir / store.STATE).write_bytes(b"{")
    if kind == "directory":
        (session_dir / worklog.WORKLOG).mkdir()
    else:
        (session_dir / "log.jsonl").write_bytes(b"")
        os.symlink("log.jsonl", session_dir / worklog.WORKLOG)
    store.recover(session_dir, now=NOW, root=root)
    assert store.load(session_dir, root=root).status == "ok"


@pytest.mark.parametrize("where", ["project", "decision-value", "cli"])
def test_lone_surrogate_escape_is_corrupt_not_a_crash(where: str, tmp_path: Path) -> None:
    """Was UnicodeEncodeError out of jsonschema_rs and out of the CLI's output (SR900 on a
    44-byte file), and out of save(); since 3e71b51 a \\u escape of a lone surrogate is SR116."""
    if where == "cli":
        state = tmp_path / store.STATE
        state.write_bytes(b'{"schema_version":"3.0","project":"\\ud800"}')
        proc = run_cli("validate", str(state), "--now", "2026-03-03T12:00:00Z", cwd=tmp_path)
        assert proc.returncode == 1 and "SR116" in proc.stdout, proc.stderr
        return
    doc = apex_state()
    if where == "project":
        doc["project"] = "\ud800"
    else:
        doc["decisions"]["region"] = "a\udfffb"
    data = dumps(doc)  # the file holds the escape: valid JSON text, not a Unicode string
    report = validate_document(data, options=ValidateOptions(now=NOW))
    assert "SR116" in [d.code for d in report.diagnostics]
    assert store.classify(data).status == "corrupt"


def test_bak_is_a_directory_is_coded(session_dir: Path) -> None:
    """Was a raw IsADirectoryError out of save() (fixed in 3e71b51: SR163, nothing changed)."""
    root = session_dir.parents[1]
    before = dumps(apex_state())
    (session_dir / store.STATE).write_bytes(before)
    (session_dir / store.BAK).mkdir()
    (session_dir / store.BAK / "x").write_bytes(b"x")
    with pytest.raises(store.StoreError) as exc:
        store.save(session_dir, apex_state(), now=NOW, root=root)
    assert_coded(exc.value.diagnostics)
    assert (session_dir / store.STATE).read_bytes() == before
    assert temps(session_dir) == set()


@pytest.mark.parametrize("op", ["save", "migrate"])
def test_bak_symlink_to_state_keeps_the_previous_version(session_dir: Path, op: str) -> None:
    """Was data loss: os.path.samefile followed the link, the rotation was skipped and the
    previous (or pre-migration) version was gone (fixed in 3e71b51)."""
    root = session_dir.parents[1]
    old = dumps(SEED_DOCS[0] if op == "save" else _seed("v2-test01.json"))
    (session_dir / store.STATE).write_bytes(old)
    os.symlink(store.STATE, session_dir / store.BAK)
    try:
        if op == "save":
            store.save(session_dir, apex_state(), now=NOW, root=root)
        else:
            outcome = store.migrate_session(session_dir, now=NOW, write=True, root=root)
            assert outcome.status == "migrated"
    except store.StoreError:
        return  # refusing is as good: nothing was lost
    kept = [p for p in session_dir.iterdir() if p.is_file() and p.read_bytes() == old]
    assert kept, "the previous state is nowhere in the session directory"


def _seed(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (Path(__file__).parent / "fixtures/migrate" / name).read_text()
    )
    return data


def test_decision_with_odd_lease_fields_follows_its_schema() -> None:
    """decide() copied the lease's owner/host/started/pid as found (fixed in 3e71b51)."""
    sentinel = {"v": 1, "session": "s1", "owner": 5, "host": ["h"], "pid": ""}
    sentinel.update(started=7, heartbeat="2026-03-01T00:00:00Z")
    snap = Snapshot("ok", document=apex_state(), sentinel=sentinel)
    DECISION_SCHEMA.validate(decide(snap, None, NOW, WORKFLOWS["apex"]))


def test_text_output_escapes_control_characters() -> None:
    """A key holding '\\n::error …::' made the text format print a line GitHub Actions takes
    for a workflow command, and ESC sequences reached the terminal (fixed in 3e71b51)."""
    from session_resume.reporters import renderer

    doc = apex_state()
    doc["x\n::error file=README.md::pwned\x1b[2J"] = 1  # SR330: an unknown top-level key
    report = validate_document(
        dumps(doc), file="s\n::warning::x.json", options=ValidateOptions(now=NOW)
    )
    text = renderer("text")([report], False)
    assert not [ln for ln in text.splitlines() if ln.startswith("::") or "\x1b" in ln], text
    check_output_formats(report)


def test_state_workflow_field_is_never_read_as_a_path(tmp_path: Path) -> None:
    """An untrusted state's `workflow` made validate read any file it named and print its
    parse errors and key names (fixed in 3e71b51: SR403, never a path)."""
    outside = tmp_path / "outside" / "secrets.yml"
    outside.parent.mkdir()
    outside.write_text("leak_canary_key:\n  token: s3cr3t\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for name in (str(outside), "../outside/secrets.yml", "secrets"):
        doc = apex_state()
        doc["workflow"] = name
        state = repo / store.STATE
        state.write_bytes(dumps(doc))
        (repo / "secrets").write_text("leak_canary_key: 1\n")  # an id-shaped relative name
        proc = run_cli("validate", str(state), "--format", "json", "--now", "2026-03-03T12:00:00Z",
                       cwd=repo)  # fmt: skip
        files = [d["file"] for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]]
        assert str(outside) not in files and "secrets" not in files, files
        assert "leak_canary_key" not in proc.stdout + proc.stderr


def test_resume_never_stats_artifacts_outside_the_root(tmp_path: Path) -> None:
    """snapshot.take() stat()ed absolute and ../ artifact paths, so `resume` and `report`
    told whether an outside file existed and changed (fixed in 3e71b51)."""
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    repo = tmp_path / "repo"
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    (repo / ".git").mkdir()
    doc = apex_state()
    doc["steps"]["2"]["artifacts"] = [str(outside), "../outside.txt", "../../../outside.txt"]
    (d / store.STATE).write_bytes(dumps(doc))
    snap = snapshot.take(d, root=repo)
    assert snap.state_status == "ok"
    assert all(v is None for v in snap.artifacts.values()), snap.artifacts


# --- limits the properties rely on ---------------------------------------------------------


def test_workflow_yaml_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    from session_resume.core.yamlsafe import MAX_YAML_BYTES

    big = tmp_path / "big.yaml"
    big.write_bytes(b"id: x\n" + b"# " + b"x" * MAX_YAML_BYTES + b"\n")
    with pytest.raises(WorkflowError) as exc:
        load_workflow(big)
    assert [d.code for d in exc.value.diagnostics] == ["SR400"]


def test_oversized_or_linked_lease_is_unreadable_not_absent(session_dir: Path) -> None:
    from session_resume.storage import lease_file as sentinel

    lease = session_dir / SENTINEL
    lease.write_bytes(b'{"session": "s", "pad": "' + b"x" * (64 * 1024) + b'"}')
    found, diags = sentinel.read(session_dir)
    assert found == {} and [x.code for x in diags] == ["SR510"]
    lease.unlink()
    (session_dir / "elsewhere").write_bytes(b"{}")
    os.symlink("elsewhere", lease)
    found, diags = sentinel.read(session_dir)
    assert found == {} and [x.code for x in diags] == ["SR510"]


# --- known bugs: minimal reproductions (strict xfail: they flip to XPASS when fixed) ------


@pytest.mark.xfail(
    strict=True,
    raises=UnicodeEncodeError,
    reason="bug (API only): migrate() given an in-memory dict holding a lone surrogate in a "
    "pattern-checked string raises UnicodeEncodeError out of jsonschema_rs instead of a coded "
    "MigrationError; not reachable from files (the reader says SR116)",
)
def test_known_bug_migrate_of_an_in_memory_lone_surrogate_raises() -> None:
    doc = apex_state()
    doc["project"] = "\ud800"
    with pytest.raises(MigrationError):
        migrate(doc, now=NOW)


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="bug (design, docs/security.md §8): the project configuration's `workflow:` path is "
    "resolved with no containment check, so repository content (a pull request) makes "
    "`validate` read a file outside the repository and print its parse errors",
)
def test_known_bug_config_workflow_path_leaves_the_repository(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "wf.yaml"
    outside.parent.mkdir()
    outside.write_text("leak_canary_key: [unclosed\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".session-resume.yaml").write_text("workflow: ../outside/wf.yaml\n")
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    doc = apex_state()
    del doc["workflow"]  # the configured workflow applies
    (d / store.STATE).write_bytes(dumps(doc))
    proc = run_cli("validate", str(d), "--now", "2026-03-03T12:00:00Z", cwd=repo)
    assert "outside/wf.yaml" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.xfail(
    strict=True,
    raises=OverflowError,
    reason="bug: a lease naming this host and a pid beyond the C int range (2147483648) makes "
    "sentinel.owner_alive's os.kill raise OverflowError out of snapshot.take(): `resume` and "
    "`report` end in SR900 (exit 3) on a 150-byte 00-session.active",
)
def test_known_bug_lease_pid_beyond_int_range_crashes_resume(session_dir: Path) -> None:
    (session_dir / store.STATE).write_bytes(dumps(apex_state()))
    lease = {"v": 1, "session": "s1", "owner": "o", "host": socket.gethostname()}
    lease.update(started="2026-03-03T11:59:00Z", heartbeat="2026-03-03T11:59:00Z")
    (session_dir / SENTINEL).write_text(json.dumps({**lease, "pid": 2**31}))
    snap = snapshot.take(session_dir)
    assert decide(snap, None, NOW, WORKFLOWS["apex"])["action"] in ACTIONS


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="bug: migration can nest a value one level deeper (an unknown step key moves under "
    "x-legacy): an input at the reader's depth limit (64) migrates into a document of depth "
    "65, which the reader then refuses as corrupt (SR123) -- migrate_session writes it",
)
def test_known_bug_migration_result_can_exceed_the_depth_limit(session_dir: Path) -> None:
    deep: Any = None
    for _ in range(62):
        deep = {"k": deep}
    doc = apex_state()
    doc["steps"]["1"] = deep  # depth 64: readable
    data = dumps(doc)
    parsed = parse_json_bytes(data)
    assert not parsed.diagnostics
    (session_dir / store.STATE).write_bytes(data)
    out = store.migrate_session(session_dir, now=NOW, write=True)
    assert out.status == "refused" or store.load(session_dir).status != "corrupt", out.status


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="bug: migration turns an integral float current_step into an int (2.0 -> 2); for "
    "1e308 that is a 309-digit integer, which the reader refuses as beyond the double range "
    "(SR122): the input reads as a 3.0 state (SR307 only), its migration as corrupt",
)
def test_known_bug_migrated_integral_float_overflows_the_number_limit() -> None:
    doc = apex_state()
    doc["current_step"] = 1e308
    assert store.classify(dumps(doc)).status == "ok"
    res = migrate(doc, now=NOW)
    assert not parse_json_bytes(dumps(res.document)).corrupt
