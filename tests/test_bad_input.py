"""Every kind of bad input ends in a coded diagnostic and exit 1 (2 for usage), never a
traceback. Each case runs the real CLI in a separate process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_resume.core.jsonread import parse_json_bytes

from conftest import apex_state, dump, run_cli

# Test tier (README "Test tiers"): many CLI processes.
pytestmark = pytest.mark.slow


def _validate(path: Path, *extra: str) -> tuple[int, list[dict[str, object]]]:
    proc = run_cli(
        "validate",
        "--format",
        "json",
        "--now",
        "2026-11-22T00:00:00Z",
        *extra,
        str(path),
        cwd=path.parent,
    )
    report = json.loads(proc.stdout)
    return proc.returncode, [d for f in report["files"] for d in f["diagnostics"]]


def _codes(diags: list[dict[str, object]]) -> list[object]:
    return [d["code"] for d in diags]


BYTE_CASES = {
    "zero-bytes": (b"", "SR110"),
    "whitespace-only": (b" \n\t\r\n", "SR111"),
    "invalid-utf8": (b'{"project": "caf\xe9"}', "SR115"),
    "utf16": ('{"project": "x"}'.encode("utf-16"), "SR114"),
    "utf16-no-bom": ('{"project": "x"}'.encode("utf-16-le"), "SR114"),
    "nan": (b'{"schema_version": "3.0", "revision": NaN}', "SR122"),
    "infinity": (b'{"schema_version": "3.0", "revision": -Infinity}', "SR122"),
    "overflowing-float": (b'{"schema_version": "3.0", "revision": 1e999}', "SR122"),
    "top-level-array": (b'[{"schema_version": "3.0"}]', "SR124"),
    "top-level-string": (b'"3.0"', "SR124"),
    "huge-integer": (b'{"revision": ' + b"9" * 5000 + b"}", "SR122"),
    "integer-beyond-double": (b'{"revision": ' + b"9" * 400 + b"}", "SR122"),
    "deep-nesting": (b"[" * 10_000 + b"]" * 10_000, "SR123"),
    "deep-object-nesting": (b'{"a":' * 10_000 + b"1" + b"}" * 10_000, "SR123"),
    "moderately-deep": (b'{"a":' * 200 + b"1" + b"}" * 200, "SR123"),
}


@pytest.mark.parametrize("name", sorted(BYTE_CASES))
def test_bad_bytes(tmp_path: Path, name: str) -> None:
    data, code = BYTE_CASES[name]
    p = tmp_path / "00-session-state.json"
    p.write_bytes(data)
    rc, diags = _validate(p)
    assert rc == 1
    assert code in _codes(diags)
    assert all(d["severity"] for d in diags)


def test_utf8_bom_is_reported_and_rest_still_checked(tmp_path: Path) -> None:
    p = tmp_path / "00-session-state.json"
    p.write_bytes(b"\xef\xbb\xbf" + dump(apex_state()))
    rc, diags = _validate(p)
    assert rc == 1
    assert _codes(diags) == ["SR113"]
    assert (diags[0]["line"], diags[0]["column"]) == (1, 1)


def test_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    p = tmp_path / "00-session-state.json"
    p.write_bytes(b'{\n  "schema_version": "3.0",\n  "project": "x",,\n}')
    rc, diags = _validate(p)
    assert rc == 1
    assert _codes(diags) == ["SR120"]
    assert (diags[0]["line"], diags[0]["column"]) == (3, 18)


def test_duplicate_keys_point_at_the_second_key(tmp_path: Path) -> None:
    p = tmp_path / "00-session-state.json"
    p.write_bytes(b'{\n "steps": {"1": {"status": "pending",\n  "status": "complete"}}}')
    rc, diags = _validate(p)
    assert rc == 1
    dup = [d for d in diags if d["code"] == "SR121"]
    assert len(dup) == 1
    assert dup[0]["pointer"] == "/steps/1/status"
    assert (dup[0]["line"], dup[0]["column"]) == (3, 3)


@pytest.mark.parametrize(
    ("member", "code", "what"),
    [('"k":1', "SR121", "duplicate keys"), ('"k{}":NaN', "SR122", "non-finite numbers")],
)
def test_a_thousand_findings_of_one_kind_list_a_hundred_and_count_the_rest(
    tmp_path: Path, member: str, code: str, what: str
) -> None:
    """1 MB can hold 166,000 duplicate keys: listing each took seconds (issue 18)."""
    p = tmp_path / "00-session-state.json"
    p.write_text("{" + ",".join(member.format(i) for i in range(1000)) + "}")
    rc, diags = _validate(p)
    found = [d for d in diags if d["code"] == code]
    assert rc == 1
    assert len(found) == 101
    assert all(d["pointer"] for d in found[:100])
    last = found[-1]
    assert last["message"].startswith(("899 more", "900 more")) and what in last["message"]


def test_fifty_megabyte_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big" / "00-session-state.json"
    small = tmp_path / "small" / "00-session-state.json"
    big.parent.mkdir()
    small.parent.mkdir()
    with open(big, "wb") as fh:
        fh.write(b'{"project": "')
        fh.write(b"x" * (50 * 1024 * 1024))
        fh.write(b'"}')
    small.write_bytes(b'{"project": "x"}')

    def peak(path: Path) -> tuple[int, str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "session_resume", "validate", "--format", "json", str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        out = proc.stdout.read().decode()  # small output: cannot fill the pipe
        _, _, rusage = os.wait4(proc.pid, 0)
        return rusage.ru_maxrss, out  # KiB on Linux

    big_rss, out = peak(big)
    small_rss, _ = peak(small)
    assert "SR112" in out
    # The 50 MB file was never loaded: peak memory is that of validating a tiny file.
    assert big_rss < small_rss + 10 * 1024, (big_rss, small_rss)


def test_size_limit_is_configurable(tmp_path: Path) -> None:
    p = tmp_path / "00-session-state.json"
    p.write_bytes(dump(apex_state()))
    rc, diags = _validate(p, "--max-size", "100")
    assert rc == 1 and _codes(diags) == ["SR112"]


def test_directory_without_state_file(tmp_path: Path) -> None:
    d = tmp_path / "empty"
    d.mkdir()
    proc = run_cli("validate", str(d), cwd=tmp_path)
    # nothing to check is a usage error (issue 27 point 9), not "1 invalid"
    assert proc.returncode == 2
    assert "SR101" in proc.stderr and "invalid" not in proc.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="os.mkfifo is not available (Windows)")
def test_fifo_is_never_opened(tmp_path: Path) -> None:
    p = tmp_path / "00-session-state.json"
    os.mkfifo(p)
    proc = run_cli("validate", str(p), cwd=tmp_path, timeout=20)  # would hang if opened
    assert proc.returncode == 1
    assert "SR102" in proc.stdout


def test_dangling_symlink(tmp_path: Path) -> None:
    p = tmp_path / "00-session-state.json"
    p.symlink_to(tmp_path / "gone.json")
    proc = run_cli("validate", str(p), cwd=tmp_path)
    assert proc.returncode == 1
    assert "SR103" in proc.stdout


def test_symlink_out_of_the_root_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes(dump(apex_state()))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    p = repo / "00-session-state.json"
    p.symlink_to(outside)
    proc = run_cli("validate", str(p), "--root", str(repo), cwd=repo)
    assert proc.returncode == 1
    assert "SR105" in proc.stdout


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli("validate", str(tmp_path / "nope.json"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "SR100" in proc.stderr


def test_unknown_option_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli("validate", "--frobnicate", cwd=tmp_path)
    assert proc.returncode == 2
    assert "usage:" in proc.stderr


PATH_CASES = {
    "traversal": ("../../etc/passwd", "SR311"),
    "absolute": ("/etc/passwd", "SR310"),
    "windows-absolute": ("C:\\Windows\\win.ini", "SR310"),
    "newline": ("agent-output/demo/a\nb.md", "SR312"),
    "nul": ("agent-output/demo/a\u0000.md", "SR312"),
    "escape": ("agent-output/demo/\u001b[31m.md", "SR312"),
    "sneaky-traversal": ("agent-output/../../x.md", "SR311"),
}


@pytest.mark.parametrize("name", sorted(PATH_CASES))
def test_unsafe_artifact_paths(tmp_path: Path, name: str) -> None:
    raw, code = PATH_CASES[name]
    doc = apex_state()
    doc["steps"]["1"]["artifacts"].append(raw)
    p = tmp_path / "00-session-state.json"
    p.write_bytes(dump(doc))
    rc, diags = _validate(p)
    assert rc == 1
    hit = [d for d in diags if d["code"] == code]
    assert hit and hit[0]["pointer"] == "/steps/1/artifacts/1"
    assert hit[0]["line"] is not None


def test_status_blocked_gets_its_own_code_and_hint(tmp_path: Path) -> None:
    doc = apex_state()
    doc["steps"]["2"]["status"] = "blocked"
    p = tmp_path / "00-session-state.json"
    p.write_bytes(dump(doc))
    rc, diags = _validate(p)
    assert rc == 1
    hit = [d for d in diags if d["code"] == "SR309"]
    assert hit and hit[0]["pointer"] == "/steps/2/status"
    assert "finding" in str(hit[0]["hint"])


def test_newer_version_is_refused_and_untouched(tmp_path: Path) -> None:
    doc = apex_state()
    doc["schema_version"] = "9.0"
    p = tmp_path / "00-session-state.json"
    p.write_bytes(dump(doc))
    before = p.read_bytes()
    rc, diags = _validate(p)
    assert rc == 1 and _codes(diags) == ["SR141"]
    assert p.read_bytes() == before


def test_version_compared_as_numbers(tmp_path: Path) -> None:
    doc = apex_state()
    doc["schema_version"] = "10.0"  # string comparison would call this older than 3.0
    p = tmp_path / "00-session-state.json"
    p.write_bytes(dump(doc))
    rc, diags = _validate(p)
    assert rc == 1 and _codes(diags) == ["SR141"]


@pytest.mark.parametrize("value", [3, "3", "v3", "3.0.0", None])
def test_malformed_version(tmp_path: Path, value: object) -> None:
    doc = apex_state()
    doc["schema_version"] = value
    p = tmp_path / "00-session-state.json"
    p.write_bytes(dump(doc))
    rc, diags = _validate(p)
    assert rc == 1 and _codes(diags) == ["SR142"]


def _depth(value: object) -> int:
    """How many containers nest at the deepest point (0 for a scalar)."""
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_json_trees = st.recursive(
    st.none() | st.integers(-5, 5) | st.sampled_from(["", "{", "[[", "a{b[", "}]"]),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.sampled_from("abc["), kids),
    max_leaves=80,
)


@settings(max_examples=300, deadline=None)
@given(tree=_json_trees, max_depth=st.integers(1, 12))
def test_the_depth_limit_is_the_trees_depth(tree: object, max_depth: int) -> None:
    """SR123 exactly when more than ``max_depth`` containers nest, whether the reader walks
    the tree or counts the brackets in the text (strings holding brackets included)."""
    parsed = parse_json_bytes(json.dumps({"t": tree}).encode(), max_depth=max_depth)
    refused = "SR123" in [d.code for d in parsed.diagnostics]
    assert refused == (_depth({"t": tree}) > max_depth)


@pytest.mark.parametrize(("depth", "refused"), [(64, False), (65, True)])
def test_a_chain_at_the_limit(depth: int, refused: bool) -> None:
    """64 nested containers and nothing else is the limit (the bracket count alone decides)."""
    data = b'{"a":' * (depth - 1) + b"[]" + b"}" * (depth - 1)
    parsed = parse_json_bytes(data)
    assert ("SR123" in [d.code for d in parsed.diagnostics]) is refused
