"""Read/Edit rule patterns against paths, gitignore-style: where each form
is anchored, ``*`` against ``**``, a directory covering what is inside it,
classes, escapes, ``..``; and ``literal_prefix``, what the sandbox can hide
as a whole."""

from __future__ import annotations

import re
import warnings

import pytest

from gateway.permissions.path_rules import literal_prefix, path_matches

ROOT = "/proj"        # the directory holding the rule's .claude
CWD = "/work/ws"      # the session's working directory
HOME = "/home/u"


def matches(pattern: str, path: str, *, fold_case: bool = False) -> bool:
    return path_matches(pattern, path, root=ROOT, cwd=CWD, home=HOME, fold_case=fold_case)


def table(*rows: tuple[str, str, bool]) -> list[tuple[str, str, bool]]:
    return list(rows)


# -- anchors ----------------------------------------------------------------
@pytest.mark.parametrize(("pattern", "path", "expected"), table(
    # //abs: the absolute path
    ("//etc/hosts", "/etc/hosts", True),
    ("//etc/hosts", "/proj/etc/hosts", False),
    ("//etc/hosts", "/work/ws/etc/hosts", False),
    ("//etc/hosts/", "/etc/hosts", True),
    ("///etc/hosts", "/etc/hosts", True),
    # ~/: below the home directory
    ("~/.aws/**", "/home/u/.aws/credentials", True),
    ("~/.aws/**", "/other/.aws/credentials", False),
    ("~/.aws/**", "/work/ws/~/.aws/credentials", False),
    ("~/.zshrc", "/home/u/.zshrc", True),
    ("~", "/home/u/anything/at/all", True),
    ("~/", "/home/u/x", True),
    ("~", "/home/uu/x", False),
    # /pattern: below the settings root, not the filesystem's
    ("/src/**", "/proj/src/a/b.py", True),
    ("/src/**", "/src/a.py", False),
    ("/src/**", "/work/ws/src/a.py", False),
    ("/", "/proj/anything", True),
    ("/", "/elsewhere", False),
    # ./rel and a/b: below the working directory
    ("./build", "/work/ws/build/out.o", True),
    ("./build", "/proj/build/out.o", False),
    ("./build", "/work/ws/sub/build", False),
    ("a/b", "/work/ws/a/b", True),
    ("a/b", "/work/ws/x/a/b", False),
    ("a/b", "/a/b", False),
    ("./", "/work/ws/x", True),
    (".", "/work/ws", True),
    ("./", "/work/wsx", False),
    # a bare name: at any depth, anywhere
    (".env", "/work/ws/.env", True),
    (".env", "/somewhere/else/deep/.env", True),
    (".env", "/work/ws/.env.local", False),
    (".env", "/work/ws/x.env", False),
    ("*.pem", "/a/b/c/key.pem", True),
    ("*.pem", "/a/b/c/key.pem.bak", False),
    ("build/", "/x/y/build/z.o", True),
))
def test_each_anchor_form_is_anchored_where_the_docstring_says(
        pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


def test_a_double_slash_alone_is_every_absolute_path_not_the_settings_root() -> None:
    """The bug: `//` was stripped to `/` and so anchored at the settings root;
    `Edit(//)` — every path — covered only the project."""
    assert matches("//", "/etc/passwd")
    assert matches("//", "/proj/x")


def test_a_dot_slash_alone_is_the_working_directory() -> None:
    """The bug: `./` was stripped to `.`, a bare name that matched nothing;
    `Read(./)` denied nothing."""
    assert matches("./", "/work/ws/src/main.py")
    assert not matches("./", "/proj/src/main.py")


# -- stars --------------------------------------------------------------------
@pytest.mark.parametrize(("pattern", "path", "expected"), table(
    ("./src/*.py", "/work/ws/src/a.py", True),
    ("./src/*.py", "/work/ws/src/sub/a.py", False),         # `*` stays in a component
    ("./src/*.py", "/work/ws/src/.hidden.py", True),
    ("./*/x", "/work/ws/a/x", True),
    ("./*/x", "/work/ws/a/b/x", False),
    ("./src/**/*.py", "/work/ws/src/a/b/c.py", True),     # `**` crosses
    ("./src/**/*.py", "/work/ws/src/c.py", True),         # ... or is no directory at all
    ("./src/**/*.py", "/work/ws/src/c.txt", False),
    ("./src/**/*.py", "/work/ws/other/c.py", False),
    ("./dist/**", "/work/ws/dist", True),                  # dir/** covers dir itself
    ("./dist/**", "/work/ws/dist/a/b/c", True),
    ("./dist/**", "/work/ws/distro", False),
    ("./dist/**", "/work/ws/distro/x", False),
    ("**/node_modules", "/work/ws/node_modules/x.js", True),
    ("**/node_modules", "/work/ws/a/b/node_modules/pkg/index.js", True),
    ("**/node_modules", "/elsewhere/node_modules/x.js", False),  # still below the cwd
    ("./a**b", "/work/ws/a/x/b", True),
    ("./?.txt", "/work/ws/a.txt", True),
    ("./?.txt", "/work/ws/ab.txt", False),
    ("./a?b", "/work/ws/a/b", False),                     # `?` is not a `/`
    ("**", "/any/path/at/all", True),
    ("*", "/any/path", True),
))
def test_a_star_stays_in_one_component_and_two_stars_cross(
        pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


# -- directories cover what is inside ----------------------------------------
@pytest.mark.parametrize(("pattern", "path"), [
    ("secrets", "/work/ws/secrets/a/b"),
    ("secrets", "/anywhere/secrets/key.txt"),
    ("./secrets", "/work/ws/secrets/deep/er/key"),
    ("//etc", "/etc/ssl/private/key.pem"),
    ("~/.ssh", "/home/u/.ssh/id_ed25519"),
    ("/config", "/proj/config/prod/db.yml"),
    ("./src/*", "/work/ws/src/sub/deep.py"),     # `src/sub` matches `src/*`
    ("*.d", "/etc/sudoers.d/README"),
])
def test_a_pattern_matching_a_directory_covers_everything_below_it(
        pattern: str, path: str) -> None:
    assert matches(pattern, path)


@pytest.mark.parametrize(("pattern", "path"), [
    ("secrets", "/work/ws/secretsafe/x"),
    ("./secrets", "/work/ws/secrets-old/x"),
    ("./secrets/key", "/work/ws/secrets"),        # a file inside does not cover its folder
])
def test_coverage_goes_down_the_tree_never_sideways_or_up(pattern: str, path: str) -> None:
    assert not matches(pattern, path)


def test_paths_are_normalized_before_matching() -> None:
    assert matches("./secrets/**", "/work/ws/other/../secrets/key")
    assert matches("./secrets/**", "/work/ws/./secrets//key")


# -- `..` in patterns ----------------------------------------------------------
@pytest.mark.parametrize(("pattern", "path", "expected"), table(
    ("../shared/**", "/work/shared/lib/x.py", True),
    ("../shared/**", "/work/ws/shared/x.py", False),
    ("./a/../b", "/work/ws/b/c", True),
    ("./a/../b", "/work/ws/a/b", False),
    ("//etc/../var/log", "/var/log/syslog", True),
    ("~/../other", "/home/other/x", True),
    ("/../outside", "/outside/x", True),
    ("./a/../*.py", "/work/ws/x.py", True),          # collapsed before the glob
    ("..", "/work/sibling/file", True),
))
def test_dot_dot_in_the_literal_part_of_a_pattern_is_collapsed(
        pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


# -- classes and escapes ----------------------------------------------------------
@pytest.mark.parametrize(("pattern", "path", "expected"), table(
    ("./file[0-9].txt", "/work/ws/file3.txt", True),
    ("./file[0-9].txt", "/work/ws/filea.txt", False),
    ("./file[!0-9].txt", "/work/ws/filea.txt", True),
    ("./file[!0-9].txt", "/work/ws/file3.txt", False),
    ("./file[^0-9].txt", "/work/ws/filea.txt", True),
    ("./[abc].md", "/work/ws/b.md", True),
    ("./[abc].md", "/work/ws/d.md", False),
    ("./[]x].md", "/work/ws/].md", True),            # `]` first is a member
    ("./[a-].md", "/work/ws/-.md", True),            # `-` last is a member
    ("./[[:digit:]].log", "/work/ws/7.log", True),
    ("./[[:digit:]].log", "/work/ws/x.log", False),
    ("./[[:alpha:]]x", "/work/ws/Qx", True),
    ("./a[!x]b", "/work/ws/a/b", False),             # a class is never the `/`
    ("./a[/]b", "/work/ws/a/b", False),
    ("./[z-a]", "/work/ws/[z-a]", True),             # not a class: literal
    ("./[z-a]", "/work/ws/m", False),
    ("./[abc", "/work/ws/[abc", True),               # unclosed: literal
    ("./a\\*b", "/work/ws/a*b", True),               # escaped star: literal
    ("./a\\*b", "/work/ws/axb", False),
    ("./a\\?b", "/work/ws/a?b", True),
    ("./a\\?b", "/work/ws/axb", False),
    ("./a.b", "/work/ws/axb", False),                # regex characters are literal
    ("./a+(b)", "/work/ws/a+(b)", True),
    ("./a$", "/work/ws/a$", True),
))
def test_classes_and_escapes_read_as_in_gitignore(pattern: str, path: str,
                                                 expected: bool) -> None:
    assert matches(pattern, path) is expected


@pytest.mark.parametrize("pattern", ["[z-a]", "[!]a]", "./[9-0]/**", "[a&&b]", "[a||b]",
                                     "[a~~b]", "[a--b]", "[[:alpha:]]", "[\\]", "[", "[!",
                                     "a[b-]c", "\\", "./x\\", "./[[:nope:]]"])
def test_no_pattern_raises_or_warns_whatever_its_brackets(pattern: str) -> None:
    """The bug: the class was pasted into the regex as written — `[z-a]`
    raised re.error on every path the rule was held against."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            matches(pattern, "/work/ws/a/b")
        except re.error as exc:  # pragma: no cover - the failure being tested
            pytest.fail(f"{pattern!r} raised {exc}")


# -- case -------------------------------------------------------------------------
@pytest.mark.parametrize(("pattern", "path", "fold", "expected"), [
    ("*.PEM", "/a/KEY.pem", False, False),
    ("*.PEM", "/a/KEY.pem", True, True),
    ("./Secrets/**", "/work/ws/secrets/x", True, True),
    ("./Secrets/**", "/work/ws/secrets/x", False, False),
    ("./[A-C].md", "/work/ws/b.md", True, True),
    ("~/.SSH", "/home/u/.ssh/id_rsa", True, True),
])
def test_case_is_folded_only_when_asked(pattern: str, path: str, fold: bool,
                                        expected: bool) -> None:
    assert matches(pattern, path, fold_case=fold) is expected


# -- literal_prefix -------------------------------------------------------------
@pytest.mark.parametrize(("pattern", "expected"), [
    ("./secrets/**", "/work/ws/secrets"),
    ("./secrets", "/work/ws/secrets"),
    ("./secrets/", "/work/ws/secrets"),
    ("secrets/keys/**", "/work/ws/secrets/keys"),
    ("//etc/ssl/**", "/etc/ssl"),
    ("//etc/ssl/private/key.pem", "/etc/ssl/private/key.pem"),
    ("~/.aws/**", "/home/u/.aws"),
    ("~/.aws", "/home/u/.aws"),
    ("~", "/home/u"),
    ("/config/**", "/proj/config"),
    ("/config", "/proj/config"),
    ("./a/../b/**", "/work/ws/b"),
    ("../shared/**", "/work/shared"),
    ("./", "/work/ws"),
    ("/**", "/proj"),
    (".env", None),            # a bare name is everywhere: no one path
    ("*.pem", None),
    ("secrets", None),
    ("./src/*.py", None),      # a glob inside
    ("./a/**/b", None),
    ("./file[0-9]", None),
    ("./a?", None),
    ("./a\\*b/**", None),      # an escape: the sandbox takes paths literally
    ("//**", None),            # the whole filesystem cannot be hidden
    ("//", None),
    ("//etc/..", None),
    ("/", "/proj"),
])
def test_literal_prefix_is_the_one_path_a_pattern_names(pattern: str,
                                                        expected: str | None) -> None:
    assert literal_prefix(pattern, root=ROOT, cwd=CWD, home=HOME) == expected


def test_literal_prefix_names_only_what_the_pattern_itself_matches() -> None:
    """Whatever the sandbox hides for a pattern, the pattern matches too."""
    for pattern in ("./secrets/**", "//etc/ssl/**", "~/.aws", "/config/**", "./"):
        prefix = literal_prefix(pattern, root=ROOT, cwd=CWD, home=HOME)
        assert prefix is not None
        assert matches(pattern, prefix) and matches(pattern, prefix + "/inside/x")
