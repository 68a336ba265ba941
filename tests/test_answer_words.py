"""Three words of the resume answer that fresh-agent review 4 found misleading when read
literally: a decision whose value is the string "None" read as unset; SR708's `git log` hint
failed in a repository with no commits (now the tool counts the commits itself); an optional
step's skip said a `session start` "the commands begin with" comes first when they began with
none."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

from conftest import apex_state, dump, run_cli

NOW = ("--now", "2026-03-20T12:00:00Z")  # 18 days after the state's last update


def _repo(tmp_path: Path, doc: dict[str, Any]) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    d = tmp_path / "agent-output" / "demo"
    d.mkdir(parents=True)
    (d / "01-requirements.md").write_text("# r\n")
    (d / "02-architecture-assessment.md").write_text("# a\n")
    (d / "00-session-state.json").write_bytes(dump(doc))
    return d


def _resume(repo: Path, *argv: str, fmt: str = "json") -> Any:
    proc = run_cli("resume", "agent-output/demo", *argv, "--format", fmt, *NOW, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if fmt == "json" else proc.stdout


def test_a_decision_valued_none_reads_as_a_string(tmp_path: Path) -> None:
    doc = apex_state()
    assert doc["decisions"]["compliance"] == "None"  # the user's literal answer
    _repo(tmp_path, doc)
    text = _resume(tmp_path, fmt="text")
    assert 'compliance="None"' in text and "compliance=None" not in text
    assert "region=swedencentral" in text  # a plain word stays bare


def test_the_stale_state_counts_commits_outside_the_session_and_asks_first(
    tmp_path: Path,
) -> None:
    """SR708 says what git shows, counted by the tool (read-only): no history is an unknown,
    the commit of the session's own files is no sign the project moved on ("no other
    commit" is a finding too), and a commit outside it is counted, with a `git log` that
    runs as printed and lists exactly it."""
    _repo(tmp_path, apex_state())
    (w,) = [w for w in _resume(tmp_path)["warnings"] if w["code"] == "SR708"]
    assert w["hint"].startswith("ask the user whether the work is still wanted")
    assert "no git history here tells whether the project moved on" in w["message"]
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    for argv in (["add", "-A"], [*who, "commit", "-qm", "session files"]):
        subprocess.run(["git", *argv], cwd=tmp_path, check=True)
    (w,) = [w for w in _resume(tmp_path)["warnings"] if w["code"] == "SR708"]
    assert "git shows no other commit since then outside agent-output/demo" in w["message"]
    assert "git log" not in w["hint"]
    (tmp_path / "app.py").write_text("x\n")
    for argv in (["add", "app.py"], [*who, "commit", "-qm", "app"]):
        subprocess.run(["git", *argv], cwd=tmp_path, check=True)
    (w,) = [w for w in _resume(tmp_path)["warnings"] if w["code"] == "SR708"]
    assert "git shows 1 commit since then outside agent-output/demo" in w["message"]
    git = w["hint"].split("`")[1]
    proc = subprocess.run(shlex.split(git), cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.count("\n") == 1, proc.stdout + proc.stderr
    assert proc.stdout.split(maxsplit=1)[1] == "app\n"


def test_the_skip_alternative_names_the_session_start_only_when_the_commands_hold_one(
    tmp_path: Path,
) -> None:
    doc = apex_state()
    doc["steps"]["2"].update(status="complete", completed="2026-03-02T10:30:00Z")
    doc["decisions"]["complexity"] = "standard"
    _repo(tmp_path, doc)
    ans = _resume(tmp_path, "--step", "3")
    assert ans["commands"][0]["run"].startswith("session-resume session start ")
    alt, pause = ans["alternatives"]  # skip the optional step, or pause once working on it
    assert alt["when"].endswith(", after the first command (`session start`)"), alt
    assert pause["run"].startswith("session-resume session end --reason paused "), pause
    # the session taken (as that first command does), the list begins with no session start
    assert run_cli(*shlex.split(ans["commands"][0]["run"])[1:], *NOW, cwd=tmp_path).returncode == 0
    sid = ans["session"]["id"]
    again = _resume(tmp_path, "--step", "3", "--session", sid)
    assert not again["commands"][0]["run"].startswith("session-resume session start")
    alt, _pause = again["alternatives"]
    assert "session start" not in alt["when"], alt


def test_an_optional_step_s_start_waits_for_the_user_s_choice_and_the_tier_says_use_it(
    tmp_path: Path,
) -> None:
    """Fresh-agent review 5: nothing said to ask before running an optional step, and the
    review audit's printed tier looked like a guess while undecided."""
    doc = apex_state()
    doc["steps"]["2"].update(status="complete", completed="2026-03-02T10:30:00Z")
    _repo(tmp_path, doc)
    start = next(c for c in _resume(tmp_path, "--step", "3")["commands"] if " start 3" in c["run"])
    assert start["when"].endswith(
        ", and the user chose to run this optional step rather than skip it (ask once)"
    ), start
    mid = apex_state()  # step 2 at phase_2_waf, complexity not decided
    (tmp_path / "agent-output" / "demo" / "00-session-state.json").write_bytes(dump(mid))
    audit = next(c for c in _resume(tmp_path)["commands"] if " review-audit " in c["run"])
    assert "--complexity standard" in audit["run"]
    assert audit["when"].endswith(
        "(tier standard until Gate 2.5 decides complexity: use it as printed)"
    ), audit


