"""Rendered docs: ``00-handoff.md`` (layout, line limit, escaping, the SR6xx checks of
``validate``) and the skill docs (Agent Skills frontmatter, write moments that the real CLI
parser accepts, tables generated from the schema and the workflow YAML, the digest limit)."""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from session_resume.cli.main import build_parser
from session_resume.core.handoff_rules import MAX_LINES, SECTIONS, check_handoff_text
from session_resume.core.plan import WRITERS
from session_resume.core.resume_decision import ACTIONS
from session_resume.core.workflow import BUILTINS, load_workflow
from session_resume.rendering.environment import Escaped, md_inline
from session_resume.rendering.handoff import render_handoff
from session_resume.rendering.skill import ACTION_DOCS, FRONTMATTER_KEYS, render_skill
from session_resume.storage.handoff_file import check_session_handoff

from conftest import REPO, apex_state, dump, run_cli

# Test tier (README "Test tiers"): many CLI processes.
pytestmark = pytest.mark.slow

NOW = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
APEX = load_workflow("apex")
EXAMPLE = REPO / "examples" / "agent-output" / "contoso-portal" / "00-session-state.json"
H2 = [f"## {s}" for s in SECTIONS]


def h2_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("## ")]


def section(text: str, title: str) -> list[str]:
    """The non-empty lines of one H2 section."""
    lines = text.splitlines()
    start = lines.index(f"## {title}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return [ln for ln in lines[start:end] if ln.strip()]


def example_state() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return doc


# --- the handoff: layout -----------------------------------------------------------------------


def test_handoff_of_the_example_session() -> None:
    text = render_handoff(example_state(), APEX, now=datetime(2026, 11, 21, 9, 0, tzinfo=UTC))
    lines = text.splitlines()
    assert lines[0] == "# contoso-portal — Handoff (Step 1 complete)"
    assert lines[2] == "Updated: 2026-11-21T09:00:00Z | IaC: Bicep | Branch: main"
    assert h2_lines(text) == H2
    assert len(lines) <= MAX_LINES
    assert section(text, "Completed Steps")[:3] == [
        "- [x] Step 1 Requirements → agent-output/contoso-portal/01-requirements.md",
        "- [ ] Step 2 Architecture (in progress, last checkpoint phase_2_waf)",
        "- [ ] Step 3 Design",
    ]
    decisions = section(text, "Key Decisions")
    assert "- region: swedencentral" in decisions
    assert "- deployment_strategy: (not decided)" in decisions
    assert "- D001 Data residency: EU only (swedencentral)" in decisions
    assert section(text, "Open Challenger Findings (must_fix only)") == [
        "- No disaster-recovery target stated for the order database"
    ]
    (context,) = section(text, "Context for Next Step")
    assert context.startswith(
        "Resume step 2 (Architecture) after checkpoint phase_2_waf; the next checkpoint is "
        "phase_3_cost."
    )
    assert "agent-output/contoso-portal/01-requirements.md" in context  # a file not to re-read
    assert 1 <= len(re.findall(r"[.:]( |$)", context)) <= 4  # 1-3 sentences
    facts = section(text, "Skill Context")
    assert "- Region: swedencentral" in facts
    assert "- Complexity: standard" in facts
    assert (
        # the state file is no input to open: the resume answer carries it (issue 26 point 4)
        "- Step 2 startup inputs: 01-requirements.md" in facts
    )
    assert section(text, "Artifacts") == [
        "- agent-output/contoso-portal/01-requirements.md",
        "- agent-output/contoso-portal/02-architecture-assessment.md",
    ]


def test_no_complete_step_is_step_0_and_empty_sections_say_none() -> None:
    doc = APEX.template_state("fresh", "2026-03-02T10:00:00Z")
    text = render_handoff(doc, APEX, now=NOW)
    assert text.splitlines()[0] == "# fresh — Handoff (Step 0 complete)"
    assert section(text, "Open Challenger Findings (must_fix only)") == ["None"]
    assert section(text, "Artifacts") == ["None"]
    assert section(text, "Context for Next Step") == [
        "Start step 1 (Requirements): ask `resume` for its plan (it carries the state: never "
        "open 00-session-state.json)."
    ]
    assert "- Step 1 startup inputs: none (the resume answer carries the state)" in section(
        text, "Skill Context"
    )


def test_header_names_the_last_complete_step_in_workflow_order() -> None:
    doc = apex_state()
    doc["steps"]["2"].update(status="complete", sub_step=None, completed="2026-03-02T10:10:00Z")
    doc["steps"]["3"].update(status="skipped", skip_reason="no design needed")
    doc["steps"]["3_5"].update(
        status="complete", started="2026-03-02T10:11:00Z", completed="2026-03-02T10:12:00Z"
    )
    text = render_handoff(doc, APEX, now=NOW)
    assert text.splitlines()[0] == "# demo — Handoff (Step 3_5 complete)"
    assert "- [x] Step 3 Design (skipped: no design needed)" in text.splitlines()


def test_non_apex_workflow_shows_the_workflow_instead_of_iac_and_branch() -> None:
    wf = load_workflow("dotagent")
    doc = wf.template_state("agent-x", "2026-03-02T10:00:00Z")
    text = render_handoff(doc, wf, now=NOW)
    assert text.splitlines()[2] == "Updated: 2026-03-02T11:00:00Z | Workflow: dotagent"
    assert h2_lines(text) == H2


def test_updated_is_never_older_than_the_state() -> None:
    doc = apex_state()  # updated 2026-03-02T10:15:00Z
    early = datetime(2026, 3, 1, tzinfo=UTC)
    assert (
        render_handoff(doc, APEX, now=early)
        .splitlines()[2]
        .startswith("Updated: 2026-03-02T10:15:00Z |")
    )


def _big_generic_state(n_steps: int, n_findings: int, n_decisions: int) -> dict[str, Any]:
    steps = {}
    for i in range(1, n_steps + 1):
        steps[str(i)] = {
            "name": f"Step {i}",
            "agent": "a",
            "status": "complete",
            "sub_step": None,
            "started": "2026-03-02T09:00:00Z",
            "completed": "2026-03-02T09:30:00Z",
            "artifacts": [f"out/{i}/a.md", f"out/{i}/b.md"],
            "context_files_used": [],
        }
    steps[str(n_steps + 1)] = {
        "name": "Last",
        "agent": "a",
        "status": "pending",
        "sub_step": None,
        "started": None,
        "completed": None,
        "artifacts": [],
        "context_files_used": [],
    }
    return {
        "schema_version": "3.0",
        "project": "big",
        "workflow": "generic",
        "updated": "2026-03-02T10:00:00Z",
        "current_step": n_steps,
        "decisions": {f"key{i}": f"value {i}" for i in range(n_decisions)},
        "open_findings": [f"finding {i}" for i in range(n_findings)],
        "steps": steps,
    }


def _shown_and_cut(lines: list[str]) -> tuple[int, int]:
    more = [ln for ln in lines if ln.startswith("- … and ")]
    assert len(more) <= 1 and (not more or more[0] == lines[-1])
    cut = int(re.fullmatch(r"- … and (\d+) more", more[0]).group(1)) if more else 0  # type: ignore[union-attr]
    return len(lines) - len(more), cut


def test_long_lists_are_cut_with_a_count_of_what_was_cut() -> None:
    wf = load_workflow("generic")
    doc = _big_generic_state(n_steps=40, n_findings=30, n_decisions=25)
    text = render_handoff(doc, wf, now=NOW)
    lines = text.splitlines()
    assert len(lines) <= MAX_LINES
    assert h2_lines(text) == H2
    totals = {
        "Completed Steps": 41,
        "Key Decisions": 25,
        "Open Challenger Findings (must_fix only)": 30,
        "Artifacts": 80,
    }
    for title, total in totals.items():
        shown, cut = _shown_and_cut(section(text, title))
        assert cut > 0, title
        assert shown + cut == total, title
        assert shown >= 1
    # the first items are kept, in order
    assert section(text, "Artifacts")[:2] == ["- out/1/a.md", "- out/1/b.md"]


def test_lists_that_fit_are_not_cut() -> None:
    text = render_handoff(_big_generic_state(5, 3, 4), load_workflow("generic"), now=NOW)
    assert "- … and" not in text
    assert len(section(text, "Artifacts")) == 10


# --- the handoff: escaping (property test) --------------------------------------------------------

NASTY = [
    "\n",
    "\r\n",
    "\r",
    "\u2028",
    "\u2029",
    "\x85",
    "\x0b",
    "\x0c",
    "\x00",
    "\u202e",
    "#",
    "## Heading",
    "# H1",
    "|",
    "| a | b |",
    "|---|",
    "`",
    "```",
    "<script>alert(1)</script>",
    "<b>",
    "<!--",
    "-->",
    "[link](x)",
    "![img](y)",
    "[ref]: http://x",
    "<http://x.y>",
    "- item",
    "* item",
    "+ item",
    "> quote",
    "1. one",
    "2) two",
    "*",
    "**",
    "_",
    "__x__",
    "~~",
    "$x$",
    "&amp;",
    "&#60;",
    "&lt;",
    "\\",
    "---",
    "===",
    "  ",
    "\t",
    "x",
    "é",
    "→",
]
adversarial = st.one_of(
    st.text(max_size=30),
    st.sampled_from(NASTY),
    st.lists(st.sampled_from(NASTY), min_size=1, max_size=6).map("".join),
    st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=4)), max_size=6).map("".join),
)


