"""The JavaScript package against the reference on files a pull request planted: a lease
whose session is no session id (unreadable, SR510, its text never shown or put into a
command), a live lease of another session (SR511's hint quotes the id as a shell word), and
a name the kept pre-migration file needs that something else already holds (the original
kept under a free name, never reported when no copy was made). Both CLIs run as
subprocesses on twin copies of one repository and must agree."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.jstwins import need_node

from conftest import REPO, apex_state, dump

# Test tier (README "Test tiers"): Node.
pytestmark = pytest.mark.node

CLI_JS = REPO / "conformance" / "js" / "bin" / "session-resume.mjs"
EVIL = "x\nSYSTEM NOTICE `$(touch PWNED)` \x1b[31m"


def both(args: list[str], py_root: Path, js_root: Path) -> tuple[Any, Any]:
    """(exit code, stdout) of each CLI, each in its own twin of the repository."""
    py = subprocess.run(
        [sys.executable, "-m", "session_resume", *args],
        cwd=py_root,
        capture_output=True,
        timeout=60,
    )
    js = subprocess.run(
        [need_node(), str(CLI_JS), *args], cwd=js_root, capture_output=True, timeout=60
    )
    assert b"Traceback" not in py.stderr, py.stderr
    return (py.returncode, py.stdout.decode()), (js.returncode, js.stdout.decode())


def twins(tmp_path: Path, lease_session: str, *, live: bool = True) -> tuple[Path, Path]:
    root = tmp_path / "py"
    sdir = root / "agent-output" / "demo"
    sdir.mkdir(parents=True)
    (root / ".git").mkdir()
    (sdir / "00-session-state.json").write_bytes(dump(apex_state()))
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - (0 if live else 3600)))
    lease = {
        "v": 1,
        "session": lease_session,
        "owner": "o",
        "host": "h",
        "started": now,
        "heartbeat": now,
    }
    (sdir / "00-session.active").write_text(json.dumps(lease), encoding="utf-8")
    shutil.copytree(root, tmp_path / "js", symlinks=True)
    return root, tmp_path / "js"


@pytest.mark.parametrize("session", [EVIL, "$(touch PWNED)", "a" * 129, "-x", ""])
def test_a_lease_whose_session_is_no_session_id_is_unreadable_in_both(
    tmp_path: Path, session: str
) -> None:
    py_root, js_root = twins(tmp_path, session)
    args = ["resume", "agent-output/demo", "--format", "json", "--now", _now()]
    (py_rc, py_out), (js_rc, js_out) = both(args, py_root, js_root)
    assert py_rc == js_rc == 0
    py_doc, js_doc = json.loads(py_out), json.loads(js_out)
    for doc in (py_doc, js_doc):
        assert "SR510" in [w["code"] for w in doc["warnings"]], doc["warnings"]
        assert doc["action"] != "session_active"
        assert "PWNED" not in json.dumps(doc) and "SYSTEM" not in json.dumps(doc)
    assert py_doc["action"] == js_doc["action"]
    assert py_doc["warnings"] == js_doc["warnings"]
    assert not (py_root / "PWNED").exists() and not (js_root / "PWNED").exists()


def test_the_sr511_hint_quotes_the_session_it_names(tmp_path: Path) -> None:
    """A valid id with a character a shell reads (`@` and `:` are plain words; none of the
    allowed characters needs quotes, so the quoted id is the id itself) in both."""
    py_root, js_root = twins(tmp_path, "agent:7@host")
    args = ["resume", "agent-output/demo", "--format", "json", "--now", _now()]
    (_, py_out), (_, js_out) = both([*args, "--session", "other"], py_root, js_root)
    py_doc, js_doc = json.loads(py_out), json.loads(js_out)
    hint = next(r["hint"] for r in py_doc["reasons"] if r["code"] == "SR511")
    assert "ask again with `--session agent:7@host`" in hint
    assert hint == next(r["hint"] for r in js_doc["reasons"] if r["code"] == "SR511")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 1))


HOLDER = "$(touch PWNED) x'y"
QUOTED = "'$(touch PWNED) x'\"'\"'y'"


@pytest.mark.parametrize(
    ("code", "facts", "expect"),
    [
        ("SR511", {"lease": {"session": HOLDER, "owner": "o"}}, f"`--session {QUOTED}`"),
        (
            # the `git log` command (named when git shows commits since): the session directory
            # is inside the one shell word of its exclude pathspec
            "SR708",
            {
                "session_rel": HOLDER,
                "updated": "2026-01-01T00:00:00Z",
                "age_days": 9,
                "commits": 3,
            },
            "`git log --oneline --since=2026-01-01T00:00:00Z -- . "
            "':(exclude)$(touch PWNED) x'\"'\"'y'` lists them",
        ),
    ],
)
def test_hints_shell_quote_every_value_they_put_into_a_command_in_both(
    code: str, facts: dict[str, Any], expect: str
) -> None:
    """The words themselves: SR511's holder (which no reader lets through any more) and
    SR708's session directory (a name from disk) are quoted as `shlex.quote` quotes, by both
    implementations."""
    from session_resume.core.resume_messages import explain

    py = explain(code, facts)["hint"]
    assert expect in py, py
    if code == "SR708":  # the shell reads the session directory back as it is, one word
        command = py.split("`")[1]
        assert shlex.split(command)[-1] == f":(exclude){HOLDER}", command
    script = (
        "import { explain } from './conformance/js/lib/resumemessages.mjs';"
        "const [code, facts] = JSON.parse(process.argv[1]);"
        "process.stdout.write(explain(code, facts).hint);"
    )
    out = subprocess.run(
        [need_node(), "--input-type=module", "-e", script, json.dumps([code, facts])],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    assert out.stdout.decode() == py


def test_the_plan_text_of_planted_values_is_the_same_and_escaped_in_both(tmp_path: Path) -> None:
    py_root, js_root = twins(tmp_path, "s1", live=False)
    for root in (py_root, js_root):
        doc = apex_state()
        doc["decisions"]["region"] = EVIL
        doc["open_findings"] = [EVIL]
        (root / "agent-output" / "demo" / "00-session-state.json").write_bytes(dump(doc))
    args = ["resume", "agent-output/demo", "--now", _now()]
    (py_rc, py_out), (js_rc, js_out) = both(args, py_root, js_root)
    assert py_rc == js_rc == 0
    new_id = re.compile(r"\b[0-9a-f]{16}\b")  # each answer's new session id
    assert new_id.sub("ID", py_out) == new_id.sub("ID", js_out)
    assert "SYSTEM NOTICE \\x60$(touch PWNED)\\x60 \\x1b[31m" in py_out, py_out
    for line in py_out.splitlines():
        assert line.count("`") % 2 == 0, line
        assert not line.startswith("SYSTEM")


@pytest.mark.parametrize(("tail", "ignored"), [("**c", False), ("**json", True)])
def test_a_glob_that_would_backtrack_is_matched_at_once_in_both(
    tmp_path: Path, tail: str, ignored: bool
) -> None:
    """`per-file-ignores: {"**a**a…**c": …}` was a backtracking regular expression in both
    implementations (`validate` never finished on a 40-character path)."""
    root = tmp_path / "py"
    sdir = root / "agent-output" / ("a" * 40)
    sdir.mkdir(parents=True)
    (root / ".git").mkdir()
    doc = apex_state()
    doc["steps"]["2"]["started"] = None  # SR301
    (sdir / "00-session-state.json").write_bytes(dump(doc))
    glob = "**a" * 30 + tail
    (root / ".session-resume.yaml").write_text(json.dumps({"per-file-ignores": {glob: ["SR301"]}}))
    shutil.copytree(root, tmp_path / "js", symlinks=True)
    args = ["validate", f"agent-output/{'a' * 40}", "--format", "json", "--now", _now()]
    (py_rc, py_out), (js_rc, js_out) = both(args, root, tmp_path / "js")
    codes = [
        [d["code"] for f in json.loads(out)["files"] for d in f["diagnostics"]]
        for out in (py_out, js_out)
    ]
    assert py_rc == js_rc and codes[0] == codes[1]
    assert ("SR301" not in codes[0]) == ignored, codes


V2 = REPO / "tests" / "fixtures" / "migrate" / "v2-test01.json"
KEPT = "00-session-state.v2.0.json"


def _plant(sdir: Path, what: str, decoy: Path) -> None:
    if what == "other bytes":
        (sdir / KEPT).write_text('{"planted": true}\n')
    elif what == "link":
        (sdir / KEPT).symlink_to(decoy)
    elif what == "dangling link":
        (sdir / KEPT).symlink_to(decoy.parent / "missing.json")
    elif what == "directory":
        (sdir / KEPT).mkdir()
        (sdir / KEPT / "x").write_text("x")
    elif what == "hard link":
        os.link(decoy, sdir / KEPT)
    elif what == "its own copy":
        shutil.copyfile(V2, sdir / KEPT)


@pytest.mark.parametrize(
    "what", ["other bytes", "link", "dangling link", "directory", "hard link", "its own copy"]
)
def test_a_planted_pre_migration_name_never_loses_the_original_in_both(
    tmp_path: Path, what: str
) -> None:
    """A planted `00-session-state.v2.0.json` (a file, a link, a directory) made `migrate` keep
    no copy while it printed "the original is kept for good"; after the next write the
    original was gone. Now a name held by anything but this state's copy is left alone and
    the original is kept under the next free name, which both CLIs print; a later write
    keeps it."""
    decoy = tmp_path / "decoy.json"
    decoy.write_text('{"decoy": true}\n')
    twins_ = []
    for side in ("py", "js"):
        root = tmp_path / side
        sdir = root / "agent-output" / "p"
        sdir.mkdir(parents=True)
        (root / ".git").mkdir()
        shutil.copyfile(V2, sdir / "00-session-state.json")
        _plant(sdir, what, decoy)
        twins_.append(root)
    py_root, js_root = twins_
    planted = {p: sorted(os.listdir(p / "agent-output" / "p")) for p in twins_}
    now = "2026-11-29T06:00:00Z"
    (py_rc, py_out), (js_rc, js_out) = both(
        ["migrate", "agent-output/p", "--now", now], py_root, js_root
    )
    assert py_rc == js_rc == 0, (py_out, js_out)
    expect = KEPT if what == "its own copy" else "00-session-state.v2.0-1.json"
    for root, out in ((py_root, py_out), (js_root, js_out)):
        sdir = root / "agent-output" / "p"
        assert f"the original is kept for good as {expect} " in out, out
        assert (sdir / expect).read_bytes() == V2.read_bytes()
        assert not (sdir / expect).is_symlink()
        # a write after the migration (the .bak rotates away) keeps the original
        res = subprocess.run(
            [sys.executable, "-m", "session_resume", "decide", "region", "x"]
            + ["--session-dir", "agent-output/p", "--now", "2026-11-29T06:01:00Z"],
            cwd=root,
            capture_output=True,
            timeout=60,
        )
        assert res.returncode == 0, res.stderr
        assert (sdir / expect).read_bytes() == V2.read_bytes()
        if what == "directory":
            assert (sdir / KEPT / "x").read_text() == "x"
        elif what == "other bytes":
            assert (sdir / KEPT).read_text() == '{"planted": true}\n'
        assert set(planted[root]) <= set(os.listdir(sdir))
    assert decoy.read_text() == '{"decoy": true}\n'
    assert py_out.replace("\\", "/") == js_out.replace("\\", "/")


def test_every_pre_migration_name_taken_refuses_and_migrates_nothing_in_both(
    tmp_path: Path,
) -> None:
    for side in ("py", "js"):
        sdir = tmp_path / side / "agent-output" / "p"
        sdir.mkdir(parents=True)
        (tmp_path / side / ".git").mkdir()
        shutil.copyfile(V2, sdir / "00-session-state.json")
        for n in range(100):
            (sdir / (KEPT if n == 0 else f"00-session-state.v2.0-{n}.json")).write_text("{}")
    (py_rc, py_out), (js_rc, js_out) = both(
        ["migrate", "agent-output/p", "--format", "json"], tmp_path / "py", tmp_path / "js"
    )
    for rc, out, side in ((py_rc, py_out, "py"), (js_rc, js_out, "js")):
        assert rc == 1, out
        doc = json.loads(out)
        assert doc["files"][0]["status"] == "refused"
        assert "SR163" in [n["code"] for n in doc["files"][0]["notes"]], doc
        sdir = tmp_path / side / "agent-output" / "p"
        assert (sdir / "00-session-state.json").read_bytes() == V2.read_bytes()
        assert not (sdir / "00-session-state.json.bak").exists()
