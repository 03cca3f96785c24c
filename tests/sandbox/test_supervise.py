"""Process supervision: capture, streaming, timeouts, process limits,
background runs. The supervisor is exercised on real processes; background
runs go through the real sandbox."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from sandbox import Limits, OutputCapture, load_profile, start_background
from sandbox.supervise import supervise


def test_capture_keeps_everything_under_the_limit() -> None:
    cap = OutputCapture(100)
    cap.feed(b"a" * 30)
    cap.feed(b"b" * 30)
    assert not cap.truncated
    assert cap.text() == "a" * 30 + "b" * 30


def test_capture_keeps_head_and_tail_and_says_how_much_was_dropped() -> None:
    cap = OutputCapture(20)
    for i in range(100):
        cap.feed(f"{i:03d}\n".encode())
    text = cap.text()
    assert cap.truncated and cap.total == 400
    assert text.startswith("000\n001\n")
    assert text.endswith("098\n099\n")
    assert "[... 380 bytes of output truncated ...]" in text


def test_capture_decodes_invalid_utf8_with_replacement_characters() -> None:
    cap = OutputCapture(100)
    cap.feed(b"ok \xff\xfe")
    assert cap.text() == "ok \ufffd\ufffd"


def _run(argv: list[str], **kw: object) -> object:
    limits = kw.pop("limits", Limits())
    return supervise(argv, env={"PATH": "/usr/bin:/bin"}, cwd=None, limits=limits, **kw)  # type: ignore[arg-type]


def test_exit_code_stdout_and_stderr_are_reported() -> None:
    r = _run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (r.exit_code, r.stdout, r.stderr, r.timed_out) == (3, b"out\n", b"err\n", False)  # type: ignore[attr-defined]


def test_death_by_signal_is_reported_as_a_signal() -> None:
    r = _run(["sh", "-c", "kill -9 $$"])
    assert r.exit_code is None and r.signal == 9  # type: ignore[attr-defined]


def test_output_is_streamed_in_order_while_the_command_runs() -> None:
    seen: list[tuple[str, bytes]] = []
    _run(["sh", "-c", "echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three"],
         on_output=lambda s, d: seen.append((s, d)))
    assert [(s, d.strip()) for s, d in seen] == [
        ("stdout", b"one"), ("stderr", b"two"), ("stdout", b"three")]


def test_stdin_is_passed_to_the_command() -> None:
    assert _run(["cat"], stdin=b"from stdin").stdout == b"from stdin"  # type: ignore[attr-defined]


def test_the_wall_timeout_kills_the_whole_process_tree() -> None:
    marker = f"shellgate-test-{time.time_ns()}"
    # durations of this test's own (another test's `sleep 60` is no leftover of this one)
    first, second = f"60.{time.time_ns() % 10**6:06d}", f"61.{time.time_ns() % 10**6:06d}"
    start = time.monotonic()
    r = _run(["bash", "-c", f"sleep {first} & sleep {second} & exec -a {marker} sleep 62"],
             timeout=0.5)
    assert r.timed_out and "wall timeout" in (r.killed_reason or "")  # type: ignore[attr-defined]
    assert time.monotonic() - start < 5
    time.sleep(0.2)
    ours = (["sleep", first], ["sleep", second], [marker, "62"])
    leftovers = [p for p in psutil.process_iter(["cmdline"])
                 if p.info["cmdline"] and p.info["cmdline"][:2] in ours]
    assert leftovers == []


def test_too_many_processes_kill_the_tree() -> None:
    r = _run(["sh", "-c", "for i in $(seq 40); do sleep 5 & done; wait"],
             limits=Limits(max_processes=10))
    assert "more than 10 processes" in (r.killed_reason or "")  # type: ignore[attr-defined]
    assert r.duration < 4  # type: ignore[attr-defined]


def test_output_beyond_the_cap_is_truncated_not_buffered() -> None:
    r = _run(["sh", "-c", "head -c 5000000 /dev/zero | tr '\\0' x"],
             limits=Limits(max_output_bytes=1000))
    assert r.truncated and len(r.stdout) < 1200  # type: ignore[attr-defined]
    assert b"4999000 bytes of output truncated" in r.stdout  # type: ignore[attr-defined]


@pytest.mark.sandbox
def test_a_background_run_can_be_read_while_running_and_stopped(tmp_path: Path) -> None:
    bg = start_background(["sh", "-c", "echo started; sleep 30; echo never"],
                          load_profile(), cwd=str(tmp_path))
    deadline = time.monotonic() + 10
    out = ""
    while "started" not in out and time.monotonic() < deadline:
        out += bg.read()[0]
        time.sleep(0.05)
    assert "started" in out and bg.running
    result = bg.stop()
    assert result is not None and not bg.running
    assert b"never" not in result.stdout


@pytest.mark.sandbox
def test_a_background_run_reports_output_as_it_comes(tmp_path: Path) -> None:
    heard: list[tuple[str, bytes, float]] = []
    bg = start_background(["sh", "-c", "echo first; sleep 1; echo second >&2"], load_profile(),
                          cwd=str(tmp_path),
                          on_output=lambda stream, data: heard.append(
                              (stream, data, time.monotonic())))
    result = bg.wait(30)
    assert result is not None and result.exit_code == 0
    assert [(s, d) for s, d, _ in heard] == [("stdout", b"first\n"), ("stderr", b"second\n")]
    assert heard[1][2] - heard[0][2] > 0.5, "the first chunk came before the command ended"


@pytest.mark.sandbox
def test_a_background_run_that_finishes_reports_its_result(tmp_path: Path) -> None:
    bg = start_background(["sh", "-c", "echo done; exit 4"], load_profile(), cwd=str(tmp_path))
    result = bg.wait(30)
    assert result is not None and result.exit_code == 4 and result.stdout == b"done\n"


@pytest.mark.sandbox
def test_a_character_split_between_two_reads_is_decoded_whole(tmp_path: Path) -> None:
    """`é` is two bytes; printed one byte at a time with a pause between,
    the first read must not turn the half character into U+FFFD."""
    bg = start_background(["sh", "-c", "printf '\\303'; sleep 0.5; printf '\\251\\n'"],
                          load_profile(), cwd=str(tmp_path))
    seen = ""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        running = bg.running
        seen += bg.read()[0]
        if not running:
            break
        time.sleep(0.05)
    seen += bg.read()[0]
    assert seen == "é\n"


def test_binary_output_survives_byte_for_byte() -> None:
    """An image a command prints must reach the edge that decodes it intact."""
    png = bytes(range(256)) * 4
    r = _run(["cat"], stdin=png)
    assert r.stdout == png  # type: ignore[attr-defined]
    assert r.stdout_text.startswith("\x00\x01")  # type: ignore[attr-defined]


class _GateRefused(Exception):
    pass


def test_a_start_gate_that_fails_with_stdin_given_reports_its_own_error() -> None:
    # from a review: the stdin feeder was joined before it ever started, and
    # "cannot join thread before it is started" replaced the gate's reason
    def gate(pid: int) -> None:
        raise _GateRefused(f"refused {pid}")

    with pytest.raises(_GateRefused, match="refused"):
        supervise(["cat"], env={"PATH": "/usr/bin:/bin"}, cwd=None,
                  limits=Limits(wall_timeout=10), stdin=b"data", after_spawn=gate)


def _alive(marker: str) -> list[psutil.Process]:
    out = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if marker in (proc.info["cmdline"] or []) and proc.info["status"] != "zombie":
            out.append(proc)
    return out


@pytest.mark.parametrize("when", ["inside the spawn", "before the supervision loop"])
def test_an_interrupt_as_the_process_starts_still_kills_it(when: str) -> None:
    """From a review of the run daemon (its child turns the client's death
    into a SIGINT): an interrupt that landed inside Popen, or between it
    and the loop, left the command running unsupervised, and it finished
    after the post-run guards had looked."""
    import contextlib
    import signal
    from collections.abc import Iterator

    marker = f"{time.monotonic_ns() % 10**9}.5"

    @contextlib.contextmanager
    def spawning() -> Iterator[None]:
        yield
        signal.raise_signal(signal.SIGINT)  # the process exists by now

    def on_start(_pid: int) -> None:
        signal.raise_signal(signal.SIGINT)

    hooks = {"spawning": spawning} if when == "inside the spawn" else {"on_start": on_start}
    with pytest.raises(KeyboardInterrupt):
        supervise(["sleep", marker], env={"PATH": "/usr/bin:/bin"}, cwd=None,
                  limits=Limits(wall_timeout=30), **hooks)  # type: ignore[arg-type]
    assert not _alive(marker)


def test_a_second_interrupt_during_the_kill_does_not_stop_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """From a review: a second Ctrl-C 1 ms after the first stopped the kill
    of a process not yet supervised halfway; with bubblewrap, the close of
    its gate then let the command run with no limits and after the post-run
    guards."""
    import signal

    from sandbox import supervise as module

    marker = f"{time.monotonic_ns() % 10**9}.7"
    real_kill = module.kill_tree

    def interrupted_kill(pid: int, grace: float = 0.2) -> None:
        signal.raise_signal(signal.SIGINT)  # the second interrupt, as the kill starts
        real_kill(pid, grace)

    monkeypatch.setattr(module, "kill_tree", interrupted_kill)

    def on_start(_pid: int) -> None:
        signal.raise_signal(signal.SIGINT)  # the first

    with pytest.raises(KeyboardInterrupt):
        supervise(["sleep", marker], env={"PATH": "/usr/bin:/bin"}, cwd=None,
                  limits=Limits(wall_timeout=30), on_start=on_start)
    assert not _alive(marker)
