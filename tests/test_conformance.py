"""The conformance suite and its runner (DESIGN §10).

- the suite lints clean (schema-valid cases, stable unique ids, every code and action covered);
- the Python reference adapter passes through the real runner (a subprocess), its known bugs
  being exactly its skip list; the JavaScript implementation likewise with its own skip list;
- the runner's behaviour on misbehaving adapters (stale skips, timeouts, crashes, protocol
  errors, file mismatches) and its JSON, JUnit and badge outputs, with tiny fake adapters
  that are real processes.

Node is needed for the JavaScript adapter; set SESSION_RESUME_NO_NODE=1 to skip that test.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from session_resume.conformance import ADAPTER_OPERATIONS, OPERATIONS
from session_resume.conformance.lint import NOT_PRODUCIBLE, PROSE_RULE, lint_suite
from session_resume.conformance.runner import parse_skip_file

# Test tier (README "Test tiers"): the whole suite through the adapters, and the runner.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO / "conformance" / "cases"
PY_ADAPTER = f"{shlex.quote(sys.executable)} -m session_resume.conformance.adapter"
NODE_ADAPTER_JS = REPO / "conformance" / "js" / "adapter.mjs"


def conformance(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "session_resume", "conformance", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPO / "schema" / "conformance" / name).read_text())
    return data


# --- the suite --------------------------------------------------------------------------


def test_suite_lints_clean() -> None:
    res = lint_suite(SUITE, REPO)
    assert res.ok, "\n".join(res.problems)
    assert len(res.cases) >= 150
    assert {c.operation for c in res.cases} == set(OPERATIONS)
    assert not set(NOT_PRODUCIBLE) & set(res.codes_covered)


def test_lint_reports_problems(tmp_path: Path) -> None:
    bad = tmp_path / "cases" / "g" / "some-case"
    (bad / "files").mkdir(parents=True)
    (bad / "case.yaml").write_text(
        "id: other-id\ntitle: t\nspec: '§2.1'\noperation: validate\n"
        "now: '2026-03-02T12:00:00Z'\nexpected: {codes: [SR999]}\n"
    )
    res = lint_suite(tmp_path / "cases", tmp_path)
    text = "\n".join(res.problems)
    assert "differs from the directory name" in text
    assert "SR999 is not a code of the catalogue" in text
    assert "is covered by no case" in text


def test_lint_checks_that_the_cited_section_names_every_expected_code(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "spec.md").write_text(
        "# spec\n\n## 2. State\n\n### 2.1 Bytes\n\nZero bytes: SR110.\n\n```text\n"
        "## a layout line in a code fence is not a heading\n```\n\nSR111 is still in 2.1.\n\n"
        "### 2.2 Versions\n\nSR140; the range SR120–SR124 names SR121.\n\n"
        "### 2.3 Steps\n\n1. first (SR150)\n2. second\n   1. nested\n3. third\n"
    )
    for cid, spec, codes in (
        ("named", "§2.1", "[SR110, SR111]"),
        ("named-by-range", "§2.2", "[SR121, SR140]"),
        ("subsection-counts-for-its-parent", "§2", "[SR110, SR140]"),
        ("not-named", "§2.1", "[SR110, SR120]"),
        ("no-such-section", "§9", "[SR110]"),
        ("numbered-item", "§2.3.2", "[SR150]"),
        ("nested-item", "§2.3.2.1", "[SR150]"),
        ("no-such-item", "§2.3.4", "[SR150]"),
        ("no-such-nested-item", "§2.3.1.1", "[SR150]"),
    ):
        d = tmp_path / "cases" / "g" / cid
        (d / "files").mkdir(parents=True)
        (d / "case.yaml").write_text(
            f"id: {cid}\ntitle: t\nspec: '{spec}'\noperation: validate\n"
            f"now: '2026-03-02T12:00:00Z'\nexpected: {{codes: {codes}}}\n"
        )
    problems = [p for p in lint_suite(tmp_path / "cases", tmp_path).problems if p.startswith("g/")]
    missing = (
        "names no numbered rule of docs/spec.md (a numbered section, or a numbered item of "
        "one: §9.2.6)"
    )
    assert problems == [
        f"g/no-such-item: spec §2.3.4 {missing}",
        f"g/no-such-nested-item: spec §2.3.1.1 {missing}",
        f"g/no-such-section: spec §9 {missing}",
        "g/not-named: expects SR120, which docs/spec.md §2.1 does not name (the cited section "
        "must state every rule the case checks)",
    ]


def _prose_case(root: Path, cid: str, expected: str, state_in: Any, state_out: Any) -> None:
    d = root / "cases" / "g" / cid
    (d / "files").mkdir(parents=True)
    (d / "expected").mkdir()
    (d / "files" / "00-session-state.json").write_text(json.dumps(state_in))
    (d / "expected" / "00-session-state.json").write_text(json.dumps(state_out))
    (d / "case.yaml").write_text(
        f"id: {cid}\ntitle: t\nspec: '§9'\noperation: migrate\n"
        f"now: '2026-03-02T12:00:00Z'\nexpected:\n{textwrap.indent(expected, '  ')}"
    )


def test_lint_refuses_a_case_comparing_prose_exactly(tmp_path: Path) -> None:
    """docs/conformance.md, "How results are compared": a text the implementation composes
    where prose can stand (a skip_reason, a finding, a placeholder rationale) must be declared
    free text; text copied from the input is not prose; a resume case never names a reason's
    message or hint."""
    added = {"steps": {"3_5": {"status": "skipped", "skip_reason": "added by migration"}}}
    log_in = {"decision_log": [{"decision": "Bicep", "reason": ""}]}
    log_out = {"decision_log": [{"title": "Bicep", "choice": "Bicep", "rationale": "(none)"}]}
    codes = "status: migrated\ncodes: [SR150]\nfiles: expected\n"
    _prose_case(tmp_path, "undeclared", codes, {}, added)
    _prose_case(
        tmp_path,
        "declared",
        codes + "free_text:\n  00-session-state.json: [/steps/3_5/skip_reason]\n",
        {},
        added,
    )
    _prose_case(tmp_path, "placeholder", codes, log_in, log_out)
    _prose_case(tmp_path, "copied-from-input", codes, {"open_findings": [{"title": "x"}]}, {
        "open_findings": ["x"]
    })  # fmt: skip
    d = tmp_path / "cases" / "g" / "resume-message"
    (d / "files").mkdir(parents=True)
    (d / "case.yaml").write_text(
        "id: resume-message\ntitle: t\nspec: '§10'\noperation: resume\n"
        "now: '2026-03-02T12:00:00Z'\nexpected:\n  action: fresh_start\n  reasons: [SR700]\n"
        "  warnings: []\n"
        "  decision:\n    briefing: {skip: [{path: a, reason: b}]}\n    x: [{message: m}]\n"
    )
    problems = [p for p in lint_suite(tmp_path / "cases", tmp_path).problems if p.startswith("g/")]
    prose = [p for p in problems if "prose" in p]
    assert [p for p in problems if "resume-message" in p and "prose" not in p] == []
    assert prose == [
        "g/placeholder: 00-session-state.json /decision_log/0/rationale is prose the "
        f"implementation writes ({PROSE_RULE}): list it in expected.free_text, never compare "
        "it exactly",
        f"g/resume-message: expected.decision /briefing/skip/0/reason is prose ({PROSE_RULE}): "
        "never compared, remove it",
        f"g/resume-message: expected.decision /x/0/message is prose ({PROSE_RULE}): never "
        "compared, remove it",
        "g/undeclared: 00-session-state.json /steps/3_5/skip_reason is prose the implementation "
        f"writes ({PROSE_RULE}): list it in expected.free_text, never compare it exactly",
    ]


# --- the two implementations ------------------------------------------------------------


def _run_json(adapter: str, skip: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    # a hang guard, not a time limit: the whole suite (570 cases) on a loaded 2-core machine
    proc = conformance("--adapter", adapter, "--skip", str(skip), "--format", "json", timeout=900)
    assert proc.stdout, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    jsonschema.validate(report, schema("report.json"))
    return proc, report


def _check_against_skip_list(report: dict[str, Any], skip: Path) -> None:
    listed = set(parse_skip_file(skip))
    failed = [c for c in report["cases"] if c["outcome"] == "failed"]
    assert not failed, "\n".join(
        f"{c['id']}: {c.get('failure')} {c.get('reason', '')} {c.get('diff', '')}" for c in failed
    )
    known = {c["id"] for c in report["cases"] if c.get("skip") == "skip_list"}
    assert known == listed, f"failures {sorted(known)} differ from the skip list {sorted(listed)}"
    others = [
        c["id"] for c in report["cases"] if c["outcome"] == "skipped" and c["id"] not in known
    ]
    assert not others, f"skipped for another reason: {others}"


def test_python_reference_adapter() -> None:
    skip = REPO / "conformance" / "adapters" / "python" / "skip.txt"
    proc, report = _run_json(PY_ADAPTER, skip)
    assert proc.returncode == 0, proc.stderr
    _check_against_skip_list(report, skip)
    assert report["operations"] == list(ADAPTER_OPERATIONS)


@pytest.mark.node  # test tier (README "Test tiers"): Node and `npm ci`
def test_node_adapter(capsys: pytest.CaptureFixture[str]) -> None:
    node = shutil.which("node")
    if node is None or not (REPO / "node_modules" / "yaml").is_dir():
        if os.environ.get("SESSION_RESUME_NO_NODE") == "1":
            pytest.skip("node/ajv not installed (SESSION_RESUME_NO_NODE=1)")
        pytest.fail("the JavaScript adapter needs node (>= 20) and `npm ci` (ajv, yaml)")
    skip = REPO / "conformance" / "adapters" / "js" / "skip.txt"
    proc, report = _run_json(f"{shlex.quote(node)} {shlex.quote(str(NODE_ADAPTER_JS))}", skip)
    s = report["summary"]
    with capsys.disabled():  # shown in every run, not only on failure
        print(
            f"\nJavaScript implementation: {s['passed']}/{s['total']} passed ({s['pass_rate']:.1%})"
        )
    assert proc.returncode == 0, proc.stderr
    _check_against_skip_list(report, skip)
    # The JavaScript package implements every rule of the suite: its skip list is empty (the
    # header comment stays) and every case passes.
    assert parse_skip_file(skip) == {}
    assert report["summary"]["passed"] == report["summary"]["total"]
    assert report["implementation"]["language"] == "javascript"


# --- the runner, with fake adapters -----------------------------------------------------

FAKE = textwrap.dedent(
    """
    import json, os, sys, time
    ops = os.environ.get("FAKE_OPS", "validate,migrate").split(",")
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["cmd"] == "stop":
            sys.exit(0)
        if msg["cmd"] == "start":
            print(json.dumps({"version": 1, "operations": ops,
                              "implementation": {"name": "fake", "language": "python",
                                                 "version": str(os.getpid())}}), flush=True)
            continue
        seq, case = msg["seq"], msg["case"]
        cid = case["id"]
        if cid == "slow":
            time.sleep(60)
        if cid == "crash":
            sys.exit(3)
        if cid == "garbage":
            print("this is not json", flush=True)
            continue
        if cid == "wrong-seq":
            seq += 1000
        out = {"seq": seq, "result": {"codes": []}}
        if cid == "wrong-codes":
            out["result"] = {"codes": ["SR120"]}
        if cid == "errored":
            print("earlier noise", file=sys.stderr, flush=True)  # same case: shown too
            out = {"seq": seq, "errored": {"message": "boom", "traceback": "Traceback: boom"}}
            print("log line of the errored case", file=sys.stderr, flush=True)
        if cid == "control-chars":
            out = {"seq": seq, "errored": {"message": "bad \\x00\\x1b[31m\\x07\\ufffe bytes",
                                           "traceback": "line\\x02feed\\x01"}}
        if cid == "unbuffered":
            sys.stdout.write(json.dumps(out) + "\\n")  # no flush: the runner must not help
            continue
        if cid == "skipped":
            out = {"seq": seq, "skipped": {"message": "not yet", "issue_url": "https://x/1"}}
        if cid == "writes-stray":
            open(os.path.join(case["dir"], "stray.txt"), "w").write("x")
        if cid.startswith("migrate-"):
            doc = {"a": 1, "b": [1, 2]} if cid == "migrate-good" else {"a": 2, "b": [1, 2]}
            with open(os.path.join(case["dir"], "00-session-state.json"), "w") as fh:
                json.dump(doc, fh)
            out["result"] = {"status": "migrated", "codes": []}
        print(json.dumps(out), flush=True)
    """
)


def _case(suite: Path, cid: str, op: str = "validate", expected: str = "{codes: []}") -> Path:
    d = suite / "g" / cid
    (d / "files").mkdir(parents=True)
    (d / "files" / "00-session-state.json").write_text('{"a": 0}')
    (d / "case.yaml").write_text(
        f"id: {cid}\ntitle: fake case {cid}\nspec: '§2.1'\noperation: {op}\n"
        f"now: '2026-03-02T12:00:00Z'\nexpected: {expected}\n"
    )
    return d


@pytest.fixture
def fake(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "fake_adapter.py"
    script.write_text(FAKE)
    suite = tmp_path / "suite"
    for cid in ("ok-empty", "wrong-codes", "errored", "skipped", "writes-stray"):
        _case(suite, cid)
    good = _case(suite, "migrate-good", "migrate", "{status: migrated, codes: [], files: expected}")
    bad = _case(suite, "migrate-bad", "migrate", "{status: migrated, codes: [], files: expected}")
    for d in (good, bad):
        (d / "expected").mkdir()
        (d / "expected" / "00-session-state.json").write_text('{\n  "b": [1, 2],\n  "a": 1\n}\n')
    _case(suite, "resume-unsupported", "resume", "{action: start, reasons: [], warnings: []}")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", suite


def test_runner_reports(fake: tuple[str, Path], tmp_path: Path) -> None:
    adapter, suite = fake
    junit, badge, js = tmp_path / "r.xml", tmp_path / "badge.json", tmp_path / "r.json"
    proc = conformance(
        "--adapter", adapter, "--suite", str(suite), "--junit", str(junit),
        "--badge", str(badge), "--json", str(js),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.rstrip("\n").splitlines()
    assert lines[-1] == "2 passed, 4 failed, 2 skipped"
    text = proc.stdout
    assert "codes: expected [], got [SR120] (unexpected SR120)" in text
    assert "stray.txt: unexpected file" in text
    assert "00-session-state.json: /a: expected 1, got 2" in text  # JSON compared as values
    assert "FAIL g/migrate-good" not in text  # key order and whitespace do not matter
    assert "errored: boom" in text
    assert "adapter stderr (tail):\n    earlier noise\n    log line of the errored case" in text
    assert "by group: g 2/8 (4 failed, 2 skipped)" in text
    assert "by operation: validate 1/5 (3 failed, 1 skipped), migrate 1/2 (1 failed)" in text
    assert "SKIP g/skipped: not yet (https://x/1)" in text
    assert "SKIP 1 case(s): operation resume not supported" in text

    report = json.loads(js.read_text())
    jsonschema.validate(report, schema("report.json"))
    assert report["summary"]["groups"] == {
        "g": {"total": 8, "passed": 2, "failed": 4, "skipped": 2}
    }
    assert report["summary"]["operations"]["resume"] == {
        "total": 1, "passed": 0, "failed": 0, "skipped": 1
    }  # fmt: skip
    outcome = {c["id"]: (c["outcome"], c.get("failure") or c.get("skip")) for c in report["cases"]}
    assert outcome == {
        "errored": ("failed", "errored"),
        "migrate-bad": ("failed", "mismatch"),
        "migrate-good": ("passed", None),
        "ok-empty": ("passed", None),
        "resume-unsupported": ("skipped", "unsupported"),
        "skipped": ("skipped", "adapter"),
        "writes-stray": ("failed", "mismatch"),
        "wrong-codes": ("failed", "mismatch"),
    }

    root = ET.parse(junit).getroot()
    suite_el = root.find("testsuite")
    assert suite_el is not None
    counts = [suite_el.get(k) for k in ("tests", "failures", "errors", "skipped")]
    assert counts == ["8", "3", "1", "2"]
    names = {tc.get("name"): tc for tc in suite_el.iter("testcase")}
    assert names["wrong-codes"].find("failure") is not None
    assert names["errored"].find("error") is not None
    assert names["skipped"].find("skipped") is not None

    data = json.loads(badge.read_text())
    jsonschema.validate(data, schema("badge.json"))
    assert data == {"schemaVersion": 1, "label": "conformance", "message": "25%", "color": "red"}

    xml = conformance("--adapter", adapter, "--suite", str(suite), "--format", "junit")
    assert ET.fromstring(xml.stdout).tag == "testsuites"


def test_skip_list_fails_when_a_skipped_case_passes(fake: tuple[str, Path], tmp_path: Path) -> None:
    adapter, suite = fake
    skip = tmp_path / "skip.txt"
    skip.write_text("# known\nok-empty expected to fail\nwrong-codes a known bug\n")
    proc = conformance("--adapter", adapter, "--suite", str(suite), "--skip", str(skip),
                       "--cases", "ok-empty", "--cases", "g/wrong-codes")  # fmt: skip
    assert proc.returncode == 1
    assert "STALE g/ok-empty" in proc.stdout
    assert "remove it from the list" in proc.stdout
    assert proc.stdout.rstrip().endswith("0 passed, 1 failed, 1 skipped")
    skip.write_text("wrong-codes a known bug\n")
    proc = conformance("--adapter", adapter, "--suite", str(suite), "--skip", str(skip),
                       "--cases", "ok-empty", "--cases", "wrong-codes")  # fmt: skip
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.rstrip().endswith("1 passed, 0 failed, 1 skipped")
    skip.write_text("no-such-case whatever\n")
    proc = conformance("--adapter", adapter, "--suite", str(suite), "--skip", str(skip))
    assert proc.returncode == 2
    assert "no-such-case" in proc.stderr
    skip.write_text("ok-empty\n")  # no reason
    proc = conformance("--adapter", adapter, "--suite", str(suite), "--skip", str(skip))
    assert proc.returncode == 2


def test_timeout_crash_and_protocol_errors_restart_the_adapter(
    fake: tuple[str, Path], tmp_path: Path
) -> None:
    adapter, suite = fake
    for cid in ("slow", "crash", "garbage", "wrong-seq"):
        _case(suite, cid)
    proc = conformance(
        "--adapter", adapter, "--suite", str(suite), "--timeout", "1", "--format", "json",
        "--cases", "slow", "--cases", "ok-empty", "--cases", "crash", "--cases", "garbage",
        "--cases", "wrong-seq", timeout=60,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    got = {c["id"]: (c["outcome"], c.get("failure")) for c in report["cases"]}
    assert got == {
        "slow": ("failed", "timeout"),
        "ok-empty": ("passed", None),  # after the restart
        "crash": ("failed", "died"),
        "garbage": ("failed", "protocol"),
        "wrong-seq": ("failed", "protocol"),
    }
    slow = next(c for c in report["cases"] if c["id"] == "slow")
    assert slow["duration_s"] < 10
    assert proc.returncode == 1


def test_junit_is_well_formed_whatever_bytes_the_adapter_sends(
    fake: tuple[str, Path], tmp_path: Path
) -> None:
    adapter, suite = fake
    _case(suite, "control-chars")
    junit = tmp_path / "r.xml"
    proc = conformance("--adapter", adapter, "--suite", str(suite), "--cases", "control-chars",
                       "--junit", str(junit))  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    error = ET.parse(junit).getroot().find("testsuite/testcase/error")  # parses: well-formed
    assert error is not None
    assert error.get("message") == "bad \\x00\\x1b[31m\\x07\\ufffe bytes"
    assert "line\\x02feed\\x01" in (error.text or "")


def test_the_adapter_gets_the_callers_environment_unchanged(
    fake: tuple[str, Path], tmp_path: Path
) -> None:
    """No PYTHONUNBUFFERED from the runner: an adapter that does not flush times out, and the
    message says why."""
    adapter, suite = fake
    _case(suite, "unbuffered")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.run(
        [sys.executable, "-m", "session_resume", "conformance", "--adapter", adapter,
         "--suite", str(suite), "--cases", "unbuffered", "--timeout", "2"],
        capture_output=True, text=True, timeout=120, cwd=REPO, env=env,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "timeout: no answer within 2 s (an adapter must flush stdout" in proc.stdout


def test_schema_problems_name_each_pointer_once(fake: tuple[str, Path], tmp_path: Path) -> None:
    from session_resume.conformance.runner import _schema_problems

    problems = _schema_problems("conformance/run-response.json", {"seq": "x", "result": {}})
    assert problems
    for p in problems:
        pointer = p.split(":", 1)[0]
        assert p.count(pointer + ":") == 1, p


def test_adapter_that_does_not_start(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text("import sys\nsys.stdin.readline()\nprint('{\"version\": 9}', flush=True)\n")
    proc = conformance("--adapter", f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}",
                       "--cases", "zero-bytes")  # fmt: skip
    assert proc.returncode == 2
    assert "start-response.json" in proc.stderr


def test_list_and_lint_commands() -> None:
    listed = conformance("list", "--cases", "read/*")
    assert listed.returncode == 0
    assert "read/zero-bytes\tvalidate\t§2.1" in listed.stdout
    lint = conformance("lint")
    assert lint.returncode == 0, lint.stdout
    assert lint.stdout.rstrip().endswith("ok")


def test_runner_messages_follow_the_schemas(tmp_path: Path) -> None:
    from session_resume.conformance import PROTOCOL_VERSION, RUNNER_STEPS
    from session_resume.conformance.cases import (
        Workspace,
        load_suite,
        run_arguments,
        step_message,
    )

    root = tmp_path / "repo"
    ws = Workspace(tmp_path, root, root / "agent-output" / "demo", tmp_path / "outside")
    run = jsonschema.Draft202012Validator(schema("run-request.json"))
    for n, case in enumerate(load_suite(SUITE)):
        if case.operation == "sequence":
            for i, step in enumerate(case.steps):
                if step["op"] in RUNNER_STEPS:
                    continue
                message = {"cmd": "run", "seq": n, "case": step_message(case, i, ws)}
                errors = [e.message for e in run.iter_errors(message)]
                assert not errors, f"{case.key} step {i + 1}: {errors}"
            continue
        message = {
            "cmd": "run",
            "seq": n,
            "case": {"id": case.id, "operation": case.operation, "dir": str(ws.dir),
                     "root": str(ws.root), "now": case.now, "arguments": run_arguments(case, ws)},
        }  # fmt: skip
        errors = [e.message for e in run.iter_errors(message)]
        assert not errors, f"{case.key}: {errors}"
    jsonschema.validate({"cmd": "start", "version": PROTOCOL_VERSION}, schema("start-request.json"))
    jsonschema.validate({"cmd": "stop"}, schema("stop-request.json"))


# --- sequence cases -----------------------------------------------------------------------


def test_lint_checks_sequence_cases(tmp_path: Path) -> None:
    """docs/conformance.md, "Sequence cases": every `files` names a directory of expected/ and
    every one there is named; a step's codes are named by the section it cites; no step
    compares prose."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "spec.md").write_text(
        "# spec\n\n## 4. Writing\n\nRefused: SR161, SR710.\n\n## 10. Resume\n\nSR713.\n"
    )
    d = tmp_path / "cases" / "g" / "seq"
    (d / "expected" / "named").mkdir(parents=True)
    (d / "expected" / "named" / "00-session-state.json").write_text("{}")
    (d / "expected" / "unused").mkdir()
    (d / "expected" / "unused" / "x").write_text("x")
    (d / "case.yaml").write_text(
        "id: seq\ntitle: t\nspec: '§4'\noperation: sequence\nnow: '2026-03-02T12:00:00Z'\n"
        "steps:\n"
        "- {op: init, arguments: {project: demo}, files: named, expected: {written: true}}\n"
        "- {op: start, arguments: {step: '1'}, files: missing, expected: {written: false, "
        "codes: [SR161, SR511]}}\n"
        "- op: resume\n  spec: '§10'\n  expected: {action: continue_step, reasons: [SR713], "
        "warnings: [], decision: {x: {hint: h}}}\n"
        "- {op: write, path: 00-session-state.json, text: ''}\n"
    )
    bad = tmp_path / "cases" / "g" / "seq-with-expected"
    bad.mkdir()
    (bad / "case.yaml").write_text(
        "id: seq-with-expected\ntitle: t\nspec: '§4'\noperation: sequence\n"
        "now: '2026-03-02T12:00:00Z'\nexpected: {codes: []}\nsteps: [{op: remove, path: x}]\n"
    )
    problems = [p for p in lint_suite(tmp_path / "cases", tmp_path).problems if p.startswith("g/")]
    assert "g/seq: a step names files missing, but there is no expected/missing/" in problems
    assert "g/seq: expected/unused/ is named by no step's `files`" in problems
    assert (
        "g/seq: an answer expects SR511, which docs/spec.md §4 does not name (cite the section "
        "stating it: the step's `spec`)" in problems
    )
    assert (
        f"g/seq: an expected.decision /x/hint is prose ({PROSE_RULE}): never compared, remove it"
        in problems
    )
    assert [p for p in problems if p.startswith("g/seq-with-expected: case.yaml")], problems
    assert len([p for p in problems if p.startswith("g/seq:")]) == 4, problems


