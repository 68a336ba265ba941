"""Running the Node side of the test suite: one script, one JSON request on stdin, one JSON
answer on stdout. Without node or its packages the calling tests fail with a hint to run
`npm ci`, or skip when SESSION_RESUME_NO_NODE=1 (the reason names what is missing)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

import pytest

from conftest import REPO

NODE_TIMEOUT_S = 180


@dataclass
class NodeAnswer:
    answer: dict[str, Any] | None = None
    problem: str | None = None
    skip_reason: str | None = None

    def require(self) -> dict[str, Any]:
        """The answer, or skip/fail the calling test with the reason there is none."""
        if self.skip_reason is not None:
            pytest.skip(self.skip_reason)
        if self.problem is not None or self.answer is None:
            pytest.fail(self.problem or "no answer from node", pytrace=False)
        return self.answer


def run_node(
    script: str, request: dict[str, Any], *, packages: tuple[str, ...], purpose: str
) -> NodeAnswer:
    node = shutil.which("node")
    missing = [] if node else ["`node` is not on PATH"]
    missing += [
        f"node_modules/{pkg} is missing"
        for pkg in packages
        if not (REPO / "node_modules" / pkg / "package.json").is_file()
    ]
    if missing:
        if os.environ.get("SESSION_RESUME_NO_NODE") == "1":
            return NodeAnswer(
                skip_reason=f"{', '.join(packages)} not installed (SESSION_RESUME_NO_NODE=1)"
            )
        return NodeAnswer(
            problem=(
                f"{purpose} need Node and {', '.join(packages)}: {'; '.join(missing)}. Install "
                "Node (>= 20) and run `npm ci` in the repository root, or set "
                "SESSION_RESUME_NO_NODE=1 to skip these tests."
            )
        )
    assert node is not None
    try:
        proc = subprocess.run(
            [node, script],
            input=json.dumps(request),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=NODE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return NodeAnswer(problem=f"node {script} did not answer within {NODE_TIMEOUT_S} s")
    if proc.returncode != 0:
        return NodeAnswer(
            problem=f"node {script} failed (exit {proc.returncode}); if a module "
            f"is missing, run `npm ci`.\nstderr:\n{proc.stderr}"
        )
    try:
        answer = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        return NodeAnswer(problem=f"node {script} printed no JSON ({exc}):\n{proc.stdout[:2000]}")
    return NodeAnswer(answer=answer)
