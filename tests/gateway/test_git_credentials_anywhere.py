"""A credential in git's syntax is found wherever the file holding it lies.

From a review of the analyzer: a file that some configuration includes
was judged a credential only when the configuration of the reading
directory, or of the file's own, included it. Read from a parent
directory, from a directory added with --add-dir, from `~` where a user's
`includeIf "gitdir:~/work/"` is inactive, on a branch where an `onbranch:`
include is inactive, through a nested repository below a tree read, or by
a hard link's other name, the token was printed unasked. Each case runs
the read for real first (the control: the token is printed) and then asks
the gateway. Under `shellgate hook` an allow prints it into the model's
context on the host.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from analyzers import Verdict
from gateway.workspace import analyze_in_workspace
from sandbox import file_secrets

TOKEN = "ghs_An0therS3cret"
CREDS = f"[http]\n\tproxy = http://u:{TOKEN}@p:1\n"
ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "a",
       "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b",
       "GIT_PAGER": "cat", "PAGER": "cat"}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env or ENV, capture_output=True,
                          text=True, check=True, timeout=30).stdout


def repository(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("one\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-qm", "one")
    return path


def shown(command: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    return subprocess.run(command, shell=True, cwd=cwd, env=env or ENV, capture_output=True,
                          text=True, check=False, timeout=30).stdout


def asks(command: str, cwd: Path, **kw: object) -> str:
    result = analyze_in_workspace(command, str(cwd), **kw)  # type: ignore[arg-type]
    assert result.verdict is not Verdict.ALLOW, f"{command}: {result.reason}"
    return result.reason or ""


@pytest.fixture
def included_from_elsewhere(tmp_path: Path) -> Path:
    """work/p is a repository whose config includes work/secrets/creds.inc,
    outside its work tree."""
    repo = repository(tmp_path / "work" / "p")
    secrets = tmp_path / "work" / "secrets"
    secrets.mkdir()
    (secrets / "creds.inc").write_text(CREDS)
    git(repo, "config", "include.path", str(secrets / "creds.inc"))
    assert TOKEN in git(repo, "config", "http.proxy"), "control: git reads the include"
    return tmp_path / "work"


@pytest.mark.parametrize(("where", "command"), [
    ("p", "cat ../secrets/creds.inc"),
    (".", "cat secrets/creds.inc"),
    (".", "head -n 5 secrets/*.inc"),
    ("p", "cat ../secrets/./creds.inc"),
])
def test_a_file_another_repository_includes_is_a_credential_read(
        included_from_elsewhere: Path, where: str, command: str) -> None:
    """Read from the including repository (whose config the read's own
    directory does not see) and from a parent directory that no
    configuration includes anything from."""
    cwd = included_from_elsewhere / where
    assert TOKEN in shown(command, cwd), f"control: {command} printed the token"
    assert "credentials" in asks(command, cwd)


def test_a_file_read_from_an_added_directory_is_judged_by_content(
        included_from_elsewhere: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = f"cat {included_from_elsewhere}/secrets/creds.inc"
    assert TOKEN in shown(command, elsewhere), "control"
    asks(command, elsewhere, extra_dirs=(str(included_from_elsewhere),))


def test_a_hard_link_to_an_included_file_is_a_credential_read(
        included_from_elsewhere: Path) -> None:
    repo = included_from_elsewhere / "p"
    os.link(included_from_elsewhere / "secrets" / "creds.inc", repo / "notes.txt")
    assert TOKEN in shown("cat notes.txt", repo), "control"
    asks("cat notes.txt", repo)


def test_the_target_of_an_inactive_include_in_the_users_config_is_a_credential_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`includeIf "gitdir:~/work/"` in ~/.gitconfig names ~/work-creds.inc;
    read from `~`, where the include is inactive, it printed the token."""
    home = tmp_path / "home"
    repo = repository(home / "work" / "r")
    (home / "work-creds.inc").write_text(CREDS)
    (home / ".gitconfig").write_text('[includeIf "gitdir:~/work/"]\n\tpath = ~/work-creds.inc\n')
    env = {**ENV, "HOME": str(home)}
    env.pop("XDG_CONFIG_HOME", None)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert TOKEN in git(repo, "config", "http.proxy", env=env), "control: active in ~/work"
    assert TOKEN in shown("cat ~/work-creds.inc", home, env), "control: the read prints it"
    for command in ("cat ~/work-creds.inc", "cat work-creds.inc", "grep -r u: ."):
        asks(command, home, home=str(home))


def test_a_tracked_file_included_only_on_another_branch_is_a_credential_read(
        tmp_path: Path) -> None:
    """`includeIf "onbranch:release"` of a tracked conf/creds.inc: on main
    git does not read it, and `git log -p` and `cat` printed the token."""
    repo = repository(tmp_path / "r")
    (repo / "conf").mkdir()
    (repo / "conf" / "creds.inc").write_text(CREDS)
    git(repo, "add", "conf")
    git(repo, "commit", "-qm", "conf")
    git(repo, "config", "includeIf.onbranch:release.path", "../conf/creds.inc")
    assert TOKEN not in git(repo, "config", "--list"), "control: inactive on main"
    for command in ("git log -p", "git show", "cat conf/creds.inc", "grep -r u: conf"):
        assert TOKEN in shown(command, repo), f"control: {command} printed the token"
        asks(command, repo)


