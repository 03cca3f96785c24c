"""A repository's git reads are judged by what the installed git does.

From a review of the analyzer: `git status`, `git diff`, `git log` and
`git show` ran programs a repository's `.git` named where shellgate's own
reading of the configuration saw none (a byte-order mark, a config past
1 MiB, an include deeper than 8, a submodule's config, a gitlink without
.gitmodules, the hook a read runs by itself, a merge driver reached by
`--remerge-diff`, a partial clone's transport). Under `shellgate hook` an
allow runs the command on the host. Each case runs the read with the real
git first (the control: the program ran) and then asks the gateway.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from analyzers import Verdict
from gateway.workspace import analyze_in_workspace

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "a",
       "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b",
       "GIT_PAGER": "cat", "PAGER": "cat"}


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                          check=check, timeout=30)


def committed(path: Path) -> Path:
    git(path.parent, "init", "-q", path.name)
    (path / "a.txt").write_text("one\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-qm", "one")
    return path


def run(marker: Path) -> str:
    return f"touch {marker}; :"


def bom(repo: Path, marker: Path) -> None:
    """A byte-order mark before the first section: git skips it."""
    config = repo / ".git" / "config"
    text = config.read_text()
    config.write_bytes(b"\xef\xbb\xbf" + f"[core]\n\tfsmonitor = {run(marker)}\n{text}".encode())


def large(repo: Path, marker: Path) -> None:
    """The entry past the first MiB: git reads a config of any size."""
    with (repo / ".git" / "config").open("a") as f:
        f.write(("# padding\n" * 120_000) + f"[core]\n\tfsmonitor = {run(marker)}\n")


def deep_include(repo: Path, marker: Path) -> None:
    """Nine includes deep: git follows ten."""
    for i in range(9):
        (repo / ".git" / f"inc{i}").write_text(f"[include]\n\tpath = inc{i + 1}\n")
    (repo / ".git" / "inc9").write_text(f"[core]\n\tfsmonitor = {run(marker)}\n")
    git(repo, "config", "include.path", "inc0")


def submodule(repo: Path, marker: Path) -> None:
    """`git status` runs git in each populated submodule, with its config."""
    source = committed(repo.parent / "source")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "inner")
    git(repo, "commit", "-qm", "sub")
    git(repo / "inner", "config", "core.fsmonitor", run(marker))
    (repo / "inner" / "a.txt").write_text("changed\n")


def gitlink(repo: Path, marker: Path) -> None:
    """A gitlink the index holds without any .gitmodules entry."""
    inner = committed(repo / "inner")
    git(repo, "add", "inner")
    git(inner, "config", "core.fsmonitor", run(marker))
    (inner / "a.txt").write_text("changed\n")


def read_hook(repo: Path, marker: Path) -> None:
    """`git status` refreshes and writes the index: post-index-change."""
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    (repo / "a.txt").write_text("two\n")
    os.utime(repo / "a.txt", (1, 1))


def merge_driver(repo: Path, marker: Path) -> None:
    """`git log --remerge-diff` re-merges each merge with the drivers of
    .gitattributes and the configuration."""
    git(repo, "checkout", "-qb", "side")
    (repo / "a.txt").write_text("side\n")
    git(repo, "commit", "-qam", "side")
    git(repo, "checkout", "-q", "-")
    (repo / "a.txt").write_text("main\n")
    git(repo, "commit", "-qam", "main")
    git(repo, "merge", "-q", "side", check=False)
    (repo / "a.txt").write_text("merged\n")
    git(repo, "commit", "-qam", "merge")
    (repo / ".git" / "info" / "attributes").write_text("* merge=evil\n")
    git(repo, "config", "merge.evil.driver", f"touch {marker}; cp %B %A")


CASES: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "a byte-order mark": (bom, "git status"),
    "a config past 1 MiB": (large, "git status"),
    "an include nine deep": (deep_include, "git status"),
    "a submodule's config": (submodule, "git status"),
    "a gitlink without .gitmodules": (gitlink, "git status"),
    "the post-index-change hook": (read_hook, "git status"),
    "a merge driver": (merge_driver, "git log --remerge-diff -1"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_git_read_that_runs_a_program_of_the_repository_is_not_allowed(
        tmp_path: Path, case: str) -> None:
    make, command = CASES[case]
    repo = committed(tmp_path / "repo")
    marker = tmp_path / "RAN"
    make(repo, marker)
    git(repo, *command.split()[1:], check=False)
    assert marker.exists(), f"control: git did not run the program ({case})"
    marker.unlink()
    result = analyze_in_workspace(command, str(repo))
    assert result.verdict is not Verdict.ALLOW, result.reason
    assert not marker.exists(), "judging the command ran the program"


def test_a_partial_clone_asks_even_for_rev_parse_and_show(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    source = committed(tmp_path / "source")
    marker = tmp_path / "RAN"
    git(source, "config", "uploadpack.allowFilter", "true")
    git(tmp_path, "clone", "-q", "--no-local", "--filter=blob:none", f"file://{source}",
        str(repo))
    git(repo, "config", "remote.origin.uploadpack",
        f"sh -c 'touch {marker}; exec git-upload-pack \"$@\"' --")
    (source / "a.txt").write_text("two\n")
    git(source, "commit", "-qam", "two")
    git(repo, "fetch", "-q", "--filter=blob:none", "origin")
    marker.unlink()
    git(repo, "show", "origin/HEAD:a.txt", check=False)
    assert marker.exists(), "control: the lazy fetch did not run the transport"
    marker.unlink()
    for command in ("git show origin/HEAD:a.txt", "git rev-parse origin/HEAD:a.txt",
                    "git status"):
        assert analyze_in_workspace(command, str(repo)).verdict is not Verdict.ALLOW, command


def test_a_work_tree_elsewhere_is_a_read_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text("s3cret\n")
    repo = committed(tmp_path / "repo")
    git(repo, "config", "core.worktree", str(outside))
    shown = git(repo, "diff", check=False)
    assert "s3cret" in shown.stdout, "control: git read the work tree outside"
    result = analyze_in_workspace("git diff", str(repo))
    assert result.verdict is not Verdict.ALLOW, result.reason


SECRET = "another-repositorys-s3cret"


def _other(tmp_path: Path) -> Path:
    """A repository elsewhere on the machine whose history holds a secret."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "s.txt").write_text(f"{SECRET}\n")
    git(other, "add", "s.txt")
    git(other, "commit", "-qm", "s")
    return other


