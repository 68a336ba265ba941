"""`session-resume hooks install|uninstall`: the hook configuration of a repository.

Two files: ``.github/hooks/session-resume.json`` (VS Code and the Copilot agents read
``.github/hooks/*.json``; PascalCase event names, which both accept, VS Code's ``command`` and
``timeout`` and Copilot's ``bash``, ``powershell`` and ``timeoutSec``) and a merge into
``.claude/settings.json`` (Claude Code) that keeps every key and hook already there. Install
adds each entry once (a second install changes nothing); uninstall removes exactly the
entries install adds (an entry someone edited is no longer ours and stays). The commands name
no path, so they run from any directory the host starts them in: the hook finds the
repository from the ``cwd`` of its input.

The repository is untrusted: a configuration file or a directory on its way that is a
symbolic link leading outside the repository is refused (SR105), as is one that is not a
regular file or directory (SR102) or a file that is not a JSON object of the hosts' shape
(SR190), or that holds what JSON cannot write back (a lone surrogate, a number beyond any
float such as ``1e400``, ``NaN``: SR190, :func:`load_writable`); nothing is written then.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.records import record
from session_resume.services.errors import ServiceError
from session_resume.services.hook_hosts import CLAUDE_FILE, GITHUB_FILE, HOSTS
from session_resume.storage import fileio
from session_resume.storage.config import ConfigError, load_config
from session_resume.storage.held import HeldDir, StoreError, read_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from session_resume.core.diagnostics import Diagnostic

TIMEOUT = 10  # seconds the host waits for one hook
MAX_CONFIG = 1024 * 1024  # a larger configuration file is refused (SR190)
# Event name in the configuration -> the hook's EVENT argument.
EVENTS = {
    "SessionStart": "session-start",
    "PreToolUse": "pre-tool-use",
    "PostToolUse": "post-tool-use",
    "Stop": "stop",
    "PreCompact": "pre-compact",
}
# Claude Code's file tools and its two shells (Bash, and PowerShell where it is enabled): the
# tools the pre-tool-use guard runs for. The post-tool-use hook runs after every tool ("*"):
# it puts back a protocol file that any tool changed (docs/spec.md §13).
CLAUDE_TOOLS = "Write|Edit|MultiEdit|NotebookEdit|Bash|PowerShell"
CLAUDE_AFTER = "*"
# The matcher earlier releases wrote: their entries are replaced by install and removed by
# uninstall like the current ones.
_EARLIER_MATCHERS = ("Write|Edit|MultiEdit|NotebookEdit|Bash",)
# The file install writes for each host: its home (services/hook_hosts.py); the hosts that
# read a file without calling it home run its commands too, which then stay silent for them.
HOSTS_OF_FILE = {f: tuple(h.name for h in HOSTS if h.home == f) for f in (GITHUB_FILE, CLAUDE_FILE)}


class Unwritable(ValueError):
    """A JSON text that parses but cannot be written back as JSON (the reason in words)."""


def _constant(name: str) -> Any:
    raise Unwritable(f"it holds {name}, which JSON has no form for (a rewrite would not be JSON)")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise Unwritable(
            f"it holds the number {text[:40]}, beyond any float (a rewrite would write Infinity, "
            "which is not JSON)"
        )
    return value


def load_writable(text: str) -> Any:
    """``json.loads(text)``, refusing (:class:`Unwritable`) what ``json.dumps`` cannot write
    back as the same JSON: ``NaN``/``Infinity``, a number beyond any float, and a string or key
    with a lone surrogate (``"\\ud800"``: no UTF-8 form). Other bad text: ``ValueError``."""
    doc = json.loads(text, parse_constant=_constant, parse_float=_float)
    stack = [doc]
    while stack:  # no recursion: the parser's own depth is the only limit
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and not value.isprintable():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise Unwritable(
                    "it holds a lone surrogate escape (\\ud800-\\udfff alone), which has no "
                    "UTF-8 form"
                ) from None
    return doc


@record(frozen=True)
class Change:
    """What install or uninstall did (or would do) to one file."""

    path: Path
    shown: str  # repository-relative
    action: str  # created | updated | unchanged | removed | absent
    content: str | None = None  # the new text (None: the file is or stays absent)
    warning: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.shown,
            "action": self.action,
            "content": self.content,
            **({"warning": self.warning} if self.warning else {}),
        }


def command(event: str, host: str | None = None) -> str:
    return f"session-resume hook {event}" + (f" --host {host}" if host else "")


def github_entry(event: str) -> dict[str, Any]:
    cmd = command(event)
    return {
        "type": "command",
        "command": cmd,
        "bash": cmd,
        "powershell": cmd,
        "timeout": TIMEOUT,
        "timeoutSec": TIMEOUT,
    }


def claude_entry(name: str, event: str) -> dict[str, Any]:
    group: dict[str, Any] = {}
    if name in ("PreToolUse", "PostToolUse"):
        group["matcher"] = CLAUDE_TOOLS if name == "PreToolUse" else CLAUDE_AFTER
    group["hooks"] = [{"type": "command", "command": command(event, "claude"), "timeout": TIMEOUT}]
    return group


def earlier_entries(path: Path, name: str) -> list[dict[str, Any]]:
    """The entries earlier releases' install added to the event ``name`` of ``path``."""
    if path != CLAUDE_FILE or name not in ("PreToolUse", "PostToolUse"):
        return []
    current = claude_entry(name, EVENTS[name])
    return [{**current, "matcher": m} for m in _EARLIER_MATCHERS]


