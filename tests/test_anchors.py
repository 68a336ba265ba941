"""A name, id or key is checked to its end: Python's ``$`` also matches before a final newline,
so ``"demo\\n"`` passed ``^[A-Za-z0-9][A-Za-z0-9._-]*$`` and became a project (a path with a
newline in it). Every pattern of the package that is anchored at the end uses ``\\Z`` (the
ECMA-262 ``$`` the schemas mean, docs/spec.md §2.3), unless it reads lines (``re.MULTILINE``)."""

from __future__ import annotations

import ast

import pytest

from conftest import REPO, run_cli

PKG = REPO / "validator" / "session_resume"


def _dollar_anchored() -> list[str]:
    out = []
    for path in sorted(PKG.rglob("*.py")):
        if "compiled" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in ("compile", "match", "search")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                continue
            pattern = node.args[0].value
            multiline = "MULTILINE" in ast.dump(node) or "re.M" in ast.unparse(node)
            if pattern.endswith("$") and not pattern.endswith("\\$") and not multiline:
                out.append(f"{path.relative_to(PKG)}:{node.lineno}: {pattern}")
    return out


def test_no_pattern_ends_in_a_dollar_that_allows_a_final_newline() -> None:
    # handoff lines and the terminal summary are matched one line at a time (no newline left)
    allowed = {"core/handoff_rules.py", "terminal.py"}
    found = [f for f in _dollar_anchored() if f.split(":")[0] not in allowed]
    assert not found, found


@pytest.mark.parametrize("bad", ["demo\n", "demo\r\n"])
def test_a_project_name_with_a_final_newline_is_refused(tmp_path, bad: str) -> None:
    (tmp_path / ".git").mkdir()
    proc = run_cli("init", bad, "--root", str(tmp_path), cwd=tmp_path)
    assert proc.returncode in (1, 2), proc.stdout + proc.stderr
    assert "SR900" not in proc.stdout + proc.stderr
    assert (
        not any(p.name.startswith("demo") for p in (tmp_path / "agent-output").glob("*"))
        if (tmp_path / "agent-output").exists()
        else True
    )


def test_a_session_id_with_a_final_newline_is_refused(tmp_path) -> None:
    (tmp_path / ".git").mkdir()
    proc = run_cli(
        "session",
        "start",
        "--project",
        "demo",
        "--session",
        "abc\n",
        "--root",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert proc.returncode in (1, 2), proc.stdout + proc.stderr
    assert "SR900" not in proc.stdout + proc.stderr
