"""shellgate's own directories: named in one place, hidden by every plan."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sandbox import PolicyError, build_plan, load_profile, own_dirs, state_dir


@pytest.mark.parametrize(("env", "expected"), [
    ({}, ["/h/.local/state/shellgate", "/h/.config/shellgate", "/h/.cache/shellgate"]),
    ({"XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c", "XDG_CACHE_HOME": "/k"},
     ["/s/shellgate", "/c/shellgate", "/k/shellgate"]),
    # relative ones are ignored, as the XDG spec says: from the workspace,
    # they would put shellgate's state where commands write
    ({"XDG_STATE_HOME": ".s", "XDG_CONFIG_HOME": "c", "XDG_CACHE_HOME": ""},
     ["/h/.local/state/shellgate", "/h/.config/shellgate", "/h/.cache/shellgate"]),
])
def test_own_dirs_are_the_xdg_state_config_and_cache_directories(
        env: dict[str, str], expected: list[str]) -> None:
    assert list(own_dirs(env, "/h")[:3]) == expected
    assert state_dir(env, "/h") == expected[0]


def test_the_runtime_directory_is_the_named_one_and_the_usual_one() -> None:
    usual = f"/run/user/{os.getuid()}/shellgate"
    assert own_dirs({"XDG_RUNTIME_DIR": "/r"}, "/h")[3:] == ("/r/shellgate", usual)
    assert own_dirs({}, "/h")[3:] == (usual,)


def test_the_gateway_writes_where_the_sandbox_hides() -> None:
    from gateway.audit import audit_location
    from gateway.pathnames import answers_file

    env = {"HOME": "/h", "XDG_STATE_HOME": "/s"}
    state = own_dirs(env, "/h")[0]
    assert str(audit_location(None, env)).startswith(state + "/")
    assert answers_file("/p", env, "/h").startswith(state + "/")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return home


def test_every_plan_hides_them_and_makes_missing_ones_in_a_writable_root(home: Path) -> None:
    plan = build_plan(load_profile(None), str(home), home=str(home), private_tmp="/tmp")
    for rel in (".local/state/shellgate", ".config/shellgate", ".cache/shellgate"):
        assert str(home / rel) in plan.hidden_dirs
        assert (home / rel).stat().st_mode & 0o777 == 0o700
    # and their parents cannot be renamed away with them inside (pinned, or
    # mounted read-only whole: the home's `.config` and `.local/state`)
    assert {str(home / ".local"), str(home / ".local/state"), str(home / ".config")} \
        <= {*plan.pinned, *plan.protected}
    assert not plan.may_read(str(home / ".local/state/shellgate/audit/x.jsonl"))


def test_a_plan_outside_the_home_hides_the_existing_ones(home: Path, tmp_path: Path) -> None:
    (home / ".local/state/shellgate").mkdir(parents=True)
    ws = tmp_path / "ws"
    ws.mkdir()
    plan = build_plan(load_profile(None), str(ws), home=str(home), private_tmp="/tmp")
    assert str(home / ".local/state/shellgate") in plan.hidden_dirs
    assert not (home / ".cache").exists()  # a missing one outside the roots is left alone


@pytest.mark.parametrize("where", ["workspace", "allow_write"])
def test_a_workspace_or_writable_root_inside_one_is_refused(home: Path, where: str) -> None:
    inside = home / ".config/shellgate/sub"
    inside.mkdir(parents=True)
    policy = load_profile(None)
    ws = str(inside)
    if where == "allow_write":
        ws = str(home.parent)
        fs = policy.filesystem
        policy = policy.model_copy(update={"filesystem": fs.model_copy(
            update={"allow_write": (str(inside),)})})
    with pytest.raises(PolicyError, match="inside shellgate's own directory"):
        build_plan(policy, ws, home=str(home), private_tmp="/tmp")


def test_a_recorded_log_is_taken_as_recorded_never_through_a_link(tmp_path: Path) -> None:
    """From a review: a command planted `ln -s /usr audit` where a recorded
    log was missing; the next plans hid /usr (every run failed)."""
    from sandbox.owndirs import is_recorded_log, recorded_logs

    state = tmp_path / "state"
    (state / "audit-heads").mkdir(parents=True)
    real = tmp_path / "logs" / "kept.jsonl"
    real.parent.mkdir()
    real.write_text("x\n")
    planted = tmp_path / "ws" / "audit"
    planted.parent.mkdir()
    planted.symlink_to("/usr")
    for n, log in enumerate((real, planted)):
        (state / "audit-heads" / f"{n}.json").write_text(json.dumps({"log": str(log)}))
    assert [log for log in recorded_logs(str(state)) if is_recorded_log(log)] == [str(real)]
