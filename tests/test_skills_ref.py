"""The generated skill docs pass the Agent Skills reference validator.

``skills-ref`` (PyPI, the reference library of the Agent Skills format) validates a skill
directory: SKILL.md's frontmatter (only the allowed keys; ``name`` lowercase letters, digits
and hyphens, equal to the directory's name; a ``description`` of at most 1,024 characters;
``compatibility`` of at most 500). Its own command line, ``agentskills validate DIR``, is run
as a user runs it, on every workflow's docs/skills/<workflow>/ and on a skill that
``session-resume render skill`` writes for a workflow file of the user's own.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_cli

SKILLS = REPO / "docs" / "skills"
WORKFLOWS = sorted(p.stem for p in (REPO / "schema" / "workflows").glob("*.yaml"))


def _agentskills(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("agentskills", path=str(Path(sys.executable).parent))
    assert exe, "skills-ref (its `agentskills` command) is missing: pip install -e '.[test]'"
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)


def test_every_workflow_has_generated_skill_docs() -> None:
    assert WORKFLOWS and sorted(p.name for p in SKILLS.iterdir() if p.is_dir()) == WORKFLOWS


@pytest.mark.parametrize("wf_id", WORKFLOWS)
def test_generated_skill_passes_skills_ref(wf_id: str) -> None:
    res = _agentskills("validate", str(SKILLS / wf_id))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Valid skill" in res.stdout


@pytest.mark.parametrize("wf_id", WORKFLOWS)
def test_python_api_agrees(wf_id: str) -> None:
    from skills_ref import read_properties, validate

    assert validate(SKILLS / wf_id) == []
    props = read_properties(SKILLS / wf_id)
    assert props.name == wf_id and props.license == "MIT"


def test_skill_rendered_for_a_users_workflow_passes(tmp_path: Path) -> None:
    wf = tmp_path / "release-train.yaml"
    text = (REPO / "schema" / "workflows" / "dotagent.yaml").read_text(encoding="utf-8")
    wf.write_text(text, encoding="utf-8")
    out = tmp_path / "release-train-resume"
    proc = run_cli("render", "skill", "--workflow", str(wf), "--out", str(out), "--digest")
    assert proc.returncode == 0, proc.stderr
    res = _agentskills("validate", str(out))
    assert res.returncode == 0, res.stdout + res.stderr


def test_negative_control_skills_ref_rejects_a_broken_skill(tmp_path: Path) -> None:
    """skills-ref is not a rubber stamp: the same SKILL.md under another directory name, or
    with a frontmatter key the format does not allow, fails."""
    moved = tmp_path / "not-apex"
    shutil.copytree(SKILLS / "apex", moved)
    res = _agentskills("validate", str(moved))
    assert res.returncode != 0 and "must match skill name" in res.stdout + res.stderr
    extra = tmp_path / "apex"
    shutil.copytree(SKILLS / "apex", extra)
    skill = extra / "SKILL.md"
    skill.write_text(
        skill.read_text(encoding="utf-8").replace("license:", "version: 1\nlicense:", 1),
        encoding="utf-8",
    )
    res = _agentskills("validate", str(extra))
    assert res.returncode != 0 and "version" in res.stdout + res.stderr
