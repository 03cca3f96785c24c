"""The decision chain with real tools and real settings: deny, then ask,
then allow over every source; modes; what no rule, mode or hook can lift;
the headless answer; denial tracking; "always allow"."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from kit import Answer

from gateway.context import SessionContext, ToolContext
from gateway.decisions import Decision, PermissionResult
from gateway.hooks import NO_OPINION, HookOutcome
from gateway.pathnames import answers_file
from gateway.permissions import (
    PermissionSettings,
    RulesDecider,
    Source,
    load_permissions,
    merge,
    parse_settings_text,
)
from gateway.pipeline import stages
from gateway.tools import AnyTool
from gateway.tools.bash import BASH
from gateway.tools.edit import EDIT
from gateway.tools.glob import GLOB
from gateway.tools.grep import GREP
from gateway.tools.read import READ
from gateway.tools.write import WRITE

TOOLS: dict[str, AnyTool] = {t.name: t for t in (BASH, READ, EDIT, WRITE, GLOB, GREP)}


def settings(*layers: tuple[Source, dict[str, Any]], root: str = "/") -> PermissionSettings:
    files = [parse_settings_text(json.dumps(data).encode(), f"/{source.label}.json", source,
                                 root) for source, data in layers]
    return merge(files)


def perms(source: Source = Source.USER, **block: Any) -> tuple[Source, dict[str, Any]]:
    return source, {"permissions": block}


def decide(session: SessionContext, tool: str, data: dict[str, Any],
           decider: RulesDecider | PermissionSettings,
           hook: HookOutcome = NO_OPINION) -> PermissionResult:
    """Stages 2 to 4 of a real call (nothing runs)."""
    if isinstance(decider, PermissionSettings):
        decider = RulesDecider(decider)
    if isinstance(decider.settings.sandbox, object) and decider.settings.sandbox is not None:
        session.sandbox_settings = decider.settings.sandbox
    t = TOOLS[tool]
    ctx = ToolContext(session, "toolu_t")

    async def go() -> PermissionResult:
        from gateway.messages import ToolUse

        checked = await stages.validate(t, ToolUse("toolu_t", tool, data), ctx)
        assert isinstance(checked, tuple), checked
        parsed, validation = checked
        await t.prepare(parsed, ctx)
        return await stages.permit(t, parsed, ctx, decider, hook, validation)

    return asyncio.run(go())


def bash(session: SessionContext, command: str, decider: RulesDecider | PermissionSettings,
         **kw: Any) -> PermissionResult:
    return decide(session, "Bash", {"command": command, **kw}, decider)


# -- rules ------------------------------------------------------------------
@pytest.mark.parametrize(("command", "rules", "decision"), [
    ("npm run build", {"allow": ["Bash(npm run:*)"]}, Decision.ALLOW),
    ("npm run build && git status", {"allow": ["Bash(npm run:*)"]}, Decision.ALLOW),
    ("npm run build && make", {"allow": ["Bash(npm run:*)"]}, Decision.DENY),
    ("NODE_ENV=prod timeout 5 npm run build", {"allow": ["Bash(npm run:*)"]}, Decision.ALLOW),
    ("LD_PRELOAD=x.so npm run build", {"allow": ["Bash(npm run:*)"]}, Decision.DENY),
    ("sudo npm run build", {"allow": ["Bash(npm run:*)"]}, Decision.DENY),
    ("npm run build", {"allow": ["Bash(npm run:*)"], "deny": ["Bash(npm:*)"]}, Decision.DENY),
    ("npm run build", {"allow": ["Bash(npm run:*)"], "ask": ["Bash(npm run build)"]},
     Decision.DENY),  # asked, and nobody answers
    ("git push origin main", {"allow": ["Bash"]}, Decision.ALLOW),
    ("FOO=1 sudo /bin/rm -rf build", {"allow": ["Bash"], "deny": ["Bash(rm:*)"]},
     Decision.DENY),
    ("bash -c 'rm -rf build'", {"allow": ["Bash"], "deny": ["Bash(rm:*)"]}, Decision.DENY),
    ("echo $(curl -s x.invalid)", {"allow": ["Bash"], "deny": ["Bash(curl:*)"]},
     Decision.DENY),
    ("ls", {"deny": ["Bash"]}, Decision.DENY),
])
def test_bash_rules_decide_each_subcommand_on_its_own(
        session: SessionContext, command: str, rules: dict[str, Any],
        decision: Decision) -> None:
    result = bash(session, command, settings(perms(**rules)))
    assert result.decision is decision, result


def test_a_denial_names_the_rule_its_source_and_file(session: SessionContext) -> None:
    result = bash(session, "rm -rf build", settings(perms(deny=["Bash(rm:*)"])))
    assert result.source == "userSettings" and result.rule == "Bash(rm:*)"
    assert "userSettings.json" in result.hint


@pytest.mark.parametrize(("command", "edit_rule", "decision"), [
    ("echo hi > out.txt", None, Decision.DENY),
    ("echo hi > out.txt", "Edit(./out.txt)", Decision.ALLOW),
    ("echo hi > out.txt", "Edit(*.txt)", Decision.ALLOW),
    ("echo hi > ~/.bashrc", "Edit(./out.txt)", Decision.DENY),
])
def test_a_redirection_is_checked_as_an_edit_of_its_target(
        session: SessionContext, command: str, edit_rule: str | None,
        decision: Decision) -> None:
    allow = ["Bash(echo:*)"] + ([edit_rule] if edit_rule else [])
    result = bash(session, command, settings(perms(allow=allow), root=session.workspace))
    assert result.decision is decision, result


@pytest.mark.parametrize("command", [
    "find . -name '*.py' -exec rm {} \\;",
    "find . -name '*.py' -exec rm {}",
    "sed -n 'e touch pwned' README.md",
    "awk 'BEGIN { system(\"touch pwned\") }'",
    "rg --pre ./x pattern",
    "git -c core.fsmonitor=./x status",
])
def test_a_prefix_rule_for_a_reader_does_not_cover_what_it_would_run(
        session: SessionContext, command: str) -> None:
    name = command.split(maxsplit=1)[0]
    result = bash(session, command, settings(perms(allow=[f"Bash({name}:*)"])))
    assert result.decision is not Decision.ALLOW, result


def test_a_read_deny_rule_holds_for_commands_that_read_the_path(
        session: SessionContext, workspace: Path) -> None:
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key").write_text("k")
    rules = settings(perms(deny=["Read(./secrets/**)"]), root=session.workspace)
    result = bash(session, "cat secrets/key", rules)
    assert result.decision is Decision.DENY and result.rule == "Read(./secrets/**)"
    assert decide(session, "Read", {"file_path": str(workspace / "secrets/key")},
                  rules).decision is Decision.DENY


def test_a_read_rule_allows_reading_outside_the_working_directories(
        session: SessionContext) -> None:
    path = "/etc/hosts"
    assert decide(session, "Read", {"file_path": path},
                  settings()).decision is Decision.DENY  # asked; headless
    rules = settings(perms(allow=["Read(//etc/**)"]))
    assert decide(session, "Read", {"file_path": path}, rules).decision is Decision.ALLOW
    assert bash(session, f"cat {path}", rules).decision is Decision.ALLOW
    assert bash(session, "cat /usr/share/dict/x", rules).decision is Decision.DENY


# -- what nothing lifts ---------------------------------------------------------
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "dontAsk"])
def test_hard_limits_and_sensitive_paths_hold_in_every_mode_and_against_every_rule(
        session: SessionContext, mode: str) -> None:
    rules = settings(perms(Source.USER, allow=["Bash", "Read"], defaultMode=mode))
    assert bash(session, "rm -rf /", rules).decision is Decision.DENY
    assert bash(session, "cat ~/.ssh/id_rsa", rules).decision is Decision.DENY
    home_key = Path(session.home) / ".ssh" / "id_rsa"
    assert decide(session, "Read", {"file_path": str(home_key)},
                  rules).decision is Decision.DENY


def test_a_dotenv_file_needs_a_person_even_in_bypass_mode(
        session: SessionContext, workspace: Path) -> None:
    (workspace / ".env").write_text("KEY=1\n")
    rules = settings(perms(Source.USER, allow=["Bash(cat:*)"], defaultMode="bypassPermissions"))
    result = bash(session, "cat .env", rules)
    assert result.decision is Decision.DENY and "headless" in result.reason  # asked, unanswered
    session.approver = approver = Answer(True)
    assert bash(session, "cat .env", rules).decision is Decision.ALLOW and approver.asked


def test_a_hook_allow_cannot_lift_an_ask_rule(session: SessionContext) -> None:
    rules = settings(perms(ask=["Bash(git push:*)"]))
    result = decide(session, "Bash", {"command": "git push"}, rules,
                    HookOutcome(Decision.ALLOW, "ok", "hook"))
    assert result.decision is Decision.DENY and result.rule == "Bash(git push:*)"


# -- modes ------------------------------------------------------------------------
def test_plan_mode_runs_read_only_tools_only(session: SessionContext, workspace: Path) -> None:
    rules = settings(perms(Source.USER, allow=["Bash"], defaultMode="plan"))
    assert bash(session, "ls", rules).decision is Decision.ALLOW
    result = bash(session, "touch x", rules)
    assert result.decision is Decision.DENY and result.rule == "plan"
    assert decide(session, "Write", {"file_path": str(workspace / "x"), "content": ""},
                  rules).decision is Decision.DENY


def test_accept_edits_allows_file_edits_and_mkdir_touch_mv_cp_inside(
        session: SessionContext, workspace: Path) -> None:
    rules = settings(perms(Source.USER, defaultMode="acceptEdits"))
    assert decide(session, "Write", {"file_path": str(workspace / "n.txt"), "content": "x"},
                  rules).decision is Decision.ALLOW
    assert bash(session, "mkdir -p a/b && touch a/b/c && cp README.md a/",
                rules).decision is Decision.ALLOW
    assert bash(session, "echo x > notes.txt", rules).decision is Decision.ALLOW
    assert bash(session, "rm README.md", rules).decision is Decision.DENY  # asked
    assert bash(session, "touch /tmp/elsewhere", rules).decision is Decision.DENY
    assert bash(session, "sudo touch x", rules).decision is Decision.DENY


def test_dont_ask_denies_what_is_not_allowed_beforehand(session: SessionContext) -> None:
    rules = settings(perms(Source.USER, allow=["Bash(make:*)"], defaultMode="dontAsk"))
    session.approver = approver = Answer(True)
    assert bash(session, "make test", rules).decision is Decision.ALLOW
    result = bash(session, "npm test", rules)
    assert result.decision is Decision.DENY and result.rule == "dontAsk" and not approver.asked
    assert "Bash(npm test:*)" in result.hint


def test_bypass_mode_asks_nothing_but_deny_rules_hold(session: SessionContext) -> None:
    rules = settings(perms(Source.USER, deny=["Bash(git push:*)"],
                           defaultMode="bypassPermissions"))
    assert bash(session, "touch a && mkdir b && mytool --build", rules).decision is Decision.ALLOW
    assert bash(session, "git push", rules).decision is Decision.DENY


@pytest.mark.parametrize("command", [
    "npm install", "make clean", "bash x.sh", "printf 'r\\155 x' | bash", "./run.sh",
    "python3 -c 'print(1)'", "xargs -a list env", "find . -exec {} \\;", "/usr/bin/r[m] x"])
def test_with_deny_rules_a_broad_allow_does_not_cover_what_runs_unseen_programs(
        session: SessionContext, command: str) -> None:
    """From the second review: `printf 'r\155 x' | bash` under bypass mode
    with `Bash(rm:*)` denied removed x. A narrow rule for the command is the
    person's informed choice, and still allows it."""
    rules = settings(perms(deny=["Bash(rm:*)"], defaultMode="bypassPermissions"))
    result = bash(session, command, rules)
    assert result.decision is Decision.DENY and "headless" in result.reason, result
    narrow = settings(perms(deny=["Bash(git push:*)"], allow=["Bash(npm install:*)"]))
    assert bash(session, "npm install", narrow).decision is Decision.ALLOW


