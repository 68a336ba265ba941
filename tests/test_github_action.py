"""The GitHub Action (`action.yml`, README "GitHub Action"), run locally as a runner runs it.

`action.yml` is read with a YAML parser; its steps run in order, as a runner runs a composite
action's steps: each step's ``if`` is evaluated (GitHub's expression syntax, the subset the
action uses: ``always()``, ``success()``, ``failure()``, ``inputs.*``, ``steps.*.outputs.*``,
``github.action_path``, string literals, ``==``, ``!=`` (case-insensitive for strings, as
GitHub compares them), ``!``, ``&&``, ``||``; anything else fails the test), every ``${{ }}`` in
its ``env``, ``working-directory`` and ``run`` is replaced by its value, and a ``run`` step is
written to a file and run as ``bash --noprofile --norc -eo pipefail FILE`` (the runner's command
for ``shell: bash``) with the variables a runner sets: ``GITHUB_ACTIONS=true``, ``CI``,
``GITHUB_WORKSPACE`` (the fixture repository, also the working directory), ``RUNNER_TEMP``,
``GITHUB_ACTION_PATH`` and, new for every step, ``GITHUB_OUTPUT``, ``GITHUB_ENV``,
``GITHUB_PATH`` and ``GITHUB_STEP_SUMMARY`` (read back afterwards: outputs for
``steps.<id>.outputs``, paths prepended to ``PATH`` of the later steps).

No network. Installing is skipped: ``install: "false"``, the action's own input for a job that
already has session-resume, and the ``PATH`` the steps see begins with this virtual
environment's ``bin`` (``Path(sys.executable).parent``), which holds the ``session-resume``
under test; installing the package itself is covered by tests/test_packaging.py. Proxy
variables point at a closed port and ``PIP_NO_INDEX`` is set, so a step that tried the network
would fail. A ``uses`` step (actions/setup-python, the SARIF upload) is not run: its ``if`` and
``with`` are evaluated and recorded, and the upload is asserted to point at the SARIF file the
validate step wrote.

The fixture repository is a git repository holding a copy of ``examples/`` plus one invalid
state. The SARIF log is checked against the official SARIF 2.1.0 schema vendored under
tests/fixtures/sarif/ (as tests/test_sarif.py does, formats checked).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

from conftest import REPO

# Test tier (README "Test tiers"): many CLI processes, bash and git; nothing special needed.
pytestmark = pytest.mark.slow

ACTION = REPO / "action.yml"
SARIF_SCHEMA = REPO / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
BROKEN = "agent-output/broken/00-session-state.json"
VALID = "agent-output/contoso-portal/00-session-state.json"
UPLOAD = "github/codeql-action/upload-sarif@v4"
# The inputs every run here gives: installing is replaced by this venv's session-resume.
NO_INSTALL = {"install": "false"}


def load_action() -> dict[str, Any]:
    doc: dict[str, Any] = YAML(typ="safe", pure=True).load(ACTION.read_text(encoding="utf-8"))
    return doc


# --- GitHub's expression syntax (the subset action.yml uses) ---------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\))"
    r"|(?P<call>(?:always|success|failure|cancelled)\(\))|(?P<ctx>[A-Za-z_][A-Za-z0-9_.-]*))"
)


class Expression:
    """A recursive-descent evaluator: or > and > not > comparison > primary."""

    def __init__(self, text: str, lookup: Any, status: dict[str, bool]) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            assert m and m.end() > pos, f"an expression the test does not understand: {text!r}"
            kind = m.lastgroup
            assert kind is not None
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i, self.lookup, self.status, self.text = 0, lookup, status, text

    def value(self) -> Any:
        v = self._or()
        assert self.i == len(self.tokens), f"trailing tokens in {self.text!r}"
        return v

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def _or(self) -> Any:
        v = self._and()
        while self._peek() == ("op", "||"):
            self._take()
            right = self._and()
            v = v if truthy(v) else right
        return v

    def _and(self) -> Any:
        v = self._not()
        while self._peek() == ("op", "&&"):
            self._take()
            right = self._not()
            v = right if truthy(v) else v
        return v

    def _not(self) -> Any:
        if self._peek() == ("op", "!"):
            self._take()
            return not truthy(self._not())
        return self._cmp()

    def _cmp(self) -> Any:
        v = self._primary()
        tok = self._peek()
        if tok in (("op", "=="), ("op", "!=")):
            self._take()
            right = self._primary()
            same = equal(v, right)
            return same if tok == ("op", "==") else not same
        return v

    def _primary(self) -> Any:
        kind, text = self._take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "call":
            return self.status[text[:-2]]
        if kind == "ctx":
            return self.lookup(text)
        assert text == "(", f"unexpected {text!r} in {self.text!r}"
        v = self._or()
        assert self._take() == ("op", ")")
        return v


def truthy(v: Any) -> bool:
    return bool(v)


def equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()  # GitHub compares strings ignoring case
    return bool(a == b)


_INTERPOLATION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)


# --- the runner --------------------------------------------------------------------------------


@dataclass
class StepRun:
    name: str
    ran: bool
    uses: str | None = None
    with_: dict[str, str] = field(default_factory=dict)
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    summary: str = ""


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]
    failed: bool

    def step(self, name: str) -> StepRun:
        (found,) = [s for s in self.steps if s.name == name]
        return found


def _read_outputs(path: Path) -> dict[str, str]:
    """``name=value`` lines and ``name<<DELIMITER`` blocks, as the runner reads GITHUB_OUTPUT."""
    out: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    it = iter(lines)
    for line in it:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            for more in it:
                if more == delim:
                    break
                body.append(more)
            out[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


def run_action(
    workspace: Path, tmp: Path, inputs: dict[str, str], first_on_path: Path | None = None
) -> ActionRun:
    action = load_action()
    assert action["runs"]["using"] == "composite"
    declared = action["inputs"]
    unknown = set(inputs) - set(declared)
    assert not unknown, f"inputs action.yml does not declare: {unknown}"
    values = {k: str(v.get("default", "")) for k, v in declared.items()}
    values.update(inputs)
    outputs: dict[str, dict[str, str]] = {}
    extra_path: list[str] = []
    failed = False
    temp = tmp / "runner-temp"
    temp.mkdir()

    def lookup(name: str) -> Any:
        parts = name.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            assert parts[1] in values, f"no input {parts[1]!r}"
            return values[parts[1]]
        if parts[0] == "github" and parts[1:] == ["action_path"]:
            return str(REPO)
        if parts[0] == "github" and parts[1:] == ["workspace"]:
            return str(workspace)
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return outputs.get(parts[1], {}).get(parts[3], "")
        raise AssertionError(f"a context the test does not provide: {name}")

    def status() -> dict[str, bool]:
        return {"always": True, "success": not failed, "failure": failed, "cancelled": False}

    def interpolate(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            v = Expression(m.group(1), lookup, status()).value()
            return str(v).lower() if isinstance(v, bool) else str(v)

        return _INTERPOLATION.sub(one, text)

    def condition(text: str | None) -> bool:
        if text is None:
            return not failed  # success() is the default
        text = str(text).strip()
        m = re.fullmatch(r"\$\{\{(.*)\}\}", text, re.DOTALL)
        expr = m.group(1) if m else text
        # a condition without a status function gets an implicit success() &&
        has_status = re.search(r"\b(always|success|failure|cancelled)\(\)", expr)
        v = truthy(Expression(expr, lookup, status()).value())
        return v if has_status else (v and not failed)

    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    venv_bin = str(Path(sys.executable).parent)
    assert shutil.which("session-resume", path=venv_bin), "this venv has no session-resume"
    base_env.update(
        {
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_ACTION_PATH": str(REPO),
            "GITHUB_REPOSITORY": "octo/fixture",
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_SHA": "0" * 40,
            "GITHUB_REF": "refs/pull/1/merge",
            "GITHUB_RUN_ID": "1",
            "RUNNER_OS": "Linux",
            "RUNNER_TEMP": str(temp),
            # no network: a step that tried would fail
            "PIP_NO_INDEX": "1",
            "http_proxy": "http://127.0.0.1:9",
            "https_proxy": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
            "HTTPS_PROXY": "http://127.0.0.1:9",
        }
    )
    runs: list[StepRun] = []
    for n, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", f"step {n}")
        if not condition(step.get("if")):
            runs.append(StepRun(name, ran=False, uses=step.get("uses")))
            continue
        if "uses" in step:
            with_ = {k: interpolate(str(v)) for k, v in (step.get("with") or {}).items()}
            runs.append(StepRun(name, ran=False, uses=step["uses"], with_=with_))
            continue
        assert step["shell"] == "bash", name
        files = {
            key: temp / f"{key.lower()}-{n}"
            for key in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")
        }
        for f in files.values():
            f.touch()
        env = {**base_env, **{k: str(f) for k, f in files.items()}}
        front = [str(first_on_path)] if first_on_path is not None else []
        env["PATH"] = os.pathsep.join([*front, *extra_path, venv_bin, base_env.get("PATH", "")])
        env.update({k: interpolate(str(v)) for k, v in (step.get("env") or {}).items()})
        cwd = workspace / interpolate(str(step.get("working-directory", ".")))
        script = temp / f"step-{n}.sh"
        script.write_text(interpolate(step["run"]), encoding="utf-8")
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        run = StepRun(name, True, None, {}, proc.returncode, proc.stdout, proc.stderr)
        run.summary = files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8")
        runs.append(run)
        if "id" in step:
            outputs[step["id"]] = _read_outputs(files["GITHUB_OUTPUT"])
        extra_path = [
            *reversed(files["GITHUB_PATH"].read_text().split()),
            *extra_path,
        ]
        if proc.returncode != 0:
            failed = True
    action_outputs = {k: interpolate(str(v["value"])) for k, v in action["outputs"].items()}
    return ActionRun(runs, action_outputs, failed)


# --- the fixture repository --------------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checkout: a git repository holding examples/ and one invalid state."""
    ws = tmp_path / "workspace"
    shutil.copytree(REPO / "examples", ws)
    doc = json.loads((ws / VALID).read_text(encoding="utf-8"))
    doc["steps"]["2"]["status"] = "blocked"  # SR309
    broken = ws / BROKEN
    broken.parent.mkdir(parents=True)
    broken.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True, timeout=60)
    return ws