def gitdir_file(project: Path, other: Path) -> None:
    """The project's `.git` is a file naming the other's git directory."""
    (project / ".git").write_text(f"gitdir: {other / '.git'}\n")


def commondir(project: Path, other: Path) -> None:
    """The project's git directory names the other's as its common one."""
    git(project, "init", "-q")
    (project / ".git" / "commondir").write_text(f"{other / '.git'}\n")


def alternates(project: Path, other: Path) -> None:
    """The other's object store as an alternate, and its commit as HEAD."""
    git(project, "init", "-q")
    (project / ".git" / "objects" / "info" / "alternates").write_text(
        f"{other / '.git' / 'objects'}\n")
    head = git(other, "rev-parse", "HEAD").stdout.strip()
    branch = git(project, "symbolic-ref", "HEAD").stdout.strip()
    (project / ".git" / Path(branch)).parent.mkdir(parents=True, exist_ok=True)
    (project / ".git" / branch).write_text(head + "\n")


def linked_packs(project: Path, other: Path) -> None:
    """The pack directory a link to the other's, its commit as HEAD."""
    git(other, "gc", "-q")
    alternates(project, other)
    (project / ".git" / "objects" / "info" / "alternates").unlink()
    pack = project / ".git" / "objects" / "pack"
    pack.rmdir()
    pack.symlink_to(other / ".git" / "objects" / "pack")


def quoted_alternate(project: Path, other: Path) -> None:
    """The alternate in C quotes, its first slash an octal escape: git
    unquotes it."""
    alternates(project, other)
    path = str(other / ".git" / "objects")
    (project / ".git" / "objects" / "info" / "alternates").write_text(
        '"\\057' + path[1:] + '"\n')


def long_alternates(project: Path, other: Path) -> None:
    """A 70 KB comment before the alternate."""
    alternates(project, other)
    info = project / ".git" / "objects" / "info" / "alternates"
    info.write_text("#" + "x" * 70_000 + "\n" + info.read_text())


def many_alternates(project: Path, other: Path) -> None:
    """Twenty stores, the one naming the other repository's last read."""
    alternates(project, other)
    stores = []
    for n in range(20):
        store = project / "alt" / f"s{n}"
        (store / "info").mkdir(parents=True)
        stores.append(os.path.relpath(store, project / ".git" / "objects"))
    (project / "alt" / "s1" / "info" / "alternates").write_text(
        f"{other / '.git' / 'objects'}\n")
    (project / ".git" / "objects" / "info" / "alternates").write_text(
        "".join(f"{s}\n" for s in stores))


