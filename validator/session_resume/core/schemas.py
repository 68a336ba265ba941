"""Compiled JSON Schema validators and the mapping of schema errors to stable codes.

"Is it valid?" is answered by a check generated at build time (``core/compiled/``, made by
docgen/compiled.py) when one was made from exactly this schema, else by ``jsonschema_rs``;
only when the answer is no does the reference engine ``jsonschema`` (imported lazily) explain
why, so valid files never pay for the slower engine or its import, and the schemas of a cold
command pay for no engine at all. The test suite cross-checks the engines on every fixture.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
import zlib
from collections.abc import Callable, Iterator

from session_resume.core.codes import diag
from session_resume.core.compiled import INDEX
from session_resume.core.diagnostics import Diagnostic, pointer_join
from session_resume.resources import load_schema

# lazy imports: jsonschema (~60 ms) only to explain a failure

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_KEYWORD_CODES = {
    "required": "SR201",
    "type": "SR202",
    "enum": "SR203",
    "const": "SR203",
    "pattern": "SR204",
    "format": "SR204",
    "additionalProperties": "SR205",
    "unevaluatedProperties": "SR205",
    "propertyNames": "SR207",
    "uniqueItems": "SR206",
    "minItems": "SR206",
    "maxItems": "SR206",
    "contains": "SR206",
    "minimum": "SR208",
    "maximum": "SR208",
    "exclusiveMinimum": "SR208",
    "exclusiveMaximum": "SR208",
    "minLength": "SR208",
    "maxLength": "SR208",
    "multipleOf": "SR208",
    "minProperties": "SR208",
    "maxProperties": "SR208",
}


@functools.cache
def _fast(relpath: str) -> Callable[[Any], bool]:
    return fast_check(load_schema(relpath))


def is_valid(relpath: str, instance: Any) -> bool:
    """Fast check against a schema file under ``schema/``."""
    return bool(_fast(relpath)(instance))


def canonical_schema(schema: dict[str, Any]) -> str:
    """The text a generated check is matched by: key order and spacing do not count."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compiled_key(canonical: str) -> str:
    return f"{zlib.crc32(canonical.encode('utf-8', 'surrogatepass')):08x}-{len(canonical)}"


def fast_check(schema: dict[str, Any]) -> Callable[[Any], bool]:
    """A yes/no check of ``schema``: the generated one made from exactly this schema text
    (a changed schema never meets a stale check), else jsonschema_rs's."""
    return generated_check(schema) or engine_check(schema)


