"""Project configuration: `.session-resume.yaml` or `[tool.session-resume]` in pyproject.toml.

Looked up from a start directory upwards; the directory holding it (or `.git`) is the
repository root that artifact paths are relative to.
"""

from __future__ import annotations

import os
import re
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


def find_root(start: Path) -> tuple[Path, Path | None, str, Any]:
    """(root, config file or None, kind, the ``[tool.session-resume]`` value of a
    pyproject.toml as it was read here) searching upwards from ``start``."""
    start = start.resolve()
    for d in [start, *start.parents]:
        if (d / CONFIG_FILE).is_file():
            return d, d / CONFIG_FILE, "yaml", None
        py = d / "pyproject.toml"
        if py.is_file():
            doc = read_pyproject(py)
            tool = doc.get("tool") if doc is not None else None
            if isinstance(tool, dict) and "session-resume" in tool:
                return d, py, "toml", tool["session-resume"]
        if (d / ".git").exists():
            return d, None, "", None
    return start, None, "", None


MAX_TOML_DEPTH = 64  # as for YAML (docs/security.md §5): a real pyproject.toml nests under 10
# What may hold a bracket that is no nesting: a string (multi-line forms first) or a comment.
_TOML_SPECIAL = r"""["'#\[\]{}]"""
_TOML_STRING = (
    r'"""(?:[^"\\]|\\.|"(?!""))*+"""'  # multi-line basic
    r"|'''.*?'''"  # multi-line literal
    r'|"(?:[^"\\\n]|\\.)*+"'  # basic
    r"|'[^'\n]*'"  # literal
)


def toml_depth(text: str) -> int:
    """The deepest nesting of arrays and inline tables (a table header counts too), in one
    linear pass that stops past :data:`MAX_TOML_DEPTH`: ``tomllib`` recurses once per level,
    so 20,000 levels in 40 KB were a ``RecursionError`` (SR900). It stops at an unterminated
    string, where ``tomllib`` stops too."""
    # compiled (and cached by `re`) here: only a pyproject.toml that may configure us is scanned
    special, string = re.compile(_TOML_SPECIAL), re.compile(_TOML_STRING, re.DOTALL)
    pos = depth = deepest = 0
    while deepest <= MAX_TOML_DEPTH:
        m = special.search(text, pos)
        if m is None:
            break
        c, at = m.group(), m.start()
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
        elif c == "#":
            end = text.find("\n", at)
            pos = len(text) if end < 0 else end
            continue
        else:
            s = string.match(text, at)
            if s is None:
                break
            pos = s.end()
            continue
        pos = at + 1
    return deepest


# A line that could start our table: `[tool.session-resume]`, `[tool]`, `tool.session-resume.x
# = …` or `tool = {…}`, keys quoted or not. Most pyproject.toml files have none, and then a
# cold command neither imports nor runs the TOML parser.
_MAY_CONFIGURE_US = (
    rb"""^[ \t]*(?:\[[ \t]*)?["']?tool["']?[ \t]*(?:\]|=|\.[ \t]*["']?session-resume)"""
)


def read_pyproject(path: Path) -> dict[str, Any] | None:
    """A ``pyproject.toml`` parsed, or None when it cannot be read or is not TOML (then it is
    no configuration); ``{}`` when no line could start our table (not parsed at all); one
    nested deeper than :data:`MAX_TOML_DEPTH` is refused (SR405)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if re.search(_MAY_CONFIGURE_US, data, re.MULTILINE) is None:
        return {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # lazy: only a pyproject.toml that may configure the tool needs it
    import tomllib

    if toml_depth(text) > MAX_TOML_DEPTH:
        raise ConfigError(
            diag(
                "SR405",
                f"the file nests arrays or inline tables deeper than {MAX_TOML_DEPTH} levels; "
                "refused before it is parsed",
                file=str(path),
                hint="Nest less deeply: a real pyproject.toml needs under 10 levels.",
            )
        )
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None


def load_config(start: str | os.PathLike[str] | None = None) -> Config:
    root, path, kind, table = find_root(Path(start or os.getcwd()))
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
        raw = table  # parsed once, by find_root
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
    if values.get("archive_keep", 1) < 1:
        # 0 would prune the archive a command has just made (issue 25, finding 1)
        raise ConfigError(
            diag(
                "SR405",
                f"archive_keep must be 1 or more (got {values['archive_keep']}): the archive "
                "a command makes is always kept",
                file=str(path),
            )
        )
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
