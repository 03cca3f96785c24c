"""Destructive-command warnings (informational) and hard limits (never allowable).

The project lives in the home directory (``/home/user/project``), so ``..``
is the home directory itself.
"""

from __future__ import annotations

import pytest

from analyzers import BashAnalysis, WorkspaceFacts, analyze_bash
from analyzers.bash.destructive import destructive_warnings, is_critical

CWD = "/home/user/project"
HOME = "/home/user"


def analyze(cmd: str) -> BashAnalysis:
    return analyze_bash(cmd, CWD, home=HOME, workspace=WorkspaceFacts(searched=(CWD,)))


# -- warnings --------------------------------------------------------------------------

WARNINGS = [
    ("git reset --hard", "git reset --hard"),
    ("git reset --hard HEAD~1", "git reset --hard"),
    ("git push --force", "git push --force"),
    ("git push -f origin main", "git push --force"),
    ("git push --force-with-lease", "git push --force"),
    ("git push origin +main", "git push --force"),
    ("git commit --no-verify -m x", "--no-verify"),
    ("git commit -n -m x", "--no-verify"),
    ("git push --no-verify", "--no-verify"),
    ("git commit --amend", "git commit --amend"),
    ("git clean -f", "git clean -f"),
    ("git clean -fd", "git clean -f"),
    ("git clean --force", "git clean -f"),
    ("git checkout -- .", "discard uncommitted changes"),
    ("git branch -D topic", "git branch -D"),
    ("git stash drop", "git stash drop/clear"),
    ("rm -rf build", "rm -rf"),
    ("rm -fr build", "rm -rf"),
    ("rm --recursive --force build", "rm -rf"),
    ("rm -r build", "rm -r may"),
    ("psql -c 'DROP TABLE users'", "drop or truncate"),
    ("psql -c 'drop database prod'", "drop or truncate"),
    ("mysql -e 'TRUNCATE users'", "drop or truncate"),
    ("psql -c 'DELETE FROM users'", "DELETE without WHERE"),
    ("psql -c 'DELETE FROM users;'", "DELETE without WHERE"),
    ("kubectl delete pod web-1", "kubectl delete"),
    ("terraform destroy", "terraform destroy"),
    ("terraform apply -destroy", "terraform destroy"),
    ("docker system prune", "docker may delete"),
    ("chmod 777 f", "world-writable"),
    ("dd if=/dev/zero of=disk.img", "dd may overwrite"),
    # warnings follow the command through wrappers and payloads
    ("sudo git push --force", "git push --force"),
    ("timeout 60 git reset --hard", "git reset --hard"),
    ("bash -c 'git clean -fdx'", "git clean -f"),
]


@pytest.mark.parametrize(("cmd", "warning"), WARNINGS, ids=[c for c, _ in WARNINGS])
def test_destructive_commands_carry_a_warning(cmd: str, warning: str) -> None:
    result = analyze(cmd)
    assert any(warning in w for w in result.warnings), result.warnings
    assert result.is_destructive


NO_WARNING = [
    "git reset HEAD~1",
    "git reset --soft HEAD~1",
    "git push origin main",
    "git commit -m 'fix: x'",
    "git clean -n",
    "git status",
    "git checkout -b topic",
    "git restore --staged .",
    "rm build.log",
    "rm -f build.log",
    "psql -c 'DELETE FROM users WHERE id = 1'",
    "psql -c 'SELECT * FROM users'",
    "kubectl get pods",
    "terraform plan",
    "chmod 644 f",
    "ls -la",
]


@pytest.mark.parametrize("cmd", NO_WARNING, ids=NO_WARNING)
def test_ordinary_commands_carry_no_warning(cmd: str) -> None:
    assert analyze(cmd).warnings == ()


def test_delete_with_where_is_not_a_delete_without_where() -> None:
    argv = ("psql", "-c", "DELETE FROM users WHERE id = 1")
    assert destructive_warnings(argv) == []
    assert destructive_warnings(("psql", "-c", "DELETE FROM users")) == [
        "DELETE without WHERE may delete all rows"
    ]


def test_delete_without_where_is_flagged_when_more_arguments_follow() -> None:
    result = analyze("psql -c 'DELETE FROM users' mydb")
    assert any("DELETE without WHERE" in w for w in result.warnings)


SAME_DECISION = [
    # (command with a warning, the same command without the risky part)
    ("git reset --hard", "git reset"),
    ("git push --force", "git push"),
    ("git commit --amend -m x", "git commit -m x"),
    ("git clean -f", "git clean -n"),
    ("rm -rf build", "rm build"),
    ("psql -c 'DROP TABLE users'", "psql -c 'SELECT 1'"),
    ("psql -c 'DELETE FROM users'", "psql -c 'DELETE FROM users WHERE id = 1'"),
    ("kubectl delete pod x", "kubectl get pod x"),
    ("terraform destroy", "terraform plan"),
]


@pytest.mark.parametrize(("risky", "plain"), SAME_DECISION, ids=[r for r, _ in SAME_DECISION])
def test_a_warning_never_changes_the_decision_on_its_own(risky: str, plain: str) -> None:
    a, b = analyze(risky), analyze(plain)
    assert a.warnings
    assert not a.hard_limit
    assert a.verdict == b.verdict == "ask"


@pytest.mark.parametrize(
    "cmd", ["echo 'DROP TABLE users'", "grep -rn 'DELETE FROM users' src"], ids=["drop", "delete"]
)
def test_sql_in_the_arguments_of_a_non_database_command_is_not_a_warning(cmd: str) -> None:
    result = analyze(cmd)
    assert not result.warnings
    assert result.verdict == "allow"


# -- hard limits ------------------------------------------------------------------------

