"""The state a call runs in: the session (working directory, workspace,
sandbox policy, what was read) and the call (its ids, its Bash analysis).

Also the two seams later layers fill: who answers an ``ask``
(:class:`Approver`) and where events go (:class:`AuditSink`)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from values import field, valueclass

if TYPE_CHECKING:
    from sandbox import Backend, FsPlan, SandboxPolicy

    from .decisions import PermissionResult


def new_id(length: int) -> str:
    """A random id of ``length`` lowercase hex characters. os.urandom, not
    uuid4: the same randomness, and importing uuid (which imports platform)
    cost every cold `shellgate hook` ~5 ms."""
    return os.urandom((length + 1) // 2).hex()[:length]


class AuditSink(Protocol):
    """Where the pipeline's events go (one vocabulary: ``tool.requested``,
    ``tool.validated``, ``permission.decided``, ``sandbox.started``,
    ``tool.completed``, ``internal_error``); ``gateway.audit.FileAudit``
    writes them as a hash chain. ``emit`` raises when the event cannot be
    kept: the call then fails closed."""

    def emit(self, event: str, **fields: Any) -> None: ...


class MemoryAudit:
    """Keeps events in a list (tests; ``shellgate tool --json`` shows them)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def emit(self, event: str, **fields: Any) -> None:
        with self._lock:
            self.events.append({"ts": time.time(), "event": event, **fields})


@valueclass
class ApprovalRequest:
    """What a person is shown when a call needs one."""

    tool_name: str
    input: Mapping[str, Any]
    summary: str
    permission: PermissionResult


class Questioner(Protocol):
    """Answers AskUserQuestion: the questions as validated (each a mapping
    with ``question``, ``header``, ``options`` — ``label``/``description`` —
    and ``multiSelect``) in, one answer per question text out (an option's
    label, labels joined by ", ", or the person's own words for "other")."""

    def __call__(self, questions: Sequence[Mapping[str, Any]]
                 ) -> Awaitable[Mapping[str, str]]: ...


class Approver(Protocol):
    """Answers an ``ask``: True to allow this call once, ``"always"`` to
    allow it and save the suggested rule, False to refuse."""

    def __call__(self, request: ApprovalRequest) -> Awaitable[bool | str]: ...


@valueclass
class ReadRecord:
    """What a Read saw of a file, for Edit and Write to check against: the
    content's hash and the file's mtime at that moment, and whether the
    whole file was read."""

    sha256: str
    mtime_ns: int
    size: int
    offset: int | None
    limit: int | None
    complete: bool
    #: the inode's change time and number: no `touch -d` sets them back
    ctime_ns: int = 0
    inode: int = 0


#: how long a cached filesystem plan serves the read-only file tools; any
#: call that may have changed the tree (a write, a command) drops it at once
PLAN_TTL_S = 5.0


