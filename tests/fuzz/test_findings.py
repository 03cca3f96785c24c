"""Every finding `shellgate fuzz` saved, replayed: once fixed, it stays fixed.

`tests/corpus/fuzz_findings.jsonl` is where the fuzzer writes (one JSON line
a finding: the property, the minimal command, the example to replay, the
verdict, a trace excerpt, the seed). A finding lands there when found; the
fix that makes this test pass names its commit in ``fixed``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fuzz import PROPERTIES, Context, FuzzConfig, load_findings, make_context

ROOT = Path(__file__).resolve().parents[2]
FINDINGS = load_findings(ROOT / "tests" / "corpus" / "fuzz_findings.jsonl")


def test_the_findings_file_holds_findings_each_naming_its_fix() -> None:
    assert FINDINGS, "an empty file would make the replay below pass by replaying nothing"
    for finding in FINDINGS:
        assert finding["property"] in PROPERTIES
        assert finding["fixed"], f"unfixed: {finding['command'][:80]!r}"


@pytest.fixture(scope="module")
def oracle_ctx(ctx: Context) -> Iterator[Context]:
    with_oracle = make_context(FuzzConfig(oracle=True), ctx.tools, ctx.attacks, ctx.benign)
    yield with_oracle
    assert with_oracle.oracle is not None
    with_oracle.oracle.close()


def _id(finding: dict[str, Any]) -> str:
    return f"{finding['property']}-{finding['found']}-{finding['command'][:30]}"


@pytest.mark.parametrize(
    "finding",
    [pytest.param(f, marks=[pytest.mark.sandbox] if PROPERTIES[f["property"]].oracle else [])
     for f in FINDINGS], ids=[_id(f) for f in FINDINGS])
def test_a_saved_finding_stays_fixed(request: pytest.FixtureRequest, ctx: Context,
                                     finding: dict[str, Any]) -> None:
    prop = PROPERTIES[finding["property"]]
    here = request.getfixturevalue("oracle_ctx") if prop.oracle else ctx
    failure = prop.check(here, finding["example"])
    assert failure is None, f"{finding['command'][:200]!r} fails again: {failure.trace}"
