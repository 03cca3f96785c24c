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
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from analyzers import WorkspaceFacts
from sandbox import dotenv_below

_EXEMPTIONS = Path(__file__).with_name("oracle_exemptions.toml")
_TRACED = ("execve,execveat,open,openat,openat2,creat,connect,sendto,sendmsg,unlink,unlinkat,"
           "rename,renameat,renameat2,mkdir,mkdirat,rmdir,truncate,link,linkat,symlink,"
           "symlinkat,chmod,fchmodat,chdir,fchdir,clone,clone3,fork,vfork")
_LINE = re.compile(r"^(?P<pid>\d+)\s+(?P<call>\w+)\((?P<args>.*)\)\s+=\s+(?P<ret>-?\d+|\?)")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
#: where a read is expected and harmless: the system's own trees
_SYSTEM = ("/usr/", "/lib", "/lib64/", "/bin/", "/sbin/", "/etc/", "/proc/self/", "/dev/",
           "/sys/", "/opt/", "/var/lib/", "/root/.pyenv/")
_CANARY = "shellgate-canary-7f3a9c"


@dataclass(frozen=True, slots=True)
class Observation:
    """What one command did, and which of it is a finding."""

    command: str
    findings: tuple[str, ...]
    exit_code: int | None
    output: str = ""


@dataclass
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
        shutil.copytree(self._template, project, symlinks=True)
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

    def _argv(self, project: Path, home: Path, trace: Path, command: str) -> list[str]:
        return [
            str(self.strace), "-f", "-qq", "-y", "-s", "4096", "-o", str(trace), "-e",
            f"trace={_TRACED}", "-e", "signal=none",
            str(self.bwrap), "--unshare-all", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            # as root the sandbox's uid 0 is the host's: its /proc read-only
            # (kernel.core_pattern and friends; see sandbox/linux/launch.py)
            *(["--remount-ro", "/proc"] if os.geteuid() == 0 else []),
            "--tmpfs", "/tmp",  # noqa: S108
            "--bind", str(project), str(project), "--bind", str(home), str(home),
            "--chdir", str(project), "--", "/bin/bash", "-c", command,
        ]

    # -- running ----------------------------------------------------------------------------

    def observe(self, command: str, own: tuple[str, ...] = (), *,
                timeout: float = 30) -> Observation:
        """Run ``command``; ``own``: the programs it is expected to run (the
        analyzer's subcommands' names). A command still running after
        ``timeout`` seconds (`tail -f`) is killed and judged on what it did
        until then (``exit_code`` None)."""
        baseline = self._baseline_opens()
        with tempfile.TemporaryDirectory(prefix="shellgate-oracle-") as tmp:
            top = Path(tmp)
            project, home = self._prepare(top)
            before = _tree(project) | _tree(home)
            trace = top / "trace"
            env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
                   "GIT_PAGER": "cat", "PAGER": "cat", "SHELLGATE_CANARY_KEY": f"{_CANARY}-env"}
            try:
                proc = subprocess.run(self._argv(project, home, trace, command), env=env,
                                      capture_output=True, timeout=timeout, check=False,
                                      stdin=subprocess.DEVNULL)
                code: int | None = proc.returncode
                raw = proc.stdout + proc.stderr
            except subprocess.TimeoutExpired as exc:
                # strace dies; bubblewrap (--die-with-parent) ends the sandbox
                code = None
                raw = (exc.stdout or b"") + (exc.stderr or b"")
            output = raw.decode("utf-8", "replace")
            events = _events(trace.read_text("utf-8", "replace"), str(project))
            after = _tree(project) | _tree(home)
            findings = self._judge(events, before, after, output, baseline, own,
                                   (str(project), str(home)))
        return Observation(command, tuple(findings), code, output)

    def _baseline_opens(self) -> frozenset[str]:
        if self._baseline is None:
            with tempfile.TemporaryDirectory(prefix="shellgate-oracle-") as tmp:
                top = Path(tmp)
                project, home = self._prepare(top)
                trace = top / "trace"
                subprocess.run(self._argv(project, home, trace, "true"), capture_output=True,
                               timeout=30, check=False, stdin=subprocess.DEVNULL,
                               env={"PATH": "/usr/bin:/bin", "HOME": str(home)})
                opens = {e.path for e in _events(trace.read_text("utf-8", "replace"),
                                                 str(project)) if e.call.startswith("open")}
            self._baseline = frozenset(opens)
        return self._baseline

    # -- judging ----------------------------------------------------------------------------

    def _judge(self, events: list[_Event], before: dict[str, str], after: dict[str, str],
               output: str, baseline: frozenset[str], own: tuple[str, ...],
               roots: tuple[str, str]) -> list[str]:
        project, home = roots
        findings: list[str] = []
        ex = self.exemptions
        allowed_exec = {"/bin/bash", "/usr/bin/bash", os.path.realpath("/bin/bash"),
                        *(_resolve(p) for p in own)}
        for e in events:
            if e.call.startswith("exec") and e.ok:
                real = os.path.realpath(e.path)
                if (e.path not in allowed_exec and real not in allowed_exec
                        and not _matches(real, ex.execs)):
                    findings.append(f"executed {e.path}")
            elif e.call in ("connect", "sendto", "sendmsg"):
                if not _matches(e.args, ex.connects):
                    findings.append(f"{e.call}: {e.args[:120]}")
            elif e.call.startswith("open") or e.call == "creat":
                path = e.path
                if _matches(path, ex.opens):
                    continue
                if path.startswith(home + "/"):
                    findings.append(f"opened {path} in the fake HOME")
                elif "O_PATH" in e.args:
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