def entries(path: Path) -> dict[str, dict[str, Any]]:
    """The entry install adds to each event's list of ``path``."""
    if path == GITHUB_FILE:
        return {name: github_entry(ev) for name, ev in EVENTS.items()}
    return {name: claude_entry(name, ev) for name, ev in EVENTS.items()}


def configures(root: Path, rel: Path, event: str) -> bool:
    """Whether the configuration file ``rel`` under ``root`` runs a `session-resume hook`
    command for ``event`` (an EVENT argument: ``stop``), under any spelling of the event's
    name the hosts accept (``Stop``, ``stop``, ``agentStop``). False for a file that is
    absent, unreadable or not of the hosts' shape: no host runs anything from it then."""
    try:
        res = read_path(root / rel, max_size=MAX_CONFIG, root=root)
        if res.data is None:
            return False
        doc = json.loads(res.data.decode("utf-8"))
    except (OSError, ValueError, RecursionError, StoreError):
        return False
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return False
    for name, entries_ in hooks.items():
        if _EVENT_OF_NAME.get(str(name).lower()) != event or not isinstance(entries_, list):
            continue
        for entry in entries_:
            inner = entry.get("hooks") if isinstance(entry, dict) else None
            for e in inner if isinstance(inner, list) else [entry]:
                if isinstance(e, dict) and any(
                    isinstance(e.get(k), str) and e[k].startswith("session-resume hook")
                    for k in ("command", "bash", "powershell")
                ):
                    return True
    return False


# Each event's names in a configuration, lower case: the PascalCase ones install writes, the
# camelCase ones Copilot also reads (agentStop and subagentStop are its stops).
_EVENT_OF_NAME = {
    **{name.lower(): ev for name, ev in EVENTS.items()},
    "agentstop": "stop",
    "subagentstop": "stop",
}


def find_root(start: str | os.PathLike[str]) -> Path | None:
    """The repository root holding ``start`` (as the other commands find it), or None."""
    try:
        return load_config(Path(start)).root
    except (ConfigError, OSError, ValueError):
        return None


def _files(hosts: tuple[str, ...]) -> list[Path]:
    return [f for f, owners in HOSTS_OF_FILE.items() if set(owners) & set(hosts)]


