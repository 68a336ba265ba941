"""The package's public names are the ones its documentation gives: each name the package
docstring and docs/architecture.md name as public (the write moments, the lease services, the
types they take) is in ``session_resume.__all__`` and imports, and every name in ``__all__``
imports (the package resolves them lazily, so a name missing from its table fails only when
used)."""

from __future__ import annotations

import re

import pytest

import session_resume

from conftest import REPO

# the services docs/architecture.md lists as the library's write moments and lease services
_WRITES = re.compile(r"`writes`: `init_session` and the write moments \(([^)]*)\)")
_LEASES = re.compile(r"`leases`: ((?:`\w+`, )*`\w+`) and the lease")
_ROLE = re.compile(r":(?:func|class|data):`(\w+)`")


def _documented() -> set[str]:
    arch = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    flat = " ".join(arch.split())
    writes, leases = _WRITES.search(flat), _LEASES.search(flat)
    assert writes and leases, "docs/architecture.md no longer lists the writes and leases"
    names = {"init_session", *re.findall(r"`(\w+)`", writes[1] + leases[1])}
    return names | set(_ROLE.findall(session_resume.__doc__ or ""))


def test_the_documented_names_are_the_lists_they_should_be() -> None:
    names = _documented()
    # the write moments and the lease services, the review audit among them
    assert {"review_audit", "ReviewAudit", "ping_session", "transition"} <= names
    assert len(names) >= 35


@pytest.mark.parametrize("name", sorted(_documented()))
def test_every_documented_name_is_public_and_imports(name: str) -> None:
    assert name in session_resume.__all__
    assert getattr(session_resume, name) is not None


@pytest.mark.parametrize("name", sorted(session_resume.__all__))
def test_every_exported_name_imports(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from session_resume import {name}", namespace)  # the documented spelling
    assert namespace[name] is getattr(session_resume, name)


def test_review_audit_is_the_write_service() -> None:
    """The name the docs give is the service a caller can run: a `WriteContext`, a step and a
    `ReviewAudit`."""
    from session_resume.services import writes

    assert session_resume.review_audit is writes.review_audit
    audit = session_resume.ReviewAudit(complexity="standard", passes_planned=2)
    assert audit.passes_planned == 2
