"""Frozen values, made at a fraction of ``dataclasses``' cost.

Every ``shellgate run``, ``check`` and ``hook`` is a new process that
defines some 150 value classes before it does any work. The standard
``@dataclass`` spends about 0.4 ms on each (it compiles five or six methods
per class from generated source, and importing it pulls in ``inspect``):
a fifth of a cold ``shellgate run``. :func:`valueclass` makes the same classes
with one compiled method, ``__init__`` (construction stays as fast as a
dataclass's); equality, hashing, ``repr``, the frozen guard and pickling are
shared closures over the class's field names. The ``__init__`` of every
class the packages define is compiled at build time (``python -m
values.build``, ``values/table.py``, keyed by its source text); any other
is compiled when its class is made.

What it keeps of ``dataclasses``, and nothing more:

* fields from annotations (``ClassVar`` excluded), in definition order,
  base classes' fields first; defaults and ``field(default_factory=...)``;
* ``__init__`` (positional or keyword), then ``__post_init__`` if defined;
* ``__eq__`` over the fields of the same class, and for frozen values
  ``__hash__`` of the fields (mutable values are unhashable);
* frozen (the default): assigning or deleting a field raises
  :class:`FrozenInstanceError`, an ``AttributeError``;
* ``__slots__`` (the default), ``__match_args__``, ``__repr__``, copy,
  deepcopy and pickle;
* :func:`replace`, :func:`fields` and :func:`is_value`.

Type checkers see a dataclass (:pep:`681`). The tests in
``tests/values`` hold it to ``dataclasses``' behaviour for each of these.
This package imports nothing of shellgate: every package may use it.
"""

from __future__ import annotations

import builtins
import sys
from operator import attrgetter
from types import CodeType, FunctionType

from values.choices import Enum, IntEnum, StrEnum

# typing is not imported at run time: it and what it imports (re, contextlib,
# warnings) are a tenth of a cold `shellgate check`; mypy reads this block
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, overload

    from typing_extensions import dataclass_transform

    _T = TypeVar("_T")
else:
    def dataclass_transform(**_options: object) -> Callable[[object], object]:
        return lambda decorated: decorated

    def overload(function: Callable[..., object]) -> Callable[..., object]:
        return function

__all__ = ["Enum", "Field", "FrozenInstanceError", "IntEnum", "StrEnum", "field", "fields",
           "is_value", "replace", "valueclass"]


def _codes() -> dict[str, CodeType]:
    """The ``__init__`` code compiled at build time (``python -m
    values.build``), by its source text; empty when the table cannot load."""
    try:
        from values import table  # noqa: PLC0415 - it may be missing or being rebuilt

        codes = table.CODES
    except Exception:  # any table that cannot load: every __init__ is compiled here
        return {}
    if not isinstance(codes, dict):
        return {}
    # an entry of the wrong shape is left out (its class compiles its own)
    return {text: code for text, code in codes.items()
            if isinstance(text, str) and isinstance(code, CodeType) and not code.co_freevars}


_CODES = _codes()
# The build's recorder: while it holds a list, every generated source is added.
_RECORDER: list[list[str]] = []


def start_recording() -> list[str]:
    """Record the source of every ``__init__`` made from now on (for the
    table's build)."""
    recorded: list[str] = []
    _RECORDER[:] = [recorded]
    return recorded


