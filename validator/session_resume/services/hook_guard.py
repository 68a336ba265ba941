"""The pre-tool-use guard (docs/spec.md §13): whether a tool call would write, move or delete
a protocol file, read from the tool's input. A courtesy, best effort: what it cannot see (a
spelling it does not parse) the post-tool-use and stop events put back afterwards
(``storage/written.py``).

It needs no session and no configuration: a protocol file's name (the state, ``.bak``,
worklog, lease, lock, handoff, the tool's record of its writes) inside any repository that a
path names is refused, and so is the configuration (``.session-resume.yaml``, a
``pyproject.toml`` holding ``[tool.session-resume]``) and a directory removed or moved whole
that holds protocol files. Shell command lines (POSIX shells and PowerShell) are read whole
(the host's input is bounded) in one linear pass of tokens: separators, grouping and compound
commands, redirections (``>``, ``>>``, ``>|``, ``&>``), quotes and ``\\cmd``, wrappers
(``sudo``, ``env``, ``bash -c`` ...), ``git``'s global options, a directory destination of
``cp``/``mv``/``ln``/``install``/``rsync`` (or ``-t DIR``), ``find -delete``, ``dd of=``,
``file:`` URIs (percent-decoded) and patterns.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from session_resume.storage import hook_probe as probe

# lazy imports: the URI decoder only for a URI, the tool-input readers from their module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STATE = "00-session-state.json"
# Every name the protocol writes in a session directory, and what each one is.
PROTECTED = {
    STATE: "state",
    STATE + ".bak": "bak",
    "00-worklog.jsonl": "worklog",
    "00-session.active": "lease",
    STATE + ".lock": "lock",
    "00-handoff.md": "handoff",
    ".00-session-written": "record",  # the directory of the tool's record of its writes
    ".session-resume.yaml": "config",
}
RECORD_DIR = ".00-session-written"
_NAMES = frozenset(n for n, k in PROTECTED.items() if k != "config")
MAX_NESTED = 3  # levels of `bash -c "..."` read

# One token of a shell command line; possessive, so no input backtracks.
_TOKEN = re.compile(
    r"""[ \t\r\f\v]++
    |(?P<redir>[0-9]*+(?:>>|>\||&>>|&>|>&|>|<<<|<<-|<<|<>|<))
    |(?P<sep>\|\||&&|;;|[;&|\n(){}`])
    |(?P<word>(?:'[^']*+'|"(?:[^"\\]|\\.)*+"|\\.|[^\s;&|<>(){}`'"\\])++)
    |(?P<other>.)""",
    re.X | re.S,
)
_QUOTED = re.compile(r"""'([^']*+)'|"((?:[^"\\]|\\.)*+)"|\\(.)""", re.S)
_ESCAPE = re.compile(r"\\(.)", re.S)
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+\+?=")
_GLOB = re.compile(r"[*?\[]")
_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "time", "{"}
)
_WRAPPERS = frozenset(
    {"sudo", "env", "command", "builtin", "nohup", "doas", "exec", "nice", "ionice", "stdbuf"}
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh", "powershell"})
_DELETES = frozenset({"rm", "rmdir", "unlink", "shred"})
_WRITES = frozenset({"tee", "truncate", "touch", "chmod", "chown"})
_COPIES = frozenset({"cp", "ln", "install", "rsync", "scp"})
_GIT_WRITES = frozenset({"checkout", "restore", "rm", "mv", "switch", "reset"})
_GIT_VALUE_OPTIONS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}
)
# PowerShell cmdlets (case-insensitive) and, in a PowerShell tool, their aliases.
_PS_DELETES = frozenset({"remove-item", "clear-content"})
_PS_WRITES = frozenset({"set-content", "add-content", "out-file", "new-item", "tee-object"})
_PS_MOVES = frozenset({"move-item", "rename-item"})
_PS_COPIES = frozenset({"copy-item"})
_PS_ALIASES = {
    "ri": "remove-item",
    "del": "remove-item",
    "erase": "remove-item",
    "rd": "remove-item",
    "clc": "clear-content",
    "sc": "set-content",
    "ac": "add-content",
    "ni": "new-item",
    "mi": "move-item",
    "move": "move-item",
    "rni": "rename-item",
    "ren": "rename-item",
    "cpi": "copy-item",
    "copy": "copy-item",
}
_PS_DEST = frozenset({"-destination", "-dest", "-newname"})
_PS_PATH = frozenset({"-path", "-literalpath", "-lp", "-filepath", "-pspath"})
_PS_VALUED = frozenset({"-value", "-encoding", "-include", "-exclude", "-filter", "-itemtype"})

