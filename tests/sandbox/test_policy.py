"""Policies, profiles and Claude Code's sandbox settings (pure; no bwrap)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import (
    BUILTIN_PROFILES,
    EnvPolicy,
    Limits,
    NetworkPolicy,
    PolicyError,
    apply_settings,
    domain_matches,
    load_profile,
    parse_settings,
    validate_domain_pattern,
)


@pytest.mark.parametrize(
    ("pattern", "normalized"),
    [("example.com", "example.com"), ("*.example.com", "*.example.com"),
     ("PyPI.org.", "pypi.org"), ("a-b.c-d.io", "a-b.c-d.io"), ("10.0.0.1", "10.0.0.1")],
)
def test_domain_patterns_are_normalized(pattern: str, normalized: str) -> None:
    assert validate_domain_pattern(pattern) == normalized


@pytest.mark.parametrize(
    "pattern", ["*", "*.com", "*.io", "", "exa mple.com", "-bad.com", "a..b", "http://x.com",
                "*.*.com", "x.com/path"],
)
def test_over_broad_or_malformed_domain_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(PolicyError):
        validate_domain_pattern(pattern)


@pytest.mark.parametrize(
    ("host", "pattern", "matches"),
    [("example.com", "example.com", True), ("EXAMPLE.com.", "example.com", True),
     ("api.example.com", "example.com", False), ("api.example.com", "*.example.com", True),
     ("a.b.example.com", "*.example.com", True), ("example.com", "*.example.com", False),
     ("evilexample.com", "*.example.com", False), ("example.com.evil.io", "example.com", False)],
)
def test_domain_matching_is_exact_or_subdomain(host: str, pattern: str, matches: bool) -> None:
    assert domain_matches(host, pattern) is matches


def test_a_denied_domain_wins_over_an_allowed_wildcard() -> None:
    net = NetworkPolicy(allowed_domains=("*.example.com",), denied_domains=("bad.example.com",))
    assert net.decide("ok.example.com")[0] is True
    allowed, why = net.decide("bad.example.com")
    assert not allowed and "deniedDomains" in why
    assert "allowedDomains" in net.decide("other.org")[1]
    assert net.mode == "allowlist" and NetworkPolicy().mode == "none"


def test_invalid_domains_in_a_network_policy_are_a_validation_error() -> None:
    with pytest.raises(ValueError, match="too broad"):
        NetworkPolicy(allowed_domains=("*.com",))


def test_environment_keeps_the_allowlist_and_drops_secrets() -> None:
    environ = {
        "PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "LANG": "C.UTF-8",
        "OPENAI_API_KEY": "sk-1", "GITHUB_TOKEN": "ghp", "AWS_SECRET_ACCESS_KEY": "x",
        "MY_SERVICE_PASSWORD": "p", "LD_PRELOAD": "/evil.so", "PYTHONPATH": "/x",
        "SSH_AUTH_SOCK": "/run/agent", "RANDOM_THING": "1",
    }
    out = EnvPolicy().filter(environ)
    assert out == {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "LANG": "C.UTF-8"}


def test_a_secret_passes_only_when_named_exactly_and_set_values_win() -> None:
    env = EnvPolicy(allow=("PATH", "*_API_KEY"), pass_through=("OPENAI_API_KEY",),
                    set={"PATH": "/sandbox/bin"})
    out = env.filter({"PATH": "/bin", "OPENAI_API_KEY": "sk", "OTHER_API_KEY": "no"})
    assert out == {"PATH": "/sandbox/bin", "OPENAI_API_KEY": "sk"}


@pytest.mark.parametrize("name", BUILTIN_PROFILES)
def test_builtin_profiles_load(name: str) -> None:
    policy = load_profile(name)
    assert policy.profile == name
    assert policy.filesystem.private_tmp


def test_the_default_profile_writes_the_workspace_without_network() -> None:
    policy = load_profile()
    assert policy.profile == "workspace-write"
    assert policy.filesystem.workspace == "write"
    assert policy.network.mode == "none"
    assert load_profile("read-only").filesystem.workspace == "read"
    assert load_profile("networked").network.mode == "allowlist"


def test_a_profile_can_be_a_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('[filesystem]\nworkspace = "read"\n[network]\n'
                    'allowed_domains = ["example.org"]\n[limits]\nwall_timeout = 5\n')
    policy = load_profile(str(path))
    assert policy.profile == "mine"
    assert policy.network.allowed_domains == ("example.org",)
    assert policy.limits.wall_timeout == 5


@pytest.mark.parametrize(
    ("content", "message"),
    [("[filesystem\n", "cannot read profile"),
     ('[filesystem]\nworkspace = "everything"\n', "invalid profile"),
     ('[network]\nallowed_domains = ["*"]\n', "invalid profile"),
     ("[limits]\nwall_timeout = -1\n", "invalid profile"),
     ('[filesystem]\nunknown_key = 1\n', "invalid profile"),
     # from a review: NaN passed "greater than 0", a huge integer overflowed
     ("[limits]\nwall_timeout = nan\n", "invalid profile"),
     ("[limits]\nwall_timeout = inf\n", "invalid profile"),
     (f"[limits]\nwall_timeout = {10**400}\n", "invalid profile"),
     ("[limits]\nmax_processes = 1.5\n", "invalid profile"),
     ('[limits]\nmax_processes = "10"\n', "invalid profile"),
     ('[filesystem]\nallow_write = "/"\n', "invalid profile"),
     ('[filesystem]\nprivate_tmp = "false"\n', "invalid profile"),
     ('[network]\nallow_unix_sockets = 1\n', "invalid profile"),
     ('[env]\nset = {A = 1}\n', "invalid profile")],
)
def test_a_broken_profile_is_a_one_line_policy_error(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content)
    with pytest.raises(PolicyError, match=message) as info:
        load_profile(str(path))
    assert "\n" not in str(info.value)


def test_an_unknown_profile_name_lists_the_known_ones() -> None:
    with pytest.raises(PolicyError, match="read-only, workspace-write, networked"):
        load_profile("no-such-profile")


def test_claude_code_sandbox_settings_add_to_the_profile() -> None:
    settings = parse_settings({
        "enabled": True,
        "excludedCommands": ["docker"],
        "allowUnsandboxedCommands": False,
        "filesystem": {"allowWrite": ["~/.cache/pip"], "denyWrite": ["secrets/"],
                       "denyRead": ["~/private"]},
        "network": {"allowedDomains": ["pypi.org"], "deniedDomains": ["evil.pypi.org"],
                    "allowUnixSockets": ["/var/run/docker.sock"]},
        "somethingNew": {"ignored": True},
    })
    assert settings.excluded_commands == ("docker",)
    policy = apply_settings(load_profile("workspace-write"), settings)
    assert policy.filesystem.allow_write == ("~/.cache/pip",)
    assert policy.filesystem.deny_write == ("secrets/",)
    assert policy.filesystem.deny_read == ("~/private",)
    assert policy.network.allowed_domains == ("pypi.org",)
    assert policy.network.denied_domains == ("evil.pypi.org",)
    assert policy.network.allow_unix_sockets is True


def test_settings_never_remove_what_the_profile_allows_or_denies() -> None:
    base = load_profile("networked")
    merged = apply_settings(base, parse_settings({"network": {"allowedDomains": []}}))
    assert merged.network.allowed_domains == base.network.allowed_domains


@pytest.mark.parametrize(
    "bad",
    [{"filesystem": {"allowWrite": "not-a-list"}}, {"network": {"allowedDomains": [1]}},
     {"excludedCommands": {"x": 1}}, "a string"],
)
def test_broken_sandbox_settings_are_a_one_line_policy_error(bad: object) -> None:
    with pytest.raises(PolicyError) as info:
        parse_settings(bad)
    assert "\n" not in str(info.value)


def test_over_broad_domains_from_settings_are_refused() -> None:
    with pytest.raises(PolicyError, match="too broad"):
        apply_settings(load_profile(), parse_settings({"network": {"allowedDomains": ["*.org"]}}))


# -- limits: sizes, defaults, and settings that may only lower them ------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("512M", 512 << 20), ("2G", 2 << 30), ("2GiB", 2 << 30), ("16mb", 16 << 20),
     ("1048576", 1 << 20), (4096, 4096), ("1.5K", 1536)],
)
def test_sizes_are_read_as_people_write_them(text: object, expected: int) -> None:
    from sandbox.sizes import parse_size

    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "-1", "0", "2X", True, 0, 1.5])
def test_a_size_that_is_not_one_is_refused(text: object) -> None:
    from sandbox.sizes import parse_size

    with pytest.raises(PolicyError):
        parse_size(text)


def test_memory_defaults_to_half_of_ram_and_can_be_off_or_a_share() -> None:
    from sandbox.sizes import total_ram

    assert Limits().memory == total_ram() // 2
    assert Limits(memory="off").memory is None
    assert Limits(memory="25%").memory == total_ram() // 4
    assert Limits().tmp_size == 2 << 30 and Limits().shm_size == 256 << 20
    assert Limits().run_size == 16 << 20 and Limits().max_processes == 1024


def test_every_builtin_profile_sets_the_limits() -> None:
    for name in ("read-only", "workspace-write", "networked"):
        limits = load_profile(name).limits
        assert limits.memory is not None and limits.tmp_size == 2 << 30


@pytest.mark.parametrize(
    ("asked", "field", "expected"),
    [
        ({"memory": "1G"}, "memory", 1 << 30),                       # lower: taken
        ({"tmpSize": "64G"}, "tmp_size", 2 << 30),                   # higher: ignored
        ({"memory": "off"}, "memory", "profile"),                    # lifting: ignored
        ({"maxProcesses": 50}, "max_processes", 50),
        ({"shmSize": "64M", "runSize": "1M"}, "shm_size", 64 << 20),
    ],
)
def test_settings_only_ever_lower_a_limit(asked: dict[str, object], field: str,
                                          expected: object) -> None:
    """A project's own settings file must not lift the host's protection."""
    base = load_profile()
    policy = apply_settings(base, parse_settings({"limits": asked}))
    want = getattr(base.limits, field) if expected == "profile" else expected
    assert getattr(policy.limits, field) == want