def linked_loose_object(project: Path, other: Path) -> None:
    """Each of the other's loose objects linked in, under its own name."""
    alternates(project, other)
    (project / ".git" / "objects" / "info" / "alternates").unlink()
    source = other / ".git" / "objects"
    for directory in source.iterdir():
        if len(directory.name) == 2:
            mine = project / ".git" / "objects" / directory.name
            mine.mkdir(exist_ok=True)
            for item in directory.iterdir():
                (mine / item.name).symlink_to(item)


HISTORY_ELSEWHERE: dict[str, Callable[[Path, Path], None]] = {
    "a .git file naming another git directory": gitdir_file,
    "a commondir naming another repository": commondir,
    "an alternate object store": alternates,
    "a pack directory linked out": linked_packs,
    "an alternate in C quotes": quoted_alternate,
    "an alternate past a long comment": long_alternates,
    "an alternate of the twentieth store": many_alternates,
    "loose objects linked out": linked_loose_object,
}


@pytest.mark.parametrize("case", list(HISTORY_ELSEWHERE))
@pytest.mark.parametrize("command", ["git log -p", "git show HEAD:s.txt"])
def test_history_read_from_another_repository_is_a_read_outside(
        tmp_path: Path, case: str, command: str) -> None:
    """From a review: a project's `.git` file naming `~/other/.git`, or a
    `.git/commondir` naming another repository, and `git log -p` printed
    that repository's files — allowed, so run on the host unasked under
    `shellgate hook`. The same through an alternate object store or a
    pack directory linked in. The control runs the read with git."""
    other = _other(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    HISTORY_ELSEWHERE[case](project, other)
    shown = subprocess.run(command, shell=True, cwd=project, env=ENV, capture_output=True,
                           text=True, check=False, timeout=30)
    assert SECRET in shown.stdout, f"control: git printed no secret: {shown.stderr}"
    result = analyze_in_workspace(command, str(project))
    assert result.verdict is not Verdict.ALLOW, result.reason
    assert "outside the work tree" in result.reason


def test_a_linked_worktrees_reads_of_its_own_repository_stay_allowed(tmp_path: Path) -> None:
    """`git worktree add ../feature`: the worktree's git directory and its
    common one lie in the main checkout, and name the worktree back."""
    main = committed(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "feature"))
    for command in ("git log -p", "git show HEAD:a.txt", "git status"):
        result = analyze_in_workspace(command, str(tmp_path / "feature"))
        assert result.verdict is Verdict.ALLOW, (command, result.reason)


def test_a_superprojects_reads_are_allowed_and_a_submodule_work_tree_elsewhere_is_not(
        tmp_path: Path) -> None:
    """Every submodule's git directory names its work tree back
    (`core.worktree = ../../../lib`): counted as a program, it made every
    git read in a superproject ask. What matters is where git puts the
    work tree: re-pointed outside the superproject, `git diff
    --submodule=diff` printed the files there (the control)."""
    lib = committed(tmp_path / "lib")
    (lib / "s.txt").write_text("public\n")
    git(lib, "add", "s.txt")
    git(lib, "commit", "-qm", "s")
    sup = committed(tmp_path / "super")
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(sup, "commit", "-qm", "sub")
    for where, command in [(sup, "git status"), (sup, "git log -p"), (sup, "git diff"),
                           (sup / "lib", "git log -p"), (sup / "lib", "git status")]:
        result = analyze_in_workspace(command, str(where))
        assert result.verdict is Verdict.ALLOW, (where, command, result.reason)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.txt").write_text("TOPSECRET\n")
    git(sup / ".git" / "modules" / "lib", "config", "core.worktree", str(outside))
    shown = git(sup, "diff", "--submodule=diff", check=False)
    assert "TOPSECRET" in shown.stdout, "control: git read the submodule's work tree outside"
    result = analyze_in_workspace("git diff --submodule=diff", str(sup))
    assert result.verdict is not Verdict.ALLOW, result.reason


def test_a_repository_that_runs_nothing_still_allows_its_reads(tmp_path: Path) -> None:
    repo = committed(tmp_path / "repo")
    for command in ("git status", "git log -p", "git diff HEAD", "git rev-parse HEAD"):
        assert analyze_in_workspace(command, str(repo)).verdict is Verdict.ALLOW, command


