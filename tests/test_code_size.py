"""Size limits of the package (issue 11, point 8; issue 31, point 5): no hand-written function
over 100 lines and no module over 700 lines in ``validator/session_resume``, except the modules
allowed below (core/compiled/ is generated and not counted)."""

from __future__ import annotations

import ast

from conftest import REPO

PACKAGE = REPO / "validator" / "session_resume"
MAX_FUNCTION_LINES = 100
MAX_MODULE_LINES = 700

# Modules exempt from both limits (paths relative to the package), with the reason.
ALLOWED = {
    "core/codes.py": "data table: the code catalogue",
}


# Generated, never edited by hand (docgen/compiled.py): their size is fastjsonschema's.
GENERATED = "core/compiled/"


def _modules() -> list[tuple[str, str]]:
    return [
        (rel, path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
        if not (rel := path.relative_to(PACKAGE).as_posix()).startswith(GENERATED)
    ]


def _oversized(rel: str, text: str) -> list[str]:
    """What in one module breaks a limit, one line each."""
    out = []
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        out.append(f"{rel}: {lines} lines (max {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(text, filename=rel)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                out.append(
                    f"{rel}:{node.lineno}: {node.name} has {length} lines "
                    f"(max {MAX_FUNCTION_LINES})"
                )
    return out


def test_no_function_or_module_is_over_the_size_limits() -> None:
    problems = [p for rel, text in _modules() if rel not in ALLOWED for p in _oversized(rel, text)]
    assert not problems, "split these by what they do:\n" + "\n".join(problems)


def test_the_allow_list_names_modules_that_exist() -> None:
    found = {rel for rel, _ in _modules()}
    stale = sorted(rel for rel in ALLOWED if rel not in found)
    assert not stale, f"remove from ALLOWED (no such module): {', '.join(stale)}"


def test_the_size_check_sees_long_functions_and_modules() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    long_function = f"def f() -> None:\n{body}\n"
    assert _oversized("m.py", long_function) == [
        f"m.py:1: f has {MAX_FUNCTION_LINES + 1} lines (max {MAX_FUNCTION_LINES})"
    ]
    short = "def f() -> None:\n    pass\n"
    assert _oversized("m.py", short) == []
    long_module = short + "\n" * MAX_MODULE_LINES
    assert _oversized("m.py", long_module) == [
        f"m.py: {MAX_MODULE_LINES + 2} lines (max {MAX_MODULE_LINES})"
    ]