def _sequence_copy(tmp_path: Path, cid: str) -> Path:
    suite = tmp_path / "cases"
    shutil.copytree(SUITE / "sequence" / cid, suite / "sequence" / cid)
    return suite / "sequence" / cid


def test_a_sequence_fails_at_the_step_that_differs(tmp_path: Path) -> None:
    """The runner names the first step whose answer or files differ (its 1-based number and
    operation) and stops there; the unmodified case passes through the reference adapter."""
    case = _sequence_copy(tmp_path, "init-start-resume-by-path")
    suite = str(tmp_path / "cases")
    proc = conformance("--adapter", PY_ADAPTER, "--suite", suite)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    yaml_path = case / "case.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("continue_step", "restart_step"))
    proc = conformance("--adapter", PY_ADAPTER, "--suite", suite)
    assert proc.returncode == 1
    assert "step 3 (resume) differs" in proc.stdout
    assert "action: expected restart_step, got continue_step" in proc.stdout
    state = case / "expected" / "after-start" / "00-session-state.json"
    state.write_text(state.read_text().replace('"attempts": 1', '"attempts": 7'))
    proc = conformance("--adapter", PY_ADAPTER, "--suite", suite)
    assert "step 2 (start) differs" in proc.stdout
    assert "00-session-state.json: /steps/1/attempts: expected 7, got 1" in proc.stdout
    assert "step 3" not in proc.stdout  # the first failing step decides