HARD_LIMITS = [
    "rm -rf /",
    "rm -rf --no-preserve-root /",
    "rm -rf -- /",
    "rm -r /",
    "rm /",
    "rm -rf //",
    "rm -rf /./",
    "rm -rf /tmp/..",
    "rm -rf '/'",
    "rm -rf /*",
    "rm -rf /e*",
    "rm -rf ~",
    "rm -rf ~/",
    "rm -fr ~/*",
    "rm -rf $HOME",
    'rm -rf "$HOME"',
    'rm -rf "$HOME/"',
    "rm -rf /etc",
    "rm -r -f /etc",
    "rm -rf /usr",
    "rm -rf /usr/lib",
    "rm -rf /boot",
    "rm -rf /home",
    "rm -rf /home/user",
    "rm -rf /var/lib",
    "rm -rf ..",
    "rm -rf ../.*",
    "rmdir /",
    "unlink /etc/passwd",
    "mv /etc /tmp/x",
    "chmod -R 777 /",
    "cd / && rm -rf *",
    "cd /; rm -rf *",
    "(cd / && rm -rf *)",
    "cd && rm -rf *",
    "cd /tmp && rm -rf ..",
    # hidden behind wrappers, payloads, substitutions and control flow
    "/bin/rm -rf /",
    "sudo rm -rf /",
    "timeout 5 rm -rf /",
    "command rm -rf /",
    "env rm -rf /",
    "nohup rm -rf / &",
    "xargs rm -rf /",
    "bash -c 'rm -rf /'",
    "sh -c \"sh -c 'rm -rf /'\"",
    "eval rm -rf /",
    "echo $(rm -rf /)",
    "echo `rm -rf /`",
    "if true; then rm -rf /; fi",
    "for d in a; do rm -rf /; done",
    "$'\\x72\\x6d' -rf /",
    "r\\m -rf /",
    # find deleting from a critical root
    "find / -delete",
    "find ~ -delete",
    "find .. -delete",
    "find / -exec rm {} +",
    # filesystems and block devices
    "mkfs.ext4 /dev/sda1",
    "mkfs /dev/sdb",
    "wipefs -a /dev/sda",
    "dd if=/dev/zero of=/dev/sda",
    "dd if=img of=/dev/nvme0n1 bs=4M",
    "cat x > /dev/nvme0n1",
    "echo x >> /dev/sda",
    "tee /dev/sda < x",
    "cp x /dev/sda",
    "shred /dev/sda",
]


@pytest.mark.parametrize("cmd", HARD_LIMITS, ids=HARD_LIMITS)
def test_catastrophic_commands_hit_a_hard_limit_and_are_denied(cmd: str) -> None:
    result = analyze(cmd)
    assert result.hard_limit
    assert result.verdict == "deny"
    assert result.reason.startswith("hard limit:")
    assert not result.rules_apply
    assert result.suggested_rules == ()


NOT_HARD_LIMITS = [
    "rm -rf build/",
    "rm -rf ./node_modules",
    "rm -rf dist build",
    "rm -rf .",
    "rm -rf *",
    "rm -rf /tmp/build",
    "rm -rf ../project",
    "cd / | rm -rf *",  # a pipeline stage's cd moves nothing
    "(cd /) && rm -rf *",
    "find . -name '*.pyc' -delete",
    "dd if=/dev/zero of=disk.img",
    "dd if=/dev/sda of=backup.img",
    "chmod 777 /",  # not recursive
    "mkdir -p /tmp/x",
    "cat /dev/sda",
]


@pytest.mark.parametrize("cmd", NOT_HARD_LIMITS, ids=NOT_HARD_LIMITS)
def test_ordinary_destructive_commands_are_not_hard_limits(cmd: str) -> None:
    result = analyze(cmd)
    assert not result.hard_limit
    assert result.verdict == "ask"


@pytest.mark.parametrize(
    "cmd",
    ["rm -rf /", "cd / && rm -rf *", "mkfs.ext4 /dev/sda1"],
    ids=["rm-root", "cd-root-star", "mkfs"],
)
def test_a_hard_limit_names_what_it_would_destroy(cmd: str) -> None:
    (limit,) = analyze(cmd).hard_limits
    assert limit.reason
    assert limit.command
    assert str(limit) == f"{limit.reason} ({limit.command})"


IS_CRITICAL = [
    ("/", True),
    ("/home/user", True),
    ("/home", True),
    ("/etc", True),
    ("/etc/nginx/nginx.conf", True),
    ("/usr/lib", True),
    ("/opt", True),
    ("/var/log", True),
    ("/var/log/app", False),
    ("/tmp/build", False),
    ("/home/user/project", False),
    ("/home/user/project/build", False),
]


@pytest.mark.parametrize(("path", "critical"), IS_CRITICAL, ids=[p for p, _ in IS_CRITICAL])
def test_is_critical_covers_root_home_top_level_and_system_dirs(path: str, critical: bool) -> None:
    assert is_critical(path, HOME) is critical


@pytest.mark.parametrize("cmd", ["cd src && rm -rf $HOME", 'cd src && rm -rf "$HOME"'])
def test_rm_rf_home_after_cd_is_still_a_hard_limit(cmd: str) -> None:
    result = analyze(cmd)
    assert result.hard_limit
    assert result.verdict == "deny"


@pytest.mark.parametrize("cmd", ["rm -rf ~root", "rm -rf ~user"])
def test_rm_rf_of_a_named_home_directory_is_a_hard_limit(cmd: str) -> None:
    assert analyze(cmd).hard_limit


def test_rm_rf_root_passed_as_a_shell_payload_argument_is_a_hard_limit() -> None:
    assert analyze("bash -c 'rm -rf \"$1\"' _ /").hard_limit