TOKEN = "ghs_S3CRETt0ken"


@pytest.mark.parametrize("command", [
    "git config --local --list", "git config --local --get-regexp .",
    "git config --get-urlmatch http https://github.com/", "git config list --local",
    "cat .git/config", "head -n 20 .git/config", "grep -r ghs_ .", "git remote -v",
    "git remote get-url origin",
])
def test_a_read_that_prints_a_credential_of_the_configuration_is_not_allowed(
        tmp_path: Path, command: str) -> None:
    """From a review: a CI checkout leaves `http.<url>.extraheader` with a
    token in .git/config, and a remote's URL may carry one; these reads
    printed it."""
    repo = committed(tmp_path / "repo")
    git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    git(repo, "remote", "add", "origin", f"https://x-access-token:{TOKEN}@github.com/o/r")
    shown = subprocess.run(command, shell=True, cwd=repo, env=ENV, capture_output=True,
                           text=True, check=False, timeout=30)
    if "list --local" not in command:  # the subcommand form is newer than some gits
        assert TOKEN in shown.stdout, f"control: {command} did not print the token"
    result = analyze_in_workspace(command, str(repo))
    assert result.verdict is not Verdict.ALLOW, result.reason
    assert "credentials" in (result.reason or ""), result.reason


def test_a_proxy_password_in_the_users_own_file_is_not_printed_unasked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[http]\n\tproxy = http://me:{TOKEN}@proxy:3128\n")
    monkeypatch.setenv("HOME", str(home))
    repo = committed(tmp_path / "repo")
    control = subprocess.run(["git", "config", "http.proxy"], cwd=repo, capture_output=True,
                             text=True, env={**ENV, "HOME": str(home)}, check=False)
    assert TOKEN in control.stdout, "control: git printed the password"
    result = analyze_in_workspace("git config http.proxy", str(repo))
    assert result.verdict is not Verdict.ALLOW, result.reason


@pytest.mark.parametrize("command", [
    "git config --local --list", "git remote -v", "cat .git/config", "grep -r one .",
    "git config user.name",
])
def test_configuration_reads_are_allowed_where_it_holds_no_credential(
        tmp_path: Path, command: str) -> None:
    repo = committed(tmp_path / "repo")
    git(repo, "remote", "add", "origin", "https://github.com/o/r")
    result = analyze_in_workspace(command, str(repo))
    assert result.verdict is Verdict.ALLOW, result.reason


def _lazy_ext(repo: Path, marker: Path, promisor: str, allow: str) -> None:
    """A partial clone whose remote is an ext:: command, with one blob gone."""
    blob = git(repo, "rev-parse", "HEAD:a.txt").stdout.strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    git(repo, "config", "remote.origin.url", f"ext::sh -c touch% {marker}")
    git(repo, "config", "remote.origin.promisor", promisor)
    git(repo, "config", "protocol.ext.allow", allow)


@pytest.mark.parametrize(("promisor", "allow"), [("2", "user"), ("true", "always"),
                                                 ("-1", "user")])
def test_a_partial_clone_spelled_any_way_git_reads_as_true_asks(
        tmp_path: Path, promisor: str, allow: str) -> None:
    """From a review: `remote.origin.promisor = 2` is true to git, and
    `protocol.ext.allow = user` lets a lazy fetch run an ext:: command."""
    repo = committed(tmp_path / "repo")
    marker = tmp_path / "RAN"
    _lazy_ext(repo, marker, promisor, allow)
    git(repo, "show", "HEAD:a.txt", check=False)
    assert marker.exists(), "control: the lazy fetch ran the ext:: command"
    marker.unlink()
    for command in ("git show HEAD:a.txt", "git config user.name", "git status"):
        result = analyze_in_workspace(command, str(repo))
        if command != "git config user.name":
            assert result.verdict is not Verdict.ALLOW, (command, result.reason)
    assert not marker.exists(), "judging the commands ran the repository's transport"


