"""The conformance suite ships in the wheel: built from this checkout, installed into a fresh
virtual environment (offline: the wheel with --no-deps, the dependencies seen from this
environment), `session-resume conformance list`, `lint` and a run through the reference adapter
work from a temporary directory outside any checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

# Test tier (README "Test tiers"): builds the wheel.
pytestmark = pytest.mark.packaging

REPO = Path(__file__).resolve().parents[1]


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)
    assert proc.returncode == 0, f"{argv}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], Path]:
    pytest.importorskip("hatchling", reason="building the wheel needs hatchling (test extra)")
    tmp = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    dist = tmp / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-q", "-w", str(dist), str(REPO)],
        tmp, env,
    )  # fmt: skip
    (wheel,) = dist.glob("session_resume-*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, env)
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    _run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index",
         "-q", str(wheel)],
        tmp, env,
    )  # fmt: skip
    # The dependencies come from this environment: a plain path entry (a .pth line is not a
    # site directory, so this environment's editable install of the package is not seen).
    purelib = _run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp, env
    ).strip()
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    cwd = tmp / "elsewhere"
    cwd.mkdir()
    where = _run([str(py), "-c", "import session_resume; print(session_resume.__file__)"], cwd, env)
    assert Path(where.strip()).is_relative_to(venv), where  # the wheel, not the checkout
    return py, env, cwd


def _cli(py: Path) -> list[str]:
    return [str(py), "-m", "session_resume", "conformance"]


def test_list_from_the_installed_wheel(installed: tuple[Path, dict[str, str], Path]) -> None:
    py, env, cwd = installed
    out = _run([*_cli(py), "list"], cwd, env)
    assert "read/zero-bytes\tvalidate\t§2.1" in out
    assert len(out.splitlines()) >= 466


def test_lint_from_the_installed_wheel(installed: tuple[Path, dict[str, str], Path]) -> None:
    py, env, cwd = installed
    out = _run([*_cli(py), "lint"], cwd, env)
    assert out.rstrip().endswith("ok"), out
    assert "problem" not in out
    spec = next(ln for ln in out.splitlines() if ln.startswith("spec: "))
    assert "_data/docs/spec.md" in spec.replace("\\", "/"), spec  # the bundled spec was used


def test_run_from_the_installed_wheel(installed: tuple[Path, dict[str, str], Path]) -> None:
    py, env, cwd = installed
    out = _run(
        [*_cli(py), "--adapter", f"{py} -m session_resume.conformance.adapter",
         "--cases", "read/*", "--cases", "recover/*", "--cases", "resume/*"],
        cwd, env,
    )  # fmt: skip
    last = out.rstrip().splitlines()[-1]
    assert last.endswith("passed, 0 failed"), out
    assert int(last.split()[0]) >= 160