def test_a_sequence_checks_the_files_outside_the_session(tmp_path: Path) -> None:
    """The naming rule is checked through the answers and the files: a step naming the decoy
    under src/ (spelled ./…, the current directory's) instead of the root's session fails."""
    case = _sequence_copy(tmp_path, "naming-root-wins-over-current-directory")
    yaml_path = case / "case.yaml"
    text = yaml_path.read_text()
    assert "cwd: src\n  path: agent-output/demo" in text
    # name the decoy (./… is the current directory's): no state there, the write is refused
    yaml_path.write_text(text.replace("path: agent-output/demo", "path: ./agent-output/demo", 1))
    proc = conformance("--adapter", PY_ADAPTER, "--suite", str(tmp_path / "cases"))
    assert proc.returncode == 1
    assert "step 3 (checkpoint) differs" in proc.stdout


def _spec_lint_copy(tmp_path: Path, spec: str) -> list[str]:
    """The lint's problems with ``spec`` as docs/spec.md beside one real case."""
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "spec.md").write_text(spec, encoding="utf-8")
    if not (tmp_path / "cases").exists():
        shutil.copytree(SUITE / "read" / "zero-bytes", tmp_path / "cases" / "read" / "zero-bytes")
    return [
        p for p in lint_suite(tmp_path / "cases", tmp_path).problems if p.startswith("docs/spec")
    ]


