"""The architecture of docs/architecture.md, checked: the layer contract, no import cycles,
references from code to documents that exist, the version registry as the one place that
names the current version, and adding a version or a workflow as the docs say."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "validator" / "session_resume"


def _package_files() -> list[Path]:
    """The package's hand-written modules (core/compiled/ is generated from the schemas, which
    carry their own version: tests/test_compiled_schemas.py and docgen's check cover it)."""
    return sorted(
        p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts and p.parent.name != "compiled"
    )


# --- layers and cycles --------------------------------------------------------------------


def test_layer_contract_holds() -> None:
    """import-linter's own command, over the contract in pyproject.toml."""
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    proc = subprocess.run(
        [exe, "--config", str(REPO / "pyproject.toml")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "BROKEN" not in proc.stdout and "0 broken" in proc.stdout


def _cycles(graph: object, modules: set[str]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.find_modules_directly_imported_by(v):  # type: ignore[attr-defined]
            if w not in modules:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for m in sorted(modules):
        if m not in index:
            strong(m)
    return out


def test_no_import_cycles_counting_imports_inside_functions() -> None:
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (test extra)")
    graph = grimp.build_graph("session_resume", exclude_type_checking_imports=True)
    modules = {m for m in graph.modules if m.startswith("session_resume")}
    assert len(modules) > 50
    assert _cycles(graph, modules) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above can fail: a two-module cycle is found."""

    class Graph:
        edges = {"a": {"b"}, "b": {"a"}, "c": {"a"}}

        def find_modules_directly_imported_by(self, m: str) -> set[str]:
            return self.edges[m]

    assert _cycles(Graph(), {"a", "b", "c"}) == [["a", "b"]]


# --- references to documents --------------------------------------------------------------

_SECTION_REF = re.compile(r"(docs/[A-Za-z0-9_./-]+\.md)((?:,? ?§ ?[0-9]+(?:\.[0-9]+)*)+)")
_HEADING_REF = re.compile(r'(docs/[A-Za-z0-9_./-]+\.md), "([^"]+)"')
_SCHEMA_REF = re.compile(r"\bschema/[A-Za-z0-9_./-]+\.(?:json|yaml)\b")
_OUTSIDE = re.compile(r"\bDESIGN(?:\.md)?\s*§|\bDESIGN\.md\b|\bshared/DESIGN|\bseeds/")
_BARE_SPEC = re.compile(r"(?<![/.\w])spec §")


def _headings(doc: Path) -> list[str]:
    return [
        line.lstrip("#").strip()
        for line in doc.read_text(encoding="utf-8").splitlines()
        if re.match(r"^#{1,6} ", line)
    ]


def _references(text: str) -> list[tuple[str, str, str]]:
    """(kind, file, target) for every reference to a document of this repository."""
    out = []
    for m in _SECTION_REF.finditer(text):
        for num in re.findall(r"[0-9]+(?:\.[0-9]+)*", m.group(2)):
            out.append(("section", m.group(1), num))
    for m in _HEADING_REF.finditer(text):
        out.append(("heading", m.group(1), m.group(2)))
    for m in _SCHEMA_REF.finditer(text):
        out.append(("file", m.group(0), ""))
    return out


def _broken(kind: str, file: str, target: str) -> str | None:
    path = REPO / file
    if re.search(r"[<*]|NAME", file):
        return None  # a pattern such as schema/session-state/<N>.json
    if not path.is_file():
        return f"{file} does not exist"
    if kind == "section" and not any(
        re.match(rf"{re.escape(target)}\.? ", h) for h in _headings(path)
    ):
        return f"{file} has no section {target}"
    if kind == "heading" and target not in _headings(path):
        return f"{file} has no heading {target!r}"
    return None


def test_references_from_code_to_documents_exist() -> None:
    problems = []
    sources = [*_package_files(), *(REPO / "templates").rglob("*.j2")]
    checked = 0
    for src in sources:
        text = src.read_text(encoding="utf-8")
        rel = src.relative_to(REPO)
        for m in _OUTSIDE.finditer(text):
            problems.append(f"{rel}: cites a document outside the repository: {m.group(0)!r}")
        for m in _BARE_SPEC.finditer(text):
            problems.append(f"{rel}: write `docs/spec.md §N`, not {m.group(0)!r}")
        for kind, file, target in _references(text):
            checked += 1
            why = _broken(kind, file, target)
            if why:
                problems.append(f"{rel}: {why}")
    assert checked > 20
    assert problems == []


def test_the_reference_check_rejects_what_does_not_exist() -> None:
    refs = _references(
        'see docs/spec.md §10 and docs/spec.md §99, docs/architecture.md, "No such heading" '
        "and schema/decision/9.json"
    )
    verdicts = [_broken(*r) for r in refs]
    assert verdicts[0] is None
    assert "no section 99" in (verdicts[1] or "")
    assert "no heading" in (verdicts[2] or "")
    assert "does not exist" in (verdicts[3] or "")
    assert _OUTSIDE.search("(DESIGN §6)") and _BARE_SPEC.search("(spec §1)")


# --- the version registry -----------------------------------------------------------------


def _string_constants(tree: ast.AST) -> list[str]:
    """Every string constant of a module except docstrings (f-string parts included)."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    ]


def test_the_current_version_is_named_in_at_most_two_modules() -> None:
    from session_resume.core.versions import CURRENT

    token = re.compile(rf"(?<![0-9.]){re.escape(CURRENT)}(?![0-9])")
    naming = sorted(
        str(p.relative_to(PKG))
        for p in _package_files()
        if any(token.search(s) for s in _string_constants(ast.parse(p.read_text())))
    )
    assert len(naming) <= 2, naming
    assert "core/versions.py" in naming


TOY_UPGRADE = '''"""Toy step 3.0 -> 4.0 (a test's)."""

from __future__ import annotations

import copy
from typing import Any

from session_resume.core.migration.context import MigrationContext

SOURCE = "3.0"
TARGET = "4.0"


def upgrade(doc: dict[str, Any], ctx: MigrationContext) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["schema_version"] = TARGET
    ctx.note("toy step", "/schema_version")
    return out
'''


def _package_copy(tmp: Path) -> Path:
    """validator/session_resume with its data under _data, as a wheel installs it."""
    site = tmp / "site"
    pkg = site / "session_resume"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__", "_data"))
    shutil.copytree(REPO / "schema", pkg / "_data" / "schema")
    shutil.copytree(REPO / "templates", pkg / "_data" / "templates")
    return site


def _run(site: Path, code: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(site)
    env["SESSION_RESUME_NO_CACHE"] = "1"  # the copy writes nothing outside tmp_path
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_adding_a_version_is_a_schema_a_migration_module_and_a_registry_line(
    tmp_path: Path,
) -> None:
    site = _package_copy(tmp_path)
    pkg = site / "session_resume"
    # 1. the schema
    schema_dir = pkg / "_data" / "schema" / "session-state"
    schema = json.loads((schema_dir / "3.0.json").read_text())
    schema["$id"] = schema["$id"].replace("3.0", "4.0")
    schema["properties"]["schema_version"]["const"] = "4.0"
    (schema_dir / "4.0.json").write_text(json.dumps(schema, indent=2))
    # 2. one migration module
    (pkg / "core" / "migration" / "v3_to_v4.py").write_text(TOY_UPGRADE)
    # 3. one registry line
    versions = pkg / "core" / "versions.py"
    text = versions.read_text()
    last = 'SchemaVersion("3.0", upgrade="v2_to_v3", repair="repair_v3"),\n'
    assert last in text
    versions.write_text(
        text.replace(last, last + '    SchemaVersion("4.0", upgrade="v3_to_v4"),\n')
    )

    state = (REPO / "examples/agent-output/contoso-portal/00-session-state.json").read_text()
    out = _run(
        site,
        f"""
import json
from datetime import datetime, timezone
import session_resume
from session_resume.core.migration import migrate
from session_resume.core.validation import validate_document
from session_resume.core.versions import CURRENT
doc = json.loads({state!r})
doc.pop("$schema", None)
now = datetime(2030, 1, 1, tzinfo=timezone.utc)
res = migrate(doc, now=now)
old = validate_document(json.dumps(doc).encode())
new = validate_document(json.dumps(res.document).encode())
print(json.dumps({{
    "file": session_resume.__file__,
    "current": CURRENT,
    "version": res.document["schema_version"],
    "steps": res.steps,
    "old_codes": [d.code for d in old.diagnostics],
    "new_errors": [d.code for d in new.errors()],
}}))
""",
    )
    assert str(site) in str(out["file"])  # the copy ran, not the installed package
    assert out["current"] == "4.0"
    assert out["version"] == "4.0" and out["steps"] == ["3.0->4.0"]
    assert "SR140" in out["old_codes"]  # a 3.0 state is now an old version
    assert out["new_errors"] == []


def test_adding_a_workflow_is_adding_its_yaml(tmp_path: Path) -> None:
    from session_resume.core.workflow import BUILTINS

    assert list(BUILTINS) == sorted(p.stem for p in (REPO / "schema/workflows").glob("*.yaml"))
    site = _package_copy(tmp_path)
    workflows = site / "session_resume" / "_data" / "schema" / "workflows"
    text = (workflows / "generic.yaml").read_text()
    text = re.sub(r"(?m)^id: generic$", "id: toyflow", text)
    assert "id: toyflow" in text
    (workflows / "toyflow.yaml").write_text(text)
    out = _run(
        site,
        """
import json
from session_resume.core.workflow import BUILTINS, load_workflow, state_workflow_spec
print(json.dumps({"builtins": list(BUILTINS), "id": load_workflow("toyflow").id,
                  "spec": state_workflow_spec("toyflow")}))
""",
    )
    assert "toyflow" in out["builtins"]  # type: ignore[operator]
    assert out["id"] == "toyflow" and out["spec"] == "toyflow"


# Modules that run only in their own process (`session-resume conformance`, `session-resume
# mcp`) or at build time (docgen): no start-up trick pays there, so none needs a reason.
OWN_PROCESS = ("conformance/", "mcp/", "docgen/")


def _unexplained_function_imports(source: str) -> list[int]:
    """Lines of imports made inside functions without a reason: a `# lazy: REASON` comment on
    the line before, or one top-level `# lazy imports: REASON` comment for the whole module
    (an import inside a function is there for start-up time, docs/architecture.md)."""
    lines = source.split("\n")
    if any(line.startswith("# lazy imports: ") and len(line) > 18 for line in lines):
        return []
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, (ast.Import, ast.ImportFrom)):
                before = lines[inner.lineno - 2].strip() if inner.lineno >= 2 else ""
                if not (before.startswith("# lazy:") and len(before) > len("# lazy: x")):
                    out.append(inner.lineno)
    return sorted(set(out))


def test_every_import_inside_a_function_says_why() -> None:
    """On the CLI's cold path only: the modules of OWN_PROCESS need no reason."""
    problems = [
        f"{rel}:{n}"
        for p in _package_files()
        if not (rel := p.relative_to(PKG).as_posix()).startswith(OWN_PROCESS)
        for n in _unexplained_function_imports(p.read_text(encoding="utf-8"))
    ]
    assert problems == []


def test_the_lazy_import_check_finds_an_unexplained_one() -> None:
    src = "def f():\n    import json\n\ndef g():\n    # lazy: only g needs it\n    import csv\n"
    assert _unexplained_function_imports(src) == [2]
    assert _unexplained_function_imports("# lazy imports: only f needs it\n" + src) == []
