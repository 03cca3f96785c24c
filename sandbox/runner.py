"""``run``: execute one command under a :class:`SandboxPolicy`.

Backends: ``bwrap`` (Linux: bubblewrap + seccomp), ``seatbelt`` (macOS:
``/usr/bin/sandbox-exec``) and ``none`` (no isolation at all: explicit,
logged loudly, never chosen by default). When the chosen backend cannot
start, :class:`SandboxUnavailable` is raised: there is no silent fallback to
running unsandboxed.

Every backend runs the same steps around the command (:mod:`sandbox.guards`):
the workspace lock, the tripwires and the gitlink guard. Errors are sorted by
when they happen: before the command starts, an ``OSError`` means the
sandbox could not be built (:class:`SandboxUnavailable`); once it has run,
the guards report problems in the result instead of raising, so a failure
there is never mistaken for "the command did not run". A run that shellgate
itself cuts short once the command started (Ctrl-C, a bug) still runs the
guards, and raises :class:`RunInterrupted` / :class:`RunFailed` carrying
the result with their reports.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence

from values import field, replace, valueclass

from .errors import RunFailed, RunInterrupted, SandboxUnavailable
from .guards import GuardOutcome, Guards, empty_dir, runtime_dir
from .linux.launch import PROXY_PORT, Launch, Resources, prepare
from .macos.seatbelt import seatbelt_command
from .plan import FsPlan, build_plan, empty_views
from .policy import SandboxPolicy
from .supervise import ExecResult, InterruptsHeld, OutputCallback, StartError, supervise

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time (a tenth of a cold start)
    from typing import Literal

    from .proxy import ProxyEvent

    Backend = Literal["bwrap", "seatbelt", "none"]
else:
    def __getattr__(name: str) -> object:
        # `from sandbox import Backend` at run time still gets the alias
        if name == "Backend":
            from typing import Literal  # noqa: PLC0415

            return Literal["bwrap", "seatbelt", "none"]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _warn(event: str, **fields: object) -> None:
    """A loud structured warning. structlog is imported on first use: the
    common path (a normal run) never pays for it."""
    import structlog  # noqa: PLC0415

    structlog.get_logger("shellgate.sandbox").warning(event, **fields)


def default_backend() -> Backend:
    return "seatbelt" if sys.platform == "darwin" else "bwrap"


def sandbox_env(policy: SandboxPolicy, environ: dict[str, str]) -> dict[str, str]:
    """The environment the command sees: the allowlist, then the sandbox's
    own settings (private TMPDIR, proxy variables)."""
    env = policy.env.filter(environ)
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    # git inside the sandbox never adopts a bare repository it merely finds in
    # the current directory: a planted one (HEAD, objects/, refs/, config)
    # would bring its own diff.external / fsmonitor.
    env.update(
        {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.bareRepository",
            "GIT_CONFIG_VALUE_0": "explicit",
        }
    )
    if policy.filesystem.private_tmp:
        env["TMPDIR"] = "/tmp"  # noqa: S108 - the private /tmp inside the sandbox
    if policy.network.mode == "allowlist":
        url = f"http://127.0.0.1:{PROXY_PORT}"
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[name] = env[name.lower()] = url
        env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
    return env


@valueclass(frozen=False, slots=False)
class _Prepared:
    """A backend's command line, ready to supervise."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: list[int] = field(default_factory=list)
    gate: Callable[[int], None] | None = None
    launch: Launch | None = None


def _plan(chosen: Backend, policy: SandboxPolicy, workspace: str, cwd: str, home: str,
          res: Resources) -> FsPlan:
    if chosen == "none":
        return build_plan(policy, workspace, cwd=cwd, home=home, private_tmp=None,
                          state_dir=runtime_dir())
    if chosen == "bwrap":
        private_tmp = "/tmp"  # noqa: S108 - a size-capped tmpfs inside the sandbox (linux/bwrap.py)
    else:  # seatbelt: a host directory, removed after the run whatever its modes
        import tempfile  # noqa: PLC0415 - seatbelt's scratch only (tempfile: ~7 ms of a start)

        scratch = tempfile.mkdtemp(prefix="run-", dir=runtime_dir())
        res.dirs.append(scratch)
        private_tmp = os.path.join(scratch, "tmp")
        os.mkdir(private_tmp, 0o700)
    state = runtime_dir()
    return build_plan(policy, workspace, cwd=cwd, home=home, private_tmp=private_tmp,
                      hide=(str(state),),
                      dotenv_cache=state / "dotenv-scan.json",
                      state_dir=state, empty_dirs=empty_views(policy, chosen))