def test_lint_fails_when_the_spec_names_a_code_without_its_condition(tmp_path: Path) -> None:
    """docs/conformance.md, "Maintaining the suite": every code the normative sections name
    has a mention saying when it applies. The real spec passes; the same spec with SR709 back
    in the bare list of warnings it once was fails, naming the code and its line."""
    spec = (REPO / "docs" / "spec.md").read_text(encoding="utf-8")
    assert _spec_lint_copy(tmp_path, spec) == []
    start = spec.index("SR709 (when a step is asked")
    end = spec.index("SR306 (when more than one")
    planted = spec[:start] + "SR709 (another step is in progress), " + spec[end:]
    problems = _spec_lint_copy(tmp_path, planted)
    assert len(problems) == 1 and " SR709 is named, but no mention" in problems[0], problems


def test_the_condition_forms_the_spec_lint_accepts(tmp_path: Path) -> None:
    """Each accepted form, and the mentions that are no condition: a list of codes, a code in
    a parenthesis of its own, a section past §11."""
    spec = textwrap.dedent(
        """\
        # spec

        ## 2. Rules

        | condition | code |
        | --- | --- |
        | zero bytes | SR110 |

        A reader refuses the file when it is a FIFO (SR102).
        - SR716 (warning, when the step ran short).
        - **SR504**: a record's `seq` is not greater than the previous record's.
        Keywords map to codes: SR201 required, SR202 type, SR203 enum/const.
        A step key not in the workflow (SR410), a step missing (SR411).
        A dangling one is SR103.

        ## 10. Resume

        Warnings: SR708, SR709 (another step is in progress), SR306.

        ## 12. Decisions

        SR900 when the tool fails.
        """
    )
    problems = _spec_lint_copy(tmp_path, spec)
    named = sorted(p.split(": ")[1].split(" ")[0] for p in problems)
    assert named == ["SR306", "SR708", "SR709"], problems