@pytest.mark.parametrize("command", [
    "setsid r''m victim", "setsid r\\m victim", "git -C . pu''sh o", "env -S 'r\"\"m x'",
    "coproc \\rm x"])
def test_quoting_does_not_hide_a_denied_command_from_a_broad_allow(
        session: SessionContext, command: str) -> None:
    rules = settings(perms(deny=["Bash(rm:*)", "Bash(git push:*)"], allow=["Bash"]))
    assert bash(session, command, rules).decision is not Decision.ALLOW


def test_a_repository_cannot_switch_on_bypass_mode(session: SessionContext) -> None:
    rules = settings(perms(Source.PROJECT, defaultMode="bypassPermissions"))
    assert str(rules.mode) == "default" and rules.problems
    assert bash(session, "npm install", rules).decision is Decision.DENY  # asked


# -- sandbox settings ----------------------------------------------------------
def test_sandbox_auto_allow_runs_commands_the_sandbox_holds(session: SessionContext) -> None:
    rules = settings((Source.USER, {"sandbox": {"enabled": True,
                                                "autoAllowBashIfSandboxed": True}}),
                     perms(Source.USER, deny=["Bash(git push:*)"]))
    assert bash(session, "mytool --build && touch x", rules).decision is Decision.ALLOW
    assert bash(session, "git push", rules).decision is Decision.DENY
    assert bash(session, "rm -rf /", rules).decision is Decision.DENY
    no_rules = settings((Source.USER, {"sandbox": {"enabled": True}}))
    assert bash(session, "npm install", no_rules).decision is Decision.ALLOW


