"""Sandbox spawn-to-exit latency. Prints one JSON object (milliseconds).

  raw_bash            `bash -c true`, no sandbox (the baseline)
  bwrap_floor         bare bwrap with the same namespaces, no mounts/seccomp
  sandbox_isolated    sandbox.run(["true"]) with the default profile
                      (network namespace, seccomp, mandatory denies, the
                      run's cgroup where one can be had) — the warm library
                      path; target: within 8x of raw_bash
  sandbox_no_cgroup   the same with no memory and no process limit (no
                      cgroup made): the difference is the cgroup's cost
  sandbox_bash        sandbox.run(["bash", "-c", "true"]): what the Bash tool runs
  sandbox_networked   the networked profile: host proxy + in-sandbox launcher
  sandbox_100_denies  default profile plus 100 write-denied paths (100 mounts)
  sandbox_one_repo    the default profile in a git repository (its internals protected)
  sandbox_five_repos  a workspace holding 5 repositories (each one's internals protected)
  sandbox_home        the home directory as the workspace (its startup files protected)
  sandbox_venv_20k    a project whose .venv holds 20,000 files (its startup files watched)
  venv_watch_20k      the watch of that virtualenv alone, before and after a run (the part
                      of sandbox_venv_20k that grows with the venv, without the noise of
                      starting a sandbox); target: at most 5 ms more than before the watch
                      was per file (issue 37: 0.8 ms then)
  cold_cli            `shellgate run -- true` from a new process; target < 250
Run: .venv/bin/python bench/sandbox.py [--n 40] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# This script is named like the package it measures: keep its own directory
# off the import path so `import sandbox` finds the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from sandbox import FilesystemPolicy, load_profile, run  # noqa: E402
from sandbox.cgroups import mechanism  # noqa: E402
from sandbox.hostrun import host_run_targets  # noqa: E402
from sandbox.tripwires import Tripwires  # noqa: E402
from values import fields  # noqa: E402


def measure(fn: Callable[[], object], n: int, warmup: int = 3) -> dict[str, float]:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return {
        "median_ms": round(statistics.median(samples), 2),
        "p95_ms": round(samples[min(len(samples) - 1, int(0.95 * len(samples)))], 2),
    }


def venv_project(files: int = 20_000) -> Path:
    """A project with a virtualenv of ``files`` files, shaped like this
    project's own (6,700 files: 117 entries in site-packages, 27 in bin/)
    grown threefold: packages of 125 modules in four subpackages, each with
    its dist-info, a console script in bin/ for every other package, and
    the usual .pth files (one importing a module, as `_virtualenv.pth` and
    editable installs do)."""
    project = Path(tempfile.mkdtemp(prefix="shellgate-bench-venv-"))
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    made = sum(1 for p in venv.rglob("*") if p.is_file())
    package = 0
    while made < files:
        pkg = site / f"pkg{package:04d}"
        for sub in range(4):
            (pkg / f"sub{sub}").mkdir(parents=True)
        for i in range(min(125, files - made)):
            (pkg / (f"sub{i % 4}" if i % 5 else "") / f"m{i}.py").write_text(f"X = {i}\n")
            made += 1
        info = site / f"pkg{package:04d}-1.0.dist-info"
        info.mkdir()
        for name in ("METADATA", "RECORD", "WHEEL", "top_level.txt", "INSTALLER"):
            (info / name).write_text("x\n")
            made += 1
        if package % 2 == 0:
            (venv / "bin" / f"pkg{package:04d}").write_text("#!/bin/sh\n")
            made += 1
        package += 1
    (site / "_virtualenv.pth").write_text("import _virtualenv\n")
    (site / "_virtualenv.py").write_text("X = 1\n")
    (site / "distutils-precedence.pth").write_text("import os; X = os.environ.get('X')\n")
    (site / "editable.pth").write_text(f"{project}/src\n")
    return project


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--only", nargs="*", default=None, help="measure only these entries")
    args = ap.parse_args()
    n = args.n
    ws = Path(tempfile.mkdtemp(prefix="shellgate-bench-"))
    try:
        default = load_profile()
        networked = load_profile("networked")
        for i in range(100):
            (ws / f"protected-{i}").write_text("x")
        denies = default.model_copy(
            update={
                "filesystem": FilesystemPolicy(
                    deny_write=tuple(str(ws / f"protected-{i}") for i in range(100))
                )
            }
        )
        bwrap = shutil.which("bwrap") or "bwrap"
        floor = [
            bwrap,
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-net",
            "--die-with-parent",
            "--new-session",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--",
            "true",
        ]
        repo = Path(tempfile.mkdtemp(prefix="shellgate-bench-repo-"))
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        parent = Path(tempfile.mkdtemp(prefix="shellgate-bench-repos-"))
        for i in range(5):
            subprocess.run(["git", "init", "-q", str(parent / f"repo{i}")], check=True)
        home = Path(tempfile.mkdtemp(prefix="shellgate-bench-home-", dir="/var/tmp"))
        for name in (".bashrc", ".profile", ".gitconfig"):
            (home / name).write_text("# bench\n")
        home_env = {**os.environ, "HOME": str(home)}
        exe = str(Path(sys.executable).with_name("shellgate"))
        cwd = str(ws)
        unlimited = default.model_copy(
            update={
                "limits": default.limits.model_copy(update={"memory": None, "max_processes": None})
            }
        )
        venv = venv_project()
        venv_reports = tuple(
            p for p in host_run_targets([str(venv)], [], str(home)).report if p.endswith("/*.pth")
        )
        cases: dict[str, Callable[[], dict[str, float]]] = {
            "raw_bash": lambda: measure(
                lambda: subprocess.run(["bash", "-c", "true"], check=True), n
            ),
            "bwrap_floor": lambda: measure(lambda: subprocess.run(floor, check=True), n),
            "sandbox_isolated": lambda: measure(lambda: run(["true"], default, cwd=cwd), n),
            "sandbox_no_cgroup": lambda: measure(lambda: run(["true"], unlimited, cwd=cwd), n),
            "sandbox_bash": lambda: measure(
                lambda: run(["bash", "-c", "true"], default, cwd=cwd), n
            ),
            "sandbox_networked": lambda: measure(lambda: run(["true"], networked, cwd=cwd), n),
            "sandbox_100_denies": lambda: measure(lambda: run(["true"], denies, cwd=cwd), n),
            "sandbox_one_repo": lambda: measure(lambda: run(["true"], default, cwd=str(repo)), n),
            "sandbox_five_repos": lambda: measure(
                lambda: run(["true"], default, cwd=str(parent)), n
            ),
            "sandbox_home": lambda: measure(
                lambda: run(["true"], default, cwd=str(home), env=home_env), n
            ),
            "cold_cli": lambda: measure(
                lambda: subprocess.run([exe, "run", "--cwd", cwd, "--", "true"], check=True),
                max(10, n // 4),
            ),
            "sandbox_venv_20k": lambda: measure(lambda: run(["true"], default, cwd=str(venv)), n),
            "venv_watch_20k": lambda: measure(
                lambda: Tripwires.before((str(venv),), (), venv_reports, ()).after(), n * 5
            ),
        }
        report: dict[str, object] = {"runs": n}
        for name, case in cases.items():
            if args.only is None or name in args.only:
                report[name] = case()
        if args.only is not None:
            print(json.dumps(report, indent=2))
            return
        raw = report["raw_bash"]["median_ms"]  # type: ignore[index]
        iso = report["sandbox_isolated"]["median_ms"]  # type: ignore[index]
        cold = report["cold_cli"]["median_ms"]  # type: ignore[index]
        one_repo = report["sandbox_one_repo"]["median_ms"]  # type: ignore[index]
        report["ratio_isolated_to_raw"] = round(iso / raw, 2)
        report["ratio_one_repo_to_raw"] = round(one_repo / raw, 2)
        no_cgroup = report["sandbox_no_cgroup"]["median_ms"]  # type: ignore[index]
        report["cgroup_cost_ms"] = round(iso - no_cgroup, 2)
        found = mechanism()
        report["limits_mechanism"] = {f.name: getattr(found, f.name) for f in fields(found)}
        report["targets"] = {"ratio_max": 8, "one_repo_ratio_max": 10, "cold_cli_max_ms": 250}
        report["meets_targets"] = iso / raw <= 8 and one_repo / raw <= 10 and cold < 250
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(ws, ignore_errors=True)
        for extra in ("repo", "parent", "home", "venv"):
            if extra in locals():
                shutil.rmtree(locals()[extra], ignore_errors=True)


if __name__ == "__main__":
    main()