def _sarif_errors(doc: Any) -> list[str]:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    v = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]


def annotated_file(command: str, workspace: Path) -> str:
    """The file an annotation (``::error file=F,...::``) lands on: the runner makes an
    absolute path inside GITHUB_WORKSPACE relative to it, and keeps any other path as given
    (then read from the repository root)."""
    m = re.match(r"::\w+ (?:[^:]*,)?file=([^,:]*)", command)
    assert m, command
    file = m.group(1).replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
    if os.path.isabs(file) and Path(file).is_relative_to(workspace):
        return Path(file).relative_to(workspace).as_posix()
    return file


def _upload(run: ActionRun) -> StepRun:
    (up,) = [s for s in run.steps if s.uses == UPLOAD]
    return up


VALIDATE = "Validate the session state files"
FAIL = "Fail on findings"


# --- the action ---------------------------------------------------------------------------------


def test_the_action_file_is_a_composite_action_of_bash_steps() -> None:
    action = load_action()
    steps = action["runs"]["steps"]
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)
    assert [s["uses"] for s in steps if "uses" in s] == ["actions/setup-python@v6", UPLOAD]
    install = next(s for s in steps if s.get("name") == "Install session-resume")
    # from the action's own checkout unless a version is given
    assert install["env"]["SR_ACTION_PATH"] == "${{ github.action_path }}"
    assert 'spec="$SR_ACTION_PATH"' in install["run"] and "pip install" in install["run"]
    # no input reaches a script except through the environment (no script injection)
    for s in steps:
        if "run" in s:
            assert "${{" not in s["run"], s["name"]
    for name in ("paths", "sarif-file", "annotations", "fail-on-findings", "category"):
        assert name in action["inputs"]
    assert action["inputs"]["sarif-file"]["default"] == "session-resume.sarif"