# A target: (the path as written, "write" or "delete", the directory it is relative to).
Target = tuple[str, str, str]


# --- shell command lines -------------------------------------------------------------------------


def _unquote(word: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return m.group(1)
        if m.group(2) is not None:
            return _ESCAPE.sub(r"\1", m.group(2))
        return m.group(3)

    return _QUOTED.sub(one, word)


def shell_targets(
    command: str, cwd: str, *, powershell: bool = False, depth: int = 0
) -> list[Target]:
    """What a shell command line may write, move or delete (see the module's text)."""
    if powershell:
        command = command.replace("\\", "/").replace("`", "")
    out: list[Target] = []
    words: list[str] = []
    pending: str | None = None  # the redirection whose target is the next word
    for m in _TOKEN.finditer(command):
        kind = m.lastgroup
        if kind == "word":
            word = _unquote(m.group())
            if pending is not None:
                if ">" in pending:
                    out.append((word, "write", cwd))
                pending = None
            else:
                words.append(word)
        elif kind == "redir":
            pending = m.group()
        elif kind == "sep":
            out += _segment(words, cwd, powershell, depth)
            words, pending = [], None
    out += _segment(words, cwd, powershell, depth)
    return out


def _command_name(word: str) -> str:
    return os.path.basename(word.lstrip("\\")).lower()


def _segment(words: list[str], cwd: str, ps: bool, depth: int) -> list[Target]:
    i = 0
    while i < len(words):
        w = words[i]
        name = _command_name(w)
        if w in _KEYWORDS or _ASSIGN.match(w):
            i += 1
        elif name in _WRAPPERS or name == "time" or name == "xargs":
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
        else:
            break
    if i >= len(words):
        return []
    name, args = _command_name(words[i]), words[i + 1 :]
    if ps or "-" in name:
        name = _PS_ALIASES.get(name, name) if ps else name
    if name in _SHELLS or name == "eval":
        return _nested(name, args, cwd, ps, depth)
    if name in _DELETES:
        return [(a, "delete", cwd) for a in _operands(args)]
    if name in _WRITES:
        return [(a, "write", cwd) for a in _operands(args)]
    if name == "mv":
        return _copy_like(args, cwd, move=True)
    if name in _COPIES:
        return _copy_like(args, cwd, move=False)
    if name in ("sed", "perl") and any(a[:1] == "-" and "i" in a for a in args):
        return [(a, "write", cwd) for a in _operands(args)]
    if name == "dd":
        return [(a[3:], "write", cwd) for a in args if a.startswith("of=")]
    if name == "find" and any(a in ("-delete", "-exec", "-execdir", "-ok") for a in args):
        tops = []
        for a in args:
            if a.startswith(("-", "(", "!")):
                break
            tops.append((a, "delete", cwd))
        return tops
    if name == "git":
        return _git(args, cwd)
    if name in _PS_DELETES or name in _PS_WRITES:
        mode = "delete" if name in _PS_DELETES else "write"
        return [(a, mode, cwd) for a in _ps_operands(args)[0]]
    if name in _PS_MOVES or name in _PS_COPIES:
        srcs, dest = _ps_operands(args)
        if dest is None and len(srcs) >= 2:
            srcs, dest = srcs[:-1], srcs[-1]
        return _into(srcs, dest, cwd, move=name in _PS_MOVES, named_dir=False)
    return []


def _nested(name: str, args: list[str], cwd: str, ps: bool, depth: int) -> list[Target]:
    if depth >= MAX_NESTED:
        return []
    inner_ps = ps or name in ("pwsh", "powershell")
    if name == "eval":
        return shell_targets(" ".join(args), cwd, powershell=inner_ps, depth=depth + 1)
    for j, a in enumerate(args[:-1]):
        if a == "-c" or a.lower() in ("-command", "-c", "-commandwithargs"):
            return shell_targets(args[j + 1], cwd, powershell=inner_ps, depth=depth + 1)
    return []


def _operands(args: list[str]) -> list[str]:
    out, options = [], True
    for a in args:
        if options and a == "--":
            options = False
        elif options and a.startswith("-") and a != "-":
            continue
        else:
            out.append(a)
    return out


def _copy_like(args: list[str], cwd: str, *, move: bool) -> list[Target]:
    """cp, mv, ln, install, rsync: the destination (``-t DIR``, ``--target-directory``, else
    the last operand) and, when it is a directory, each source's name inside it; mv's sources
    are removed too."""
    target = None
    positional: list[str] = []
    it = iter(range(len(args)))
    options = True
    for j in it:
        a = args[j]
        if options and a == "--":
            options = False
        elif options and a in ("-t", "--target-directory") and j + 1 < len(args):
            target = args[j + 1]
            next(it, None)
        elif options and a.startswith("--target-directory="):
            target = a.split("=", 1)[1]
        elif options and a.startswith("-t") and len(a) > 2 and not a.startswith("--"):
            target = a[2:]
        elif options and a.startswith("-") and a != "-":
            continue
        else:
            positional.append(a)
    if target is None:
        if len(positional) < 2:
            return [(a, "delete", cwd) for a in positional] if move else []
        srcs, dest = positional[:-1], positional[-1]
    else:
        srcs, dest = positional, target
    return _into(srcs, dest, cwd, move=move, named_dir=target is not None)


def _into(
    srcs: list[str], dest: str | None, cwd: str, *, move: bool, named_dir: bool
) -> list[Target]:
    out: list[Target] = [(s, "delete", cwd) for s in srcs] if move else []
    if dest is None:
        return out
    out.append((dest, "write", cwd))
    full = dest if os.path.isabs(dest) else os.path.join(cwd, dest)
    if named_dir or dest.endswith("/") or probe.is_dir(full):
        out += [(os.path.join(dest, os.path.basename(s.rstrip("/"))), "write", cwd) for s in srcs]
    return out


def _git(args: list[str], cwd: str) -> list[Target]:
    base, j = cwd, 0
    while j < len(args) and args[j].startswith("-"):
        a = args[j]
        if a in _GIT_VALUE_OPTIONS and j + 1 < len(args):
            if a == "-C":
                base = os.path.join(base, args[j + 1])
            j += 2
            continue
        if a.startswith("--git-dir=") or a.startswith("--work-tree="):
            pass
        j += 1
    if j >= len(args) or args[j] not in _GIT_WRITES:
        return []
    mode = "delete" if args[j] in ("rm", "mv") else "write"
    return [(a, mode, base) for a in _operands(args[j + 1 :])]


def _ps_operands(args: list[str]) -> tuple[list[str], str | None]:
    """A PowerShell cmdlet's paths (positional, ``-Path``, ``-LiteralPath``, ``-FilePath``)
    and its ``-Destination`` (or ``-NewName``)."""
    paths: list[str] = []
    dest = None
    j = 0
    while j < len(args):
        a = args[j]
        low = a.lower().split(":", 1)[0]
        if a.startswith("-") and len(a) > 1:
            value = args[j + 1] if j + 1 < len(args) else None
            if low in _PS_DEST and value is not None:
                dest = value
                j += 2
                continue
            if low in _PS_PATH and value is not None:
                paths += [p for p in value.split(",") if p]
                j += 2
                continue
            if low in _PS_VALUED:
                j += 2
                continue
            j += 1
            continue
        paths += [p for p in a.split(",") if p]
        j += 1
    return paths, dest


# --- paths -------------------------------------------------------------------------------------


def decode(path: str) -> str | None:
    """A path as a file tool or a shell names it: a ``file:`` URI percent-decoded (and its
    host, ``localhost`` or empty, dropped), ``~`` expanded; None for one that names no file
    here (a NUL)."""
    if path[:5].lower() == "file:":
        # lazy: only a URI is decoded
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(path)
        if parts.netloc not in ("", "localhost"):
            return None
        path = unquote(parts.path)
    if path.startswith("~"):
        path = os.path.expanduser(path)
    if "\x00" in path or not path:
        return None
    return path


# A hit: (what the file is, the path as it should be shown, the directory it is in).
Hit = tuple[str, str, str]


def hit(raw: str, mode: str, base: str) -> Hit | None:
    """What ``raw`` (relative to ``base``) names that the guard refuses, or None."""
    path = decode(raw)
    if path is None:
        return None
    full = os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))
    found = _at(full, mode)
    if found is not None or not _GLOB.search(path):
        return found
    name = os.path.basename(full)
    for protected in PROTECTED:
        if probe.matches_any(name, (protected,)) and probe.repo_of(full) is not None:
            return PROTECTED[protected], full, os.path.dirname(full)
    for match in probe.expand(full):
        found = _at(os.path.normpath(match), mode)
        if found is not None:
            return found
    return None


