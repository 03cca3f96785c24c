"""The execution oracle: what does a command the analyzer allows really do?

The analyzer's claim "this is read-only" is a claim about the real tools;
the oracle checks it by running the command — in a throwaway bubblewrap
sandbox, over a copy of a fixture project and a fake HOME holding canary
secrets, with no network — traced from outside by strace. A *finding* is:

* a file created, changed or deleted in the project or the fake HOME (the
  trees are hashed before and after);
* a program executed that is not one of the command's own (PATH-resolved
  names of its subcommands, and the shell);
* any ``connect``/``sendto``/``sendmsg`` (a name lookup is one);
* an open of a canary, of anything under the fake HOME, or of a path outside
  the project and the system trees that a no-op baseline run does not open;
* a canary string (a file's or the environment's) in the output.

Expected side effects (git refreshing its index, the loader's and the
locale's files) are listed with their reasons in ``oracle_exemptions.toml``,
never in code.
"""

from __future__ import annotations

import fnmatch
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path

from analyzers import WorkspaceFacts, match_sensitive
from sandbox import dotenv_below
from values import field, replace, valueclass

from .trace import Event, events, tree

_EXEMPTIONS = Path(__file__).with_name("oracle_exemptions.toml")
_TRACED = ("execve,execveat,open,openat,openat2,creat,connect,sendto,sendmsg,unlink,unlinkat,"
           "rename,renameat,renameat2,mkdir,mkdirat,rmdir,truncate,link,linkat,symlink,"
           "symlinkat,chmod,fchmodat,chdir,fchdir,clone,clone3,fork,vfork,io_uring_setup")
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
#: where a read is expected and harmless: the system's own trees
_SYSTEM = ("/usr/", "/lib", "/lib64/", "/bin/", "/sbin/", "/etc/", "/proc/self/", "/dev/",
           "/sys/", "/opt/", "/var/lib/", "/root/.pyenv/")
_CANARY = "shellgate-canary-7f3a9c"
_REAL_HOME = os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir)


@valueclass
class Observation:
    """What one command did, and which of it is a finding."""

    command: str
    findings: tuple[str, ...]
    exit_code: int | None
    output: str = ""


@valueclass(frozen=False, slots=False)
class _Exemptions:
    execs: list[str] = field(default_factory=list)
    opens: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    connects: list[str] = field(default_factory=list)


def _load_exemptions() -> _Exemptions:
    data = tomllib.loads(_EXEMPTIONS.read_text("utf-8"))
    out = _Exemptions()
    for entry in data.get("exempt", []):
        getattr(out, entry["kind"]).append(entry["pattern"])
    return out