def _with_values(values: list[str]) -> dict[str, Any]:
    (
        project,
        dkey,
        dval,
        region,
        f1,
        f2,
        path,
        name,
        sub,
        ctx,
        title,
        choice,
        iac,
        branch,
        skip_reason,
    ) = values
    doc = apex_state()
    doc["project"] = project
    doc["decisions"][dkey] = dval
    doc["decisions"]["region"] = region
    doc["open_findings"] = [f1, f2]
    doc["steps"]["1"]["artifacts"] = [path]
    doc["steps"]["1"]["name"] = name
    doc["steps"]["2"]["sub_step"] = sub
    doc["steps"]["2"]["context_files_used"] = [ctx]
    doc["steps"]["3"].update(status="skipped", skip_reason=skip_reason)
    doc["decision_log"] = [{"id": "D001", "title": title, "choice": choice, "rationale": "r"}]
    doc["iac_tool"] = iac
    doc["branch"] = branch
    return doc


def _escaped(line: str, i: int) -> bool:
    """Whether line[i] is backslash-escaped (an odd number of backslashes before it)."""
    n = 0
    while i - n - 1 >= 0 and line[i - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _raw_markup(line: str) -> list[str]:
    """Markdown-active characters of ``line`` that are not escaped."""
    bad = []
    for i, ch in enumerate(line):
        if _escaped(line, i) or ch == "\\" and i + 1 < len(line):
            continue
        entity = ch == "&" and re.match(r"&(lt|gt);", line[i:]) is not None
        intraword = 0 < i < len(line) - 1 and line[i - 1].isalnum() and line[i + 1].isalnum()
        if ch in "`[]*|<>$~#" or (ch == "&" and not entity) or (ch == "_" and not intraword):
            bad.append(ch)
    return bad


CONTEXT_STARTS = ("Resume step ", "Start step ", "Restart step ", "Every step ", "The resume ")


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(values=st.lists(adversarial, min_size=15, max_size=15, unique=True))
def test_adversarial_values_cannot_inject_markup(values: list[str]) -> None:
    assume(values[1] not in apex_state()["decisions"] and values[1] != "region")
    doc = _with_values(values)
    text = render_handoff(doc, APEX, now=NOW)
    lines = text.splitlines()
    # exactly the six sections, in order, and the line limit
    assert h2_lines(text) == H2
    assert len(lines) <= MAX_LINES
    # no raw `<` at all (values' `<` become &lt;), so no HTML and no autolink
    assert "<" not in text and ">" not in text
    # the same document with harmless values has the same shape, line for line
    benign = render_handoff(_with_values([f"v{i}" for i in range(15)]), APEX, now=NOW)
    assert len(lines) == len(benign.splitlines())
    assert [ln[:2] for ln in lines] == [ln[:2] for ln in benign.splitlines()]
    # every value is on one line, escaped
    for v in values:
        e = md_inline(v)
        assert "\n" not in e
        if e:
            assert any(e in ln for ln in lines), (v, e)
    # only the template starts lines: no value opens a heading, list item, quote or table
    for ln in lines:
        if not ln:
            continue
        assert ln.startswith(("# ", "## ", "Updated: ", "- ", "None")) or ln.startswith(
            CONTEXT_STARTS
        ), ln
        body = ln
        if ln.startswith(("# ", "## ")):
            body = ln.split(" ", 1)[1]
        if ln.startswith(("- [x] ", "- [ ] ")):
            body = ln[6:]
        if ln.startswith("Updated: "):
            body = ln.replace(" | IaC: ", " ").replace(" | Branch: ", " ")
        assert _raw_markup(body) == [], ln


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a\nb", "a b"),
        ("a\r\n\r\nb", "a b"),
        ("a\u2028b", "a b"),
        ("# title", "\\# title"),
        ("- item", "\\- item"),
        ("+ item", "\\+ item"),
        ("12. item", "12\\. item"),
        ("3) item", "3\\) item"),
        ("> quote", "&gt; quote"),
        ("<script>", "&lt;script&gt;"),
        ("[a](b)", "\\[a\\](b)"),
        ("a | b", "a \\| b"),
        ("`code`", "\\`code\\`"),
        ("*em*", "\\*em\\*"),
        ("_em_", "\\_em\\_"),
        ("phase_2_waf", "phase_2_waf"),
        ("agent-output/demo/01-requirements.md", "agent-output/demo/01-requirements.md"),
        ("R&D", "R\\&D"),
        ("C:\\dir\\", "C:\\\\dir\\\\"),
        ("$5", "\\$5"),
        ("  padded  ", "padded"),
    ],
)
def test_md_inline(value: str, expected: str) -> None:
    assert md_inline(value) == expected


