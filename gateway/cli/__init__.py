"""The ``shellgate`` command line: the parser (:mod:`.parser`), and one
module per verb.

Exit status: 0 when the command did its job (for ``check``: any analyzed
command, whatever the verdict), 2 for usage errors (one line on stderr).
``main`` imports only the module of the verb that runs (a cold start of
``shellgate run`` never loads the analyzer, nor ``check`` the sandbox), and
a hook call not even the parser.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import SimpleNamespace

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if argv is None:
        # A process of its own: no collection while the modules load (each
        # import's objects would be traversed again at every collection, a
        # tenth of a cold start); what they made is frozen once the verb
        # starts its work, and again at the end, so neither that work nor the
        # interpreter's exit walks it.
        gc.disable()
        # A standard stream closed by the caller (`2>&-`) is None: print()
        # to it writes to stdout instead, and .write() raises. From a review:
        # `run -- nonexist 2>&-` became "internal error" (1, not 127) on
        # stdout. Its descriptor is /dev/null from here on (in order, so the
        # next file opened never takes a standard descriptor's number: a
        # review saw the run lock open as fd 1), and what it would have
        # received is dropped.
        for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
            if getattr(sys, name) is None:
                null = os.open(os.devnull, os.O_RDWR)
                if null != fd:
                    os.dup2(null, fd)  # inheritable, as the closed one was
                    os.close(null)
                else:
                    os.set_inheritable(fd, True)  # os.open's are not
                setattr(sys, name, open(fd, mode, encoding="utf-8", closefd=False))  # noqa: SIM115
    if words == ["hook"]:
        # a Claude Code hook call: the guard answers before anything heavy
        # is imported, even the parser (see cli/hook_guard.py)
        from .hook_guard import run  # noqa: PLC0415

        if argv is None:
            _collect_from_here()  # the judgement it forks is collected as any process
        return run()
    from ..errors import UsageError  # noqa: PLC0415
    from .fastpath import fast_parse  # noqa: PLC0415

    try:
        if argv is None and words[:1] in (["run"], ["check"]):
            # a warm daemon runs it, when one of this state is there (see
            # cli/run_client.py): nothing heavier than a socket is imported
            from .run_client import run as run_warm  # noqa: PLC0415

            served = run_warm(words, words[0])
            if served is not None:
                _leave(served)
                return served
        args: argparse.Namespace | SimpleNamespace | None = fast_parse(words)
        if args is None:
            from .parser import build_parser  # noqa: PLC0415

            args = build_parser(words).parse_args(argv)
        # __import__, not importlib: importlib's package imports warnings
        name = f"{__name__}.{args.verb_module}"
        __import__(name)
        verb = sys.modules[name]
        if argv is None:
            _collect_from_here()
        result: int = verb.main(args)
        if argv is None and args.verb_module in _LEAVES_AT_ONCE:
            _leave(result)
        return result
    except UsageError as exc:
        print(f"shellgate: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # Reader went away (`shellgate check --jsonl ... | head`): not our error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: one line, never a traceback for the user
        print(f"shellgate: internal error: {type(exc).__name__}: "
              f"{' '.join(str(exc).split())[:300]}", file=sys.stderr)
        return 1
    finally:
        if argv is None:
            _collect_from_here()


def _collect_from_here() -> None:
    """What exists so far (the modules) is never traversed again; what is
    made from now on is collected as in any process."""
    gc.freeze()
    gc.enable()


#: Verbs whose whole output is their stdout and stderr once they return (no
#: file of theirs left for a finalizer to close, no child left running: a
#: run's sandbox is gone and its groups and scratch removed by then): the
#: process leaves as soon as the streams are flushed, without the
#: interpreter's teardown of every module, a sixth of a cold `shellgate
#: check`.
_LEAVES_AT_ONCE = frozenset({"check", "run"})


def _leave(code: int) -> None:
    """Exit with ``code`` now, once the standard streams are flushed and the
    atexit callbacks (weakref finalizers among them) have run, as the
    ordinary exit would. Returns, leaving it to the ordinary exit, when a
    thread the ordinary exit would wait for is running (a daemon thread it
    would not wait for either) or a stream cannot be flushed (the ordinary
    exit reports that as Python does)."""
    threading = sys.modules.get("threading")
    if threading is not None and any(
            thread.is_alive() and not thread.daemon and thread is not threading.main_thread()
            for thread in threading.enumerate()):
        return
    run_exit_callbacks = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_callbacks is None:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    run_exit_callbacks()
    os._exit(code)
