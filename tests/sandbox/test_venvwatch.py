"""The keys the post-run watch compares (sandbox.statkeys), and the watch
of a project virtualenv (sandbox.venvwatch), without a sandbox."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox import statkeys
from sandbox.tripwires import Tripwires
from sandbox.venvwatch import PTH, _imported, venv_reports, venv_snapshot


def _rewrite_keeping_mtime(path: Path, content: str) -> None:
    st = path.stat()
    assert len(content) == st.st_size
    path.write_text(content)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_same_size_rewrite_with_the_mtime_put_back_changes_the_key(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    script = tmp_path / "sub" / "x.gradle"
    script.write_text("aaaa")
    before, _ = statkeys.tree_keys(str(tmp_path))
    _rewrite_keeping_mtime(script, "bbbb")
    after, _ = statkeys.tree_keys(str(tmp_path))
    assert before.keys() == after.keys()
    assert before["sub/x.gradle"] != after["sub/x.gradle"]


def test_a_directory_whose_entry_came_and_went_keeps_its_key(tmp_path: Path) -> None:
    """A temporary file made and removed in a watched directory is no
    change to what the host runs."""
    (tmp_path / "d").mkdir()
    before, _ = statkeys.tree_keys(str(tmp_path))
    (tmp_path / "d" / "tmp").touch()
    (tmp_path / "d" / "tmp").unlink()
    assert statkeys.tree_keys(str(tmp_path))[0] == before


def test_a_tree_past_its_bound_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(5):
        (tmp_path / f"f{i}").touch()
    keys, bounded = statkeys.tree_keys(str(tmp_path), limit=3)
    assert (sorted(keys), bounded) == (["f0", "f1", "f2"], True)
    monkeypatch.setattr(statkeys, "MAX_DEPTH", 1)
    (tmp_path / "a" / "b").mkdir(parents=True)
    keys, bounded = statkeys.tree_keys(str(tmp_path))
    assert "a/b" in keys and bounded


def test_a_watched_directory_past_its_bound_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(statkeys, "MAX_DEPTH", 0)
    (tmp_path / "init.d" / "deep").mkdir(parents=True)
    wires = Tripwires.before((str(tmp_path),), (str(tmp_path / "init.d"),), (), ())
    out = wires.after()
    assert out.reports == [] and len(out.problems) == 1
    assert "only those within were compared" in out.problems[0]


IMPORT_LINES = [
    ("import mymod\n", {"mymod"}),
    ("import\tmymod.sub as m, other  # note\n", {"mymod", "other"}),
    ("import os; from pkg.x import y; __import__('evil')\n", {"os", "pkg", "evil"}),
    ("import sys; importlib.import_module(\"late\")\n", {"sys", "late"}),
    ("/some/path\n# import commented\nimported_name\n", set()),
]


@pytest.mark.parametrize(("text", "names"), IMPORT_LINES)
def test_the_modules_a_startup_files_import_lines_name_are_found(
    text: str, names: set[str]
) -> None:
    assert _imported(text.encode()) == names


@pytest.fixture
def site(tmp_path: Path) -> Path:
    venv = tmp_path / ".venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (venv / "bin").mkdir()
    (venv / "bin" / "python").symlink_to("/usr/bin/python3")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (site / "mymod.pth").write_text("import mymod\n")
    (site / "mymod.py").write_text("X = 1\n")
    (site / "requests").mkdir()
    (site / "requests" / "__init__.py").write_text("X = 1\n")
    return site


def _reports(site: Path, change: Callable[[], object]) -> tuple[list[str], list[str]]:
    before = venv_snapshot(str(site))
    change()
    return venv_reports(str(site), before, venv_snapshot(str(site), before))


CHANGES = {
    "nothing": (lambda s: None, []),
    "the imported module appended to": (
        lambda s: (s / "mymod.py").write_text("X = 1\nimport evil\n"),
        ["mymod.py"]),
    "pyvenv.cfg rewritten at the same size": (
        lambda s: _rewrite_keeping_mtime(s.parents[2] / "pyvenv.cfg", "home = /tmp/x/y\n"),
        ["pyvenv.cfg"]),
    "bin/python replaced": (
        lambda s: ((s.parents[2] / "bin" / "python").unlink(),
                   (s.parents[2] / "bin" / "python").symlink_to("/tmp/evil")),
        ["bin/python"]),
    "a package installed": (
        lambda s: (s / "newpkg").mkdir(), ["entries were added to", "newpkg"]),
    "the whole virtualenv removed": (
        lambda s: shutil.rmtree(s.parents[2]), ["was removed during the run"]),
    "a package removed": (
        lambda s: ((s / "requests" / "__init__.py").unlink(), (s / "requests").rmdir()),
        ["entries were removed from", "requests"]),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_change_to_a_virtualenv_is_named_in_a_report(site: Path, change: str) -> None:
    act, named = CHANGES[change]
    reports, problems = _reports(site, lambda: act(site))
    text = "\n".join(reports)
    assert problems == []
    if not named:
        assert reports == []
    for name in named:
        assert name in text, text


def test_a_module_inside_a_package_is_not_a_startup_file(site: Path) -> None:
    """Code that runs only on `import requests` is the user's to review
    like any dependency: changing it is no report (the package's entry in
    site-packages is the same)."""
    reports, _ = _reports(site, lambda: (site / "requests" / "__init__.py").write_text("Y=2\n"))
    assert reports == []


def test_an_unchanged_site_packages_is_not_listed_again(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = venv_snapshot(str(site))
    listed: list[str] = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda p: listed.append(p) or real(p))
    venv_snapshot(str(site), before)
    assert str(site) not in listed


def test_the_tripwires_report_a_virtualenv_change_once_per_run(site: Path) -> None:
    """Two site-packages of one virtualenv share its bin/: one line."""
    other = site.parents[1] / "python3.12" / "site-packages"
    other.mkdir(parents=True)
    wires = Tripwires.before((), (), (str(site) + PTH, str(other) + PTH), ())
    (site.parents[2] / "bin" / "activate").write_text("evil\n")
    out = wires.after()
    assert len(out.reports) == 1 and "bin/activate" in out.reports[0], out.reports