def test_md_inline_cuts_long_values() -> None:
    out = md_inline("x" * 1000)
    assert len(out) <= 300 and out.endswith("…")


def test_templates_cannot_print_an_unescaped_value() -> None:
    from jinja2 import TemplateRuntimeError

    from session_resume.rendering.environment import environment

    template = environment().from_string("{{ value }}")
    with pytest.raises(TemplateRuntimeError, match="escaping filter"):
        template.render(value="raw <b>")
    assert template.render(value=md_inline("<b>")) == "&lt;b&gt;"
    assert isinstance(md_inline("x"), Escaped)


# --- the handoff: validate's checks -----------------------------------------------------------


def _good_handoff() -> str:
    return render_handoff(apex_state(), APEX, now=NOW)


def _codes(text: str, **kw: Any) -> list[str]:
    return [d.code for d in check_handoff_text(text, file="h.md", **kw)]


def test_a_rendered_handoff_passes_its_checks() -> None:
    doc = apex_state()
    from session_resume.core.timeutil import parse_ts

    assert _codes(_good_handoff(), state_updated=parse_ts(doc["updated"]), project="demo") == []
    for wf_id in BUILTINS:
        wf = load_workflow(wf_id)
        text = render_handoff(wf.template_state("p", "2026-03-02T10:00:00Z"), wf, now=NOW)
        assert _codes(text) == []


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (lambda t: t.replace("## Skill Context\n", ""), "SR602"),
        (
            lambda t: (
                t.replace("## Key Decisions", "## TMP")
                .replace("## Artifacts", "## Key Decisions")
                .replace("## TMP", "## Artifacts")
            ),
            "SR603",
        ),
        (lambda t: t + "## Key Decisions\n", "SR603"),
        (lambda t: t + "\n## Next Action\n\nDo it.\n", "SR604"),
        (lambda t: t + "- more\n" * 30, "SR605"),
        (lambda t: t.replace("# demo — Handoff", "# Orchestrator Handoff", 1), "SR601"),
        (lambda t: t.replace("Updated: 2026-03-02T11:00:00Z", "Updated: yesterday"), "SR601"),
    ],
)
def test_each_broken_handoff_gets_its_code(mutate: Any, code: str) -> None:
    assert code in _codes(mutate(_good_handoff()))


