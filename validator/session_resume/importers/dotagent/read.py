"""Reading a dotagent memory directory (I/O): the checkpoint files and the facts about the
outputs they name. Nothing in the directory is written, renamed or locked."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.jsonread import parse_json_bytes
from session_resume.importers.common import ImportRefused
from session_resume.importers.dotagent.source import (
    ARCHIVE_DIR,
    DEMAND,
    DESIGNS,
    EXECUTION_FILE,
    FINAL_DESIGN,
    REFLECTIONS,
    VERIFICATION,
    ArchiveEntry,
    DotagentSource,
    FileFacts,
    memory_relative,
    task_output,
)
from session_resume.storage.held import read_path, within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _inside(path: Path, root: str) -> bool:
    """``path`` resolves inside the source directory (real path ``root``): no link on the way,
    in its parents as in its last component, leads out of the source, which is untrusted."""
    try:
        return within(os.path.realpath(path), root)
    except (OSError, ValueError):
        return False


def _load_json(path: Path, what: str, *, required: bool, root: str) -> Any:
    if not os.path.lexists(path):
        if not required:
            return None
        raise ImportRefused([diag("SR800", f"no {what} here", file=str(path))], exit_code=2)
    if not _inside(path, root):
        raise ImportRefused(
            [
                diag(
                    "SR105",
                    f"{what} leads outside the import source through a link; not read",
                    file=str(path),
                )
            ]
        )
    res = read_path(path, root=root)  # never a link out of the source
    if res.data is None:
        raise ImportRefused(
            [
                diag("SR801", f"cannot read {what}: {d.message}", file=str(path))
                for d in res.diagnostics
            ]
        )
    parsed = parse_json_bytes(res.data, file=str(path))
    if parsed.corrupt or not isinstance(parsed.value, dict):
        raise ImportRefused(
            [
                diag(
                    "SR801",
                    f"{what} is not a readable JSON object"
                    + "".join(f" ({d.code}: {d.message})" for d in parsed.diagnostics[:1])
                    + "; the skill would call the state corrupted",
                    file=str(path),
                )
            ]
        )
    return parsed.value


def _facts(path: Path, *, keep_value: bool, root: str) -> FileFacts:
    if not _inside(path, root):
        return FileFacts()  # through a link out of the source: as if it were not there
    try:
        st = os.stat(path)
    except OSError:
        return FileFacts()
    if not path.is_file():
        return FileFacts(st.st_mtime)
    res = read_path(path, root=root)  # never a link out of the source
    if res.data is None:
        return FileFacts(st.st_mtime)
    parsed = parse_json_bytes(res.data, require_object=False)
    ok = not parsed.corrupt and parsed.value is not None
    return FileFacts(st.st_mtime, ok, parsed.value if ok and keep_value else None)


def _json_files(d: Path, root: str) -> list[Path]:
    """The ``.json`` files of ``d``; neither ``d`` nor a file may lead out of the source (a
    linked ``reports/designs`` listed the names of a directory elsewhere)."""
    if not _inside(d, root):
        return []
    try:
        return sorted(
            p for p in d.iterdir() if p.suffix == ".json" and _inside(p, root) and p.is_file()
        )
    except OSError:
        return []


def list_archives(memory_dir: Path) -> list[ArchiveEntry]:
    base = memory_dir / ARCHIVE_DIR
    root = os.path.realpath(memory_dir)
    out = []
    if not _inside(base, root):
        return []
    try:
        entries = sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    for p in entries:
        wid = None
        updated = None
        try:
            ph = _load_json(p / "phase.json", "phase.json", required=False, root=root)
        except ImportRefused:
            ph = None
        if isinstance(ph, dict):
            wid = ph.get("workflow_id") if isinstance(ph.get("workflow_id"), str) else None
            lu = ph.get("last_updated")
            updated = lu if isinstance(lu, str) else None
        out.append(
            ArchiveEntry(
                p.name,
                wid,
                updated,
                tuple(sorted(x.name for x in p.iterdir() if _inside(x, root) and x.is_file())),
            )
        )
    return out


def _chosen_archive(d: Path, archives: list[ArchiveEntry], archive: str) -> str:
    """The archived workflow ``archive`` names (``latest``: the newest), or SR800."""
    names = [a.name for a in archives]
    if archive == "latest" and archives:
        return max(archives, key=lambda a: (a.last_updated or "", a.name)).name
    if archive in names:
        return archive
    raise ImportRefused(
        [
            diag(
                "SR800",
                f"no archived workflow {archive!r} under {ARCHIVE_DIR}/ (found: "
                + (", ".join(names) or "none")
                + ")",
                file=str(d / ARCHIVE_DIR),
            )
        ],
        exit_code=2,
    )


def read_source(
    memory_dir: str | os.PathLike[str],
    *,
    repo_root: Path,
    archive: str | None = None,
) -> DotagentSource:
    """Read ``memory/`` (or one archived workflow with ``archive``: a folder name under
    ``state/.archive/``, or ``latest``). Nothing in it is written, renamed or locked."""
    d = Path(os.path.abspath(memory_dir))
    if not d.is_dir():
        raise ImportRefused([diag("SR800", "no such directory", file=str(d))], exit_code=2)
    if (d / "memory" / "state").is_dir() and not (d / "state").is_dir():
        d = d / "memory"  # the project directory was given
    archives = list_archives(d)
    chosen = _chosen_archive(d, archives, archive) if archive is not None else None
    state_dir = d / (f"{ARCHIVE_DIR}/{chosen}" if chosen else "state")
    if not (state_dir / "phase.json").exists():
        hint = ""
        if (state_dir / "phase.json.tmp").exists():
            hint = (
                "; phase.json.tmp exists: a checkpoint write was cut short before its rename, "
                "inspect it by hand"
            )
        elif archives:
            hint = (
                "; the workflow was archived: import one with --archive NAME ("
                + ", ".join(a.name for a in archives)
                + ")"
            )
        raise ImportRefused(
            [
                diag(
                    "SR800",
                    "no phase.json: this is not a dotagent memory directory with a workflow" + hint,
                    file=str(state_dir / "phase.json"),
                )
            ],
            exit_code=2,
        )
    root = os.path.realpath(d)  # the source named on the command line; nothing past it
    phase = _load_json(state_dir / "phase.json", "phase.json", required=True, root=root)
    execution = _load_json(
        state_dir / "execution.json", "execution.json", required=False, root=root
    )
    mem = d.as_posix()
    wanted: set[str] = {DEMAND, FINAL_DESIGN, *VERIFICATION}
    for entry in phase.get("completed_phases") or []:
        if isinstance(entry, dict):
            rel = memory_relative(entry.get("output"), mem)
            if rel is not None:
                wanted.add(rel)
                if chosen and rel in ("state/execution.json", "state/phase.json"):
                    wanted.add(f"{ARCHIVE_DIR}/{chosen}/{posixpath.basename(rel)}")
    outputs: set[str] = set()
    for t in (execution or {}).get("tasks") or []:
        if isinstance(t, dict):
            rel = task_output(t, mem)
            if rel is not None:
                outputs.add(rel)
    designs = [f"{DESIGNS}/{p.name}" for p in _json_files(d / DESIGNS, root)]
    reflections = [f"{REFLECTIONS}/{p.name}" for p in _json_files(d / REFLECTIONS, root)]
    facts = {
        rel: _facts(d / rel, keep_value=False, root=root)
        for rel in wanted | set(designs) | set(reflections)
    }
    facts.update({rel: _facts(d / rel, keep_value=True, root=root) for rel in outputs})
    exec_rel = f"{ARCHIVE_DIR}/{chosen}/execution.json" if chosen else EXECUTION_FILE
    facts[exec_rel] = _facts(d / exec_rel, keep_value=False, root=root)
    try:
        prefix: str | None = d.relative_to(Path(os.path.abspath(repo_root))).as_posix()
        prefix = "" if prefix == "." else prefix
    except ValueError:
        prefix = None
    temps = sorted(
        f"{state_dir.relative_to(d).as_posix()}/{p.name}"
        for p in (state_dir.iterdir() if _inside(state_dir, root) else [])
        if p.name.endswith(".tmp")
    )
    return DotagentSource(
        dir=mem,
        phase=phase,
        execution=execution,
        facts=facts,
        designs=designs,
        reflections=reflections,
        archives=archives,
        temp_files=temps,
        repo_prefix=prefix,
        from_archive=chosen,
    )
