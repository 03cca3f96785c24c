"""The gateway pipeline's own cost. Prints one JSON object (milliseconds).

  read_overhead       Read of a small file through Pipeline.run, minus the
                      time inside Read's own call (lookup, validation,
                      permission, mapping, limits, audit); target < 1
  bash_overhead       the same for Bash `true` (the analysis included; the
                      sandboxed run is the work); target < 1
  bash_pipeline       Bash `true` through the whole pipeline
  sandbox_bash        sandbox.run(["bash", "-c", "true"]) alone, same run;
                      target: bash_pipeline - sandbox_bash <= 1
  raw_bash            `bash -c true` with no sandbox (the baseline)
  grep_serial         10 Grep calls one after another
  grep_batch          the same 10 in one executor batch; target: speedup >= 1.7
  wait_batch_10x100   10 calls of a tool that waits 100 ms, one batch; target < 250
  read_overhead_audited, bash_overhead_audited
                      the overheads again with the real audit log (a file
                      chain under /var/tmp) and a decider holding 30 rules
  audit_event         one FileAudit.emit of a typical event
Run: .venv/bin/python bench/pipeline.py [--n 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gateway"))

from kit import wait_tool  # noqa: E402

from gateway.audit import FileAudit  # noqa: E402
from gateway.context import ToolContext  # noqa: E402
from gateway.executor import StreamingExecutor  # noqa: E402
from gateway.messages import ProgressCallback, ToolResult, ToolUse  # noqa: E402
from gateway.permissions import RulesDecider, Source, merge, parse_settings_text  # noqa: E402
from gateway.pipeline import Pipeline  # noqa: E402
from gateway.session import make_context  # noqa: E402
from gateway.tools import AnyTool  # noqa: E402
from gateway.tools.registry import all_base_tools  # noqa: E402
from sandbox import run  # noqa: E402


class Timed:
    """Wraps a tool's call to time the work alone."""

    def __init__(self, tool: AnyTool) -> None:
        self.tool = tool
        self.spent = 0.0
        original = tool.call

        async def call(data: Any, ctx: ToolContext, on_progress: ProgressCallback) -> ToolResult:
            t = time.perf_counter()
            try:
                return await original(data, ctx, on_progress)
            finally:
                self.spent += time.perf_counter() - t

        tool.call = call  # type: ignore[method-assign]