@pytest.mark.parametrize("command", ["grep -r u: .", "grep -rh proxy inner", "cat */conf/*"])
def test_a_nested_repositorys_included_file_is_a_credential_read(
        tmp_path: Path, command: str) -> None:
    """From a review: an outer repository holds inner/, a repository whose
    config includes inner/conf/creds.inc; `grep -r` from the outer one
    printed the token (only the outer's configuration was asked)."""
    outer = repository(tmp_path / "outer")
    inner = repository(outer / "inner")
    (inner / "conf").mkdir()
    (inner / "conf" / "creds.inc").write_text(CREDS)
    git(inner, "config", "include.path", "../conf/creds.inc")
    assert TOKEN in shown(command, outer), f"control: {command} printed the token"
    asks(command, outer)


def test_a_nested_repositorys_own_config_token_is_a_credential_read(tmp_path: Path) -> None:
    outer = repository(tmp_path / "outer")
    inner = repository(outer / "inner")
    git(inner, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    assert TOKEN in shown("grep -r AUTHORIZATION .", outer), "control"
    asks("grep -r AUTHORIZATION .", outer)


#: spellings git joins into a credential: quotes, escapes, a continued line
#: (each checked against git's own reading below)
SPLIT_SPELLINGS = [
    f'[http]\n\tproxy = "http:/"/u:{TOKEN}@p:1\n',
    f'[http]\n\tproxy = http:/\\\n/u:{TOKEN}@p:1\n',
    f'[url "https:/\\/{TOKEN}@github.com/"]\n\tinsteadOf = gh:\n',
    f'[x "pa\\ss"]\n\tv = {TOKEN}\n',
    f'\ufeff[HTTP]\n\tEXTRAHEADER = AUTHORIZATION: {TOKEN}\n',
    f'[http]\n\tcookieFile = "{TOKEN}#x" ; a comment\n',
]


@pytest.mark.parametrize("text", SPLIT_SPELLINGS)
def test_a_credential_spelled_apart_is_still_found(tmp_path: Path, text: str) -> None:
    """The look at a file's bytes before asking git must never pass over a
    spelling git joins; git's own reading of each is the control."""
    path = tmp_path / "c.inc"
    path.write_text(text)
    listed = subprocess.run(["git", "config", "--file", str(path), "--list"],
                            capture_output=True, text=True, check=False).stdout
    if TOKEN not in listed:
        pytest.fail(f"the spelling is not what git reads: {listed!r}")
    assert file_secrets(str(path)), text


def test_a_nested_bare_repositorys_config_is_a_credential_read(tmp_path: Path) -> None:
    """From a review: `git init --bare vendor/lib.git` with a token in its
    config; the walk knew only `.git` entries, and `grep -r` printed it."""
    outer = repository(tmp_path / "outer")
    bare = outer / "vendor" / "lib.git"
    git(outer, "init", "-q", "--bare", str(bare))
    git(bare, "config", "http.extraheader", f"AUTHORIZATION: bearer {TOKEN}")
    for command in ("grep -r AUTHORIZATION .", "grep -r AUTHORIZATION vendor"):
        assert TOKEN in shown(command, outer), f"control: {command}"
        asks(command, outer)


def test_a_nested_repository_whose_git_is_a_link_is_asked_about(tmp_path: Path) -> None:
    """From a review: `inner/.git -> elsewhere/.git` was filed as a link,
    not a repository, and its included token was printed."""
    outer = repository(tmp_path / "outer")
    real = repository(tmp_path / "elsewhere")
    inner = outer / "inner"
    inner.mkdir()
    (inner / ".git").symlink_to(real / ".git")
    (inner / "creds.inc").write_text(CREDS)
    git(real, "config", "include.path", str(inner / "creds.inc"))
    assert TOKEN in shown("grep -r u: .", outer), "control"
    asks("grep -r u: .", outer)


def test_an_include_written_for_another_users_home_is_judged(tmp_path: Path) -> None:
    """From a review: `~root/../…` in an inactive include was joined as a
    relative path; git expands it as root's home."""
    repo = repository(tmp_path / "r")
    (repo / "conf").mkdir()
    (repo / "conf" / "creds.inc").write_text(CREDS)
    git(repo, "add", "conf")
    git(repo, "commit", "-qm", "conf")
    root_home = os.path.expanduser("~root")
    spelled = "~root/" + os.path.relpath(repo / "conf" / "creds.inc", root_home)
    git(repo, "config", "includeIf.onbranch:release.path", spelled)
    for command in ("git log -p", "git grep u: HEAD"):
        assert TOKEN in shown(command, repo), f"control: {command}"
        asks(command, repo)


def test_a_credential_store_named_by_the_configuration_is_a_credential_read(
        tmp_path: Path) -> None:
    """From a review: `credential.helper = store --file=$PWD/store.txt`;
    `cat store.txt` printed the token (the store's format is no git
    configuration). Its format is judged wherever it lies."""
    repo = repository(tmp_path / "r")
    store = repo / "store.txt"
    store.write_text(f"https://user:{TOKEN}@github.com\n")
    git(repo, "config", "credential.helper", f"store --file={store}")
    filled = subprocess.run(["git", "credential", "fill"], cwd=repo, env=ENV, text=True,
                            input="protocol=https\nhost=github.com\n\n", capture_output=True,
                            check=False, timeout=30).stdout
    assert TOKEN in filled, "control: git uses the store"
    asks("cat store.txt", repo)
    (repo / "urls.txt").write_text("see https://github.com/o/r and https://git@github.com/o/r\n")
    assert analyze_in_workspace("cat urls.txt", str(repo)).verdict is Verdict.ALLOW


def test_without_git_a_file_that_may_hold_a_credential_asks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a review: with no git on PATH every file was judged empty."""
    repo = repository(tmp_path / "r")
    (repo / "creds.inc").write_text(CREDS)
    (repo / "notes.txt").write_text("nothing here\n")
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    asks("cat creds.inc", repo)
    assert analyze_in_workspace("cat notes.txt", str(repo)).verdict is Verdict.ALLOW