def _prepare(
    chosen: Backend,
    argv: Sequence[str],
    policy: SandboxPolicy,
    plan: FsPlan,
    sb_env: dict[str, str],
    res: Resources,
    on_proxy_event: Callable[[ProxyEvent], None] | None,
) -> _Prepared:
    if chosen == "none":
        _warn("sandbox.disabled", argv=list(argv)[:3], cwd=plan.cwd,
              note="running WITHOUT a sandbox (backend none)")
        return _Prepared(list(argv), sb_env)
    if chosen == "seatbelt":
        env = dict(sb_env)
        assert plan.private_tmp is not None
        env["TMPDIR"] = plan.private_tmp
        proxy_port = None
        if policy.network.mode == "allowlist":
            from .proxy import DomainProxy  # noqa: PLC0415

            res.proxy = DomainProxy(policy.network, None, on_event=on_proxy_event)
            res.proxy.start()
            proxy_port = res.proxy.port
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
                env[name] = env[name.lower()] = f"http://127.0.0.1:{proxy_port}"
        return _Prepared(seatbelt_command(argv, plan, proxy_port=proxy_port), env)
    launch = prepare(argv, policy, plan, res, on_proxy_event=on_proxy_event,
                     empty_dir=empty_dir(), state_dir=str(runtime_dir()))
    return _Prepared(launch.argv, sb_env, launch.pass_fds, launch.gate, launch)


def _not_executed(argv0: str, exc: OSError) -> ExecResult:
    """The ``none`` backend's exec failure, reported as a shell would."""
    strerror = exc.strerror or str(exc)
    return ExecResult(
        exit_code=127 if isinstance(exc, FileNotFoundError) else 126,
        signal=None,
        stdout=b"",
        stderr=f"shellgate: {argv0}: {strerror}\n".encode(),
        timed_out=False,
        truncated=False,
        duration=0.0,
        exec_error=strerror,
    )


def rehearse(argv: Sequence[str], policy: SandboxPolicy, *, cwd: str) -> None:
    """Build everything a bubblewrap run of ``argv`` in ``cwd`` would (the
    plan, the seccomp filter, bubblewrap's arguments, the run's cgroup) and
    release it without starting anything. A warm daemon's spare child does
    this once before it takes a call (gateway/cli/run_daemon.py): the pages
    the run path touches are then its own (a fork's copy-on-write faults
    cost a cold child about a third of its plan), and what the path builds
    lazily is built. Nothing it learns is kept for the call: the call's own
    run plans afresh. Errors are the caller's to ignore."""
    if default_backend() != "bwrap":
        return
    environ = dict(os.environ)
    home = environ.get("HOME") or os.path.expanduser("~")
    res = Resources()
    try:
        plan = _plan("bwrap", policy, cwd, cwd, home, res)
        _prepare("bwrap", argv, policy, plan, sandbox_env(policy, environ), res, None)
    finally:
        res.close()


