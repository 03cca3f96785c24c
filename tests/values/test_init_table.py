"""The build-time table of value classes' ``__init__`` code: current, the
very code ``exec`` compiles from the same text, and used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import values
from values import field, table, valueclass

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(table.CODES)


def test_the_table_holds_every_initializer_the_packages_make_at_import() -> None:
    done = subprocess.run([sys.executable, "-m", "values.build", "--check"], cwd=ROOT,
                          env={**os.environ, "PYTHONHASHSEED": "7"}, capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(SOURCES) > 120


def _shape(code: Any) -> tuple[object, ...]:
    return (code.co_code, code.co_consts, code.co_names, code.co_varnames, code.co_argcount,
            code.co_flags)


@pytest.mark.parametrize("source", SOURCES, ids=[s.split(":", 1)[0][13:60] for s in SOURCES])
def test_each_entry_is_what_exec_compiles_from_its_text(source: str) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<test>", "exec", dont_inherit=True), namespace)
    assert _shape(table.CODES[source]) == _shape(namespace["__init__"].__code__)


def test_a_package_value_class_is_made_from_the_table() -> None:
    from analyzers import BashAnalysis

    assert BashAnalysis.__init__.__code__ in table.CODES.values()


def _make() -> type:
    @valueclass
    class Sample:
        required: str
        count: int = 3
        items: list[str] = field(default_factory=list)

        def __post_init__(self) -> None:
            if self.count < 0:
                raise ValueError("negative")

    return Sample


def test_a_class_from_the_table_and_one_from_exec_behave_alike(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made = _make()
    source = made.__init__.__code__  # type: ignore[misc]
    monkeypatch.setattr(values, "_CODES", {})
    by_exec = _make()
    monkeypatch.setattr(values, "_CODES", {**table.CODES, _text_of(by_exec): source})
    by_table = _make()
    assert by_table.__init__.__code__ is source  # type: ignore[misc]
    for cls in (by_exec, by_table):
        one, two = cls("a"), cls("a")
        assert (one.required, one.count, one.items) == ("a", 3, [])
        assert one.items is not two.items  # a fresh list each
        assert cls("b", 5, ["x"]).items == ["x"]
        assert cls(required="c", items=["y"]).count == 3
        with pytest.raises(ValueError, match="negative"):
            cls("d", -1)
        with pytest.raises(TypeError):
            cls()


def _text_of(cls: type) -> str:
    recorded = values.start_recording()
    try:
        _make()
    finally:
        values._RECORDER.clear()
    assert recorded, cls
    return recorded[-1]


def test_a_table_entry_of_the_wrong_shape_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    good = SOURCES[0]

    def closure() -> object:
        return good

    monkeypatch.setattr(table, "CODES", {good: table.CODES[good], "x": "not code", 3: None,
                                         "y": closure.__code__})
    assert values._codes() == {good: table.CODES[good]}
    monkeypatch.setattr(table, "CODES", ["not", "a", "dict"])
    assert values._codes() == {}