def test_stale_and_foreign_handoffs_are_warnings() -> None:
    from session_resume.core.timeutil import parse_ts

    diags = check_handoff_text(
        _good_handoff(),
        file="h.md",
        state_updated=parse_ts("2026-03-02T12:00:00Z"),
        project="other",
    )
    assert sorted((d.code, d.severity.value) for d in diags) == [
        ("SR606", "warning"),
        ("SR607", "warning"),
    ]
    stale = next(d for d in diags if d.code == "SR606")
    assert stale.line == 3


def test_handoff_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "00-handoff.md").write_bytes("# x".encode("utf-16"))
    assert [d.code for d in check_session_handoff(tmp_path)] == ["SR600"]
    assert check_session_handoff(tmp_path / "nothing-here") == []


# --- the handoff: the command -----------------------------------------------------------------


def _write_state(d: Path, doc: dict[str, Any] | None = None) -> None:
    (d / "00-session-state.json").write_bytes(dump(doc if doc is not None else apex_state()))


def test_render_handoff_writes_the_file_atomically(session_dir: Path) -> None:
    _write_state(session_dir)
    target = session_dir / "00-handoff.md"
    target.write_text("old\n", encoding="utf-8")
    old_link = session_dir.parent / "old-handoff-link"
    os.link(target, old_link)  # a second name of the old file's inode
    proc = run_cli(
        "render", "handoff", str(session_dir), "--now", "2026-03-02T11:00:00Z", cwd=session_dir
    )
    assert proc.returncode == 0, proc.stderr
    text = target.read_text(encoding="utf-8")
    assert text == render_handoff(apex_state(), APEX, now=NOW)
    assert f"({len(text.splitlines())} lines)" in proc.stdout
    # replaced by rename, not rewritten in place: the old inode still holds the old text
    assert old_link.read_text(encoding="utf-8") == "old\n"
    assert not [p for p in session_dir.iterdir() if p.name.endswith(".tmp")]