def run(
    argv: Sequence[str],
    policy: SandboxPolicy,
    *,
    cwd: str,
    workspace: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    on_output: OutputCallback | None = None,
    backend: Backend | None = None,
    stdin: bytes | int | None = None,
    on_proxy_event: Callable[[ProxyEvent], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ExecResult:
    """Run ``argv`` in ``cwd`` under ``policy``. Returns how it ended; raises
    :class:`SandboxUnavailable` when the sandbox itself cannot start.
    ``workspace`` (``cwd`` unless given) is what the policy's workspace
    rights are about: a session whose command did `cd sub` runs the next one
    in ``sub`` with the same writable workspace.
    ``stdin`` is bytes, a descriptor to copy from (the command gets a pipe,
    never the descriptor), or None for /dev/null."""
    if not argv:
        raise SandboxUnavailable("nothing to run")
    if not os.path.isdir(cwd):
        raise SandboxUnavailable(f"working directory {cwd!r} does not exist")
    if workspace is not None and not os.path.isdir(workspace):
        raise SandboxUnavailable(f"workspace {workspace!r} does not exist")
    chosen = backend or default_backend()
    environ = dict(os.environ if env is None else env)
    home = environ.get("HOME") or os.path.expanduser("~")
    res = Resources()
    left: list[str] = []
    result: ExecResult | None = None
    aborted: BaseException | None = None
    try:
        try:
            plan = _plan(chosen, policy, workspace or cwd, cwd, home, res)
            prepared = _prepare(chosen, argv, policy, plan, sandbox_env(policy, environ),
                                res, on_proxy_event)
        except OSError as exc:
            raise SandboxUnavailable(f"cannot prepare the sandbox: {exc}") from None
        guards = Guards.before(plan, home=home, backend=chosen)
        started = time.monotonic()
        try:
            result = supervise(
                prepared.argv,
                env=prepared.env,
                cwd=plan.cwd,
                limits=policy.limits,
                timeout=timeout,
                pass_fds=prepared.pass_fds,
                on_output=on_output,
                stdin=stdin,
                on_start=on_start,
                after_spawn=prepared.gate,
                monitor=prepared.launch.monitor if prepared.launch is not None else None,
                spawning=prepared.launch.spawning if prepared.launch is not None else None,
            )
            if prepared.launch is not None:
                # before the post-run steps: their own renames must not
                # trip the mount watch
                result = prepared.launch.interpret(result)
        except StartError as exc:  # Popen itself, or the start gate: nothing ran
            if chosen == "none" and isinstance(exc.cause, (FileNotFoundError,
                                                           PermissionError)):
                result = _not_executed(argv[0], exc.cause)
            else:
                raise SandboxUnavailable(f"cannot start the sandbox: {exc}") from None
        except BaseException as exc:
            # The command had started (supervise stopped its tree before
            # this): the guards below must still run, and what they find
            # must still reach the user (see _aborted).
            aborted = exc
        finally:
            outcome, interrupted = _after(guards, prepared)
        if interrupted and aborted is None:
            aborted = KeyboardInterrupt()
    finally:
        left = res.close()
    if outcome.tampered:
        _warn("sandbox.tampered", paths=outcome.tampered)
    notes = (*plan.notes, *(prepared.launch.notes if prepared.launch is not None else ()))
    if result is None:
        result = ExecResult(exit_code=None, signal=None, stdout=b"", stderr=b"",
                            timed_out=False, truncated=False,
                            duration=time.monotonic() - started)
    if outcome.tampered or outcome.problems or outcome.reports or notes or left:
        result = replace(
            result,
            tampered=(*result.tampered, *outcome.tampered),
            reports=(*result.reports, *outcome.reports),
            problems=(*result.problems, *notes, *outcome.problems, *left),
        )
    if aborted is not None:
        raised = _aborted(aborted, result)
        if raised is aborted:  # SystemExit and the like: as they came
            raise aborted
        raise raised from aborted
    return result


def _after(guards: Guards, prepared: _Prepared) -> tuple[GuardOutcome, bool]:
    """The post-run guards, whatever ended the run, with Ctrl-C held until
    they are done: they put back what the command planted, and an
    interrupt that stopped them halfway left a planted file in place and
    its report unsaid. Returns what they found and whether an interrupt
    came meanwhile (the caller raises it, with the report)."""
    held = InterruptsHeld().hold()
    try:
        if prepared.launch is not None:
            prepared.launch.watch.stop()
        outcome = guards.after()
    except Exception as exc:  # never a crash that hides the report: a problem line
        outcome = GuardOutcome(problems=[f"the post-run guards failed: {exc}"])
    finally:
        interrupted = held.release(deliver=False)
    return outcome, interrupted


def _aborted(exc: BaseException, result: ExecResult) -> BaseException:
    """The exception a run cut short by shellgate raises: it carries the
    result with every report, so the caller can still say them."""
    if isinstance(exc, KeyboardInterrupt):
        return RunInterrupted(replace(
            result, killed_reason=result.killed_reason or "interrupted; process tree stopped"))
    if isinstance(exc, Exception):
        why = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        return RunFailed(f"shellgate failed during the run ({why}); the process tree was "
                         "stopped", replace(result, killed_reason=result.killed_reason
                                            or "shellgate failed; process tree stopped"))
    return exc
