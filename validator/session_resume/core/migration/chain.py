"""The migration chain: from a document's version to the current one, one registered step
at a time (:data:`session_resume.core.versions.REGISTRY`), each result validated against its
version's schema (the nbformat way). No I/O; the clock is injected.

Every change is recorded: the JSON Patch from input to output, plus coded notes (SR150) and,
for values the new version has no place for, SR151 with the value kept under an ``x-legacy``
key. Nothing is dropped silently. Migrating a current document is a no-op unless it carries
one of the known defects its version's repair pass fixes; so the chain is idempotent.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from datetime import datetime
from types import ModuleType

from session_resume import records
from session_resume.core import schemas
from session_resume.core.codes import diag
from session_resume.core.jsonread import MAX_DEPTH
from session_resume.core.migration import contradictions
from session_resume.core.migration.context import (
    MigrationContext,
    MigrationError,
    MigrationResult,
)
from session_resume.core.migration.repair_v3 import choose_workflow
from session_resume.core.versions import (
    CURRENT,
    REGISTRY,
    is_known,
    is_newer_than_known,
    version_of,
)
from session_resume.core.workflow import Workflow

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    Step = Callable[[dict[str, Any], MigrationContext], dict[str, Any]]


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"session_resume.core.migration.{name}")


def chain() -> list[tuple[str, str, Step]]:
    """(from, to, upgrade) for every registered version step, oldest first."""
    out: list[tuple[str, str, Step]] = []
    for prev, ver in zip(REGISTRY, REGISTRY[1:], strict=False):
        if ver.upgrade is None:
            raise RuntimeError(f"version {ver.name} registers no upgrade from {prev.name}")
        out.append((prev.name, ver.name, _module(ver.upgrade).upgrade))
    return out


def migrate(
    doc: dict[str, Any],
    *,
    now: datetime,
    workflow: Workflow | None = None,
    project_hint: str | None = None,
    file: str = "",
    salvage: bool = False,
    session_dir: str | None = None,
) -> MigrationResult:
    """Migrate ``doc`` to the current version (or repair a current document). Pure; raises
    :class:`MigrationError` (SR141/SR142/SR152) when it cannot, never writes anything.
    ``session_dir``: the session directory relative to the repository root, against which a
    1.0 or 2.0 state's bare artifact names are resolved (docs/spec.md §9.2 rule 8.8)."""
    raw, num = version_of(doc)
    if raw is None or num is None:
        raise MigrationError(
            [
                diag(
                    "SR142",
                    (
                        "schema_version is not set; it must be"
                        if doc.get("schema_version") is None
                        else f"schema_version {doc.get('schema_version')!r} is not"
                    )
                    + " a version string",
                    file=file,
                    pointer="/schema_version",
                )
            ]
        )
    if is_newer_than_known(num):
        raise MigrationError(
            [
                diag(
                    "SR141",
                    f"schema version {raw} is newer than {CURRENT}; refusing to touch it",
                    file=file,
                    pointer="/schema_version",
                )
            ]
        )
    if not is_known(raw):
        raise MigrationError(
            [
                diag(
                    "SR142",
                    f"schema version {raw} does not exist",
                    file=file,
                    pointer="/schema_version",
                )
            ]
        )
    ctx = MigrationContext(
        now=now,
        workflow=workflow,
        project_hint=project_hint,
        from_version=raw,
        file=file,
        salvage=salvage,
        session_dir=session_dir,
    )
    result = MigrationResult(original=doc, document=doc, from_version=raw, to_version=CURRENT)
    cur = doc
    version = raw
    start = next(v for v in REGISTRY if v.name == raw)
    if start.repair is not None:
        # Known defects of documents written at this version, fixed before they move on.
        repaired = _module(start.repair).repair(cur, ctx)
        if repaired != cur:
            result.steps.append(f"{raw} repair")
        cur = repaired
        _check(cur, raw, f"after the {raw} repair", file)
    for src, dst, fn in chain():
        if version != src:
            continue
        cur = fn(cur, ctx)
        _check(cur, dst, f"after {src}->{dst}", file)
        result.steps.append(f"{src}->{dst}")
        version = dst
    if cur != doc:
        # The end of every migration that changes something: revision, updated (the old one
        # kept), then the contradictions (docs/spec.md §9.3, §9.4).

        wf = choose_workflow(cur, records.replace(ctx, notes=[]))  # noted already
        contradictions.finish(doc, cur, wf, ctx)
        contradictions.settle(cur, wf, ctx)
        _check(cur, CURRENT, "after the migration", file)
    result.document = cur
    # A document that did not change has nothing to report (a note without a change would
    # make `migrate --check` pass while printing that something happened).
    result.notes = ctx.notes if result.changed else []
    return result


def _depth(value: Any) -> int:
    """Nesting depth as the reader counts it (an object or array is one level)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            deepest = max(deepest, d)
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def _check(doc: dict[str, Any], version: str, when: str, file: str) -> None:
    rel = f"session-state/{version}.json"
    if _depth(doc) > MAX_DEPTH:
        # x-legacy nests a value one level deeper: the reader would refuse the result (SR123)
        raise MigrationError(
            [
                diag(
                    "SR152",
                    f"{when}, the document would nest deeper than {MAX_DEPTH} levels "
                    "(a value kept under x-legacy is one level deeper); flatten it by hand",
                    file=file,
                )
            ]
        )
    try:
        if schemas.is_valid(rel, doc):
            return
        errors = schemas.explain(rel, doc, file=file)
    except UnicodeEncodeError:  # a lone surrogate in an in-memory document (SR116 in a file)
        raise MigrationError(
            [
                diag(
                    "SR152",
                    f"{when}, a string of the document is not valid Unicode (a lone surrogate)",
                    file=file,
                )
            ]
        ) from None
    raise MigrationError(
        [
            diag(
                "SR152",
                f"{when}, the document is not a valid {version} state: {d.code} {d.message}",
                file=file,
                pointer=d.pointer,
            )
            for d in errors
        ]
    )


def repair_command(
    doc: dict[str, Any],
    *,
    now: datetime,
    workflow: Workflow | None = None,
    project_hint: str | None = None,
) -> str | None:
    """The pure check behind "no dead ends" (docs/spec.md §9.5): ``"migrate"`` when migrating
    ``doc`` would change it into a valid state, ``"migrate --salvage"`` when only salvage
    would, else None."""
    for salvage in (False, True):
        try:
            res = migrate(
                doc, now=now, workflow=workflow, project_hint=project_hint, salvage=salvage
            )
        except MigrationError:
            continue
        except (RecursionError, ValueError):  # advice only: never break its caller
            return None
        return ("migrate --salvage" if salvage else "migrate") if res.changed else None
    return None