class Oracle:
    """A fixture project and a fake HOME; :meth:`observe` runs a command over
    fresh copies of both. Needs bubblewrap and strace; root or a user alike."""

    def __init__(self, fixture: Path) -> None:
        self.fixture = fixture
        self.exemptions = _load_exemptions()
        self.bwrap = shutil.which("bwrap")
        self.strace = shutil.which("strace")
        if self.bwrap is None or self.strace is None:
            raise RuntimeError("the oracle needs bubblewrap and strace installed")
        self._baseline: frozenset[str] | None = None
        #: sandboxes started (a batch is one when nothing sends it back to singles)
        self.sandboxes = 0
        self._template = Path(tempfile.mkdtemp(prefix="shellgate-oracle-fixture-")) / "project"
        shutil.copytree(fixture, self._template, symlinks=True)
        git = {"PATH": "/usr/bin:/bin", "HOME": str(self._template.parent), "GIT_AUTHOR_NAME": "o",
               "GIT_AUTHOR_EMAIL": "o@x", "GIT_COMMITTER_NAME": "o", "GIT_COMMITTER_EMAIL": "o@x"}
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
            subprocess.run(["git", "-C", str(self._template), *args], env=git, check=True,
                           capture_output=True)

    def close(self) -> None:
        shutil.rmtree(self._template.parent, ignore_errors=True)

    def workspace(self, project: str) -> WorkspaceFacts:
        """The facts a caller gives the analyzer about the fixture, as if it
        lay at ``project`` (the path the commands are analyzed at): its
        dotenv files, found by the sandbox's walk, as the CLI finds them."""
        found = dotenv_below([str(self._template)], None)
        top = len(str(self._template))
        return WorkspaceFacts(searched=(project,),
                              dotenv_files=tuple(project + f[top:] for f in found.files),
                              unsearched=tuple(project + u[top:] for u in found.unknown),
                              dir_links=tuple(project + link[top:] for link in found.links),
                              dotenv_dirs=tuple(project + d[top:] for d in found.dirs))

    # -- set-up -----------------------------------------------------------------------------

    def _prepare(self, top: Path) -> tuple[Path, Path]:
        project = top / "project"
        shutil.copytree(self._template, project, symlinks=True, copy_function=_copy)
        home = top / "home"
        for rel, text in {
            ".ssh/id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY----- {_CANARY}-ssh\n",
            ".aws/credentials": f"[default]\naws_secret_access_key = {_CANARY}-aws\n",
            "elsewhere/.env": f"API_KEY={_CANARY}-dotenv\n",
            ".gitconfig": "[user]\n\tname = Oracle\n\temail = oracle@example.invalid\n",
        }.items():
            path = home / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return project, home

    def _argv(self, project: Path, home: Path, trace: Path, command: str,
              readable: tuple[Path, ...] = ()) -> list[str]:
        return [
            # --seccomp-bpf: only the traced calls stop the process (four
            # times faster); pidns: a fork's child as strace numbers it
            str(self.strace), "-f", "--seccomp-bpf", "-qq", "-y", "--decode-pids=pidns",
            "-s", "4096", "-o", str(trace), "-e", f"trace={_TRACED}", "-e", "signal=none",
            str(self.bwrap), "--unshare-all", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            # as root the sandbox's uid 0 is the host's: its /proc read-only
            # (kernel.core_pattern and friends; see sandbox/linux/launch.py)
            *(["--remount-ro", "/proc"] if os.geteuid() == 0 else []),
            "--tmpfs", "/tmp",  # noqa: S108
            # the fake HOME at the real home's path too: a command the
            # analyzer wrongly allowed reads no real secret into a finding,
            # and a tool that finds the home through the password database
            # (rg under `env -i` opened /root/.gitconfig: from a deep run)
            # meets the canaries, judged as the fake HOME's
            *(["--bind", str(home), _REAL_HOME] if self._home_bindable(project) else []),
            "--bind", str(project), str(project), "--bind", str(home), str(home),
            *(arg for path in readable for arg in ("--ro-bind", str(path), str(path))),
            "--chdir", str(project), "--", "/bin/bash", "-c", command,
        ]

    @staticmethod
    def _home_bindable(project: Path) -> bool:
        real = _REAL_HOME
        return real not in ("/", "") and not str(project).startswith(real + "/")

    # -- running ----------------------------------------------------------------------------

    def observe(self, command: str, own: tuple[str, ...] = (), *,
                timeout: float = 30) -> Observation:
        """Run ``command``; ``own``: the programs it is expected to run (the
        analyzer's subcommands' names). A command still running after
        ``timeout`` seconds (`tail -f`) is killed and judged on what it did
        until then (``exit_code`` None)."""
        if not _passable(command):
            # no shell can be handed it (a NUL, a lone surrogate): it runs nothing
            return Observation(command, (), None, "not runnable: no argv can hold it")
        baseline = self._baseline_opens()
        with tempfile.TemporaryDirectory(prefix="shellgate-oracle-") as tmp:
            top = Path(tmp)
            project, home = self._prepare(top)
            before = tree(project) | tree(home)
            code, output, seen = self._run(top, project, home, command, (), timeout)
            after = tree(project) | tree(home)
            findings = self._judge(seen, before, after, output, baseline, own,
                                   (str(project), str(home)))
        return Observation(command, tuple(findings), code, output)

    def observe_batch(self, items: Sequence[tuple[str, tuple[str, ...]]], *,
                      timeout: float = 5) -> list[Observation]:
        """Observe several commands in one sandbox, one after another, each
        judged on what its own process tree did (its exec carries a mark;
        children inherit it). What cannot be told apart per command — a file
        changed, a canary in the output, the batch out of time — sends every
        command of the batch to :meth:`observe` alone. Ten times cheaper than
        one sandbox each when, as usual, nothing is found."""
        runnable = [(c, own) for c, own in items if _passable(c)]
        if len(runnable) < 2 or len(runnable) != len(items):
            return [self.observe(c, own, timeout=timeout) for c, own in items]
        baseline = self._baseline_opens()
        with tempfile.TemporaryDirectory(prefix="shellgate-oracle-") as tmp:
            top = Path(tmp)
            project, home = self._prepare(top)
            scripts = top / "items"
            scripts.mkdir()
            for i, (command, _) in enumerate(items):
                (scripts / str(i)).write_bytes(command.encode("utf-8", "surrogateescape"))
            # fresh marks each batch: a command cannot know them in advance
            mark, done = (f"shellgate-{secrets.token_hex(8)}-item-",
                          f"shellgate-{secrets.token_hex(8)}-done")
            driver = "\n".join(
                [f'timeout -s KILL {timeout:g} /bin/bash -c "$(< {scripts}/{i})" {mark}{i} '
                 "</dev/null" for i in range(len(items))] + [f"echo {done}"])
            before = tree(project) | tree(home)
            code, output, seen = self._run(top, project, home, driver, (scripts,),
                                           timeout * len(items) + 10, mark)
            after = tree(project) | tree(home)
        # back to one sandbox each: what cannot be told apart per command, a
        # driver that did not reach its end, or an item that never started
        # (one killed the driver, after printing the end mark it read from
        # the driver's command line: from a review)
        started = {e.owner for e in seen if e.harness}
        if (code is None or before != after or _CANARY in output or done not in output
                or started != set(range(len(items)))):
            return [self.observe(c, own, timeout=timeout) for c, own in items]
        roots = (str(project), str(home))
        return [Observation(c, tuple(self._judge(
            [e for e in seen if e.owner == i and not e.harness], before, before, "", baseline,
            own, roots)), None, "") for i, (c, own) in enumerate(items)]

    def _run(self, top: Path, project: Path, home: Path, command: str,
             readable: tuple[Path, ...], timeout: float,
             mark: str | None = None) -> tuple[int | None, str, list[Event]]:
        self.sandboxes += 1
        trace = top / "trace"
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
               "GIT_PAGER": "cat", "PAGER": "cat", "SHELLGATE_CANARY_KEY": f"{_CANARY}-env"}
        argv = self._argv(project, home, trace, command, readable)
        try:
            proc = subprocess.run(argv, env=env, capture_output=True, timeout=timeout,
                                  check=False, stdin=subprocess.DEVNULL)
            code: int | None = proc.returncode
            raw = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            # strace dies; bubblewrap (--die-with-parent) ends the sandbox
            code = None
            raw = (exc.stdout or b"") + (exc.stderr or b"")
        seen = events(trace.read_text("utf-8", "replace"), str(project), mark)
        return code, raw.decode("utf-8", "replace"), seen

    def _baseline_opens(self) -> frozenset[str]:
        if self._baseline is None:
            with tempfile.TemporaryDirectory(prefix="shellgate-oracle-") as tmp:
                top = Path(tmp)
                project, home = self._prepare(top)
                trace = top / "trace"
                subprocess.run(self._argv(project, home, trace, "true"), capture_output=True,
                               timeout=30, check=False, stdin=subprocess.DEVNULL,
                               env={"PATH": "/usr/bin:/bin", "HOME": str(home)})
                opens = {e.path for e in events(trace.read_text("utf-8", "replace"),
                                                 str(project)) if e.call.startswith("open")}
            self._baseline = frozenset(opens)
        return self._baseline

    # -- judging ----------------------------------------------------------------------------

    def _judge(self, events: list[Event], before: dict[str, str], after: dict[str, str],
               output: str, baseline: frozenset[str], own: tuple[str, ...],
               roots: tuple[str, str]) -> list[str]:
        project, home = roots
        findings: list[str] = []
        ex = self.exemptions
        allowed_exec = {"/bin/bash", "/usr/bin/bash", os.path.realpath("/bin/bash"),
                        *(_resolve(p) for p in own)}
        for e in (_as_fake_home(e, home) for e in events):
            if e.call.startswith("exec") and e.ok:
                real = os.path.realpath(e.path)
                if (e.path not in allowed_exec and real not in allowed_exec
                        and not _matches(real, ex.execs)):
                    findings.append(f"executed {e.path}")
            elif e.call == "io_uring_setup" and e.ok:
                # its reads, opens and connects never pass a traced call
                findings.append("set up io_uring (I/O the oracle cannot see)")
            elif e.call in ("connect", "sendto", "sendmsg"):
                if not _matches(e.args, ex.connects):
                    findings.append(f"{e.call}: {e.args[:120]}")
            elif e.call.startswith("open") or e.call == "creat":
                path = e.path
                if _matches(path, ex.opens):
                    continue
                if path.startswith(home + "/"):
                    findings.append(f"opened {path} in the fake HOME")
                elif e.ok and (hit := match_sensitive(path, home)) is not None:
                    # /etc/shadow is a system file, and a secret (root reads it)
                    findings.append(f"opened {path} ({hit.why})")
                elif "O_PATH" in e.args.rsplit('"', 1)[-1]:  # the flags, not the name
                    # a descriptor that reads nothing (glibc's NSS modules walk
                    # /run this way, one component at a time, for `id USER`);
                    # whatever is then opened below it is judged by its path
                    continue
                elif (e.ok and path != project and not path.startswith(project + "/")
                      and not (path + "/").startswith(_SYSTEM) and path not in baseline):
                    findings.append(f"opened {path}, outside the project")
        changed = sorted(p for p in before.keys() | after.keys()
                         if before.get(p) != after.get(p) and not _matches(p, ex.changes))
        findings += [f"changed {p}" for p in changed]
        if _CANARY in output:
            findings.append("a canary secret appeared in the output")
        return list(dict.fromkeys(findings))


def _as_fake_home(event: Event, home: str) -> Event:
    """An event at the real home's path is one at the fake HOME's (bound
    there: see Oracle._argv)."""
    real = _REAL_HOME
    if event.path == real or event.path.startswith(real + "/"):
        return replace(event, path=home + event.path[len(real):])
    return event


def _passable(command: str) -> bool:
    """Whether ``command`` can be an argument of exec at all."""
    if "\0" in command:
        return False
    try:
        command.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return True


def _copy(src: str, dst: str) -> None:
    """Contents and mode: copy2's other metadata (times, xattrs) cost ten
    times as much and no command here depends on them."""
    shutil.copyfile(src, dst, follow_symlinks=False)
    os.chmod(dst, os.stat(src).st_mode & 0o7777)


def _resolve(name: str) -> str:
    found = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
    return os.path.realpath(found) if found else name


def _matches(text: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(text, p) for p in patterns)