def test_defaults_write_valid_sarif_annotate_and_fail(workspace: Path, tmp_path: Path) -> None:
    run = run_action(workspace, tmp_path, NO_INSTALL)
    assert [s.ran for s in run.steps if s.uses is None] == [False, True, True]  # no install
    validate = run.step(VALIDATE)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert run.outputs == {"exit-code": "1", "sarif-file": "session-resume.sarif"}

    # the SARIF log: the official schema, the broken file's finding, URIs from the root
    sarif = json.loads((workspace / "session-resume.sarif").read_text(encoding="utf-8"))
    assert _sarif_errors(sarif) == []
    results = sarif["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {BROKEN}
    assert "SR309" in {r["ruleId"] for r in results}

    # the annotations, on the file (as the runner shows it) and line, and the job summary
    notes = [x for x in validate.stdout.splitlines() if x.startswith("::error ")]
    assert notes and {annotated_file(x, workspace) for x in notes} == {BROKEN}, validate.stdout
    assert any("title=SR309" in x and ",line=" in x for x in notes)
    assert "## session-resume validate" in validate.summary and BROKEN in validate.summary

    # the upload (not run) points at the log the validate step wrote, whatever came before
    up = _upload(run)
    assert up.with_ == {"sarif_file": "session-resume.sarif", "category": "session-resume"}
    assert (workspace / up.with_["sarif_file"]).is_file()

    # fail-on-findings (default true): the action fails, in its last step, with a message
    fail = run.step(FAIL)
    assert fail.ran and fail.returncode == 1 and run.failed
    assert "::error title=session-resume::" in fail.stdout


def test_fail_on_findings_false_reports_only(workspace: Path, tmp_path: Path) -> None:
    inputs = {**NO_INSTALL, "fail-on-findings": "false", "annotations": "false"}
    inputs |= {"sarif-file": "reports/sr.sarif", "category": "state"}
    run = run_action(workspace, tmp_path, inputs)
    assert not run.failed, [(s.name, s.returncode, s.stderr) for s in run.steps]
    assert run.outputs["exit-code"] == "1"
    validate = run.step(VALIDATE)
    assert "::error" not in validate.stdout and validate.summary == ""  # no annotations
    sarif = json.loads((workspace / "reports" / "sr.sarif").read_text(encoding="utf-8"))
    assert _sarif_errors(sarif) == [] and sarif["runs"][0]["results"]
    assert _upload(run).with_ == {"sarif_file": "reports/sr.sarif", "category": "state"}


def test_paths_input_and_a_clean_run(workspace: Path, tmp_path: Path) -> None:
    run = run_action(workspace, tmp_path, {**NO_INSTALL, "paths": "agent-output/contoso-portal"})
    assert not run.failed
    assert run.outputs["exit-code"] == "0"
    sarif = json.loads((workspace / "session-resume.sarif").read_text(encoding="utf-8"))
    assert _sarif_errors(sarif) == [] and sarif["runs"][0]["results"] == []
    assert "::error" not in run.step(VALIDATE).stdout


def test_a_quoted_glob_and_a_working_directory(workspace: Path, tmp_path: Path) -> None:
    """A glob in `paths` reaches session-resume unexpanded (it expands it inside the
    repository); `working-directory` moves the run, and the upload still finds the log."""
    (workspace / "sub").mkdir()
    inputs = {**NO_INSTALL, "paths": "../agent-output/*/00-session-state.json"}
    inputs |= {"working-directory": "sub", "fail-on-findings": "false", "annotations": "true"}
    run = run_action(workspace, tmp_path, inputs)
    assert run.outputs == {"exit-code": "1", "sarif-file": "sub/session-resume.sarif"}
    assert _upload(run).with_["sarif_file"] == "sub/session-resume.sarif"
    notes = [x for x in run.step(VALIDATE).stdout.splitlines() if x.startswith("::error ")]
    assert notes and {annotated_file(x, workspace) for x in notes} == {BROKEN}
    sarif = json.loads((workspace / "sub" / "session-resume.sarif").read_text(encoding="utf-8"))
    assert _sarif_errors(sarif) == []
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    }
    assert uris == {BROKEN}


