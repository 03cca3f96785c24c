"""Grep: real ripgrep in real bubblewrap over real files, through the
whole pipeline where the result is what matters."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from gateway.context import SessionContext, ToolContext
from gateway.decisions import Decision
from gateway.messages import ToolResultMessage, ToolUse
from gateway.pipeline import Pipeline
from gateway.session import make_context
from gateway.tools import Subject
from gateway.tools.grep import GREP, GrepInput, build_argv, first_error, search_policy

sandboxed = pytest.mark.sandbox

#: the project most tests search: `needle` in three files, oldest first
PROJECT = {
    "a.py": "import os\nneedle = 1\n# NEEDLE shouts\n",
    "src/b.py": "def f():\n    return 'needle'\n",
    "src/c.ts": "const needle = 2;\n",
    "docs/notes.md": "nothing to see\n",
}


def _grep(session: SessionContext, **tool_input: Any) -> ToolResultMessage:
    use = ToolUse("toolu_grep", "Grep", tool_input)
    return asyncio.run(Pipeline(session, [GREP]).run(use))


def _text(session: SessionContext, **tool_input: Any) -> str:
    result = _grep(session, **tool_input)
    assert not result.is_error, result.text
    return result.text


def _make(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def project(workspace: Path) -> Path:
    _make(workspace, PROJECT)
    now = time.time()
    for age, name in enumerate(reversed(list(PROJECT))):
        os.utime(workspace / name, (now - 100 * (age + 1), now - 100 * (age + 1)))
    return workspace


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="shellgate-grep-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


# -- output modes ----------------------------------------------------------------------

@sandboxed
def test_files_with_matches_is_the_default_newest_first_relative_to_the_working_directory(
        session: SessionContext, project: Path) -> None:
    assert _text(session, pattern="needle") == "Found 3 files\nsrc/c.ts\nsrc/b.py\na.py"


@sandboxed
@pytest.mark.parametrize(("extra", "expected"), [
    ({}, "a.py:2:needle = 1\nsrc/b.py:2:    return 'needle'\nsrc/c.ts:1:const needle = 2;"),
    ({"-n": False}, "a.py:needle = 1\nsrc/b.py:    return 'needle'\nsrc/c.ts:const needle = 2;"),
    ({"-i": True, "glob": "*.py"}, "a.py:2:needle = 1\na.py:3:# NEEDLE shouts\n"
                                   "src/b.py:2:    return 'needle'"),
    ({"-o": True}, "a.py:2:needle\nsrc/b.py:2:needle\nsrc/c.ts:1:needle"),
    ({"path": "a.py", "-A": 1}, "2:needle = 1\n3-# NEEDLE shouts"),
    ({"path": "a.py", "-B": 1}, "1-import os\n2:needle = 1"),
    ({"path": "src", "-C": 1}, "src/b.py-1-def f():\nsrc/b.py:2:    return 'needle'\n"
                               "--\nsrc/c.ts:1:const needle = 2;"),
    ({"type": "ts"}, "src/c.ts:1:const needle = 2;"),
    ({"glob": "*.{ts,md}"}, "src/c.ts:1:const needle = 2;"),
])
def test_content_mode_prints_ripgrep_s_lines_with_the_flags_asked_for(
        session: SessionContext, project: Path, extra: dict[str, Any], expected: str) -> None:
    assert _text(session, pattern="needle", output_mode="content", **extra) == expected


@sandboxed
@pytest.mark.parametrize(("extra", "expected"), [
    ({}, "a.py:1\nsrc/b.py:1\nsrc/c.ts:1\n\nFound 3 total matching lines across 3 files"),
    ({"-i": True, "path": "a.py"}, "a.py:2\n\nFound 2 total matching lines across 1 file"),
    ({"-o": True, "path": "src/c.ts"},
     "src/c.ts:1\n\nFound 1 total occurrences across 1 file"),
])
def test_count_mode_prints_a_count_per_file_and_the_total(
        session: SessionContext, project: Path, extra: dict[str, Any], expected: str) -> None:
    assert _text(session, pattern="needle", output_mode="count", **extra) == expected


@sandboxed
@pytest.mark.parametrize(("multiline", "expected"), [
    (True, "Found 1 file\nsrc/b.py"),
    (False, "No matches found"),
])
def test_multiline_lets_a_pattern_span_lines(
        session: SessionContext, project: Path, multiline: bool, expected: str) -> None:
    assert _text(session, pattern=r"def f\(\):.*return", multiline=multiline) == expected


@sandboxed
@pytest.mark.parametrize(("extra", "expected"), [
    ({"head_limit": 1}, "Found 3 files\nsrc/c.ts\n"
                        "(showing 1 from offset 0 of 3; use offset and head_limit to page)"),
    ({"offset": 1, "head_limit": 1}, "Found 3 files\nsrc/b.py\n"
                                     "(showing 1 from offset 1 of 3; use offset and head_limit "
                                     "to page)"),
    ({"offset": 2}, "Found 3 files\na.py\n"
                    "(showing 1 from offset 2 of 3; use offset and head_limit to page)"),
    ({"head_limit": 0}, "Found 3 files\nsrc/c.ts\nsrc/b.py\na.py"),
    ({"output_mode": "content", "offset": 1, "head_limit": 1},
     "src/b.py:2:    return 'needle'\n"
     "(showing 1 from offset 1 of 3; use offset and head_limit to page)"),
])
def test_head_limit_and_offset_page_through_the_result(
        session: SessionContext, project: Path, extra: dict[str, Any], expected: str) -> None:
    assert _text(session, pattern="needle", **extra) == expected


@sandboxed
def test_no_match_is_a_plain_answer_not_an_error(
        session: SessionContext, project: Path) -> None:
    assert _text(session, pattern="absent_[0-9]+_token") == "No matches found"


@sandboxed
def test_a_path_outside_the_working_directory_is_shown_absolute(
        session: SessionContext, project: Path) -> None:
    sub = make_context(str(project / "src"), workspace=str(project),
                       home=session.home, results_dir=session.results_dir)
    assert _text(sub, pattern="needle", path=str(project / "a.py")) == (
        f"Found 1 file\n{project / 'a.py'}")
    assert _text(sub, pattern="needle", path="c.ts") == "Found 1 file\nc.ts"


# -- input that must stay data -------------------------------------------------------

@sandboxed
@pytest.mark.parametrize(("pattern", "expected"), [
    ("-flag", "Found 1 file\nopts.txt"),
    ("--files", "No matches found"),  # as an option it would list every file
    ("--pre=cat", "No matches found"),
])
def test_a_pattern_starting_with_a_dash_is_a_pattern_never_an_option(
        session: SessionContext, project: Path, pattern: str, expected: str) -> None:
    (project / "opts.txt").write_text("opts: -flag\n")
    assert _text(session, pattern=pattern) == expected


def test_the_argv_keeps_every_input_attached_to_its_option() -> None:
    data = GrepInput.model_validate({"pattern": "-x", "glob": "-g *.py", "type": "py",
                                     "path": "-dir"})
    argv = build_argv("/usr/bin/rg", data, "-dir")
    assert argv[:2] == ["/usr/bin/rg", "--no-config"]
    assert argv[-4:] == ["-e", "-x", "--", "-dir"]
    assert {"--glob=-g", "--glob=*.py", "--type=py", "--no-follow", "--hidden"} <= set(argv)
    assert not any(a.startswith(("--pre", "--search-zip", "-z")) for a in argv)
    user = argv.index("--glob=*.py")
    assert all(argv.index(f"--iglob=!{g}") > user for g in (".env", ".env.*", ".envrc", ".envs"))


def test_ripgrep_runs_with_a_read_only_workspace_and_no_network(
        session: SessionContext) -> None:
    policy = search_policy(session.policy)
    assert policy.filesystem.workspace == "read" and policy.filesystem.allow_write == ()
    assert policy.network.mode == "none"
    assert policy.filesystem.deny_read == session.policy.filesystem.deny_read


# -- dotenv files --------------------------------------------------------------------

CANARY = "SGCANARY"
DOTENV = [".env", ".env.local", ".env.example", ".envrc", ".envs/.production/.django",
          "sub/.env", "sub/.ENV"]


@pytest.fixture
def dotenv_project(workspace: Path) -> Path:
    _make(workspace, {name: f"API_KEY={CANARY}-{name}\n" for name in DOTENV})
    _make(workspace, {"ok.txt": f"{CANARY} in a plain file\n"})
    (workspace / "notes").symlink_to(workspace / ".env")
    return workspace


@sandboxed
@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
@pytest.mark.parametrize("extra", [
    {}, {"glob": ".env"}, {"glob": "*"}, {"glob": ".env*"}, {"glob": "**/.env"},
    {"glob": "*.local .envrc"}, {"glob": ".ENV"}, {"type": "all"}, {"path": "sub"},
    {"-i": True, "multiline": True},
])
def test_a_dotenv_canary_is_never_printed_in_any_mode_whatever_the_filters(
        session: SessionContext, dotenv_project: Path, mode: str,
        extra: dict[str, Any]) -> None:
    text = _grep(session, pattern=CANARY, output_mode=mode, **extra).text
    assert "API_KEY" not in text and ".env" not in text.lower()
    assert "notes" not in text  # a link to .env is not followed
    if "glob" not in extra and "path" not in extra:
        assert "ok.txt" in text


@sandboxed
@pytest.mark.parametrize("path", [".env", "sub/.env", ".envrc", ".envs", ".envs/.production",
                                  "notes", ".env.local"])
def test_a_dotenv_path_named_explicitly_is_denied_since_ripgrep_ignores_globs_for_it(
        session: SessionContext, dotenv_project: Path, path: str) -> None:
    permission = asyncio.run(GREP.check_permissions(GrepInput(pattern=CANARY, path=path),
                                                    ToolContext(session, "t")))
    assert permission.decision is Decision.DENY
    assert "never searches dotenv" in permission.reason
    result = _grep(session, pattern=CANARY, path=path, output_mode="content")
    assert result.is_error and "API_KEY" not in result.text


# -- what the sandbox hides ------------------------------------------------------------

@pytest.fixture
def home_session(session: SessionContext) -> SessionContext:
    """A session whose workspace is the (fake) home: its SSH key is hidden
    by the sandbox, though nothing else keeps it out of the workspace."""
    home = Path(session.home)
    _make(home, {".ssh/id_ed25519": f"KEY {CANARY}\n", ".aws/credentials": f"{CANARY}\n",
                 "project/main.py": f"# {CANARY}\n"})
    return make_context(str(home), home=str(home), results_dir=session.results_dir)


@sandboxed
@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
def test_a_directory_the_sandbox_hides_is_never_searched(
        home_session: SessionContext, mode: str) -> None:
    text = _text(home_session, pattern=CANARY, output_mode=mode, glob="*")
    assert ".ssh" not in text and ".aws" not in text and "KEY" not in text
    assert "project/main.py" in text or mode == "content"


@sandboxed
@pytest.mark.parametrize("path", [".ssh", ".ssh/id_ed25519", "~/.aws/credentials"])
def test_a_hidden_path_named_explicitly_is_denied(
        home_session: SessionContext, path: str) -> None:
    permission = asyncio.run(GREP.check_permissions(GrepInput(pattern="KEY", path=path),
                                                    ToolContext(home_session, "t")))
    assert (permission.decision, permission.source) == (Decision.DENY, "sandbox")


@sandboxed
def test_a_symlink_in_the_workspace_to_a_file_outside_is_not_followed(
        session: SessionContext, workspace: Path, outside: Path) -> None:
    (outside / "secret.txt").write_text(f"{CANARY} outside\n")
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    (workspace / "linkdir").symlink_to(outside, target_is_directory=True)
    for mode in ("content", "files_with_matches", "count"):
        assert _text(session, pattern=CANARY, output_mode=mode) == "No matches found"


def test_a_path_outside_the_working_directories_needs_a_person(
        session: SessionContext, outside: Path) -> None:
    permission = asyncio.run(GREP.check_permissions(GrepInput(pattern="x", path=str(outside)),
                                                    ToolContext(session, "t")))
    assert permission.decision is Decision.ASK
    inside = asyncio.run(GREP.check_permissions(GrepInput(pattern="x"),
                                                ToolContext(session, "t")))
    assert (inside.decision, inside.source) == (Decision.ALLOW, "tool")


# -- errors and cancellation -----------------------------------------------------------

@sandboxed
@pytest.mark.parametrize(("pattern", "says"), [
    ("(unclosed", "regex parse error: unclosed group"),
    ("a{2,1}", "regex parse error"),
])
def test_a_bad_regex_is_an_error_result_of_one_line(
        session: SessionContext, project: Path, pattern: str, says: str) -> None:
    result = _grep(session, pattern=pattern)
    assert result.is_error and says in result.text and "\n" not in result.text


def test_ripgrep_s_multi_line_error_becomes_one_line() -> None:
    stderr = "regex parse error:\n    (\n    ^\nerror: unclosed group\n"
    assert first_error(stderr) == "regex parse error: unclosed group"
    assert first_error("rg: x: No such file or directory (os error 2)\n") == (
        "rg: x: No such file or directory (os error 2)")


@pytest.mark.parametrize(("tool_input", "code"), [
    ({"pattern": "x", "type": "--pre=sh"}, 2),
    ({"pattern": "x", "type": "py;rm"}, 2),
    ({"pattern": "x\0y"}, 1),
    ({"pattern": "x", "path": "missing"}, 3),
])
def test_an_invalid_input_is_refused_before_anything_runs(
        session: SessionContext, tool_input: dict[str, Any], code: int) -> None:
    validation = asyncio.run(GREP.validate_input(GrepInput.model_validate(tool_input),
                                                 ToolContext(session, "t")))
    assert not validation.ok and validation.code == code


def _processes_with(marker: str) -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline"])
            if any(marker in part for part in p.info["cmdline"] or ())]


@sandboxed
def test_cancelling_a_search_stops_the_sandboxed_process_tree(
        session: SessionContext, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")  # ripgrep blocks reading it until killed
    marker = f"sgcancel{uuid.uuid4().hex[:8]}"

    async def scenario() -> list[int]:
        task = asyncio.create_task(GREP.call(GrepInput(pattern=marker, path="pipe"),
                                             ToolContext(session, "t"), lambda _: None))
        deadline = time.monotonic() + 5
        while not _processes_with(marker) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        running = _processes_with(marker)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return running

    assert asyncio.run(scenario()), "the search never started"
    assert _processes_with(marker) == []


# -- the contract ----------------------------------------------------------------------

def test_grep_declares_a_concurrent_cancellable_read_only_search(
        session: SessionContext, workspace: Path) -> None:
    data, ctx = GrepInput(pattern="TODO", path="src"), ToolContext(session, "t")
    assert GREP.is_read_only(data, ctx) and GREP.is_concurrency_safe(data, ctx)
    assert GREP.is_search_or_read(data, ctx).is_search
    assert GREP.interrupt_behavior() == "cancel"
    assert GREP.max_result_size_chars == 30_000
    assert GREP.permission_matcher(data, ctx) == Subject("path", (str(workspace / "src"),),
                                                         "read")
    assert GREP.summary(data) == 'pattern: "TODO", path: src'
    assert GREP.activity_description(data) == "Searching for TODO"


def test_the_schema_uses_the_dashed_flag_names_and_accepts_either_spelling() -> None:
    properties = GrepInput.model_json_schema()["properties"]
    assert {"-A", "-B", "-C", "-n", "-i", "-o", "head_limit", "offset", "multiline", "type",
            "glob", "output_mode"} <= set(properties)
    assert GrepInput.model_validate({"pattern": "x", "-A": 2}).after == 2
    assert GrepInput.model_validate({"pattern": "x", "after": 2}).after == 2
    with pytest.raises(ValueError, match="extra"):
        GrepInput.model_validate({"pattern": "x", "--pre": "sh"})


@sandboxed
def test_a_ripgrep_planted_in_the_workspace_is_never_run(
        session: SessionContext, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = project / "node_modules/.bin/rg"
    planted.parent.mkdir(parents=True)
    planted.write_text("#!/bin/sh\necho PLANTED\n")
    planted.chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted.parent}{os.pathsep}{os.environ['PATH']}")
    text = _text(session, pattern="needle")
    assert "PLANTED" not in text and text.startswith("Found 3 files")


@sandboxed
@pytest.mark.parametrize("searched", [None, "conf"])
@pytest.mark.parametrize("name", ["creds.inc", "odd [name]*.inc"])
def test_a_search_leaves_out_a_file_git_includes_that_holds_a_credential(
        project: Path, session: SessionContext, name: str, searched: str | None) -> None:
    """From a review: `.git/config` includes a file of the work tree under
    a name of its own, holding a proxy password; a search of the project
    printed it. The file is left out (its name taken literally, not as a
    glob); a file with the same text that git does not read is found."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "conf").mkdir()
    (project / "conf" / name).write_text("[http]\n\tproxy = http://u:s3cr3tpw@p:1\n")
    (project / "conf" / "decoy.txt").write_text("s3cr3tpw is only a word here\n")
    subprocess.run(["git", "-C", str(project), "config", "include.path", f"../conf/{name}"],
                   check=True)
    where = {"path": searched} if searched else {}
    found = _text(session, pattern="s3cr3tpw", output_mode="content", **where)
    assert "decoy.txt" in found, found
    assert "u:s3cr3tpw" not in found, found


