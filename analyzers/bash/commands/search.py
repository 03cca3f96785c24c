"""grep and ripgrep: the pattern is the first operand unless given by
``-e``/``-f``; every other operand is a path that is read.

ripgrep options that execute programs are absent: ``--pre``/``--pre-glob``
run a preprocessor per file (``rg --pre=sh x`` runs ``sh FILE``),
``--hostname-bin`` runs a program to learn the host name, and
``-z``/``--search-zip`` spawns decompressors found on PATH.
"""

from __future__ import annotations

from .flags import Arg, ParsedArgs, Spec

N, V, NUM, R, OPT = Arg.NONE, Arg.VALUE, Arg.NUM, Arg.READ, Arg.OPTIONAL


def _long(*names: str, kind: Arg = N) -> dict[str, Arg]:
    return dict.fromkeys(names, kind)


_GREP_LONG = _long(
    "--extended-regexp",
    "--fixed-strings",
    "--basic-regexp",
    "--perl-regexp",
    "--ignore-case",
    "--no-ignore-case",
    "--word-regexp",
    "--line-regexp",
    "--no-messages",
    "--invert-match",
    "--version",
    "--help",
    "--byte-offset",
    "--line-number",
    "--no-line-number",
    "--line-buffered",
    "--with-filename",
    "--no-filename",
    "--only-matching",
    "--quiet",
    "--silent",
    "--text",
    "--count",
    "--files-with-matches",
    "--files-without-match",
    "--initial-tab",
    "--null",
    "--null-data",
    "--recursive",
    "--dereference-recursive",
    "--binary",
) | {
    "--regexp": V,
    "--file": R,
    "--max-count": NUM,
    "--label": V,
    "--binary-files": V,
    "--devices": V,
    "--directories": V,
    "--exclude": V,
    "--exclude-dir": V,
    "--include": V,
    "--exclude-from": R,
    "--after-context": NUM,
    "--before-context": NUM,
    "--context": NUM,
    "--color": OPT,
    "--colour": OPT,
}


def _grep_paths_after_pattern(p: ParsedArgs) -> bool:
    """True when the first operand is the pattern (no -e/-f given)."""
    return not p.has("-e", "--regexp", "-f", "--file")


GREP = Spec(
    flags={
        **{f"-{c}": N for c in "EFGPiywxsvVbnHhoqaclLTZzrRUI"},
        **{f"-{c}": V for c in "eDd"},
        "-f": R,
        "-m": NUM,
        "-A": NUM,
        "-B": NUM,
        "-C": NUM,
        **_GREP_LONG,
    },
    numeric_shorthand=True,
)

_RG_LONG = _long(
    "--case-sensitive",
    "--ignore-case",
    "--smart-case",
    "--fixed-strings",
    "--word-regexp",
    "--line-regexp",
    "--invert-match",
    "--count",
    "--count-matches",
    "--files",
    "--files-with-matches",
    "--files-without-match",
    "--line-number",
    "--no-line-number",
    "--with-filename",
    "--no-filename",
    "--heading",
    "--no-heading",
    "--hidden",
    "--no-hidden",
    "--no-ignore",
    "--no-ignore-vcs",
    "--no-ignore-dot",
    "--no-ignore-global",
    "--no-ignore-parent",
    "--no-ignore-exclude",
    "--no-ignore-files",
    "--ignore",
    "--follow",
    "--no-follow",
    "--only-matching",
    "--json",
    "--no-json",
    "--vimgrep",
    "--null",
    "--null-data",
    "--stats",
    "--trim",
    "--column",
    "--no-column",
    "--byte-offset",
    "--multiline",
    "--multiline-dotall",
    "--pcre2",
    "--no-pcre2",
    "--passthru",
    "--text",
    "--binary",
    "--no-binary",
    "--one-file-system",
    "--quiet",
    "--type-list",
    "--no-config",
    "--no-messages",
    "--crlf",
    "--pretty",
    "--unrestricted",
    "--sort-files",
    "--debug",
    "--trace",
    "--help",
    "--version",
    "--max-columns-preview",
    "--glob-case-insensitive",
    "--block-buffered",
    "--line-buffered",
    "--invert-match",
    "--include-zero",
    "--no-unicode",
    "--auto-hybrid-regex",
    "--no-filename",
) | {
    "--regexp": V,
    "--file": R,
    "--glob": V,
    "--iglob": V,
    "--type": V,
    "--type-not": V,
    "--type-add": V,
    "--type-clear": V,
    "--max-count": NUM,
    "--max-depth": NUM,
    "--maxdepth": NUM,
    "--after-context": NUM,
    "--before-context": NUM,
    "--context": NUM,
    "--context-separator": V,
    "--field-match-separator": V,
    "--field-context-separator": V,
    "--path-separator": V,
    "--replace": V,
    "--color": V,
    "--colors": V,
    "--sort": V,
    "--sortr": V,
    "--max-columns": NUM,
    "--max-filesize": V,
    "--threads": NUM,
    "--engine": V,
    "--encoding": V,
    "--ignore-file": R,
    "--dfa-size-limit": V,
    "--regex-size-limit": V,
    "--generate": V,
    "--hyperlink-format": V,
}
RG = Spec(
    flags={
        **{f"-{c}": N for c in "iSsFxwvclLnNHIoupqaU0bjhP"},
        **{f"-{c}": V for c in "egtTrEM"},
        "-f": R,
        "-m": NUM,
        "-A": NUM,
        "-B": NUM,
        "-C": NUM,
        "-d": NUM,
        "-j": NUM,
        "-.": N,
        **_RG_LONG,
    },
)


def search_paths(argv0: str, p: ParsedArgs) -> list[str]:
    """Paths read by grep/rg: ``-f`` files and :func:`search_operands`."""
    return list(p.reads) + search_operands(argv0, p)


def search_operands(argv0: str, p: ParsedArgs) -> list[str]:
    """The files and directories grep/rg search: operands after the
    pattern, and the working directory for a recursive search with none."""
    ops = list(p.positionals)
    if argv0 == "rg" and p.has("--files", "--type-list"):
        pattern_given = False
    else:
        pattern_given = _grep_paths_after_pattern(p)
    if pattern_given and ops:
        ops = ops[1:]
    ops = [o for o in ops if o != "-"]
    if not ops and (argv0 == "rg" or grep_recursive(p)):
        ops = ["."]
    return ops


def grep_recursive(p: ParsedArgs) -> bool:
    """Does this grep walk directories? ``-r``, ``-R``, and ``-d``/
    ``--directories`` with any value but ``read`` or ``skip`` (grep takes
    abbreviations: from a review, ``grep -d rec`` recursed)."""
    if p.has("-r", "-R", "--recursive", "--dereference-recursive"):
        return True
    return any(v not in ("read", "skip") for f, v in p.flags
               if f in ("-d", "--directories") and v is not None)
