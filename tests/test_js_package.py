"""The JavaScript implementation as an npm package (conformance/js, issue 16).

- its package.json: name, version in lockstep with pyproject.toml, module, exports, bin,
  files, engines, license, and ajv + yaml + smol-toml as its only runtime dependencies;
- its code catalogue (lib/codes.json) is the Python catalogue's;
- its unit tests (`node --test`) and its type declarations (`tsc --noEmit`) pass;
- `npm pack` bundles the top-level schema/ byte for byte, and the tarball installs in an
  empty directory without the network (from the npm cache `npm ci` filled), where its CLI and
  its conformance adapter run;
- its CLI answers validate | resume | migrate | recover with the Python CLI's exit codes and
  JSON shapes, on the same inputs, and reads the project configuration as the Python CLI does
  (every setting that changes an answer, every bad file refused in the same bytes).

Node (>= 20) and `npm ci` are needed; SESSION_RESUME_NO_NODE=1 skips these tests instead.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from helpers import jstwins

from session_resume.core.codes import CATALOGUE

# Test tier (README "Test tiers"): Node and `npm ci`; the npm tarball tests are `packaging` too.
pytestmark = pytest.mark.node

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "conformance" / "js"
CLI_JS = PKG / "bin" / "session-resume.mjs"
NOW = "2026-03-02T12:00:00Z"


def _need(*tools: str) -> dict[str, str]:
    found = {t: shutil.which(t) for t in tools}
    missing = [t for t, p in found.items() if p is None]
    if not (REPO / "node_modules" / "yaml").is_dir():
        missing.append("node_modules (run `npm ci`)")
    if missing:
        if os.environ.get("SESSION_RESUME_NO_NODE") == "1":
            pytest.skip(f"missing {', '.join(missing)} (SESSION_RESUME_NO_NODE=1)")
        pytest.fail(f"the JavaScript package needs {', '.join(missing)}", pytrace=False)
    return {t: p for t, p in found.items() if p is not None}


def _run(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)


# --- package.json ---------------------------------------------------------------------------


def test_package_json_is_a_real_package() -> None:
    pkg = json.loads((PKG / "package.json").read_text())
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert pkg["name"] == "session-resume"
    assert pkg["version"] == pyproject["project"]["version"], "versions move in lockstep"
    assert "private" not in pkg
    assert pkg["type"] == "module"
    assert pkg["license"] == "MIT"
    assert pkg["engines"] == {"node": ">=20"}
    # smol-toml reads pyproject.toml's [tool.session-resume] (lib/config.mjs)
    assert set(pkg["dependencies"]) == {"ajv", "smol-toml", "yaml"}
    assert pkg["exports"]["."] == {"types": "./index.d.ts", "default": "./index.mjs"}
    assert pkg["bin"]["session-resume"] == "./bin/session-resume.mjs"
    assert "schema/" in pkg["files"] and "lib/" in pkg["files"]
    for rel in [pkg["exports"]["."]["default"], pkg["types"], *pkg["bin"].values()]:
        assert (PKG / rel).is_file(), rel
    root = json.loads((REPO / "package.json").read_text())
    assert root["workspaces"] == ["conformance/js"], "one `npm ci` installs the package's deps"
    lock = json.loads((REPO / "package-lock.json").read_text())
    assert lock["packages"]["conformance/js"]["version"] == pkg["version"], "lock is current"
    assert lock["packages"]["conformance/js"]["dependencies"] == pkg["dependencies"]


def test_code_catalogue_is_the_python_one() -> None:
    """lib/codes.json gives the JS CLI the severity, summary and fix of every code; it is
    generated from session_resume.core.codes by `nox -s docs` (docgen's `js_codes`)."""
    assert json.loads((PKG / "lib" / "codes.json").read_text()) == _catalogue()


def _catalogue() -> dict[str, dict[str, str]]:
    return {
        c.code: {"name": c.name, "severity": c.severity.value, "summary": c.summary, "fix": c.fix}
        for c in CATALOGUE.values()
    }


def test_no_hand_written_yaml_parser_and_no_builtin_list() -> None:
    sources = {p.name: p.read_text() for p in (PKG / "lib").glob("*.mjs")}
    assert 'from "yaml"' in sources["yaml.mjs"]
    # (lines as Biome's formatter lays them out, 100 columns)
    assert len(sources["yaml.mjs"].splitlines()) < 200, "a wrapper over the yaml package"
    assert not any("BUILTINS" in text for text in sources.values())
    versions = sorted(name for name, text in sources.items() if '"2.0"' in text)
    assert versions == ["migrate.mjs", "versions.mjs"], (
        f"a version named outside the registry and its migration steps: {versions}"
    )


# --- node --test and tsc ------------------------------------------------------------------


def test_node_unit_tests() -> None:
    tools = _need("node")
    proc = _run([tools["node"], "--test", "test/"], PKG)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout
    passed = int(proc.stdout.split("# pass ")[1].split()[0])
    assert passed >= 10


def test_type_declarations_check() -> None:
    tools = _need("node")
    tsc = REPO / "node_modules" / "typescript" / "bin" / "tsc"
    assert tsc.is_file(), "typescript (a devDependency of conformance/js) is installed by npm ci"
    proc = _run([tools["node"], str(tsc), "-p", "tsconfig.json"], PKG)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_lint_format_and_library_types() -> None:
    """Issue 31 point 6: `npm run check` (part of `npm test`) passes: Biome's linter (and its
    format check), tsc on index.d.ts and on the library's own JSDoc types (checkJs,
    tsconfig.lib.json). CI runs it here, in the node tier, and in `nox -s lint`."""
    tools = _need("node", "npm")
    for name in ("@biomejs/biome", "typescript", "@types/node"):
        assert (REPO / "node_modules" / name / "package.json").is_file(), f"npm ci installs {name}"
    lib = json.loads((PKG / "tsconfig.lib.json").read_text())
    assert lib["compilerOptions"]["checkJs"] is True and "lib/**/*.mjs" in lib["include"]
    proc = _run([tools["npm"], "run", "check"], PKG)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


# --- npm pack: the bundle, and an offline install in an empty directory --------------------


# `npm pack` writes the package's schema/ for a moment (prepack, postpack): packed in the
# checkout, a JS command another test ran meanwhile read a half-written bundle (a workflow
# "not found", seen in -n 2 runs). So the package is packed from a copy laid out as the
# repository is (conformance/js beside ../../schema); the checkout is never written.
@pytest.fixture(scope="module")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tools = _need("node", "npm")
    dest = tmp_path_factory.mktemp("pack")
    copy = tmp_path_factory.mktemp("checkout")
    pkg = copy / "conformance" / "js"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("node_modules", "schema"))
    shutil.copytree(REPO / "schema", copy / "schema")
    proc = _run([tools["npm"], "pack", "--pack-destination", str(dest), "--json"], pkg)
    assert proc.returncode == 0, proc.stderr
    name: str = json.loads(proc.stdout[proc.stdout.index("[") :])[0]["filename"]
    assert not (pkg / "schema").exists(), "postpack removes the bundled copy again"
    assert not (PKG / "schema").exists(), "the checkout is never written"
    return dest / name


@pytest.mark.packaging
@pytest.mark.serial
def test_pack_bundles_the_top_level_schema(tarball: Path) -> None:
    with tarfile.open(tarball) as tar:
        packed = {
            m.name.removeprefix("package/schema/"): tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.name.startswith("package/schema/") and m.isfile()
        }
        names = {m.name for m in tar.getmembers()}
    source = {
        p.relative_to(REPO / "schema").as_posix(): p.read_bytes()
        for p in (REPO / "schema").rglob("*")
        if p.is_file() and p.suffix in (".json", ".yaml")
    }
    assert packed == source, "the bundle is the top-level schema/, byte for byte"
    assert "package/lib/codes.json" in names and "package/index.d.ts" in names
    assert not any("test/" in n or n.endswith("skip.txt") for n in names)


@pytest.mark.packaging
@pytest.mark.serial
def test_pack_holds_the_license(tarball: Path) -> None:
    """The npm tarball carries the repository's LICENSE (it once shipped none)."""
    assert (PKG / "LICENSE").read_bytes() == (REPO / "LICENSE").read_bytes()
    with tarfile.open(tarball) as tar:
        member = tar.extractfile("package/LICENSE")
        assert member is not None and member.read() == (REPO / "LICENSE").read_bytes()


@pytest.mark.packaging
def test_every_export_has_type_declarations(tarball: Path, tmp_path: Path) -> None:
    """@arethetypeswrong/cli on the packed tarball: every entry of `exports` resolves to type
    declarations under node16 (from ESM) and bundler, with no problem reported. Its
    `esm-only` profile leaves out node16's `require` and node10: the package is ESM only
    (`"type": "module"`), so those resolutions cannot load it whatever its types say."""
    attw = REPO / "node_modules" / ".bin" / "attw"
    if not attw.is_file():
        pytest.skip("@arethetypeswrong/cli is not installed: run `npm ci` at the repository root")
    proc = _run([str(attw), str(tarball), "--profile", "esm-only", "--format", "json"], tmp_path)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, report.get("problems")
    ignored = {"node10", "node16-cjs"}
    problems = [p for p in report["analysis"]["problems"] if p.get("resolutionKind") not in ignored]
    assert problems == []
    exports = json.loads((PKG / "package.json").read_text())["exports"]
    entries = report["analysis"]["entrypoints"]
    assert set(entries) == set(exports)
    for name in exports:
        if name == "./package.json":
            continue
        entry = entries[name]["resolutions"]
        for kind in ("node16-esm", "bundler"):
            resolution = entry[kind]["resolution"]
            assert resolution["fileName"].endswith(".d.ts"), (name, kind, resolution)


def _offline_project(tarball: Path, where: Path) -> None:
    """package.json + package-lock.json for a consumer of the tarball, with the dependencies'
    versions and integrity taken from the repository's lock, so `npm ci --offline` takes
    every tarball from the npm cache (filled by `npm ci`) and never asks the registry."""
    shutil.copy(tarball, where / tarball.name)
    root = json.loads((REPO / "package-lock.json").read_text())["packages"]
    pkg = json.loads((PKG / "package.json").read_text())
    registry = _run(["npm", "config", "get", "registry"], where).stdout.strip() or (
        "https://registry.npmjs.org/"
    )
    registry = registry.rstrip("/") + "/"
    digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    packages: dict[str, Any] = {
        "": {
            "name": "consumer",
            "version": "1.0.0",
            "dependencies": {pkg["name"]: f"file:{tarball.name}"},
        },
        f"node_modules/{pkg['name']}": {
            "version": pkg["version"],
            "resolved": f"file:{tarball.name}",
            "integrity": f"sha512-{digest}",
            "license": pkg["license"],
            "dependencies": pkg["dependencies"],
            "bin": pkg["bin"],
            "engines": pkg["engines"],
        },
    }
    todo = list(pkg["dependencies"])
    while todo:
        name = todo.pop()
        key = f"node_modules/{name}"
        if key in packages:
            continue
        entry = dict(root[key])
        base = name.rsplit("/", 1)[-1]
        entry.setdefault("resolved", f"{registry}{name}/-/{base}-{entry['version']}.tgz")
        packages[key] = entry
        todo += list(entry.get("dependencies", {}))
    manifest = {"name": "consumer", "version": "1.0.0", "private": True}
    manifest["dependencies"] = packages[""]["dependencies"]
    (where / "package.json").write_text(json.dumps(manifest, indent=2))
    lock = {"name": "consumer", "version": "1.0.0", "lockfileVersion": 3, "requires": True}
    lock["packages"] = packages
    (where / "package-lock.json").write_text(json.dumps(lock, indent=2))


