"""Escape tests: secrets in home directories, other projects' .env files, the
environment, and what /proc and /sys show.

Judged from the host, with a control proving each attack ran (see escape_kit).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shlex
import shutil
import subprocess
import time
import tomllib
import uuid
from pathlib import Path

import pytest
from escape_kit import (
    PY,
    SHELLGATE,
    assert_secret_absent,
    consume_control,
    require,
    sh,
    user_home,
)

import profiles

pytestmark = [pytest.mark.sandbox]


# -- 6. secrets in the home directory -----------------------------------------

READ_ATTACKS = {
    "cat": "cat {path}; cat {path} > stolen.txt",
    "cp": "cp {path} stolen.txt",
    "python": PY + " -c 'import sys; open(\"stolen.txt\", \"w\").write(open(sys.argv[1]).read())'"
              " {path}",
    "via /proc/self/root": "cat /proc/self/root{path} > stolen.txt",
    "via a symlink in the workspace": "ln -s {path} link && cat link > stolen.txt",
    "archive the directory": "tar cf stolen.tar {dir} 2>/dev/null; grep -rs . {dir} > stolen.txt",
}


@pytest.mark.parametrize("attack", list(READ_ATTACKS))
@pytest.mark.mutates_home
def test_home_directory_secrets_cannot_be_read(
    workspace: Path, home_secrets: dict[str, tuple[Path, str]], attack: str
) -> None:
    """Attack: read (or copy into the workspace) a private key under ~/.ssh
    and the credentials under ~/.aws."""
    for path, secret in home_secrets.values():
        script = READ_ATTACKS[attack].format(path=shlex.quote(str(path)),
                                             dir=shlex.quote(str(path.parent)))
        proc = sh(workspace, f"{script}; echo ran > control.txt")
        consume_control(workspace, proc)
        assert_secret_absent(workspace, proc, secret)
        for stolen in workspace.glob("stolen*"):
            stolen.unlink()
        (workspace / "link").unlink(missing_ok=True)


@pytest.mark.mutates_home
def test_home_directory_secrets_stay_hidden_when_home_points_elsewhere(
    workspace: Path, tmp_path: Path, home_secrets: dict[str, tuple[Path, str]]
) -> None:
    """Attack: the gateway runs with HOME set to a scratch directory; the
    command reads the real user's key by its absolute path."""
    path, secret = home_secrets["ssh"]
    scratch_home = tmp_path / "scratch-home"
    scratch_home.mkdir()
    env = {**os.environ, "HOME": str(scratch_home)}
    proc = sh(workspace, f"cat {shlex.quote(str(path))} > stolen.txt; echo ran > control.txt",
              env=env)
    consume_control(workspace, proc)
    assert_secret_absent(workspace, proc, secret)


# -- 7. secrets in the environment --------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "MY_SERVICE_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN",
     "SLACK_BOT_TOKEN", "AWS_SECRET_ACCESS_KEY", "DATABASE_PASSWORD"],
)
def test_secrets_in_the_callers_environment_do_not_reach_the_command(
    workspace: Path, name: str
) -> None:
    """Attack: read an API key or token the gateway was started with, from
    `env` or any /proc/*/environ inside."""
    secret = f"secret-{uuid.uuid4().hex}"
    control = f"control-{uuid.uuid4().hex}"
    env = {**os.environ, name: secret, "TZ": control}
    script = """
        env > env.txt
        cat /proc/self/environ > environ.bin
        for f in /proc/[0-9]*/environ; do cat "$f"; done > all-environ.bin 2>/dev/null
        env
        echo ran > control.txt
    """
    proc = sh(workspace, script, env=env)
    consume_control(workspace, proc)
    require(control in (workspace / "env.txt").read_text(),
            "an allowed variable (TZ) passes, so env.txt is the real environment", proc)
    assert_secret_absent(workspace, proc, secret)


# -- 6b. other projects' .env files -------------------------------------------------


@pytest.mark.parametrize("rel", [".env", ".env.production", "deeper/still/.env"])
@pytest.mark.mutates_home
def test_another_projects_env_file_under_home_cannot_be_read(
    workspace: Path, token: str, rel: str
) -> None:
    """Attack: `cat ~/src/other-service/.env` — database URLs and API keys of
    another project, read by absolute path. The workspace's own `.env`
    stays readable (the control)."""
    other = user_home() / f"shellgate-test-{token}" / "other-service"
    target = other / rel
    target.parent.mkdir(parents=True)
    secret = f"DATABASE_URL=postgres://u:{uuid.uuid4().hex}@db/prod"
    target.write_text(secret + "\n")
    (workspace / ".env").write_text("OWN=visible\n")
    try:
        script = (f"cat .env > control.txt; cat {shlex.quote(str(target))}; "
                  f"cp {shlex.quote(str(target))} stolen.txt")
        proc = sh(workspace, script)
        require(consume_control(workspace, proc) == "OWN=visible\n",
                "the workspace's own .env is readable", proc)
        assert_secret_absent(workspace, proc, secret)
    finally:
        shutil.rmtree(other.parent, ignore_errors=True)


# -- 6c. credential stores of common tools ---------------------------------------------

CREDENTIAL_STORES = [
    ".config/git/credentials", ".claude.json", ".config/containers/auth.json", ".yarnrc.yml",
    ".gem/credentials", ".s3cfg", ".config/rclone/rclone.conf", ".python_history",
    ".config/gh/hosts.yml", ".docker/config.json", ".kube/config", ".npmrc",
    ".config/pypoetry/auth.toml", ".terraformrc", ".huggingface/token",
]