def test_render_handoff_to_stdout_and_json(session_dir: Path) -> None:
    _write_state(session_dir)
    proc = run_cli(
        "render", "handoff", str(session_dir), "--now", "2026-03-02T11:00:00Z", "--out", "-"
    )
    assert proc.returncode == 0
    assert proc.stdout == render_handoff(apex_state(), APEX, now=NOW)
    assert not (session_dir / "00-handoff.md").exists()
    out = session_dir.parent / "elsewhere.md"
    proc = run_cli("render", "handoff", str(session_dir), "--out", str(out), "--format", "json")
    result = json.loads(proc.stdout)
    assert result["ok"] is True and result["path"] == str(out) and out.is_file()


def test_render_handoff_refuses_a_corrupt_state(session_dir: Path) -> None:
    (session_dir / "00-session-state.json").write_bytes(b"")
    proc = run_cli("render", "handoff", str(session_dir))
    assert proc.returncode == 1
    assert "SR110" in proc.stderr
    assert not (session_dir / "00-handoff.md").exists()


def test_validate_reports_a_stale_handoff_after_a_state_write(session_dir: Path) -> None:
    repo = session_dir.parents[1]
    _write_state(session_dir)
    now = ["--now", "2026-03-02T11:00:00Z"]
    assert run_cli("render", "handoff", str(session_dir), *now, cwd=repo).returncode == 0
    ok = run_cli("validate", str(session_dir), *now, "--strict", cwd=repo)
    assert ok.returncode == 0, ok.stdout
    # a later write of the state (write moment 4), without re-rendering the handoff
    doc = apex_state()
    doc["updated"] = "2026-03-02T11:30:00Z"
    _write_state(session_dir, doc)
    later = ["--now", "2026-03-02T12:00:00Z"]
    res = run_cli("validate", str(session_dir), *later, "--format", "json", cwd=repo)
    assert res.returncode == 0  # a warning: the handoff is rewritten at the next gate
    diags = json.loads(res.stdout)["files"][0]["diagnostics"]
    assert [(d["code"], d["file"], d["line"]) for d in diags] == [
        ("SR606", str(session_dir / "00-handoff.md"), 3)
    ]
    assert run_cli("validate", str(session_dir), *later, "--strict", cwd=repo).returncode == 1
    # a hand-edited section is an error
    with open(session_dir / "00-handoff.md", "a", encoding="utf-8") as fh:
        fh.write("\n## Notes\n")
    bad = run_cli("validate", str(session_dir), *later, cwd=repo)
    assert bad.returncode == 1 and "SR604" in bad.stdout


# --- the skill docs ---------------------------------------------------------------------------

SKILLS = REPO / "docs" / "skills"


def frontmatter(text: str) -> dict[str, Any]:
    from ruamel.yaml import YAML

    assert text.startswith("---\n")
    end = text.index("\n---\n", 4)
    data: dict[str, Any] = YAML(typ="safe", pure=True).load(text[4:end])
    return data


