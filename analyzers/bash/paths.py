"""Path resolution and the working-directory containment check.

Every path a command names is resolved lexically against the working
directory that command will run in (following ``cd`` earlier in the same
command line), normalized (``..`` collapsed), and judged:

* inside the working directory (or an extra read directory) or not — a real
  component-wise containment check: ``/work/p_backup`` is not inside
  ``/work/p``;
* sensitive (the shared list in ``profiles/sensitive-paths.toml``).

A glob is judged by everything it could expand to: ``src/*.py`` stays
inside, ``.*/x`` may climb through ``..`` and is treated as outside.
"""

from __future__ import annotations

import posixpath

from regexes import fnmatchcase
from values import valueclass

from .sensitive import SensitivePath, match_sensitive, sensitive_anywhere

# the enum module costs a cold start 3.5 ms (values/choices.py); type
# checkers see it
TYPE_CHECKING = False
if TYPE_CHECKING:
    from enum import StrEnum
else:
    from values import StrEnum


class Access(StrEnum):
    READ = "read"
    WRITE = "write"
    #: an operand of a command we do not know: maybe a path, maybe not
    UNKNOWN = "unknown"


@valueclass
class PathAccess:
    """One path a command touches, resolved and judged."""

    raw: str
    path: str  # normalized; "?/<raw>" when the working directory is unknown
    access: Access
    inside_cwd: bool
    sensitive: SensitivePath | None = None
    glob: bool = False
    #: the target of an output redirection (``> out.txt``), not an operand
    redirect: bool = False
    #: reached by walking a tree (a dotenv file, a sensitive entry below
    #: the root of `grep -r`), not named by the command: where a link on
    #: its way leads is never asked (the walk's root is)
    below: bool = False
    #: the absolute path with its `..` kept, for a path that has one: the
    #: question the caller resolves as the kernel does (see :func:`spell`)
    spelled: str = ""

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "access": self.access.value,
            "inside_cwd": self.inside_cwd,
        }
        if self.sensitive is not None:
            out["sensitive"] = self.sensitive.why
        if self.glob:
            out["glob"] = True
        if self.redirect:
            out["redirect"] = True
        return out


def normalize(path: str) -> str:
    """``posixpath.normpath`` without the POSIX ``//`` special case."""
    out = posixpath.normpath(path)
    if out.startswith("//"):
        out = "/" + out.lstrip("/")
    return out


def resolve(raw: str, cwd: str | None, home: str) -> str | None:
    """Absolute normalized form of ``raw`` seen from ``cwd``; ``None`` when
    it is relative and the working directory is unknown."""
    if raw == "~" or raw.startswith("~/"):
        return normalize(home + raw[1:]) if home != "~" else normalize(raw)
    if raw.startswith("~"):
        # `~-` is $OLDPWD: unknown. `~name` is another user's home: where
        # it is conventionally (never inside the workspace, and ~root/.ssh
        # is still ~/.ssh of somebody).
        user, _, rest = raw[1:].partition("/")
        if not user or not user.replace("_", "").replace("-", "").isalnum() or user[0] == "-":
            return None
        base = "/root" if user == "root" else f"/home/{user}"
        return normalize(f"{base}/{rest}" if rest else base)
    if raw.startswith("/"):
        return normalize(raw)
    if cwd is None:
        return None
    return normalize(posixpath.join(cwd, raw))


def spell(raw: str, cwd: str | None, home: str) -> str:
    """``raw`` made absolute with every ``..`` kept, when it has one (else
    ''). The kernel climbs out of where its walk is: with ``l -> .``,
    ``l/../.ssh/id_rsa`` is the parent's ``.ssh`` (from a review: `cat`
    printed ~/.ssh/id_rsa of a project under the home), and after `cd l`
    with ``l -> /elsewhere/d``, ``../x`` is /elsewhere/x. :func:`resolve`
    reads the text; the caller resolves this spelling and the analysis
    judges where it leads as well."""
    if ".." not in raw.split("/"):
        return ""
    if raw == "~" or raw.startswith("~/"):
        return home + raw[1:] if home != "~" else ""
    if raw.startswith("/"):
        return raw
    if cwd is None or raw.startswith("~"):
        return ""  # judged as unknown already
    return f"{cwd.rstrip('/')}/{raw}"


def is_inside(path: str, root: str) -> bool:
    """Component-wise containment: ``/a/b`` is inside ``/a``, ``/ab`` is not."""
    if root == "/":
        return path.startswith("/")
    root = root.rstrip("/")
    return path == root or path.startswith(root + "/")


def _may_climb(raw: str) -> bool:
    """A glob component that can match ``..`` (``.*``, ``.?``, ``..*``)
    may walk out of any directory. Only a component that starts with a
    literal ``.`` can: bash never matches ``.`` or ``..`` otherwise, dotglob
    or not, so a bare ``*`` stays where it is (``cat *`` asked before)."""
    return any(
        part.startswith(".") and any(c in part for c in "*?[")
        and fnmatchcase("..", part)
        for part in raw.split("/")
    )


def judge_path(
    raw: str,
    access: Access,
    cwds: tuple[str | None, ...],
    home: str,
    roots: tuple[str, ...],
    *,
    glob: bool = False,
) -> list[PathAccess]:
    """Resolve ``raw`` under every working directory it may run in.

    ``roots`` are the directories a *read* may touch (the working directory
    and the extra read directories); writes must stay inside ``roots[0]``.
    """
    out: list[PathAccess] = []
    climbs = glob and _may_climb(raw)
    # `~name/..`: where it climbs from is that user's real home, which the
    # text does not say (`~sys` is /dev), and a link on the way is never
    # looked up: unknown (from a review: `cat ~root/../<project>/l/../.ssh/
    # id_rsa` was read as a project file)
    other_home = raw.startswith("~") and not raw.startswith("~/") and raw != "~" \
        and ".." in raw.split("/")
    for cwd in cwds:
        path = None if other_home else resolve(raw, cwd, home)
        if path is None:
            out.append(PathAccess(raw, f"?/{raw}", access, False,
                                  sensitive_anywhere(raw, home), glob))
            continue
        allowed = roots if access is Access.READ else roots[:1]
        inside = not climbs and any(is_inside(path, r) for r in allowed)
        sensitive = match_sensitive(path, home, glob=glob)
        if (sensitive is not None and sensitive.level == "deny"
                and sensitive.outside_workspace_only and is_inside(path, roots[0])):
            sensitive = None
        out.append(PathAccess(raw, path, access, inside, sensitive, glob,
                              spelled=spell(raw, cwd, home)))
    return out