def test_an_excluded_command_runs_outside_the_sandbox_and_is_always_asked(
        session: SessionContext) -> None:
    rules = settings((Source.USER, {"sandbox": {"excludedCommands": ["docker:*"]}}),
                     perms(Source.USER, allow=["Bash"], defaultMode="bypassPermissions"))
    result = bash(session, "docker ps", rules)
    assert result.decision is Decision.DENY and "WITHOUT the sandbox" in result.reason


def test_unsandboxed_commands_can_be_refused_outright(session: SessionContext) -> None:
    rules = settings((Source.USER, {"sandbox": {"allowUnsandboxedCommands": False}}))
    session.approver = approver = Answer(True)
    result = bash(session, "ls", rules, dangerouslyDisableSandbox=True)
    assert result.decision is Decision.DENY and not approver.asked
    assert result.rule == "sandbox.allowUnsandboxedCommands"


# -- asking ---------------------------------------------------------------------
def test_headless_denial_names_the_rule_that_would_allow_it(session: SessionContext) -> None:
    result = bash(session, "npm test", settings())
    assert result.decision is Decision.DENY and "Bash(npm test:*)" in result.reason


def _answers(session: SessionContext) -> Path:
    return Path(answers_file(session.workspace, os.environ, session.home))


def test_always_allow_saves_the_rule_as_the_users_own_and_in_the_session(
        session: SessionContext, workspace: Path) -> None:
    """From a review: the answer went into the project's
    `.claude/settings.local.json`, a repository's file, and the next
    session refused its own saved rule for a code runner ("a repository's
    settings cannot allow every Bash call"). It is kept in shellgate's state
    directory, keyed by the project, and read back as the user's."""
    decider = RulesDecider(settings())
    session.approver = approver = Answer("always")
    assert bash(session, "python3 tool.py", decider).decision is Decision.ALLOW
    saved = json.loads(_answers(session).read_text())
    assert saved["permissions"]["allow"] == ["Bash(python3 tool.py)"]
    assert saved["project"] == os.path.realpath(workspace)
    assert not (workspace / ".claude").exists()
    session.approver = Answer(False)
    assert bash(session, "python3 tool.py", decider).decision is Decision.ALLOW
    assert len(approver.asked) == 1
    # the next session reads it back as the user's: kept, not refused
    later = load_permissions(session.workspace, session.home, managed_dirs=[])
    assert [r.text for r in later.of("allow")] == ["Bash(python3 tool.py)"]
    assert later.problems == ()
    session.approver = Answer(False)
    assert bash(session, "python3 tool.py", RulesDecider(later)).decision is Decision.ALLOW


