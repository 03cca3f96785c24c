"""``values.valueclass`` behaves as ``dataclasses.dataclass`` does for
everything shellgate's value classes use: each case builds the same class
both ways and compares what a user of the class sees."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from typing import Any, ClassVar  # noqa: F401 - dataclasses looks "ClassVar[str]" up here

import pytest

from values import FrozenInstanceError, field, fields, is_value, replace, valueclass


def _pair(frozen: bool, slots: bool) -> tuple[type[Any], type[Any]]:
    """The same class, once a dataclass and once a value class."""
    def body() -> dict[str, Any]:
        return {"__annotations__": {"a": "int", "b": "str", "c": "tuple[int, ...]",
                                    "d": "list[int]", "kind": "ClassVar[str]"},
                "b": "x", "c": (1, 2), "d": dataclasses.field(default_factory=list),
                "kind": "shared"}
    made = type("Point", (), body())
    ours = body()
    ours["d"] = field(default_factory=list)
    return (dataclasses.dataclass(frozen=frozen, slots=slots)(made),
            valueclass(frozen=frozen, slots=slots)(type("Point", (), ours)))


SHAPES = [(True, True), (True, False), (False, True), (False, False)]
ARGS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((1,), {}), ((1, "y"), {}), ((), {"a": 2, "c": ()}), ((3, "z", (4,), [5]), {}),
    ((1,), {"d": [1, 2]}),
]


@pytest.mark.parametrize(("frozen", "slots"), SHAPES)
@pytest.mark.parametrize(("args", "kwargs"), ARGS)
def test_a_value_is_built_shown_and_compared_as_a_dataclass_is(
        frozen: bool, slots: bool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    theirs, ours = _pair(frozen, slots)
    a, b = theirs(*args, **kwargs), ours(*args, **kwargs)
    assert repr(a) == repr(b)
    assert [f.name for f in dataclasses.fields(a)] == [f.name for f in fields(b)]
    assert ours.__match_args__ == theirs.__match_args__
    for other_args, other_kwargs in ARGS:
        assert (a == theirs(*other_args, **other_kwargs)) == (
            b == ours(*other_args, **other_kwargs))
    assert b != a  # a value of another class is never equal
    assert hasattr(b, "__dict__") == hasattr(a, "__dict__")


@pytest.mark.parametrize(("frozen", "slots"), SHAPES)
def test_frozen_values_refuse_assignment_and_hash_by_their_fields(
        frozen: bool, slots: bool) -> None:
    theirs, ours = _pair(frozen, slots)
    value = ours(1, d=None) if frozen else ours(1)
    if frozen:
        with pytest.raises(FrozenInstanceError):
            value.a = 2
        with pytest.raises(AttributeError):
            del value.b
        assert hash(value) == hash(ours(1, d=None))
        assert hash(value) == hash(theirs(1, d=None))
    else:
        value.a = 2
        assert value.a == 2
        with pytest.raises(TypeError):
            hash(value)


@pytest.mark.parametrize(("frozen", "slots"), SHAPES)
def test_a_default_factory_makes_a_fresh_default_for_each_value(
        frozen: bool, slots: bool) -> None:
    _theirs, ours = _pair(frozen, slots)
    first, second = ours(1), ours(1)
    assert first.d == [] and first.d is not second.d


def _module_level(frozen: bool, slots: bool) -> type[Any]:
    """A value class pickle can find by its name."""
    ours = _pair(frozen, slots)[1]
    name = f"Point_{frozen}_{slots}"
    ours.__name__ = ours.__qualname__ = name
    globals()[name] = ours
    return ours


PICKLED = {shape: _module_level(*shape) for shape in SHAPES}


@pytest.mark.parametrize(("frozen", "slots"), SHAPES)
def test_a_value_survives_pickle_copy_and_deepcopy(frozen: bool, slots: bool) -> None:
    ours = PICKLED[frozen, slots]
    value = ours(7, "q", (1,), [2, 3])
    for made in (pickle.loads(pickle.dumps(value)), copy.copy(value), copy.deepcopy(value)):
        assert made == value and type(made) is ours


def test_class_variables_are_not_fields_and_stay_on_the_class() -> None:
    _theirs, ours = _pair(True, True)
    assert "kind" not in [f.name for f in fields(ours)]
    assert ours.kind == "shared"


def test_replace_keeps_the_other_fields_and_refuses_unknown_ones() -> None:
    _theirs, ours = _pair(True, True)
    value = ours(1, "y", (9,), [1])
    changed = replace(value, b="z")
    assert (changed.a, changed.b, changed.c, changed.d) == (1, "z", (9,), [1])
    with pytest.raises(TypeError):
        replace(value, nope=1)


def test_post_init_runs_for_every_new_value_replace_included() -> None:
    @valueclass
    class Positive:
        n: int

        def __post_init__(self) -> None:
            if self.n <= 0:
                raise ValueError(f"not positive: {self.n}")

    assert Positive(1).n == 1
    with pytest.raises(ValueError, match="not positive"):
        Positive(0)
    with pytest.raises(ValueError, match="not positive"):
        replace(Positive(1), n=-1)


@pytest.mark.parametrize("default", [[], {}, set()])
def test_a_mutable_default_is_refused_as_dataclasses_refuses_it(default: object) -> None:
    with pytest.raises(ValueError, match="mutable default"):
        valueclass(type("Bad", (), {"__annotations__": {"x": "list[int]"}, "x": default}))


def test_a_required_field_after_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="non-default argument 'y'"):
        valueclass(type("Bad", (), {"__annotations__": {"x": "int", "y": "int"}, "x": 1}))


def test_fields_of_a_base_value_class_come_first() -> None:
    @valueclass(slots=False)
    class Base:
        a: int
        b: int = 0

    @valueclass
    class Child(Base):
        c: int = 1

    assert [f.name for f in fields(Child)] == ["a", "b", "c"]
    assert repr(Child(5)) == "test_fields_of_a_base_value_class_come_first.<locals>." \
        "Child(a=5, b=0, c=1)"


def test_zero_argument_super_works_in_a_slotted_value_class() -> None:
    class Greeter:
        def greet(self) -> str:
            return "hello"

    @valueclass
    class Named(Greeter):
        name: str

        def greet(self) -> str:
            return f"{super().greet()} {self.name}"

        @property
        def loud(self) -> str:
            return super().greet().upper()

    assert Named("ann").greet() == "hello ann"
    assert Named("ann").loud == "HELLO"


def test_a_slotted_value_takes_no_other_attribute() -> None:
    @valueclass(frozen=False)
    class Open:
        a: int

    with pytest.raises(AttributeError):
        Open(1).b = 2  # type: ignore[attr-defined]


def test_methods_a_class_defines_itself_are_kept() -> None:
    @valueclass
    class Own:
        a: int

        def __repr__(self) -> str:
            return "own"

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 7

    assert repr(Own(1)) == "own" and Own(1) == 3 and hash(Own(2)) == 7


def test_is_value_and_fields_tell_a_value_from_anything_else() -> None:
    _theirs, ours = _pair(True, True)
    assert is_value(ours(1)) and not is_value(ours) and not is_value(object())
    with pytest.raises(TypeError):
        fields(object())


def test_importing_values_pulls_in_neither_dataclasses_nor_inspect() -> None:
    """The reason the package exists: its import must stay cheap."""
    code = ("import sys, values; "
            "print(sorted({'dataclasses', 'inspect'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_an_overridden_field_keeps_its_place() -> None:
    @valueclass(slots=False)
    class Base:
        a: int = 0
        b: int = 1

    @valueclass
    class Child(Base):
        a: int = 5

    assert [f.name for f in fields(Child)] == ["a", "b"]
    assert (Child(10, 20).a, Child(10, 20).b) == (10, 20)


@pytest.mark.parametrize("default", [bytearray(b"x"), PICKLED[False, True](1)])
def test_any_unhashable_default_is_refused(default: object) -> None:
    with pytest.raises(ValueError, match="mutable default"):
        valueclass(type("Bad", (), {"__annotations__": {"x": "object"}, "x": default}))


def test_a_frozen_class_may_not_bring_its_own_setattr() -> None:
    with pytest.raises(TypeError, match="__setattr__"):
        valueclass(type("Open", (), {"__annotations__": {"x": "int"},
                                     "__setattr__": object.__setattr__}))


@pytest.mark.parametrize("name", ["_set", "_FACTORY", "self_", "MISSING"])
def test_a_field_may_have_any_name_the_generated_init_uses(name: str) -> None:
    made = valueclass(type("Odd", (), {"__annotations__": {name: "int", "z": "list[int]"},
                                       "z": field(default_factory=list)}))
    value = made(3)
    assert getattr(value, name) == 3 and value.z == []


@pytest.mark.parametrize(("annotation", "is_field"), [
    ("ClassVar[int]", False), ("typing.ClassVar[int]", False), ("ClassVariable", True),
    ("int", True)])
def test_only_a_classvar_annotation_is_left_out(annotation: str, is_field: bool) -> None:
    made = valueclass(type("C", (), {"__annotations__": {"x": annotation}, "x": 1}))
    assert ("x" in [f.name for f in fields(made)]) == is_field
