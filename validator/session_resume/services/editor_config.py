"""`session-resume setup vscode`: VS Code validates and hovers the repository's state files.

Two files, both under ``.vscode/``: a copy of the current state schema,
``.vscode/session-resume/session-state-<version>.json``, and one entry merged into the
``json.schemas`` list of ``.vscode/settings.json`` that maps the state files of the configured
session root (``<session_root>/*/00-session-state.json``, and the configured workflow's
``session_dir`` pattern when it lies elsewhere) to that copy by a url relative to the workspace
folder. A copy, not the installed package's path: the path of a virtual environment is
different on every machine and gone when the environment is rebuilt, while a copy under
``.vscode/`` works for everyone who opens the checkout (the file can be committed), offline,
and is the schema of the version that wrote it; running the command again after an upgrade
brings both up to date.

The merge keeps every other key and every other ``json.schemas`` entry; our entry is the one
whose url names ``.vscode/session-resume/`` (replaced, never doubled), so a second run changes
nothing. ``settings.json`` is rewritten only when it is plain JSON: VS Code also accepts
comments and trailing commas, which a rewrite would lose, so such a file is refused (SR184)
with the entry to add by hand, and nothing is written. A path on the way that is a symbolic
link is refused (SR105 when it leads outside the repository, SR102 otherwise: the command writes
only real files and directories), as is anything that is not a directory or a regular file.
All writes go through the held ``.vscode`` directory (storage.held), made relative to the root.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from session_resume import resources
from session_resume.core.codes import diag
from session_resume.core.versions import CURRENT, CURRENT_SCHEMA
from session_resume.services.errors import ServiceError
from session_resume.services.hook_config import (
    Change,
    Unwritable,
    check_path,
    find_root,
    load_writable,
)
from session_resume.storage.held import HeldDir, StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


VSCODE = ".vscode"
SETTINGS = "settings.json"
SCHEMA_DIR = "session-resume"
SCHEMA_NAME = f"session-state-{CURRENT}.json"
URL_PREFIX = f"./{VSCODE}/{SCHEMA_DIR}/"
URL = URL_PREFIX + SCHEMA_NAME
MAX_SETTINGS = 1024 * 1024  # a larger settings.json is refused (SR184)
STATE = "00-session-state.json"


def file_match(root: Path) -> list[str]:
    """The ``fileMatch`` patterns of the repository's state files: the configured session
    root's sessions and the configured workflow's ``session_dir`` pattern."""
    # lazy: the workflow reader, for this command only
    from session_resume.core.workflow import load_workflow

    # lazy: the configuration reader, for this command only
    from session_resume.storage.config import ConfigError, load_config

    try:
        cfg = load_config(root)
    except ConfigError as exc:
        raise ServiceError([exc.diagnostic], 2) from None
    root_dir = Path(cfg.session_root).as_posix().strip("/")
    patterns = [f"{root_dir}/*/{STATE}" if root_dir not in ("", ".") else f"*/{STATE}"]
    try:
        wf = load_workflow(cfg.workflow) if cfg.workflow else None
    except Exception:  # noqa: BLE001 - the session root alone still maps the usual layout
        wf = None
    if wf is not None:
        pattern = wf.session_dir.replace("{project}", "*").strip("/") + "/" + STATE
        if pattern not in patterns:
            patterns.append(pattern)
    return patterns


def entry(root: Path) -> dict[str, Any]:
    return {"fileMatch": file_match(root), "url": URL}


def _string_end(text: str, i: int) -> int:
    """The index after the JSON string that opens at ``text[i]`` (a ``"``)."""
    j, n = i + 1, len(text)
    while j < n and text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return j + 1


def strip_jsonc(text: str) -> str:
    """``text`` without JSONC's comments and trailing commas (strings kept as they are); a
    comma followed, past white space and comments, by a closing bracket is a trailing comma."""
    out: list[str] = []
    comma = -1  # where the last comma is in ``out`` while only white space and comments follow
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = _string_end(text, i)
            out.append(text[i:j])
            comma = -1
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            if c in "]}" and comma >= 0:
                out[comma] = ""
            if not c.isspace():
                comma = len(out) if c == "," else -1
            out.append(c)
            i += 1
    return "".join(out)


def _refused(why: str, add: dict[str, Any]) -> ServiceError:
    snippet = json.dumps(add, ensure_ascii=False)
    return ServiceError(
        [
            diag(
                "SR184",
                f"{VSCODE}/{SETTINGS} cannot be merged: {why}; nothing was written. The entry "
                f"to add to its `json.schemas` list: {snippet}",
                file=f"{VSCODE}/{SETTINGS}",
            )
        ]
    )


def _parse_settings(data: bytes, add: dict[str, Any]) -> dict[str, Any]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _refused("it is not UTF-8", add) from None
    if not text.strip():
        return {}
    try:
        doc = load_writable(text)
    except Unwritable as exc:
        raise _refused(str(exc), add) from None
    except (ValueError, RecursionError):
        try:
            json.loads(strip_jsonc(text))
        except (ValueError, RecursionError) as exc:
            raise _refused(f"it is not JSON ({exc})", add) from None
        raise _refused(
            "it has comments or trailing commas (VS Code accepts them; a rewrite would lose them)",
            add,
        ) from None
    if not isinstance(doc, dict):
        raise _refused("it is not a JSON object", add)
    schemas = doc.get("json.schemas", [])
    if not isinstance(schemas, list):
        raise _refused("its `json.schemas` is not a list", add)
    return doc


MAX_INDENT = 8  # characters of a first indentation kept; a longer one is not copied


def _indent(data: bytes) -> str | int:
    """The indentation of the file's first indented line (two spaces when there is none, or
    when it is longer than :data:`MAX_INDENT`: the rewrite copies it once per level and
    line, so a 120,000-space indent would turn a 120 KB file into tens of megabytes)."""
    for line in data.decode("utf-8-sig", "replace").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            indent = line[: len(line) - len(stripped)]
            return indent if len(indent) <= MAX_INDENT else 2
    return 2


def _ours(e: Any) -> bool:
    return isinstance(e, dict) and str(e.get("url", "")).startswith(URL_PREFIX)


def merged(doc: dict[str, Any], add: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with ``add`` as its one entry of ours in ``json.schemas`` (in the place of the
    first one there was), everything else as it was."""
    new: dict[str, Any] = json.loads(json.dumps(doc))
    schemas = new.get("json.schemas", [])
    out: list[Any] = []
    placed = False
    for e in schemas:
        if _ours(e):
            if not placed:
                out.append(add)
                placed = True
            continue
        out.append(e)
    if not placed:
        out.append(add)
    new["json.schemas"] = out
    return new


def setup_vscode(root_arg: str | None, *, dry_run: bool = False) -> list[Change]:
    """Write (or with ``dry_run`` only describe) the schema copy and the settings entry."""
    root = find_root(root_arg or os.getcwd()) if root_arg is None else Path(root_arg).resolve()
    if root is None or not root.is_dir():
        raise ServiceError([diag("SR100", "no such repository root", file=str(root_arg))], 2)
    rels = [Path(VSCODE) / SETTINGS, Path(VSCODE) / SCHEMA_DIR / SCHEMA_NAME]
    problems = [
        d
        for d in (check_path(root, r, real_only="setup vscode", relative=True) for r in rels)
        if d is not None
    ]
    if problems:
        raise ServiceError(problems)
    add = entry(root)
    schema = (resources.schema_dir() / CURRENT_SCHEMA).read_bytes()
    old_settings: bytes | None = None
    old_schema: bytes | None = None
    try:
        if os.path.isdir(root / VSCODE):
            with HeldDir.at(root / VSCODE, root) as h:
                old_settings = _read(h, SETTINGS)
                if os.path.isdir(root / VSCODE / SCHEMA_DIR):
                    with h.sub(SCHEMA_DIR) as s:
                        old_schema = _read(s, SCHEMA_NAME)
    except StoreError as exc:
        raise ServiceError(exc.diagnostics) from None
    doc = _parse_settings(old_settings, add) if old_settings is not None else {}
    new = merged(doc, add)
    indent = _indent(old_settings) if old_settings else 2
    text = json.dumps(new, indent=indent, ensure_ascii=False) + "\n"
    changes = [
        Change(
            root / rels[1],
            rels[1].as_posix(),
            _action(old_schema, old_schema == schema),
            None,
        ),
        Change(root / rels[0], rels[0].as_posix(), _action(old_settings, doc == new), text),
    ]
    if dry_run:
        return changes
    try:
        with HeldDir.at(root / VSCODE, root, create=True) as h:
            if changes[0].action != "unchanged":
                with h.sub(SCHEMA_DIR, create=True) as s:
                    s.replace_file(SCHEMA_NAME, schema)
            if changes[1].action != "unchanged":
                h.replace_file(SETTINGS, text.encode("utf-8"))
    except StoreError as exc:
        raise ServiceError(exc.diagnostics, 1) from None
    return changes


def _action(old: bytes | None, same: bool) -> str:
    if old is None:
        return "created"
    return "unchanged" if same else "updated"


def _read(h: HeldDir, name: str) -> bytes | None:
    res = h.read_limited(name, max_size=MAX_SETTINGS)
    if res.data is None:
        if any(d.code == "SR100" for d in res.diagnostics):
            return None
        if any(d.code == "SR112" for d in res.diagnostics):
            raise ServiceError(
                [
                    diag(
                        "SR184",
                        f"{h.name(name)} is over {MAX_SETTINGS} bytes; nothing was written",
                        file=h.name(name),
                    )
                ]
            )
        raise ServiceError(res.diagnostics)
    return res.data
