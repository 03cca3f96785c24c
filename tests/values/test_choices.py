"""values.choices behaves as ``enum`` does for everything the packages use
of it: each behaviour is asserted of both, side by side."""

from __future__ import annotations

import copy
import enum
import json
import pickle
from typing import Any

import pytest

import values


class StdStr(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class OurStr(values.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class StdInt(enum.IntEnum):
    ONE = 1
    TWO = 2
    THREE = 3


class OurInt(values.IntEnum):
    ONE = 1
    TWO = 2
    THREE = 3


class StdPlain(enum.Enum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class OurPlain(values.Enum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


PAIRS: dict[str, tuple[Any, Any]] = {
    "str": (StdStr, OurStr), "int": (StdInt, OurInt), "plain": (StdPlain, OurPlain)}


def _classes(kind: str) -> dict[str, Any]:
    std, ours = PAIRS[kind]
    return {"enum": std, "values": ours}


KINDS = ["str", "int", "plain"]


def _views(cls: Any) -> dict[str, object]:
    first, *rest = list(cls)
    value = first.value
    out: dict[str, object] = {
        "names": [m.name for m in cls], "values": [m.value for m in cls], "len": len(cls),
        "repr": repr(first), "str": str(first), "format": f"{first}", "padded": f"{first:>20}",
        "lookup": cls(value) is first, "by_name": cls[first.name] is first,
        "member_of": first in cls, "isinstance": isinstance(first, cls),
        "equal_self": first == cls(value), "equal_other": first == rest[0],
        "equal_value": first == value, "hash_stable": hash(first) == hash(cls(value)),
        "copy": copy.copy(first) is first, "deepcopy": copy.deepcopy(first) is first,
        "pickle": pickle.loads(pickle.dumps(first)) is first,
        "members": list(cls.__members__),
        "set": len({first, cls(value), rest[0]}),
    }
    try:
        out["json"] = json.dumps(first)
    except TypeError:
        out["json"] = "TypeError"
    name = type(first).__name__  # the classes' own names aside
    return {k: v.replace(name, "C") if isinstance(v, str) else v for k, v in out.items()}


@pytest.mark.parametrize("kind", KINDS)
def test_a_member_looks_prints_compares_and_survives_as_enum_s_does(kind: str) -> None:
    made = _classes(kind)
    assert _views(made["values"]) == _views(made["enum"])


@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_value_or_name_is_refused_as_enum_refuses_it(kind: str) -> None:
    for cls in _classes(kind).values():
        with pytest.raises(ValueError, match="is not a valid"):
            cls("nothing")
        with pytest.raises(ValueError):
            cls([1])  # unhashable: a ValueError too
        with pytest.raises(KeyError):
            cls["NOTHING"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_member_cannot_be_reassigned_or_deleted(kind: str) -> None:
    for cls in _classes(kind).values():
        name = next(iter(cls)).name
        with pytest.raises(AttributeError):
            setattr(cls, name, "x")
        with pytest.raises(AttributeError):
            delattr(cls, name)
        cls.__doc__ = "other attributes may be set"
        assert cls.__doc__ == "other attributes may be set"


def test_str_and_int_members_are_their_base_type_and_order_as_it_does() -> None:
    made = _classes("int")
    for cls in made.values():
        one, two, _ = list(cls)
        assert isinstance(one, int) and one < two and one + 1 == 2 and sorted([two, one]) == [1, 2]
    for cls in _classes("str").values():
        allow = next(iter(cls))
        assert isinstance(allow, str) and allow.upper() == "ALLOW" and {"allow": 1}[allow] == 1


def test_a_plain_member_equals_only_itself() -> None:
    for cls in _classes("plain").values():
        allow = next(iter(cls))
        assert allow != "allow" and allow is cls("allow")
        with pytest.raises(TypeError):
            _ = allow < cls("ask")


def test_methods_and_properties_of_a_class_are_not_members() -> None:
    class Level(values.IntEnum):
        LOW = 1
        HIGH = 2

        @property
        def loud(self) -> bool:
            return self is Level.HIGH

        def twice(self) -> int:
            return int(self) * 2

    assert [m.name for m in Level] == ["LOW", "HIGH"]
    assert Level.HIGH.loud and not Level.LOW.loud and Level.LOW.twice() == 2


def test_the_analyzer_s_enumerations_are_the_light_ones_and_their_members_unchanged() -> None:
    from analyzers import ParseStatus, Verdict
    from analyzers.bash.checks.ids import CheckId

    assert isinstance(Verdict.ALLOW, values.Enum) and Verdict("deny") is Verdict.DENY
    assert [s.value for s in ParseStatus] == ["simple", "too-complex", "parse-unavailable"]
    assert len(CheckId) == 23 and CheckId(8).name == "DANGEROUS_PATTERNS_COMMAND_SUBSTITUTION"