@pytest.mark.parametrize("wf_id", BUILTINS)
def test_skill_frontmatter_has_only_agent_skills_keys(wf_id: str) -> None:
    text = (SKILLS / wf_id / "SKILL.md").read_text(encoding="utf-8")
    fm = frontmatter(text)
    assert set(fm) <= set(FRONTMATTER_KEYS), set(fm) - set(FRONTMATTER_KEYS)
    assert {"name", "description"} <= set(fm)
    assert fm["name"] == wf_id == (SKILLS / wf_id).name  # the name is the directory's name
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", fm["name"]) and len(fm["name"]) <= 64
    assert 1 <= len(fm["description"]) <= 1024
    assert len(fm.get("compatibility", "")) <= 500
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in fm["metadata"].items())
    assert fm["metadata"]["workflow"] == wf_id
    assert len(text.splitlines()) < 500  # the format's recommended size of a SKILL.md body


def test_render_skill_names_the_skill_after_its_directory(tmp_path: Path) -> None:
    out = tmp_path / "my-resume-skill"
    proc = run_cli("render", "skill", "--workflow", "dotagent", "--out", str(out), "--digest")
    assert proc.returncode == 0, proc.stderr
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [
        "SKILL.digest.md",
        "SKILL.md",
        "references/context-budgets.md",
        "references/mcp-tools.md",
        "references/recovery-protocol.md",
        "references/state-file-schema.md",
    ]
    text = (out / "SKILL.md").read_text(encoding="utf-8")
    assert frontmatter(text)["name"] == "my-resume-skill"
    expected = render_skill(load_workflow("dotagent"), name="my-resume-skill")
    for rel, want in expected.items():
        assert (out / rel).read_text(encoding="utf-8") == want
    bad = run_cli("render", "skill", "--workflow", "apex", "--out", str(tmp_path / "Bad_Name"))
    assert bad.returncode == 2 and "--name" in bad.stderr
    assert not (tmp_path / "Bad_Name").exists()
    named = run_cli(
        "render", "skill", "--workflow", "apex", "--out", str(tmp_path / "x"), "--name", "apex"
    )
    assert named.returncode == 0 and not (tmp_path / "x" / "SKILL.digest.md").exists()


WRITE_CALLS = [
    "`start STEP`",
    "`checkpoint STEP SUB_STEP --artifact PATH`",
    "`complete STEP`",
    "`decide KEY VALUE`",
    "`decide --log",
    '`finding add "TITLE"`',
    '`finding resolve "TITLE"`',
    "`transition --complete A --start B",
    "session-resume resume ",
    "session-resume session start",
    "`session end`",
    "`ping`",
    "`approve STEP",
]


@pytest.mark.parametrize("wf_id", BUILTINS)
@pytest.mark.parametrize("name", ["SKILL.md", "SKILL.digest.md"])
def test_skill_teaches_every_write_moment_with_its_cli_call(wf_id: str, name: str) -> None:
    text = (SKILLS / wf_id / name).read_text(encoding="utf-8")
    for call in WRITE_CALLS:
        assert call in text, call


def _commands(text: str) -> list[str]:
    return [
        m
        for m in re.findall(r"`(session-resume [^`]+)`", text)
        if "[" not in m  # a synopsis with optional parts, not a call
    ]


# The write table of the skill shows each CALL of `session-resume CALL --project PROJECT
# --session ID` (its heading): the command an agent types is the heading's, CALL filled in.
WRITE_FORM = "session-resume CALL --project PROJECT --session ID"
NAMES_SESSION = (*WRITERS, "ping")


def _write_table_calls(text: str) -> list[str]:
    lines = text.splitlines()
    heading = next((ln for ln in lines if ln.startswith("## 3. Writes")), None)
    if heading is None:
        return []
    assert f"`{WRITE_FORM}`" in heading, heading
    calls = []
    for row in _tables(text, heading):
        calls += [WRITE_FORM.replace("CALL", c) for c in re.findall(r"`([^`]+)`", row[1])]
    return calls


