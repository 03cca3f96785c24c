"""What a cold ``shellgate check`` loads: only what judging a command needs.

Each module named here once cost every check milliseconds (bench/cold.py):
the regex compiler's work, shutil (with bz2 and lzma) through argparse's
terminal width, the sandbox's policy models through a repository's
configuration, pathlib through the repository walk.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import re._compiler as compiler
compiled = []
original = compiler.compile
def counting(p, flags=0):
    frame = sys._getframe(1)
    while frame.f_code.co_filename.startswith(compiler.__file__.rsplit("/", 1)[0]):
        frame = frame.f_back  # past re's own frames: who asked for it
    if frame.f_code.co_filename.startswith(sys.argv[2]):
        compiled.append(f"{frame.f_code.co_filename}:{frame.f_lineno}")
    return original(p, flags)
compiler.compile = counting
from gateway.cli import main
code = main(["check", "--json", sys.argv[1]])
print(json.dumps({"code": code, "modules": sorted(sys.modules),
                  "compiled": [repr(p) for p in compiled]}), file=sys.stderr)
"""

NEVER_LOADED = ["pydantic", "shutil", "bz2", "lzma", "asyncio", "psutil", "sandbox.policy",
                "sandbox.launch", "dataclasses", "inspect", "pathlib", "threading", "glob",
                "hashlib", "uuid", "tempfile", "argparse", "locale", "sandbox.walk",
                "sandbox.repos"]


@pytest.fixture(scope="module")
def cold_check(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    repo = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    done = subprocess.run([sys.executable, "-c", PROBE, "git log --oneline -5", str(ROOT)],
                          cwd=repo,
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["decision"] == "allow", done.stdout
    report: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return report


@pytest.mark.parametrize("module", NEVER_LOADED)
def test_a_cold_check_in_a_repository_never_loads(cold_check: dict[str, object],
                                                   module: str) -> None:
    assert module not in cold_check["modules"]  # type: ignore[operator]


def test_a_cold_check_compiles_no_regex_of_its_own(cold_check: dict[str, object]) -> None:
    # The packages' patterns come from regexes/table.py (what re still
    # compiles is the standard library's own) — under the Python release the
    # table was built for; under another, re compiles them all.
    from regexes import engine_key, table

    if engine_key() == table.ENGINE:
        assert cold_check["compiled"] == [], cold_check["compiled"]
    else:
        assert len(cold_check["compiled"]) > 20  # type: ignore[arg-type]
