"""What the report says about the machine and the sources a run measured."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from runner import ROOT


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable,
        "versions": _versions(),
    }
    info["source"] = _source_revision()
    info["temp_dir"] = _temp_dir_info()
    if hasattr(os, "getloadavg"):
        info["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    return info


def _versions() -> dict[str, str]:
    from importlib import metadata

    versions: dict[str, str] = {}
    for dist in ("session-resume", "check-jsonschema", "jsonschema", "jsonschema-rs"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    node = shutil.which("node")  # the conformance benchmark's Node adapter
    if node is not None:
        try:
            versions["node"] = subprocess.run(
                [node, "--version"], capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            versions["node"] = "unknown version"
    return versions


def _temp_dir_info() -> str:
    """Where the benchmark data lives: the I/O benchmarks (fsync, a 1 GB file) depend on it."""
    tmp = os.path.realpath(tempfile.gettempdir())
    fs, mount = "unknown filesystem", ""
    try:
        with open("/proc/mounts", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 3:
                    continue
                point = parts[1].replace("\\040", " ")
                inside = tmp == point or tmp.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(mount):
                    fs, mount = f"{parts[2]} on {parts[0]}", point
    except OSError:
        pass
    free = shutil.disk_usage(tmp).free / 1e9
    return f"{tmp} ({fs}{f' mounted at {mount}' if mount else ''}; {free:.0f} GB free)"


def _source_revision() -> str:
    """The git commit of the source tree, "+ local changes" if the package differs from it."""
    git = ["git", "-C", str(ROOT)]
    try:
        head = subprocess.run(
            [*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--", "validator", "schema", "conformance"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"{ROOT} (not a git checkout)"
    if not dirty:
        return head
    # Uncommitted changes: a digest of what was measured, so two runs can tell whether they
    # measured the same sources.
    return f"{head} + local changes (sources sha256 {_sources_digest()})"


def _sources_digest() -> str:
    """sha256 over the package sources, schemas, workflows and conformance cases (path+bytes)."""
    import hashlib

    h = hashlib.sha256()
    for top in ("validator", "schema", "conformance"):
        for f in sorted((ROOT / top).rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                h.update(f.relative_to(ROOT).as_posix().encode() + b"\0")
                h.update(f.read_bytes() + b"\0")
    return h.hexdigest()[:12]