def test_repeated_denials_tell_the_model_to_change_course(session: SessionContext) -> None:
    decider = RulesDecider(settings())
    hints = [bash(session, "git push origin main", decider).hint for _ in range(3)]
    assert "another approach" not in hints[0] and "another approach" in hints[2]


# -- from the red-team review of this layer ---------------------------------------
@pytest.mark.parametrize(("rule", "command", "allowed"), [
    ("Bash(sed:*)", "sed -i 's/a/b/' README.md", True),
    ("Bash(sed:*)", "sed -i '1e touch pwned' README.md", False),
    ("Bash(sed:*)", "sed -i 's/a/b/e' README.md", False),
    ("Bash(sed:*)", "sed -i 'w pkg.lock' README.md", False),
    ("Bash(sed:*)", "sed -i '1r conf/token.txt' README.md", False),
    ("Bash(find:*)", "find . -name '*.o' -delete", True),
    ("Bash(find:*)", "find fd -name n -delete -o -exec rm -rf . \\;", False),
    ("Bash(find:*)", "find . -name n -delete -o -fprint out.txt", False),
])
def test_a_covered_write_does_not_hide_what_else_the_command_runs(
        session: SessionContext, rule: str, command: str, allowed: bool) -> None:
    rules = settings(perms(allow=[rule, "Edit(./**)"]), root=session.workspace)
    assert (bash(session, command, rules).decision is Decision.ALLOW) is allowed