def ms(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {"median": round(statistics.median(s) * 1000, 3),
            "p90": round(s[int(len(s) * 0.9) - 1] * 1000, 3)}


async def overhead(pipeline: Pipeline, timed: Timed, use: ToolUse, n: int
                   ) -> tuple[dict[str, float], dict[str, float]]:
    totals, overheads = [], []
    for i in range(n + 3):
        timed.spent = 0.0
        t = time.perf_counter()
        result = await pipeline.run(ToolUse(f"{use.id}{i}", use.name, use.input))
        total = time.perf_counter() - t
        if result.is_error:
            raise SystemExit(f"{use.name} failed: {result.text[:300]}")
        if i >= 3:
            totals.append(total)
            overheads.append(total - timed.spent)
    return ms(totals), ms(overheads)


async def batch(pipeline: Pipeline, uses: list[ToolUse]) -> float:
    t = time.perf_counter()
    executor = StreamingExecutor(pipeline)
    for use in uses:
        executor.add(use)
    results = await executor.results()
    if any(r.is_error for r in results):
        raise SystemExit(f"batch failed: {[r.text[:200] for r in results if r.is_error]}")
    return time.perf_counter() - t


async def repeat(fn: Callable[[], Awaitable[float]], n: int) -> dict[str, float]:
    await fn()
    return ms([await fn() for _ in range(n)])


#: a settings file of the size people keep
RULES = {"permissions": {
    "allow": [f"Bash(npm run script{i}:*)" for i in range(10)] + ["Read(//opt/**)"],
    "deny": [f"Bash(tool{i}:*)" for i in range(10)] + ["Read(./secrets/**)", "Edit(*.lock)"],
    "ask": [f"Bash(git push{i}:*)" for i in range(7)]}}


async def audited(ws: Path, n: int) -> dict[str, Any]:
    """The overheads with the real audit log and a decider with rules."""
    log = Path(tempfile.mkdtemp(prefix="sg-bench-audit-", dir="/var/tmp"))
    audit = FileAudit(log)
    session = make_context(str(ws), audit=audit)
    settings = merge([parse_settings_text(json.dumps(RULES).encode(), "/bench.json",
                                          Source.USER, "/")])
    tools = {t.name: Timed(t) for t in all_base_tools()}
    pipeline = Pipeline(session, [t.tool for t in tools.values()], RulesDecider(settings))
    out: dict[str, Any] = {}
    read = ToolUse("r", "Read", {"file_path": str(ws / "f1.py"), "limit": 50})
    _, out["read_overhead_audited"] = await overhead(pipeline, tools["Read"], read, n)
    bash = ToolUse("b", "Bash", {"command": "true"})
    _, out["bash_overhead_audited"] = await overhead(pipeline, tools["Bash"], bash, max(5, n // 2))
    samples = []
    for i in range(n * 5):
        t = time.perf_counter()
        audit.emit("permission.decided", session_id="s", call_id=f"c{i}", tool_use_id="t",
                   tool="Bash", decision="allow", source="userSettings",
                   rule="Bash(npm run:*)", reason="every subcommand is allowed", checks=[],
                   subject=["npm run build"])
        samples.append(time.perf_counter() - t)
    out["audit_event"] = ms(samples)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=40)
    n = parser.parse_args().n
    ws = Path(tempfile.mkdtemp(prefix="sg-bench-", dir="/var/tmp"))
    for i in range(200):
        (ws / f"f{i}.py").write_text("".join(f"def fn_{j}(): return {j}\n" for j in range(300)))
    session = make_context(str(ws))
    tools = {t.name: Timed(t) for t in all_base_tools()}
    pipeline = Pipeline(session, [t.tool for t in tools.values()] + [wait_tool()])
    read = ToolUse("r", "Read", {"file_path": str(ws / "f1.py"), "limit": 50})

    async def bench() -> dict[str, Any]:
        out: dict[str, Any] = {}
        _, out["read_overhead"] = await overhead(pipeline, tools["Read"], read, n)
        # Bash through the pipeline and the sandbox alone, interleaved call by
        # call: the machine's drift falls on both alike
        policy = session.policy
        timed = tools["Bash"]
        piped, alone, raw, spent = [], [], [], []
        for i in range(n + 3):
            t = time.perf_counter()
            run(["bash", "-c", "true"], policy, cwd=str(ws))
            sandbox_s = time.perf_counter() - t
            timed.spent = 0.0
            t = time.perf_counter()
            result = await pipeline.run(ToolUse(f"b{i}", "Bash", {"command": "true"}))
            pipe_s = time.perf_counter() - t
            if result.is_error:
                raise SystemExit(f"Bash failed: {result.text[:300]}")
            t = time.perf_counter()
            subprocess.run(["bash", "-c", "true"], check=True)
            raw_s = time.perf_counter() - t
            if i >= 3:
                alone.append(sandbox_s)
                piped.append(pipe_s)
                spent.append(pipe_s - timed.spent)
                raw.append(raw_s)
        out["bash_pipeline"], out["sandbox_bash"] = ms(piped), ms(alone)
        out["bash_overhead"], out["raw_bash"] = ms(spent), ms(raw)
        out["bash_minus_sandbox"] = round(out["bash_pipeline"]["median"]
                                          - out["sandbox_bash"]["median"], 3)
        greps = [ToolUse(f"g{i}", "Grep", {"pattern": f"fn_{i}7", "output_mode": "count"})
                 for i in range(10)]
        rounds = max(5, n // 4)

        async def serial() -> float:
            t = time.perf_counter()
            for use in greps:
                result = await pipeline.run(use)
                if result.is_error:
                    raise SystemExit(f"grep failed: {result.text[:300]}")
            return time.perf_counter() - t

        serial_s, batch_s = [], []
        for _ in range(rounds + 1):  # interleaved, the first round a warm-up
            serial_s.append(await serial())
            batch_s.append(await batch(pipeline, greps))
        out["grep_serial"], out["grep_batch"] = ms(serial_s[1:]), ms(batch_s[1:])
        out["grep_speedup"] = round(out["grep_serial"]["median"]
                                    / out["grep_batch"]["median"], 2)
        waits = [ToolUse(f"w{i}", "Wait", {"ms": 100}) for i in range(10)]
        out["wait_batch_10x100"] = await repeat(lambda: batch(pipeline, waits), rounds)
        out.update(await audited(ws, n))
        return out

    result = asyncio.run(bench())
    result["targets"] = {
        "overhead_under_1ms": result["read_overhead"]["median"] < 1
        and result["bash_overhead"]["median"] < 1,
        "bash_within_1ms_of_sandbox": result["bash_minus_sandbox"] <= 1,
        "grep_batch_1.7x": result["grep_speedup"] >= 1.7,
        "wait_batch_under_250ms": result["wait_batch_10x100"]["median"] < 250,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
