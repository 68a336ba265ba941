"""Project configuration: `.session-resume.yaml` or `[tool.session-resume]` in pyproject.toml.

Looked up from a start directory upwards; the directory holding it (or `.git`) is the
repository root that artifact paths are relative to.

:data:`KEYS` is the one definition of the keys: the loader checks every value against it and
`docs/config.md` is generated from it (``python -m session_resume.docgen write``). The file is
repository content (a pull request may change it): it is read only when it is a regular file
inside its own directory, up to :data:`MAX_CONFIG_BYTES`, and no value may lead outside the
repository.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.limits import DEFAULT_MAX_SIZE
from session_resume.records import record
from session_resume.storage.fileio import is_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG_FILE = ".session-resume.yaml"
MAX_CONFIG_BYTES = 1024 * 1024  # a real configuration is under 1 KiB, a pyproject.toml 10 KiB
CONFIG_DOC = "docs/config.md"

# The characters RFC 3986 allows in a URI (unreserved, reserved and `%`): anything else in
# `docs_url` would land in SARIF's `helpUri` and break its `format: uri`.
_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")


def absolute_url(value: str) -> bool:
    """An absolute http(s) URL with a host, of characters a URI may hold (RFC 3986)."""

    if _URI_CHARS.fullmatch(value) is None or re.search(r"%(?![0-9A-Fa-f]{2})", value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


@record(frozen=True)
class Key:
    """One configuration key: its value's type, default, allowed values and an example."""

    name: str
    type: str  # "string", "integer", "list of codes" or "table"
    default: Any
    default_text: str  # the default as docs/config.md states it
    allowed: str  # the allowed values, as docs/config.md states them
    doc: str
    example: str  # the value as written in .session-resume.yaml
    low: int | None = None  # integers: the inclusive range
    high: int | None = None
    toml_example: str = ""  # the value as written in pyproject.toml (default: from example)

    @property
    def field(self) -> str:
        """The attribute of :class:`Config` (a hyphen, as in `per-file-ignores`, is `_`)."""
        return self.name.replace("-", "_")


def _int_key(
    name: str, default: int, low: int, high: int, doc: str, example: str, unit: str = ""
) -> Key:
    return Key(
        name,
        "integer",
        default,
        f"{default:,}{unit}",
        f"{low:,} to {high:,}{unit}",
        doc,
        example,
        low,
        high,
    )


DAY = 86400
KEYS: tuple[Key, ...] = (
    Key(
        "workflow",
        "string",
        None,
        "the state's own `workflow`, else `apex`",
        "a built-in workflow name (`apex`, `generic`, ...) or the path of a workflow YAML file, "
        "relative to the configuration file's directory and inside the repository",
        "The workflow of a state that names none, and of the sessions `init` creates.",
        "generic",
    ),
    Key(
        "session_root",
        "string",
        "agent-output",
        "`agent-output`",
        "a relative path inside the repository (no `..`, not absolute, no link leading out)",
        "The directory whose session directories a bare `session-resume validate` checks.",
        "agent-output",
    ),
    _int_key(
        "max_size",
        DEFAULT_MAX_SIZE,
        1,
        1024 * 1024 * 1024,
        "Files larger than this are refused unread (SR112).",
        "16777216",
        " bytes",
    ),
    _int_key(
        "clock_skew_seconds",
        300,
        0,
        DAY,
        "How far in the future a timestamp may be before it is reported (SR305).",
        "600",
        " seconds",
    ),
    _int_key(
        "stale_after_seconds",
        300,
        1,
        7 * DAY,
        "A lease whose heartbeat is older than this is an orphan (docs/spec.md §7).",
        "900",
        " seconds",
    ),
    _int_key(
        "archive_keep",
        5,
        1,
        10_000,
        "How many archives `archive` and `init --fresh` keep under `.archive/`.",
        "10",
    ),
    Key(
        "docs_url",
        "string",
        None,
        "the repository's `docs/` on GitHub",
        "an absolute http(s) URL of characters a URI may hold (no spaces, quotes, `<`, `>`, "
        "`{`, `}`)",
        "The base URL of the documentation, for SARIF's `helpUri` (`<docs_url>codes/SR301.md`).",
        "https://example.com/session-resume/docs/",
    ),
    Key(
        "select",
        "list of codes",
        None,
        "every code",
        "codes (`SR301`), prefixes (`SR3`) or `ALL`",
        "Report only the diagnostics whose code starts with one of these (as ruff's `select`); "
        "`--select` replaces it. Read errors (SR1xx) are always reported: a file that cannot be "
        "read is never called valid.",
        "[SR3, SR4]",
        toml_example='["SR3", "SR4"]',
    ),
    Key(
        "ignore",
        "list of codes",
        (),
        "none",
        "codes (`SR330`) or prefixes (`SR41`)",
        "Do not report the diagnostics whose code starts with one of these; an ignored error no "
        "longer makes a file invalid. `--ignore` adds to it. Read errors (SR1xx) cannot be "
        "ignored.",
        "[SR330, SR415]",
        toml_example='["SR330", "SR415"]',
    ),
    Key(
        "per-file-ignores",
        "table",
        {},
        "none",
        "a glob of state file paths (relative to the repository root, `*` within a directory, "
        "`**` across) mapped to a list of codes or prefixes",
        "Codes to ignore in the files a glob matches, as ruff's `per-file-ignores`.",
        '{"agent-output/legacy-*/*": [SR330]}',
        toml_example='{ "agent-output/legacy-*/*" = ["SR330"] }',
    ),
)
CODE_SELECTOR = re.compile(r"SR[0-9]{0,3}|ALL")
_BY_NAME: dict[str, Key] = {k.name: k for k in KEYS}