def generated_check(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """The check generated from exactly this schema's text, or None."""
    canonical = canonical_schema(schema)
    name = INDEX.get(compiled_key(canonical))
    if name is None:
        return None
    module = importlib.import_module(f"session_resume.core.compiled.{name}")
    if canonical != module.SOURCE:  # a checksum collision
        return None
    check: Callable[[Any], bool] = module.is_valid
    return check


def engine_check(schema: dict[str, Any]) -> Callable[[Any], bool]:
    """jsonschema_rs's yes/no check (the cross-check tests compare it with the generated)."""
    # lazy: the schema engine (a third of a cold start) only for a schema with no generated check
    import jsonschema_rs

    validator = jsonschema_rs.validator_for(schema)
    return lambda instance: bool(validator.is_valid(instance))


@functools.cache
def _reference(relpath: str) -> Any:
    return reference_for(load_schema(relpath))


def reference_for(schema: dict[str, Any]) -> Any:
    """The reference engine (``jsonschema``, ECMA-262 patterns) for ``schema``: it explains
    why an instance fails; :func:`fast_check` answers whether it does."""
    return _reference_class()(schema)


@functools.lru_cache(maxsize=1)
def _reference_class() -> Any:
    """Draft 2020-12 with ECMA-262 ``$``: Python's ``$`` also matches before a final newline,
    so plain ``jsonschema`` accepts ``"project": "abc\\n"`` where ajv and jsonschema-rs do not."""
    import jsonschema
    from jsonschema import validators

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and not ecma_search(patrn, instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")

    def unique_items(validator: Any, unique: bool, instance: Any, schema: Any) -> Any:
        # jsonschema compares every pair (quadratic: 10,000 findings took minutes); a
        # canonical, hashable form of each item finds a repeat in linear time.
        if unique and validator.is_type(instance, "array"):
            seen: set[Any] = set()
            for item in instance:
                k = _canonical(item)
                if k in seen:
                    yield jsonschema.ValidationError(f"{instance!r} has non-unique elements")
                    return
                seen.add(k)

    return validators.extend(  # type: ignore[no-untyped-call]
        jsonschema.Draft202012Validator, {"pattern": pattern, "uniqueItems": unique_items}
    )


def _canonical(value: Any) -> Any:
    """A hashable form of a JSON value, equal exactly when JSON Schema calls two values
    equal (1 == 1.0; true is not 1; object key order does not matter)."""
    if isinstance(value, bool) or value is None:
        return ("c", value)
    if isinstance(value, int | float):
        return ("n", int(value) if isinstance(value, float) and value.is_integer() else value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("l", tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("d", frozenset((k, _canonical(v)) for k, v in value.items()))
    return ("o", repr(value))


def ecma_translate(patrn: str) -> str:
    """Rewrite unescaped ``$`` outside character classes as ``\\Z`` (end of input)."""
    out, i, in_class = [], 0, False
    while i < len(patrn):
        c = patrn[i]
        if c == "\\":
            out.append(patrn[i : i + 2])
            i += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "$" and not in_class:
            c = r"\Z"
        out.append(c)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def _compiled(patrn: str) -> re.Pattern[str]:
    return re.compile(ecma_translate(patrn))


def ecma_search(patrn: str, text: str) -> bool:
    return _compiled(patrn).search(text) is not None


def reference_is_valid(relpath: str, instance: Any) -> bool:
    """The reference engine's verdict (used by the cross-check tests)."""
    return bool(_reference(relpath).is_valid(instance))


def explain(
    relpath: str,
    instance: Any,
    *,
    file: str = "",
    code_for: Callable[[str, list[str | int], Any], str | None] | None = None,
) -> list[Diagnostic]:
    """Coded diagnostics for every schema error of ``instance`` (reference engine)."""
    return explain_with(_reference(relpath), instance, file=file, code_for=code_for)


def explain_schema(
    schema: dict[str, Any], instance: Any, *, file: str = "", code: str | None = None
) -> list[Diagnostic]:
    """Like :func:`explain` for an in-memory schema; ``code`` overrides every code."""
    override = (lambda _kw, _path, _err: code) if code else None
    return explain_with(reference_for(schema), instance, file=file, code_for=override)


def explain_with(
    validator: Any,
    instance: Any,
    *,
    file: str = "",
    code_for: Callable[[str, list[str | int], Any], str | None] | None = None,
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    seen: set[tuple[str, str, str]] = set()
    errors: list[Any] = []
    more = False
    for err in validator.iter_errors(instance):  # lazily: the engine costs ~1 ms an error
        if len(errors) == MAX_EXPLAINED:
            more = True
            break
        errors.append(err)
    for err in sorted(errors, key=_sort_key):
        for code, path, message in _describe(err):
            if code_for is not None:
                code = code_for(err.validator, path, err) or code
            ptr = pointer_join(path)
            key = (code, ptr, message)
            if key in seen:
                continue
            seen.add(key)
            out.append(diag(code, message, file=file, pointer=ptr, hint=_hint(code, err)))
    if more:
        out.append(
            diag(
                "SR209",
                f"more schema findings, not listed: the schema check stops after the first "
                f"{MAX_EXPLAINED:,} (a 0.9 MB state can break it 140,000 times)",
                file=file,
                hint="fix the findings listed, then validate again to see the next",
            )
        )
    return out


MAX_EXPLAINED = 1000  # schema errors explained per document (core.findings caps each code)


# A step status that means another one (the spelling of another tool), and what to run.
_STATUS_MEANT = {
    "done": "complete",
    "completed": "complete",
    "finished": "complete",
    "success": "complete",
    "active": "in_progress",
    "running": "in_progress",
    "started": "in_progress",
    "in-progress": "in_progress",
    "todo": "pending",
    "not_started": "pending",
    "skip": "skipped",
    "cancelled": "skipped",
}
_STATUSES = frozenset({"pending", "in_progress", "complete", "skipped"})


def _hint(code: str, err: Any) -> str:
    """A hint written for this error: the failing field's own description from the schema
    (its form, an example), or for a step status what the value most likely meant; empty
    (the catalogue's generic fix) when the schema says nothing about the field."""
    path = list(err.absolute_path)
    if len(path) == 3 and path[0] == "steps" and path[2] == "status":
        value = err.instance if isinstance(err.instance, str) else ""
        lower = value.strip().lower()
        meant = lower if lower in _STATUSES else _STATUS_MEANT.get(lower)
        if meant:
            # the file is invalid, so no write command takes it: the value is fixed by hand
            return (
                f"The status for that is `{meant}` (lower case): correct the value in the "
                "file; the write commands keep it right from then on."
            )
        if value.strip().lower() in ("blocked", "waiting", "on_hold", "paused"):
            return (
                "Keep the step in_progress and record the blocker with "
                "`session-resume finding add TITLE`."
            )
        return ""
    if code in ("SR201", "SR205", "SR206", "SR207"):
        return ""  # about the object, not about a value's form
    schema = err.schema if isinstance(err.schema, dict) else {}
    text = schema.get("description")
    if not isinstance(text, str) or not text:
        return ""
    title = schema.get("title")
    first = text if len(text) <= 240 else text[:237] + "..."
    return f"{title}: {first}" if isinstance(title, str) and title else first


def _sort_key(err: Any) -> tuple[list[str], str]:
    return [str(p) for p in err.absolute_path], str(err.validator)


def _describe(err: Any) -> Iterator[tuple[str, list[str | int], str]]:
    path: list[str | int] = list(err.absolute_path)
    kw = str(err.validator)
    code = _KEYWORD_CODES.get(kw, "SR209")
    where = pointer_join(path) or "the document"
    if kw == "required":
        missing = [
            p
            for p in err.validator_value
            if isinstance(err.instance, dict) and p not in err.instance
        ]
        for name in missing:
            yield code, path, f"{where}: required property {name!r} is missing"
        return
    if kw in ("additionalProperties", "unevaluatedProperties") and isinstance(err.instance, dict):
        props = err.schema.get("properties", {})
        patterns = list(err.schema.get("patternProperties", {}))
        for k in err.instance:
            if k not in props and not any(ecma_search(p, k) for p in patterns):
                yield (
                    code,
                    [*path, k],
                    f"{pointer_join([*path, k])}: property {k!r} is not allowed here",
                )
        return
    if kw == "propertyNames" or "propertyNames" in err.relative_schema_path:
        # The failing keyword is inside propertyNames; the instance is the key itself.
        key_path: list[str | int] = [*path, err.instance]
        yield "SR207", key_path, (f"{where}: key {err.instance!r} is not allowed ({_short(err)})")
        return
    if kw in ("enum", "const"):
        allowed = err.validator_value if kw == "enum" else [err.validator_value]
        yield (
            code,
            path,
            (
                f"{where}: {_show(err.instance)} is not allowed; "
                f"expected one of {', '.join(_show(a) for a in allowed)}"
            ),
        )
        return
    if kw == "type":
        want = err.validator_value
        want_s = " or ".join(want) if isinstance(want, list) else want
        yield code, path, f"{where}: expected {want_s}, got {_show(err.instance)}"
        return
    if kw == "pattern":
        title = err.schema.get("title") or "the value"
        yield (
            code,
            path,
            (
                f"{where}: {_show(err.instance)} does not have the form of {title} "
                f"(pattern {err.validator_value})"
            ),
        )
        return
    yield code, path, f"{where}: {_short(err)}"


def _short(err: Any) -> str:
    msg = str(err.message)
    return msg if len(msg) <= 200 else msg[:197] + "..."


def _show(value: Any) -> str:
    s = json.dumps(value, ensure_ascii=False)
    return s if len(s) <= 60 else s[:57] + "..."
