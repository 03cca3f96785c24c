"""The guard of ``shellgate hook``: the first code that runs, standard
library only, so that no failure after it can let a dangerous call through.

Claude Code treats a PreToolUse hook that crashes (any exit but 0 and 2),
prints garbage or times out as *no objection*: the call goes ahead. So
every way out of here prints a valid answer and exits 0 — the real one, or,
when anything failed (a broken install, an import error, a bug, bad input,
a hang past the deadline), a fail-closed one: ``deny`` when the call names
a secret or a hard limit the plain text shows, otherwise ``ask``.

The judgement runs in a child process; this one only reads the input,
waits for the child's answer until the deadline, and prints one answer.
What the child does cannot reach Claude Code's stdout, and however it ends
— an exception, a crash in C code (a signal), the kernel's OOM killer, a
hang in C code that never returns to Python's signal handlers, or printing
to stdout — this process is still here to answer. From a review:
``"a|" * 8000`` took the analyzer 700 MB and 2.6 s (50,000 pipes: killed
by the OOM killer, so no answer and the call ran); an alarm handler in the
judging process cannot answer for a kill.

Reproducer of what it stops: ``mv gateway/analyzers.py …`` in a broken
install; the hook exits 1 with a traceback, and Claude Code runs
``cat ~/.ssh/id_rsa`` as if the hook had agreed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import stat
import sys
import time

#: typing costs a hook call 3 ms to import; the names are for mypy alone
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Claude Code's hook JSON is a page; a larger input is not a hook call
MAX_INPUT_BYTES = 16 << 20
#: the answer is given by then, whatever happens
DEFAULT_DEADLINE_S = 20.0
#: the latest deadline SHELLGATE_HOOK_TIMEOUT may set: ``hook install``
#: gives the hook 30 s, and Claude Code runs a call whose hook timed out
#: (from a review: SHELLGATE_HOOK_TIMEOUT=120 let a slow judgement run past
#: Claude Code's timeout, and the call ran)
MAX_DEADLINE_S = 25.0
#: the child's answer is a page too
MAX_ANSWER_BYTES = 4 << 20
#: a reason is shown to Claude and the user; longer is cut (an answer
#: larger than a pipe's buffer could block the write of it)
MAX_REASON_CHARS = 4000
#: how much of a call's text the fallback's patterns read: the fallback
#: must be quick on any input (past it, a secret named only there is
#: asked about, not denied)
MAX_FALLBACK_TEXT = 1 << 20

#: What the plain text of a call must show for the fallback to deny: the
#: secrets and the destruction a person would never approve blind. Each is
#: searched alone and starts with a literal (the regex engine then skips to
#: it), and every one is linear: no unbounded repeat meets another (from a
#: review: ``\bdd\b[^|;&]*\bof=/dev/`` took quadratic time on
#: ``"dd " * 300000``, past the deadline, in the handler meant to answer at
#: it; one alternation of all the names took 7 s on 4 MiB of dots).
_STATIC_SENSITIVE = (
    r"\.ssh(?![\w-])", r"id_(?:rsa|dsa|ecdsa|ed25519)\b", r"\.aws(?![\w-])",
    r"\.gnupg(?![\w-])", r"\.kube(?![\w-])", r"\.docker/config", r"\.netrc\b",
    r"\.git-credentials", r"\.npmrc\b", r"\.pypirc\b", r"\.pgpass\b", r"\.vault-token\b",
    r"\.password-store", r"\.config/(?:gcloud|gh|hub|op)(?![\w-])", r"\.azure(?![\w-])",
    r"\.claude/\.credentials\.json", r"\.claude\.json\b", r"/etc/(?:shadow|gshadow|sudoers)",
    r"/proc/(?:\d+|self|\$\$|\$PPID|\*)/environ")
_HARD_LIMITS = (
    r"rm\s+(?:-[\w-]+\s+)*(?:--\s+)?[\"']?(?:/|~|\$HOME|\$\{HOME\})/?\*?[\"']?(?:\s|$|[;&|)])",
    r"mkfs", r"wipefs", r"of=/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md\d|dm-|mapper/)",
    r":\(\)\s*\{", r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)")
#: the keys read first by the fallback (a long ``content`` placed before
#: ``file_path`` must not use up the text it reads)
_FIRST_KEYS = ("file_path", "notebook_path", "path", "command", "url", "pattern", "glob")

#: the compiled sensitive patterns (the static ones and the sensitive-path
#: list's names), made on first use
_compiled: list[re.Pattern[str]] = []


def run() -> int:
    """Answer the PreToolUse call on stdin; always exit 0."""
    try:
        deadline = float(os.environ.get("SHELLGATE_HOOK_TIMEOUT", DEFAULT_DEADLINE_S))
        if deadline <= 0:
            deadline = DEFAULT_DEADLINE_S
    except ValueError:
        deadline = DEFAULT_DEADLINE_S
    end = time.monotonic() + min(deadline, MAX_DEADLINE_S)
    payload: Any = None
    try:
        raw = _read_input(end)
        if raw is None:
            return _emit(fallback(None, "the hook input is larger than 16 MiB"))
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            return _emit(fallback(None, "the hook input is not JSON"))
        if not isinstance(payload, dict):
            return _emit(fallback(None, "the hook input is not a JSON object"))
        said = _from_daemon(payload, end)
        if said is not _NONE:
            return _emit(said)  # type: ignore[arg-type]
        return _emit(_judged(payload, end))
    except TimeoutError:
        return _emit(fallback(payload, "it took longer than its deadline"))
    except BaseException as exc:  # every failure is an answer here, SystemExit too
        return _emit(fallback(payload, why(exc)))


#: no answer from the daemon: the call is judged here
_NONE = object()


def _from_daemon(payload: dict[str, Any], end: float) -> object:
    """The warm daemon's answer (:mod:`.hook_client`), when it gives a
    well-formed one; ``_NONE`` otherwise — no daemon, or a daemon that is
    stale, busy, hung, failing or talking nonsense: the call is then
    judged in this process, so the daemon never decides what the
    in-process judgement would not."""
    import signal  # noqa: PLC0415

    def late(_signum: int, _frame: object) -> None:
        raise TimeoutError

    # Every wait of the client has its own timeout; this alarm is for a
    # syscall that blocks where none was expected (from a review: the
    # open of a FIFO planted beside the socket never returned, and the
    # hook printed nothing). Past it, the call is judged here.
    budget = max(0.05, end - time.monotonic()) * 0.5 + 0.5
    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        from . import hook_client  # noqa: PLC0415

        message = hook_client.ask(payload, end, os.environ)
    except Exception:  # the client's own failure, or the alarm: judged here
        return _NONE
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    said = message.get("answer", _NONE) if isinstance(message, dict) else _NONE
    return said if said is None or (said is not _NONE and _valid(said)) else _NONE


def _read_input(end: float) -> bytes | None:
    """stdin to its end (``None``: larger than the limit), by the deadline
    (stdin never closed is a hang like any other)."""
    fd = sys.stdin.fileno()
    chunks: list[bytes] = []
    size = 0
    while True:
        if not select.select([fd], [], [], max(0.0, end - time.monotonic()))[0]:
            raise TimeoutError
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_INPUT_BYTES:
            return None
        chunks.append(chunk)


def _judged(payload: dict[str, Any], end: float) -> dict[str, Any] | None:
    """The judgement's answer, from a child process, or the fallback."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child, measured through the CLI
        os.close(read_end)
        _child(payload, write_end, end)
    os.close(write_end)
    chunks: list[bytes] = []
    size, timed_out = 0, False
    try:
        while size <= MAX_ANSWER_BYTES:
            if not select.select([read_end], [], [], max(0.0, end - time.monotonic()))[0]:
                timed_out = True
                break
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            size += len(chunk)
            chunks.append(chunk)
    finally:
        os.close(read_end)
        if timed_out or size > MAX_ANSWER_BYTES:
            _kill(pid)
        _, status = os.waitpid(pid, 0)
    if timed_out:
        return fallback(payload, "it took longer than its deadline")
    try:
        message = json.loads(b"".join(chunks).decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        message = None
    if os.waitstatus_to_exitcode(status) != 0 or not isinstance(message, dict):
        return fallback(payload, f"the judgement ended without an answer ({_ended(status)})")
    if "error" in message:
        return fallback(payload, str(message["error"]))
    said = message.get("answer")
    return said if said is None or _valid(said) else fallback(payload, "a malformed answer")


def _child(payload: dict[str, Any], out: int, end: float) -> None:
    """Judge ``payload`` and send the answer on ``out``; never returns."""
    code = 1
    try:
        # stdout is the parent's alone: anything the judgement prints there
        # would make the answer unparsable, which Claude Code reads as yes
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
        # the parent kills this process at the deadline; should the parent
        # itself be killed first, this process ends on its own soon after
        import signal  # noqa: PLC0415 -- 1 ms a call that does not fork

        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.setitimer(signal.ITIMER_REAL, max(0.1, end - time.monotonic()) + 5.0)
        try:
            from .hook import answer  # noqa: PLC0415 -- the heavy part, after the guard

            message: dict[str, Any] = {"answer": answer(payload)}
        except BaseException as exc:  # each failure is reported
            message = {"error": why(exc)}
        data = json.dumps(message, ensure_ascii=True).encode("ascii")
        while data:
            data = data[os.write(out, data):]
        code = 0
    finally:
        os._exit(code)


def _kill(pid: int) -> None:
    import signal  # noqa: PLC0415

    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _ended(status: int) -> str:
    import signal  # noqa: PLC0415

    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            return f"killed by signal {number}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def _valid(answer: Any) -> bool:
    """Is ``answer`` one of :func:`decision`'s?"""
    inner = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    return (isinstance(inner, dict) and inner.get("hookEventName") == "PreToolUse"
            and inner.get("permissionDecision") in ("allow", "deny", "ask")
            and isinstance(inner.get("permissionDecisionReason"), str))


def why(exc: BaseException) -> str:
    """One line naming ``exc``."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300]


def fallback(payload: Any, why: str) -> dict[str, Any]:
    """The fail-closed answer: deny what the plain text shows is a secret or
    a hard limit, ask about everything else. Written down for the audit log
    (:func:`note_unrecorded`): the judgement that would have logged it did
    not finish."""
    tool_input = payload.get("tool_input") if isinstance(payload, dict) else None
    said = fallback_deny(tool_input, why) or decision(
        "ask", f"shellgate could not judge this call ({why}); a person decides")
    note_unrecorded(payload, said)
    return said


#: the answers the audit log has not yet taken, beside (or in) the log
UNRECORDED_NAME = "unrecorded-hook-answers"
#: at most this much is kept there (a flood of failing calls)
MAX_UNRECORDED_BYTES = 1 << 20


def unrecorded_paths() -> list[str]:
    """Where fallback answers wait for the next judgement to log them:
    beside the log, and in the user's private runtime directory for when
    nothing can be written there (from a review: a log whose directory is
    unwritable lost the fallback answer its failure caused)."""
    out: list[str] = []
    # a broken install: nothing to write beside, no runtime directory
    with contextlib.suppress(Exception):
        from ..pathnames import audit_path  # noqa: PLC0415 - best effort, in a fallback

        location = audit_path(None, os.environ)
        out.append(f"{location}.{UNRECORDED_NAME}" if location.endswith(".jsonl")
                   else os.path.join(location, UNRECORDED_NAME))
    with contextlib.suppress(Exception):
        from sandbox import runtime_dir  # noqa: PLC0415 - best effort, in a fallback

        out.append(os.path.join(runtime_dir(), UNRECORDED_NAME))
    return out


def note_unrecorded(payload: Any, answer: dict[str, Any]) -> None:
    """Append the fallback ``answer`` to the side file, as one JSON line;
    the next hook call that judges puts it into the audit log (every
    answer the hook gives is there, the README says — a deadline, a crash
    or an unwritable log too). Best effort: the answer is given whatever
    happens here."""
    with contextlib.suppress(Exception):
        call = payload if isinstance(payload, dict) else {}
        output = answer.get("hookSpecificOutput", {})
        line = json.dumps({
            "answered_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "tool_use_id": str(call.get("tool_use_id") or "")[:200],
            "tool_name": str(call.get("tool_name") or "")[:200],
            "session_id": str(call.get("session_id") or "")[:200],
            "decision": output.get("permissionDecision"),
            "reason": str(output.get("permissionDecisionReason") or "")[:MAX_REASON_CHARS],
        }, ensure_ascii=True) + "\n"
        for where in unrecorded_paths():
            if _append(where, line):
                return


def _append(where: str, line: str) -> bool:
    """Append ``line`` to the side file ``where``; False when it cannot be
    written."""
    try:
        os.makedirs(os.path.dirname(where), mode=0o700, exist_ok=True)
        fd = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                     | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
    except OSError:
        return False
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode) and os.fstat(fd).st_size < MAX_UNRECORDED_BYTES:
            os.write(fd, line.encode("ascii"))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def fallback_deny(tool_input: Any, why: str) -> dict[str, Any] | None:
    """A denial when the plain text of ``tool_input`` names a secret or
    looks like a hard limit (``None`` otherwise)."""
    text = _flat(tool_input)
    if any(p.search(text) for p in _sensitive()):
        return decision("deny", f"shellgate could not judge this call ({why}); it names a "
                        "sensitive path, so it is refused")
    if any(re.search(p, text) for p in _HARD_LIMITS):
        return decision("deny", f"shellgate could not judge this call ({why}); it looks like "
                        "a hard limit (destroying a disk or the home), so it is refused")
    return None


def _sensitive() -> list[re.Pattern[str]]:
    """The static patterns, and the names of the sensitive-path list
    (``profiles/sensitive-paths.toml``, read with the standard library;
    unreadable, the static patterns alone)."""
    if not _compiled:
        listed: list[str] = []
        with contextlib.suppress(Exception):  # a broken install: the static list
            listed = _listed()
        _compiled.extend(re.compile(p) for p in dict.fromkeys((*_STATIC_SENSITIVE, *listed)))
    return _compiled


def _listed() -> list[str]:
    """A linear pattern for each "deny" entry of the sensitive-path list:
    ``~/`` dropped (the text may say ``$HOME``, a path, or ``cd ~`` first),
    ``*`` a bounded run of name characters."""
    import tomllib  # noqa: PLC0415

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    with open(os.path.join(root, "profiles", "sensitive-paths.toml"), "rb") as handle:
        table = tomllib.load(handle)
    out = []
    for entry in table.get("paths", []):
        where = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(where, str) or entry.get("level", "deny") != "deny":
            continue
        where = where.removeprefix("~/")
        if len(where.replace("*", "")) < 4:
            continue
        parts = [re.escape(p) for p in where.split("*")]
        out.append(r"[^/\s]{0,64}".join(parts) + r"(?![\w-])")
    return out


def decision(kind: str, reason: str) -> dict[str, Any]:
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[: MAX_REASON_CHARS - 1] + "…"
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": kind,
                                   "permissionDecisionReason": reason}}


def _flat(value: Any, depth: int = 0, budget: list[int] | None = None) -> str:
    """Every string of a tool's input, joined (bounded)."""
    budget = [MAX_FALLBACK_TEXT] if budget is None else budget
    if depth > 20 or budget[0] <= 0:
        return ""
    if isinstance(value, str):
        text = value[: budget[0]]
        budget[0] -= len(text) + 1
        return text
    if isinstance(value, dict):
        keys = [*(k for k in _FIRST_KEYS if k in value), *list(value)[:1000]]
        return "\n".join(_flat(value[k], depth + 1, budget) for k in dict.fromkeys(keys))
    if isinstance(value, list):
        return "\n".join(_flat(v, depth + 1, budget) for v in value[:1000])
    return ""


def _emit(answer: dict[str, Any] | None) -> int:
    """Print the answer (``None``: no decision — Claude Code's own rules and
    prompt decide) and exit 0. ASCII JSON written as bytes: from a review,
    a reason naming ``~/.ssh/文`` (or a lone surrogate, which JSON allows)
    could not be encoded for a stdout that is not UTF-8, the write raised
    after the answer was marked given, and nothing was printed — Claude
    Code ran ``cat ~/.ssh/文 ~/.ssh/id_rsa``."""
    if answer:
        data = (json.dumps(answer, ensure_ascii=True) + "\n").encode("ascii")
        try:
            while data:
                data = data[os.write(1, data):]
        except OSError:
            pass  # stdout closed: nobody is there to read an answer
    return 0
