"""The fuzzer's properties, run as make test runs them: a fixed seed and a
bounded number of examples (never a randomised run that could fail an
unrelated change); and each property's check seen to catch what it is for."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from analyzers import BashAnalysis, Verdict
from fuzz import PROPERTIES, Context, FuzzConfig, Oracle, Property, make_context
from fuzz.properties import bash_rejects, contain
from values import replace

ROOT = Path(__file__).resolve().parents[2]
FAST = [name for name, prop in PROPERTIES.items() if not prop.oracle]


def _hold(prop: Property, ctx: Context, examples: int) -> None:
    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink])
    @given(prop.examples(ctx))
    def run(example: dict[str, Any]) -> None:
        failure = prop.check(ctx, example)
        assert failure is None, f"{failure.command!r}: {failure.trace}"

    run()


@pytest.mark.parametrize("name", FAST)
def test_the_property_holds_for_the_fixed_seed(ctx: Context, name: str) -> None:
    _hold(PROPERTIES[name], ctx, 120)


@pytest.fixture(scope="module")
def oracle_ctx(ctx: Context) -> Iterator[Context]:
    with_oracle = make_context(FuzzConfig(mode="ci", oracle=True), ctx.tools, ctx.attacks,
                               ctx.benign)
    yield with_oracle
    assert with_oracle.oracle is not None
    with_oracle.oracle.close()


@pytest.mark.sandbox
@pytest.mark.slow
def test_what_the_analyzer_allows_passes_the_oracle_for_the_fixed_seed(
    oracle_ctx: Context,
) -> None:
    _hold(PROPERTIES["oracle"], oracle_ctx, 40)
    assert oracle_ctx.oracle_runs > 0  # the generator reaches allowed commands


# -- each check catches what it is for --------------------------------------------------------


class _Weakened(Context):
    """The real analyzer, except that commands holding ``marker`` are
    answered ``verdict`` (how a check behaves when the analyzer is wrong)."""

    marker: str = "`"
    verdict: Verdict = Verdict.ALLOW
    legacy_only: bool = False

    def analyze(self, cmd: str, *, ts: bool = True) -> BashAnalysis:
        result = super().analyze(cmd, ts=ts)
        if self.marker in cmd and (ts is False or not self.legacy_only):
            return replace(result, verdict=self.verdict)
        return result


def _weakened(ctx: Context, **kw: Any) -> _Weakened:
    weak = _Weakened(ctx.mode, ctx.tools, ctx.attacks, ctx.benign)
    for key, value in kw.items():
        setattr(weak, key, value)
    return weak


CAUGHT = {
    "containment": ({"inner": "touch pwned", "form": "echo `{X}`"}, {}),
    "quoting": ({"words": ["rm", "README.md"], "command": "r\\m README.md"}, {"marker": "\\"}),
    "legacy": ({"command": "echo `touch pwned`"}, {"legacy_only": True}),
    "bash_syntax": ({"command": "cat notes.txt `"}, {}),
}


@pytest.mark.parametrize("name", list(CAUGHT))
def test_a_check_reports_the_failure_it_exists_for(ctx: Context, name: str) -> None:
    example, weakness = CAUGHT[name]
    failure = PROPERTIES[name].check(_weakened(ctx, **weakness), example)
    assert failure is not None and failure.property == name
    # and the real analyzer passes the same example
    assert PROPERTIES[name].check(ctx, example) is None


def test_the_total_check_reports_an_exception_with_its_trace(ctx: Context) -> None:
    class Raising(Context):
        def analyze(self, cmd: str, *, ts: bool = True) -> BashAnalysis:
            raise RecursionError("maximum recursion depth exceeded")

    failure = PROPERTIES["total"].check(Raising(ctx.mode, ctx.tools, (), ()), {"command": "ls"})
    assert failure is not None and failure.verdict == "raised"
    assert "RecursionError" in failure.trace


@pytest.mark.parametrize("command, rejected", [
    ("ls", False), ("ls |", True), ("if true; then ls", True), ("echo 'a", True),
    ("cat <<EOF\nx\nEOF", False), ("echo $(", True),
])
def test_bash_itself_decides_what_is_a_syntax_error(command: str, rejected: bool) -> None:
    assert bash_rejects(command) is rejected


def test_a_container_runs_the_command_it_holds() -> None:
    assert contain("rm x", "bash -c {Q}") == "bash -c 'rm x'"
    assert contain("rm x", "{{ {X}; }}") == "{ rm x; }"


@pytest.mark.sandbox
def test_the_oracle_check_reports_what_an_allowed_command_did(oracle_ctx: Context) -> None:
    failure = PROPERTIES["oracle"].check(oracle_ctx, {"command": "cat notes.txt"})
    assert failure is None
    assert isinstance(oracle_ctx.oracle, Oracle)
