"""Project configuration: `.session-resume.yaml` or `[tool.session-resume]` in pyproject.toml.

Looked up from a start directory upwards; the directory holding it (or `.git`) is the
repository root that artifact paths are relative to.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.limits import DEFAULT_MAX_SIZE
from session_resume.records import dataclass
from session_resume.storage.fileio import is_within

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any

CONFIG_FILE = ".session-resume.yaml"
_KEYS = {
    "workflow": str,
    "session_root": str,
    "max_size": int,
    "clock_skew_seconds": int,
    "stale_after_seconds": int,
    "archive_keep": int,
    "docs_url": str,
}


def absolute_url(value: str) -> bool:
    """An absolute http(s) URL with a host, and nothing a URI may not hold."""

    if not value.isprintable() or any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


class ConfigError(Exception):
    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass(frozen=True)
class Config:
    root: Path
    source: str | None = None
    workflow: str | None = None
    session_root: str = "agent-output"
    max_size: int = DEFAULT_MAX_SIZE
    clock_skew_seconds: int = 300
    stale_after_seconds: int = 300
    archive_keep: int = 5
    docs_url: str | None = None  # SARIF's documentation base URL (None: reporters.sarif)


def find_root(start: Path) -> tuple[Path, Path | None, str]:
    """(root, config file or None, kind) searching upwards from ``start``."""
    start = start.resolve()
    for d in [start, *start.parents]:
        if (d / CONFIG_FILE).is_file():
            return d, d / CONFIG_FILE, "yaml"
        py = d / "pyproject.toml"
        if py.is_file():
            # lazy: only a pyproject.toml needs it
            import tomllib

            try:
                with open(py, "rb") as fh:
                    if "session-resume" in tomllib.load(fh).get("tool", {}):
                        return d, py, "toml"
            except (OSError, tomllib.TOMLDecodeError):
                pass
        if (d / ".git").exists():
            return d, None, ""
    return start, None, ""


def load_config(start: str | os.PathLike[str] | None = None) -> Config:
    root, path, kind = find_root(Path(start or os.getcwd()))
    if path is None:
        return Config(root=root)
    raw: Any
    if kind == "yaml":
        # lazy: only a YAML config needs the YAML reader
        from session_resume.core.yamlsafe import load_yaml_text

        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(diag("SR405", f"cannot read config: {exc}", file=str(path))) from None
        res = load_yaml_text(text, file=str(path))
        if res.diagnostics:
            d = res.diagnostics[0]
            raise ConfigError(
                diag("SR405", d.message, file=str(path), line=d.line, column=d.column)
            )
        raw = res.value if res.value is not None else {}
    else:
        # lazy: only a pyproject.toml needs it
        import tomllib

        with open(path, "rb") as fh:
            raw = tomllib.load(fh)["tool"]["session-resume"]
    if not isinstance(raw, dict):
        raise ConfigError(diag("SR405", "the configuration must be a mapping", file=str(path)))
    values: dict[str, Any] = {}
    for k, v in raw.items():
        want = _KEYS.get(k)
        if want is None:
            raise ConfigError(
                diag("SR405", f"unknown key {k!r} (known: {', '.join(_KEYS)})", file=str(path))
            )
        if not isinstance(v, want) or isinstance(v, bool):
            raise ConfigError(diag("SR405", f"{k} must be a {want.__name__}", file=str(path)))
        values[k] = v
    if "docs_url" in values and not absolute_url(values["docs_url"]):
        raise ConfigError(diag("SR405", "docs_url must be an absolute http(s) URL", file=str(path)))
    wf = values.get("workflow")
    if wf and (wf.endswith((".yaml", ".yml")) or "/" in wf):
        target = path.parent / wf
        # repository content (a pull request) must not make the tool read a file outside it
        if os.path.isabs(wf) or not is_within(
            Path(os.path.realpath(target)), Path(os.path.realpath(root))
        ):
            raise ConfigError(
                diag(
                    "SR105",
                    "the configured `workflow:` path leads outside the repository; refused",
                    file=str(path),
                )
            )
        values["workflow"] = str(target)
    return Config(root=root, source=str(path), **values)
