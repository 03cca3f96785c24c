"""Settings files read forgivingly, the sources a session reads, and how
they merge: one clear problem per mistake (with the file and line), the
rest of the file kept; single values from the highest source; rule lists
from all; what a repository's own files may not do."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from gateway.permissions.merge import PermissionSettings, merge
from gateway.permissions.modes import Mode
from gateway.permissions.rules import Rule
from gateway.permissions.settings import (
    MAX_SETTINGS_BYTES,
    SettingsFile,
    Source,
    parse_settings_text,
    read_settings,
    settings_root,
)
from gateway.permissions.sources import (
    CliPermissions,
    cli_settings,
    discover,
    managed_files,
    split_tool_list,
)


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def read(path: Path, source: Source = Source.PROJECT) -> SettingsFile:
    got = read_settings(str(path), source, str(path.parent))
    assert got is not None
    return got


def layer(source: Source, data: dict[str, Any], root: str = "/r") -> SettingsFile:
    return parse_settings_text(json.dumps(data, indent=2).encode(), f"/{source.label}.json",
                               source, root)


def perms(source: Source, **block: Any) -> SettingsFile:
    return layer(source, {"permissions": block})


def messages(settings: SettingsFile | PermissionSettings) -> str:
    return "\n".join(str(p) for p in settings.problems)


# -- a settings file written with mistakes, as a new user would ------------
GOOD_DENY = '"deny": ["Bash(rm:*)", "Read(./.env)"]'


def test_a_trailing_comma_is_one_problem_with_the_line_and_a_hint(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json",
                 '{\n  "permissions": {\n    "allow": [\n      "Bash(ls)",\n    ]\n  }\n}\n')
    got = read(path)
    (only,) = got.problems
    assert only.where == f"{path}:5:5"
    assert "not valid JSON" in only.message and "comma" in only.message
    assert got.permissions.allow == ()


@pytest.mark.parametrize("text", [
    '{\n  // my rules\n  "permissions": {}\n}',
    '{\n  "permissions": {} /* later */\n}',
    '{\n  "permissions": {\n    "deny": ["Bash(rm:*)"] // no rm\n  }\n}',
])
def test_a_comment_is_one_problem_saying_json_has_none(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "settings.json", text)
    (only,) = read(path).problems
    assert only.where.startswith(f"{path}:")
    assert "comments" in only.message


def test_allow_as_a_string_costs_allow_only_and_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json",
                 '{\n  "permissions": {\n    "allow": "Bash(ls)",\n    ' + GOOD_DENY + "\n  }\n}")
    got = read(path)
    (only,) = got.problems
    assert only.where == f"{path}:3" and "permissions.allow" in only.message
    assert got.permissions.allow == ()
    assert got.permissions.deny == ("Bash(rm:*)", "Read(./.env)")


def test_deny_as_a_string_is_taken_as_a_list_of_one_and_said(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json", '{"permissions": {"deny": "Bash(rm:*)"}}')
    got = read(path)
    (only,) = got.problems
    assert "permissions.deny" in only.message
    assert got.permissions.deny == ("Bash(rm:*)",)


def test_a_mode_that_does_not_exist_is_one_problem_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json",
                 '{\n  "permissions": {\n    ' + GOOD_DENY + ',\n    "defaultMode": "auto"\n  }\n}')
    got = read(path)
    (only,) = got.problems
    assert only.where == f"{path}:4" and "'auto' is not a mode" in only.message
    assert got.permissions.default_mode is None
    assert got.permissions.deny == ("Bash(rm:*)", "Read(./.env)")
    merged = merge([got])
    assert merged.mode is Mode.DEFAULT and len(merged.problems) == 1


def test_permissions_as_a_list_is_one_problem_and_the_other_keys_stay(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json",
                 '{\n  "model": "opus",\n  "permissions": [],\n  "sandbox": {"enabled": true}\n}')
    got = read(path)
    (only,) = got.problems
    assert only.where == f"{path}:3" and "'permissions' must be an object" in only.message
    assert got.extra == {"model": "opus"} and got.sandbox == {"enabled": True}


def test_a_byte_order_mark_is_no_problem(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json",
                 b"\xef\xbb\xbf" + b'{"permissions": {"allow": ["Bash(ls)"]}}')
    got = read(path)
    assert got.problems == () and got.permissions.allow == ("Bash(ls)",)


@pytest.mark.parametrize("content", [b"", b"   \n\t\n"])
def test_an_empty_file_is_an_empty_settings_file(tmp_path: Path, content: bytes) -> None:
    got = read(write(tmp_path / "settings.json", content))
    assert got.problems == () and got.permissions.allow == () and got.extra == {}


def test_a_directory_where_the_file_should_be_is_one_problem(tmp_path: Path) -> None:
    folder = tmp_path / "settings.json"
    folder.mkdir()
    (only,) = read(folder).problems
    assert only.where == str(folder) and "directory" in only.message


def test_a_missing_file_is_no_file_at_all(tmp_path: Path) -> None:
    assert read_settings(str(tmp_path / "nope.json"), Source.USER, str(tmp_path)) is None


def test_binary_garbage_is_one_problem_saying_it_is_not_utf8(tmp_path: Path) -> None:
    garbage = bytes(random.Random(7).randrange(256) for _ in range(4096)) + b"\xff\xfe"
    (only,) = read(write(tmp_path / "settings.json", b"\x89PNG\r\n" + garbage)).problems
    assert "not UTF-8" in only.message


def test_a_two_megabyte_file_is_refused_unread(tmp_path: Path) -> None:
    big = '{"permissions": {"allow": [' + ",".join(['"Bash(ls)"'] * 200_000) + "]}}"
    assert len(big) > 2 * MAX_SETTINGS_BYTES - 1
    got = read(write(tmp_path / "settings.json", big))
    (only,) = got.problems
    assert "larger than" in only.message and got.permissions.allow == ()


def test_deeply_nested_json_is_one_problem(tmp_path: Path) -> None:
    deep = '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (only,) = read(write(tmp_path / "settings.json", deep)).problems
    assert "nested too deeply" in only.message


def test_a_number_too_long_for_python_is_one_problem_not_an_exception(tmp_path: Path) -> None:
    """The bug: json.loads raises a bare ValueError past 4300 digits."""
    got = read(write(tmp_path / "settings.json", '{"n": ' + "1" * 5000 + "}"))
    (only,) = got.problems
    assert "cannot be read as JSON" in only.message


@pytest.mark.parametrize(("text", "kind"), [
    ("[]", "list"), ('"permissions"', "str"), ("42", "int"), ("null", "NoneType"),
])
def test_json_that_is_not_an_object_is_one_problem(tmp_path: Path, text: str,
                                                   kind: str) -> None:
    (only,) = read(write(tmp_path / "settings.json", text)).problems
    assert f"not {kind}" in only.message


def test_a_rule_that_is_not_a_string_costs_itself_only(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json",
                 '{"permissions": {"deny": ["Bash(rm:*)", 5, null, "Read(./.env)"]}}')
    got = read(path)
    assert got.permissions.deny == ("Bash(rm:*)", "Read(./.env)")
    assert len(got.problems) == 2
    assert {"permissions.deny[1]", "permissions.deny[2]"} <= {
        p.message.split(" ")[0] for p in got.problems}


def test_rules_at_the_top_level_are_said_to_belong_inside_permissions(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json", '{\n  "model": "x",\n  "deny": ["Bash(rm:*)"]\n}')
    got = read(path)
    (only,) = got.problems
    assert only.where == f"{path}:3" and "inside \"permissions\"" in only.message
    assert got.permissions.deny == ()


def test_an_unknown_permissions_key_is_said_and_ignored(tmp_path: Path) -> None:
    got = read(write(tmp_path / "settings.json",
                     '{"permissions": {"allowedTools": ["Bash"], "deny": ["Bash(rm:*)"]}}'))
    (only,) = got.problems
    assert "permissions.allowedTools is not a known key" in only.message
    assert got.permissions.deny == ("Bash(rm:*)",)
    assert merge([got]).of("allow") == ()


@pytest.mark.parametrize(("key", "value"), [
    ("allowManagedPermissionRulesOnly", '"yes"'),
])
def test_a_top_level_switch_of_the_wrong_type_is_said(tmp_path: Path, key: str,
                                                      value: str) -> None:
    got = read(write(tmp_path / "settings.json", f'{{"{key}": {value}}}'))
    (only,) = got.problems
    assert key in only.message and got.managed_rules_only is False


def test_a_misspelt_disable_bypass_is_said_rather_than_silently_ignored(tmp_path: Path) -> None:
    got = read(write(tmp_path / "settings.json",
                     '{"permissions": {"disableBypassPermissionsMode": "disabled"}}'),
               Source.POLICY)
    (only,) = got.problems
    assert "disableBypassPermissionsMode" in only.message


def test_unknown_keys_are_kept_in_extra_and_ignored(tmp_path: Path) -> None:
    data = {"model": "opus", "env": {"A": "1"}, "hooks": {"PreToolUse": []},
            "statusLine": {"type": "command"}, "permissions": {"allow": ["Bash(ls)"]}}
    got = read(write(tmp_path / "settings.json", json.dumps(data)))
    assert got.problems == ()
    assert got.extra == {k: v for k, v in data.items() if k != "permissions"}


@pytest.mark.parametrize("raw", [
    b"{", b"}", b"{{}", b'{"permissions": {"allow": [1, [2], {"3": 4}]}}', b"\x00\x01",
    b'{"permissions": {"defaultMode": 5, "additionalDirectories": "x"}}',
    b'{"permissions": {"allow": null, "deny": {}, "ask": [true]}}',
    b'{"sandbox": "on", "permissions": {"disableBypassPermissionsMode": []}}',
    b'{"sandbox": {"filesystem": {"allowWrite": 3}}}', b'{"a": NaN}', b'\xef\xbb\xbf',
    b'{"permissions": {"allow": ["Bash(ls", "Bash)", "", "WebFetch(x)"]}}',
    b'{"permissions": {"' + b"x" * 10_000 + b'": 1}}',
])
def test_no_settings_text_raises_through_reading_and_merging(raw: bytes) -> None:
    got = parse_settings_text(raw, "/s.json", Source.PROJECT, "/r")
    merged = merge([got])
    assert all(p.where.startswith("/s.json") for p in merged.problems)


def test_random_bytes_never_raise() -> None:
    rng = random.Random(1234)
    alphabet = b'{}[]",:0123456789.-eE truefalsnul\\/\n' + bytes(range(0x80, 0x84))
    for _ in range(300):
        raw = bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 60)))
        merged = merge([parse_settings_text(raw, "/s.json", Source.USER, "/r")])
        # garbage yields problems naming the file, never a rule or a mode
        assert all(str(p).startswith("/s.json") for p in merged.problems), raw
        assert not merged.rules and merged.mode is Mode.DEFAULT, raw


# -- where rules come from -----------------------------------------------------
def test_each_rule_remembers_its_file_and_line() -> None:
    text = '{\n  "permissions": {\n    "allow": [\n      "Bash(ls)"\n    ],\n' \
           '    "deny": ["Read(./.env)"]\n  }\n}'
    merged = merge([parse_settings_text(text.encode(), "/p/.claude/settings.json",
                                        Source.PROJECT, "/p")])
    by_text = {r.text: r for r in merged.rules}
    assert by_text["Bash(ls)"].origin == "/p/.claude/settings.json:4"
    assert by_text["Read(./.env)"].origin == "/p/.claude/settings.json:6"
    assert by_text["Read(./.env)"].root == "/p"


def test_a_rule_from_the_command_line_is_named_as_such() -> None:
    merged = merge([cli_settings(CliPermissions(allowed_tools=("Bash(git log:*) Read",)), "/p")])
    assert [(r.text, r.source, r.origin.split(" ")[0]) for r in merged.rules] == [
        ("Bash(git log:*)", Source.CLI_ARG, "the"), ("Read", Source.CLI_ARG, "the")]
    assert all(r.origin.startswith("the command line") for r in merged.rules)


def test_rule_lists_merge_across_every_source_each_with_its_own() -> None:
    files = [perms(s, allow=[f"Bash(a{s.value})"], deny=[f"Bash(d{s.value})"],
                   ask=[f"Bash(q{s.value})"])
             for s in (Source.USER, Source.PROJECT, Source.LOCAL, Source.CLI_ARG,
                       Source.FLAG, Source.POLICY)]
    merged = merge(files)
    for behavior, letter in (("allow", "a"), ("deny", "d"), ("ask", "q")):
        got = {(r.content, r.source) for r in merged.of(behavior)}  # type: ignore[arg-type]
        assert got == {(f"{letter}{s.value}", s) for s in Source if s is not Source.SESSION}
    assert merged.problems == ()


def test_a_bad_rule_costs_itself_only_and_is_named_with_its_file() -> None:
    merged = merge([perms(Source.USER, deny=["Bash(rm:*)", "Bash(ls", "Frobnicate"])])
    assert [r.text for r in merged.of("deny")] == ["Bash(rm:*)", "Frobnicate"]
    said = messages(merged)
    assert "never closed" in said and "'Frobnicate'" in said
    assert all(p.where.startswith("/userSettings.json") for p in merged.problems)


# -- precedence of single values ---------------------------------------------
ORDER = [Source.POLICY, Source.FLAG, Source.CLI_ARG, Source.LOCAL, Source.PROJECT, Source.USER]
MODE_OF = {Source.POLICY: "plan", Source.FLAG: "dontAsk", Source.CLI_ARG: "acceptEdits",
           Source.LOCAL: "plan", Source.PROJECT: "dontAsk", Source.USER: "acceptEdits"}


@pytest.mark.parametrize("present", [
    ORDER, ORDER[1:], ORDER[2:], ORDER[3:], ORDER[4:], ORDER[5:],
    [Source.USER, Source.POLICY], [Source.PROJECT, Source.LOCAL], [Source.USER, Source.FLAG],
    [Source.PROJECT, Source.CLI_ARG],
])
def test_the_mode_comes_from_the_highest_source_that_sets_one(present: list[Source]) -> None:
    files = [perms(s, defaultMode=MODE_OF[s]) for s in present]
    random.Random(len(present)).shuffle(files)        # file order means nothing
    merged = merge(files)
    top = max(present)
    assert (merged.mode, merged.mode_source) == (Mode(MODE_OF[top]), top)


def test_no_mode_anywhere_is_the_default_mode() -> None:
    merged = merge([perms(Source.USER, allow=["Bash(ls)"])])
    assert (merged.mode, merged.mode_source) == (Mode.DEFAULT, None)


def test_a_mode_is_read_whatever_its_case() -> None:
    assert merge([perms(Source.USER, defaultMode="AcceptEdits")]).mode is Mode.ACCEPT_EDITS


def test_a_bad_mode_from_a_higher_source_leaves_the_next_one() -> None:
    merged = merge([perms(Source.USER, defaultMode="plan"),
                    cli_settings(CliPermissions(permission_mode="yolo"), "/p")])
    assert (merged.mode, merged.mode_source) == (Mode.PLAN, Source.USER)
    assert "'yolo' is not a mode" in messages(merged)


@pytest.mark.parametrize("source", [Source.PROJECT, Source.LOCAL])
def test_a_repository_cannot_choose_bypass_permissions(source: Source) -> None:
    merged = merge([perms(Source.USER, defaultMode="acceptEdits"),
                    perms(source, defaultMode="bypassPermissions")])
    assert (merged.mode, merged.mode_source) == (Mode.ACCEPT_EDITS, Source.USER)
    (only,) = merged.problems
    assert "repository" in only.message and only.where == f"/{source.label}.json"


@pytest.mark.parametrize("source", [Source.USER, Source.CLI_ARG, Source.FLAG, Source.POLICY])
def test_bypass_permissions_is_taken_from_a_source_outside_the_repository(
        source: Source) -> None:
    merged = merge([perms(source, defaultMode="bypassPermissions")])
    assert (merged.mode, merged.mode_source) == (Mode.BYPASS, source)


@pytest.mark.parametrize("value", ["disable", True])
@pytest.mark.parametrize("source", [Source.USER, Source.PROJECT, Source.LOCAL,
                                    Source.CLI_ARG, Source.FLAG, Source.POLICY])
def test_a_policy_disabling_bypass_refuses_it_from_every_source(source: Source,
                                                                value: object) -> None:
    policy = {"disableBypassPermissionsMode": value}
    if source is Source.POLICY:
        policy["defaultMode"] = "bypassPermissions"
    files = [perms(Source.POLICY, **policy), perms(source, defaultMode="bypassPermissions")]
    if source not in (Source.USER, Source.POLICY):
        files.append(perms(Source.USER, defaultMode="plan"))
    merged = merge(files)
    assert merged.bypass_disabled
    # the next source down decides, or the default
    assert merged.mode is (Mode.PLAN if source not in (Source.USER, Source.POLICY)
                           else Mode.DEFAULT)
    assert "bypassPermissions" in messages(merged)


def test_disable_bypass_binds_from_any_source_since_it_only_narrows() -> None:
    merged = merge([perms(Source.USER, disableBypassPermissionsMode="disable"),
                    perms(Source.POLICY, defaultMode="bypassPermissions")])
    assert merged.bypass_disabled and merged.mode is Mode.DEFAULT


# -- additionalDirectories -----------------------------------------------------
def test_additional_directories_are_resolved_against_the_settings_root(tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    write(project / ".claude/settings.json", json.dumps({"permissions": {
        "additionalDirectories": ["../shared", "sub/dir", "/abs/path", "~/notes", "./x/../y"]}}))
    write(home / ".claude/settings.json", json.dumps({"permissions": {
        "additionalDirectories": ["docs", "../../elsewhere"]}}))
    merged = merge(discover(str(project), str(home), CliPermissions(add_dirs=("cli-dir",)),
                            managed_dirs=[]))
    # the project's own outside the project are refused (a cloned repository
    # must not add working directories); the user's and the flags' are kept
    assert set(merged.additional_dirs) == {
        str(project / "sub/dir"), str(project / "y"), str(home / "docs"),
        str(tmp_path.parent / "elsewhere"), str(project / "cli-dir")}
    refused = [p.message for p in merged.problems if "outside the project" in p.message]
    assert len(refused) == 3  # ../shared, /abs/path, ~/notes


def test_a_repository_cannot_add_a_directory_through_a_link(tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    home.mkdir()
    project.mkdir()
    (project / "link").symlink_to(home)
    write(project / ".claude/settings.json",
          json.dumps({"permissions": {"additionalDirectories": ["./link"]}}))
    merged = merge(discover(str(project), str(home), CliPermissions(), managed_dirs=[]))
    assert merged.additional_dirs == () and merged.problems


@pytest.mark.parametrize("rule", ["Bash", "Bash(*)", "Bash(**)", "Bash(* *)", "Edit", "Write"])
def test_a_repository_cannot_allow_every_call_of_a_tool_that_changes_things(
        tmp_path: Path, rule: str) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    write(project / ".claude/settings.local.json",
          json.dumps({"permissions": {"allow": [rule, "Bash(npm test:*)", "Read"]}}))
    write(home / ".claude/settings.json", json.dumps({"permissions": {"allow": [rule]}}))
    merged = merge(discover(str(project), str(home), CliPermissions(), managed_dirs=[]))
    kept = [(r.text, r.source) for r in merged.of("allow")]
    assert (rule if rule in ("Edit", "Write") else "Bash", Source.LOCAL) not in kept
    assert ("Bash(npm test:*)", Source.LOCAL) in kept and ("Read", Source.LOCAL) in kept
    assert any(r.source is Source.USER for r in merged.of("allow"))  # the user's own holds


@pytest.mark.parametrize("key", ["enabled", "autoAllowBashIfSandboxed"])
def test_a_repository_cannot_switch_on_the_sandbox_auto_allow(tmp_path: Path, key: str) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    write(project / ".claude/settings.json", json.dumps({"sandbox": {key: True}}))
    merged = merge(discover(str(project), str(home), CliPermissions(), managed_dirs=[]))
    assert not merged.sandbox.enabled and merged.problems


def test_a_tilde_directory_is_the_sessions_home_not_the_process_home(tmp_path: Path) -> None:
    """The bug: merge expanded `~` with $HOME, whatever home the session had."""
    home = tmp_path / "home"
    write(home / ".claude/settings.json",
          json.dumps({"permissions": {"additionalDirectories": ["~", "~/notes"]}}))
    merged = merge(discover(str(tmp_path / "proj"), str(home),
                            CliPermissions(add_dirs=("~/cli",)), managed_dirs=[]))
    assert set(merged.additional_dirs) == {str(home), str(home / "notes"), str(home / "cli")}


def test_the_same_directory_from_two_sources_is_listed_once() -> None:
    merged = merge([perms(Source.USER, additionalDirectories=["/x"]),
                    perms(Source.PROJECT, additionalDirectories=["/x/"])])
    assert merged.additional_dirs == ("/x",)


# -- which files are read ----------------------------------------------------------
def test_discover_reads_every_source_highest_first(tmp_path: Path) -> None:
    project, home, managed = tmp_path / "proj", tmp_path / "home", tmp_path / "etc"
    paths = {
        Source.POLICY: write(managed / "managed-settings.json", "{}"),
        Source.FLAG: write(tmp_path / "flag.json", "{}"),
        Source.LOCAL: write(project / ".claude/settings.local.json", "{}"),
        Source.PROJECT: write(project / ".claude/settings.json", "{}"),
        Source.USER: write(home / ".claude/settings.json", "{}"),
    }
    extra = [write(project / ".shellgate/settings.local.json", "{}"),
             write(project / ".shellgate/settings.json", "{}"),
             write(home / ".config/shellgate/settings.json", "{}")]
    found = discover(str(project), str(home),
                     CliPermissions(settings_file=str(tmp_path / "flag.json")),
                     managed_dirs=[str(managed)])
    assert [f.source for f in found] == sorted((f.source for f in found), reverse=True)
    assert [(f.source, f.path) for f in found] == [
        (Source.POLICY, str(paths[Source.POLICY])), (Source.FLAG, str(paths[Source.FLAG])),
        (Source.CLI_ARG, "the command line"),
        (Source.LOCAL, str(paths[Source.LOCAL])), (Source.LOCAL, str(extra[0])),
        (Source.PROJECT, str(paths[Source.PROJECT])), (Source.PROJECT, str(extra[1])),
        (Source.USER, str(paths[Source.USER])), (Source.USER, str(extra[2]))]
    assert all(f.problems == () for f in found)


def test_discover_with_no_files_is_the_command_line_alone(tmp_path: Path) -> None:
    found = discover(str(tmp_path / "p"), str(tmp_path / "h"), CliPermissions(),
                     managed_dirs=[str(tmp_path / "nothing")])
    assert [f.source for f in found] == [Source.CLI_ARG]


def test_a_settings_flag_naming_no_file_is_a_problem(tmp_path: Path) -> None:
    found = discover(str(tmp_path), str(tmp_path), CliPermissions(settings_file="nope.json"),
                     managed_dirs=[])
    flag = next(f for f in found if f.source is Source.FLAG)
    assert "does not exist" in messages(flag)


def test_a_settings_flag_on_a_claude_folder_anchors_where_the_project_would(
        tmp_path: Path) -> None:
    """The bug: `--settings .claude/settings.json` anchored `/secrets` at
    `.claude/secrets`, the same file read as the project's at `secrets`."""
    project = tmp_path / "proj"
    path = write(project / ".claude/settings.json",
                 '{"permissions": {"deny": ["Read(/secrets/**)"]}}')
    found = discover(str(project), str(tmp_path / "home"),
                     CliPermissions(settings_file=str(path)), managed_dirs=[])
    roots = {f.source: f.root for f in found}
    assert roots[Source.FLAG] == roots[Source.PROJECT] == str(project)