def check_path(
    root: Path, rel: Path, *, real_only: str | None = None, relative: bool = False
) -> Diagnostic | None:
    """Each component of ``rel`` under ``root``: a link must stay inside the repository
    (SR105); the directories must be directories and the file a regular file (or absent).
    ``real_only``: the command that writes only real files and directories (any link refused,
    SR102); without it a link inside the repository is followed. ``relative``: the
    diagnostics name the file relative to ``root`` (else as ``root / rel``)."""
    root_real = os.path.realpath(root)
    here = root
    parts = rel.parts
    for i, part in enumerate(parts):
        here = here / part
        shown = Path(*parts[: i + 1]).as_posix()
        file = shown if relative else str(here)
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return diag("SR104", f"cannot stat: {exc.strerror}", file=file)
        if stat.S_ISLNK(st.st_mode):
            target = os.path.realpath(here)
            if not fileio.within(target, root_real):
                return diag(
                    "SR105",
                    f"{shown} is a symbolic link leading outside the repository (to "
                    f"{target!r}); refusing to follow it, nothing was written",
                    file=file,
                    hint="Replace the link with a real file or directory inside the repository.",
                )
            if real_only is not None:
                return diag(
                    "SR102",
                    f"{shown} is a symbolic link (to {target!r}); `{real_only}` writes only "
                    "real files and directories, so nothing was written",
                    file=file,
                    hint="Replace the link with the file or directory itself, then run the "
                    "command again.",
                )
            try:
                st = os.stat(here)
            except OSError:
                return None  # a dangling link inside the repository: replaced by the write
        last = i == len(parts) - 1
        if not (stat.S_ISREG(st.st_mode) if last else stat.S_ISDIR(st.st_mode)):
            kind = "a regular file" if last else "a directory"
            return diag("SR102", f"{shown} is not {kind}; nothing was written", file=file)
    return None


def _read(root: Path, rel: Path) -> dict[str, Any] | None:
    """The configuration file as a JSON object, None when absent; SR190 when it is not one."""
    path = root / rel
    res = read_path(path, max_size=MAX_CONFIG, root=root)
    if res.data is None:
        if any(d.code == "SR100" for d in res.diagnostics):
            return None
        raise ServiceError(res.diagnostics)
    try:
        doc = load_writable(res.data.decode("utf-8"))
    except Unwritable as exc:
        raise ServiceError([_invalid(rel, str(exc))]) from None
    except (ValueError, RecursionError) as exc:
        raise ServiceError([_invalid(rel, f"it is not JSON ({exc})")]) from None
    if not isinstance(doc, dict):
        raise ServiceError([_invalid(rel, "it is not a JSON object")])
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict) or any(not isinstance(v, list) for v in hooks.values()):
        raise ServiceError([_invalid(rel, "its `hooks` is not an object of lists")])
    return doc


def _invalid(rel: Path, why: str) -> Diagnostic:
    return diag(
        "SR190",
        f"{rel.as_posix()} cannot be merged: {why}; nothing was written",
        file=rel.as_posix(),
    )


def _merged(rel: Path, doc: dict[str, Any] | None) -> dict[str, Any]:
    new: dict[str, Any] = json.loads(json.dumps(doc)) if doc is not None else {}
    if doc is None and rel == GITHUB_FILE:
        new["version"] = 1
    hooks = new.setdefault("hooks", {})
    for name, entry in entries(rel).items():
        lst = hooks.setdefault(name, [])
        earlier = earlier_entries(rel, name)
        lst[:] = [e for e in lst if e not in earlier]
        if entry not in lst:
            lst.append(entry)
    return new


