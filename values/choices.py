"""Enumerations without the ``enum`` module, for the analyzer's cold start.

``import enum`` brings ``functools`` and ``collections`` with it, and making
an enumeration runs its metaclass over every member: 3.5 ms of a cold
``shellgate check`` (about a seventh of it) went to the analyzer's six
enumerations. These classes keep what the packages use of ``enum`` and
nothing more: members as class attributes, each one object (``is`` holds,
and survives copy and pickle); ``Cls(value)`` looks a member up (a
``ValueError`` otherwise), ``Cls[name]`` by name; iteration and ``len`` in
definition order; ``.name`` and ``.value``; the ``repr``, ``str`` and
``format`` of ``enum``'s classes (a :class:`StrEnum` member prints as its
value, an :class:`IntEnum` member as its number); members cannot be
reassigned. A :class:`StrEnum` member is a ``str``, an :class:`IntEnum`
member an ``int``, so equality, hashing, ordering and JSON are theirs.

Type checkers see the ``enum`` classes (modules import them under
``TYPE_CHECKING``); ``tests/values/test_choices.py`` holds these to
``enum``'s behaviour for each of the above. Code that must recognize any
enumeration checks for :class:`Enum` here as well as ``enum.Enum``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

__all__ = ["Enum", "IntEnum", "StrEnum"]


def _is_member(name: str, value: object) -> bool:
    return not name.startswith("_") and not callable(value) and not isinstance(
        value, property | classmethod | staticmethod)


class _EnumType(type):
    _members_: dict[str, Any]
    _by_value_: dict[Any, Any]

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        cls = super().__new__(mcs, name, bases, namespace)
        base: Any = next((b for b in cls.__mro__ if b in (str, int)), object)
        members: dict[str, Any] = {}
        for key, value in namespace.items():
            if not _is_member(key, value):
                continue
            member = object.__new__(cls) if base is object else base.__new__(cls, value)  # type: ignore[arg-type]
            member._name_ = key
            member._value_ = value
            type.__setattr__(cls, key, member)
            members[key] = member
        type.__setattr__(cls, "_members_", members)
        type.__setattr__(cls, "_by_value_", {m._value_: m for m in reversed(members.values())})
        return cls

    def __call__(cls, value: Any) -> Any:
        try:
            return cls._by_value_[value]
        except (KeyError, TypeError):
            raise ValueError(f"{value!r} is not a valid {cls.__qualname__}") from None

    def __getitem__(cls, name: str) -> Any:
        return cls._members_[name]

    def __iter__(cls) -> Iterator[Any]:
        return iter(list(cls._members_.values()))

    def __len__(cls) -> int:
        return len(cls._members_)

    def __contains__(cls, value: object) -> bool:
        return isinstance(value, cls) and value in cls._members_.values()

    def __setattr__(cls, name: str, value: object) -> None:
        if name in cls.__dict__.get("_members_", {}):
            raise AttributeError(f"cannot reassign member {name!r}")
        type.__setattr__(cls, name, value)

    def __delattr__(cls, name: str) -> None:
        if name in cls.__dict__.get("_members_", {}):
            raise AttributeError(f"cannot delete member {name!r}")
        type.__delattr__(cls, name)

    @property
    def __members__(cls) -> dict[str, Any]:
        return dict(cls._members_)


class Enum(metaclass=_EnumType):
    """A member is itself alone: equal only to itself."""

    _name_: str
    _value_: Any

    @property
    def name(self) -> str:
        return self._name_

    @property
    def value(self) -> Any:
        return self._value_

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self._name_}: {self._value_!r}>"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self._name_}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __hash__(self) -> int:
        return hash(self._name_)

    def __reduce_ex__(self, protocol: object) -> tuple[Any, tuple[Any]]:
        return type(self), (self._value_,)

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: object) -> Any:
        return self

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("_name_", "_value_") and name not in self.__dict__:
            object.__setattr__(self, name, value)
            return
        raise AttributeError(f"cannot set {name!r} of an enumeration member")


class StrEnum(str, Enum):
    """Members are strings: ``str()`` and ``format()`` give the value."""

    __repr__ = Enum.__repr__  # str's would come first
    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]
    __hash__ = str.__hash__


class IntEnum(int, Enum):
    """Members are integers: ``str()`` and ``format()`` give the number."""

    __repr__ = Enum.__repr__
    __str__ = int.__repr__
    __format__ = int.__format__  # type: ignore[assignment]
    __hash__ = int.__hash__
