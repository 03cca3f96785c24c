"""The walk that finds other projects' .env files: what it finds, what it
skips, how its cache stays true, and how it fails closed when the budget
runs out. Real directories, no sandbox needed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sandbox import dotenv_scan, walk
from sandbox.dotenv_scan import dotenv_below, scan
from sandbox.plan import build_plan
from sandbox.profiles import load_profile


@pytest.fixture(autouse=True)
def _fresh_memory() -> None:
    walk.forget("dotenv")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    for rel in ("src/api/.env", "src/api/.env.production", "src/web/README.md",
                "work/client/svc/deep/.env", "src/api/node_modules/pkg/.env",
                "src/api/.git/.env", ".cache/x/.env", "notes/.envrc"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    (root / "venv-named-dot-env" / ".env").mkdir(parents=True)  # a virtualenv, not secrets
    (root / "svc" / ".env.d").mkdir(parents=True)  # a directory of dotenv files
    (root / "svc" / ".env.d" / "production").write_text("x")
    return root


def _rel(home: Path, paths: tuple[str, ...]) -> set[str]:
    return {os.path.relpath(p, home) for p in paths}


def test_dotenv_files_are_found_and_tool_trees_skipped(home: Path) -> None:
    found = scan([str(home)], None)
    assert _rel(home, found.found) == {
        "src/api/.env", "src/api/.env.production", "work/client/svc/deep/.env", "notes/.envrc",
        "svc/.env.d"}
    assert found.unscanned == ()


def test_the_walk_stops_at_its_depth_limit(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*[f"d{i}" for i in range(dotenv_scan.MAX_DEPTH + 2)])
    deep.mkdir(parents=True)
    (deep / ".env").write_text("x")
    shallow = tmp_path / "d0" / ".env"
    shallow.write_text("x")
    assert scan([str(tmp_path)], None).found == (str(shallow),)


def test_a_file_added_later_is_found_through_the_cache(home: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    scan([str(home)], cache)
    added = home / "src" / "web" / ".env.local"
    added.write_text("x")
    walk.forget("dotenv")  # a new process: only the file cache is left
    assert str(added) in scan([str(home)], cache).found


def test_a_file_removed_later_leaves_the_result(home: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    scan([str(home)], cache)
    (home / "src" / "api" / ".env").unlink()
    assert str(home / "src" / "api" / ".env") not in scan([str(home)], cache).found


def test_a_file_added_with_the_mtime_set_back_is_still_found(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack (from a review): add a `.env`, then restore the directory's
    mtime (`touch -d`, `cp -a`, `rsync -a`, `tar x` do it). The cache is
    kept by ctimes, which cannot be set back."""
    monkeypatch.setattr(walk, "_RACY_NS", 0)
    scan([str(home)], None)
    web = home / "src" / "web"
    mtime = web.stat().st_mtime_ns
    (web / ".env").write_text("x")
    os.utime(web, ns=(mtime, mtime))
    assert str(web / ".env") in scan([str(home)], None).found


def test_a_directory_changed_in_the_same_clock_tick_is_listed_again(home: Path) -> None:
    """Racily clean: a directory listed less than the racy window after its
    last change is not trusted, even if its mtime looks the same."""
    scan([str(home)], None)
    api = home / "src" / "api"
    mtime = api.stat().st_mtime_ns
    (api / ".env.late").write_text("x")
    os.utime(api, ns=(mtime, mtime))  # the change did not move the mtime
    assert str(api / ".env.late") in scan([str(home)], None).found