@pytest.mark.packaging
@pytest.mark.serial
def test_tarball_installs_offline_and_runs_cli_and_adapter(tarball: Path, tmp_path: Path) -> None:
    tools = _need("node", "npm")
    project = tmp_path / "consumer"
    project.mkdir()
    _offline_project(tarball, project)
    proc = _run([tools["npm"], "ci", "--offline", "--no-audit", "--no-fund"], project)
    assert proc.returncode == 0, (
        "`npm ci --offline` of the packed tarball failed; the npm cache must hold ajv and "
        f"yaml (run `npm ci` at the repository root first):\n{proc.stderr[-3000:]}"
    )
    installed = project / "node_modules" / "session-resume"
    assert (installed / "schema" / "session-state" / "3.0.json").is_file()
    assert not installed.is_symlink()
    cli = [tools["node"], str(project / "node_modules" / ".bin" / "session-resume")]
    sess = project / "agent-output" / "demo"
    common = ["--now", NOW, "--format", "json", "--session", "s1", "--root", str(project)]
    proc = _run([*cli, "init", "demo", "--project", "demo", *common], project)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["revision"] == 1
    proc = _run([*cli, "start", "1", "--session-dir", str(sess), *common], project)
    assert proc.returncode == 0, proc.stderr
    proc = _run([*cli, "validate", str(sess), "--now", NOW, "--format", "json"], project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["valid"] is True
    # the Python reference reads what the installed package wrote
    py = _run(
        [sys.executable, "-m", "session_resume", "validate", str(sess), "--now", NOW], project
    )
    assert py.returncode == 0, py.stdout + py.stderr
    # the installed adapter passes the whole suite but its skip list (conformance/adapters/js)
    adapter = project / "node_modules" / ".bin" / "session-resume-adapter"
    proc = _run(
        [
            sys.executable,
            "-m",
            "session_resume",
            "conformance",
            "--adapter",
            f"{tools['node']} {adapter}",
            "--suite",
            str(REPO / "conformance" / "cases"),
            "--skip",
            str(REPO / "conformance" / "adapters" / "js" / "skip.txt"),
            "--format",
            "json",
        ],
        REPO,
    )
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert report["summary"]["failed"] == 0
    assert report["summary"]["passed"] + report["summary"]["skipped"] == report["summary"]["total"]
    assert report["summary"]["passed"] >= 450
    assert (
        report["implementation"]["version"]
        == json.loads((PKG / "package.json").read_text())["version"]
    )


# --- the CLI against the Python CLI -------------------------------------------------------


def _both(args: list[str], cwd: Path) -> tuple[tuple[int, Any], tuple[int, Any]]:
    node = _need("node")["node"]
    py = _run([sys.executable, "-m", "session_resume", *args], cwd)
    js = _run([node, str(CLI_JS), *args], cwd)
    assert py.stdout, py.stderr
    assert js.stdout, js.stderr
    return (py.returncode, json.loads(py.stdout)), (js.returncode, json.loads(js.stdout))


def _codes(diags: list[dict[str, Any]]) -> list[str]:
    return sorted(d["code"] for d in diags)


def _case_files(group: str, case: str, dest: Path) -> Path:
    shutil.copytree(REPO / "conformance" / "cases" / group / case / "files", dest)
    return dest


@pytest.mark.parametrize(
    ("group", "case"),
    [
        ("valid", "apex-step-2-at-checkpoint"),
        ("read", "duplicate-key-nested"),
        ("read", "duplicate-key-top"),
        ("read", "lone-surrogate-escape"),
        ("semantic", "two-in-progress"),
        ("versions", "version-2-0"),
    ],
)
def test_cli_validate_matches_python(group: str, case: str, tmp_path: Path) -> None:
    src = REPO / "conformance" / "cases" / group / case
    if not src.is_dir():
        pytest.fail(f"fixture case {group}/{case} is missing from the suite")
    d = _case_files(group, case, tmp_path / "s")
    args = ["validate", str(d), "--root", str(tmp_path), "--now", NOW, "--format", "json"]
    (py_rc, py), (js_rc, js) = _both(args, tmp_path)
    assert js_rc == py_rc
    # the whole report: codes, severities, messages, pointers, lines and columns (a duplicate
    # key where the strict reader found it), hints, versions and workflows
    assert js == py


def test_cli_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    node = _need("node")["node"]
    args = ["validate", str(tmp_path / "nope"), "--format", "json"]
    py = _run([sys.executable, "-m", "session_resume", *args], tmp_path)
    js = _run([node, str(CLI_JS), *args], tmp_path)
    assert js.returncode == py.returncode == 2
    assert "SR100" in js.stderr and "SR100" in py.stderr


# --- validate's formats, text summaries and --project, as real subprocesses -----------------

SARIF_SCHEMA_FILE = REPO / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"

# Every finding with the reference's words and place (pointer, line, column): the reader's,
# the version's, the schema's, the semantic and workflow rules', the worklog's and the lease's.
VALIDATE_CASES = [
    ("valid", "apex-step-2-at-checkpoint"),
    ("valid", "dotagent-in-progress"),
    ("read", "duplicate-key-nested"),
    ("read", "duplicate-key-top"),
    ("read", "whitespace-space"),
    ("read", "corrupt-with-valid-bak"),
    ("read", "lone-surrogate-escape"),
    ("read", "json-unterminated-string"),
    ("read", "invalid-utf8-overlong"),
    ("read", "nan"),
    ("read", "top-level-array"),
    ("versions", "version-missing-means-1-0"),
    ("semantic", "two-in-progress"),
    ("schema", "many-errors-at-once"),
    ("schema", "status-uppercase"),
    ("schema", "workflow-uppercase"),  # a state's workflow is never read as a path (SR403)
    ("valid", "fixture-apex-minimal-core-as-built"),  # step 3_5 after 4: the text's key order
    ("read", "bom-twice"),
    ("read", "depth-10000-too-deep"),
    ("resume", "garbage-before-session-end"),  # the worklog's lines
    ("resume", "lease-bad-heartbeat-warning"),
    ("handoff", "handoff-sections-out-of-order"),
]


def _repo_copy(group: str, case: str, base: Path) -> Path:
    """A fresh repository (``.git`` marks its root) holding the case's files as
    ``agent-output/demo``; returns the root."""
    src = REPO / "conformance" / "cases" / group / case
    if not src.is_dir():
        pytest.fail(f"fixture case {group}/{case} is missing from the suite")
    (base / ".git").mkdir(parents=True)
    shutil.copytree(src / "files", base / "agent-output" / "demo")
    return base


def _twins(
    group: str, case: str, tmp_path: Path, argv: list[str], *, cwd: str = "."
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str], Path, Path]:
    """The Python and the JavaScript CLI, each in its own fresh copy of the case's repository,
    run from the same place in it (``cwd`` relative to the root)."""
    node = _need("node")["node"]
    py_root = _repo_copy(group, case, tmp_path / "py")
    js_root = _repo_copy(group, case, tmp_path / "js")
    for root in (py_root, js_root):
        (root / cwd).mkdir(parents=True, exist_ok=True)
    py = _run([sys.executable, "-m", "session_resume", *argv], py_root / cwd)
    js = _run([node, str(CLI_JS), *argv], js_root / cwd)
    return py, js, py_root, js_root


def _sarif_normal(text: str, root: Path) -> Any:
    """A SARIF log with the repository root written as ROOT."""
    doc = json.loads(text)
    run = doc["runs"][0]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base == root.resolve().as_uri() + "/", base
    run["originalUriBaseIds"]["%SRCROOT%"]["uri"] = "ROOT"
    return doc


@pytest.mark.parametrize(("group", "case"), VALIDATE_CASES)
def test_cli_validate_sarif_matches_python(group: str, case: str, tmp_path: Path) -> None:
    """The same SARIF log (rules, levels, messages, locations, fingerprints), valid against
    the official SARIF 2.1.0 schema (tests/fixtures/sarif), from the two CLIs."""
    import jsonschema

    argv = ["validate", "agent-output/demo", "--now", NOW, "--format", "sarif"]
    py, js, py_root, js_root = _twins(group, case, tmp_path, argv)
    assert js.returncode == py.returncode, js.stderr
    schema = json.loads(SARIF_SCHEMA_FILE.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    log = json.loads(js.stdout)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]
    assert errors == []
    assert _sarif_normal(js.stdout, js_root) == _sarif_normal(py.stdout, py_root)


@pytest.mark.parametrize(("group", "case"), VALIDATE_CASES)
def test_cli_validate_github_text_and_json_match_python(
    group: str, case: str, tmp_path: Path
) -> None:
    """GitHub annotations, the text report and the JSON report: the same bytes from the two
    CLIs (each twin's root, of the same length, written as the other's), the findings'
    messages, pointers, lines and columns included."""
    for fmt in ("github", "text", "json"):
        argv = ["validate", "agent-output/demo", "--now", NOW, "--format", fmt]
        py, js, py_root, js_root = _twins(group, case, tmp_path / fmt, argv)
        assert js.returncode == py.returncode, js.stderr
        assert js.stdout.replace(str(js_root), str(py_root)) == py.stdout, fmt
        assert js.stderr == py.stderr


def test_cli_github_escaping_matches_python(tmp_path: Path) -> None:
    """A hostile session directory name (`%`, `,`, `:` and a newline) is escaped in the
    annotation's properties exactly as the reference escapes it; text output escapes the
    newline, so no line can start a workflow command."""
    name = "a%b,c:d\n::error::forged"
    argv = ["validate", name, "--now", NOW, "--format", "github"]
    node = _need("node")["node"]
    outs = []
    for impl in ("py", "js"):
        root = tmp_path / impl
        (root / ".git").mkdir(parents=True)
        shutil.copytree(
            REPO / "conformance" / "cases" / "read" / "duplicate-key-top" / "files", root / name
        )
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        text = [*argv[:-2], "--format", "text"]
        outs.append((_run([*cmd, *argv], root), _run([*cmd, *text], root)))
    (py_gh, py_text), (js_gh, js_text) = outs
    assert js_gh.returncode == py_gh.returncode == 1
    assert js_gh.stdout.count("\n") == py_gh.stdout.count("\n") == 1
    props = [
        out.split("::")[1].replace(f"file={tmp_path}/{impl}/", "file=ROOT/")
        for impl, out in (("py", py_gh.stdout), ("js", js_gh.stdout))
    ]
    assert props[0] == props[1]
    assert "file=ROOT/a%25b%2Cc%3Ad%0A%3A%3Aerror%3A%3Aforged" in props[1]
    assert (
        js_text.stdout.splitlines()[0].split(": SR121")[0]
        == (py_text.stdout.splitlines()[0].split(": SR121")[0])
    )
    for out in (py_text.stdout, js_text.stdout):
        assert not any(line.lstrip().startswith(":") for line in out.splitlines()), out


def test_cli_project_from_a_subdirectory_matches_python(tmp_path: Path) -> None:
    """`--project NAME` names the project's session under the repository root from anywhere
    inside the repository (docs/config.md), and a relative DIR is looked up under the root
    first: from `docs/deep`, both CLIs validate, resume and write the same session."""
    common = ["--now", NOW, "--format", "json", "--session", "s1"]
    argvs = [
        ["validate", "--project", "demo", "--now", NOW, "--format", "json"],
        ["resume", "--project", "demo", *common],
        ["resume", "agent-output/demo", *common],
        ["checkpoint", "2", "phase_3_cost", "--project", "demo", *common],
        ["validate", "agent-output/demo", "--now", NOW, "--format", "json"],
    ]
    node = _need("node")["node"]
    roots = {
        impl: _repo_copy("valid", "apex-step-2-at-checkpoint", tmp_path / impl)
        for impl in ("py", "js")
    }
    for argv in argvs:
        res = {}
        for impl, root in roots.items():
            here = root / "docs" / "deep"
            here.mkdir(parents=True, exist_ok=True)
            cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
            res[impl] = _run([*cmd, *argv], here)
        py, js = res["py"], res["js"]
        assert js.returncode == py.returncode, (argv, py.stdout + py.stderr, js.stdout + js.stderr)
        pj, jj = json.loads(py.stdout), json.loads(js.stdout)
        if argv[0] == "validate":
            assert [f["path"] for f in jj["files"]] == [f["path"] for f in pj["files"]]
            assert jj["files"][0]["path"] == "../../agent-output/demo/00-session-state.json"
            assert jj["summary"] == pj["summary"]
        elif argv[0] == "resume":
            assert jj["action"] == pj["action"]
            assert jj["session_dir"] == str(roots["js"] / "agent-output" / "demo")
            assert pj["session_dir"] == str(roots["py"] / "agent-output" / "demo")
            # the state's own project directory: its writers are named by --project
            cmds = [
                _protocol(json.loads(out.replace(str(roots[impl]), "ROOT"))["commands"])
                for impl, out in (("js", js.stdout), ("py", py.stdout))
            ]
            assert cmds[0] == cmds[1]
        else:
            assert (jj["revision"], jj["step"]) == (pj["revision"], pj["step"])
    for impl, root in roots.items():
        assert not (root / "docs" / "deep" / "agent-output").exists(), impl
    state = roots["js"] / "agent-output" / "demo" / "00-session-state.json"
    assert json.loads(state.read_text())["steps"]["2"]["sub_step"] == "phase_3_cost"


def test_cli_migrate_and_recover_text_match_python(tmp_path: Path) -> None:
    """The text summaries of `migrate` and `recover`: the same lines, the messages of the
    codes (prose) aside."""

    def prose_free(out: str) -> list[str]:
        # a finding's message, and a code's words inside a summary line, are prose
        lines = [
            re.sub(r"^(\S+: SR\d{3} \w+): .*?( \[/[^\]]*\])?$", r"\1\2", x)
            for x in out.splitlines()
        ]
        words = r"(SR\d{3}) .*?(?=; SR\d{3} |\)(?:; the corrupt| — FAILED|$))"
        return [re.sub(words, r"\1", line) for line in lines]

    for n, (group, case, argv) in enumerate(
        [
            ("versions", "version-2-0", ["migrate", "agent-output/demo", "--check"]),
            ("versions", "version-2-0", ["migrate", "agent-output/demo"]),
            ("recover", "corrupt-no-bak", ["recover", "agent-output/demo"]),
            ("recover", "json-error-valid-bak", ["recover", "agent-output/demo"]),
            ("recover", "corrupt-bak-old-version", ["recover", "agent-output/demo"]),
        ]
    ):
        py, js, _, _ = _twins(group, case, tmp_path / str(n), [*argv, "--now", NOW])
        assert js.returncode == py.returncode, js.stderr
        assert prose_free(js.stdout) == prose_free(py.stdout), (py.stdout, js.stdout)


_PROSE_KEYS = frozenset({"message", "hint", "why", "reason"})


def _same_session(value: object, sid: str) -> object:
    """``value`` with the session id this answer chose written as ``SID``: each CLI chooses
    a new random one when the caller names none (docs/spec.md §10.3) and names it in every
    writer it prints; that it chose one, and where it is named, must agree."""
    if isinstance(value, dict):
        return {k: _same_session(v, sid) for k, v in value.items()}
    if isinstance(value, list):
        return [_same_session(v, sid) for v in value]
    if isinstance(value, str):
        return value.replace(sid, "SID")
    return value


