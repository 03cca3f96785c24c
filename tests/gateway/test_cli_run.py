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


PROFILES = ["workspace-write", "networked"]


@pytest.mark.sandbox
@pytest.mark.parametrize("profile", PROFILES)
def test_a_missing_command_exits_127_with_one_shell_like_line(tmp_path: Path, profile: str) -> None:
    proc = sg("run", "--cwd", str(tmp_path), "--profile", profile, "--", "no-such-command-xyz")
    assert proc.returncode == 127
    assert proc.stderr.decode() == "shellgate: no-such-command-xyz: No such file or directory\n"


@pytest.mark.sandbox
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("kind", ["a file without the execute bit", "a directory"])
def test_something_that_cannot_be_executed_exits_126(
    tmp_path: Path, profile: str, kind: str
) -> None:
    target = tmp_path / "thing"
    if kind == "a directory":
        target.mkdir()
    else:
        target.write_text("echo hi\n")
    proc = sg("run", "--cwd", str(tmp_path), "--profile", profile, "--", str(target))
    assert proc.returncode == 126, proc.stderr
    assert proc.stderr.decode().startswith(f"shellgate: {target}: ")


@pytest.mark.sandbox
@pytest.mark.parametrize("profile", PROFILES)
def test_a_command_that_prints_like_bubblewrap_keeps_its_own_status_and_output(
    tmp_path: Path, profile: str
) -> None:
    """The command's output is never read as the sandbox's: only
    bubblewrap's status report says whether the sandbox failed."""
    line = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"
    proc = sg("run", "--cwd", str(tmp_path), "--profile", profile, "--", "sh", "-c",
              f"echo \"{line}\" >&2; exit 1")
    assert proc.returncode == 1
    assert proc.stderr.decode() == line + "\n"