def test_an_unchanged_home_is_not_walked_again(home: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache.json"
    monkeypatch.setattr(walk, "_RACY_NS", 0)  # trust listings made just now
    scan([str(home)], cache)
    listed: list[str] = []
    real = walk._list
    monkeypatch.setattr(walk, "_list", lambda spec, state, path, depth: (
        listed.append(path), real(spec, state, path, depth)))
    scan([str(home)], cache)
    assert listed == []


def test_when_the_budget_runs_out_the_rest_is_reported_to_be_hidden(home: Path) -> None:
    found = scan([str(home)], None, budget=0)
    assert found.unscanned == (str(home),)
    assert found.found == ()


def test_the_ancestors_of_the_workspace_are_listed_past_the_budget(home: Path) -> None:
    """They cannot be hidden (the workspace is inside), so they are walked
    whatever the budget; their other children are what gets hidden."""
    workspace = home / "src" / "web"
    found = scan([str(home)], None, budget=0, keep=(str(workspace),))
    assert str(home) not in found.unscanned
    assert str(home / "src") not in found.unscanned
    assert str(home / "work") in found.unscanned
    assert str(home / "src" / "api") in found.unscanned


def test_a_plan_hides_other_projects_env_files_but_not_the_workspaces(home: Path) -> None:
    workspace = home / "src" / "api"
    plan = build_plan(load_profile(), str(workspace), home=str(home), private_tmp=None)
    assert str(home / "work" / "client" / "svc" / "deep" / ".env") in plan.hidden_files
    assert str(workspace / ".env") not in plan.hidden_files
    assert str(workspace) in plan.writable


def test_go_projects_are_walked_but_the_module_cache_is_not(tmp_path: Path) -> None:
    for rel in ("go/src/github.com/me/app/.env", "go/pkg/mod/x@v1/.env", "dist/.env"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert _rel(tmp_path, scan([str(tmp_path)], None).found) == {
        "go/src/github.com/me/app/.env", "dist/.env"}


# -- what gets hidden -----------------------------------------------------------------


def _hide(home: Path, found: list[Path], keep: tuple[Path, ...] = (),
          unscanned: tuple[Path, ...] = ()) -> tuple[set[str], set[str]]:
    result = dotenv_scan.DotenvScan(tuple(str(p) for p in found),
                                    tuple(str(p) for p in unscanned))
    files, dirs = dotenv_scan.hide_list(result, [str(home)], [str(k) for k in keep])
    return {os.path.relpath(f, home) for f in files}, {os.path.relpath(d, home) for d in dirs}


def test_a_symlinked_env_name_never_hides_what_it_points_at_unless_that_is_a_dotenv(
    tmp_path: Path,
) -> None:
    """Attack: `ln -s /usr .env.planted` (or to the Python binary under the
    home) in one workspace would have hidden it from every later run."""
    (tmp_path / "other").mkdir()
    real_env = tmp_path / "other" / ".env"
    real_env.write_text("x")
    tool = tmp_path / "tools" / "python3"
    tool.parent.mkdir()
    tool.write_text("binary")
    links = {".env.to-usr": "/usr", ".env.to-tool": str(tool), ".env.to-env": str(real_env)}
    for name, target in links.items():
        (tmp_path / name).symlink_to(target)
    files, dirs = _hide(tmp_path, [tmp_path / name for name in links])
    assert (files, dirs) == ({"other/.env"}, set())


def test_many_env_files_in_one_directory_cost_one_mount(tmp_path: Path) -> None:
    crowd = tmp_path / "attacker"
    crowd.mkdir()
    paths = []
    for i in range(dotenv_scan.PER_DIR_LIMIT * 3):
        (crowd / f".env.{i}").write_text("x")
        paths.append(crowd / f".env.{i}")
    assert _hide(tmp_path, paths) == (set(), {"attacker"})


def test_paths_spread_wide_are_folded_under_the_mount_budget(tmp_path: Path) -> None:
    paths = []
    for i in range(dotenv_scan.TOTAL_LIMIT + 50):
        d = tmp_path / "spread" / f"p{i}"
        d.mkdir(parents=True)
        (d / ".env").write_text("x")
        paths.append(d / ".env")
    files, dirs = _hide(tmp_path, paths)
    assert len(files) + len(dirs) <= dotenv_scan.TOTAL_LIMIT
    assert dirs == {"spread"}


def test_nothing_above_the_workspace_is_ever_hidden(tmp_path: Path) -> None:
    workspace = tmp_path / "src" / "mine"
    workspace.mkdir(parents=True)
    files, dirs = _hide(tmp_path, [workspace / ".env"], keep=(workspace,),
                        unscanned=(tmp_path / "src", tmp_path / "other"))
    assert (files, dirs) == (set(), {"other"})


def test_a_dot_envs_directory_is_hidden_whole(tmp_path: Path) -> None:
    envs = tmp_path / "django" / ".envs" / ".production"
    envs.mkdir(parents=True)
    (envs / ".django").write_text("SECRET_KEY=x")
    found = scan([str(tmp_path)], None)
    assert _hide(tmp_path, [Path(p) for p in found.found]) == (set(), {"django/.envs"})


def test_a_directory_that_cannot_be_listed_is_hidden_whole(tmp_path: Path) -> None:
    locked = tmp_path / "shared"
    locked.mkdir()
    locked.chmod(0o311)  # enter, not list (for its owner too)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("this user lists any directory (root); test_escapes_secrets.py checks "
                        "the same as nobody in the unprivileged leg")
        found = scan([str(tmp_path)], None)
        assert found.unlistable == (str(locked),)
    finally:
        locked.chmod(0o755)


def test_a_crowd_of_planted_directories_folds_into_its_parent_not_into_the_users_tools(
    tmp_path: Path,
) -> None:
    """Attack (from a review): 300 planted `aN/.env` under one project, and a
    lone `.env.example` in `~/tools`: folding level by level hid `~/tools`
    too (the user's commands exited 127)."""
    paths = []
    for i in range(300):
        d = tmp_path / "proj" / f"a{i}"
        d.mkdir(parents=True)
        (d / ".env").write_text("x")
        paths.append(d / ".env")
    lone = tmp_path / "tools" / "share" / "x" / ".env.example"
    lone.parent.mkdir(parents=True)
    lone.write_text("x")
    files, dirs = _hide(tmp_path, [*paths, lone])
    assert (files, dirs) == ({"tools/share/x/.env.example"}, {"proj"})


@pytest.mark.slow
def test_revalidating_many_changed_directories_takes_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack (from a review): 20,000 directories each holding a `.env`, all
    touched: re-checking was quadratic (80 s for the next run of any
    workspace). It must stay within its budget, whatever is planted."""
    monkeypatch.setattr(walk, "_RACY_NS", 0)
    crowd = tmp_path / "crowd"
    crowd.mkdir()
    for i in range(5000):
        d = crowd / f"d{i}"
        d.mkdir()
        (d / ".env").write_text("x")
    scan([str(tmp_path)], None, budget=30)
    for d in crowd.iterdir():
        (d / "new").touch()
    started = time.monotonic()
    found = scan([str(tmp_path)], None)
    assert time.monotonic() - started < dotenv_scan.REVALIDATE_BUDGET_S + dotenv_scan.BUDGET_S + 1
    assert len(found.found) + len(found.unscanned) >= 5000


# -- the workspace's own dotenv files (a fact for the analyzer) --------------------------


def test_the_workspace_walk_finds_dotenv_files_wherever_a_recursive_grep_reaches(
    tmp_path: Path,
) -> None:
    """From a review: the home walk's skipped trees (node_modules, .cache) and
    its depth limit left `.env` files that `grep -r KEY .` printed."""
    ws = tmp_path / "ws"
    deep = ws.joinpath(*[f"d{i}" for i in range(66)])
    for path in (ws / ".env", ws / "node_modules" / "pkg" / ".env", ws / ".cache" / ".env.local",
                 ws / ".git" / ".env", deep / ".env", ws / "src" / "ok.py"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("K=v\n")
    (ws / ".envs" / ".production").mkdir(parents=True)
    (ws / ".envs" / ".production" / ".django").write_text("K=v\n")
    (ws / "conf" / ".env.d").mkdir(parents=True)
    (ws / "conf" / ".env.d" / "prod").write_text("K=v\n")
    found = dotenv_below([str(ws)], None)
    assert found.searched == (str(ws),)
    assert found.unknown == ()
    assert set(found.files) == {str(ws / ".env"), str(ws / "node_modules" / "pkg" / ".env"),
                                str(ws / ".cache" / ".env.local"), str(ws / ".git" / ".env"),
                                str(deep / ".env")}
    # dotenv directories: whatever their files are called (from a review)
    assert set(found.dirs) == {str(ws / ".envs"), str(ws / "conf" / ".env.d")}


def test_the_workspace_walk_reports_links_to_directories_and_does_not_follow_them(
    tmp_path: Path,
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / ".env").write_text("K=v\n")
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "shared").symlink_to(other)
    (ws / "src" / "later").symlink_to(tmp_path / "not-yet")  # dangling: may appear later
    (ws / "file-link").symlink_to(other / ".env")
    found = dotenv_below([str(ws)], None)
    assert set(found.links) == {str(ws / "src" / "shared"), str(ws / "src" / "later")}
    assert str(other / ".env") not in found.files


def test_the_workspace_walk_reports_what_its_budget_left_unsearched(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for i in range(300):
        (ws / f"d{i}" / "sub").mkdir(parents=True)
    found = dotenv_below([str(ws)], None, budget=0.0)
    assert found.unknown, "a walk stopped by its budget must say where it did not look"
    later = dotenv_below([str(ws)], None)
    assert later.unknown == ()  # the next call carries on and finishes


def test_the_workspace_walk_asks_for_its_cache_directory_only_when_it_searches(
    tmp_path: Path,
) -> None:
    """The cache's directory (the private runtime directory, checked and made
    on each call) may be given as a function: a search of directories that
    are not there asks for none, and one that searches keeps its cache
    there."""
    asked: list[Path] = []
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)

    def cache_dir() -> Path:
        asked.append(cache)
        return cache

    nothing = dotenv_below([str(tmp_path / "missing")], cache_dir)
    assert nothing.searched == () and asked == []
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("K=v\n")
    found = dotenv_below([str(ws)], cache_dir)
    assert found.files == (str(ws / ".env"),)
    assert asked == [cache]
    assert list(cache.iterdir()), "the search's cache is kept where it was told"