@pytest.mark.parametrize("command", [
    "coproc rm x", "setsid rm x", "ionice rm x", "taskset 1 rm x", "flock f rm x",
    "env -C . rm x", "env -S 'rm x'", "script -qc 'rm x' /dev/null", "trap 'rm x' EXIT",
    "source <(echo rm x)", "find . -exec rm {} +", "busybox rm x", "parallel rm ::: x",
    "python3 -c \"import os; os.system('rm x')\"",
])
@pytest.mark.parametrize("allow", [
    {"allow": ["Bash"]}, {"defaultMode": "bypassPermissions"}])
def test_a_deny_rule_is_never_passed_unasked_by_another_spelling(
        session: SessionContext, command: str, allow: dict[str, Any]) -> None:
    rules = settings(perms(deny=["Bash(rm:*)"], **allow))
    result = bash(session, command, rules)
    assert result.decision is not Decision.ALLOW, result
    assert result.rule == "Bash(rm:*)"


@pytest.mark.parametrize("command", [
    "git -C . push", "git --no-pager push origin", "git -c k=v push", "git --git-dir=.git push"])
def test_git_global_options_do_not_hide_a_denied_subcommand(
        session: SessionContext, command: str) -> None:
    rules = settings(perms(deny=["Bash(git push:*)"], allow=["Bash"]))
    assert bash(session, command, rules).decision is not Decision.ALLOW


def test_a_command_the_analyzer_proves_read_only_is_not_held_to_deny_words(
        session: SessionContext) -> None:
    rules = settings(perms(deny=["Bash(rm:*)"]))
    assert bash(session, "grep -n rm README.md", rules).decision is Decision.ALLOW


@pytest.fixture
def conf(workspace: Path) -> Path:
    (workspace / "conf").mkdir()
    (workspace / "conf" / "token.txt").write_text("TOKEN\n")
    (workspace / "conf" / "ok.md").write_text("fine\n")
    return workspace / "conf"


