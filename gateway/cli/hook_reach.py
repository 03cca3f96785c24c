"""What Claude Code's own tools reach on the host, judged as the gateway
would judge the same reach: under ``shellgate hook`` an allow runs the
call unsandboxed and unasked, so the gateway tool's allow (which holds for
its own, narrower implementation) is not enough.

* Grep is ripgrep over the tree, dotenv files included: judged as that
  ripgrep command.
* Glob lists what its pattern matches, through any link on the way:
  judged as a listing of the same glob.
* WebFetch resolves the name itself: resolved here, and every address
  judged as the gateway's WebFetch judges it before connecting.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from .hook_guard import decision

__all__ = ["claude_code_globs", "glob_reach", "grep_reach", "webfetch_reach"]


def grep_reach(data: Mapping[str, Any], cwd: str, home: str,
               dirs: tuple[str, ...]) -> dict[str, Any] | None:
    """Claude Code's Grep is ripgrep over the tree, dotenv files
    included; the gateway's own Grep leaves them out, so its allow says
    nothing here. Judged as the ripgrep command Claude Code runs. From a
    review: ``Grep {"pattern": "KEY", "glob": ".env"}`` was allowed, and
    ripgrep's globs override its ignore rules: it printed the project's
    ``.env``. A negative glob (``!.env*``) keeps them out."""
    from ..workspace import analyze_in_workspace  # noqa: PLC0415 -- a Grep call's alone

    pattern, root = data.get("pattern"), data.get("path") or cwd
    if not isinstance(pattern, str) or not isinstance(root, str):
        return None
    argv = ["rg", "--hidden"]
    glob = data.get("glob")
    for g in claude_code_globs(glob if isinstance(glob, str) else ""):
        argv += ["--glob", g]
    argv += ["-e", pattern, "--", root]
    analysis = analyze_in_workspace(shlex.join(argv), cwd, extra_dirs=dirs, home=home)
    if analysis.hard_limit or analysis.verdict.value == "deny":
        return decision("deny", f"shellgate: Claude Code's Grep {analysis.reason}")
    if any(p.sensitive is not None for s in analysis.subcommands for p in s.paths):
        return decision("ask", f"shellgate: Claude Code's Grep {analysis.reason} (its "
                        "ripgrep searches dotenv files; a glob such as !.env* keeps "
                        "them out)")
    return None


#: a glob's own characters, left unquoted in the listing judged; the rest
#: of the pattern is quoted
_GLOB_CHARS = frozenset("*?[]")
#: characters of glob syntaxes other than bash's (escapes, braces left
#: whole, extglob groups)
_OTHER_SYNTAX = frozenset("\\{}()")
def _glob_word(pattern: str) -> str:
    """``pattern`` (no braces) as one bash word that expands as the glob
    does."""
    out: list[str] = []
    literal = ""
    for ch in pattern:
        if ch in _GLOB_CHARS:
            out += [shlex.quote(literal)] if literal else []
            out.append(ch)
            literal = ""
        else:
            literal += ch
    out += [shlex.quote(literal)] if literal else []
    return "".join(out)


def glob_reach(data: Mapping[str, Any], cwd: str, home: str,
               dirs: tuple[str, ...]) -> dict[str, Any] | None:
    """Claude Code's Glob lists, on the host, what its pattern matches —
    through a link among the pattern's directories wherever it leads.
    The gateway's Glob judges the search's root only (its own walk never
    enters a link), so its allow says nothing here. Attack (from a review):
    with `keys -> ~/.ssh` (or `up -> ..`) in the project, ``Glob
    {"pattern": "keys/*"}`` was allowed and listed the home's keys. Judged
    as `ls -d` of the same glob (links matched by its parts judged where
    they lead); a ``**`` also asks when any link to a directory below the
    root leads out of the working directories."""
    from ..tools.glob import expand_braces  # noqa: PLC0415 -- a Glob call's alone
    from ..workspace import analyze_in_workspace  # noqa: PLC0415

    pattern, root = data.get("pattern"), data.get("path") or cwd
    if not isinstance(pattern, str) or not isinstance(root, str) or not pattern:
        return None
    try:
        patterns = expand_braces(pattern.replace("**", "*"))
    except ValueError as exc:
        return decision("ask", f"shellgate: Claude Code's Glob of {pattern}: {exc}; a person "
                        "decides")
    base = shlex.quote(root.rstrip("/"))
    words = [_glob_word(p) if p.startswith("/") else f"{base}/{_glob_word(p)}"
             for p in dict.fromkeys(patterns)]
    analysis = analyze_in_workspace(f"ls -d -- {' '.join(words)}", cwd, extra_dirs=dirs,
                                    home=home)
    if analysis.hard_limit or analysis.verdict.value == "deny":
        return decision("deny", f"shellgate: Claude Code's Glob of {pattern}: {analysis.reason}")
    if analysis.verdict.value != "allow":
        return decision("ask", f"shellgate: Claude Code's Glob of {pattern} lists what the "
                        f"gateway would ask about: {analysis.reason}")
    start = os.path.normpath(os.path.join(cwd, root))
    for alternative in dict.fromkeys(patterns):
        out = _dir_out(start, alternative, (cwd, *dirs))
        if out is not None:
            return decision("ask", f"shellgate: Claude Code's Glob of {pattern} lists {out[0]} "
                            f"({out[1]}), outside the working directories")
    # Syntax a glob library reads and bash does not — a backslash escape, a
    # brace group of one (`{keys}/*`), extglob (`@(keys)/*`): from a
    # review, ripgrep's and node's globs listed keys/id_rsa through them.
    # Judged as a `**` is: by every link below where the pattern starts.
    other_syntax = any(c in alt for alt in patterns for c in _OTHER_SYNTAX)
    if "**" in pattern or other_syntax:
        fixed = []  # the pattern's leading directories: the walk starts there
        for part in pattern.split("/")[:-1]:
            if any(c in part for c in "*?[{}()\\!@+"):
                break
            fixed.append(part)
        start = os.path.join(cwd, root, "/".join(fixed)) if fixed else os.path.join(cwd, root)
        out = _link_out(os.path.normpath(start), (cwd, *dirs))
        if out is not None:
            return decision("ask", f"shellgate: Claude Code's Glob of {pattern} may follow "
                            f"{out[0]}, a link to {out[1]}, outside the working directories"
                            + (" (its syntax is no shell's)" if other_syntax else ""))
    return None


#: directories a glob's parts may stand for, looked at; past it, unknown
_MAX_DIRS = 256


def _dir_out(root: str, pattern: str, places: tuple[str, ...]) -> tuple[str, str] | None:
    """A directory the glob lists (each of its parts but the last, as it
    expands on the host now) that lies outside ``places`` as the kernel
    resolves it: `up/*` with `up -> ..` lists the project's parent even
    when every name there leads back inside."""
    import glob  # noqa: PLC0415 -- a Glob call's alone

    from ..resolver import Resolver  # noqa: PLC0415

    resolve = Resolver()
    real = [resolve(p) for p in places]
    parts = pattern.split("/")
    dirs = ["/"] if pattern.startswith("/") else [root]
    for part in parts[:-1]:
        if part == "**":
            break  # every depth below: see _link_out
        if part == "":
            continue  # `a//b`, or the root of an absolute pattern
        if any(c in part for c in _GLOB_CHARS):
            found: list[str] = []
            for d in dirs:
                found += [m for m in glob.glob(os.path.join(glob.escape(d), part))
                          if os.path.isdir(m)]
            dirs = found
        else:
            dirs = [os.path.join(d, part) for d in dirs]
        if len(dirs) > _MAX_DIRS:
            return dirs[0], "one of more directories than were looked at"
        for d in dirs:
            leads = resolve(d)
            if _outside(leads, real):
                return d, leads
    return None


def _link_out(root: str, places: tuple[str, ...]) -> tuple[str, str] | None:
    """A link to a directory below ``root`` leading out of ``places``, or
    ``root`` itself when the search below it did not finish (unknown)."""
    from sandbox import dotenv_below, runtime_dir  # noqa: PLC0415

    from ..resolver import Resolver  # noqa: PLC0415

    found = dotenv_below([root], runtime_dir)
    resolve = Resolver()
    real = [resolve(p) for p in places]
    for link in found.links:
        leads = resolve(link)
        if _outside(leads, real):
            return link, leads
    if found.unknown:
        return found.unknown[0], "a place the search did not reach"
    return None


def _outside(path: str, places: list[str]) -> bool:
    """Is ``path`` in none of ``places`` (resolved alike)?"""
    return not any(path == p or path.startswith(p.rstrip("/") + "/") for p in places)


#: seconds the hook waits for the system resolver (Claude Code's own
#: deadline for the hook is well beyond)
RESOLVE_TIMEOUT_S = 3.0


def webfetch_reach(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """Claude Code fetches the URL itself: the name is resolved here, as
    the gateway's WebFetch resolves it before connecting, and every address
    judged the same way. From a review: `localhost`, a hosts-file name for
    169.254.169.254 and `metadata.google.internal` got no decision while
    the gateway's WebFetch refuses them all. A name that does not resolve
    in time asks (it may resolve for Claude Code a moment later)."""
    import asyncio  # noqa: PLC0415
    import ipaddress  # noqa: PLC0415

    from ..tools.web_guard import AddressPolicy, parse_url, system_resolver  # noqa: PLC0415

    url = data.get("url")
    target = parse_url(url) if isinstance(url, str) else None
    if target is None or isinstance(target, str) or target.literal is not None:
        return None  # refused or judged by the tool's own check already

    async def resolve() -> Sequence[str]:
        return await asyncio.wait_for(system_resolver(target.host, target.port),
                                      RESOLVE_TIMEOUT_S)

    try:
        found = asyncio.run(resolve())
    except (OSError, TimeoutError) as exc:
        return decision("ask", f"shellgate: {target.host} could not be resolved to judge "
                        f"its addresses ({exc.__class__.__name__})")
    policy = AddressPolicy()
    for text in dict.fromkeys(found):
        ip = ipaddress.ip_address(text.split("%", 1)[0])
        why = policy.refusal(ip)
        if why is not None:
            return decision("deny", f"shellgate: {target.host} resolves to {ip}, which is "
                            f"{why}; WebFetch reaches public addresses only")
    return None


def claude_code_globs(glob: str) -> list[str]:
    """The ``--glob`` values Claude Code's Grep passes for its ``glob``:
    split at spaces, and at commas outside a ``{…}`` pattern."""
    out: list[str] = []
    for raw in glob.split():
        out.extend([raw] if "{" in raw and "}" in raw else [g for g in raw.split(",") if g])
    return out