@valueclass(frozen=False, slots=False)
class SessionContext:
    """One session's state. ``cwd`` persists across Bash calls (never
    outside the allowed directories); ``workspace`` is fixed for the
    session and is what the sandbox lets commands write."""

    workspace: str
    cwd: str
    policy: SandboxPolicy
    home: str
    results_dir: str
    extra_dirs: tuple[str, ...] = ()
    backend: Backend | None = None
    session_id: str = field(default_factory=lambda: new_id(16))
    env: dict[str, str] | None = None
    audit: AuditSink = field(default_factory=MemoryAudit)
    approver: Approver | None = None
    read_state: dict[str, ReadRecord] = field(default_factory=dict)
    #: the settings' merged ``sandbox`` key (``sandbox.SandboxSettings``):
    #: excluded commands, whether anything may run outside the sandbox
    sandbox_settings: Any = None
    #: the settings' Read/Edit deny rules as the file tools ask them: for a
    #: path and an access ("read", "write"), the rule that refuses it and
    #: its source (``None``: no rule does)
    rule_denied: Callable[[str, str], tuple[str, str] | None] | None = None
    #: Read deny rules that are bare names (``*.pem``, ``.env*``): globs a
    #: search leaves out, wherever they are below its root
    search_excludes: tuple[str, ...] = ()
    #: the permission mode the session itself switched to (EnterPlanMode
    #: sets ``plan``, ExitPlanMode puts ``mode_before`` back); ``None``:
    #: the settings' mode holds
    mode: str | None = None
    mode_before: str | None = None
    #: who answers AskUserQuestion; ``None``: nobody (headless, one-shot)
    questioner: Questioner | None = None
    #: the session's task list, as TodoWrite last set it
    todos: list[Any] = field(default_factory=list)
    #: deferred tools ToolSearch selected: callable from then on
    selected_tools: set[str] = field(default_factory=set)
    #: the session's tool pool (set by its pipeline; what ToolSearch searches)
    tools: tuple[Any, ...] = ()
    #: a hook asked the session to stop (``continue: false``): its reason
    stop_reason: str | None = None
    #: the session's background tasks (``gateway.tools.tasks``), made on use
    tasks: Any = None
    #: a foreground command still running after this many milliseconds
    #: moves to the background (``None``: never; a session option)
    auto_background_ms: int | None = None
    #: globs (``sandbox.filesystem.allowSecretWrites``) of the files Edit
    #: and Write may write a secret into
    allow_secret_writes: tuple[str, ...] = ()
    #: the session has closed: nothing it starts from now on may outlive it
    closed: bool = False
    #: run when the session closes, last added first (tasks die with it)
    closers: list[Callable[[], Awaitable[None] | None]] = field(default_factory=list)
    _plan: tuple[float, FsPlan] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def allowed_dirs(self) -> tuple[str, ...]:
        """Where the session works: the workspace and the added directories."""
        return (self.workspace, *self.extra_dirs)

    def fs_plan(self, *, fresh: bool = False) -> FsPlan:
        """The sandbox's filesystem plan for this session: the one answer to
        "may this path be read / written?" that file tools share with
        sandboxed commands. Cached for reads; ``fresh`` for writes (a
        repository made a moment ago has hooks to guard)."""
        with self._lock:
            cached = self._plan
            if not fresh and cached is not None and time.monotonic() - cached[0] < PLAN_TTL_S:
                return cached[1]
        from sandbox import build_plan, empty_views, runtime_dir  # noqa: PLC0415

        state = runtime_dir()
        plan = build_plan(self.policy, self.workspace, cwd=self.cwd, home=self.home,
                          private_tmp="/tmp" if self.backend in (None, "bwrap") else None,  # noqa: S108
                          hide=(str(state),), dotenv_cache=state / "dotenv-scan.json",
                          state_dir=state, empty_dirs=empty_views(self.policy, self.backend))
        with self._lock:
            self._plan = (time.monotonic(), plan)
        return plan

    def command_env(self) -> dict[str, str]:
        """The environment sandboxed commands start from: the session's
        (the gateway's own unless given), with ``HOME`` the session's home —
        the home whose secrets the sandbox hides must be the one the file
        tools and the analyzer judge by."""
        env = dict(os.environ if self.env is None else self.env)
        env["HOME"] = self.home
        # the audit log's HMAC key: a command that read it could re-chain
        # a rewritten log so that it verifies
        env.pop("SHELLGATE_AUDIT_KEY", None)
        return env

    def allow_write_roots(self) -> list[str]:
        """The sandbox's other writable roots (``sandbox.filesystem.allowWrite``),
        ``~`` and ``~/`` from the session's home, relative ones from the
        workspace, each where it really is."""
        roots = []
        for entry in self.policy.filesystem.allow_write:
            expanded = self.home + entry[1:] if entry == "~" or entry.startswith("~/") else entry
            roots.append(os.path.realpath(os.path.join(self.workspace, expanded)))
        return roots

    def forget_plan(self) -> None:
        """Something may have changed the tree: the next file tool re-plans."""
        with self._lock:
            self._plan = None

    def record_read(self, path: str, record: ReadRecord) -> None:
        with self._lock:
            self.read_state[path] = record

    def last_read(self, path: str) -> ReadRecord | None:
        with self._lock:
            return self.read_state.get(path)


@valueclass(frozen=False, slots=False)
class ToolContext:
    """One call's context: the session, the ids every event carries, and
    facts gathered before the permission stage (Bash's analysis)."""

    session: SessionContext
    tool_use_id: str
    call_id: str = field(default_factory=lambda: new_id(16))
    analysis: Any = None
    #: what permission rules see of the call (``tools.base.Subject``),
    #: computed once in the permission stage
    subject: Any = None
    #: what the tool wants the result to say about the session (one line each)
    notes: list[str] = field(default_factory=list)
    #: the pipeline stage the call is in (an interrupt stops a call that
    #: has not begun executing, whatever its tool's interrupt behaviour)
    stage: str = ""
    #: the executor runs it beside others (its context change is ignored)
    concurrent: bool = False
    #: how the call ended, set by the pipeline: ok, error, invalid, denied,
    #: cancelled, internal, unknown-tool
    outcome: str = ""
    #: a command's exit code and whether the result was cut (for the audit log)
    exit_code: int | None = None
    truncated: bool = False
