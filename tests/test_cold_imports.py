"""What a cold command imports (issue 19: each command imports only what it uses). A CLI run
in a fresh interpreter must not import a schema engine, Jinja, a YAML parser, typing,
dataclasses (with inspect) or the modules behind random ids and host names: each of them is
milliseconds of every agent's write. ``nox -s bench`` measures the time; this pins the cause."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

PKG = REPO / "validator" / "session_resume"
EXAMPLE = REPO / "examples" / "agent-output" / "contoso-portal"
SESSION = "c0ffee00c0ffee00"
NOW = "2026-11-20T15:00:00Z"

# Never on a cold path of the commands below (the reason in brackets).
HEAVY = {
    "typing": "annotations only, under TYPE_CHECKING",
    "dataclasses": "session_resume.records instead",
    "inspect": "imported by dataclasses",
    "jsonschema_rs": "core/compiled/ answers for the hot schemas",
    "jsonschema": "only to explain an invalid file",
    "jinja2": "only to render",
    "ruamel": "only to parse a workflow YAML that is not cached",
    "secrets": "os.urandom instead",
    "socket": "os.uname instead",
    "hashlib": "imported by secrets",
    "tomllib": "only for a pyproject.toml",
    "shutil": "argparse's formatter imports it (with bz2, lzma) for the width: terminal_columns",
}

PROBE = """
import io, contextlib, json, sys
sys.argv = ["session-resume", *json.loads(sys.argv[1])]
from session_resume.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main()
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _repo(tmp_path: Path) -> Path:
    """A copy of the bundled example session in a fresh repository (no pyproject.toml)."""
    root = tmp_path / "repo"
    sdir = root / "agent-output" / "contoso-portal"
    shutil.copytree(EXAMPLE, sdir)
    state = json.loads((sdir / "00-session-state.json").read_text(encoding="utf-8"))
    state.pop("$schema", None)
    (sdir / "00-session-state.json").write_text(json.dumps(state, indent=2), encoding="utf-8")
    (root / ".git").mkdir()
    # a project's own pyproject.toml, with no [tool.session-resume]: not parsed at all
    (root / "pyproject.toml").write_text(
        '[project]\nname = "session-resume-demo"\n\n[tool.ruff]\nline-length = 100\n'
    )
    return root


def _run(root: Path, argv: list[str]) -> dict[str, object]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root.parent), "SESSION_RESUME_NO_CACHE": ""}
    env["XDG_CACHE_HOME"] = str(root.parent / "cache")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


COMMANDS = {
    "validate": ["validate", "agent-output/contoso-portal/00-session-state.json"],
    "checkpoint": [
        "checkpoint",
        "2",
        "phase_3_cost",
        "--project",
        "contoso-portal",
        "--session",
        SESSION,
        "--now",
        NOW,
    ],
    "resume": ["resume", "agent-output/contoso-portal", "--now", NOW],
    "session-start": ["session", "start", "--project", "contoso-portal", "--now", NOW],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_cold_command_imports_nothing_heavy(tmp_path: Path, name: str) -> None:
    root = _repo(tmp_path)
    _run(root, COMMANDS["validate"])  # warms the workflow cache, as an agent's earlier calls do
    answer = _run(root, COMMANDS[name])
    assert answer["code"] in (0, None), answer["out"]
    modules = set(answer["modules"])  # type: ignore[arg-type]
    loaded = {m: why for m, why in HEAVY.items() if m in modules or f"{m}." in str(modules)}
    assert not loaded, f"`{name}` imported {loaded}"


def test_no_module_imports_typing_at_run_time() -> None:
    """Annotations are strings (``from __future__ import annotations``); typing names are
    imported under ``TYPE_CHECKING = False`` / ``if TYPE_CHECKING:`` only."""
    offenders = []
    for path in sorted(PKG.rglob("*.py")):
        if "compiled" in path.parts:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module == "typing":
                offenders.append(f"{path.relative_to(PKG)}:{node.lineno}")
            if isinstance(node, ast.Import) and any(a.name == "typing" for a in node.names):
                offenders.append(f"{path.relative_to(PKG)}:{node.lineno}")
    assert not offenders, offenders


@pytest.mark.parametrize(
    "table",
    [
        '[tool.session-resume]\nworkflow = "generic"\n',
        '[tool."session-resume"]\nworkflow = "generic"\n',
        '[ tool . session-resume ]\nworkflow = "generic"\n',
        '[tool]\nsession-resume = { workflow = "generic" }\n',
        'tool.session-resume.workflow = "generic"\n',
        'tool = { session-resume = { workflow = "generic" } }\n',
    ],
)
def test_every_spelling_of_our_table_is_still_read(tmp_path: Path, table: str) -> None:
    """The byte pre-check that spares most pyproject.toml files the TOML parser must let
    every TOML spelling of ``[tool.session-resume]`` through."""
    from session_resume.storage.config import load_config

    (tmp_path / ".git").mkdir()
    # top-level keys first: after a [table] header they would belong to that table
    (tmp_path / "pyproject.toml").write_text(table + '\n[project]\nname = "x"\n')
    assert load_config(tmp_path).workflow == "generic"


def test_validate_of_a_file_loads_no_write_machinery(tmp_path: Path) -> None:
    """`validate FILE` (the pre-commit hook's call, once per commit) reads one file: the store,
    the services' write context and the lease rules they load are never imported (the read
    services' `Reading` record once pulled them in at the CLI's import: 4 modules, +3 %)."""
    root = _repo(tmp_path)
    _run(root, COMMANDS["validate"])
    modules = set(_run(root, COMMANDS["validate"])["modules"])  # type: ignore[arg-type]
    unused = {"session_resume.storage.store", "session_resume.services.context"}
    assert not modules & unused, sorted(modules & unused)


def test_a_session_start_hook_loads_no_migration_nor_write_moments(tmp_path: Path) -> None:
    """The host waits for the first session-start, which on a checkout without bytecode
    compiles every module it imports: the plan of a valid state needs neither the migration
    chain (only an invalid state is asked whether `migrate` repairs it) nor the write
    moments (the resume decision takes the one helper it shares with them)."""
    root = _repo(tmp_path)
    _run(root, COMMANDS["validate"])
    event = {"session_id": "s", "cwd": str(root), "hook_event_name": "SessionStart"}
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root.parent)}
    env["XDG_CACHE_HOME"] = str(root.parent / "cache")
    probe = PROBE.replace(
        'sys.argv = ["session-resume", *json.loads(sys.argv[1])]',
        'sys.argv = ["session-resume", "hook", "session-start"]',
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=json.dumps(event),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert "additionalContext" in answer["out"]  # the plan was built
    modules = set(answer["modules"])
    assert "session_resume.core.resume_decision" in modules
    unused = {"session_resume.core.migration", "session_resume.core.write_moments"}
    assert not modules & unused, sorted(modules & unused)