class ConfigError(Exception):
    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@record(frozen=True)
class Config:
    root: Path
    source: str | None = None
    workflow: str | None = _BY_NAME["workflow"].default
    session_root: str = _BY_NAME["session_root"].default
    max_size: int = _BY_NAME["max_size"].default
    clock_skew_seconds: int = _BY_NAME["clock_skew_seconds"].default
    stale_after_seconds: int = _BY_NAME["stale_after_seconds"].default
    archive_keep: int = _BY_NAME["archive_keep"].default
    docs_url: str | None = _BY_NAME["docs_url"].default  # None: reporters.sarif's default
    select: tuple[str, ...] | None = None  # None: every code
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def session_root_dir(self, root: Path | None = None) -> Path:
        """The session root under ``root`` (default: the configuration's), refused (SR105)
        when a link leads it outside the repository."""
        root = root or self.root
        path = root / self.session_root
        if not is_within(Path(os.path.realpath(path)), Path(os.path.realpath(root))):
            raise ConfigError(
                diag(
                    "SR105",
                    f"the configured session_root {self.session_root!r} leads outside the "
                    "repository; refused",
                    file=self.source or str(self.root),
                    hint=f"Make session_root a directory inside the repository ({CONFIG_DOC}).",
                )
            )
        return path


# --- finding and reading the file -----------------------------------------------------------


def _config_error(
    code: str, message: str, path: Path, hint: str = "", line: int | None = None
) -> ConfigError:
    return ConfigError(
        diag(
            code,
            message,
            file=str(path),
            line=line,
            hint=hint or f"Fix the file; every key is described in {CONFIG_DOC}.",
        )
    )


def _candidate(path: Path) -> bool:
    """Whether ``path`` exists (as anything, a dangling link too): then it is ours to read."""
    try:
        os.lstat(path)
    except OSError:
        return False
    return True


def read_config_bytes(path: Path, d: Path) -> bytes:
    """The bytes of a configuration file in directory ``d``: a regular file, or a link whose
    target is inside ``d``, of at most :data:`MAX_CONFIG_BYTES`; anything else is refused
    before a byte is read (its contents never reach a message)."""
    try:
        lst = os.lstat(path)
    except OSError as exc:
        raise _config_error("SR405", f"cannot read the file: {exc.strerror}", path) from None
    target = path
    if stat.S_ISLNK(lst.st_mode):
        target = Path(os.path.realpath(path))
        if not is_within(target, Path(os.path.realpath(d))):
            raise _config_error(
                "SR105",
                "the file is a symbolic link leading outside its directory; not followed",
                path,
                hint="Replace the link with the file itself.",
            )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _config_error("SR405", f"cannot read the file: {exc.strerror}", path) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _config_error(
                "SR405",
                "the file is not a regular file (a directory, FIFO or device); not read",
                path,
                hint="Replace it with a regular file, or remove it.",
            )
        if st.st_size > MAX_CONFIG_BYTES:
            raise _config_error(
                "SR405",
                f"the file is {st.st_size:,} bytes; a configuration file may have "
                f"{MAX_CONFIG_BYTES:,}; not read",
                path,
                hint="Shorten the file.",
            )
        chunks, remaining = [], MAX_CONFIG_BYTES + 1
        while remaining > 0:
            chunk = os.read(fd, remaining)
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise _config_error("SR405", f"cannot read the file: {exc.strerror}", path) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_CONFIG_BYTES:
        raise _config_error(
            "SR405", f"the file grew past {MAX_CONFIG_BYTES:,} bytes while read", path
        )
    return data


