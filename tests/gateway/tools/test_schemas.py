"""Each tool's input schema is what clients see: a change to it must be a
decision, not an accident. Snapshots live in tests/gateway/tools/schemas/;
after a deliberate change, refresh them with
``SHELLGATE_UPDATE_SCHEMAS=1 .venv/bin/pytest tests/gateway/tools/test_schemas.py``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gateway.tools import AnyTool
from gateway.tools.registry import all_base_tools

SNAPSHOTS = Path(__file__).parent / "schemas"
TOOLS = {t.name: t for t in all_base_tools()}


def _schema(tool: AnyTool) -> str:
    return json.dumps(tool.input_model.model_json_schema(by_alias=True), indent=2,
                      sort_keys=True) + "\n"


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_the_input_schema_matches_its_snapshot(name: str) -> None:
    path = SNAPSHOTS / f"{name}.json"
    current = _schema(TOOLS[name])
    if os.environ.get("SHELLGATE_UPDATE_SCHEMAS") == "1":
        path.write_text(current)
    assert path.exists(), f"no snapshot for {name}: run with SHELLGATE_UPDATE_SCHEMAS=1"
    assert json.loads(current) == json.loads(path.read_text()), (
        f"{name}'s schema changed; if on purpose, refresh the snapshot")


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_field_a_client_sees_is_described(name: str) -> None:
    schema = TOOLS[name].input_model.model_json_schema(by_alias=True)
    undescribed = [k for k, v in schema["properties"].items() if not v.get("description")]
    assert not undescribed
    assert schema.get("additionalProperties") is False  # unknown keys are refused


def test_every_snapshot_belongs_to_a_tool() -> None:
    assert sorted(p.stem for p in SNAPSHOTS.glob("*.json")) == sorted(TOOLS)