@pytest.mark.parametrize(("command", "decision"), [
    ("cat conf/*", Decision.DENY),
    ("cat conf/t?ken.txt", Decision.DENY),
    ("shopt -s nocaseglob; cat conf/T?KEN.TXT", Decision.DENY),  # bash may read it any case
    ("cat conf/*.md", Decision.ALLOW),
    ("grep -r TOKEN conf", Decision.DENY),  # asked (the rule may match below): headless
    ("grep -r TOKEN .", Decision.DENY),
    ("rg TOKEN", Decision.DENY),
])
def test_a_glob_deny_rule_holds_for_shell_globs_and_tree_searches(
        session: SessionContext, conf: Path, command: str, decision: Decision) -> None:
    rules = settings(perms(deny=["Read(./conf/*.txt)"]))
    result = bash(session, command, rules)
    assert result.decision is decision, result


def test_grep_is_asked_below_a_root_where_an_anchored_deny_rule_may_match(
        session: SessionContext, conf: Path) -> None:
    rules = settings(perms(deny=["Read(./conf/*.txt)"]))
    assert decide(session, "Grep", {"pattern": "TOKEN", "path": str(conf)},
                  rules).decision is Decision.DENY
    assert "may match" in decide(session, "Grep", {"pattern": "TOKEN", "path": str(conf)},
                                 rules).reason


def test_a_directory_moved_whole_with_a_denied_file_inside_is_asked(
        session: SessionContext, conf: Path) -> None:
    rules = settings(perms(deny=["Edit(./conf/token.txt)"], defaultMode="acceptEdits"))
    assert bash(session, "mv conf conf2", rules).decision is Decision.DENY
    assert bash(session, "touch conf/token.txt", rules).decision is Decision.DENY
    assert bash(session, "touch conf/new.md", rules).decision is Decision.ALLOW


@pytest.mark.parametrize("command", ["git log -p", "git show HEAD", "git diff", "git grep TOKEN"])
def test_git_commands_printing_file_contents_are_held_to_read_deny_rules(
        session: SessionContext, conf: Path, command: str) -> None:
    rules = settings(perms(deny=["Read(./conf/*.txt)"]))
    assert bash(session, command, rules).decision is not Decision.ALLOW
    assert bash(session, "git status", rules).decision is Decision.ALLOW


@pytest.mark.parametrize("command", [
    "cp -r conf out", "tar cf - conf", "echo conf/token.txt | xargs cat", "cat $PWD/conf/x"])
def test_a_read_deny_rule_holds_for_commands_taking_a_directory_or_unknown_files(
        session: SessionContext, conf: Path, command: str) -> None:
    rules = settings(perms(deny=["Read(./conf/*.txt)"], allow=["Bash"]))
    assert bash(session, command, rules).decision is not Decision.ALLOW


@pytest.mark.parametrize("rule", ["Bash(*-*)", "Bash(p*)", "Bash(python3:*)", "Bash(env:*)",
                                  "Bash(*e*)"])
def test_a_repository_cannot_allow_any_program_or_any_code(
        session: SessionContext, rule: str) -> None:
    rules = settings(perms(Source.PROJECT, allow=[rule, "Bash(npm test:*)"]))
    assert bash(session, "python3 -c 'open(\"P\", \"w\")'", rules).decision is Decision.DENY
    assert bash(session, "npm test", rules).decision is Decision.ALLOW
    assert rules.problems


def test_always_saves_a_rule_for_each_subcommand_that_needed_one(
        session: SessionContext, workspace: Path) -> None:
    decider = RulesDecider(settings())
    session.approver = Answer("always")
    assert bash(session, "npm test && cargo build", decider).decision is Decision.ALLOW
    saved = json.loads(_answers(session).read_text())
    assert saved["permissions"]["allow"] == ["Bash(npm test:*)", "Bash(cargo build:*)"]


def test_always_never_overwrites_an_answers_file_it_cannot_read(
        session: SessionContext) -> None:
    path = _answers(session)
    path.parent.mkdir(parents=True)
    broken = '{"permissions": {"allow": [' + "\n"
    path.write_text(broken)
    decider = RulesDecider(settings())
    session.approver = Answer("always")
    result = bash(session, "npm test", decider)
    assert result.decision is Decision.ALLOW and "this session only" in result.reason
    assert path.read_text() == broken
    session.approver = Answer(False)
    assert bash(session, "npm test", decider).decision is Decision.ALLOW  # kept for the session