@pytest.mark.parametrize("wf_id", BUILTINS)
def test_every_command_in_the_skill_docs_parses_with_the_real_cli(wf_id: str) -> None:
    """Every command shown anywhere in the skill folder (SKILL.md, the digest, the
    references) parses with the CLI's own parser, and every one that writes names the
    session, as the resume answer's commands do: an agent copying one never writes as
    another session, or as none."""
    seen = writes = 0
    files = sorted((SKILLS / wf_id).rglob("*.md"))
    for path in files:
        text = path.read_text(encoding="utf-8")
        shown = [c for c in _commands(text) if c != WRITE_FORM]
        for cmd in shown + _write_table_calls(text):
            argv = shlex.split(cmd)[1:]
            try:
                args = build_parser().parse_args(argv)
            except SystemExit:
                pytest.fail(f"{path.relative_to(REPO)}: `{cmd}` is not a valid command")
            assert callable(args.func)
            seen += 1
            if argv[0] in NAMES_SESSION:
                writes += 1
                assert args.session is not None, f"{path.relative_to(REPO)}: `{cmd}`"
    assert seen >= 20 and writes >= 12


@pytest.mark.parametrize("wf_id", BUILTINS)
def test_every_file_of_the_skill_folder_is_named_in_skill_md(wf_id: str) -> None:
    """An agent that finds a file in the skill folder learns from SKILL.md what it is."""
    skill = (SKILLS / wf_id / "SKILL.md").read_text(encoding="utf-8")
    for path in sorted((SKILLS / wf_id).rglob("*")):
        rel = path.relative_to(SKILLS / wf_id).as_posix()
        if path.is_file() and rel != "SKILL.md":
            assert rel in skill, rel


@pytest.mark.parametrize("wf_id", BUILTINS)
def test_no_reference_lists_the_state_file_as_one_to_load(wf_id: str) -> None:
    budgets = (SKILLS / wf_id / "references" / "context-budgets.md").read_text(encoding="utf-8")
    for row in _tables(budgets, "## Startup budget per step") if "## Startup" in budgets else []:
        assert "00-session-state.json" not in row[4] and "00-handoff.md" not in row[4], row


def _tables(text: str, heading: str) -> list[list[str]]:
    """Rows (cells) of the first table under ``heading``."""
    lines = text.splitlines()
    i = lines.index(heading)
    rows = []
    for ln in lines[i + 1 :]:
        if ln.startswith("#"):
            break
        if ln.startswith("| ---"):
            continue
        if ln.startswith("| "):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]])
        elif rows:
            break
    return rows[1:]  # without the header row


def test_field_tables_are_generated_from_the_schema() -> None:
    schema = json.loads((REPO / "schema/session-state/3.0.json").read_text(encoding="utf-8"))
    text = (SKILLS / "apex" / "references" / "state-file-schema.md").read_text(encoding="utf-8")
    objects = {"Top level": schema}
    for name, sub in schema["$defs"].items():
        if "properties" in sub:
            objects[name] = sub
            for pname, psub in sub["properties"].items():
                if "properties" in psub:
                    objects[f"{name}.{pname}"] = psub
        else:
            assert f"## {name}" in text
    for title, sub in objects.items():
        rows = _tables(text, f"## {title}")
        fields = {r[0].strip("`"): r for r in rows if r[0].startswith("`")}
        assert set(fields) == set(sub["properties"]), title
        for prop, row in fields.items():
            assert row[2] == ("yes" if prop in sub.get("required", []) else "no"), (title, prop)
            # the docs are Markdown: they carry the schema's markdownDescription
            description = sub["properties"][prop].get("markdownDescription", "")
            assert row[3].replace("\\|", "|") == description, (title, prop)
    status_row = next(r for r in _tables(text, "## stepObject") if r[0] == "`status`")
    assert status_row[1] == "one of `pending`, `in_progress`, `complete`, `skipped`"


def test_budget_and_checkpoint_tables_are_generated_from_the_workflow() -> None:
    text = (SKILLS / "apex" / "references" / "context-budgets.md").read_text(encoding="utf-8")
    budget_rows = {r[0].strip("`"): r for r in _tables(text, "## Startup budget per step")}
    assert list(budget_rows) == APEX.step_keys
    for s in APEX.steps:
        assert s.budget is not None
        row = budget_rows[s.key]
        assert row[1] == s.name
        assert row[3] == str(s.budget.max_startup_files)
        # the state file and handoff are never read: the answer carries them
        assert re.findall(r"`([^`]+)`", row[4]) == [
            f for f in s.budget.startup_files if f not in ("00-session-state.json", "00-handoff.md")
        ]
        cps = _tables(text, f"### Step {s.key}: {s.name}")
        assert [r[0].strip("`") for r in cps[: len(s.checkpoints)]] == s.checkpoint_ids
        assert [r[1] for r in cps[: len(s.checkpoints)]] == [c.after for c in s.checkpoints]
        for old in s.legacy_checkpoints:
            assert f"`{old}`" in text


