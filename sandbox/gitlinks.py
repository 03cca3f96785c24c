"""The gitlinks of a repository's index, as git itself reads them.

The index is the sandboxed command's to write, so whatever reads it for the
post-run guard must read it exactly as the user's ``git status`` will. A
parser of our own disagreed with git more than once (a split index keeps
entries in ``.git/sharedindex.*``; git sizes a name by the length in its
flags, not by the first NUL; index v4 prefixes make a naive parser
quadratic), and each disagreement hid a planted gitlink. So git reads it:
``git ls-files --stage -z``, run inside a read-only sandbox (a planted
config can run nothing outside), with the system and global config switched
off and fsmonitor off, its output parsed as it streams.

No git installed means no git to recurse into a gitlink either: the answer
is then "none".
"""

from __future__ import annotations

import os
from collections.abc import Callable

from values import valueclass

from .policy import EnvPolicy, FilesystemPolicy, Limits, SandboxPolicy
from .programs import system_program

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .runner import Backend

GITLINK_MODE = "160000"
#: most gitlink records kept (beyond it the answer is "cannot tell")
_MAX_LINKS = 10_000
_POLICY = SandboxPolicy(
    profile="gitlinks",
    filesystem=FilesystemPolicy(workspace="read", private_tmp=True),
    env=EnvPolicy(
        allow=("PATH",),
        set={
            "LC_ALL": "C",
            # no system or global config: only the repository's own
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_OPTIONAL_LOCKS": "0",
        },
    ),
    limits=Limits(wall_timeout=30, max_output_bytes=65536, max_processes=64),
)


@valueclass
class Enumeration:
    """``links``: the gitlink paths, or None when git could not be asked or
    did not answer in time (the caller fails closed). ``problem``: why, or
    what git said about an index it refuses to read (then ``links`` is
    empty: the user's git refuses it too)."""

    links: frozenset[str] | None
    problem: str = ""


class _StageParser:
    """Streams ``ls-files --stage -z`` records (``MODE SHA STAGE\\tPATH\\0``)
    and keeps the gitlink paths, in bounded memory."""

    def __init__(self) -> None:
        self.pending = b""
        self.links: set[str] = set()
        self.overflow = False

    def feed(self, stream: str, data: bytes) -> None:
        if stream != "stdout":
            return
        records = (self.pending + data).split(b"\0")
        self.pending = records.pop()
        if len(self.pending) > 1 << 16:
            self.pending = self.pending[-(1 << 16):]  # a path this long is no gitlink
        for record in records:
            if record.startswith(b"160000 ") and b"\t" in record:
                if len(self.links) >= _MAX_LINKS:
                    self.overflow = True
                    return
                path = record.split(b"\t", 1)[1]
                self.links.add(path.decode("utf-8", "surrogateescape"))


def enumerate_gitlinks(
    worktree: str, *, top: str, home: str, backend: Backend | None, timeout: float = 30.0
) -> Enumeration:
    """The gitlinks in the index of the repository at ``worktree`` (inside
    the workspace ``top``), read by the installed git. git runs with ``top``
    as its directory, so a submodule's gitdir in ``top/.git/modules`` is
    in sight (a sandbox shows little else under a private /tmp)."""
    git = system_program("git")  # its answer decides what is guarded
    if git is None:
        return Enumeration(frozenset(), "")
    from .errors import SandboxError  # noqa: PLC0415
    from .runner import run  # noqa: PLC0415 - run imports this module's user

    parser = _StageParser()
    argv = [
        git, "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
        "-c", "safe.directory=*", "--git-dir", os.path.join(worktree, ".git"),
        "ls-files", "--stage", "-z",
    ]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}
    feed: Callable[[str, bytes], None] = parser.feed
    try:
        result = run(argv, _POLICY, cwd=top, env=env, timeout=timeout, on_output=feed,
                     backend=backend)
    except SandboxError as exc:
        return Enumeration(None, f"git could not be run in a sandbox to read the index: {exc}")
    if result.timed_out or result.killed_reason:
        return Enumeration(None, f"git did not read the index in {timeout:g}s")
    if parser.overflow:
        return Enumeration(None, f"the index holds more than {_MAX_LINKS} gitlinks")
    if result.exit_code != 0:
        said = " ".join(result.stderr_text.split())[:300] or f"exit status {result.exit_code}"
        return Enumeration(frozenset(), f"git refuses to read the index ({said})")
    return Enumeration(frozenset(parser.links))