def find_root(start: Path) -> tuple[Path, Path | None, str, Any]:
    """(root, config file or None, kind, and for a pyproject.toml its ``[tool.session-resume]``
    value as it was read here with the file's text) searching upwards from ``start``.

    The search is lexical, from the path as the caller gave it, before any link is followed:
    a session directory that is a link out of the repository must find the repository it is
    named in (whose walk then refuses the link, SR105), not the folder the link leads to."""
    start = Path(os.path.abspath(start))
    for d in [start, *start.parents]:
        if _candidate(d / CONFIG_FILE):
            return d, d / CONFIG_FILE, "yaml", None
        py = d / "pyproject.toml"
        if _candidate(py):
            doc, text = _read_pyproject(py, d)
            tool = doc.get("tool") if doc is not None else None
            if isinstance(tool, dict) and "session-resume" in tool:
                return d, py, "toml", (tool["session-resume"], text)
        if os.path.lexists(d / ".git"):
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


def read_pyproject(path: Path, d: Path | None = None) -> dict[str, Any] | None:
    """A ``pyproject.toml`` parsed, or None when it is not TOML (then it is no
    configuration); ``{}`` when no line could start our table (not parsed at all); one
    nested deeper than :data:`MAX_TOML_DEPTH`, a link out of its directory, a file that is not
    regular or one over :data:`MAX_CONFIG_BYTES` is refused (SR405, SR105)."""
    return _read_pyproject(path, d if d is not None else path.parent)[0]


def _read_pyproject(path: Path, d: Path) -> tuple[dict[str, Any] | None, str]:
    """:func:`read_pyproject`, and the text it parsed (for the lines of messages)."""
    data = read_config_bytes(path, d)
    if re.search(_MAY_CONFIGURE_US, data, re.MULTILINE) is None:
        return {}, ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, ""
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
        return tomllib.loads(text), text
    except (tomllib.TOMLDecodeError, RecursionError):
        return None, text


# --- checking the values -------------------------------------------------------------------


def key_line(text: str, kind: str, key: str) -> int | None:
    """The line (1-based) where ``key`` is set in the configuration text, when found."""
    quoted = rf"""(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')"""
    if kind == "yaml":
        pattern = rf"^{quoted}[ \t]*:"
        m = re.search(pattern, text, re.MULTILINE)
    else:
        header = re.search(
            r"""^[ \t]*\[[ \t]*["']?tool["']?[ \t]*\.[ \t]*["']?session-resume["']?[ \t]*\]""",
            text,
            re.MULTILINE,
        )
        start = header.end() if header else 0
        pattern = rf"""(?:^[ \t]*|[{{,.][ \t]*){quoted}[ \t]*="""
        m = re.compile(pattern, re.MULTILINE).search(text, start)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bad_codes(value: object) -> str | None:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        return "a list of codes"
    bad = [c for c in value if CODE_SELECTOR.fullmatch(c) is None]
    return f"codes or prefixes like SR3 or SR301, not {_show(bad[0])}" if bad else None


def _check_value(key: Key, value: object) -> str | None:
    """Why ``value`` is not allowed for ``key`` (None: it is)."""
    if key.type == "list of codes":
        problem = _bad_codes(value)
        return f"{key.name} must be {problem}" if problem else None
    if key.type == "table":
        if not isinstance(value, dict):
            return f"{key.name} must be a table of globs to lists of codes"
        for glob, codes in value.items():
            problem = _bad_codes(codes)
            if not isinstance(glob, str) or not glob or problem:
                return f"{key.name}: {_show(glob)} must map to {problem or 'a list of codes'}"
        return None
    if key.type == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{key.name} must be an integer ({key.allowed}), not {_show(value)}"
        assert key.low is not None and key.high is not None
        if not key.low <= value <= key.high:
            return f"{key.name} must be {key.allowed}; {_show(value)} is out of range"
        return None
    if not isinstance(value, str):
        return f"{key.name} must be a string, not {_show(value)}"
    check = _STRING_CHECKS.get(key.name)
    return check(value) if check else None


def _check_session_root(value: str) -> str | None:
    parts = value.replace("\\", "/").split("/")
    if not value or os.path.isabs(value) or value.startswith(("/", "\\")) or ".." in parts:
        return f"session_root must be a relative path inside the repository, not {_show(value)}"
    if "\0" in value:
        return "session_root must not hold a NUL character"
    return None