class FrozenInstanceError(AttributeError):
    """A field of a frozen value was assigned or deleted."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """One field of a value class: its name, and its default or the factory
    that makes one (both ``MISSING`` for a required field)."""

    __slots__ = ("default", "default_factory", "name")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r})"


@overload
def field(*, default: _T) -> _T: ...
@overload
def field(*, default_factory: Callable[[], _T]) -> _T: ...  # noqa: F811
def field(*, default: Any = MISSING, default_factory: Any = MISSING) -> Any:  # noqa: F811
    """A field's default, or the factory called for each new value (a
    mutable default such as ``[]`` is shared otherwise, and refused)."""
    return Field(default, default_factory)


def _is_classvar(annotation: object) -> bool:
    # with `from __future__ import annotations` an annotation is its source
    # text; dataclasses reads it the same way
    if isinstance(annotation, str):
        head = annotation.strip().partition("[")[0].strip()
        return head in ("ClassVar", "typing.ClassVar", "t.ClassVar")
    # a ClassVar object exists only once typing is loaded
    typing = sys.modules.get("typing")
    return typing is not None and getattr(annotation, "__origin__", annotation) is typing.ClassVar


def _collect(cls: type) -> tuple[Field, ...]:
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for inherited in getattr(base, "__value_fields__", ()):
            found[inherited.name] = inherited
    # not inspect.get_annotations: importing inspect costs 5 ms, the saving sought
    own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    for name, annotation in own.items():
        if _is_classvar(annotation):
            continue
        declared = cls.__dict__.get(name, MISSING)
        spec = declared if isinstance(declared, Field) else Field(declared)
        # an unhashable default is a mutable one, shared by every value
        if spec.default is not MISSING and type(spec.default).__hash__ is None:
            raise ValueError(f"mutable default {type(spec.default)} for field {name} "
                             "is not allowed: use default_factory")
        spec.name = name
        found[name] = spec  # an overridden field keeps its place, as in dataclasses
    return tuple(found.values())


def _init(cls: type, specs: tuple[Field, ...], frozen: bool) -> Callable[..., None]:
    """The one compiled method: a plain ``__init__`` keeps construction as
    fast as a dataclass's on the analyzer's hot path."""
    # the helpers' names cannot be a field's (fields never start with "__v_")
    namespace: dict[str, Any] = {"__v_set": object.__setattr__, "__v_factory": MISSING,
                                 "__builtins__": builtins}
    params, body, defaults = [], [], []
    for spec in specs:
        name = spec.name
        if spec.default_factory is not MISSING:
            namespace[f"__v_f_{name}"] = spec.default_factory
            defaults.append(MISSING)
            got = f"__v_f_{name}() if {name} is __v_factory else {name}"
        elif spec.default is not MISSING:
            defaults.append(spec.default)
            got = name
        else:
            if defaults:
                raise TypeError(f"non-default argument {name!r} follows default argument")
            got = name
        params.append(name)
        body.append(f"    __v_set(self, {name!r}, {got})" if frozen
                    else f"    self.{name} = {got}")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    # Defaults are the function's __defaults__, not part of the text: the
    # text then depends on the field names alone, and the same text was
    # compiled at build time (values/table.py) — exec()'s compile was 0.2 ms
    # of each class, some 6 ms of a cold `shellgate check`.
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass")
    for recorded in _RECORDER:
        recorded.append(source)
    code = _CODES.get(source)
    if code is None:
        # dont_inherit: compiled as the table's code is, free of this module's
        # __future__ flags
        compiled = compile(source, "<valueclass __init__>", "exec", dont_inherit=True)
        exec(compiled, namespace)  # noqa: S102 - source built from field names alone
        made: Callable[..., None] = namespace["__init__"]
    else:
        made = FunctionType(code, namespace, "__init__")
    made.__defaults__ = tuple(defaults) or None
    made.__qualname__ = f"{cls.__qualname__}.__init__"
    return made


def _methods(names: tuple[str, ...], frozen: bool, slots: bool, eq: bool,
             explicit_hash: bool) -> dict[str, Any]:
    key: Callable[[Any], Any] = attrgetter(*names) if names else (lambda _self: ())

    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    made: dict[str, Any] = {"__repr__": __repr__, "__match_args__": names}
    if eq:
        def __eq__(self: Any, other: object) -> bool:
            if other.__class__ is self.__class__:
                return bool(key(self) == key(other))
            return NotImplemented

        made["__eq__"] = __eq__
        if not explicit_hash:
            made["__hash__"] = (lambda self: hash(key(self))) if frozen else None
    if frozen:
        def __setattr__(self: Any, name: str, _value: object) -> None:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")

        def __delattr__(self: Any, name: str) -> None:
            raise FrozenInstanceError(f"cannot delete field {name!r}")

        def __getstate__(self: Any) -> tuple[Any, ...]:
            return tuple(getattr(self, name) for name in names)

        def __setstate__(self: Any, state: tuple[Any, ...]) -> None:
            for name, item in zip(names, state, strict=True):
                object.__setattr__(self, name, item)

        made.update(__setattr__=__setattr__, __delattr__=__delattr__)
        if slots:  # pickle's own way sets a slot through the refused __setattr__
            made.update(__getstate__=__getstate__, __setstate__=__setstate__)
    return made


def _with_slots(cls: type, names: tuple[str, ...]) -> type:
    """The class again, with ``__slots__`` (slots cannot be added to a class
    that exists), and the ``__class__`` cell of its methods (zero-argument
    ``super()``) pointed at the new class."""
    inherited = {slot for base in cls.__mro__[1:] for slot in getattr(base, "__slots__", ())}
    namespace = dict(cls.__dict__)
    for name in names:
        namespace.pop(name, None)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace["__slots__"] = tuple(name for name in names if name not in inherited)
    made = type(cls)(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    for member in namespace.values():
        function = getattr(member, "__func__", member)
        if isinstance(member, property):
            function = member.fget
        closure = getattr(function, "__closure__", None)
        code = getattr(function, "__code__", None)
        if closure and code is not None and "__class__" in code.co_freevars:
            cell = closure[code.co_freevars.index("__class__")]
            if cell.cell_contents is cls:
                cell.cell_contents = made
    return made


def _process(cls: type, frozen: bool, slots: bool, eq: bool) -> type:
    specs = _collect(cls)
    names = tuple(spec.name for spec in specs)
    own = cls.__dict__
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        # a class's own __setattr__ would quietly make a frozen value mutable
        raise TypeError(f"cannot overwrite __setattr__/__delattr__ of frozen {cls.__name__}")
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    for name, method in _methods(names, frozen, slots, eq, explicit_hash).items():
        if name not in own or (name == "__hash__" and not explicit_hash):
            setattr(cls, name, method)
    if "__init__" not in own:
        cls.__init__ = _init(cls, specs, frozen)  # type: ignore[misc]
    cls.__value_fields__ = specs  # type: ignore[attr-defined]
    if not slots:
        for spec in specs:  # defaults stay readable on the class, factories do not
            if spec.default is not MISSING:
                setattr(cls, spec.name, spec.default)
            elif spec.name in own:
                delattr(cls, spec.name)
        return cls
    return _with_slots(cls, names)


@overload
@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def valueclass(cls: type[_T], /) -> type[_T]: ...
@overload
def valueclass(*, frozen: bool = True, slots: bool = True,  # noqa: F811
          eq: bool = True) -> Callable[[type[_T]], type[_T]]: ...
def valueclass(cls: type[_T] | None = None, /, *, frozen: bool = True, slots: bool = True,  # noqa: F811
          eq: bool = True) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """Make ``cls`` a value class: frozen and slotted unless told otherwise."""
    def wrap(target: type[_T]) -> type[_T]:
        return _process(target, frozen, slots, eq)

    return wrap if cls is None else wrap(cls)


def fields(obj: object) -> tuple[Field, ...]:
    """The fields of a value class or of one of its values."""
    specs: tuple[Field, ...] | None = getattr(obj, "__value_fields__", None)
    if specs is None:
        raise TypeError(f"not a value class or value: {obj!r}")
    return specs


def is_value(obj: object) -> bool:
    """Whether ``obj`` is a value (an instance, not the class)."""
    return hasattr(type(obj), "__value_fields__") and not isinstance(obj, type)


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of the value ``obj`` with ``changes``; ``__post_init__`` runs
    again, as for any new value."""
    for spec in fields(obj):
        if spec.name not in changes:
            changes[spec.name] = getattr(obj, spec.name)
    return type(obj)(**changes)