@pytest.mark.parametrize(("path", "root"), [
    ("/p/.claude/settings.json", "/p"),
    ("/p/.claude/settings.local.json", "/p"),
    ("/p/.shellgate/settings.json", "/p"),
    ("/home/u/.claude/settings.json", "/home/u"),
    ("/home/u/.config/shellgate/settings.json", "/home/u"),
    ("/etc/shellgate/managed-settings.json", "/etc/shellgate"),
    ("/etc/shellgate/managed-settings.d/10-a.json", "/etc/shellgate/managed-settings.d"),
    ("/tmp/flags.json", "/tmp"),
    ("/.claude/settings.json", "/"),
])
def test_settings_root_is_the_folder_holding_claude_or_the_files_own(path: str,
                                                                   root: str) -> None:
    assert settings_root(path) == root


# -- managed settings ----------------------------------------------------------------
def managed(tmp_path: Path, files: dict[str, Any]) -> str:
    folder = tmp_path / "managed"
    for name, data in files.items():
        write(folder / name, data if isinstance(data, str) else json.dumps(data))
    return str(folder)


def test_managed_drop_ins_are_read_in_name_order_after_the_base_file(tmp_path: Path) -> None:
    folder = managed(tmp_path, {"managed-settings.json": {},
                                "managed-settings.d/20-b.json": {},
                                "managed-settings.d/10-a.json": {},
                                "managed-settings.d/.hidden.json": {},
                                "managed-settings.d/notes.txt": "x"})
    assert [Path(p).name for p in managed_files([folder])] == [
        "managed-settings.json", "10-a.json", "20-b.json"]


