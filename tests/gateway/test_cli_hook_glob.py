"""`shellgate hook` on Claude Code's Glob: it lists, on the host, what its
pattern matches — through any link among the pattern's directories. The
gateway's own Glob never enters a link and judged the search's root only,
so its allow let Claude Code list what lies behind a link out of the
project (from a review: `keys -> ~/.ssh`, `up -> ..`). Run as Claude Code
runs the hook (a new process per call, the hook JSON on stdin)."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest
from hookcalls import ask_hook, hook_env

pytestmark = pytest.mark.sandbox  # the file tools' policy is the sandbox's plan

#: (pattern, the hook's answer): through a link out — denied where it
#: lists the home's keys, asked elsewhere — or not
CASES = [
    ("keys/*", "deny"),
    ("k[e]ys/*", "deny"),
    ("{keys,src}/*", "deny"),
    ("*/id_*", "deny"),
    ("up/*", "ask"),
    ("up/proj/../*", "ask"),
    ("../*", "ask"),
    ("**/id_*", "deny"),
    # other glob syntaxes (ripgrep's, node's): a brace group of one, an
    # escape, extglob
    ("{keys}/*", "ask"),
    ("k\\eys/*", "ask"),
    ("@(keys)/*", "ask"),
    ("!(src)/*", "ask"),
    ("**/*.txt", "ask"),  # src/vendor/notes.txt, two links down
    ("src/*.py", "allow"),
    ("lib/**/*.{py,md}", "allow"),
    ("*.{md,txt}", "allow"),
    ("inner/*.py", "allow"),
]


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """~/code/proj holding a link to ~/.ssh, a link to its parent, a link
    deeper down to another project, and a link inside itself."""
    env = hook_env(tmp_path)
    home = Path(env["HOME"])
    proj = home / "code" / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "README.md").write_text("hello\n")
    (proj / "src" / "a.py").write_text("x = 1\n")
    (proj / "keys").symlink_to(home / ".ssh")
    (proj / "up").symlink_to("..")
    (proj / "inner").symlink_to("src")
    (proj / "lib").mkdir()
    (proj / "lib" / "b.py").write_text("y = 2\n")
    other = home / "code" / "other"
    other.mkdir()
    (other / "notes.txt").write_text("another project's\n")
    (proj / "src" / "vendor").symlink_to(other)
    return proj, env


def test_a_glob_library_lists_what_lies_behind_a_link_out(
        project: tuple[Path, dict[str, str]]) -> None:
    """The control: a glob of `keys/*` on the host names the home's keys."""
    proj, env = project
    listed = glob.glob("keys/*", root_dir=proj)
    assert "keys/id_rsa" in listed, listed
    assert (proj / "keys" / "id_rsa").resolve() == Path(env["HOME"]) / ".ssh" / "id_rsa"


@pytest.mark.parametrize(("pattern", "expected"), CASES)
def test_a_glob_through_a_link_out_of_the_project_is_not_allowed(
        project: tuple[Path, dict[str, str]], pattern: str, expected: str) -> None:
    proj, env = project
    assert ask_hook("Glob", {"pattern": pattern}, proj, env) == expected
