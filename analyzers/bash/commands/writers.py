"""Commands that write: which operands they read and which they write.

These are never read-only; the tables exist so that the paths they touch are
known (for the working-directory check, sensitive paths and hard limits) and
so that an option's value is not mistaken for a path (``chmod -R 755 dir``).
"""

from __future__ import annotations

import posixpath

from .flags import Arg, ParsedArgs, Spec, parse_args

N, V, OPT, R = Arg.NONE, Arg.VALUE, Arg.OPTIONAL, Arg.READ


def _t(switches: str = "", valued: str = "", optional: str = "", reads: str = "") -> Spec:
    flags: dict[str, Arg] = {}
    for names, kind in ((switches, N), (valued, V), (optional, OPT), (reads, R)):
        for name in names.split():
            flags[name] = kind
    return Spec(flags=flags)


_RM = _t(
    "-f -i -I -r -R -d -v --force --recursive --dir --one-file-system --no-preserve-root --verbose",
    optional="--interactive --preserve-root",
)
_MV = _t(
    "-b -f -i -n -u -v -T -Z --force --interactive --no-clobber --update --verbose "
    "--no-target-directory --strip-trailing-slashes --exchange --no-copy",
    "-t -S --target-directory --suffix",
    "--backup --update",
)
_CP = _t(
    "-a -b -d -f -i -H -l -L -n -P -p -R -r -s -T -u -v -x -Z --archive --force "
    "--interactive --link --dereference --no-clobber --no-dereference --parents "
    "--recursive --symbolic-link --no-target-directory --verbose --one-file-system "
    "--attributes-only --remove-destination --strip-trailing-slashes --debug",
    "-t -S --target-directory --suffix --no-preserve --sparse",
    "--backup --preserve --reflink --update --context",
)
_MKDIR = _t("-p -v -Z --parents --verbose", "-m --mode", "--context")
_RMDIR = _t("-p -v --parents --verbose --ignore-fail-on-non-empty")
_TOUCH = _t(
    "-a -c -f -h -m --no-create --no-dereference", "-d -t --date --time", reads="-r --reference"
)
_CHMOD = _t(
    "-R -v -c -f --recursive --verbose --changes --silent --quiet "
    "--no-preserve-root --preserve-root",
    reads="--reference",
)
_CHOWN = _t(
    "-R -v -c -f -h -H -L -P --recursive --verbose --changes --silent --quiet "
    "--dereference --no-dereference --no-preserve-root --preserve-root",
    "--from",
    reads="--reference",
)
_LN = _t(
    "-s -f -n -v -b -i -T -r -L -P --symbolic --force --no-dereference --verbose "
    "--interactive --relative --logical --physical --no-target-directory",
    "-t -S --target-directory --suffix",
    "--backup",
)
_TEE = _t("-a -i -p --append --ignore-interrupts", optional="--output-error")
_TRUNCATE = _t("-c -o --no-create --io-blocks", "-s --size", reads="-r --reference")
_SHRED = _t(
    "-f -u -v -x -z --force --verbose --exact --zero",
    "-n -s --iterations --size",
    "--remove --random-source",
)


def writer_paths(name: str, argv: tuple[str, ...]) -> tuple[list[str], list[str]] | None:
    """(read paths, written paths) for a known writer, ``None`` otherwise or
    when its options cannot be parsed (then the caller treats every operand
    as a potential path)."""
    if name == "dd":
        return _dd(argv)
    sp = _SPECS.get(name)
    if sp is None:
        return None
    p = parse_args(argv, sp)
    if p.problem:
        return None
    ops = list(p.positionals)
    reads = list(p.reads)
    if name in ("rm", "mkdir", "rmdir", "touch", "tee", "truncate", "shred", "unlink"):
        return reads, ops
    if name == "mv":
        return reads, ops + _target(p)
    if name in ("cp", "install"):
        target = _target(p)
        if target:
            return reads + ops, target
        return reads + ops[:-1], ops[-1:]
    if name == "ln":
        target = _target(p)
        sources = ops if target else (ops if len(ops) == 1 else ops[:-1])
        links = target or (["."] if len(ops) == 1 else ops[-1:])
        return reads + sources + _link_targets(p, sources, links), links
    if name == "chmod":
        return reads, ops if p.has("--reference") else ops[1:]
    if name in ("chown", "chgrp"):
        return reads, ops if p.has("--reference") else ops[1:]
    return None


def _link_targets(p: ParsedArgs, sources: list[str], links: list[str]) -> list[str]:
    """Where a symbolic link's relative target leads: from the link's own
    directory, not the working directory (from a review: `ln -s
    ../conf/a.txt out/l; cat out/l` read conf/a.txt while the analysis
    looked at ../conf/a.txt). The link may be the last operand or go inside
    it (a directory): both are judged."""
    if not p.has("-s", "--symbolic") or p.has("-r", "--relative"):
        return []
    out: list[str] = []
    for source in sources:
        if source.startswith(("/", "~")):
            continue
        for link in links:
            out += [posixpath.join(posixpath.dirname(link.rstrip("/")) or ".", source),
                    posixpath.join(link, source)]
    return out


def _target(p: ParsedArgs) -> list[str]:
    value = p.value("-t", "--target-directory")
    return [value] if value else []


def _dd(argv: tuple[str, ...]) -> tuple[list[str], list[str]]:
    reads: list[str] = []
    writes: list[str] = []
    for a in argv[1:]:
        if a.startswith("if="):
            reads.append(a[3:])
        elif a.startswith("of="):
            writes.append(a[3:])
    return reads, writes


_SPECS: dict[str, Spec] = {
    "rm": _RM,
    "unlink": _t(),
    "mv": _MV,
    "cp": _CP,
    "install": _CP,
    "mkdir": _MKDIR,
    "rmdir": _RMDIR,
    "touch": _TOUCH,
    "chmod": _CHMOD,
    "chown": _CHOWN,
    "chgrp": _CHOWN,
    "ln": _LN,
    "tee": _TEE,
    "truncate": _TRUNCATE,
    "shred": _SHRED,
}

WRITERS = frozenset(_SPECS) | {"dd"}