def test_a_usage_error_fails_even_when_findings_do_not(workspace: Path, tmp_path: Path) -> None:
    inputs = {**NO_INSTALL, "paths": "no/such/dir", "fail-on-findings": "false"}
    run = run_action(workspace, tmp_path, inputs)
    assert run.outputs["exit-code"] == "2"
    sarif = json.loads((workspace / "session-resume.sarif").read_text(encoding="utf-8"))
    assert _sarif_errors(sarif) == []
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False
    fail = run.step(FAIL)
    assert fail.returncode == 2 and run.failed
    assert _upload(run).with_["sarif_file"] == "session-resume.sarif"


def test_a_bad_option_in_args_uploads_a_valid_log(workspace: Path, tmp_path: Path) -> None:
    """An option argparse refuses (its own exit path) still leaves a SARIF log valid against
    the official schema, with the usage error as the failed invocation's notification."""
    run = run_action(workspace, tmp_path, {**NO_INSTALL, "args": "--bogus-option"})
    assert run.outputs["exit-code"] == "2"
    sarif = json.loads((workspace / "session-resume.sarif").read_text(encoding="utf-8"))
    assert _sarif_errors(sarif) == []
    (note,) = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert "--bogus-option" in note["message"]["text"]
    assert _upload(run).with_["sarif_file"] == "session-resume.sarif"
    assert run.step(FAIL).returncode == 2


