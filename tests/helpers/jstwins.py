"""Twin repositories for the differential tests of the two CLIs (tests/test_js_package.py,
tests/test_js_lifecycle.py): the same commands run by the Python CLI and by the JavaScript
package's CLI, each in its own repository, their answers and resulting files made comparable
(the repository's path as ROOT, new session ids as SID)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from session_resume.cli.main import main as py_cli

REPO = Path(__file__).resolve().parents[2]
CLI_JS = REPO / "conformance" / "js" / "bin" / "session-resume.mjs"
BATCH_JS = REPO / "tests" / "node" / "cli_batch.mjs"
NEW_ID = re.compile(r"\b[0-9a-f]{16}\b")


def cli(impl: str, node: str) -> list[str]:
    """The command line that runs the CLI of ``impl`` ("py" or "js")."""
    return [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]


def run(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def sequence_in_both(
    argvs: list[list[str]], tmp_path: Path, node: str, *, new_ids: bool = False
) -> dict[str, list[tuple[int, str, str]]]:
    """Each command of ``argvs`` run in order by each CLI in its own repository
    (``tmp_path/py``, ``tmp_path/js``): exit code, stdout and stderr, the repository's path as
    ROOT (and, ``new_ids``, each new session id as SID)."""
    outs: dict[str, list[tuple[int, str, str]]] = {}
    for impl in ("py", "js"):
        root = tmp_path / impl
        (root / ".git").mkdir(parents=True, exist_ok=True)
        outs[impl] = []
        for argv in argvs:
            proc = run([*cli(impl, node), *argv], root)
            out, err = (
                (NEW_ID.sub("SID", x) if new_ids else x).replace(str(root), "ROOT")
                for x in (proc.stdout, proc.stderr)
            )
            outs[impl].append((proc.returncode, out, err))
    return outs


def batch(impl: str, node: str, argvs: list[list[str]], cwd: Path) -> list[tuple[int, str, str]]:
    """Each command of ``argvs`` run in order in ``cwd`` by the CLI of ``impl`` in one process:
    the Python CLI in this one (its ``main``), the JavaScript CLI in one Node process
    (tests/node/cli_batch.mjs calls the package's ``cli``); exit code, stdout and stderr."""
    if impl == "js":
        proc = subprocess.run(
            [node, str(BATCH_JS)],
            input=json.dumps({"cwd": str(cwd), "runs": argvs}),
            capture_output=True,
            text=True,
            timeout=300,
            cwd=REPO,
        )
        assert proc.returncode == 0, proc.stderr
        return [(r["rc"], r["stdout"], r["stderr"]) for r in json.loads(proc.stdout)]
    out = []
    with contextlib.chdir(cwd):
        for argv in argvs:
            buf, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
                try:
                    rc = py_cli(argv)
                except SystemExit as exc:  # argparse's own usage errors
                    rc = exc.code if isinstance(exc.code, int) else 2
            out.append((rc, buf.getvalue(), err.getvalue()))
    return out


def batch_in_both(
    argvs: list[list[str]], tmp_path: Path, node: str, *, new_ids: bool = False
) -> dict[str, list[tuple[int, str, str]]]:
    """:func:`sequence_in_both` with each CLI in one process (:func:`batch`): the same
    twin repositories, answers, ROOT and SID."""
    outs: dict[str, list[tuple[int, str, str]]] = {}
    for impl in ("py", "js"):
        root = tmp_path / impl
        (root / ".git").mkdir(parents=True, exist_ok=True)
        outs[impl] = [
            (rc, *((NEW_ID.sub("SID", x) if new_ids else x).replace(str(root), "ROOT") for x in io))
            for rc, *io in batch(impl, node, argvs, root)
        ]
    return outs


def tree(root: Path) -> dict[str, object]:
    """Every file below ``root`` (the lock aside) and its text, the root's path as ROOT; a
    state as its JSON value (JavaScript writes integer-like keys first: README, Known limits)."""

    def content(f: Path) -> object:
        text = f.read_text().replace(str(root), "ROOT")
        if f.name.startswith("00-session-state.json"):
            try:
                return json.loads(text)
            except ValueError:
                return text
        return text

    return {
        f.relative_to(root).as_posix(): content(f)
        for f in sorted(root.rglob("*"))
        if f.is_file()
        and not f.is_symlink()
        and not f.name.endswith(".lock")
        # the reference's record of its own writes (storage/written.py): its bookkeeping
        and ".00-session-written" not in f.parts
    }


def need_node() -> str:
    """The path of ``node``; without it (or without ``npm ci``'s packages) the calling test
    fails with what to install, or skips when SESSION_RESUME_NO_NODE=1."""
    node = shutil.which("node")
    missing = [] if node else ["node"]
    if not (REPO / "node_modules" / "yaml").is_dir():
        missing.append("node_modules (run `npm ci`)")
    if missing or node is None:
        if os.environ.get("SESSION_RESUME_NO_NODE") == "1":
            pytest.skip(f"missing {', '.join(missing)} (SESSION_RESUME_NO_NODE=1)")
        pytest.fail(f"the JavaScript package needs {', '.join(missing)}", pytrace=False)
    return node