def test_recovery_protocol_lists_every_resume_action() -> None:
    assert set(ACTION_DOCS) == set(ACTIONS)
    for wf_id in BUILTINS:
        path = SKILLS / wf_id / "references" / "recovery-protocol.md"
        rows = _tables(path.read_text(encoding="utf-8"), "## Resume decisions")
        assert [r[0].strip("`") for r in rows] == list(ACTIONS)
        text = path.read_text(encoding="utf-8")
        for needle in (".bak", "corrupt-", "migrate --dry-run", "x-legacy", "recovered"):
            assert needle in text


@pytest.mark.parametrize("wf_id", BUILTINS)
def test_digest_is_at_most_60_lines_from_the_same_source(wf_id: str) -> None:
    digest = (SKILLS / wf_id / "SKILL.digest.md").read_text(encoding="utf-8")
    assert len(digest.splitlines()) <= 60
    skill = (SKILLS / wf_id / "SKILL.md").read_text(encoding="utf-8")
    # the same body (how to ask and follow, the step keys; the actions are the answer's own
    # words, listed in references/recovery-protocol.md), the same calls
    shared = [line for line in skill.splitlines() if line.startswith(("- `", "Its steps"))]
    assert len(shared) >= 3
    for line in shared:
        assert line in digest, line
    commands = _commands(digest) + _write_table_calls(digest)
    assert len(commands) >= 10
    in_skill = _commands(skill) + _write_table_calls(skill)
    for cmd in commands:
        assert cmd in in_skill, cmd


def test_digest_of_a_huge_workflow_is_cut_to_60_lines(tmp_path: Path) -> None:
    raw = copy.deepcopy(APEX.raw)
    template = raw["steps"][0]
    raw["steps"] = [
        # (no deliverables: one file is named by one step only)
        {**copy.deepcopy(template), "key": str(i), "name": f"S{i}", "deliverables": []}
        for i in range(1, 81)
    ]
    raw["id"] = "huge"
    path = tmp_path / "huge.yaml"
    path.write_text(json.dumps(raw), encoding="utf-8")  # JSON is YAML
    wf = load_workflow(str(path))
    digest = render_skill(wf)["SKILL.digest.md"]
    lines = digest.splitlines()
    assert len(lines) <= 60
    more = [ln for ln in lines if ln.startswith("- … and ")]
    shown = [ln for ln in lines if re.match(r"- `\d+` S\d+:", ln)]
    assert len(more) == 1
    assert len(shown) + int(re.search(r"(\d+) more", more[0]).group(1)) == 80  # type: ignore[union-attr]


def test_skill_docs_are_part_of_the_generated_docs(tmp_path: Path) -> None:
    from session_resume.docgen.generate import expected_files, stale_files

    want = expected_files(REPO)
    for wf_id in BUILTINS:
        for rel, text in render_skill(load_workflow(wf_id), name=wf_id).items():
            assert want[SKILLS / wf_id / rel] == text
    assert "docs/skills/apex/SKILL.md" in stale_files(tmp_path)


@pytest.mark.parametrize("wf_id", BUILTINS)
def test_skill_is_short_enough_to_read_in_one_go(wf_id: str, tmp_path: Path) -> None:
    """Issue 26 point 10: the answer carries the plan, so the skill is at most 3,500
    characters, also as the repository's `.github/skills/session-resume/` skill."""
    assert len((SKILLS / wf_id / "SKILL.md").read_text(encoding="utf-8")) <= 3500
    out = tmp_path / ".github" / "skills" / "session-resume"
    proc = run_cli("render", "skill", "--workflow", wf_id, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    text = (out / "SKILL.md").read_text(encoding="utf-8")
    assert frontmatter(text)["name"] == "session-resume" and len(text) <= 3500
    # CLI and MCP side by side; the text answer's parts named as it prints them
    for word in ("`resume` tool", "--session ID", "`[condition]`", "`read now`", "no id, no ping"):
        assert word in text, word
