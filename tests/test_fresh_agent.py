"""Issue 12: a fresh agent resumes from the CLI alone. The lease never blocks its own user
(an implicit lease is adopted), and a scripted agent acts only on `resume --format json`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from session_resume.storage import lease_file as sentinel
from session_resume.storage import worklog

from conftest import run_cli

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


class Shell:
    """A stateless agent shell: no environment variable survives between calls."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.now = T0

    def run(self, *args: str, ok: bool = True) -> Any:
        self.now += timedelta(minutes=1)
        res = run_cli(
            *args,
            "--now",
            _ts(self.now),
            cwd=self.repo,
            env={"SESSION_RESUME_SESSION": "", "USER": "tester"},
        )
        if ok:
            assert res.returncode == 0, res.stdout + res.stderr
        return res


def _events(d: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (d / worklog.WORKLOG).read_text().splitlines() if x.strip()]


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / ".git").mkdir()
    return tmp_path, tmp_path / "agent-output" / "demo"


def test_init_then_session_start_adopts_the_implicit_lease(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    sh.run("init", "demo")
    implicit = json.loads((d / sentinel.SENTINEL).read_text())
    assert implicit["implicit"] is True
    res = sh.run("session", "start", "--project", "demo")
    sid = res.stdout.strip()
    assert sid == implicit["session"]
    assert "adopted" in res.stderr
    lease = json.loads((d / sentinel.SENTINEL).read_text())
    assert "implicit" not in lease and lease["session"] == sid
    start = [e for e in _events(d) if e["event"] == "session_start"]
    assert start[-1]["detail"]["adopted"] == sid
    # a write with no session goes on under it and says so
    res = sh.run("start", "1", "--project", "demo")
    assert f"session {sid}" in res.stdout


def test_session_start_with_an_id_adopts_and_renames(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    sh.run("init", "demo")
    old = json.loads((d / sentinel.SENTINEL).read_text())["session"]
    res = sh.run("session", "start", "--project", "demo", "--session", "agent-7")
    assert res.stdout.strip() == "agent-7"
    assert json.loads((d / sentinel.SENTINEL).read_text())["session"] == "agent-7"
    res = sh.run("start", "1", "--project", "demo", "--session", "agent-7")
    assert "session agent-7" in res.stdout
    assert any(e.get("detail", {}).get("adopted") == old for e in _events(d))


def test_session_start_then_init_and_writes_without_session(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    sid = sh.run("session", "start", "--project", "demo").stdout.strip()
    sh.run("init", "demo")
    res = sh.run("start", "1", "--project", "demo")
    assert f"session {sid}" in res.stdout
    assert json.loads((d / sentinel.SENTINEL).read_text())["session"] == sid


def test_writes_without_session_start_never_refuse_themselves(tmp_path: Path) -> None:
    repo, _d = _repo(tmp_path)
    sh = Shell(repo)
    sh.run("init", "demo")
    sh.run("start", "1", "--project", "demo")
    sh.run("checkpoint", "1", "phase_1_discovery", "--project", "demo")
    res = sh.run("report", "agent-output/demo")
    assert "SR511" not in res.stdout + res.stderr


def test_another_live_explicit_session_is_still_refused(tmp_path: Path) -> None:
    repo, _d = _repo(tmp_path)
    sh = Shell(repo)
    sh.run("init", "demo")
    sh.run("session", "start", "--project", "demo", "--session", "agent-1")
    res = sh.run("session", "start", "--project", "demo", "--session", "agent-2", ok=False)
    assert res.returncode == 1 and "SR511" in res.stderr
    res = sh.run("start", "1", "--project", "demo", "--session", "agent-2", ok=False)
    assert res.returncode == 1 and "SR511" in res.stderr
    res = sh.run("resume", "agent-output/demo", "--format", "json", "--session", "agent-2")
    assert json.loads(res.stdout)["action"] == "session_active"