def test_a_later_drop_in_wins_a_single_value(tmp_path: Path) -> None:
    """The bug: the base file (and 10-a over 20-b) won: drop-ins go on top
    of managed-settings.json in name order, the later file winning."""
    folder = managed(tmp_path, {
        "managed-settings.json": {"permissions": {"defaultMode": "acceptEdits"}},
        "managed-settings.d/10-a.json": {"permissions": {"defaultMode": "plan"}},
        "managed-settings.d/20-b.json": {"permissions": {"defaultMode": "dontAsk"}}})
    merged = merge(discover(str(tmp_path / "p"), str(tmp_path / "h"), CliPermissions(),
                            managed_dirs=[folder]))
    assert (merged.mode, merged.mode_source) == (Mode.DONT_ASK, Source.POLICY)


def test_a_later_drop_in_wins_a_sandbox_switch(tmp_path: Path) -> None:
    folder = managed(tmp_path, {
        "managed-settings.json": {"sandbox": {"enabled": True}},
        "managed-settings.d/50-off.json": {"sandbox": {"enabled": False}}})
    merged = merge(discover(str(tmp_path / "p"), str(tmp_path / "h"), CliPermissions(),
                            managed_dirs=[folder]))
    assert merged.sandbox.enabled is False


def test_managed_rules_only_keeps_every_policy_file_and_drops_other_allows(
        tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    folder = managed(tmp_path, {
        "managed-settings.json": {"allowManagedPermissionRulesOnly": True,
                                  "permissions": {"allow": ["Bash(make:*)"]}},
        "managed-settings.d/10-a.json": {"permissions": {"allow": ["Bash(npm test)"]}},
        "managed-settings.d/20-b.json": {"permissions": {"deny": ["Bash(curl:*)"]}}})
    write(project / ".claude/settings.json", json.dumps({"permissions": {
        "allow": ["Bash(rm:*)", "Edit"], "deny": ["Read(./.env)"], "ask": ["Bash(git push:*)"]}}))
    write(home / ".claude/settings.json", json.dumps({"permissions": {"allow": ["Bash"]}}))
    merged = merge(discover(str(project), str(home),
                            CliPermissions(allowed_tools=("Write",)), managed_dirs=[folder]))
    assert merged.managed_only
    assert {(r.text, r.source) for r in merged.of("allow")} == {
        ("Bash(make:*)", Source.POLICY), ("Bash(npm test)", Source.POLICY)}
    assert {r.text for r in merged.of("deny")} == {"Bash(curl:*)", "Read(./.env)"}
    assert {r.text for r in merged.of("ask")} == {"Bash(git push:*)"}
    assert "4 allow rule(s) from other sources ignored" in messages(merged)


def test_managed_rules_only_outside_the_policy_means_nothing() -> None:
    merged = merge([layer(Source.USER, {"allowManagedPermissionRulesOnly": True,
                                        "permissions": {"allow": ["Bash(ls)"]}})])
    assert not merged.managed_only and [r.text for r in merged.of("allow")] == ["Bash(ls)"]


def test_a_broken_drop_in_costs_itself_only(tmp_path: Path) -> None:
    folder = managed(tmp_path, {
        "managed-settings.json": {"permissions": {"deny": ["Bash(curl:*)"]}},
        "managed-settings.d/10-broken.json": '{"permissions": {"deny": [,]}}'})
    merged = merge(discover(str(tmp_path / "p"), str(tmp_path / "h"), CliPermissions(),
                            managed_dirs=[folder]))
    assert [r.text for r in merged.of("deny")] == ["Bash(curl:*)"]
    (only,) = merged.problems
    assert "10-broken.json:1:" in only.where


# -- the sandbox key -------------------------------------------------------------------
def sandbox(*layers: tuple[Source, dict[str, Any]]) -> PermissionSettings:
    return merge([layer(s, {"sandbox": data}) for s, data in layers])


def test_sandbox_switches_are_closed_by_any_source_and_lists_add_up() -> None:
    """The user's `autoAllowBashIfSandboxed: false` holds against a
    `--settings` file's `true`, though the flag's source is higher."""
    merged = sandbox(
        (Source.USER, {"enabled": True, "autoAllowBashIfSandboxed": False,
                       "filesystem": {"allowWrite": ["/u"], "denyRead": ["/ur"]},
                       "network": {"allowedDomains": ["u.com"]}}),
        (Source.FLAG, {"autoAllowBashIfSandboxed": True,
                       "filesystem": {"allowWrite": ["/f"], "denyWrite": ["/fw"]},
                       "network": {"allowedDomains": ["f.com"], "deniedDomains": ["x.com"]}}),
        (Source.POLICY, {"enabled": False}))
    sb = merged.sandbox
    assert (sb.enabled, sb.auto_allow_bash_if_sandboxed) == (False, False)
    assert sb.filesystem.allow_write == ("/u", "/f")
    assert (sb.filesystem.deny_read, sb.filesystem.deny_write) == (("/ur",), ("/fw",))
    assert sb.network.allowed_domains == ("u.com", "f.com")
    assert sb.network.denied_domains == ("x.com",)
    assert merged.problems == ()


#: each switch that widens at one value, with its closed value
CLOSED_SWITCHES = [
    ({"allowUnsandboxedCommands": False}, {"allowUnsandboxedCommands": True},
     "allow_unsandboxed_commands", False),
    ({"autoAllowBashIfSandboxed": False}, {"autoAllowBashIfSandboxed": True},
     "auto_allow_bash_if_sandboxed", False),
    ({"enabled": False}, {"enabled": True}, "enabled", False),
    ({"network": {"allowUnixSockets": False}}, {"network": {"allowUnixSockets": True}},
     "allow_unix_sockets", False),
]


@pytest.mark.parametrize(("closed", "opened", "field", "value"), CLOSED_SWITCHES)
@pytest.mark.parametrize("opener", [Source.PROJECT, Source.LOCAL, Source.FLAG, Source.POLICY])
def test_a_switch_the_user_closed_stays_closed_whoever_opens_it(
        closed: dict[str, Any], opened: dict[str, Any], field: str, value: bool,
        opener: Source) -> None:
    """From a review: a repository's `allowUnsandboxedCommands: true` re-opened
    what the user's settings closed (the project's file is of higher
    precedence). A closed switch now wins from any source."""
    merged = sandbox((Source.USER, closed), (opener, opened))
    sb = merged.sandbox
    got = sb.network.allow_unix_sockets if field == "allow_unix_sockets" else getattr(sb, field)
    assert got is value


@pytest.mark.parametrize("source", [Source.PROJECT, Source.LOCAL])
def test_a_repository_cannot_open_a_switch_no_one_closed(source: Source) -> None:
    merged = sandbox((source, {"allowUnsandboxedCommands": True, "enabled": True,
                               "autoAllowBashIfSandboxed": True}))
    sb = merged.sandbox
    assert sb.allow_unsandboxed_commands is None and sb.enabled is None
    assert sb.auto_allow_bash_if_sandboxed is None
    assert {p.message.split(":")[0] for p in merged.problems} == {
        "sandbox.allowUnsandboxedCommands", "sandbox.enabled", "sandbox.autoAllowBashIfSandboxed"}


@pytest.mark.parametrize("source", [Source.PROJECT, Source.LOCAL])
@pytest.mark.parametrize(("data", "key"), [
    ({"filesystem": {"allowWrite": ["/"]}}, "sandbox.filesystem.allowWrite"),
    ({"network": {"allowedDomains": ["*"]}}, "sandbox.network.allowedDomains"),
    ({"network": {"allowUnixSockets": True}}, "sandbox.network.allowUnixSockets"),
    ({"excludedCommands": ["bash"]}, "sandbox.excludedCommands"),
])
def test_a_repository_cannot_widen_the_sandbox(source: Source, data: dict[str, Any],
                                               key: str) -> None:
    merged = sandbox((Source.USER, {"filesystem": {"denyRead": ["/secret"]}}), (source, data))
    sb = merged.sandbox
    assert sb.filesystem.allow_write == () and sb.network.allowed_domains == ()
    assert sb.network.allow_unix_sockets is False and sb.excluded_commands == ()
    assert sb.filesystem.deny_read == ("/secret",)
    (only,) = merged.problems
    assert only.where == f"/{source.label}.json" and key in only.message


def test_a_repository_may_narrow_the_sandbox() -> None:
    merged = sandbox((Source.PROJECT, {"filesystem": {"denyRead": ["/p"], "denyWrite": ["/w"],
                                                      "allowWrite": []},
                                       "network": {"deniedDomains": ["evil.com"],
                                                   "allowUnixSockets": False}}))
    sb = merged.sandbox
    assert sb.filesystem.deny_read == ("/p",) and sb.network.denied_domains == ("evil.com",)
    assert merged.problems == ()


def test_allow_secret_writes_globs_add_up_across_sources() -> None:
    merged = sandbox((Source.USER, {"filesystem": {"allowSecretWrites": ["*.local.env"]}}),
                     (Source.FLAG, {"filesystem": {"allowSecretWrites": ["~/creds/**"]}}))
    assert merged.sandbox.filesystem.allow_secret_writes == ("*.local.env", "~/creds/**")
    assert merged.problems == ()


@pytest.mark.parametrize("source", [Source.USER, Source.CLI_ARG, Source.FLAG, Source.POLICY])
def test_a_source_outside_the_repository_may_widen_the_sandbox(source: Source) -> None:
    merged = sandbox((source, {"filesystem": {"allowWrite": ["/data"]},
                               "excludedCommands": ["docker"]}))
    assert merged.sandbox.filesystem.allow_write == ("/data",)
    assert merged.sandbox.excluded_commands == ("docker",)


def test_a_higher_source_can_switch_unix_sockets_off_again() -> None:
    """The bug: `false` equals the default and was dropped before the merge,
    so the policy's `false` could not override the user's `true`."""
    merged = sandbox((Source.USER, {"network": {"allowUnixSockets": True}}),
                     (Source.POLICY, {"network": {"allowUnixSockets": False}}))
    assert merged.sandbox.network.allow_unix_sockets is False


def test_an_invalid_sandbox_key_costs_that_files_sandbox_only() -> None:
    merged = sandbox((Source.USER, {"filesystem": {"denyRead": ["/u"]}}),
                     (Source.PROJECT, {"filesystem": "everything"}))
    assert merged.sandbox.filesystem.deny_read == ("/u",)
    (only,) = merged.problems
    assert only.where == "/projectSettings.json" and "sandbox key is ignored" in only.message


def test_an_explicit_null_in_a_higher_sandbox_overrides_nothing() -> None:
    merged = sandbox((Source.USER, {"enabled": True, "limits": {"memory": "1G"}}),
                     (Source.PROJECT, {"enabled": None, "limits": {"memory": None}}))
    assert merged.sandbox.enabled is True
    # limits are kept per source (each only lowers); the null one sets none
    assert [lim.limits.memory for lim in merged.sandbox_limits] == ["1G"]


# -- --allowedTools ----------------------------------------------------------------------
@pytest.mark.parametrize(("values", "expected"), [
    (["Bash(git log:*) Read,Edit"], ("Bash(git log:*)", "Read", "Edit")),
    (["Bash(git log:*)", "Read", "Edit"], ("Bash(git log:*)", "Read", "Edit")),
    (["Read, Edit ,  Write"], ("Read", "Edit", "Write")),
    (["Bash(echo a, b) Read"], ("Bash(echo a, b)", "Read")),
    (["Bash(npm run build -- --x=1,2)"], ("Bash(npm run build -- --x=1,2)",)),
    (["Bash(echo (a b), c),Edit"], ("Bash(echo (a b), c)", "Edit")),
    ([r"Bash(echo \( a),Edit"], (r"Bash(echo \( a)", "Edit")),
    ([r"Bash(echo \) a) Read"], (r"Bash(echo \) a)", "Read")),
    (["mcp__srv__tool,WebFetch(domain:x.com)"], ("mcp__srv__tool", "WebFetch(domain:x.com)")),
    (["  ", ",,", ""], ()),
    (["Read\tEdit\nWrite"], ("Read", "Edit", "Write")),
    (["Bash(ls", "Read"], ("Bash(ls", "Read")),      # an unclosed rule stays one (a problem later)
    (["Bash) Read"], ("Bash)", "Read")),
])
def test_split_tool_list_splits_on_commas_and_spaces_outside_parentheses(
        values: list[str], expected: tuple[str, ...]) -> None:
    assert split_tool_list(values) == expected


def test_command_line_tools_become_cli_arg_rules() -> None:
    cli = CliPermissions(allowed_tools=("Bash(git log:*) Read",),
                         disallowed_tools=("Bash(rm:*),WebFetch",),
                         permission_mode="plan", add_dirs=("../lib",))
    merged = merge([cli_settings(cli, "/p/proj")])
    assert [r.text for r in merged.of("allow")] == ["Bash(git log:*)", "Read"]
    assert [r.text for r in merged.of("deny")] == ["Bash(rm:*)", "WebFetch"]
    assert all(isinstance(r, Rule) and r.source is Source.CLI_ARG for r in merged.rules)
    assert (merged.mode, merged.mode_source) == (Mode.PLAN, Source.CLI_ARG)
    assert merged.additional_dirs == ("/p/lib",)



def test_user_settings_reached_through_a_link_into_the_project_are_a_repositorys(
        tmp_path: Path) -> None:
    """From a review: ~/.claude/settings.json a link into the project (a
    dotfiles checkout); a sandboxed command rewrote it, and the next session
    obeyed it as the user's own. Read as a repository's file, it may not
    allow every Bash call; its hooks wait for trust."""
    project = tmp_path / "project"
    (project / "dotfiles").mkdir(parents=True)
    (project / "dotfiles" / "claude.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x"}]}]}}))
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").symlink_to(project / "dotfiles" / "claude.json")
    merged = merge(discover(str(project), str(home), CliPermissions(), managed_dirs=[]))
    assert not [r for r in merged.rules if r.text == "Bash" and r.behavior == "allow"]
    assert merged.hooks == () and len(merged.repository_hooks) == 1
    # the control: the same file in the home itself is the user's
    (home / ".claude" / "settings.json").unlink()
    (home / ".claude" / "settings.json").write_text(
        (project / "dotfiles" / "claude.json").read_text())
    merged = merge(discover(str(project), str(home), CliPermissions(), managed_dirs=[]))
    assert [r for r in merged.rules if r.text == "Bash" and r.behavior == "allow"]
    assert len(merged.hooks) == 1