def test_judging_a_sparse_partial_clone_runs_nothing(tmp_path: Path) -> None:
    """From a review: the check's own `git ls-files` expanded a sparse index,
    fetched a missing tree and ran the remote's ext:: command."""
    repo = committed(tmp_path / "repo")
    for d in ("keep", "hide/deep"):
        (repo / d).mkdir(parents=True)
        (repo / d / "f").write_text(d)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "dirs")
    git(repo, "sparse-checkout", "init", "--cone", "--sparse-index")
    git(repo, "sparse-checkout", "set", "keep")
    tree = git(repo, "rev-parse", "HEAD:hide").stdout.strip()
    (repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    marker = tmp_path / "RAN"
    git(repo, "config", "remote.origin.url", f"ext::sh -c touch% {marker}")
    git(repo, "config", "protocol.ext.allow", "always")
    for command in ("git status", "git config user.name", "git log"):
        analyze_in_workspace(command, str(repo))
    assert not marker.exists(), "judging the command ran the repository's transport"


def test_when_git_cannot_say_a_read_of_its_configuration_asks(tmp_path: Path) -> None:
    """From a review: git could not answer (a FIFO include; a repository of
    another owner) and `cat .git/config` printed the token unasked."""
    repo = committed(tmp_path / "repo")
    git(repo, "remote", "add", "origin", f"https://x:{TOKEN}@github.com/o/r")
    git(repo, "config", "include.path", "fifo")
    os.mkfifo(repo / ".git" / "fifo")
    for command in ("cat .git/config", "git config remote.origin.url"):
        assert analyze_in_workspace(command, str(repo)).verdict is not Verdict.ALLOW, command


@pytest.mark.parametrize("command", ["cat .git/c*", "cat .git/conf?g", "cat .git/creds.inc"])
def test_a_credential_reached_by_a_glob_or_an_include_asks(tmp_path: Path, command: str) -> None:
    repo = committed(tmp_path / "repo")
    git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    (repo / ".git" / "creds.inc").write_text(f"[http]\n\tproxy = http://u:{TOKEN}@p:1\n")
    git(repo, "config", "include.path", "creds.inc")
    shown = subprocess.run(command, shell=True, cwd=repo, capture_output=True, text=True,
                           check=False)
    assert TOKEN in shown.stdout, "control: the read printed the token"
    assert analyze_in_workspace(command, str(repo)).verdict is not Verdict.ALLOW


def _included_from_the_work_tree(tmp_path: Path) -> Path:
    """A repository whose .git/config includes `conf/creds.inc`, a file of
    the work tree under a name of its own, holding a proxy password."""
    repo = committed(tmp_path / "repo")
    (repo / "conf").mkdir()
    (repo / "conf" / "creds.inc").write_text(f"[http]\n\tproxy = http://u:{TOKEN}@p:1\n")
    git(repo, "config", "include.path", "../conf/creds.inc")
    said = git(repo, "config", "--show-origin", "http.proxy").stdout
    assert "conf/creds.inc" in said, f"control: git reads the included file ({said})"
    return repo


@pytest.mark.parametrize(("where", "command"), [
    ("repo", "cat conf/creds.inc"), ("repo/conf", "cat creds.inc"),
    ("repo", "head -c 500 conf/creds.*"), ("repo", "grep -r u: conf"),
    ("outside", "cat {repo}/conf/creds.inc"),
])
def test_an_included_file_under_a_name_of_its_own_is_a_credential_read(
        tmp_path: Path, where: str, command: str) -> None:
    """From a review: `.git/config` includes a file of the work tree
    (`creds.inc`); `cat creds.inc` printed the password it holds unasked,
    as no git configuration file was named. Judged from the repository,
    from the file's own directory and from a directory outside it."""
    repo = _included_from_the_work_tree(tmp_path)
    cwd = tmp_path / "outside" if where == "outside" else tmp_path / where
    cwd.mkdir(exist_ok=True)
    command = command.format(repo=repo)
    shown = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True,
                           check=False)
    assert TOKEN in shown.stdout, f"control: {command} printed the token"
    result = analyze_in_workspace(command, str(cwd))
    assert result.verdict is not Verdict.ALLOW, result.reason
    assert "credentials" in (result.reason or ""), result.reason


@pytest.mark.parametrize("command", ["git diff", "git log -p", "git show", "git grep u:",
                                     "git grep -h proxy"])
