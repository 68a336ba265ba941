"""Issue 14: no command leads into a dead end, migration is lossless and its dry run is exact.

- Every state of the conformance suite and of the upstream corpus is walked from ``resume``:
  the suggested command is run, and when a command refuses, the command its refusal names is
  run next. Within 3 hops the walk must reach a usable state whose suggested command succeeds
  (or that suggests none), or an explicit stop (docs/spec.md §9.5).
- A Hypothesis property over generated 1.0 and 2.0 states: every input value is in the
  migrated output, and the dry-run patch applied to the file is what ``migrate`` writes with
  the same ``--now`` (docs/spec.md §9.2, §9.3).
- A missing path is SR100 and exit 2 in every command that takes one, with a JSON document on
  stdout under ``--format json`` (docs/spec.md §5); ``recover`` creates nothing for it.

The walk calls the CLI entry point in-process (hundreds of states, a few commands each); the
missing-path and recover checks run real subprocesses.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_resume.cli.main import main
from session_resume.core.migration import MigrationError, migrate
from session_resume.core.timeutil import parse_now
from session_resume.storage import state_repair, store

# Test tier (README "Test tiers"): every suggested command, run (465 CLI processes).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
UPSTREAM = REPO / "tests" / "fixtures" / "upstream"
NOW = "2026-11-22T12:00:00Z"

_spec = importlib.util.spec_from_file_location("upstream_corpus_tool", UPSTREAM / "corpus_tool.py")
assert _spec and _spec.loader
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

STOPS = {"refuse_newer_version", "session_active"}
SUGGESTED = re.compile(r"`(session-resume [^`]+)`")


def _states() -> list[Any]:
    """(id, files) for every distinct session directory content with a state or .bak."""
    seen: set[str] = set()
    out: list[Any] = []

    def add(name: str, files: dict[str, bytes]) -> None:
        key = hashlib.sha256(json.dumps(sorted((k, v.hex()) for k, v in files.items())).encode())
        if key.hexdigest() in seen:
            return
        seen.add(key.hexdigest())
        out.append(pytest.param(files, id=name))

    for f in sorted(UPSTREAM.glob("*.json")):
        if f.name != "MANIFEST.json":
            add(f"upstream/{f.stem}", {store.STATE: f.read_bytes()})
    for case in sorted((REPO / "conformance" / "cases").glob("*/*/case.yaml")):
        files_dir = case.parent / "files"
        if "setup:" in case.read_text(encoding="utf-8") or not files_dir.is_dir():
            continue  # links, pipes, directories: what the runner creates, not state content
        files = {p.name: p.read_bytes() for p in files_dir.iterdir() if p.is_file()}
        if store.STATE in files or store.BAK in files:
            add(f"{case.parent.parent.name}/{case.parent.name}", files)
    return out


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue() + err.getvalue()


def _argv(command: str, sdir: Path, root: Path) -> list[str]:
    words = shlex.split(command)
    assert words[0] == "session-resume", command
    words = [str(sdir) if w == "DIR" else (sdir.name if w == "PROJECT" else w) for w in words[1:]]
    writes = ("init", "start", "checkpoint", "complete")
    if words[0] in writes and "--session-dir" not in words and "--project" not in words:
        words += ["--session-dir", str(sdir)]
    return [*words, "--root", str(root), "--now", NOW]


def _walk(sdir: Path, root: Path) -> list[str]:
    """Follow the suggestions from ``resume``; returns the trail (asserting on a dead end)."""
    trail: list[str] = []
    for _hop in range(4):
        rc, out = _run(["resume", str(sdir), "--format", "json", "--root", str(root), "--now", NOW])
        if rc == 2 and re.search(r'"code": "SR40[0-9]"', out):
            trail.append("stop:workflow-definition")  # the workflow file, not the state
            return trail
        assert rc in (0, 1), (trail, out)
        dec = json.loads(out[: out.rindex("}") + 1])
        action = dec["action"]
        commands = [c["run"] for c in dec.get("commands") or []]  # each {run, when}
        trail.append(f"resume:{action}")
        if action in STOPS:
            return trail
        if action == "invalid_state" and commands[0].split()[1] == "validate":
            # a stop only when nothing repairs the file: migrate must refuse it too
            rc, out = _run(["migrate", str(sdir), "--root", str(root), "--now", NOW])
            assert rc != 0, (trail, "migrate repairs it, but resume points at validate", out)
            trail.append("stop:fix-by-hand")
            return trail
        if not commands:
            assert action in ("workflow_complete", "next_step"), (trail, dec)
            return trail
        command = commands[0]
        for _ in range(3):  # a refusal names the next command
            rc, out = _run(_argv(command, sdir, root))
            trail.append(f"{command.split()[1]}:{rc}")
            if rc == 0:
                break
            named = [c for c in SUGGESTED.findall(out) if c.split()[:2] != command.split()[:2]]
            named += [c for c in SUGGESTED.findall(out) if "--salvage" in c]
            if not named and command.split()[1] in ("migrate", "validate"):
                # nothing repairs it (steps a list, no version string, ...): the refusal
                # names each problem and where it is, to fix by hand -- an explicit stop
                assert re.search(r"SR(152|14[12]|2[0-9][0-9])", out), (trail, out[:2000])
                assert "[/" in out or "SR14" in out, (trail, "no pointer", out[:2000])
                trail.append("stop:fix-by-hand")
                return trail
            assert named, (trail, "a refusal that names no next command", out[:2000])
            command = named[0]
            if command.split()[1] == "validate":
                # "fix it by hand; validate lists the problems": a stop when migrate cannot
                # repair the file (else the refusal should have named migrate)
                rc, out = _run(["migrate", str(sdir), "--check", "--root", str(root), "--now", NOW])
                assert rc != 0 or "already current" in out, (trail, out)
                rc2, _ = _run(
                    ["migrate", str(sdir), "--dry-run", "--root", str(root), "--now", NOW]
                )
                assert rc2 != 0 or "already current" in out, (trail, "migrate would repair it")
                trail.append("stop:fix-by-hand")
                return trail
        else:
            pytest.fail(f"no way out: {trail}")
        if action not in ("migrate_first", "invalid_state", "needs_recovery", "fresh_start"):
            return trail  # the usable state's suggested command succeeded
    pytest.fail(f"more than 3 hops: {trail}")


@pytest.mark.parametrize("files", _states())
def test_suggested_commands_lead_somewhere(
    files: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    sdir = root / "agent-output" / "demo"
    sdir.mkdir(parents=True)
    for name, data in files.items():
        (sdir / name).write_bytes(data)
    monkeypatch.chdir(root)
    trail = _walk(sdir, root)
    assert trail


# --- lossless, and the dry run is what is written --------------------------------------------

_TS = st.sampled_from(
    ["2026-02-27T10:00:00Z", "2026-03-01T08:30:00Z", "2026-01-05T00:00:00+02:00", "", None]
)
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)


@st.composite
def old_states(draw: st.DrawFn) -> dict[str, Any]:
    version = draw(st.sampled_from(["1.0", "2.0"]))
    keys = draw(st.lists(st.sampled_from(["1", "2", "3", "3.5", "4", "4a"]), unique=True))
    steps: dict[str, Any] = {}
    for k in sorted(keys, key=lambda k: corpus_key(k)):
        step: dict[str, Any] = {
            "name": draw(_TEXT),
            "status": draw(st.sampled_from(["pending", "in_progress", "complete", "skipped"])),
            "sub_step": draw(st.one_of(st.none(), st.sampled_from(["phase_1", "approval"]))),
            "started": draw(_TS),
            "completed": draw(_TS),
            "artifacts": draw(st.lists(st.sampled_from(["a.md", "b/c.md"]), max_size=2)),
        }
        if version == "2.0" and draw(st.booleans()):
            step["claim"] = {"owner_id": draw(st.one_of(st.none(), _TEXT)), "retry_count": 0}
        steps[k] = step
    doc: dict[str, Any] = {
        "schema_version": version,
        "project": "demo",
        "updated": draw(_TS),
        "current_step": draw(st.one_of(st.integers(0, 8), st.sampled_from([2.0, 3.5, "3.5"]))),
        "steps": steps,
        "decisions": {"complexity": draw(st.sampled_from(["low", "standard", "high"]))},
        "open_findings": draw(st.lists(_TEXT, max_size=2)),
        "decision_log": [
            {
                "decision": draw(_TEXT),
                "rationale": draw(_TEXT),
                "step": draw(st.sampled_from([2, 3.5, "3.5"])),
            }
            for _ in range(draw(st.integers(0, 2)))
        ],
        "review_audit": {
            "step_2": {
                "skipped": draw(
                    st.lists(st.sampled_from(["pass_3", "2", "challenger-review", 1]), max_size=3)
                )
            }
        },
    }
    if draw(st.booleans()):
        doc["x-note"] = draw(_TEXT)
    return doc


def corpus_key(k: str) -> tuple[int, str]:
    return int(re.match(r"[0-9]+", k).group(0)), k  # type: ignore[union-attr]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(doc=old_states(), salvage=st.booleans())
def test_migration_is_lossless_and_its_dry_run_exact(
    doc: dict[str, Any], salvage: bool, tmp_path: Path
) -> None:
    now = parse_now(NOW)
    try:
        res = migrate(doc, now=now, project_hint="demo", salvage=salvage)
    except MigrationError as exc:
        # only contradictions are refused, and only without --salvage
        assert not salvage, exc.diagnostics
        assert all("--salvage" in d.message for d in exc.diagnostics), exc.diagnostics
        return
    assert corpus.lost_values(doc, res.document) == []
    sdir = tmp_path / f"s{abs(hash(json.dumps(doc, sort_keys=True)))}-{salvage}" / "demo"
    sdir.mkdir(parents=True)
    (sdir / store.STATE).write_bytes(store.serialize(doc))
    dry = state_repair.migrate_session(sdir, now=now, write=False, salvage=salvage)
    real = state_repair.migrate_session(sdir, now=now, write=True, salvage=salvage)
    assert real.status == "migrated", real.notes
    written = json.loads((sdir / store.STATE).read_text(encoding="utf-8"))
    assert jsonpatch.apply_patch(doc, dry.patch) == written
    shutil.rmtree(sdir.parent)


# --- missing paths and recover ---------------------------------------------------------------

MISSING = [
    ["validate", "nope"],
    ["migrate", "nope"],
    ["recover", "nope"],
    ["resume", "nope"],
    ["report", "nope"],
    ["archive", "nope"],
    ["render", "handoff", "nope"],
    ["budget", "1", "--session-dir", "nope"],
    ["start", "1", "--session-dir", "nope"],
]


def _cli(*args: str, cwd: Path) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "session_resume", *args], cwd=cwd, capture_output=True, timeout=120
    )
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.mark.parametrize("argv", MISSING, ids=lambda a: " ".join(a))
def test_a_missing_path_is_sr100_and_exit_2(argv: list[str], tmp_path: Path) -> None:
    rc, out, err = _cli(*argv, cwd=tmp_path)
    assert rc == 2, (out, err)
    assert "SR100" in err
    rc, out, err = _cli(*argv, "--format", "json", cwd=tmp_path)
    assert rc == 2, (out, err)
    doc = json.loads(out)
    if argv[0] == "validate":  # validate's own report, marked refused (issue 27 point 7)
        assert doc["valid"] is False and doc["error"]
        diags = [d for f in doc["files"] for d in f["diagnostics"]]
    else:
        diags = doc["diagnostics"]
    assert [d["code"] for d in diags] == ["SR100"]
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing created


def test_recover_migrates_an_older_bak(tmp_path: Path) -> None:
    """What migrate leaves behind (a 2.0 .bak) restores a torn state at step 4, not a fresh
    one with every step pending."""
    root = tmp_path
    (root / ".git").mkdir()
    src = UPSTREAM / "nordic-fresh-foods--8317c72c9b.json"
    sdir = root / "agent-output" / "test01"
    sdir.mkdir(parents=True)
    (sdir / store.STATE).write_bytes(b"")
    (sdir / store.BAK).write_bytes((UPSTREAM / "test01--45e0bf4761.json").read_bytes())
    assert src.exists()
    rc, out, err = _cli("recover", str(sdir), "--root", str(root), "--now", NOW, cwd=root)
    assert rc == 0, (out, err)
    assert "migrated to" in out and "2.0" in out
    doc = json.loads((sdir / store.STATE).read_text(encoding="utf-8"))
    original = json.loads((UPSTREAM / "test01--45e0bf4761.json").read_text(encoding="utf-8"))
    assert doc["steps"]["1"]["status"] == original["steps"]["1"]["status"] == "complete"
    rc, out, err = _cli("validate", str(sdir / store.STATE), "--root", str(root), cwd=root)
    assert rc == 0, (out, err)


def test_recover_says_why_a_bak_is_unusable(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sdir = tmp_path / "agent-output" / "demo"
    sdir.mkdir(parents=True)
    (sdir / store.STATE).write_bytes(b"")
    (sdir / store.BAK).write_bytes(b'{"schema_version": "1.0", "project": "demo", "steps": []}')
    rc, out, err = _cli("recover", str(sdir), "--root", str(tmp_path), "--now", NOW, cwd=tmp_path)
    assert rc == 0, (out, err)
    assert "the .bak is not usable" in out and "SR152" in out
