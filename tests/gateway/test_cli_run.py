"""`shellgate run` and `shellgate doctor` as a user meets them: exit
statuses, one-line errors, streaming. Real executable, real sandbox."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SHELLGATE = str(Path(sys.executable).with_name("shellgate"))


def sg(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([SHELLGATE, *args], capture_output=True, input=input, timeout=60,
                          check=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [(["run"], "run needs a command"), (["run", "--"], "run needs a command"),
     (["run", "--timeout", "soon", "--", "true"], "invalid float value")],
)
def test_run_usage_errors_exit_two_on_one_line(args: list[str], message: str) -> None:
    proc = sg(*args)
    assert proc.returncode == 2
    assert message in proc.stderr.decode()
    assert proc.stderr.decode().count("\n") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--profile", "no-such"], "unknown profile"),
     (["--allow-domain", "*"], "invalid domain pattern"),
     (["--allow-domain", "*.com"], "too broad")],
)
def test_a_bad_policy_exits_125_with_a_one_line_reason(
    tmp_path: Path, args: list[str], message: str
) -> None:
    proc = sg("run", "--cwd", str(tmp_path), *args, "--", "true")
    assert proc.returncode == 125
    err = proc.stderr.decode()
    assert message in err and err.count("\n") == 1


def test_broken_settings_file_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "settings.json"
    bad.write_text("{not json")
    proc = sg("run", "--cwd", str(tmp_path), "--settings", str(bad), "--", "true")
    assert proc.returncode == 2
    assert "cannot read settings" in proc.stderr.decode()


@pytest.mark.sandbox
@pytest.mark.parametrize("code", [0, 1, 3, 42])
def test_run_exits_with_the_commands_status(tmp_path: Path, code: int) -> None:
    assert sg("run", "--cwd", str(tmp_path), "--", "sh", "-c", f"exit {code}").returncode == code


@pytest.mark.sandbox
def test_run_streams_stdout_and_stderr_and_forwards_stdin(tmp_path: Path) -> None:
    proc = sg("run", "--cwd", str(tmp_path), "--", "sh", "-c", "cat; echo to-err >&2",
              input=b"piped in\n")
    assert proc.stdout == b"piped in\n"
    assert proc.stderr == b"to-err\n"


@pytest.mark.sandbox
def test_a_command_killed_by_a_signal_exits_128_plus_the_signal(tmp_path: Path) -> None:
    assert sg("run", "--cwd", str(tmp_path), "--", "sh", "-c", "kill -TERM $$").returncode \
        == 128 + 15


@pytest.mark.sandbox
def test_a_missing_command_is_the_commands_failure_not_the_sandboxs(tmp_path: Path) -> None:
    proc = sg("run", "--cwd", str(tmp_path), "--", "no-such-command-xyz")
    assert proc.returncode not in (0, 125)
    assert b"no-such-command-xyz" in proc.stderr


@pytest.mark.sandbox
def test_settings_merge_adds_a_writable_path(tmp_path: Path) -> None:
    ws, extra = tmp_path / "ws", tmp_path / "extra"
    ws.mkdir()
    extra.mkdir()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"sandbox": {"filesystem": {"allowWrite": [str(extra)]}}}))
    script = f"echo ok > {extra}/f && echo no > {tmp_path}/g || true"
    proc = sg("run", "--cwd", str(ws), "--settings", str(settings), "--", "sh", "-c", script)
    assert proc.returncode == 0
    assert (extra / "f").read_text() == "ok\n"
    assert not (tmp_path / "g").exists()


@pytest.mark.sandbox
def test_doctor_reports_every_probe_and_exits_zero_when_the_sandbox_works() -> None:
    proc = sg("doctor", "--json")
    report = json.loads(proc.stdout)
    names = {p["name"] for p in report["probes"]}
    assert {"bubblewrap", "user namespaces", "seccomp", "ripgrep"} <= names
    assert report["sandbox_works"] is True and proc.returncode == 0
    assert "sandbox works here" in sg("doctor").stdout.decode()