def test_git_printing_an_included_file_of_the_work_tree_is_a_credential_read(
        tmp_path: Path, command: str) -> None:
    """From a review: the included `conf/creds.inc` is tracked; `git diff`,
    `git log -p`, `git show` and `git grep` printed the token in it."""
    repo = _included_from_the_work_tree(tmp_path)
    git(repo, "add", "conf")
    git(repo, "commit", "-q", "-m", "creds")
    with (repo / "conf" / "creds.inc").open("a") as f:
        f.write(f"# rotated {TOKEN}\n")
    shown = subprocess.run(command, shell=True, cwd=repo, env=ENV, capture_output=True,
                           text=True, check=False, timeout=30)
    assert TOKEN in shown.stdout, f"control: {command} printed the token"
    result = analyze_in_workspace(command, str(repo))
    assert result.verdict is not Verdict.ALLOW, result.reason


def test_an_include_named_through_a_link_is_judged_where_it_leads(tmp_path: Path) -> None:
    """From a review: `include.path = ../conflink/creds.inc` with conflink
    -> conf; the file's name as written matched no command's path, and
    `cat conf/creds.inc` printed the token unasked."""
    repo = _included_from_the_work_tree(tmp_path)
    (repo / "conflink").symlink_to("conf")
    git(repo, "config", "--unset", "include.path")
    git(repo, "config", "include.path", "../conflink/creds.inc")
    shown = subprocess.run(["git", "config", "http.proxy"], cwd=repo, env=ENV,
                           capture_output=True, text=True, check=False)
    assert TOKEN in shown.stdout, "control: git reads the file through the link"
    result = analyze_in_workspace("cat conf/creds.inc", str(repo))
    assert result.verdict is not Verdict.ALLOW, result.reason


@pytest.mark.parametrize("text", [
    "[user]\n\tname = A\n\temail = a@b\n",
    "[metadata]\nname = x\nauthor = Bob\n",
    "def token():\n    return os.environ['TOKEN']\n",
    '[remote "origin"]\n\turl = ssh://git@github.com/o/r\n',
])
def test_a_file_holding_no_credential_in_git_syntax_stays_allowed(
        tmp_path: Path, text: str) -> None:
    """Files are judged by content as git reads a configuration file: an
    author's name, an ssh login or a word in source code is no credential."""
    repo = committed(tmp_path / "repo")
    (repo / "f.cfg").write_text(text)
    result = analyze_in_workspace("cat f.cfg", str(repo))
    assert result.verdict is Verdict.ALLOW, result.reason


@pytest.mark.parametrize("path", [".:/usr/bin:/bin", ":/usr/bin:/bin"])
def test_judging_never_runs_a_git_the_directory_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """An empty or relative PATH entry is the directory judged: asking
    "git" there would run a `git` the repository planted, while shellgate
    only meant to ask about the repository."""
    repo = committed(tmp_path / "repo")
    marker = tmp_path / "RAN"
    planted = repo / "git"
    planted.write_text(f"#!/bin/sh\ntouch {marker}\nexec /usr/bin/git \"$@\"\n")
    planted.chmod(0o755)
    monkeypatch.setenv("PATH", path)
    monkeypatch.chdir(repo)
    for command in ("git status", "git config user.name", "cat .git/config"):
        analyze_in_workspace(command, str(repo))
    assert not marker.exists()


def test_a_program_in_a_project_file_the_users_config_includes_is_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a review: `includeIf "gitdir:~/work/"` in the user's config
    includes a file inside the project; git labels its entries global, so a
    core.fsmonitor a sandboxed command wrote there was ignored and `git
    status` was allowed."""
    repo = committed(tmp_path / "repo")
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "config").write_text(
        f'[includeIf "gitdir:{repo}/"]\n\tpath = {repo}/team.gitconfig\n')
    marker = tmp_path / "RAN"
    (repo / "team.gitconfig").write_text(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    subprocess.run(["git", "status"], cwd=repo, env={**ENV, "HOME": str(home)},
                   capture_output=True, check=False, timeout=30)
    assert marker.exists(), "control: git status ran the included monitor"
    marker.unlink()
    assert analyze_in_workspace("git status", str(repo)).verdict is not Verdict.ALLOW


def test_a_link_to_a_config_holding_a_credential_asks(tmp_path: Path) -> None:
    """From a review: a committed `cfglink -> .git/config` let `cat
    cfglink` print the token unasked (the name says nothing of git)."""
    repo = committed(tmp_path / "repo")
    git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    (repo / "cfglink").symlink_to(".git/config")
    shown = subprocess.run(["cat", "cfglink"], cwd=repo, capture_output=True, text=True,
                           check=False)
    assert TOKEN in shown.stdout, "control: the link leads to the token"
    assert analyze_in_workspace("cat cfglink", str(repo)).verdict is not Verdict.ALLOW
