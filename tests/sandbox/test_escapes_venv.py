"""A project's virtualenv: what its interpreter runs by itself.

Attack (from a red-team review): a `.pth` file planted in
`.venv/lib/python3.X/site-packages` runs on every start of
`.venv/bin/python` (the user's next `pytest`, the interpreter an IDE
starts by itself); virtualenvs are ignored by git, so `git status` shows
nothing. `.venv/pip.conf` is obeyed by that environment's pip.

Attacks (issue 37): what that interpreter runs at start changed with no
report — code appended to the module a `.pth` imports, a `.pth` or a
script in `bin/` rewritten in place at the same size with its mtime put
back, a `sitecustomize.py` or a compiled module planted beside the one a
`.pth` imports. Each is reported, never undone: installing packages in the
sandbox is legitimate.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from escape_kit import (
    PY,
    consume_control,
    output,
    padded,
    require,
    rewrite_in_place,
    sh,
)

pytestmark = pytest.mark.sandbox


@pytest.fixture
def venv(workspace: Path) -> Path:
    """A real virtualenv in the workspace (no pip: quick)."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(workspace / ".venv")], check=True,
                   timeout=60)
    return next((workspace / ".venv" / "lib").glob("python3*/site-packages"))


def test_a_startup_file_planted_in_the_project_virtualenv_is_reported(
    workspace: Path, venv: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "PTH-RAN"
    rel = venv.relative_to(workspace)
    proc = sh(workspace, f"echo 'import os; os.system(\"touch {marker}\")' > {rel}/zz_evil.pth; "
                         "echo ran > control.txt")
    consume_control(workspace, proc)
    text = output(proc)
    # the control: the planted file is really there and python runs it
    subprocess.run([str(workspace / ".venv" / "bin" / "python"), "-c", "pass"], check=True)
    assert marker.exists()
    assert "Python startup files were added or changed" in text, text
    assert "zz_evil.pth" in text


def test_a_run_that_leaves_the_virtualenv_alone_reports_nothing_about_it(
    workspace: Path, venv: Path
) -> None:
    (venv / "mymod.pth").write_text("import mymod\n")
    (venv / "mymod.py").write_text("X = 1\n")
    proc = sh(workspace, "echo ran > control.txt")
    consume_control(workspace, proc)
    assert str(workspace / ".venv") not in output(proc), output(proc)


def test_pip_conf_planted_in_the_project_virtualenv_is_undone(
    workspace: Path, venv: Path
) -> None:
    proc = sh(workspace, "printf '[global]\\nindex-url = http://evil.invalid/\\n' > .venv/pip.conf;"
                         " echo ran > control.txt")
    consume_control(workspace, proc)
    assert not (workspace / ".venv" / "pip.conf").exists(), output(proc)


#: room in the files the same-size rewrites replace
ROOM = 300


def _plant_pyc(site: str, module: str, marker: Path) -> str:
    """Shell that writes a compiled `module` running ``touch marker`` whose
    header matches the source's size and mtime: Python runs it instead of
    the source, unchecked."""
    planted = f"import os; os.system({f'touch {marker}'!r})"
    code = (
        "import importlib._bootstrap_external as b, importlib.util as u, os\n"
        f"src = {site!r} + '/{module}.py'\n"
        f"code = compile({planted!r}, src, 'exec')\n"
        "st = os.stat(src)\n"
        "os.makedirs(os.path.dirname(u.cache_from_source(src)), exist_ok=True)\n"
        "open(u.cache_from_source(src), 'wb').write(\n"
        "    b._code_to_timestamp_pyc(code, st.st_mtime, st.st_size))\n"
    )
    return f"{shlex.quote(PY)} -c {shlex.quote(code)}"


@dataclass(frozen=True)
class StartupAttack:
    #: files made in the virtualenv before the run (relative to site-packages;
    #: "../../../" reaches the virtualenv's top)
    before: dict[str, str]
    #: the command, run at the workspace: given site-packages (relative to
    #: it) and the marker file the planted code touches
    script: Callable[[str, str], str]
    #: what the report names
    named: str
    #: the host's start of the environment that runs it (relative to the
    #: virtualenv), after the run
    start: tuple[str, ...] = ("bin/python", "-c", "pass")
    #: the script rewrites this file in place, at the same size and mtime
    same_size: str = ""


BENIGN_PTH = padded("import os", ROOM)
BENIGN_TOOL = padded("#!/bin/sh\n", ROOM)
RUN_MARKER = "import os; os.system('touch {marker}')"

STARTUP_ATTACKS = {
    "code appended to the module a .pth imports": StartupAttack(
        {"mymod.pth": "import mymod\n", "mymod.py": "X = 1\n"},
        lambda site, marker: f"echo {shlex.quote(RUN_MARKER.format(marker=marker))} "
                             f">> {site}/mymod.py",
        "mymod.py"),
    "a .pth rewritten in place at the same size, its mtime put back": StartupAttack(
        {"zz_keep.pth": BENIGN_PTH},
        lambda site, marker: rewrite_in_place(
            f"{site}/zz_keep.pth", padded(RUN_MARKER.format(marker=marker), ROOM)),
        "zz_keep.pth", same_size="zz_keep.pth"),
    "a sitecustomize.py added": StartupAttack(
        {},
        lambda site, marker: f"echo {shlex.quote(RUN_MARKER.format(marker=marker))} "
                             f"> {site}/sitecustomize.py",
        "sitecustomize.py"),
    "a compiled module planted for the one a .pth imports": StartupAttack(
        {"mymod.pth": "import mymod\n", "mymod.py": "X = 1\n"},
        lambda site, marker: _plant_pyc(site, "mymod", Path(marker)),
        "__pycache__/mymod."),
    "a script in bin/ rewritten in place at the same size, its mtime put back": StartupAttack(
        {"../../../bin/tool": BENIGN_TOOL},
        lambda site, marker: rewrite_in_place(
            ".venv/bin/tool", padded(f"#!/bin/sh\ntouch {marker}\n", ROOM)),
        "bin/tool", start=("bin/tool",), same_size="../../../bin/tool"),
}


def _customize_shadowed() -> bool:
    """Does this interpreter's own library hold a sitecustomize (Debian's
    python3 does), found before any virtualenv's?"""
    return any((Path(sysconfig.get_paths()[k]) / "sitecustomize.py").exists()
               for k in ("stdlib", "platstdlib"))


@pytest.mark.parametrize("attack", list(STARTUP_ATTACKS))
def test_a_change_to_what_the_virtualenvs_interpreter_runs_at_start_is_reported(
    workspace: Path, venv: Path, tmp_path: Path, attack: str
) -> None:
    case = STARTUP_ATTACKS[attack]
    marker = tmp_path / "STARTUP-RAN"
    top = workspace / ".venv"
    for rel, text in case.before.items():
        path = venv / rel
        path.write_text(text)
        path.chmod(0o755)
    same = venv / case.same_size if case.same_size else None
    st = same.stat() if same else None
    script = case.script(str(venv.relative_to(workspace)), str(marker))
    proc = sh(workspace, f"{script}; echo ran > control.txt")
    consume_control(workspace, proc)
    text = output(proc)
    if same is not None and st is not None:
        now = same.stat()
        require((now.st_ino, now.st_size, now.st_mtime_ns) == (st.st_ino, st.st_size,
                                                                st.st_mtime_ns)
                and str(marker) in same.read_text(),
                f"{same.name} was rewritten in place at the same size and mtime", proc)
    # the control: the host's next start of the environment runs it
    subprocess.run([str(top / case.start[0]), *case.start[1:]], check=False, timeout=60,
                   capture_output=True)
    if case.named == "sitecustomize.py" and _customize_shadowed():
        require((venv / "sitecustomize.py").is_file(), "sitecustomize.py was planted", proc)
    else:
        require(marker.exists(), "the host's start of the environment ran the code", proc)
    assert "Python startup files were added or changed" in text, text
    assert case.named in text, text


def test_a_package_installed_during_the_run_is_reported_and_left_in_place(
    workspace: Path, venv: Path
) -> None:
    """`pip install` in the sandbox is legitimate: what it adds to
    site-packages is named for review (it runs on `import`), not undone."""
    rel = venv.relative_to(workspace)
    proc = sh(workspace, f"mkdir -p {rel}/newpkg {rel}/newpkg-1.0.dist-info && "
                         f"echo 'X = 1' > {rel}/newpkg/__init__.py && "
                         f"echo 'Name: newpkg' > {rel}/newpkg-1.0.dist-info/METADATA && "
                         "echo ran > control.txt")
    consume_control(workspace, proc)
    text = output(proc)
    assert f"entries were added to {venv}" in text, text
    assert "newpkg, newpkg-1.0.dist-info" in text, text
    assert (venv / "newpkg" / "__init__.py").read_text() == "X = 1\n"
    assert "startup files" not in text, text


def test_a_module_a_startup_file_imports_is_watched_however_the_line_imports_it(
    workspace: Path, venv: Path
) -> None:
    """`site` runs a line starting with "import" whole: any statement of it
    may import the module."""
    (venv / "a.pth").write_text("import os, sys; from thing import x; __import__('other')\n")
    for name in ("thing.py", "other.py"):
        (venv / name).write_text("X = 1\n")
    rel = venv.relative_to(workspace)
    proc = sh(workspace, f"echo 'Y = 2' >> {rel}/thing.py; echo 'Y = 2' >> {rel}/other.py; "
                         "echo ran > control.txt")
    consume_control(workspace, proc)
    text = output(proc)
    assert "thing.py" in text and "other.py" in text, text
    assert os.path.exists(venv / "thing.py")


def test_a_sitecustomize_in_a_directory_a_pth_path_line_adds_is_reported(
    workspace: Path, venv: Path, tmp_path: Path
) -> None:
    """From a review: an editable install's `.pth` puts `src/` on the path;
    a `sitecustomize.py` written there ran at the next start unreported."""
    src = workspace / "src"
    src.mkdir()
    (venv / "_proj.pth").write_text(f"{src}\n")
    marker = tmp_path / "SRC-RAN"
    proc = sh(workspace, f"echo 'import os; os.system(\"touch {marker}\")' > src/sitecustomize.py;"
                         " echo ran > control.txt")
    consume_control(workspace, proc)
    subprocess.run([str(workspace / ".venv" / "bin" / "python"), "-c", "pass"], check=False,
                   timeout=60, capture_output=True)
    if _customize_shadowed():
        require((src / "sitecustomize.py").is_file(), "sitecustomize.py was planted", proc)
    else:
        require(marker.exists(), "the host's start of the environment ran it", proc)
    assert "sitecustomize.py" in output(proc), output(proc)


def test_a_startup_file_swapped_for_a_link_to_the_same_text_is_reported(
    workspace: Path, venv: Path
) -> None:
    """From a review: a `.pth` replaced by a link to an identical file
    elsewhere passed unseen; a later run that did not watch this venv
    rewrote the file it leads to."""
    (venv / "_proj.pth").write_text("# nothing\n")
    rel = venv.relative_to(workspace)
    proc = sh(workspace, f"mkdir -p sub && cp {rel}/_proj.pth sub/notes.txt && "
                         f"ln -sf {workspace}/sub/notes.txt {rel}/_proj.pth.new && "
                         f"mv {rel}/_proj.pth.new {rel}/_proj.pth; echo ran > control.txt")
    consume_control(workspace, proc)
    require((venv / "_proj.pth").is_symlink(), "the .pth was swapped for a link", proc)
    assert "_proj.pth" in output(proc), output(proc)


def test_a_subprojects_virtualenv_is_watched_too(workspace: Path, tmp_path: Path) -> None:
    """From a review: a monorepo's `backend/.venv` was not watched; a `.pth`
    planted there ran at the next `backend/.venv/bin/python`."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(workspace / "backend" / ".venv")],
                   check=True, timeout=60)
    site = next((workspace / "backend" / ".venv" / "lib").glob("python3*/site-packages"))
    marker = tmp_path / "SUB-RAN"
    rel = site.relative_to(workspace)
    proc = sh(workspace, f"echo 'import os; os.system(\"touch {marker}\")' > {rel}/zz.pth; "
                         "echo ran > control.txt")
    consume_control(workspace, proc)
    subprocess.run([str(workspace / "backend" / ".venv" / "bin" / "python"), "-c", "pass"],
                   check=False, timeout=60, capture_output=True)
    require(marker.exists(), "the host's start of the subproject's environment ran it", proc)
    assert "zz.pth" in output(proc), output(proc)


@pytest.mark.parametrize("where", [".tox/py311", "backend/env"])
def test_a_virtualenv_tox_or_a_subproject_keeps_is_watched(
    workspace: Path, tmp_path: Path, where: str
) -> None:
    """From a review: a `.pth` planted in `.tox/py311` or `backend/env` ran
    at that environment's next start, unreported."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(workspace / where)], check=True,
                   timeout=60)
    site = next((workspace / where / "lib").glob("python3*/site-packages"))
    marker = tmp_path / "TOX-RAN"
    rel = site.relative_to(workspace)
    proc = sh(workspace, f"echo 'import os; os.system(\"touch {marker}\")' > {rel}/zz.pth; "
                         "echo ran > control.txt")
    consume_control(workspace, proc)
    subprocess.run([str(workspace / where / "bin" / "python"), "-c", "pass"], check=False,
                   timeout=60, capture_output=True)
    require(marker.exists(), "the host's start of that environment ran it", proc)
    assert "zz.pth" in output(proc), output(proc)
