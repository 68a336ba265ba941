"""Record classes: the part of :mod:`dataclasses` the package uses, without its start-up cost.

Why: importing :mod:`dataclasses` imports :mod:`inspect` (with ``ast``, ``dis`` and
``tokenize``), and each decorated class compiles five or six generated methods: together
about 12 ms plus 0.8 ms a class, a quarter of a cold ``validate`` (issue 19). Here nothing is
compiled: ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and the frozen ``__setattr__``
are shared functions (an instance costs a microsecond or two more to make).

Supported, as in :mod:`dataclasses` (``@record`` is ``@dataclass``): ``@record`` and
``@record(frozen=True)`` on a class with no record base, annotated fields with a default or
``field(default=..., default_factory=..., compare=..., repr=...)``, ``replace()``,
``__match_args__``; a frozen record is hashable, a mutable one is not. tests/test_records.py
compares the behaviour with :mod:`dataclasses` itself.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    _T = TypeVar("_T")
else:

    def dataclass_transform(**_kwargs):
        return lambda decorator: decorator


_MISSING: Any = object()
_MUTABLE_DEFAULTS = (list, dict, set)


class FrozenInstanceError(AttributeError):
    """Assigning to or deleting a field of a frozen record."""


class Field:
    __slots__ = ("name", "default", "default_factory", "compare", "repr")

    def __init__(
        self, default: Any, default_factory: Any, compare: bool, repr: bool, name: str = ""
    ) -> None:
        self.name = name
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | Any = _MISSING,
    compare: bool = True,
    repr: bool = True,
) -> Any:
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, compare, repr)


@dataclass_transform(field_specifiers=(field,))
def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """Make ``cls`` a record (as ``dataclasses.dataclass`` would, see the module docstring)."""

    def wrap(cls: type[_T]) -> type[_T]:
        _process(cls, frozen)
        return cls

    return wrap if cls is None else wrap(cls)


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of the record ``obj`` with ``changes`` applied (``dataclasses.replace``)."""
    fields: tuple[Field, ...] = type(obj).__record_fields__  # type: ignore[attr-defined]
    names = {f.name for f in fields}
    unknown = set(changes) - names
    if unknown:
        raise TypeError(f"{type(obj).__qualname__} has no field {sorted(unknown)[0]!r}")
    values = {f.name: changes.get(f.name, getattr(obj, f.name)) for f in fields}
    return type(obj)(**values)


def _process(cls: Any, frozen: bool) -> None:
    fields = _fields(cls)
    cls.__record_fields__ = fields
    setattr(cls, "__match_args__", tuple(f.name for f in fields))  # noqa: B010 - mypy
    cls.__init__ = _make_init(cls, fields, frozen)
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _repr
    if "__eq__" not in cls.__dict__:
        cls.__eq__ = _eq
        # a mutable record is unhashable, a frozen one hashes its compared fields
        cls.__hash__ = _hash if frozen else None
    if frozen:
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr


def _fields(cls: Any) -> tuple[Field, ...]:
    if any(hasattr(base, "__record_fields__") for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: a record cannot derive from a record here")
    out: list[Field] = []
    for name in cls.__dict__.get("__annotations__", {}):
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else Field(value, _MISSING, True, True)
        f.name = name
        if isinstance(f.default, _MUTABLE_DEFAULTS):
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed")
        if f.default is _MISSING:
            if name in cls.__dict__:
                delattr(cls, name)
        else:
            setattr(cls, name, f.default)
        out.append(f)
    required_after_default = [
        f.name
        for i, f in enumerate(out)
        if _no_default(f) and any(not _no_default(g) for g in out[:i])
    ]
    if required_after_default:
        raise TypeError(
            f"non-default argument {required_after_default[0]!r} follows default argument"
        )
    return tuple(out)


def _no_default(f: Field) -> bool:
    return f.default is _MISSING and f.default_factory is _MISSING


def _make_init(cls: Any, fields: tuple[Field, ...], frozen: bool) -> Any:
    # One shared function, no exec: compiling a generated __init__ costs 0.4 ms a class at
    # start-up, more than the instances of a command's run ever save.
    names = tuple(f.name for f in fields)
    known = frozenset(names)
    missing = tuple((f.name, f.default, f.default_factory) for f in fields)
    qualname = cls.__qualname__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # The instance's __dict__ directly: a frozen record's __setattr__ refuses, and
        # object.__setattr__ per field costs a call each (records are made on every write).
        attrs = self.__dict__
        if args:
            if len(args) > len(names):
                raise TypeError(f"{qualname}() takes {len(names)} positional arguments")
            for name, value in zip(names, args, strict=False):
                if name in kwargs:
                    raise TypeError(f"{qualname}() got multiple values for argument {name!r}")
                attrs[name] = value
        for name, default, factory in missing[len(args) :] if args else missing:
            if name in kwargs:
                attrs[name] = kwargs[name]
            elif factory is not _MISSING:
                attrs[name] = factory()
            elif default is not _MISSING:
                attrs[name] = default
            else:
                raise TypeError(f"{qualname}() missing required argument {name!r}")
        if kwargs and not known.issuperset(kwargs):
            unknown = sorted(set(kwargs) - known)[0]
            raise TypeError(f"{qualname}() got an unexpected keyword argument {unknown!r}")

    __init__.__qualname__ = f"{qualname}.__init__"
    return __init__


def _repr(self: Any) -> str:
    shown = ", ".join(
        f"{f.name}={getattr(self, f.name)!r}" for f in type(self).__record_fields__ if f.repr
    )
    return f"{type(self).__qualname__}({shown})"


def _compared(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, f.name) for f in type(self).__record_fields__ if f.compare)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return _compared(self) == _compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_compared(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")