@dataclass(frozen=True, slots=True)
class _Event:
    call: str
    args: str
    #: the path the call names, made absolute (its directory descriptor's
    #: path, which strace -y prints, or the process's working directory)
    path: str
    ok: bool


_FD_PATH = re.compile(r"^(\d+)<([^>]*)>")
_DIRFD_CALLS = frozenset({"openat", "openat2", "unlinkat", "mkdirat", "renameat", "renameat2",
                          "linkat", "fchmodat", "execveat"})


def _events(text: str, cwd: str) -> list[_Event]:
    """The traced calls made after the command's shell started (bubblewrap's
    own set-up comes before it), with every path made absolute: the working
    directory is followed per process (chdir, fchdir, inherited on fork)."""
    out: list[_Event] = []
    cwds: dict[str, str] = {}
    started = False
    for line in text.splitlines():
        m = _LINE.match(line)
        if m is None:
            continue
        pid, call, args, ret = m.group("pid"), m.group("call"), m.group("args"), m.group("ret")
        strings = _STRING.findall(args)
        raw = strings[0] if strings else ""
        if call == "execve" and raw in ("/bin/bash", "/usr/bin/bash") and not started:
            started = True
            cwds[pid] = cwd
            continue
        if not started:
            continue
        here = cwds.setdefault(pid, cwd)
        ok = ret not in ("-1", "?")
        if call in ("clone", "clone3", "fork", "vfork") and ok:
            cwds[ret.split("<")[0]] = here
            continue
        if call == "chdir":
            if ok:
                cwds[pid] = os.path.normpath(os.path.join(here, raw))
            continue
        if call == "fchdir":
            fd = _FD_PATH.match(args)
            if ok and fd:
                cwds[pid] = fd.group(2)
            continue
        base = here
        if call in _DIRFD_CALLS and not args.startswith("AT_FDCWD"):
            fd = _FD_PATH.match(args)
            base = fd.group(2) if fd else "?"
        path = os.path.normpath(os.path.join(base, raw)) if raw else ""
        out.append(_Event(call, args, path, ok))
    return out


def _tree(root: Path) -> dict[str, str]:
    """path -> a digest of what is there (type, mode, content or target)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if os.path.islink(path):
                out[path] = "link:" + os.readlink(path)
            elif os.path.isdir(path):
                out[path] = f"dir:{st.st_mode:o}"
            else:
                with open(path, "rb") as handle:
                    out[path] = f"file:{st.st_mode:o}:" + hashlib.sha256(handle.read()).hexdigest()
    return out


def _resolve(name: str) -> str:
    found = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
    return os.path.realpath(found) if found else name


def _matches(text: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(text, p) for p in patterns)