@pytest.mark.parametrize("rel", CREDENTIAL_STORES)
@pytest.mark.mutates_home
def test_a_credential_store_in_the_home_directory_cannot_be_read(
    workspace: Path, rel: str
) -> None:
    """Attack: read a tool's stored token. Where the store does not exist
    yet a fake one is planted (and removed); where it exists, the command
    must see it empty or not at all."""
    path = user_home() / rel
    secret = f"token-{uuid.uuid4().hex}"
    created: list[Path] = []
    if not path.exists():
        for parent in reversed(path.parents):
            if not parent.exists():
                parent.mkdir(mode=0o700)
                created.append(parent)
        path.write_text(secret + "\n")
        created.append(path)
    try:
        quoted = shlex.quote(str(path))
        proc = sh(workspace, f"cat {quoted}; (cat {quoted} 2>/dev/null | wc -c) > control.txt")
        assert consume_control(workspace, proc).strip() == "0"
        assert_secret_absent(workspace, proc, secret)
    finally:
        for item in reversed(created):
            if item.is_dir():
                with contextlib.suppress(OSError):
                    item.rmdir()
            else:
                item.unlink(missing_ok=True)


def _existing_sensitive_paths() -> list[str]:
    """Every concrete path of the shared sensitive list that exists here, for
    this user's home and (as root) root's: read from the data file directly,
    not through the sandbox's own code."""
    homes = {str(user_home()), *(["/root"] if os.geteuid() == 0 else [])}
    out: list[str] = []
    for entry in tomllib.loads((Path(profiles.__file__).parent
                                / "sensitive-paths.toml").read_text())["paths"]:
        pattern = entry["path"]
        if "**" in pattern or pattern.startswith(("/proc/", "/dev/")):
            continue
        expanded = [h + pattern[1:] for h in homes] if pattern.startswith("~/") else [pattern]
        for item in expanded:
            out += [p for p in glob.glob(item) if os.access(p, os.R_OK)]
    return sorted(set(out))


_PROBE_READ = r"""
import json, os, sys
readable = []
for path in sys.argv[1:]:
    try:
        if os.path.isdir(path):
            if os.listdir(path):
                readable.append(path)
        elif open(path, "rb").read(1):
            readable.append(path)
    except OSError:
        pass
print(json.dumps(readable))
"""


def test_every_sensitive_path_that_exists_here_is_hidden(
    workspace: Path, home_secrets: dict[str, tuple[Path, str]]
) -> None:
    """The family behind the two tests above: whatever of the shared list
    this machine has, and this user (root included) can read outside, the
    command finds empty or absent. Running as root this covers root's
    credential classes (/etc/shadow, /etc/ssl/private, /root/... ) too."""
    paths = _existing_sensitive_paths()
    require(all(str(p.parent) in paths for p, _ in home_secrets.values()),
            "the planted secrets are among the paths checked")
    args = " ".join(shlex.quote(p) for p in paths)
    proc = sh(workspace, f"{PY} -c {shlex.quote(_PROBE_READ)} {args} > control.txt")
    assert json.loads(consume_control(workspace, proc)) == []


@pytest.mark.mutates_home
def test_an_env_file_in_a_directory_that_cannot_be_listed_is_hidden(
    workspace: Path, token: str
) -> None:
    """Attack (as a user): a directory of mode 0311 cannot be listed, so the
    walk cannot see the `.env` in it, but a path guessed right opens. Such
    a directory is hidden whole. (As root the walk lists it and hides the
    file itself.)"""
    shared = user_home() / f"shellgate-test-{token}"
    locked = shared / "locked"
    (locked / "proj").mkdir(parents=True)
    secret = f"TOKEN={uuid.uuid4().hex}"
    (locked / "proj" / ".env").write_text(secret + "\n")
    locked.chmod(0o311)  # enter, not list (for its owner too)
    try:
        target = shlex.quote(str(locked / "proj" / ".env"))
        proc = sh(workspace, f"cat {target}; cat README.md > control.txt")
        consume_control(workspace, proc)
        assert_secret_absent(workspace, proc, secret)
    finally:
        locked.chmod(0o755)
        shutil.rmtree(shared, ignore_errors=True)


@pytest.mark.mutates_home
def test_a_hidden_file_rotated_on_the_host_stops_the_run_at_once(
    workspace: Path, token: str
) -> None:
    """Attack (from a review): while the command retries `cat`, the host
    rewrites the hidden file the way editors and `sed -i` do (a new file
    renamed into place), which detaches the mount that hid it. The watch
    (sandbox/linux/watch.py) kills the sandbox on the rename: a read that
    lands between the rename and the kill is possible (the documented
    window, wider on a loaded machine), a run that goes on reading is not —
    unwatched, this loop prints the new secret some 90 times."""
    project = user_home() / f"shellgate-test-{token}" / "service"
    project.mkdir(parents=True)
    secret_file = project / ".env"
    secret_file.write_text("SECRET=v1\n")
    rotated = f"SECRET={uuid.uuid4().hex}"
    try:
        script = (f"echo ran > control.txt; for i in $(seq 100); do "
                  f"cat {shlex.quote(str(secret_file))} 2>/dev/null; sleep 0.05; done")
        with subprocess.Popen([SHELLGATE, "run", "--cwd", str(workspace), "--", "sh", "-c",
                               script], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) as proc:
            deadline = time.monotonic() + 60  # the start, on a loaded machine
            while not (workspace / "control.txt").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            require((workspace / "control.txt").exists(), "the command started")
            tmp = project / ".env.new"
            tmp.write_text(rotated + "\n")
            tmp.rename(secret_file)
            out, err = proc.communicate(timeout=30)
        assert out.count(rotated.encode()) <= 2, "the run went on reading the rotated file"
        assert b"was replaced or removed during the run" in err
        assert proc.returncode != 0
    finally:
        shutil.rmtree(project.parent, ignore_errors=True)
