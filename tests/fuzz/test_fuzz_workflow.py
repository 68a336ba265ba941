"""Fuzz group: workflows. Workflow YAML (hostile pieces, random text) and where a
workflow definition may be read from.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_resume.core.workflow import WorkflowError, load_workflow
from session_resume.core.yamlsafe import load_yaml_text
from session_resume.storage import store

from .checks import assert_coded
from .profiles import PROFILE, tried
from .strategies import dumps
from conftest import apex_state, run_cli

# Test tier (README "Test tiers"): Hypothesis properties (`nox -s fuzz` runs them at scale).
pytestmark = pytest.mark.slow

# --- workflow YAML --------------------------------------------------------------------------


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


# --- regressions: bugs these properties found, since fixed (kept as plain examples) -----
# Each names the commit that fixed it; the properties above would find it again, these keep
# the minimal reproduction in the normal suite whatever the random draw.


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


# --- limits the properties rely on ---------------------------------------------------------


def test_workflow_yaml_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    from session_resume.core.yamlsafe import MAX_YAML_BYTES

    big = tmp_path / "big.yaml"
    big.write_bytes(b"id: x\n" + b"# " + b"x" * MAX_YAML_BYTES + b"\n")
    with pytest.raises(WorkflowError) as exc:
        load_workflow(big)
    assert [d.code for d in exc.value.diagnostics] == ["SR400"]


# --- regressions: bugs found, since fixed (issue 18) ---------------------------------------


def test_config_workflow_path_outside_the_repository_is_refused(tmp_path: Path) -> None:
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