def test_the_lowest_limit_holds_whichever_source_set_it(session: SessionContext) -> None:
    from gateway.session import apply_permissions

    rules = settings((Source.USER, {"sandbox": {"limits": {"memory": "1G", "maxProcesses": 100}}}),
                     (Source.PROJECT, {"sandbox": {"limits": {"memory": "8G",
                                                              "maxProcesses": 50}}}))
    apply_permissions(session, rules)
    assert session.policy.limits.memory == 1 << 30  # a repository cannot lift the user's
    assert session.policy.limits.max_processes == 50


# -- from the fourth review: a model granting itself rules for a later session ------
@pytest.mark.parametrize(("tool", "data"), [
    ("Write", {"file_path": "sub/.claude/settings.local.json", "content": "{}"}),
    ("Write", {"file_path": "sub/.shellgate/settings.json", "content": "{}"}),
    ("Write", {"file_path": "a/b/.CLAUDE/settings.json", "content": "{}"}),
    ("Bash", {"command": "mkdir -p sub/.claude && printf '{}' > sub/.claude/settings.json"}),
    ("Bash", {"command": "cp x sub/.claude/settings.local.json"}),
    ("Bash", {"command": "ln -s /etc sub/.claude"}),
])
def test_agent_settings_are_never_written_at_any_depth(
        session: SessionContext, workspace: Path, tool: str, data: dict[str, Any]) -> None:
    if "file_path" in data:
        data = {**data, "file_path": str(workspace / data["file_path"])}
    rules = settings(perms(allow=["Bash", "Write", "Edit"], defaultMode="bypassPermissions"))
    result = decide(session, tool, data, rules)
    assert result.decision is Decision.DENY and "agent settings" in result.reason, result