def _check_docs_url(value: str) -> str | None:
    if absolute_url(value):
        return None
    return (
        f"docs_url must be an absolute http(s) URL of characters a URI may hold, not {_show(value)}"
    )


def _check_workflow(value: str) -> str | None:
    if not value or "\0" in value:
        return f"workflow must be a workflow name or file, not {_show(value)}"
    return None


_STRING_CHECKS: dict[str, Callable[[str], str | None]] = {
    "session_root": _check_session_root,
    "docs_url": _check_docs_url,
    "workflow": _check_workflow,
}


def _resolve_workflow(value: str, path: Path, root: Path, line: int | None) -> str:
    """A built-in name as it is; anything else is a file relative to the configuration
    file's directory that must exist inside the repository."""
    # lazy: the built-in names only when a configuration names a workflow
    from session_resume.core.workflow import BUILTINS

    if value in BUILTINS:
        return value
    target = path.parent / value
    # repository content (a pull request) must not make the tool read a file outside it
    if os.path.isabs(value) or not is_within(
        Path(os.path.realpath(target)), Path(os.path.realpath(root))
    ):
        raise _config_error(
            "SR105",
            "workflow: the configured workflow file leads outside the repository; refused",
            path,
            hint="Name a built-in workflow or a workflow file inside the repository.",
            line=line,
        )
    if not target.is_file():
        raise _config_error(
            "SR405",
            f"workflow: no built-in workflow named {_show(value)} and no file at that path "
            f"(built-ins: {', '.join(BUILTINS)}; a file is relative to this file's directory)",
            path,
            hint=f"Name one of the built-ins ({', '.join(BUILTINS)}) or an existing workflow "
            f"YAML file; see {CONFIG_DOC}.",
            line=line,
        )
    return str(target)


def load_config(start: str | os.PathLike[str] | None = None) -> Config:
    root, path, kind, table = find_root(Path(start or os.getcwd()))
    if path is None:
        return Config(root=root)
    raw: Any
    text = ""
    if kind == "yaml":
        # lazy: only a YAML config needs the YAML reader
        from session_resume.core.yamlsafe import load_yaml_text

        try:
            text = read_config_bytes(path, root).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _config_error("SR405", f"the file is not UTF-8: {exc.reason}", path) from None
        res = load_yaml_text(text, file=str(path))
        if res.diagnostics:
            d = res.diagnostics[0]
            raise ConfigError(
                diag(
                    "SR405",
                    d.message,
                    file=str(path),
                    line=d.line,
                    column=d.column,
                    hint=f"Write the file as a YAML mapping of the keys in {CONFIG_DOC}.",
                )
            )
        raw = res.value if res.value is not None else {}
    else:
        raw, text = table  # parsed once, by find_root
    if not isinstance(raw, dict):
        raise _config_error(
            "SR405",
            "the configuration must be a mapping of keys to values",
            path,
            hint=f"Write `key: value` lines; the keys are in {CONFIG_DOC}.",
        )
    values: dict[str, Any] = {}
    for k, v in raw.items():
        key = _BY_NAME.get(k) if isinstance(k, str) else None
        line = key_line(text, kind, k) if isinstance(k, str) else None
        if key is None:
            raise _config_error(
                "SR405",
                f"unknown key {_show(k)} (known: {', '.join(_BY_NAME)})",
                path,
                hint=f"Remove the key or correct its name; the keys are in {CONFIG_DOC}.",
                line=line,
            )
        problem = _check_value(key, v)
        if problem is not None:
            raise _config_error(
                "SR405",
                problem,
                path,
                hint=f"Set {key.name} to {key.allowed} (e.g. `{key.name}: {key.example}`); "
                f"see {CONFIG_DOC}.",
                line=line,
            )
        values[key.field] = v
    if isinstance(values.get("select"), list):
        values["select"] = tuple(values["select"])
    if isinstance(values.get("ignore"), list):
        values["ignore"] = tuple(values["ignore"])
    if isinstance(values.get("per_file_ignores"), dict):
        values["per_file_ignores"] = tuple(
            (g, tuple(c)) for g, c in values["per_file_ignores"].items()
        )
    if "workflow" in values:
        values["workflow"] = _resolve_workflow(
            values["workflow"], path, root, key_line(text, kind, "workflow")
        )
    return Config(root=root, source=str(path), **values)