def test_lint_fails_on_a_lease_or_worklog_field_the_spec_does_not_define(
    tmp_path: Path,
) -> None:
    """A sequence's expected lease may hold only the keys of spec §7's table, a worklog record
    only the fields §6 defines (its schema): a field learned from an implementation fails."""
    (tmp_path / "docs").mkdir()
    shutil.copy(REPO / "docs" / "spec.md", tmp_path / "docs" / "spec.md")
    cid = "lease-implicit-adopted-by-session-start"
    case = _sequence_copy(tmp_path, cid)

    def problems() -> list[str]:
        found = lint_suite(tmp_path / "cases", tmp_path).problems
        return [p for p in found if p.startswith(f"sequence/{cid}")]

    assert problems() == []
    lease = case / "expected" / "after-adopt" / "00-session.active"
    doc = json.loads(lease.read_text())
    lease.write_text(json.dumps({**doc, "adopted_from": "new-1"}))
    log = case / "expected" / "after-init" / "00-worklog.jsonl"
    record = json.loads(log.read_text().splitlines()[0])
    log.write_text(json.dumps({**record, "attempts": 1}, separators=(",", ":")) + "\n")
    assert problems() == [
        f"sequence/{cid}: expected/after-adopt/00-session.active holds adopted_from, which "
        "docs/spec.md §7 does not define",
        f"sequence/{cid}: expected/after-init/00-worklog.jsonl line 1 holds attempts, which "
        "docs/spec.md §6 does not define",
    ]