@pytest.mark.sandbox
def test_an_idle_stdin_does_not_hold_the_command_back(tmp_path: Path) -> None:
    """A pipe nobody writes to (an agent's stdin, `sleep | shellgate run`):
    the command starts and ends at once, and shellgate returns."""
    with subprocess.Popen([SHELLGATE, "run", "--cwd", str(tmp_path), "--", "echo", "started"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"started\n"
        assert proc.wait(timeout=20) == 0
        assert proc.stdin is not None
        proc.stdin.close()


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


@pytest.mark.sandbox
def test_a_reader_that_goes_away_does_not_turn_the_run_into_a_sandbox_failure(
    tmp_path: Path,
) -> None:
    """`shellgate run -- make | head`: head leaves, the command has run and
    goes on to its own status; it is not reported as "sandbox unavailable"."""
    script = "echo ran > ran.txt; yes | head -c 20000000; exit 3"
    pipeline = (f"{SHELLGATE} run --cwd {tmp_path} -- sh -c '{script}' | head -c 5 >/dev/null; "
                "echo ${PIPESTATUS[0]}")
    proc = subprocess.run(["bash", "-c", pipeline], capture_output=True, timeout=60,
                          check=False, stdin=subprocess.DEVNULL)
    assert (tmp_path / "ran.txt").exists()
    assert proc.stdout.decode().strip() == "3", proc.stderr
    assert b"sandbox unavailable" not in proc.stderr


@pytest.mark.sandbox
@pytest.mark.parametrize("redirect", ["> /dev/full", ">&-"])
def test_an_unwritable_stdout_loses_output_not_the_commands_status(
    tmp_path: Path, redirect: str
) -> None:
    """Found in a review: `> /dev/full` (ENOSPC) killed the command and
    exited 125; a closed stdout raised a traceback."""
    proc = subprocess.run(
        ["bash", "-c", f"{SHELLGATE} run --cwd {tmp_path} -- sh -c 'echo hi; exit 3' {redirect}"],
        capture_output=True, timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode == 3, proc.stderr
    assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize("pieces", [[b"bwrap: ", b"execvp x", b": Permission denied\n"],
                                    [b"bw", b"rap: Can't mount\n"], [b"bwrap: whole line\n"]])
def test_bubblewraps_line_is_held_however_it_is_split(pieces: list[bytes]) -> None:
    """bubblewrap writes its message in pieces (prefix, message, errno): a
    run that never started must not show it before shellgate's own line."""
    import io

    from gateway.cli.run import _Output

    out, err = io.BytesIO(), io.BytesIO()
    stream = _Output(out, err)
    for piece in pieces:
        stream.stream("stderr", piece)
    assert err.getvalue() == b""
    stream.stream("stdout", b"the command ran after all\n")
    assert err.getvalue() == b"".join(pieces)


def test_a_long_line_that_looks_like_bubblewraps_is_not_held_in_memory() -> None:
    """A command writing megabytes after `bwrap: ` with no newline: past a
    few KiB it is the command's output, streamed as it comes."""
    import io

    from gateway.cli.run import _Output

    out, err = io.BytesIO(), io.BytesIO()
    stream = _Output(out, err)
    stream.stream("stderr", b"bwrap: ")
    for _ in range(64):
        stream.stream("stderr", b"x" * 1024)
    assert len(stream.held) == 0
    assert len(err.getvalue()) == 7 + 64 * 1024


def test_a_second_stderr_line_releases_what_was_held() -> None:
    import io

    from gateway.cli.run import _Output

    out, err = io.BytesIO(), io.BytesIO()
    stream = _Output(out, err)
    stream.stream("stderr", b"bwrap: looks like bubblewrap\n")
    stream.stream("stderr", b"but the command goes on\n")
    assert err.getvalue() == b"bwrap: looks like bubblewrap\nbut the command goes on\n"


@pytest.mark.sandbox
def test_doctor_says_which_memory_limit_a_run_gets_and_why() -> None:
    from sandbox.cgroups import mechanism

    report = json.loads(sg("doctor", "--json").stdout)
    limits = next(p for p in report["probes"] if p["name"] == "limits")
    expected = mechanism()
    assert f"memory: {expected.memory}" in limits["detail"]
    assert f"processes: {expected.processes}" in limits["detail"]
    assert expected.why in limits["detail"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--memory", "lots"], "memory: expected a size such as 512M or 2G"),
        (["--tmp-size", "0"], "tmp_size: must be more than 0 bytes"),
        (["--memory", "150%"], "between 0% and 100%"),
    ],
)
def test_a_bad_limit_flag_is_one_line_and_nothing_runs(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    proc = sg("run", "--cwd", str(tmp_path), *flags, "--", "touch", "ran")
    assert proc.returncode == 125
    assert message in proc.stderr.decode()
    assert not (tmp_path / "ran").exists()


def test_run_help_lists_every_limit_with_its_default() -> None:
    text = " ".join(sg("run", "--help").stdout.decode().split())
    for flag, default in [("--memory", "half of RAM"), ("--tmp-size", "2G"),
                          ("--shm-size", "256M"), ("--run-size", "16M"),
                          ("--max-processes", "1024")]:
        assert flag in text and default in text


#: a planted module that leaves a marker, then hands over to the real one
_PLANTED = (
    "open({marker!r}, 'w').write('ran')\n"
    "import sys, os, importlib\n"
    "del sys.modules[__name__]\n"
    "here = os.path.dirname(os.path.abspath(__file__))\n"
    "sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != here]\n"
    "sys.modules[__name__] = importlib.import_module(__name__)\n"
)


# (`python -m` itself imports warnings, functools, types, collections, keyword,
# operator, reprlib and contextlib before any code of the package runs: no
# package can keep those off the path; the sandbox puts back such a file a
# command plants at a project's top, tests/sandbox/test_escapes_planted.py)
@pytest.mark.parametrize("name", ["tomllib", "typing", "re", "enum", "copyreg", "__future__"])
def test_python_m_gateway_never_imports_a_module_planted_in_its_working_directory(
        tmp_path: Path, name: str) -> None:
    """Attack (from reviews): `python -m` puts the working directory — the
    workspace, where commands write — first on sys.path; modules imported
    there ran on the host: a planted `psutil.py` at the first process count,
    a `typing.py` while the package itself was imported."""
    marker = tmp_path / "host-ran-it"
    (tmp_path / f"{name}.py").write_text(_PLANTED.format(marker=str(marker)))
    (tmp_path / "p.toml").write_text("[limits]\nwall_timeout = 30\n")
    # the control: the planted module does run when the directory is on the path
    subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, '.'); import {name}"],
                   cwd=tmp_path, check=True)
    assert marker.exists()
    marker.unlink()
    for verb in (["run", "--profile", "./p.toml", "--", "true"], ["check", "ls"]):
        subprocess.run([sys.executable, "-m", "gateway", *verb], cwd=tmp_path,
                       capture_output=True, timeout=120, check=False)
        assert not marker.exists(), verb