def test_an_empty_log_is_never_uploaded(workspace: Path, tmp_path: Path) -> None:
    """A `session-resume` that writes nothing (a stand-in that dies at once): no upload of
    the empty file, a warning saying so, and the failure still reported."""
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "session-resume").write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")
    (stub / "session-resume").chmod(0o755)
    run = run_action(workspace, tmp_path, {**NO_INSTALL, "annotations": "false"}, stub)
    assert run.outputs["exit-code"] == "3"
    assert (workspace / "session-resume.sarif").read_bytes() == b""
    upload = next(s for s in run.steps if s.uses == UPLOAD)
    assert not upload.ran and upload.with_ == {}
    assert "::warning title=session-resume::no SARIF log" in run.step(VALIDATE).stdout
    assert run.step(FAIL).returncode == 3 and run.failed


def test_the_expression_evaluator_follows_github() -> None:
    """Negative controls for the evaluator the runs above rely on."""
    inputs = {"a": "True", "b": ""}

    def ev(text: str, failed: bool = False) -> Any:
        status = {"always": True, "success": not failed, "failure": failed, "cancelled": False}
        return Expression(text, lambda n: inputs[n.split(".")[1]], status).value()

    assert ev("inputs.a == 'true'") is True  # case-insensitive
    assert ev("inputs.a != 'true'") is False
    assert ev("always() && inputs.b == 'true'") is False
    assert ev("success()", failed=True) is False and ev("always()", failed=True) is True
    assert ev("!(inputs.b) && 'x' == 'X'") is True
    with pytest.raises(AssertionError):
        ev("contains(inputs.a, 'x')")


def test_readme_workflow_uses_this_action_with_its_inputs() -> None:
    """README's "GitHub Action" workflow: this repository's action at the major tag of the
    current version (the release workflow moves it), the permission the upload needs, and
    only inputs action.yml declares."""
    import tomllib

    text = (REPO / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^### GitHub Action\s*$(.*?)(?=^#)", text, re.MULTILINE | re.DOTALL)
    assert m, "README.md has no `### GitHub Action` section"
    block = re.search(r"^```yaml\s*$(.*?)^```\s*$", m.group(1), re.MULTILINE | re.DOTALL)
    assert block
    workflow = YAML(typ="safe", pure=True).load(block.group(1))
    assert workflow["permissions"]["security-events"] == "write"
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    repo = project["urls"]["Repository"].removeprefix("https://github.com/")
    (job,) = workflow["jobs"].values()
    uses = [s for s in job["steps"] if "uses" in s]
    assert uses[0]["uses"].startswith("actions/checkout@")
    assert uses[1]["uses"] == f"{repo}@v{project['version'].split('.')[0]}"
    assert set(uses[1]["with"]) <= set(load_action()["inputs"])