def _unmerged(rel: Path, doc: dict[str, Any]) -> dict[str, Any] | None:
    """``doc`` without the entries install adds; None when nothing else is left (the file
    goes: ``version`` alone in the .github file, nothing in .claude/settings.json)."""
    new: dict[str, Any] = json.loads(json.dumps(doc))
    hooks = new.get("hooks")
    removed = False
    if isinstance(hooks, dict):
        for name, entry in entries(rel).items():
            lst = hooks.get(name)
            ours = [entry, *earlier_entries(rel, name)]
            if isinstance(lst, list) and any(e in lst for e in ours):
                removed = True
                lst[:] = [e for e in lst if e not in ours]
                if not lst:
                    del hooks[name]
        if removed and not hooks:
            del new["hooks"]
    if not removed:
        return new
    rest = {k: v for k, v in new.items() if not (rel == GITHUB_FILE and k == "version")}
    return None if not rest else new


def _unmerged_or_none(rel: Path, doc: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if doc is None else _unmerged(rel, doc)


def _text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _plan(
    root_arg: str | None, hosts: tuple[str, ...], build: Any
) -> tuple[Path, list[tuple[Path, dict[str, Any] | None, dict[str, Any] | None]]]:
    root = find_root(root_arg or os.getcwd()) if root_arg is None else Path(root_arg).resolve()
    if root is None or not root.is_dir():
        raise ServiceError([diag("SR100", "no such repository root", file=str(root_arg))], 2)
    problems = [d for d in (check_path(root, f) for f in _files(hosts)) if d is not None]
    if problems:
        raise ServiceError(problems)
    out = []
    for rel in _files(hosts):
        old = _read(root, rel)
        out.append((rel, old, build(rel, old)))
    return root, out


def install(root_arg: str | None, hosts: tuple[str, ...], *, dry_run: bool = False) -> list[Change]:
    """Write (or with ``dry_run`` only describe) the hook configuration for ``hosts``."""
    root, plan = _plan(root_arg, hosts, _merged)
    changes = []
    for rel, old, new in plan:
        assert new is not None
        action = "unchanged" if old == new else ("created" if old is None else "updated")
        if action != "unchanged" and not dry_run:
            _write(root, rel, _text(new))
        changes.append(Change(root / rel, rel.as_posix(), action, _text(new)))
    if changes and shutil.which("session-resume") is None:
        changes[0] = Change(
            changes[0].path,
            changes[0].shown,
            changes[0].action,
            changes[0].content,
            "`session-resume` is not on PATH here: the hosts run `session-resume hook EVENT`, "
            "so install it where they find it (e.g. `pipx install session-resume`)",
        )
    return changes


def uninstall(
    root_arg: str | None, hosts: tuple[str, ...], *, dry_run: bool = False
) -> list[Change]:
    """Remove (or with ``dry_run`` only describe removing) the entries install adds."""
    root, plan = _plan(
        root_arg, hosts, lambda rel, old: None if old is None else _unmerged(rel, old)
    )
    changes = []
    for rel, old, new in plan:
        if old is None:
            changes.append(Change(root / rel, rel.as_posix(), "absent"))
            continue
        if new is None:
            if not dry_run:
                _remove(root, rel)
            changes.append(Change(root / rel, rel.as_posix(), "removed"))
            continue
        action = "unchanged" if new == old else "updated"
        if action == "updated" and not dry_run:
            _write(root, rel, _text(new))
        changes.append(Change(root / rel, rel.as_posix(), action, _text(new)))
    return changes


def _write(root: Path, rel: Path, text: str) -> None:
    # the file's directory held from the root (missing components made relative to their
    # held parent, never at a link's target), the file replaced by name inside it
    try:
        with HeldDir.at(root / rel.parent, root, create=True) as h:
            h.replace_file(rel.name, text.encode("utf-8"))
    except StoreError as exc:
        raise ServiceError(exc.diagnostics, 1) from None


def _remove(root: Path, rel: Path) -> None:
    try:
        with HeldDir.at(root / rel.parent, root) as h:
            h.unlink(rel.name)
    except StoreError as exc:
        raise ServiceError(exc.diagnostics, 1) from None