def test_a_repositorys_path_rules_stay_inside_its_project(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    files = [parse_settings_text(json.dumps({"permissions": {"allow": [
        "Read(//**)", "Read(~/.aws/**)", "Read(../other/**)", "Read(*.md)", "Edit(./src/**)"]}})
        .encode(), str(project / ".claude" / "settings.json"), Source.PROJECT, str(project))]
    kept = [r.text for r in merge(files).of("allow")]
    assert kept == ["Read(/**/*.md)", "Edit(./src/**)"]


@pytest.mark.parametrize("plant", ["link", "fifo"])
def test_always_never_writes_through_a_planted_link_or_into_a_fifo(
        session: SessionContext, tmp_path: Path, plant: str) -> None:
    path = _answers(session)
    elsewhere = tmp_path / "managed-settings.d"
    elsewhere.mkdir()
    path.parent.parent.mkdir(parents=True)
    if plant == "link":
        path.parent.symlink_to(elsewhere)
    else:
        path.parent.mkdir()
        os.mkfifo(path)
    session.approver = Answer("always")
    result = bash(session, "npm test", RulesDecider(settings()))
    assert result.decision is Decision.ALLOW and "this session only" in result.reason
    assert not list(elsewhere.iterdir())


def test_a_relative_link_target_is_judged_from_the_links_directory(
        session: SessionContext, conf: Path) -> None:
    """From a review: `ln -s ../conf/token.txt out/l; cat out/l` read a
    Read-denied file: the analysis looked for ../conf/token.txt from here."""
    (conf.parent / "out").mkdir()
    rules = settings(perms(deny=["Read(./conf/*.txt)"], allow=["Bash"]))
    result = bash(session, "ln -sf ../conf/token.txt out/l; cat out/l", rules)
    assert result.decision is Decision.DENY and result.rule == "Read(./conf/*.txt)"


# -- the session's own mode, and what plan mode exempts ------------------------------
def decide_with(session: SessionContext, tool: AnyTool, data: dict[str, Any],
                decider: RulesDecider) -> PermissionResult:
    """:func:`decide` for a tool outside :data:`TOOLS`."""
    TOOLS[tool.name], saved = tool, TOOLS.get(tool.name)
    try:
        return decide(session, tool.name, data, decider)
    finally:
        if saved is None:
            del TOOLS[tool.name]
        else:
            TOOLS[tool.name] = saved


@pytest.mark.parametrize("settings_mode", ["default", "acceptEdits", "bypassPermissions",
                                           "dontAsk"])
def test_the_sessions_own_plan_mode_holds_over_the_settings_mode(
        session: SessionContext, workspace: Path, settings_mode: str) -> None:
    decider = RulesDecider(settings(perms(allow=["Bash", "Write"], defaultMode=settings_mode)))
    write = {"file_path": str(workspace / "x"), "content": ""}
    assert decide(session, "Write", write, decider).decision is Decision.ALLOW
    session.mode = "plan"
    result = decide(session, "Write", write, decider)
    assert result.decision is Decision.DENY and result.rule == "plan" and result.mode == "plan"
    assert bash(session, "touch x", decider).decision is Decision.DENY
    assert bash(session, "ls", decider).decision is Decision.ALLOW
    session.mode = None  # back: the settings' mode holds again
    assert decide(session, "Write", write, decider).mode == settings_mode


def test_a_session_mode_that_names_no_mode_is_taken_as_plan(
        session: SessionContext, workspace: Path) -> None:
    decider = RulesDecider(settings(perms(allow=["Write"], defaultMode="bypassPermissions")))
    session.mode = "bypass"  # a typo must not fall back on the settings' bypass mode
    result = decide(session, "Write", {"file_path": str(workspace / "x"), "content": ""},
                    decider)
    assert result.decision is Decision.DENY and result.rule == "plan"


def test_plan_mode_exempts_exit_plan_mode_and_only_as_a_question_for_a_person(
        session: SessionContext) -> None:
    from gateway.tools.plan_mode import EXIT_PLAN_MODE

    session.mode = "plan"
    decider = RulesDecider(settings(perms(allow=["ExitPlanMode"],
                                          defaultMode="bypassPermissions")))
    result = decide_with(session, EXIT_PLAN_MODE, {"plan": "do it"}, decider)
    assert result.decision is Decision.DENY and result.needs_person  # asked; nobody answers
    assert "nobody can answer" in result.reason
    session.approver = approver = Answer(True)
    assert decide_with(session, EXIT_PLAN_MODE, {"plan": "do it"},
                       decider).decision is Decision.ALLOW
    assert [r.tool_name for r in approver.asked] == ["ExitPlanMode"]


def test_a_tool_that_declares_the_plan_exemption_is_still_denied_if_it_writes_or_runs(
        session: SessionContext, workspace: Path) -> None:
    """The exemption is a class's declaration, and the decider adds its own
    conditions: a tool whose calls name a path (or a command), or that is
    one of the tools that change files, never runs in plan mode."""
    from gateway.tools import Subject, build_tool
    from gateway.tools.plan_mode import ExitPlanModeTool
    from gateway.tools.session_tools import PlanModeExempt
    from gateway.tools.write import WriteTool

    class ExemptWrite(PlanModeExempt, WriteTool):
        name = "Scribble"  # a writer by another name: its path gives it away

    class NamedBash(ExitPlanModeTool):
        name = "Bash"

        def permission_matcher(self, data: Any, ctx: ToolContext) -> Subject:
            return Subject("none")

    session.mode = "plan"
    session.approver = Answer(True)
    decider = RulesDecider(settings(perms(allow=["Scribble", "Bash"])))
    write = decide_with(session, build_tool(ExemptWrite()),
                        {"file_path": str(workspace / "x"), "content": ""}, decider)
    assert write.decision is Decision.DENY and write.rule == "plan"
    named = decide_with(session, build_tool(NamedBash()), {"plan": "p"}, decider)
    assert named.decision is Decision.DENY and named.rule == "plan"
