"""Glob: real trees in the workspace, the real filesystem plan, the whole
pipeline where the result is what matters."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.context import SessionContext, ToolContext
from gateway.decisions import Decision
from gateway.messages import ToolResultMessage, ToolUse
from gateway.pipeline import Pipeline
from gateway.session import make_context
from gateway.tools import Subject
from gateway.tools import glob as glob_module
from gateway.tools.glob import GLOB, GlobInput, expand_braces
from gateway.tools.registry import all_base_tools

Files = dict[str, str]


def _glob(session: SessionContext, **tool_input: Any) -> ToolResultMessage:
    use = ToolUse("toolu_glob", "Glob", tool_input)
    return asyncio.run(Pipeline(session, [GLOB]).run(use))


def _lines(result: ToolResultMessage) -> list[str]:
    assert not result.is_error, result.text
    return result.text.splitlines()


def _make(root: Path, files: Files | list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[name] if isinstance(files, dict) else "x\n")


def _aged(root: Path, names: list[str]) -> None:
    """Give ``names`` increasing modification times: the last is the newest."""
    now = time.time()
    for age, name in enumerate(reversed(names)):
        os.utime(root / name, (now - 100 * (age + 1), now - 100 * (age + 1)))


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the working directories and not under /tmp
    (whose sandbox view is empty anyway)."""
    path = Path(tempfile.mkdtemp(prefix="shellgate-glob-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def home_session(tmp_path: Path, session: SessionContext) -> SessionContext:
    """A session whose workspace is the (fake) home directory, holding an
    SSH key and AWS credentials the sandbox hides."""
    home = Path(session.home)
    _make(home, ["project/main.py", ".ssh/id_ed25519", ".ssh/config", ".aws/credentials"])
    return make_context(str(home), home=str(home), results_dir=session.results_dir)


# -- what is found, in what order ------------------------------------------------------

def test_matches_come_back_newest_first_as_absolute_paths(
        session: SessionContext, workspace: Path) -> None:
    names = ["old.txt", "sub/middle.txt", "new.txt"]
    _make(workspace, names)
    _aged(workspace, names)
    assert _lines(_glob(session, pattern="**/*.txt")) == [
        str(workspace / n) for n in reversed(names)]


def test_at_most_100_paths_come_back_with_a_note_saying_how_many_matched(
        session: SessionContext, workspace: Path) -> None:
    names = [f"f{i:03}.log" for i in range(150)]
    _make(workspace, names)
    _aged(workspace, names)
    lines = _lines(_glob(session, pattern="*.log"))
    assert lines[:100] == [str(workspace / n) for n in reversed(names[50:])]
    assert lines[100:] == ["(showing 100 of 150; narrow the pattern or path)"]


TREE = ["a.py", ".hidden.py", "src/b.py", "src/deep/c.py", "src/d.ts", "src/e.tsx",
        "lib/f.ts", ".github/workflows/ci.yml", "README.md"]


@pytest.mark.parametrize(("pattern", "expected"), [
    ("**/*.py", {"a.py", ".hidden.py", "src/b.py", "src/deep/c.py"}),
    ("*.py", {"a.py", ".hidden.py"}),
    ("src/**/*.ts", {"src/d.ts"}),
    ("**/*.{ts,tsx}", {"src/d.ts", "src/e.tsx", "lib/f.ts"}),
    ("{src,lib}/*.ts", {"src/d.ts", "lib/f.ts"}),
    ("src/*", {"src/b.py", "src/d.ts", "src/e.tsx"}),
    ("src/**", {"src/b.py", "src/deep/c.py", "src/d.ts", "src/e.tsx"}),
    ("**/deep/?.py", {"src/deep/c.py"}),
    (".github/**/*.yml", {".github/workflows/ci.yml"}),
    ("[ab].py", {"a.py"}),
    ("./src/*.py", {"src/b.py"}),
])
def test_a_pattern_matches_paths_relative_to_the_directory_as_a_shell_glob_would(
        session: SessionContext, workspace: Path, pattern: str, expected: set[str]) -> None:
    _make(workspace, TREE)
    assert set(_lines(_glob(session, pattern=pattern))) == {str(workspace / e) for e in expected}


def test_nothing_matching_says_so_without_being_an_error(
        session: SessionContext, workspace: Path) -> None:
    assert _lines(_glob(session, pattern="**/*.nothing")) == ["No files found"]


def test_a_relative_path_is_a_directory_below_the_working_directory(
        session: SessionContext, workspace: Path) -> None:
    _make(workspace, TREE)
    assert _lines(_glob(session, pattern="*.py", path="src")) == [str(workspace / "src/b.py")]


@pytest.mark.parametrize(("pattern", "listed"), [
    ("**/*", False),
    ("**/config", False),
    (".git/*", True),
    (".git/**/pre-commit", True),
])
def test_version_control_directories_are_entered_only_when_the_pattern_names_them(
        session: SessionContext, workspace: Path, pattern: str, listed: bool) -> None:
    _make(workspace, [".git/config", ".git/hooks/pre-commit"])
    text = _glob(session, pattern=pattern).text
    assert (str(workspace / ".git") in text) is listed


# -- what is never listed ------------------------------------------------------------

@pytest.mark.parametrize("pattern", ["**/*", ".ssh/*", "**/id_*", "*/credentials"])
def test_what_the_sandbox_hides_in_the_home_directory_is_never_listed(
        home_session: SessionContext, pattern: str) -> None:
    text = _glob(home_session, pattern=pattern).text
    assert ".ssh" not in text and ".aws" not in text
    if pattern == "**/*":
        assert os.path.join(home_session.home, "project/main.py") in text


@pytest.mark.parametrize("hidden", [".ssh", ".aws"])
def test_a_hidden_directory_as_the_path_is_denied_whatever_the_rules(
        home_session: SessionContext, hidden: str) -> None:
    permission = asyncio.run(GLOB.check_permissions(
        GlobInput(pattern="*", path=hidden), ToolContext(home_session, "t")))
    assert permission.decision is Decision.DENY and permission.source == "sandbox"
    result = _glob(home_session, pattern="*", path=hidden)
    assert result.is_error and "id_ed25519" not in result.text


def test_dotenv_files_are_left_out_with_a_count_and_templates_are_listed(
        session: SessionContext, workspace: Path) -> None:
    _make(workspace, [".env", "sub/.env.local", ".envrc", ".envs/prod/django",
                      ".env.example", "app.py"])
    lines = _lines(_glob(session, pattern="**/*"))
    assert set(lines[:-1]) == {str(workspace / n) for n in (".env.example", "app.py",
                                                             "README.md")}
    assert lines[-1] == "(4 dotenv file(s) not listed: reading one needs a person's approval)"


def test_a_symlinked_directory_is_not_followed(
        session: SessionContext, workspace: Path, outside: Path) -> None:
    _make(outside, ["found.py", "deeper/more.py"])
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    (workspace / "loop").symlink_to(workspace, target_is_directory=True)
    _make(workspace, ["own.py"])
    assert _lines(_glob(session, pattern="**/*.py")) == [str(workspace / "own.py")]
    # neither followed nor listed: `*` sees only the two real files
    assert set(_lines(_glob(session, pattern="*"))) == {str(workspace / "README.md"),
                                                        str(workspace / "own.py")}


def test_a_symlink_to_a_file_the_sandbox_hides_is_not_listed(
        session: SessionContext, workspace: Path, tmp_path: Path) -> None:
    # tmp_path is in /tmp, which sandboxed commands see empty
    (tmp_path / "private.txt").write_text("secret\n")
    (workspace / "notes.txt").symlink_to(tmp_path / "private.txt")
    _make(workspace, ["plain.txt"])
    assert _lines(_glob(session, pattern="*.txt")) == [str(workspace / "plain.txt")]


# -- validation and permissions --------------------------------------------------------

@pytest.mark.parametrize(("tool_input", "code"), [
    ({"pattern": "/etc/*"}, 1),
    ({"pattern": "~/.ssh/*"}, 1),
    ({"pattern": "../*"}, 1),
    ({"pattern": "src/../../*"}, 1),
    ({"pattern": "{src,..}/*"}, 1),
    ({"pattern": "{a,b}" * 9}, 1),
    ({"pattern": "*", "path": "missing"}, 2),
    ({"pattern": "*", "path": "README.md"}, 3),
])
def test_an_invalid_pattern_or_path_is_refused_with_its_code(
        session: SessionContext, tool_input: dict[str, Any], code: int) -> None:
    validation = asyncio.run(GLOB.validate_input(GlobInput.model_validate(tool_input),
                                                 ToolContext(session, "t")))
    assert not validation.ok and validation.code == code
    assert _glob(session, **tool_input).is_error


def test_a_directory_outside_the_working_directories_needs_a_person(
        session: SessionContext, outside: Path) -> None:
    permission = asyncio.run(GLOB.check_permissions(
        GlobInput(pattern="*", path=str(outside)), ToolContext(session, "t")))
    assert permission.decision is Decision.ASK
    assert "outside the working directories" in permission.reason


def test_the_working_directory_is_allowed_by_the_tool_itself(
        session: SessionContext, workspace: Path) -> None:
    permission = asyncio.run(GLOB.check_permissions(GlobInput(pattern="*"),
                                                    ToolContext(session, "t")))
    assert (permission.decision, permission.source) == (Decision.ALLOW, "tool")


# -- bounds and cancellation -----------------------------------------------------------

@pytest.mark.parametrize(("limit", "value", "says"), [
    ("MAX_ENTRIES", 5, "it looked at 5 entries"),
    ("BUDGET_S", 0.0, "it ran for 0 s"),
])
def test_a_walk_that_runs_out_of_budget_returns_what_it_found_and_says_so(
        session: SessionContext, workspace: Path, monkeypatch: pytest.MonkeyPatch,
        limit: str, value: float, says: str) -> None:
    _make(workspace, [f"d{i}/f.txt" for i in range(20)])
    monkeypatch.setattr(glob_module, limit, value)
    lines = _lines(_glob(session, pattern="**/*.txt"))
    assert len(lines) < 21
    assert lines[-1] == (f"(the search stopped early: {says}; the list may be incomplete, "
                         "narrow the pattern or path)")


def test_a_cancelled_call_stops_its_walk(
        session: SessionContext, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _make(workspace, [f"d{i}/f.txt" for i in range(100)])
    listed: list[str] = []
    real_listing = glob_module._listing

    def slow_listing(directory: str) -> list[os.DirEntry[str]]:
        listed.append(directory)
        time.sleep(0.01)
        return real_listing(directory)

    monkeypatch.setattr(glob_module, "_listing", slow_listing)

    async def scenario() -> tuple[int, int]:
        task = asyncio.create_task(GLOB.call(GlobInput(pattern="**/*.txt"),
                                             ToolContext(session, "t"), lambda _: None))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        at_cancel = len(listed)
        await asyncio.sleep(0.1)
        return at_cancel, len(listed)

    at_cancel, later = asyncio.run(scenario())
    assert at_cancel < 101 and later <= at_cancel + 1


# -- the contract ----------------------------------------------------------------------

def test_glob_declares_a_concurrent_cancellable_read_only_search(
        session: SessionContext, workspace: Path) -> None:
    data, ctx = GlobInput(pattern="**/*.py", path="src"), ToolContext(session, "t")
    assert GLOB.is_read_only(data, ctx) and GLOB.is_concurrency_safe(data, ctx)
    assert GLOB.is_search_or_read(data, ctx).is_search
    assert GLOB.interrupt_behavior() == "cancel"
    assert GLOB.permission_matcher(data, ctx) == Subject("path", (str(workspace / "src"),),
                                                         "read")
    assert GLOB.summary(data) == "**/*.py in src"
    assert GLOB.activity_description(data) == "Searching for **/*.py"
    schema = GlobInput.model_json_schema()
    assert set(schema["properties"]) == {"pattern", "path"} and schema["required"] == ["pattern"]
    assert "links to directories are neither followed nor listed" in GLOB.prompt()


@pytest.mark.parametrize(("pattern", "expanded"), [
    ("*.{ts,tsx}", ["*.ts", "*.tsx"]),
    ("{a,b{c,d}}x", ["ax", "bcx", "bdx"]),
    ("{a}", ["{a}"]),
    ("a{b", ["a{b"]),
])
def test_braces_expand_like_a_shell_s(pattern: str, expanded: list[str]) -> None:
    assert expand_braces(pattern) == expanded


def test_an_unknown_field_is_refused_by_the_schema(session: SessionContext) -> None:
    result = _glob(session, pattern="*", recursive=True)
    assert result.is_error and "recursive" in result.text


@pytest.mark.parametrize("tool", ["Glob", "Grep"])
def test_a_hidden_path_gets_one_answer_whether_or_not_it_exists(
        session: SessionContext, tmp_path: Path, tool: str) -> None:
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("KEY")
    pipeline = Pipeline(session, all_base_tools())
    answers = []
    for name in ("id_rsa", "nope"):
        tool_input = {"pattern": "*", "path": str(ssh / name)}
        result = asyncio.run(pipeline.run(ToolUse("t", tool, tool_input)))
        answers.append(result.text.replace(name, "NAME"))
    assert answers[0] == answers[1] and "denied" in answers[0]