def _protocol(value: object) -> object:
    """``value`` with every prose field replaced by its type (docs/conformance.md, "Prose")."""
    if isinstance(value, dict):
        return {k: type(v).__name__ if k in _PROSE_KEYS else _protocol(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_protocol(v) for v in value]
    return value


def test_cli_resume_migrate_recover_match_python(tmp_path: Path) -> None:
    # resume: a session mid-run, asked by the orchestrator and by a step; an optional step to
    # start (the briefing's skip command); a fresh template state
    for n, (group, case, step) in enumerate(
        [
            ("valid", "apex-step-2-at-checkpoint", []),
            ("valid", "apex-step-2-at-checkpoint", ["--step", "2"]),
            ("resume", "step-pending-start", ["--step", "3"]),
            ("valid", "apex-fresh-template", []),
        ]
    ):
        d = _case_files(group, case, tmp_path / f"r{n}")
        args = ["resume", str(d), "--root", str(tmp_path), "--now", NOW, "--format", "json"]
        (py_rc, py), (js_rc, js) = _both([*args, *step], tmp_path)
        assert js_rc == py_rc == 0
        # the same keys, the briefing for a fresh agent (docs/spec.md §10) included
        assert set(js) == set(py)
        # no --session: both choose a new id (16 hex digits) and print it in every writer
        assert js["session"]["new"] is py["session"]["new"] is True
        assert re.fullmatch(r"[0-9a-f]{16}", js["session"]["id"]), js["session"]
        assert re.fullmatch(r"[0-9a-f]{16}", py["session"]["id"]), py["session"]
        keys = ("action", "step", "sub_step", "reasons", "warnings", "skip_files", "commands")
        for key in (*keys, "briefing", "plan", "alternatives", "session_dir"):
            # prose (a finding's message and hint, why a file is loaded or skipped) is
            # compared by presence and type only (docs/conformance.md, "Prose")
            assert _protocol(_same_session(js[key], js["session"]["id"])) == _protocol(
                _same_session(py[key], py["session"]["id"])
            ), key
        writers = [c["run"] for c in js["commands"] if " session start" in c["run"]]
        assert writers and all(f"--session {js['session']['id']}" in w for w in writers)
        # named: the same id in both, new false
        (_, py), (_, js) = _both([*args, *step, "--session", "s1"], tmp_path)
        assert js["session"] == py["session"] == {"id": "s1", "new": False}
        assert _protocol(js["commands"]) == _protocol(py["commands"])
    # migrate: a 2.0 state in twin directories, with --check, then for real
    for mode in (["--check"], []):
        outs = []
        for impl in ("py", "js"):
            # twin repositories: the same session directory path in each (a bare artifact
            # name is resolved against it, docs/spec.md §9.2 rule 8.8)
            root = tmp_path / f"m{impl}{len(mode)}"
            d = _case_files("versions", "version-2-0", root / "agent-output" / "demo")
            outs.append(
                (
                    d,
                    [
                        "migrate",
                        str(d),
                        "--root",
                        str(root),
                        "--now",
                        NOW,
                        "--format",
                        "json",
                        *mode,
                    ],
                )
            )
        node = _need("node")["node"]
        py = _run([sys.executable, "-m", "session_resume", *outs[0][1]], tmp_path)
        js = _run([node, str(CLI_JS), *outs[1][1]], tmp_path)
        assert js.returncode == py.returncode, js.stdout + js.stderr
        pj, jj = json.loads(py.stdout), json.loads(js.stdout)
        assert set(jj) == set(pj) == {"files", "problems"}
        assert [set(f) for f in jj["files"]] == [set(f) for f in pj["files"]]
        assert [(f["status"], f["from_version"]) for f in jj["files"]] == [
            (f["status"], f["from_version"]) for f in pj["files"]
        ]
        # one note per change, the values kept aside included (SR151 and the x-legacy keys,
        # docs/spec.md §9.6)
        assert [_codes(f["notes"]) for f in jj["files"]] == [
            _codes(f["notes"]) for f in pj["files"]
        ]
        # the two diff algorithms may order operations differently; applied, they agree
        case = REPO / "conformance" / "cases" / "versions" / "version-2-0" / "files"
        source = json.loads((case / "00-session-state.json").read_text())
        for f_js, f_py in zip(jj["files"], pj["files"], strict=True):
            assert jsonpatch.apply_patch(source, f_js["patch"]) == jsonpatch.apply_patch(
                source, f_py["patch"]
            )
        if not mode:
            a = json.loads((outs[0][0] / "00-session-state.json").read_text())
            b = json.loads((outs[1][0] / "00-session-state.json").read_text())
            assert a == b, "the same migrated document"
    # recover: a corrupt state with a valid .bak, one without, one with an older .bak that is
    # migrated and restored, one with a .bak no migration repairs (docs/spec.md §5)
    for case in (
        "json-error-valid-bak",
        "corrupt-no-bak",
        "corrupt-bak-old-version",
        "corrupt-bak-unmigratable",
    ):
        src = REPO / "conformance" / "cases" / "recover" / case
        if not src.is_dir():
            pytest.fail(f"fixture case recover/{case} is missing from the suite")
        res = []
        for impl in ("py", "js"):
            d = _case_files("recover", case, tmp_path / f"c{impl}{case}")
            args = ["recover", str(d), "--root", str(tmp_path), "--now", NOW, "--format", "json"]
            cmd = (
                [sys.executable, "-m", "session_resume"]
                if impl == "py"
                else [_need("node")["node"], str(CLI_JS)]
            )
            res.append(_run([*cmd, *args], tmp_path))
        py, js = res
        assert js.returncode == py.returncode == 0, js.stderr
        pj, jj = json.loads(py.stdout), json.loads(js.stdout)
        assert set(jj) == set(pj)
        assert jj["action"] == pj["action"]
        assert jj["migrated_from"] == pj["migrated_from"]
        assert _codes(jj["found"]) == _codes(pj["found"])
        assert _codes(jj["backup_problems"]) == _codes(pj["backup_problems"])
        assert (jj["corrupt_kept_as"] is None) == (pj["corrupt_kept_as"] is None)


# --- validate's options, byte for byte (issue 29 point 5) ---------------------------------

# Each input's findings are worded and placed by the JavaScript package as by the reference
# (lib/findings.mjs, lib/locate.mjs, the reader's words in lib/jsonread.mjs): the two outputs
# are compared byte for byte. A JSON syntax error that CPython words the same in every
# version this project supports (3.11 on: 3.13 rewords a trailing comma) stands for the
# reader's: a file cut short mid-write.
OPTION_INPUTS = [
    ("valid", "apex-step-2-at-checkpoint"),
    ("read", "duplicate-key-top"),
    ("read", "corrupt-with-valid-bak"),  # SR110 and SR130 in the reference's words
    ("semantic", "two-in-progress"),
    ("read", "json-truncated-mid-write"),
    ("schema", "many-errors-at-once"),
    ("versions", "version-2-0"),
]

# (format, options, stdin): what both CLIs offer; `-` reads the state from standard input
OPTION_RUNS = [
    ("text", [], False),
    ("text", ["--select", "SR3", "--ignore", "SR306"], False),
    ("text", ["--select", "SR999"], False),  # an unknown code: valid, selects nothing
    ("text", ["-q", "--color", "always"], False),
    ("text", ["--quiet", "--color", "never", "--ignore", "SR1,SR308"], False),
    ("text", ["--strict", "--select", "SR308", "--exit-zero"], False),
    ("text", ["--stdin-filename", "given/name.json", "--color", "always"], True),
    ("json", ["--ignore", "SR30"], False),
    ("json", ["--select", "SR1", "--select", "SR308", "--strict"], False),
    ("json", [], True),
    ("github", ["--select", "SR306,SR121"], False),
    ("github", ["--stdin-filename", "x.json", "--exit-zero"], True),
    ("sarif", ["--ignore", "SR306"], False),
    ("sarif", ["--select", "ALL"], True),
]


def _twin_run(
    argv: list[str], roots: dict[str, Path], stdin: bytes | None
) -> dict[str, subprocess.CompletedProcess[bytes]]:
    node = _need("node")["node"]
    out = {}
    for impl, root in roots.items():
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
        out[impl] = subprocess.run(
            [*cmd, *argv], cwd=root, input=stdin or b"", capture_output=True, timeout=300, env=env
        )
    return out


@pytest.mark.parametrize(("group", "case"), OPTION_INPUTS)
@pytest.mark.parametrize(("fmt", "options", "stdin"), OPTION_RUNS)
def test_cli_validate_options_match_python(
    group: str, case: str, fmt: str, options: list[str], stdin: bool, tmp_path: Path
) -> None:
    """`validate` with --select/--ignore (prefixes, repeated, comma-separated, an unknown
    code), --exit-zero, --strict, -q/--quiet, --color and `-` with --stdin-filename: the same
    exit code, standard output and standard error from the two CLIs, as subprocesses."""
    roots = {impl: _repo_copy(group, case, tmp_path / impl) for impl in ("py", "js")}
    state = REPO / "conformance" / "cases" / group / case / "files" / "00-session-state.json"
    path = "-" if stdin else "agent-output/demo"
    argv = ["validate", path, "--now", NOW, "--format", fmt, *options]
    res = _twin_run(argv, roots, state.read_bytes() if stdin else None)
    py, js = res["py"], res["js"]
    assert js.returncode == py.returncode, (py.stdout + py.stderr, js.stdout + js.stderr)
    # each twin's root (same length) written as the other's: absolute paths, file URIs
    js_out = js.stdout.decode().replace(str(roots["js"]), str(roots["py"]))
    py_out = py.stdout.decode()
    assert js.stderr == py.stderr
    assert js_out == py_out


_FORMAT_SAMPLE = {
    "duplicate-key-nested.yaml",
    "anchor.yaml",
    "tab-indent.yaml",
    "step-wrong-types.yaml",
    "unknown-legacy-checkpoint.yaml",
    "not-there.yaml",
}


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_cli_validate_refusals_match_python(fmt: str, tmp_path: Path) -> None:
    """A bad --select, `-` with another path, standard input over --max-size: the same exit
    code and bytes (json and sarif still write a report that says the run was refused)."""
    roots = {
        impl: _repo_copy("valid", "apex-step-2-at-checkpoint", tmp_path / impl)
        for impl in ("py", "js")
    }
    state = REPO / "conformance/cases/valid/apex-step-2-at-checkpoint/files/00-session-state.json"
    for argv, stdin in [
        (["agent-output/demo", "--select", "SR3,X1"], None),
        (["agent-output/demo", "--ignore", "sr3"], None),
        (["-", "agent-output/demo"], b"{}"),
        (["-", "--max-size", "100", "--stdin-filename", "big.json"], state.read_bytes()),
    ]:
        res = _twin_run(["validate", *argv, "--now", NOW, "--format", fmt], roots, stdin)
        py, js = res["py"], res["js"]
        assert js.returncode == py.returncode, (argv, py.stderr, js.stderr)
        assert py.returncode in (1, 2)
        # the SARIF log's %SRCROOT% is where each twin ran (same length)
        js_out = js.stdout.replace(bytes(roots["js"]), bytes(roots["py"]))
        assert (js_out, js.stderr) == (py.stdout, py.stderr), argv


# --- the text summaries, byte for byte (issue 29 point 5) ---------------------------------

# One resume case per action, and the leases, orphans and warnings whose words differ most
# (the whole group was compared once by hand: docs/conformance.md lists the suite).
RESUME_TEXT_CASES = [
    "continue-implicit-start",
    "fresh-start-empty-dir",
    "invalid-state-migrate-salvage",
    "migrate-first-v2",
    "needs-recovery-absent-valid-bak",
    "needs-recovery-corrupt-no-bak",
    "step-skipped-next-step",
    "step-complete-offer-rerun",
    "step-prerequisites-incomplete",
    "refuse-newer-version",
    "step-in-progress-no-checkpoint",
    "many-warnings",
    "orphan-stale-heartbeat",
    "worklog-checkpoint-after-restored-state",
    "orchestrator-old-state",
    "session-active-live-lease",
    "gate-handover-start",
    "step-unknown-closed-workflow",
    "orchestrator-workflow-complete",
    "dotagent-checkpoint",
    "generic-free-checkpoint",
]

_NEW_ID = jstwins.NEW_ID


def _case_argv(case: Path) -> list[str]:
    """The resume case's own arguments as command-line options."""
    import yaml

    spec = yaml.safe_load((case / "case.yaml").read_text(encoding="utf-8"))
    args = spec.get("arguments") or {}
    argv = ["--now", spec.get("now", NOW)]
    for key, option in (("step", "--step"), ("session", "--session"), ("workflow", "--workflow")):
        if args.get(key):
            argv += [option, str(args[key])]
    if args.get("stale_seconds") is not None:
        argv += ["--stale-after", str(args["stale_seconds"])]
    return argv


@pytest.mark.parametrize("case", RESUME_TEXT_CASES)
def test_cli_resume_text_matches_python(case: str, tmp_path: Path) -> None:
    """`resume`'s text answer (plan_text, ported as lib/plantext.mjs; the codes' words as
    lib/resumemessages.mjs) is the reference's byte for byte, for a session named by its
    directory as typed and by --project with --root: the same lines, words, commands and
    exit code. A session id either CLI chose at random is the one difference allowed."""
    src = REPO / "conformance" / "cases" / "resume" / case
    if not src.is_dir():
        pytest.fail(f"fixture case resume/{case} is missing from the suite")
    node = _need("node")["node"]
    for n, naming in enumerate((["agent-output/demo"], ["--project", "demo", "--root", "."])):
        outs = []
        for impl in ("py", "js"):
            root = tmp_path / f"{impl}{n}"
            (root / ".git").mkdir(parents=True)
            dest = root / "agent-output" / "demo"
            if (src / "files").is_dir():
                shutil.copytree(src / "files", dest)
            else:
                dest.mkdir(parents=True)
            cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
            proc = _run([*cmd, "resume", *naming, *_case_argv(src)], root)
            out = _NEW_ID.sub("SID", proc.stdout.replace(str(root), "ROOT"))
            outs.append((proc.returncode, out, proc.stderr))
        assert outs[1] == outs[0], naming


_sequence_in_both = jstwins.sequence_in_both
_tree = jstwins.tree


_FRESH_PLANTED = {
    "00-handoff.md": "# handoff\n",
    "01-requirements.md": "an artifact: it stays\n",
    "00-session-state.json.corrupt-20260101T000000Z": "{",
    "00-session-state.v2.0.json": "{}\n",
    ".00-session-state.json.0a1b2c.tmp": "torn",
}


def test_cli_init_fresh_matches_python(tmp_path: Path) -> None:
    """`init --fresh`: the SR710 refusal that names it, the archive of the old files (the
    lease kept; artifacts stay), `archive_keep` pruning, a live lease of another session
    refusing before anything moves -- the same output and the same files from the two CLIs,
    in twin repositories."""
    node = _need("node")["node"]
    d = "agent-output/demo"
    s0 = ["--session", "s0"]

    def at(minute: int) -> list[str]:
        return ["--now", f"2026-03-02T12:{minute:02d}:00Z"]

    def plant(root: Path) -> None:
        for name, text in _FRESH_PLANTED.items():
            (root / d / name).write_text(text)

    steps: list[list[str] | Callable[[Path], None]] = [
        ["init", "demo", *s0, *at(0)],
        ["start", "1", "--project", "demo", *s0, *at(1)],
        ["init", "demo", *s0, *at(2)],  # SR710, naming --fresh
        plant,
        ["init", "demo", "--fresh", *s0, *at(5)],
        ["init", "demo", "--fresh", *s0, "--format", "json", *at(6)],
        ["init", "demo", "--fresh", *s0, *at(7)],  # the oldest archive pruned (keep 2)
        ["init", "demo", "--fresh", *at(8)],  # s0's lease is live: SR511, nothing archived
        ["start", "1", "--project", "demo", *s0, *at(8)],  # the state rotates to .bak
        lambda root: (root / d / "00-session-state.json").unlink(),
        ["init", "demo", *s0, *at(9)],  # only .bak holds a state: SR710, naming --fresh
        ["init", "demo", "--fresh", "--session-dir", d, *s0, *at(10)],
    ]
    outs: dict[str, list[tuple[int, str, str]]] = {}
    trees = {}
    for impl in ("py", "js"):
        root = tmp_path / impl
        (root / ".git").mkdir(parents=True)
        (root / ".session-resume.yaml").write_text("archive_keep: 2\n")
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        outs[impl] = []
        for step in steps:
            if callable(step):
                step(root)
                continue
            proc = _run([*cmd, *step], root)
            out, err = (x.replace(str(root), "ROOT") for x in (proc.stdout, proc.stderr))
            outs[impl].append((proc.returncode, out, err))
        trees[impl] = _tree(root)
    assert outs["js"] == outs["py"]
    assert [rc for rc, _, _ in outs["py"]] == [0, 0, 1, 0, 0, 0, 1, 0, 1, 0]
    assert "init demo --fresh --session s0`" in outs["py"][2][2]
    assert "SR511" in outs["py"][6][2] and "holds a valid state" in outs["py"][8][2]
    assert trees["js"] == trees["py"]
    archives = sorted({k.split("/")[3] for k in trees["py"] if "/.archive/" in k})
    assert archives == ["20260302T120700Z_demo", "20260302T121000Z_demo"]
    last = {k.split("/")[-1] for k in trees["py"] if "/.archive/20260302T121000Z_demo/" in k}
    assert last == {"00-session-state.json.bak", "00-worklog.jsonl"}
    kept = {k.split("/")[-1] for k in trees["py"] if "/.archive/20260302T120700Z_demo/" in k}
    assert kept == {"00-session-state.json", "00-worklog.jsonl"}
    assert trees["py"][f"{d}/01-requirements.md"] == _FRESH_PLANTED["01-requirements.md"]
    assert f"{d}/00-session.active" in trees["py"]  # the lease stays: the same session goes on


def test_cli_unknown_option_and_help(tmp_path: Path) -> None:
    """An option the command does not take is refused (exit 2) with the options it takes, not
    parseArgs' advice to pass it after `--` (which would make it an argument); `--help` after
    a command prints the usage (exit 0), as the reference's does."""
    node = _need("node")["node"]
    (tmp_path / ".git").mkdir()
    bad = _run([node, str(CLI_JS), "init", "demo", "--frsh"], tmp_path)
    assert bad.returncode == 2 and bad.stdout == ""
    assert "unrecognized arguments: --frsh (this command's options: " in bad.stderr
    assert "--fresh, " in bad.stderr and '-- "' not in bad.stderr
    assert not (tmp_path / "agent-output").exists()
    for argv in (["init", "--help"], ["resume", "agent-output/demo", "-h"]):
        shown = _run([node, str(CLI_JS), *argv], tmp_path)
        assert shown.returncode == 0 and shown.stdout.startswith("usage: session-resume")


@pytest.mark.parametrize("planted", ["file", "link"])
def test_cli_init_fresh_refusals_match_python(planted: str, tmp_path: Path) -> None:
    """An `.archive` that is a file (SR102) or a link to a decoy directory (SR105): the same
    refusal from both CLIs, nothing moved, the decoy untouched."""
    node = _need("node")["node"]
    outs = {}
    for impl in ("py", "js"):
        root = tmp_path / impl / "repo"
        (root / ".git").mkdir(parents=True)
        decoy = tmp_path / impl / "decoy"
        decoy.mkdir()
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        assert _run([*cmd, "init", "demo", "--now", NOW, "--session", "s0"], root).returncode == 0
        sd = root / "agent-output" / "demo"
        if planted == "file":
            (sd / ".archive").write_text("not a directory")
        else:
            (sd / ".archive").symlink_to(decoy)
        before = _tree(root)
        proc = _run([*cmd, "init", "demo", "--fresh", "--now", NOW, "--session", "s0"], root)
        outs[impl] = (proc.returncode, proc.stdout, proc.stderr.replace(str(root), "ROOT"))
        assert _tree(root) == before and list(decoy.iterdir()) == []
    assert outs["js"] == outs["py"]
    assert outs["py"][0] == 1 and ("SR102" if planted == "file" else "SR105") in outs["py"][2]


def test_cli_write_summaries_match_python(tmp_path: Path) -> None:
    """What the writers print as text: the lease line (started, adopted), each write's summary
    with the step's name, revision and session, the restart's attempt, the counts -- the
    reference's words byte for byte, written by the two CLIs into twin repositories; and on
    standard error what a completion leaves unrecorded (SR716, SR717), as the reference warns."""
    node = _need("node")["node"]
    common = ["--now", NOW]
    named = ["--project", "demo", "--session", "s0", *common]
    argvs = [
        ["init", "demo", "--session", "s0", *common],
        ["start", "1", *named],
        ["checkpoint", "1", "phase_2_workload", *named],
        ["decide", "region", "westeurope", *named],
        ["finding", "add", "Auth flow", *named],
        ["finding", "resolve", "Auth flow", *named],
        ["decide", "--log", "--title", "T", "--choice", "C", "--rationale", "R", *named],
        ["skip", "3", "--reason", "not needed", *named],
        ["start", "1", "--force", *named],
        # completions that leave work unrecorded: warned on standard error (SR716 the
        # checkpoints, SR717 the gate's decisions), written anyway
        ["transition", "--complete", "1", "--start", "2", "--decision", "compliance=GDPR", *named],
        ["complete", "2", *named],
        # no session named: an implicit lease, then adopted by a named write
        ["init", "x", "--session-dir", "agent-output/x", *common],
        ["start", "1", "--session-dir", "agent-output/x", "--session", "s9", *common],
        # s0's explicit lease is live: refused (SR511) for a write naming none or another id,
        # the commands the refusal names runnable as printed (this call's own, completed)
        ["start", "2", "--project", "demo", *common],
        [
            "decide",
            "region",
            "x",
            "--session-dir",
            "agent-output/demo",
            "--session",
            "s2",
            "--root",
            ".",
            *common,
        ],
        ["checkpoint", "2", "phase_3_cost", "--project", "demo", "--format", "json", *common],
    ]
    outs = _sequence_in_both(argvs, tmp_path, node, new_ids=True)
    assert outs["js"] == outs["py"]
    assert [rc for rc, _, _ in outs["py"]] == [0] * (len(argvs) - 3) + [1, 1, 1]
    assert "SR511" in outs["py"][-2][2] and "--session s0`" in outs["py"][-3][2]
    warned = [
        argv[0] for argv, (_, _, err) in zip(argvs, outs["py"], strict=True) if "SR716" in err
    ]
    assert warned == ["transition", "complete"]
    assert (
        "SR717 warning" in outs["py"][10][2] and "decide architecture_pattern" in outs["py"][10][2]
    )


def test_cli_gate_approval_and_fresh_start_match_python(tmp_path: Path) -> None:
    """The moments with a record: `resume` of a session directory still to create (the fresh
    start, `init` first), `init` naming the lease it took, `approve` of a gate (refused before
    the step is complete and once recorded), the answers after it (no gate open, the next
    step's owner after a session break) -- the same
    text and JSON from the two CLIs, and the same state and worklog. The reference renders
    the handoff with the approval (the package renders none: `render` is the toolchain's)."""
    node = _need("node")["node"]
    common = ["--now", NOW]
    named = ["--project", "demo", "--session", "s0", *common]
    argvs = [
        ["resume", "--project", "demo", *common],
        ["resume", "agent-output/demo", "--format", "json", *common],
        ["init", "demo", "--workflow", "apex", "--session", "s0", *common],
        ["start", "1", *named],
        ["approve", "1", *named],
        ["complete", "1", *named],
        ["resume", "--step", "1", "--project", "demo", "--session", "s0", *common],
        ["approve", "1", "--decision", "region=swedencentral", "--decision", "budget=9", *named],
        ["approve", "1", *named],
        ["resume", "--project", "demo", "--session", "s0", "--format", "json", *common],
        ["start", "2", *named],
        ["resume", "--project", "demo", "--session", "s0", *common],
    ]
    outs = _sequence_in_both(argvs, tmp_path, node, new_ids=True)
    rendered = re.compile(r"; rendered (ROOT/)?agent-output/demo/00-handoff\.md")
    py = [(rc, rendered.sub("", out), err) for rc, out, err in outs["py"]]
    js = outs["js"]
    for i, (a, b) in enumerate(zip(py, js, strict=True)):
        if argvs[i][-1] == "json" or "--format" in argvs[i]:
            assert (a[0], json.loads(a[1])) == (b[0], json.loads(b[1])), argvs[i]
        else:
            assert a == b, argvs[i]
    assert [rc for rc, _, _ in py] == [0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]
    assert py[0][1].startswith("action: fresh_start, step 1")
    assert "SR710" in py[4][2] and "complete 1" in py[4][2]  # before the step is complete
    assert "session s0 holds the lease" in py[2][1]
    assert "approve 1 --project demo --session s0" in py[6][1]
    assert "already approved (D001)" in py[8][2]
    after = json.loads(py[9][1])
    assert (after["action"], after["step"], after["plan"]["open_gate"]) == ("start", "2", None)
    assert "after Gate 2 is approved this chat ends" in py[11][1]
    trees = {impl: _tree(tmp_path / impl) for impl in ("py", "js")}
    assert trees["py"].pop("agent-output/demo/00-handoff.md").startswith("# demo")
    assert trees["js"] == trees["py"]


# --- the lock: the two implementations exclude each other ----------------------------------


def test_lock_excludes_the_other_implementation(tmp_path: Path) -> None:
    """Where util-linux `flock` exists, the JS package takes the reference's flock on
    00-session-state.json.lock: a session held by one implementation is refused (SR160) to
    the other until it is released. The waits are bounded by lock timeouts, not measured."""
    from session_resume.storage import store

    tools = _need("node")
    if shutil.which("flock") is None:
        pytest.skip(
            "util-linux `flock` is not installed: the JS package then uses its own lock file, "
            "which does not exclude a Python writer (conformance/js/lib/lock.mjs)"
        )
    sess = tmp_path / "agent-output" / "demo"
    common = ["--root", str(tmp_path), "--now", NOW, "--format", "json", "--session", "s1"]
    js_cli = [tools["node"], str(CLI_JS)]
    proc = _run([*js_cli, "init", "demo", "--session-dir", str(sess), *common], tmp_path)
    assert proc.returncode == 0, proc.stderr
    before = (sess / "00-session-state.json").read_bytes()
    env = {**os.environ, "SESSION_RESUME_LOCK_TIMEOUT": "1"}
    start = [*js_cli, "start", "1", "--session-dir", str(sess), *common]
    # Python holds the lock: the JavaScript writer is refused, nothing written
    with store.locked(store.Session(sess, tmp_path)):
        held = subprocess.run(start, capture_output=True, text=True, timeout=60, env=env)
    assert held.returncode == 1, held.stdout + held.stderr
    assert [d["code"] for d in json.loads(held.stdout)["diagnostics"]] == ["SR160"]
    assert (sess / "00-session-state.json").read_bytes() == before
    # released: the same write goes through
    ok = subprocess.run(start, capture_output=True, text=True, timeout=60, env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # JavaScript holds the lock: the Python writer is refused until it lets go
    holder = subprocess.Popen(
        [
            tools["node"],
            "--input-type=module",
            "-e",
            "import { withLock } from 'session-resume'; import { readFileSync } from 'node:fs';"
            f"withLock({json.dumps(str(sess))},"
            " () => { console.log('held'); readFileSync(0); });",
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        doc = json.loads((sess / "00-session-state.json").read_text())
        with pytest.raises(store.StoreError) as refused:
            store.save(sess, doc, now=datetime.now(UTC), lock_timeout=0.5)
        assert [d.code for d in refused.value.diagnostics] == ["SR160"]
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    assert holder.returncode == 0


# --- the project configuration, byte for byte (issue 29 point 5) ---------------------------

# `.session-resume.yaml` or pyproject.toml's [tool.session-resume] (docs/config.md): the
# JavaScript CLI reads it as the reference does (conformance/js/lib/config.mjs). Each planted
# configuration is run by both CLIs in twin repositories (a `.git`, the session
# `agent-output/demo` of valid/apex-step-2-at-checkpoint) and every command's exit code,
# standard output and standard error are compared byte for byte, each twin's root written
# ROOT and a session id either CLI chose at random SID. Hostile files lead only to decoys
# beside the twin's root, inside the test's temporary directory.

CUSTOM_WORKFLOW = "wf/custom.yaml"  # generic's rules, id `custom`, sessions under work/


def _plant(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def _custom_workflow(root: Path) -> None:
    text = (REPO / "schema" / "workflows" / "generic.yaml").read_text(encoding="utf-8")
    text = text.replace("id: generic", "id: custom").replace(
        'session_dir: "agent-output/{project}"', 'session_dir: "work/{project}"'
    )
    assert "id: custom" in text and "work/{project}" in text
    _plant(root, {CUSTOM_WORKFLOW: text})


def _config_twins(
    tmp_path: Path,
    setup: Any,
    argvs: list[list[str]],
    *,
    demo: tuple[str, str] | None = ("valid", "apex-step-2-at-checkpoint"),
    stdin: bytes | None = None,
) -> list[tuple[int, str, str]]:
    """Both CLIs, each in its own twin repository prepared by ``setup(root)``, run ``argvs``
    in order from the root; asserts every (exit code, stdout, stderr) is the same and returns
    the reference's."""
    node = _need("node")["node"]
    outs: dict[str, list[tuple[int, str, str]]] = {}
    for impl in ("py", "js"):
        root = tmp_path / impl
        (root / ".git").mkdir(parents=True)
        if demo is not None:
            shutil.copytree(
                REPO / "conformance" / "cases" / demo[0] / demo[1] / "files",
                root / "agent-output" / "demo",
            )
        setup(root)
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
        env.pop("SESSION_RESUME_SESSION", None)
        outs[impl] = []
        for argv in argvs:
            proc = subprocess.run(
                [*cmd, *argv],
                cwd=root,
                input=stdin or b"",
                capture_output=True,
                timeout=300,
                env=env,
            )
            outs[impl].append(
                (
                    proc.returncode,
                    _NEW_ID.sub("SID", proc.stdout.decode().replace(str(root), "ROOT")),
                    _NEW_ID.sub("SID", proc.stderr.decode().replace(str(root), "ROOT")),
                )
            )
    for argv, js, py in zip(argvs, outs["js"], outs["py"], strict=True):
        assert js == py, argv
    return outs["py"]


_VALIDATE_FORMATS = ("text", "json", "github", "sarif")


@pytest.mark.parametrize("where", ["yaml", "pyproject", "pyproject-inline"])
def test_cli_config_selection_and_docs_url_match_python(where: str, tmp_path: Path) -> None:
    """`select`, `ignore`, `per-file-ignores` and `docs_url`, from .session-resume.yaml and from
    pyproject.toml (a [tool.session-resume] table, and an inline `session-resume = {…}` under
    [tool]): validate in every format, with --select replacing the configured `select` and
    --ignore adding to its `ignore`; the same bytes, and the configuration has its effect."""
    settings = {
        "select": ["SR3", "SR4", "SR6"],
        "ignore": ["SR308"],
        "per-file-ignores": {"agent-output/legacy-*/*": ["SR306"]},
        "docs_url": "https://example.com/sr/docs/",
    }
    if where == "yaml":
        files = {".session-resume.yaml": json.dumps(settings)}  # JSON is YAML
    elif where == "pyproject":
        files = {
            "pyproject.toml": '[project]\nname = "x"\n\n[tool.session-resume]\n'
            + "".join(f'"{k}" = {json.dumps(v)}\n' for k, v in settings.items() if k[0] != "p")
            + '\n[tool.session-resume.per-file-ignores]\n"agent-output/legacy-*/*" = ["SR306"]\n'
        }
    else:
        files = {
            "pyproject.toml": '[tool]\nsession-resume = { select = ["SR3", "SR4", "SR6"], '
            'ignore = ["SR308"], per-file-ignores = { "agent-output/legacy-*/*" = ["SR306"] }, '
            'docs_url = "https://example.com/sr/docs/" }\n'
        }

    def setup(root: Path) -> None:
        _plant(root, files)
        for name in ("two", "legacy-two"):
            shutil.copytree(
                REPO / "conformance/cases/semantic/two-in-progress/files",
                root / "agent-output" / name,
            )

    argvs = [
        ["validate", "agent-output", "--now", NOW, "--format", fmt, *extra]
        for fmt in _VALIDATE_FORMATS
        for extra in ([], ["--select", "SR4"], ["--ignore", "SR306"])
    ]
    out = _config_twins(tmp_path, setup, argvs)
    text, text_select, text_ignore = out[0], out[1], out[2]
    # the configuration's effect: SR306 reported in agent-output/two only (per-file-ignores),
    # SR308 in neither (ignore); --select replaces the configured select, --ignore adds
    assert text[0] == 1 and "agent-output/two/00-session-state.json:16:12: SR306" in text[1]
    assert "legacy-two/" not in text[1] and "SR308" not in text[1]
    assert text_select[0] == 0 and "SR306" not in text_select[1]
    assert text_ignore[0] == 0 and "SR306" not in text_ignore[1]
    sarif = json.loads(out[9][1])
    uris = {r["helpUri"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert uris == {"https://example.com/sr/docs/codes/SR306.md"}


def test_cli_config_limits_and_session_root_match_python(tmp_path: Path) -> None:
    """`max_size` (SR112), `clock_skew_seconds` (SR305) and `session_root` (what a bare
    `validate` checks; a link leading it out of the repository refused, SR105): the same
    bytes, each setting with its effect."""
    early = "2026-03-02T10:05:00Z"  # 600 s before the state's `updated`
    cases: list[tuple[str, list[list[str]], Any]] = [
        (
            "max_size: 1000\nclock_skew_seconds: 900\n",
            [
                ["validate", "agent-output/demo", "--now", early, "--format", fmt]
                for fmt in _VALIDATE_FORMATS
            ]
            + [["validate", "-", "--now", early, "--stdin-filename", "s.json"]],
            lambda out: "SR112" in out[0][1] and "SR112" in out[-1][2] and "SR305" not in out[0][1],
        ),
        (
            "max_size: 100000\nclock_skew_seconds: 0\n",
            [["validate", "agent-output/demo", "--now", early, "--format", "json"]],
            lambda out: "SR305" in out[0][1] and "SR112" not in out[0][1],
        ),
        (
            "session_root: sessions\n",
            [["validate", "--now", NOW, "--format", fmt] for fmt in _VALIDATE_FORMATS],
            lambda out: out[0][0] == 0 and "1 file(s) checked" in out[0][1],
        ),
        (
            # a link leading the session root out of the repository: refused (SR105)
            "session_root: linked\n",
            [["validate", "--now", NOW, "--format", fmt] for fmt in _VALIDATE_FORMATS],
            lambda out: all(rc == 2 for rc, _, _ in out) and "SR105 error" in out[0][2],
        ),
        (
            "session_root: elsewhere\n",
            [["validate", "--now", NOW, "--format", fmt] for fmt in _VALIDATE_FORMATS],
            lambda out: out[0][0] == 2 and "SR100" in out[0][2] and "elsewhere" in out[0][2],
        ),
    ]
    state = (
        REPO / "conformance/cases/valid/apex-step-2-at-checkpoint/files/00-session-state.json"
    ).read_bytes()
    for n, (config, argvs, effect) in enumerate(cases):

        def setup(root: Path, config: str = config) -> None:
            _plant(root, {".session-resume.yaml": config})
            if "sessions" in config:
                (root / "agent-output").rename(root / "sessions")
            if "linked" in config:  # a decoy beside the twin's root, in the temporary directory
                decoy = root.parent / f"{root.name}-decoy"
                shutil.copytree(root / "agent-output", decoy)
                (root / "linked").symlink_to(decoy, target_is_directory=True)

        out = _config_twins(tmp_path / str(n), setup, argvs, stdin=state)
        assert effect(out), (config, out)


def test_cli_config_workflow_matches_python(tmp_path: Path) -> None:
    """`workflow` naming a workflow file of the repository: `init` creates the session where
    that workflow keeps them (work/NAME) and every command names it by --project there; a
    state naming the configured workflow's id is read by it (no SR403); a write to a missing
    state suggests the `init --workflow` that recreates it. `workflow: dotagent` (a built-in)
    moves --project to memory/NAME. The same bytes from both CLIs."""
    common = ["--now", NOW]
    named = ["--project", "demo", "--session", "s0", *common]
    argvs = [
        ["init", "demo", "--session", "s0", *common],
        ["start", "1", *named],
        ["checkpoint", "1", "drafted", *named, "--format", "json"],
        ["resume", "--project", "demo", "--session", "s1", *common],
        ["resume", "work/demo", "--session", "s0", *common, "--format", "json"],
        ["validate", "--project", "demo", *common],
        ["validate", "work/demo", *common, "--format", "sarif"],
        ["migrate", "work/demo", *common, "--check"],
        ["complete", "1", *named],
        ["recover", "--project", "demo", *common, "--format", "json"],
    ]

    def setup(root: Path) -> None:
        _custom_workflow(root)
        _plant(root, {".session-resume.yaml": f"workflow: {CUSTOM_WORKFLOW}\n"})

    out = _config_twins(tmp_path / "file", setup, argvs, demo=None)
    assert [rc for rc, _, _ in out] == [0] * len(argvs), out
    # repository-relative, as every path the CLI prints inside the repository
    assert "initialised work/demo/00-session-state.json (project demo, workflow custom" in out[0][1]
    assert '"workflow": "custom"' in out[4][1]
    # the state gone: a write names the init that recreates it with the configured workflow
    gone = [["start", "2", *named]]

    def setup_gone(root: Path) -> None:
        setup(root)
        (root / "work" / "demo").mkdir(parents=True)

    out = _config_twins(tmp_path / "gone", setup_gone, gone, demo=None)
    assert out[0][0] == 1 and "init demo --workflow wf/custom.yaml" in out[0][2], out
    # a built-in: --project follows its session_dir
    builtin = [
        ["init", "demo", "--session", "s0", *common],
        ["start", "1", *named, "--format", "json"],
        ["validate", "--project", "demo", *common, "--format", "json"],
    ]
    out = _config_twins(
        tmp_path / "builtin",
        lambda root: _plant(root, {".session-resume.yaml": "workflow: dotagent\n"}),
        builtin,
        demo=None,
    )
    assert [rc for rc, _, _ in out] == [0, 0, 0] and "memory/demo" in out[0][1], out
    # a state naming its own workflow (apex) is read by it, not by the configured one; its
    # writers are named as a printed writer resolves them: `--project demo` would name the
    # configured workflow's memory/demo, so they name the directory
    out = _config_twins(
        tmp_path / "own",
        lambda root: _plant(root, {".session-resume.yaml": "workflow: dotagent\n"}),
        [["resume", "agent-output/demo", *common], ["validate", "agent-output/demo", *common]],
    )
    assert "checkpoint 2 phase_3_cost --session-dir agent-output/demo --session SID" in out[0][1], (
        out
    )
    assert out[1][0] == 0 and "SR404" not in out[1][1], out


def test_cli_config_stale_after_matches_python(tmp_path: Path) -> None:
    """`stale_after_seconds`: another session's lease, its heartbeat 60 s old, is live by
    default and an orphan once the configuration says 30 s, for `resume` and for a write
    (--stale-after still wins for resume); the same bytes from both CLIs."""
    case = ("resume", "session-active-live-lease")
    argvs = [
        ["resume", "agent-output/demo", "--now", NOW, "--session", "s2"],
        ["resume", "agent-output/demo", "--now", NOW, "--session", "s2", "--stale-after", "900"],
        ["resume", "agent-output/demo", "--now", NOW, "--session", "s2", "--format", "json"],
        ["decide", "region", "westeurope", "--project", "demo", "--session", "s2", "--now", NOW],
    ]
    default = _config_twins(tmp_path / "default", lambda root: None, argvs, demo=case)
    short = _config_twins(
        tmp_path / "short",
        lambda root: _plant(root, {".session-resume.yaml": "stale_after_seconds: 30\n"}),
        argvs,
        demo=case,
    )
    assert default[0][1] != short[0][1] and default[1][1] == short[1][1]
    assert default[3][0] == 1 and "SR511" in default[3][2]
    assert short[3][1] != default[3][1]


# Bad configurations: (name, files planted in the root, what a decoy beside the root holds).
# Each is refused before anything is read or written: exit 2, the reference's code, words,
# file, line and hint.
BAD_CONFIGS: list[tuple[str, dict[str, str | bytes]]] = [
    ("broken-utf8", {".session-resume.yaml": b"select: [SR3]\n# \xc3\x28\n"}),
    ("truncated-utf8", {".session-resume.yaml": b"select: [SR3]\n# \xe2\x82"}),
    ("duplicate-key", {".session-resume.yaml": "select: [SR3]\nselect: [SR4]\n"}),
    ("unknown-key", {".session-resume.yaml": "max_size: 100\nselct: [SR3]\n"}),
    ("bool-for-integer", {".session-resume.yaml": "max_size: true\n"}),
    ("float-for-integer", {".session-resume.yaml": "archive_keep: 2.0\n"}),
    ("out-of-range", {".session-resume.yaml": "stale_after_seconds: 0\n"}),
    ("string-for-integer", {".session-resume.yaml": 'clock_skew_seconds: "600"\n'}),
    ("code-not-list", {".session-resume.yaml": "select: SR3\n"}),
    ("bad-code", {".session-resume.yaml": "ignore: [SR3, X9]\n"}),
    ("table-not-table", {".session-resume.yaml": "per-file-ignores: [SR3]\n"}),
    ("empty-glob", {".session-resume.yaml": 'per-file-ignores: {"": [SR3]}\n'}),
    ("docs-url", {".session-resume.yaml": "docs_url: ftp://example.com/docs/\n"}),
    ("session-root-dotdot", {".session-resume.yaml": "session_root: ../out\n"}),
    ("not-a-mapping", {".session-resume.yaml": "- select\n"}),
    ("anchor", {".session-resume.yaml": "select: &codes [SR3]\n"}),
    ("tag", {".session-resume.yaml": "max_size: !!int 100\n"}),
    ("deep-flow", {".session-resume.yaml": "select: " + "[" * 70 + "]" * 70 + "\n"}),
    ("deep-flow-huge", {".session-resume.yaml": "select: " + "[" * 500_000 + "\n"}),
    (
        "deep-block",
        {".session-resume.yaml": "select:\n" + "".join(" " * i + "-\n" for i in range(1, 70))},
    ),
    ("huge", {".session-resume.yaml": "#" * (1024 * 1024) + "\n"}),
    ("workflow-missing", {".session-resume.yaml": "workflow: wf/nope.yaml\n"}),
    ("workflow-outside", {".session-resume.yaml": "workflow: ../ROOTNAME-decoy/decoy.yaml\n"}),
    ("workflow-absolute", {".session-resume.yaml": "workflow: DECOY/decoy.yaml\n"}),
    ("toml-unknown", {"pyproject.toml": "[tool.session-resume]\nselct = 1\n"}),
    ("toml-float", {"pyproject.toml": "[tool.session-resume]\nmax_size = 1.5\n"}),
    ("toml-not-table", {"pyproject.toml": '[tool]\n"session-resume" = 3\n'}),
    (
        "toml-deep",
        {"pyproject.toml": "[tool.session-resume]\nx = " + "[" * 70 + "]" * 70 + "\n"},
    ),
    ("toml-huge", {"pyproject.toml": "[tool.session-resume]\n" + "#" * (1024 * 1024) + "\n"}),
]
# links and special files: planted by code (name -> kind)
BAD_NODES = [
    "link-out",
    "link-dangling",
    "fifo",
    "directory",
    "pyproject-fifo",
    "pyproject-link-out",
]
# the commands both CLIs offer, each a bad configuration refuses
BAD_CONFIG_RUNS: list[list[str]] = [
    ["validate", "agent-output/demo", "--now", NOW, "--format", "json"],
    ["validate", "agent-output/demo", "--now", NOW, "--format", "sarif"],
    ["validate", "--now", NOW],
    ["resume", "agent-output/demo", "--now", NOW, "--session", "s1"],
    ["resume", "--project", "demo", "--now", NOW, "--format", "json"],
    ["start", "2", "--project", "demo", "--session", "s1", "--now", NOW, "--format", "json"],
    ["checkpoint", "2", "x", "--session-dir", "agent-output/demo", "--now", NOW],
    ["init", "other", "--session", "s1", "--now", NOW],
    ["migrate", "agent-output/demo", "--now", NOW, "--check"],
    ["recover", "agent-output/demo", "--now", NOW, "--format", "json"],
]


def _plant_bad(root: Path, name: str) -> None:
    decoy = root.parent / f"{root.name}-decoy"
    decoy.mkdir(exist_ok=True)
    (decoy / "decoy.yaml").write_text("select: [SR3]\n", encoding="utf-8")
    (decoy / "pyproject.toml").write_text('[tool.session-resume]\nselect = ["SR3"]\n')
    if name in dict(BAD_CONFIGS):
        files = {
            rel: c.replace("ROOTNAME", root.name).replace("DECOY", str(decoy))
            if isinstance(c, str)
            else c
            for rel, c in dict(BAD_CONFIGS)[name].items()
        }
        if name == "workflow-outside":
            shutil.copy(REPO / "schema/workflows/generic.yaml", decoy / "decoy.yaml")
        _plant(root, files)
    elif name == "link-out":
        (root / ".session-resume.yaml").symlink_to(decoy / "decoy.yaml")
    elif name == "link-dangling":
        (root / ".session-resume.yaml").symlink_to(root / "nowhere.yaml")
    elif name == "fifo":
        os.mkfifo(root / ".session-resume.yaml")
    elif name == "directory":
        (root / ".session-resume.yaml").mkdir()
    elif name == "pyproject-fifo":
        os.mkfifo(root / "pyproject.toml")
    elif name == "pyproject-link-out":
        (root / "pyproject.toml").symlink_to(decoy / "pyproject.toml")
    else:
        pytest.fail(f"no such bad configuration {name}")


BAD_NAMES = [n for n, _ in BAD_CONFIGS] + BAD_NODES
# every command for these; three of them, in turn, for the others (each command is run
# against several bad files; a run is two CLI processes)
EVERY_COMMAND = {"duplicate-key", "link-out", "toml-unknown"}


@pytest.mark.parametrize("name", BAD_NAMES)
def test_cli_bad_config_is_refused_as_python_refuses_it(name: str, tmp_path: Path) -> None:
    """A bad configuration (broken or cut UTF-8, a duplicate or unknown key, a wrong type or
    range, an anchor or tag, nesting 70 or 500,000 deep, over 1 MiB, a workflow outside the
    repository, a symlink leading out of its directory or nowhere, a FIFO, a directory, a
    pyproject.toml FIFO or link out): every command both CLIs offer refuses it with exit 2 and
    the same bytes (SR405 or SR105, the file, the line, the hint), and writes nothing."""
    runs = BAD_CONFIG_RUNS
    if name not in EVERY_COMMAND:
        n = BAD_NAMES.index(name)
        runs = [BAD_CONFIG_RUNS[(3 * n + k) % len(BAD_CONFIG_RUNS)] for k in range(3)]
    out = _config_twins(tmp_path, lambda root: _plant_bad(root, name), runs)
    for argv, (rc, stdout, stderr) in zip(runs, out, strict=True):
        assert rc == 2, (argv, stdout, stderr)
        # text on standard error; a writer's --format json: only its {"ok": false} document
        assert re.search(r"SR(405|105) error", stderr) or re.search(
            r'"code": "SR(405|105)"', stdout
        ), (argv, stdout, stderr)
    for impl in ("py", "js"):
        assert not (tmp_path / impl / "agent-output" / "other").exists()
        assert not (tmp_path / impl / "agent-output" / "demo" / "00-worklog.jsonl").exists()


# Configurations that are not YAML, one of each kind of syntax error the reference's parser
# (ruamel) names: a tab, reserved and directive characters, open quotes and brackets, a value
# running on into a mapping, lines indented off their siblings, stray closing brackets, keys
# without values, a second document.
_YAML_SYNTAX_ERRORS = [
    "a:\tb\n\tc: d\n",
    "a: @b\n",
    "a: %b\n",
    "a: `b`\n",
    "workflow: 'x\n",
    'workflow: "x\n',
    "select: [SR3\n",
    "select: [SR1,\n  SR2\n",
    "ignore: {a: 1\n",
    "select: [SR1\nignore: x\n",
    "select: {a: [1, 2}\n",
    "select: [a, {b: 1]\n",
    "a: b: c\n",
    'id: "a": b\n',
    "key: value\n  bad: indent\n",
    "a:\n  b: c: d\n",
    "x:\n  - a\n - b\n",
    "- - a\n - b\n",
    "a: b #c\n  d: e\n",
    "a: >\n  b\n c: d\n",
    "a:\n  - b\n  c: d\n",
    "a:\n  - b\n\n  # note\n  c: d\n",
    "a:\n    b: 1\n  c: 2\n",
    "a: [b]c\n",
    'a: "b"c\n',
    "a: [b, c]]\n",
    "a: {b: c}}\n",
    "a: ]\n",
    "a: }\n",
    "- ]\n",
    "a\nb: c\n",
    "a: b\n- c\n",
    "- a\n- b: c\n  d\n",
    "a: |\n x\ny\n",
    "a: b\n---\nc: d\n",
    # a tab between tokens outside a flow collection: ruamel skips only spaces there
    "archive_keep:\t3\n",
    "archive_keep: 3\t\n",
    "archive_keep: 3 \t# note\n",
    "workflow: x\ty\n",
    "a\tb: c\n",
    "select: {a: 1,\tb: 2}\t\n",
    "select:\n  - SR1\t\n",
]
# Tabs where ruamel takes them too: inside quoted scalars, comments, flow collections and a
# block scalar's content (each file otherwise a configuration both refuse for its key `a`).
_YAML_TABS_ACCEPTED = [
    'a: "x\ty"\n',
    "a: 'x\ty'\n",
    "# a\tb\na: 3\n",
    "a: 3 # x\t y\n",
    "a: [SR1,\tSR2]\n",
    "a: {b: 1,\tc: 2}\n",
    "a: |\n  x\ty\n",
    "a: >-\n  x\ty\n\n  z\tz\nb: 3\n",
]


def test_cli_config_yaml_syntax_errors_match_python(tmp_path: Path) -> None:
    """A configuration that is not YAML: the same code, file, line, column, words (ruamel's,
    which lib/yamlwords.mjs gives for the `yaml` package's errors) and hint from both CLIs,
    byte for byte, for each kind of syntax error above; and the tabs both take."""
    node = _need("node")["node"]
    roots = {impl: tmp_path / impl for impl in ("py", "js")}
    for root in roots.values():
        (root / ".git").mkdir(parents=True)
    differ = []
    expected = [(t, "SR405 error: invalid YAML: ") for t in _YAML_SYNTAX_ERRORS]
    expected += [(t, "unknown key 'a'") for t in _YAML_TABS_ACCEPTED]
    for text, words in expected:
        outs = []
        for impl, root in roots.items():
            (root / ".session-resume.yaml").write_text(text)
            cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
            proc = _run([*cmd, "validate", "--now", NOW], root)
            outs.append((proc.returncode, proc.stdout, proc.stderr.replace(str(root), "ROOT")))
        assert outs[0][0] == 2 and words in outs[0][2], (text, outs[0])
        if outs[1] != outs[0]:
            differ.append((text, outs[0][2], outs[1][2]))
    assert differ == []


def test_cli_directory_without_a_state_matches_python(tmp_path: Path) -> None:
    """A session root or directory that holds no state (SR101): `validate` in every format and
    `migrate` (text, JSON, dry run) print the reference's words ("no 00-session-state.json
    under this directory"), not the code's catalogue summary, and exit as it does."""
    node = _need("node")["node"]
    runs = [
        ["validate"],
        ["validate", "agent-output/x"],
        *(["validate", "agent-output/x", "--format", f] for f in ("json", "github", "sarif")),
        ["migrate", "agent-output/x"],
        ["migrate", "agent-output/x", "--format", "json"],
        ["migrate", "agent-output/x", "--dry-run"],
    ]
    outs = {}
    for impl in ("py", "js"):
        root = tmp_path / impl
        (root / ".git").mkdir(parents=True)
        (root / "agent-output" / "x").mkdir(parents=True)
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        outs[impl] = [
            (proc.returncode, *(x.replace(str(root), "ROOT") for x in (proc.stdout, proc.stderr)))
            for proc in (_run([*cmd, *argv, "--now", NOW], root) for argv in runs)
        ]
    assert outs["js"] == outs["py"]
    assert all(rc != 0 for rc, _, _ in outs["py"])
    assert "no 00-session-state.json under this directory" in outs["py"][0][2]


_HOSTILE_RUNS = [
    ["validate", "agent-output/fifo"],
    ["validate", "agent-output/zero"],
    ["validate", "agent-output/bad", "--format", "json"],
    ["validate"],  # the session root: the git-ignored session is not searched
    ["resume", "agent-output/fifo"],
    ["resume", "agent-output/bad"],
    ["resume", "nothere"],
    ["resume", "nothere", "--format", "json"],
    ["recover", "agent-output/fifo"],
    ["recover", "agent-output/fifo", "--format", "json"],
    ["migrate", "agent-output/fifo"],
    ["migrate", "nothere", "agent-output/demo"],
    ["migrate", "nothere", "--format", "json"],
    ["start", "1", "--session-dir", "agent-output/zero", "--session", "s0"],
    ["start", "1", "--session-dir", "agent-output/bad", "--session", "s0"],
]


def test_cli_hostile_and_missing_paths_match_python(tmp_path: Path) -> None:
    """A state that is a FIFO (never opened: `resume` used to block on it), empty, or holds a
    duplicate key; a path that does not exist; a git-ignored session: the same exit code and
    bytes from both CLIs -- `recover` refuses the FIFO (SR102), a writer names what the reader
    found at its place, discovery honours .gitignore as the reference's `git ls-files` does."""
    node = _need("node")["node"]
    outs = {}
    for impl in ("py", "js"):
        root = tmp_path / impl
        (root / ".git").mkdir(parents=True)
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        assert _run([*cmd, "init", "demo", "--now", NOW, "--session", "s0"], root).returncode == 0
        out = root / "agent-output"
        for name in ("fifo", "zero", "bad", "ignored"):
            (out / name).mkdir()
        os.mkfifo(out / "fifo" / "00-session-state.json")
        (out / "zero" / "00-session-state.json").write_bytes(b"")
        (out / "bad" / "00-session-state.json").write_text('{"a": 1, "a": 2}')
        shutil.copy(out / "demo" / "00-session-state.json", out / "ignored")
        (root / ".gitignore").write_text("agent-output/ignored/\n")
        _run(["git", "init", "-q"], root)
        outs[impl] = []
        for argv in _HOSTILE_RUNS:
            proc = _run([*cmd, *argv, "--now", NOW], root, timeout=60)
            # `resume nothere`: a fresh start, whose plan names a new session id
            out_, err = (
                _NEW_ID.sub("SID", x.replace(str(root), "ROOT")) for x in (proc.stdout, proc.stderr)
            )
            outs[impl].append((argv, proc.returncode, out_, err))
    assert outs["js"] == outs["py"]
    by_argv = {tuple(a): (rc, o, e) for a, rc, o, e in outs["py"]}
    assert by_argv[("recover", "agent-output/fifo")][0] == 1
    # demo, bad and zero: git lists no FIFO, and the ignored session is not searched
    assert "3 file(s) checked" in by_argv[("validate",)][1]
    assert "ignored" not in by_argv[("validate",)][1]


def test_cli_yaml_keys_that_are_not_strings_match_python(tmp_path: Path) -> None:
    """A key that YAML reads as a number, a boolean or null (`1:`, `1.5:`, `true:`, `~:`):
    named as the reference names it (`1`, `1.5`, `True`, `None`) and, like the reference,
    given no line, in a configuration and in a workflow; a quoted `"1":` is a string, with
    its line."""
    node = _need("node")["node"]
    roots = {impl: tmp_path / impl for impl in ("py", "js")}
    for root in roots.values():
        (root / ".git").mkdir(parents=True)
        (root / "agent-output").mkdir()
    generic = (REPO / "schema" / "workflows" / "generic.yaml").read_text()
    differ = []
    for key in ("1", "1.5", "0x10", "1e3", "true", "~", "", '"1"'):
        for where in ("config", "workflow"):
            outs = []
            for impl, root in roots.items():
                (root / ".session-resume.yaml").unlink(missing_ok=True)
                argv = ["validate", "--now", NOW]
                if where == "config":
                    (root / ".session-resume.yaml").write_text(f"{key}: x\n")
                else:
                    (root / "wf.yaml").write_text(f"{generic}{key}: x\n")
                    argv += ["--workflow", "wf.yaml"]
                py = [sys.executable, "-m", "session_resume"]
                cmd = py if impl == "py" else [node, str(CLI_JS)]
                proc = _run([*cmd, *argv], root)
                outs.append((proc.returncode, proc.stdout, proc.stderr.replace(str(root), "ROOT")))
            assert outs[0][0] == 2, (key, where, outs[0])
            if outs[1] != outs[0]:
                differ.append((key, where, outs[0][2], outs[1][2]))
    assert differ == []


def test_cli_config_that_configures_nothing_matches_python(tmp_path: Path) -> None:
    """What is no configuration, as the reference reads it: a zero-byte .session-resume.yaml
    (every default, its directory the root), a pyproject.toml that is not TOML (a key set
    twice) or has no [tool.session-resume] (the search goes on upwards to `.git`); the same
    bytes from both CLIs, run from a subdirectory."""
    argvs = [
        ["validate", "demo", "--now", NOW, "--format", "json", "--select", "SR3"],
        ["resume", "demo", "--now", NOW, "--session", "s1"],
        ["validate", "--now", NOW],
    ]
    for n, files in enumerate(
        [
            {"agent-output/.session-resume.yaml": b""},
            {
                "agent-output/pyproject.toml": '[tool.session-resume]\nignore = ["SR3"]\n'
                "ignore = []\n"
            },
            {"agent-output/pyproject.toml": '[project]\nname = "x"\n[tool.other]\nselect = 1\n'},
        ]
    ):
        out = _config_twins(tmp_path / str(n), lambda root, f=files: _plant(root, f), [])
        node = _need("node")["node"]
        res = {}
        for impl in ("py", "js"):
            here = tmp_path / str(n) / impl / "agent-output"
            cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
            res[impl] = [
                tuple(
                    x.replace(str(here.parent), "ROOT") if isinstance(x, str) else x
                    for x in (p.returncode, p.stdout, p.stderr)
                )
                for p in (_run([*cmd, *argv], here) for argv in argvs)
            ]
        assert res["js"] == res["py"], files
        # a zero-byte file makes agent-output the root: `demo` is found under it, and a bare
        # validate finds no agent-output/agent-output (SR100); else the root is `.git`'s
        assert res["py"][0][0] == 0, res["py"]
        assert (res["py"][2][0] == 2 and "SR100" in res["py"][2][2]) is (n == 0), res["py"][2]
        assert out == []


def test_cli_project_among_builtin_workflows_matches_python(tmp_path: Path) -> None:
    """No workflow named or configured: `--project NAME` is the built-in workflow's directory
    that holds the session (memory/NAME for a dotagent one); two holding one is refused with
    SR185, listing this call's own command line with each directory (docs/config.md); a
    configured workflow settles it. The same bytes from both CLIs, every format."""
    common = ["--now", NOW, "--session", "s1"]
    argvs = [
        ["resume", "--project", "demo", *common],
        ["validate", "--project", "demo", "--now", NOW, "--format", "json"],
        ["validate", "--project", "demo", "--now", NOW, "--format", "sarif"],
        ["start", "2", "--project", "demo", *common],
        ["checkpoint", "2", "designs_written", "--project", "demo", *common, "--format", "json"],
        ["recover", "--project", "demo", "--now", NOW],
    ]
    dotagent = REPO / "conformance/cases/valid/dotagent-in-progress/files"

    def one(root: Path) -> None:
        shutil.copytree(dotagent, root / "memory" / "demo")

    out = _config_twins(tmp_path / "one", one, argvs, demo=None)
    assert out[0][0] == 0 and "memory/demo" in out[0][1], out[0]
    assert out[3][0] == 0, out[3]

    def two(root: Path) -> None:
        one(root)
        shutil.copytree(
            REPO / "conformance/cases/valid/apex-step-2-at-checkpoint/files",
            root / "agent-output" / "demo",
        )

    out = _config_twins(tmp_path / "two", two, argvs[:5], demo=None)
    assert all(rc == 2 for rc, _, _ in out), out
    assert "SR185" in out[0][2] and "`session-resume resume agent-output/demo --now" in out[0][2]
    assert "`session-resume start 2 --session-dir memory/demo --now" in out[3][2], out[3]
    settled = _config_twins(
        tmp_path / "settled",
        lambda root: (two(root), _plant(root, {".session-resume.yaml": "workflow: dotagent\n"})),
        argvs[:1],
        demo=None,
    )
    assert settled[0][0] == 0 and "memory/demo" in settled[0][1], settled


# --- migrate --dry-run: the reference's JSON Patch and diff, byte for byte (issue 29 point 5) -

# Cases left out of the byte-for-byte comparison, each a known limit of the JavaScript package
# (conformance/js/README.md, "Known limits": numbers are IEEE doubles, integers beyond 2^53
# lose precision): a current_step beyond 2^53, which the reference keeps exactly.
_DRY_RUN_KNOWN_LIMITS = {"upstream-current-step-beyond-2-53"}

# Every migrate input of the suite (but its known limits) and every state file of
# tests/fixtures, each its own session directory of one repository (one run of each CLI per
# format).
_DRY_RUN_INPUTS = [
    *(
        p / "files"
        for p in sorted((REPO / "conformance" / "cases" / "migrate").iterdir())
        if p.name not in _DRY_RUN_KNOWN_LIMITS
    ),
    *sorted((REPO / "tests" / "fixtures" / "migrate").glob("*.json")),
    *sorted((REPO / "tests" / "fixtures" / "upstream").glob("*--*.json")),
    *sorted((REPO / "tests" / "fixtures" / "schema").glob("[0-9].0/*/*.json")),
]


def _dry_run_repo(root: Path) -> list[str]:
    (root / ".git").mkdir(parents=True)
    dirs = []
    for src in _DRY_RUN_INPUTS:
        name = (
            src.parent.name
            if src.name == "files"
            else f"{src.parent.parent.name}-{src.parent.name}-{src.stem}"
        )
        if not (src / "00-session-state.json" if src.is_dir() else src).is_file():
            continue  # a case about a missing state
        dest = root / "agent-output" / name
        if src.is_dir():
            shutil.copytree(src, dest, symlinks=True)
        else:
            dest.mkdir(parents=True)
            shutil.copyfile(src, dest / "00-session-state.json")
        dirs.append(f"agent-output/{name}")
    # floats as Python writes them (a shortest repr with a two-digit exponent: 1e-05, -2.5e-07,
    # 1.5e+17), which JavaScript's own number format writes otherwise (1e-5, 150000000000000000)
    floats = root / "agent-output" / "v2-non-integral-floats"
    floats.mkdir()
    doc = json.loads((REPO / "tests" / "fixtures" / "migrate" / "v2-test01.json").read_text())
    doc["x-metrics"] = {"e": 12.5, "d": 0.0001, "a": 1e-05, "b": -2.5e-07, "c": 1.5e17, "f": 0}
    text = json.dumps(doc, indent=2).replace('"f": 0', '"f": 3.0')  # read as 3 (§2.1)
    (floats / "00-session-state.json").write_text(text)
    dirs.append("agent-output/v2-non-integral-floats")
    return dirs


def test_cli_migrate_dry_run_patch_and_diff_match_python(tmp_path: Path) -> None:
    """`migrate --dry-run` on every migrate input of the suite and every state fixture: the
    same JSON Patch (jsonpatch.make_patch's moves and array matching, ported in lib/patch.mjs
    and lib/difflib.mjs) and the same unified diff, byte for byte, in text and in JSON; the
    same notes (words, pointers, order), statuses, versions, exit code and summary lines: the
    whole output, byte for byte (`2.0` is read as 2 by both: docs/spec.md §2.1)."""
    node = _need("node")["node"]
    outs: dict[tuple[str, str], subprocess.CompletedProcess[str]] = {}
    for impl in ("py", "js"):
        root = tmp_path / impl
        dirs = _dry_run_repo(root)
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        for fmt in ("text", "json"):
            argv = [*cmd, "migrate", "--dry-run", *dirs, "--now", NOW, "--format", fmt]
            outs[impl, fmt] = _run(argv, root)
    assert len(dirs) > 150
    for fmt in ("text", "json"):
        assert outs["js", fmt].returncode == outs["py", fmt].returncode, outs["js", fmt].stderr
    pj, jj = (json.loads(outs[i, "json"].stdout) for i in ("py", "js"))
    assert sum(f["status"] == "would_migrate" for f in pj["files"]) > 100
    assert sum(any(op["op"] == "move" for op in f["patch"]) for f in pj["files"]) > 0
    for f_py, f_js in zip(pj["files"], jj["files"], strict=True):
        for key in ("path", "status", "from_version", "patch"):
            assert f_js[key] == f_py[key], (f_py["path"], key)
        # every note in the reference's words, at its pointer, in its order, the command it
        # names completed: SR150/SR151 of a migration, SR152 with each schema finding or
        # contradiction, SR142, a corrupt file's reader findings
        assert f_js["notes"] == f_py["notes"], f_py["path"]
    assert sum(f["status"] == "refused" for f in pj["files"]) > 30
    # and the whole output, byte for byte: text (the patch, the diff, the notes, the summary)
    # and JSON (json.dumps' layout, the patch's values with their keys as read)
    assert outs["js", "text"].stdout == outs["py", "text"].stdout
    assert "JSON Patch (RFC 6902):\n" in outs["py", "text"].stdout
    assert '"b": -2.5e-07,' in outs["py", "text"].stdout  # in the diff's context
    assert '"f": 3\n' in outs["py", "text"].stdout
    assert outs["js", "json"].stdout == outs["py", "json"].stdout
    assert outs["js", "text"].stderr == outs["py", "text"].stderr


def test_js_patch_is_jsonpatch_make_patch() -> None:
    """lib/patch.mjs's jsonPatch against jsonpatch.make_patch on 3,000 pairs of random
    documents (a fixed seed): objects and arrays nested, items inserted, removed, repeated and
    changed (moves, array matching), a few lists past SequenceMatcher's autojunk length (200)
    and past the exact-match limit (500 x 500); parsed by each side from the same JSON text."""
    import random

    node = _need("node")["node"]
    rng = random.Random(29)

    def value(depth: int = 0) -> Any:
        r = rng.random()
        if depth < 3 and r < 0.25:
            return {rng.choice("abcde"): value(depth + 1) for _ in range(rng.randint(0, 4))}
        if depth < 3 and r < 0.5:
            return [value(depth + 1) for _ in range(rng.randint(0, 6))]
        return rng.choice([1, 2, 3, True, False, None, "x", "y", 0, "1"])

    def mutate(v: Any, depth: int = 0) -> Any:
        if isinstance(v, dict):
            v = {
                k: mutate(x, depth + 1) if rng.random() < 0.5 else x
                for k, x in v.items()
                if rng.random() > 0.2
            }
            if rng.random() < 0.3:
                v[rng.choice("abcdef")] = value(depth + 1)
            return v
        if isinstance(v, list):
            v = list(v)
            for _ in range(rng.randint(0, 3)):
                r = rng.random()
                if r < 0.3 and v:
                    del v[rng.randrange(len(v))]
                elif r < 0.6 or not v:
                    v.insert(
                        rng.randint(0, len(v)),
                        value(depth + 1) if rng.random() < 0.5 or not v else rng.choice(v),
                    )
                else:
                    i = rng.randrange(len(v))
                    v[i] = mutate(v[i], depth + 1)
            return v
        return value(depth) if rng.random() < 0.5 else v

    pairs = []
    for n in range(3000):
        a = value()
        a = a if isinstance(a, dict) else {"r": a}
        if n % 300 == 0:  # long lists: autojunk, and the exact-match limit
            a["long"] = [
                rng.choice([1, 2, 3, "x", [1], {"k": 1}]) for _ in range(rng.choice([250, 700]))
            ]
        pairs.append(json.dumps([a, mutate(a)]))
    script = (
        "import { readFileSync } from 'node:fs';"
        "import { parseText } from './conformance/js/lib/jsonread.mjs';"
        "import { jsonPatch } from './conformance/js/lib/patch.mjs';"
        "for (const line of readFileSync(0, 'utf8').trim().split('\\n')) {"
        " const [a, b] = parseText(line).value;"
        " process.stdout.write(JSON.stringify(jsonPatch(a, b)) + '\\n'); }"
    )
    proc = subprocess.run(
        [node, "--input-type=module", "-e", script],
        cwd=REPO,
        input="\n".join(pairs) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    got = proc.stdout.splitlines()
    assert len(got) == len(pairs)
    moves = 0
    for line, patch in zip(pairs, got, strict=True):
        a, b = json.loads(line)
        want = jsonpatch.make_patch(a, b).patch
        assert json.loads(patch) == want, line
        moves += any(op["op"] == "move" for op in want)
    assert moves > 10


# --- workflow findings (SR40x) in the reference's words and places (issue 29 point 5) -------


def _broken_workflows() -> dict[str, bytes]:
    """Broken workflow YAMLs: the generic built-in, changed one way each."""
    good = (REPO / "schema" / "workflows" / "apex.yaml").read_text(encoding="utf-8")
    return {
        "zero-byte.yaml": b"",
        "broken-utf8.yaml": b"id: caf\xc3(\n",
        "duplicate-key.yaml": b"id: a\ntitle: t\nid: b\n",
        "duplicate-key-nested.yaml": good.replace("id: apex", "id: apex\nid: again", 1).encode(),
        "a-list.yaml": b"- 1\n- 2\n",
        "missing-required.yaml": b"id: x\nsteps: []\n",
        "tab-indent.yaml": b"id: x\n\tsteps: []\n",
        "tab-list.yaml": b"id: x\nsteps:\n\t- 1\n",
        "deep-flow.yaml": b"id: " + b"[" * 70 + b"]" * 70 + b"\n",
        "deep-block.yaml": b"id:\n" + b"".join(b"  " * i + b"- \n" for i in range(1, 70)),
        "deep-map.yaml": b"x:\n" + b"".join(b"  " * i + b"k%d:\n" % i for i in range(1, 70)),
        "anchor.yaml": b"a: &x [1]\nb: *x\n",
        "anchor-block.yaml": b"a: &x\n  - 1\n",
        "alias-only.yaml": b"a: *x\n",
        "tag.yaml": b"id: !!str x\n",
        "tag-then-anchor.yaml": b"a: !!str &x b\n",
        "reserved-character.yaml": b"id: @x\n",
        "two-documents.yaml": b"---\nid: a\n---\nid: b\n",
        "unclosed-quote.yaml": b"id: 'x\n",
        "key-not-scalar.yaml": b"? [1]\n: 2\n",
        "not-text.yaml": b"id: x\nname: \xff\xfe\n",
        "wrong-types.yaml": b"id: 3\nversion: one\nfree_steps: maybe\nsteps: 3\n",
        "step-wrong-types.yaml": b"id: x\nsteps:\n  - key: 1\n    name: 3\n",
        "unknown-legacy-checkpoint.yaml": good.replace(
            "legacy_checkpoints:", "legacy_checkpoints:\n      old_one: no_such_checkpoint", 1
        ).encode(),
        "session-dir-escapes.yaml": good.replace(
            'session_dir: "agent-output/{project}"', 'session_dir: "../out-{project}"', 1
        ).encode(),
    }


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_cli_workflow_findings_match_python(fmt: str, tmp_path: Path) -> None:
    """`validate --workflow PATH` with a broken workflow: each SR40x finding with the
    reference's code, message, file, pointer, line and column, the same exit code, standard
    output and standard error from the two CLIs."""
    roots = {
        impl: _repo_copy("valid", "apex-step-2-at-checkpoint", tmp_path / impl)
        for impl in ("py", "js")
    }
    seen = set()
    cases = [*_broken_workflows().items(), ("not-there.yaml", None)]
    if fmt in ("github", "sarif"):  # the same findings, in other clothes: a sample
        cases = [c for c in cases if c[0] in _FORMAT_SAMPLE]
    for name, data in cases:
        for root in roots.values():
            if data is not None:
                (root / name).write_bytes(data)
        argv = ["validate", "agent-output/demo", "--workflow", name, "--now", NOW, "--format", fmt]
        out = _twin_run(argv, roots, None)
        assert out["js"].returncode == out["py"].returncode == 2, (name, out["js"].stderr)
        js_out = out["js"].stdout.replace(
            roots["js"].as_uri().encode(), roots["py"].as_uri().encode()
        )
        assert js_out == out["py"].stdout, name
        assert out["js"].stderr == out["py"].stderr, name
        seen.update(re.findall(rb"SR40\d", out["py"].stdout + out["py"].stderr))
    assert seen >= {b"SR400", b"SR401", b"SR402", b"SR403"}


def test_cli_workflow_findings_of_other_commands_match_python(tmp_path: Path) -> None:
    """`resume`, `migrate` (and `--dry-run`) and `init` with a broken `--workflow PATH`: the
    reference's refusal (its exit code, the findings in its words and places on stderr, and
    with --format json on stdout), byte for byte from the two CLIs."""
    roots = {impl: _repo_copy("versions", "version-2-0", tmp_path / impl) for impl in ("py", "js")}
    broken = _broken_workflows()
    for name in (
        "duplicate-key-nested.yaml",
        "tab-indent.yaml",
        "wrong-types.yaml",
        "not-there.yaml",
    ):
        for root in roots.values():
            if name in broken:
                (root / name).write_bytes(broken[name])
        for command in (
            ["resume", "agent-output/demo"],
            ["migrate", "agent-output/demo"],
            ["migrate", "--dry-run", "agent-output/demo"],
            ["init", "fresh", "--session", "s1"],
        ):
            for fmt in ("text", "json"):
                argv = [*command, "--workflow", name, "--now", NOW, "--format", fmt]
                out = _twin_run(argv, roots, None)
                assert out["js"].returncode == out["py"].returncode != 0, (argv, out["js"].stderr)
                assert out["js"].stdout == out["py"].stdout, argv
                assert out["js"].stderr == out["py"].stderr, argv
                assert name.encode() in out["py"].stdout + out["py"].stderr
    for root in roots.values():  # refused before anything was written
        state = root / "agent-output" / "demo" / "00-session-state.json"
        assert json.loads(state.read_text())["schema_version"] == "2.0"
        assert not (root / "agent-output" / "fresh").exists()


def test_cli_migrate_by_project_from_a_subdirectory_matches_python(tmp_path: Path) -> None:
    """`migrate --project NAME` (the JS CLI refused the option) from a subdirectory of the
    repository: --check, --dry-run and the write itself, in text and JSON, print the same
    bytes from both CLIs (each twin's root written ROOT), and leave the same state files."""
    node = _need("node")["node"]
    src = REPO / "conformance" / "cases" / "migrate" / "v2-fixture-nordic-fresh-foods" / "files"
    argvs = [
        ["--check"],
        ["--dry-run", "--format", "json"],
        ["--dry-run"],
        [],
        [],  # then current
    ]
    outs: dict[str, list[tuple[int, str, str]]] = {"py": [], "js": []}
    for impl in ("py", "js"):
        root = tmp_path / impl
        (root / ".git").mkdir(parents=True)
        shutil.copytree(src, root / "agent-output" / "demo")
        (root / "docs").mkdir()
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        for extra in argvs:
            argv = [*cmd, "migrate", "--project", "demo", "--now", NOW, "--salvage", *extra]
            proc = _run(argv, root / "docs")
            fix = str(root)
            outs[impl].append(
                (
                    proc.returncode,
                    proc.stdout.replace(fix, "ROOT"),
                    proc.stderr.replace(fix, "ROOT"),
                )
            )
    assert outs["js"] == outs["py"]
    assert [rc for rc, _, _ in outs["py"]] == [1, 0, 0, 0, 0], outs["py"]
    assert "run `session-resume migrate --salvage --project demo`" in outs["py"][0][1]
    states = [
        json.loads((tmp_path / i / "agent-output" / "demo" / "00-session-state.json").read_text())
        for i in ("py", "js")
    ]
    assert states[0]["schema_version"] == "3.0" and states[0] == states[1]


# --- SR422: the nearest decision key, as the reference finds it (issue 29 point 5) ---------


def test_js_close_matches_are_difflib_get_close_matches() -> None:
    """lib/difflib.mjs's getCloseMatches against difflib.get_close_matches on 2,000 random
    words and key lists (a fixed seed): n = 1 and 3, cutoffs 0.6 and 0.8, ties (two keys at
    one score: the greater string first), characters outside the BMP (Python orders strings
    by code point, JavaScript's `<` by UTF-16 unit), words past autojunk's 200 characters."""
    import difflib
    import random

    node = _need("node")["node"]
    rng = random.Random(422)
    alphabet = "abcdeéz_\U0001d4c7\uff5a"

    def word() -> str:
        if rng.random() < 0.02:
            return "".join(rng.choice("ab") for _ in range(rng.randint(200, 260)))
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))

    cases = []

    def variant(base: str) -> str:
        i = rng.randrange(len(base))
        return base[:i] + rng.choice(["", rng.choice(alphabet)]) + base[i + 1 :]

    for _ in range(2000):
        base = word()
        keys = [variant(base) if rng.random() < 0.5 else word() for _ in range(rng.randint(1, 8))]
        w = rng.choice([word(), *(k[:-1] + rng.choice(alphabet) for k in keys)])
        cases.append([w, keys, rng.choice([1, 3]), rng.choice([0.6, 0.8])])
    script = (
        "import { readFileSync } from 'node:fs';"
        "import { getCloseMatches } from './conformance/js/lib/difflib.mjs';"
        "for (const line of readFileSync(0, 'utf8').trim().split('\\n')) {"
        " const [w, keys, n, cutoff] = JSON.parse(line);"
        " process.stdout.write(JSON.stringify(getCloseMatches(w, keys, n, cutoff)) + '\\n'); }"
    )
    proc = subprocess.run(
        [node, "--input-type=module", "-e", script],
        cwd=REPO,
        input="\n".join(json.dumps(c) for c in cases) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    got = [json.loads(x) for x in proc.stdout.splitlines()]
    want = [difflib.get_close_matches(w, keys, n=n, cutoff=c) for w, keys, n, c in cases]
    assert got == want
    # the sample holds what the port must get right: several matches, and ties between them
    assert sum(len(x) > 1 for x in want) > 100
    ties = 0
    for w, keys, _, _ in cases:
        scores = [difflib.SequenceMatcher(None, k, w).ratio() for k in set(keys)]
        ties += any(s >= 0.6 and scores.count(s) > 1 for s in scores)
    assert ties > 20


def test_cli_unknown_decision_key_matches_python(tmp_path: Path) -> None:
    """SR422 where it fires (`decide KEY VALUE`, `transition --decision KEY=VALUE`), as text
    and JSON: the nearest key (`did you mean ...?`) and the command that sets it, or the keys
    when none is near, the reference's words byte for byte. Keys misspelled each way: a
    swapped letter, a case, a hyphen, a prefix, two keys at one score (`compl`: compliance and
    complexity), none near."""
    node = _need("node")["node"]
    named = ["--project", "demo", "--session", "s0", "--now", NOW]
    bad = ["regoin", "Region", "iac-tool", "architecture", "compl", "zzz"]
    argvs: list[list[str]] = [["init", "demo", "--session", "s0", "--now", NOW]]
    argvs.append(["start", "1", *named])
    argvs += [["decide", key, "west europe", *named] for key in bad]
    argvs += [["decide", key, "it's", *named, "--format", "json"] for key in ("regoin", "zzz")]
    argvs += [
        ["transition", "--complete", "1", "--start", "2", "--decision", f"{key}=a b", *named]
        for key in ("regoin", "compl", "zzz")
    ]
    outs = _sequence_in_both(argvs, tmp_path, node)
    assert outs["js"] == outs["py"]
    refused = [out + err for rc, out, err in outs["py"][2:] if rc == 1]
    assert len(refused) == len(argvs) - 2 and all("SR422" in x for x in refused)
    assert "did you mean 'region'?" in refused[0] and "decide region 'west europe'" in refused[0]
    assert "did you mean 'compliance'?" in refused[bad.index("compl")]
    assert "did you mean" not in refused[bad.index("zzz")]
    hint = json.loads(refused[len(bad)])["diagnostics"][0]["hint"]
    assert hint.startswith("Run `session-resume decide region 'it'\"'\"'s' --project demo")
    assert "--decision 'region=a b'" in refused[-3] and "did you mean" not in refused[-1]


# --- recover in the reference's words (issue 29 point 5) ----------------------------------

_RECOVER_CASES = sorted(
    p.parent.name
    for p in (REPO / "conformance" / "cases" / "recover").glob("*/files")
    if p.is_dir()
)
# corrupt states of the read group, one of each kind the reader words (recover reports them)
_RECOVER_READ_CASES = [
    "bom-only",
    "depth-65-too-deep",
    "duplicate-key-nested",
    "infinity",
    "invalid-utf8-overlong",
    "json-comment",
    "json-unterminated-string",
    "non-object-with-valid-bak",
    "number-overflow",
    "utf16le-no-bom",
    "whitespace-vertical-tab",
]


def _recover_twins(
    files: Path | None, argv: list[str], tmp_path: Path, cwd: str = "."
) -> dict[str, tuple[int, str, str]]:
    """`recover` run by each CLI in twin repositories holding ``files`` as agent-output/demo,
    from ``cwd`` inside each; the repositories' paths written as ROOT."""
    node = _need("node")["node"]
    outs = {}
    for impl in ("py", "js"):
        root = tmp_path / impl
        (root / ".git").mkdir(parents=True)
        (root / "sub").mkdir()
        if files is not None:
            shutil.copytree(files, root / "agent-output" / "demo")
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        proc = _run([*cmd, "recover", *argv, "--now", NOW], root / cwd)
        outs[impl] = (
            proc.returncode,
            proc.stdout.replace(str(root), "ROOT"),
            proc.stderr.replace(str(root), "ROOT"),
        )
    return outs


@pytest.mark.parametrize(
    ("group", "case"),
    [("recover", c) for c in _RECOVER_CASES] + [("read", c) for c in _RECOVER_READ_CASES],
)
def test_cli_recover_words_match_python(group: str, case: str, tmp_path: Path) -> None:
    """What `recover` found in the state file and why the .bak was not usable: the reader's
    words and places (a syntax error's, an encoding's, a duplicate key's), the version's, the
    schema's, a migration's refusal; the commands the hints name completed as the call named
    the session. Text and JSON, byte for byte, on every recover case of the suite and a
    corrupt state of each kind the reader words."""
    src = REPO / "conformance" / "cases" / group / case
    from ruamel.yaml import YAML

    meta = YAML(typ="safe").load((src / "case.yaml").read_text(encoding="utf-8"))
    extra = [f"--{k}={v}" for k, v in (meta.get("arguments") or {}).items()]
    fmts = ["text", "json"] if group == "recover" else ["json"]
    for fmt in fmts:
        outs = _recover_twins(
            src / "files", ["agent-output/demo", "--format", fmt, *extra], tmp_path / fmt
        )
        assert outs["js"] == outs["py"], fmt
    assert outs["py"][0] == 0, outs["py"]


def test_cli_recover_naming_and_refusals_match_python(tmp_path: Path) -> None:
    """`recover` named by --project and from a subdirectory with --root (the hints' commands
    completed with them), and refused: a state linking out of the repository (to a decoy
    file in the test's directory; SR105 in the reference's words), a DIR that names nothing
    and a project without a directory (SR100, exit 2); JSON on standard output and the text
    on standard error, as the reference refuses."""
    decoy = tmp_path / "decoy" / "state.json"
    decoy.parent.mkdir()
    decoy.write_text("{}", encoding="utf-8")
    corrupt = REPO / "conformance" / "cases" / "recover" / "json-error-valid-bak" / "files"
    runs: list[tuple[Path | None, list[str], str]] = [
        (corrupt, ["--project", "demo", "--format", "json"], "."),
        (corrupt, ["agent-output/demo", "--root", "..", "--format", "json"], "sub"),
        (corrupt, ["--project", "demo", "--root", ".."], "sub"),
        (None, ["agent-output/none", "--format", "json"], "."),
        (None, ["--project", "none"], "."),
    ]
    for n, (files, argv, cwd) in enumerate(runs):
        outs = _recover_twins(files, argv, tmp_path / str(n), cwd)
        assert outs["js"] == outs["py"], argv
    assert outs["py"][0] == 2 and "SR100" in outs["py"][2]
    for fmt in ("text", "json"):
        outs = {}
        node = _need("node")["node"]
        for impl in ("py", "js"):
            root = tmp_path / f"link-{fmt}" / impl
            (root / ".git").mkdir(parents=True)
            (root / "agent-output" / "demo").mkdir(parents=True)
            (root / "agent-output" / "demo" / "00-session-state.json").symlink_to(decoy)
            cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
            argv = ["recover", "agent-output/demo", "--format", fmt, "--now", NOW]
            proc = _run([*cmd, *argv], root)
            outs[impl] = tuple(
                x.replace(str(root), "ROOT") if isinstance(x, str) else x
                for x in (proc.returncode, proc.stdout, proc.stderr)
            )
        assert outs["js"] == outs["py"], fmt
        assert (
            outs["py"][0] == 1
            and "SR105 error: 00-session-state.json is a symbolic" in outs["py"][2]
        )
    assert decoy.read_text(encoding="utf-8") == "{}"


# --- a broken workflow is exit 2 in every command (issue 29 point 5) -----------------------


def test_cli_broken_workflow_is_exit_2_in_every_command_as_python(tmp_path: Path) -> None:
    """A workflow that cannot be used (SR400-SR403) is an input error in every command both
    CLIs offer: `--workflow` (validate, resume, migrate, recover, init), the configured
    workflow `--project` reads (the writers, init, and the four readers), a state naming an
    unknown one (a writer): exit 2, the reference's words on stderr (and JSON on stdout),
    nothing written, byte for byte from the two CLIs (tests/test_cli_broken_workflow.py has
    the Python CLI's other commands)."""
    node = _need("node")["node"]
    named = ["--project", "demo", "--session", "s0"]
    by_option = [
        ["init", "fresh", "--session", "s1"],
        ["validate", "agent-output/demo"],
        ["resume", "agent-output/demo"],
        ["migrate", "agent-output/demo"],
        ["recover", "agent-output/corrupt"],
        ["recover", "agent-output/demo"],
    ]
    by_config = [
        ["init", "fresh", "--session", "s1"],
        ["start", "2", *named],
        ["checkpoint", "1", "phase_1_discovery", *named],
        ["complete", "1", *named],
        ["skip", "3", "--reason", "r", *named],
        ["decide", "region", "x", *named],
        ["finding", "add", "T", *named],
        ["finding", "resolve", "T", *named],
        ["transition", "--complete", "1", "--start", "2", *named],
        ["validate", "--project", "demo"],
        ["resume", "--project", "demo"],
        ["migrate", "--project", "demo"],
        ["recover", "--project", "demo"],
    ]
    by_state = [["decide", "region", "x", "--session-dir", "agent-output/w", "--session", "s0"]]
    outs: dict[str, list[tuple[int, str, str]]] = {}
    files: dict[str, dict[str, bytes]] = {}
    for impl in ("py", "js"):
        root = tmp_path / impl
        (root / ".git").mkdir(parents=True)
        py = [sys.executable, "-m", "session_resume"]
        for argv in (
            ["init", "demo", "--session", "s0"],
            ["start", "1", *named],
            ["init", "w", "--session", "s0"],
        ):
            assert _run([*py, *argv, "--now", NOW], root).returncode == 0
        state = root / "agent-output" / "w" / "00-session-state.json"
        state.write_text(state.read_text().replace('"workflow": "apex"', '"workflow": "nope"'))
        (root / "agent-output" / "corrupt").mkdir()
        (root / "agent-output" / "corrupt" / "00-session-state.json").write_text("{")
        (root / "bad.yaml").write_text("id: x\nsteps: [{key: 1.5}]\n", encoding="utf-8")
        before = {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
        cmd = py if impl == "py" else [node, str(CLI_JS)]
        runs = [[*a, "--workflow", "bad.yaml"] for a in by_option] + by_state
        outs[impl] = []
        for n, argv in enumerate([*runs, None, *by_config]):
            if argv is None:
                (root / ".session-resume.yaml").write_text("workflow: bad.yaml\n")
                continue
            fmt = "json" if n % 2 else "text"
            proc = _run([*cmd, *argv, "--now", NOW, "--format", fmt], root)
            outs[impl].append(
                (
                    proc.returncode,
                    *(x.replace(str(root), "ROOT") for x in (proc.stdout, proc.stderr)),
                )
            )
        (root / ".session-resume.yaml").unlink()
        files[impl] = {
            k.replace(str(root), ""): v
            for k, v in ((str(p), p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file())
            if before.get(k) != v
        }
    assert outs["js"] == outs["py"]
    assert [rc for rc, _, _ in outs["py"]] == [2] * len(outs["py"])
    assert all("SR40" in out + err for _, out, err in outs["py"]), outs["py"]
    assert files["js"] == files["py"] == {}  # nothing written, nothing created


def test_cli_recovery_commands_name_the_directory_as_typed_as_python(tmp_path: Path) -> None:
    """The needs_recovery answer's commands name the session directory as the user typed it
    (relative, from a subdirectory too), byte for byte as the reference prints them."""
    node = _need("node")["node"]
    state = "00-session-state.json"
    doc = json.loads((REPO / "examples" / "agent-output" / "contoso-portal" / state).read_text())
    outs: dict[str, list[str]] = {}
    for impl in ("py", "js"):
        root = tmp_path / impl
        d = root / "agent-output" / "demo"
        d.mkdir(parents=True)
        (root / ".git").mkdir()
        (root / "sub").mkdir()
        (d / f"{state}.bak").write_text(json.dumps(doc))
        (d / state).write_text('{"schema_version": "3.0", "proj')
        cmd = [sys.executable, "-m", "session_resume"] if impl == "py" else [node, str(CLI_JS)]
        outs[impl] = []
        for cwd, typed in ((root, "agent-output/demo"), (root / "sub", "../agent-output/demo")):
            for fmt in ("text", "json"):
                argv = ["resume", typed, "--step", "2", "--now", NOW, "--format", fmt]
                proc = _run([*cmd, *argv], cwd)
                assert proc.returncode == 0, proc.stderr
                assert f"session-resume recover {typed}" in proc.stdout, proc.stdout
                outs[impl].append(proc.stdout.replace(str(root), "ROOT"))
    assert outs["js"] == outs["py"]


def test_a_javascript_write_is_never_put_back_by_the_reference_s_hooks(tmp_path: Path) -> None:
    """The reference's hooks put back a protocol file that differs from its record of its own
    writes (storage/written.py); a write by this package first removes that record, so the
    next post-tool-use event leaves it as written (and the reference records again at its
    next write)."""
    node = _need("node")["node"]
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    py = [sys.executable, "-m", "session_resume"]
    assert _run([*py, "init", "demo"], root).returncode == 0
    assert (root / "agent-output/demo/.00-session-written/record.json").is_file()
    assert _run([node, str(CLI_JS), "start", "1", "--project", "demo"], root).returncode == 0
    state = root / "agent-output" / "demo" / "00-session-state.json"
    written = state.read_bytes()
    hook = {
        "session_id": "s",
        "cwd": str(root),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "npx session-resume start 1 --project demo"},
        "tool_response": {},
    }
    proc = subprocess.run(
        [*py, "hook", "post-tool-use"],
        cwd=root,
        input=json.dumps(hook),
        text=True,
        capture_output=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert state.read_bytes() == written
    assert not list(state.parent.glob("*.corrupt-*"))