@sandboxed
@pytest.mark.parametrize("branch_only", [False, True])
def test_a_search_leaves_out_a_nested_repositorys_included_credential(
        project: Path, session: SessionContext, branch_only: bool) -> None:
    """From a review: below the project, a repository of its own (a
    vendored checkout) includes `conf/creds.inc`; a search of the project
    asked only the project's git and printed the password. The same for
    an include git reads only on another branch (`onbranch:`)."""
    inner = project / "vendor" / "lib"
    inner.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(inner)], check=True)
    (inner / "conf").mkdir()
    (inner / "conf" / "creds.inc").write_text("[http]\n\tproxy = http://u:s3cr3tpw@p:1\n")
    key = "includeIf.onbranch:release.path" if branch_only else "include.path"
    subprocess.run(["git", "-C", str(inner), "config", key, "../conf/creds.inc"], check=True)
    shown = subprocess.run(["grep", "-r", "s3cr3tpw", str(project)], capture_output=True,
                           text=True, check=False).stdout
    assert "u:s3cr3tpw" in shown, "control: a search of the tree reaches it"
    found = _text(session, pattern="s3cr3tpw", output_mode="content")
    assert "u:s3cr3tpw" not in found, found


@sandboxed
def test_a_search_git_cannot_vouch_for_is_refused_not_run(
        project: Path, session: SessionContext) -> None:
    """From a review: past 64 nested repositories (or where git could not
    answer) the unknown was dropped, and the search printed an included
    token from the 65th; now the search is refused, with the reason."""
    for n in range(65):
        inner = project / "vendor" / f"r{n:02d}"
        inner.mkdir(parents=True)
        (inner / ".git").mkdir()
        (inner / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    inner = project / "vendor" / "r64"
    subprocess.run(["git", "init", "-q", str(inner)], check=True, capture_output=True)
    (inner / "creds.inc").write_text("[http]\n\tproxy = http://u:s3cr3tpw@p:1\n")
    subprocess.run(["git", "-C", str(inner), "config", "include.path", "../creds.inc"],
                   check=True)
    result = _grep(session, pattern="s3cr3tpw", output_mode="content")
    assert result.is_error, result.text
    assert "u:s3cr3tpw" not in result.text and "cannot tell" in result.text, result.text