def _named(full: str) -> Hit | None:
    name = os.path.basename(full)
    kind = PROTECTED.get(name)
    inner = f"{os.sep}{RECORD_DIR}{os.sep}"
    if kind is None and inner in full:  # a file inside the record's directory
        kind, full = "record", full[: full.index(inner) + len(inner) - 1]
    if kind is None and name == "pyproject.toml" and probe.configures(full):
        kind = "config"
    if kind is not None and probe.repo_of(full) is not None:
        return kind, full, os.path.dirname(full)
    return None


def _at(full: str, mode: str) -> Hit | None:
    found = _named(full)
    if found is not None:
        return found
    st = probe.lstat(full)
    if st is None:
        parent = probe.real(os.path.dirname(full))  # a linked parent
        if parent is not None and parent != os.path.dirname(full):
            return _named(os.path.join(parent, os.path.basename(full)))
        return None
    real = probe.real(full)
    if real is not None and real != full:
        found = _named(real)
        if found is not None:
            return found
    if mode == "delete" and probe.is_dir(full) and probe.holds(full, _NAMES):
        return "tree", full, full
    return None


# --- the guard ---------------------------------------------------------------------------------


def guard(cwd: str, tool_name: str, tool_input: Any) -> str | None:
    """The reason to deny a tool call that would write, edit, move or delete a protocol file
    or the configuration (naming the command and the MCP tool that make that change), or
    None to allow it."""
    # lazy: the tool-input readers live with the other hook decisions
    from session_resume.services import hooks

    base = os.path.abspath(cwd)
    targets: list[Target]
    name = tool_name.lower()
    if hooks.is_shell_tool(tool_name):
        command = tool_input.get("command") if isinstance(tool_input, dict) else tool_input
        if not isinstance(command, str):
            return None
        # A terminal tool may run either shell (VS Code's runs PowerShell on Windows): its
        # line is read both ways unless the tool names a POSIX shell.
        ps = "powershell" in name or "pwsh" in name
        posix = not ps and ("bash" in name or name in ("sh", "zsh", "shell"))
        targets = shell_targets(command, base, powershell=ps)
        if not ps and not posix:
            targets += shell_targets(command, base, powershell=True)
    elif hooks.is_write_tool(tool_name, tool_input):
        whole = any(w in name for w in ("delete", "remove", "move", "rename"))
        mode = "delete" if whole else "write"
        targets = [(p, mode, base) for p in hooks.tool_paths(tool_input)]
    else:
        return None
    for raw, mode, where in targets:
        found = hit(raw, mode, where)
        if found is not None:
            return hooks.deny_reason(found[0], Path(found[2]), Path(base), shown=found[1])
    return None