def test_printed_writers_name_the_session_as_a_writer_resolves_it(tmp_path: Path) -> None:
    """A configured workflow keeps its sessions elsewhere (dotagent: memory/PROJECT) while the
    state read is an apex one in agent-output/demo: `--project demo` would name memory/demo,
    so the printed writers name the directory; followed as printed, they write this session."""
    d = _repo(tmp_path, apex_state())
    # unconfigured, the built-in workflow whose directory holds the session: --project
    assert " --project demo " in _resume(tmp_path)["commands"][0]["run"] + " "
    (tmp_path / ".session-resume.yaml").write_text("workflow: dotagent\n")
    ans = _resume(tmp_path, "--workflow", "apex")
    first = ans["commands"][0]["run"]
    assert first.startswith("session-resume session start --session-dir "), first
    assert "--project" not in first
    proc = run_cli(*shlex.split(first)[1:], *NOW, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (d / "00-session.active").is_file()
    assert not (tmp_path / "memory").exists()


def test_the_text_answer_says_what_an_orphan_may_have_left_incomplete(tmp_path: Path) -> None:
    """Fresh-agent review 7: SR512 said "check `orphan.possibly_incomplete` first", a JSON
    field the text answer did not show when it was empty; the agent asked again in JSON
    (7 KB more) to learn it was empty. The text says it, and the hint names the text."""
    _repo(tmp_path, apex_state())
    old = "2026-03-20T10:00:00Z"  # two hours before NOW: the lease is stale
    argv = ("session", "start", "--project", "demo", "--session", "crashed-1", "--now", old)
    assert run_cli(*argv, cwd=tmp_path).returncode == 0
    text = _resume(tmp_path, fmt="text")
    assert "orphaned session crashed-1" in text
    assert "\n  possibly incomplete: none\n" in text
    (w,) = [w for w in _resume(tmp_path)["warnings"] if w["code"] == "SR512"]
    assert "`possibly incomplete`; none listed: nothing to check" in w["hint"]


def test_sr512_of_the_callers_own_stale_lease_says_renew_not_takeover(tmp_path: Path) -> None:
    """Review 9 (s7): the agent named its own session after a compaction, and SR512 said "the
    first write takes it over (logged)"; no takeover happens (the write renews the lease, no
    `takeover` event). Another session's stale lease still says takeover, and one is logged."""
    _repo(tmp_path, apex_state())
    p = ("--project", "demo")
    start = ("session", "start", *p, "--now", "2026-03-20T10:00:00Z")
    assert run_cli(*start, "--session", "mine", cwd=tmp_path).returncode == 0
    own = _resume(tmp_path, "--step", "2", "--session", "mine")
    (w,) = [w for w in own["warnings"] if w["code"] == "SR512"]
    assert w["hint"].startswith("it is the session you named: your first write renews its")
    other = _resume(tmp_path, "--step", "2", "--session", "other")
    (w,) = [w for w in other["warnings"] if w["code"] == "SR512"]
    assert w["hint"].startswith("the first write takes it over (logged)")
    d = tmp_path / "agent-output" / "demo"

    def events() -> list[str]:
        return [json.loads(x)["event"] for x in (d / "00-worklog.jsonl").read_text().splitlines()]

    before = len(events())
    cp = ("checkpoint", "2", "phase_3_cost", *p, *NOW)
    assert run_cli(*cp, "--session", "mine", cwd=tmp_path).returncode == 0
    assert "takeover" not in events()[before:], events()[before:]
    cp4 = ("checkpoint", "2", "phase_4_challenger", *p, "--now", "2026-03-20T13:00:00Z")
    assert run_cli(*cp4, "--session", "other", cwd=tmp_path).returncode == 0
    assert "takeover" in events()[before:], events()[before:]


def test_a_recovery_answer_names_the_directory_as_the_user_typed_it(tmp_path: Path) -> None:
    """Review 9 (s2): asked with `resume agent-output/demo`, the needs_recovery answer printed
    `recover /tmp/.../agent-output/demo` (the service fills DIR with the absolute path) where
    every other command names the session as the user did. Now the typed form, as printed
    from where the user stands, and the printed command runs."""
    d = _repo(tmp_path, apex_state())
    (d / "00-session-state.json.bak").write_bytes((d / "00-session-state.json").read_bytes())
    (d / "00-session-state.json").write_bytes(b'{"schema_version": "3.0", "proj')
    (tmp_path / "sub").mkdir()
    for cwd, typed in ((tmp_path, "agent-output/demo"), (tmp_path / "sub", "../agent-output/demo")):
        proc = run_cli("resume", typed, "--step", "2", *NOW, "--format", "json", cwd=cwd)
        runs = [c["run"] for c in json.loads(proc.stdout)["commands"]]
        assert runs == [
            f"session-resume recover {typed}",
            f"session-resume resume {typed} --step 2 --format json",
        ], runs
        assert str(tmp_path) not in run_cli("resume", typed, *NOW, cwd=cwd).stdout
    done = run_cli(*shlex.split("session-resume recover agent-output/demo")[1:], cwd=tmp_path)
    assert done.returncode == 0 and "restored" in done.stdout, done.stdout + done.stderr


def test_the_plan_says_a_gate_decision_needs_no_write_and_how_a_finding_is_recorded(
    tmp_path: Path,
) -> None:
    """Review 9 (s1, s6): "decide architecture_pattern (free text); now "web app"" left open
    whether approving the gate as proposed needs a `decide` write, and the findings rule did
    not say how a must-fix finding is recorded. Both now say it, in the text and the JSON."""
    _repo(tmp_path, apex_state())
    text = _resume(tmp_path, "--step", "2", fmt="text")
    assert 'decide architecture_pattern (free text); now "web app" (keep unless the user ' in text
    rule = _resume(tmp_path, "--step", "2")["plan"]["open_findings"]["rule"]
    assert rule.startswith("add each (`finding add TITLE`); fix each, then `finding resolve")
    assert "add each (`finding add TITLE`)" in text
