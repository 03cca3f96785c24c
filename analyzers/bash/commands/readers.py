"""The allowlist of read-only commands and the options each may use.

"If we don't understand it, we don't allow it": a command is read-only only
when it is in this table (or has its own validator: git, find, grep/rg, sed)
and every option it is given is listed here. Options that write, execute or
reach the network are absent on purpose; the comment next to a table says
which ones and why.
"""

from __future__ import annotations

from .flags import Arg, ParsedArgs, Spec, spec

N, V, NUM, R, OPT = Arg.NONE, Arg.VALUE, Arg.NUM, Arg.READ, Arg.OPTIONAL

_HELP = {"--help": N, "--version": N}


def _long(*names: str, kind: Arg = N) -> dict[str, Arg]:
    return dict.fromkeys(names, kind)


def _date_check(p: ParsedArgs) -> str | None:
    # `date MMDDhhmm` and `date -s` set the clock; only `+FORMAT` is a read.
    if any(not x.startswith("+") for x in p.positionals):
        return "date with an operand other than +FORMAT sets the clock"
    # `date -d 'TZ="/etc/shadow" now'` opens the file as a time zone (from a review)
    if any(name in ("-d", "--date") and value and "TZ=" in value for name, value in p.flags):
        return "date -d with TZ= inside opens a time-zone file by path"
    return None


READERS: dict[str, Spec] = {
    # -- file contents -------------------------------------------------------
    "cat": spec(
        "AbeEnstTuv",
        long=_long(
            "--show-all",
            "--number-nonblank",
            "--show-ends",
            "--number",
            "--squeeze-blank",
            "--show-tabs",
            "--show-nonprinting",
        )
        | _HELP,
    ),
    "tac": spec("brs", long=_long("--before", "--regex") | {"--separator": V} | _HELP),
    "head": spec(
        "qvz",
        "nc",
        numeric_shorthand=True,
        long={"--lines": V, "--bytes": V}
        | _long("--quiet", "--silent", "--verbose", "--zero-terminated")
        | _HELP,
    ),
    "tail": spec(
        "fFqvz",
        "ncs",
        numeric_shorthand=True,
        long={
            "--lines": V,
            "--bytes": V,
            "--follow": OPT,
            "--sleep-interval": NUM,
            "--pid": NUM,
            "--max-unchanged-stats": NUM,
        }
        | _long("--retry", "--quiet", "--silent", "--verbose", "--zero-terminated")
        | _HELP,
    ),
    "nl": spec("p", "bhfdilnsvw", long=_HELP),
    "wc": spec(
        "clmwL",
        long=_long("--bytes", "--chars", "--lines", "--words", "--max-line-length")
        | {"--total": V}
        | _HELP,
    ),
    # od -w takes an optional value that must be attached (`-w16`): `-w FILE`
    # is the switch followed by the file.
    "od": spec(
        "bcdfilosvx",
        "AjNtS",
        optional="w",
        long=_HELP
        | {
            "--format": V,
            "--address-radix": V,
            "--skip-bytes": V,
            "--read-bytes": V,
            "--width": OPT,
            "--endian": V,
        },
    ),
    "hexdump": spec(
        "bcCdovx",
        "enNs",
        long=_HELP
        | {"--format": V, "--length": V, "--skip": V, "--canonical": N, "--no-squeezing": N},
    ),
    # xxd: `xxd -r` and a second operand (`xxd in out`) write files. Its
    # parser matches option prefixes (`-ps` is -p, not -p -s SEEK), so no
    # clusters: every option is listed whole and values are separate words.
    "xxd": Spec(
        flags={
            **dict.fromkeys(
                (
                    "-a",
                    "-autoskip",
                    "-C",
                    "-capitalize",
                    "-E",
                    "-EBCDIC",
                    "-e",
                    "-i",
                    "-include",
                    "-u",
                    "-uppercase",
                    "-d",
                    "-b",
                    "-bits",
                    "-p",
                    "-ps",
                    "-plain",
                    "-postscript",
                    "-h",
                    "-help",
                    "-v",
                    "-version",
                ),
                N,
            ),
            **dict.fromkeys(
                ("-c", "-cols", "-g", "-groupsize", "-l", "-len", "-o", "-offset", "-s", "-seek"),
                NUM,
            ),
            "-n": V,
            "-name": V,
        },
        max_positional=1,
        clusters=False,
    ),
    # strings (binutils) expands `@FILE` arguments: see _strings in the dispatcher.
    "strings": spec(
        "afdw",
        "ntTeE",
        long=_HELP
        | _long("--all", "--print-file-name")
        | {"--bytes": NUM, "--radix": V, "--encoding": V},
    ),
    # base64: GNU has no output option; BSD/macOS `-o FILE` writes, so it is absent.
    "base64": spec(
        "diz",
        "w",
        max_positional=1,
        long=_HELP | _long("--decode", "--ignore-garbage") | {"--wrap": NUM},
    ),
    "cmp": spec(
        "blsz",
        "in",
        long=_HELP
        | _long("--print-bytes", "--verbose", "--quiet", "--silent")
        | {"--ignore-initial": V, "--bytes": V},
        max_positional=4,
    ),
    "comm": spec(
        "123z",
        long=_HELP
        | _long("--check-order", "--nocheck-order", "--total", "--zero-terminated")
        | {"--output-delimiter": V},
        max_positional=2,
    ),
    # uniq: a second operand is the OUTPUT file.
    "uniq": spec(
        "cdDiuz",
        "fsw",
        max_positional=1,
        long=_HELP
        | _long("--count", "--repeated", "--ignore-case", "--unique", "--zero-terminated")
        | {
            "--all-repeated": OPT,
            "--group": OPT,
            "--skip-fields": NUM,
            "--skip-chars": NUM,
            "--check-chars": NUM,
        },
    ),
    "cut": spec(
        "nsz",
        "bcdf",
        long=_HELP
        | {
            "--bytes": V,
            "--characters": V,
            "--delimiter": V,
            "--fields": V,
            "--output-delimiter": V,
        }
        | _long("--complement", "--only-delimited", "--zero-terminated"),
    ),
    "tr": spec(
        "cCdst",
        paths="none",
        long=_HELP | _long("--complement", "--delete", "--squeeze-repeats", "--truncate-set1"),
    ),
    "paste": spec(
        "sz", "d", long=_HELP | _long("--serial", "--zero-terminated") | {"--delimiters": V}
    ),
    "join": spec(
        "iz",
        "aejotv12",
        long=_HELP
        | _long(
            "--ignore-case", "--check-order", "--nocheck-order", "--header", "--zero-terminated"
        ),
        max_positional=2,
    ),
    # util-linux column: -d (no headings) takes no value; -n (table name) does.
    "column": spec(
        "tdexLJ",
        "cnsoNRHOWTlr",
        long=_HELP
        | _long("--table", "--json", "--fillrows", "--keep-empty-lines")
        | {"--separator": V, "--output-separator": V, "--table-columns": V, "--output-width": V},
    ),
    "fold": spec("bs", "w", long=_HELP | _long("--bytes", "--spaces") | {"--width": NUM}),
    "fmt": spec("cstu", "wpg", numeric_shorthand=True, long=_HELP | {"--width": NUM}),
    "expand": spec("i", "t", long=_HELP | _long("--initial") | {"--tabs": V}),
    "unexpand": spec("a", "t", long=_HELP | _long("--all", "--first-only") | {"--tabs": V}),
    "rev": spec(long=_HELP),
    # `-c LIST` reads the files named inside LIST: paths nobody can see here.
    "md5sum": spec("btz", long=_HELP | _long("--binary", "--tag", "--text", "--zero")),
    "cksum": spec(
        "",
        "a",
        long=_HELP
        | _long("--raw", "--tag", "--untagged", "--base64")
        | {"--algorithm": V, "--length": NUM},
    ),
    # sort: -o/--output writes, -T/--temporary-directory writes elsewhere,
    # --compress-program runs a program (`sort --compress-program=sh`),
    # --files0-from reads a list of file names nobody can see here.
    "sort": spec(
        "bdfgiMhnRrVcCmsuz",
        "ktS",
        long=_HELP
        | _long(
            "--ignore-leading-blanks",
            "--dictionary-order",
            "--ignore-case",
            "--general-numeric-sort",
            "--ignore-nonprinting",
            "--month-sort",
            "--human-numeric-sort",
            "--numeric-sort",
            "--random-sort",
            "--reverse",
            "--version-sort",
            "--merge",
            "--stable",
            "--unique",
            "--zero-terminated",
            "--debug",
        )
        | {
            "--check": OPT,
            "--key": V,
            "--field-separator": V,
            "--buffer-size": V,
            "--parallel": NUM,
            "--sort": V,
            "--random-source": R,
        },
    ),
    # diff: -l/--paginate pipes through `pr`; nothing else writes or executes.
    "diff": spec(
        "abBcdeEfinNpqrstTuwyZ",
        "CUWxXSIFD",
        max_positional=2,
        long=_HELP
        | _long(
            "--brief",
            "--report-identical-files",
            "--side-by-side",
            "--left-column",
            "--suppress-common-lines",
            "--recursive",
            "--new-file",
            "--unidirectional-new-file",
            "--ignore-case",
            "--ignore-tab-expansion",
            "--ignore-trailing-space",
            "--ignore-space-change",
            "--ignore-all-space",
            "--ignore-blank-lines",
            "--text",
            "--strip-trailing-cr",
            "--minimal",
            "--speed-large-files",
            "--show-c-function",
            "--normal",
            "--ed",
            "--rcs",
            "--expand-tabs",
            "--initial-tab",
            "--suppress-blank-empty",
            "--no-dereference",
            "--ignore-file-name-case",
            "--no-ignore-file-name-case",
        )
        | {
            "--unified": OPT,
            "--context": OPT,
            "--color": OPT,
            "--width": NUM,
            "--label": V,
            "--ignore-matching-lines": V,
            "--horizon-lines": NUM,
            "--show-function-line": V,
            "--exclude": V,
            "--exclude-from": R,
            "--tabsize": NUM,
            "--from-file": R,
            "--to-file": R,
            "--line-format": V,
            "--old-line-format": V,
            "--new-line-format": V,
            "--unchanged-line-format": V,
            "--old-group-format": V,
            "--new-group-format": V,
            "--changed-group-format": V,
            "--unchanged-group-format": V,
            "--palette": V,
            "--starting-file": V,
        },
    ),
    # -- listing and metadata --------------------------------------------------
    "ls": spec(
        "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        "IwT",
        default_path=".",
        long=_HELP
        | _long(
            "--all",
            "--almost-all",
            "--author",
            "--escape",
            "--ignore-backups",
            "--directory",
            "--dired",
            "--classify",
            "--file-type",
            "--full-time",
            "--group-directories-first",
            "--no-group",
            "--human-readable",
            "--si",
            "--dereference",
            "--dereference-command-line",
            "--dereference-command-line-symlink-to-dir",
            "--inode",
            "--kibibytes",
            "--literal",
            "--numeric-uid-gid",
            "--hide-control-chars",
            "--show-control-chars",
            "--quote-name",
            "--reverse",
            "--recursive",
            "--size",
            "--context",
            "--zero",
        )
        | {
            "--block-size": V,
            "--color": OPT,
            "--colour": OPT,
            "--format": V,
            "--hide": V,
            "--hyperlink": OPT,
            "--indicator-style": V,
            "--ignore": V,
            "--quoting-style": V,
            "--sort": V,
            "--time": V,
            "--time-style": V,
            "--tabsize": NUM,
            "--width": NUM,
        },
    ),
    # tree: -o FILE writes, -R with -H writes per-directory HTML; both absent.
    # tree's own parser takes a value from the next word even inside a
    # cluster (`-Lo 2 out` writes out): no clusters.
    "tree": spec(
        "adlfxpsugDFqNQvtcUrnCAiSh",
        "LPIH",
        default_path=".",
        clusters=False,
        long=_HELP
        | _long(
            "--noreport",
            "--prune",
            "--dirsfirst",
            "--du",
            "--si",
            "--matchdirs",
            "--ignore-case",
            "--gitignore",
            "-J",
            "-X",
        )
        | {"--filelimit": NUM, "--timefmt": V, "--charset": V, "--sort": V},
    ),
    "du": spec(
        "abcDhHklLmPsSxz0",
        "dBt",
        reads="X",
        default_path=".",
        long=_HELP
        | _long(
            "--all",
            "--apparent-size",
            "--bytes",
            "--total",
            "--dereference-args",
            "--human-readable",
            "--inodes",
            "--dereference",
            "--count-links",
            "--no-dereference",
            "--separate-dirs",
            "--si",
            "--summarize",
            "--one-file-system",
            "--null",
        )
        | {
            "--max-depth": NUM,
            "--block-size": V,
            "--threshold": V,
            "--exclude": V,
            "--exclude-from": R,
            "--time": OPT,
            "--time-style": V,
        },
    ),
    "df": spec(
        "ahHiklPTv",
        "BtxF",
        long=_HELP
        | _long(
            "--all",
            "--human-readable",
            "--si",
            "--inodes",
            "--local",
            "--portability",
            "--print-type",
            "--total",
            "--sync",
            "--no-sync",
        )
        | {"--block-size": V, "--output": OPT, "--type": V, "--exclude-type": V},
    ),
    "stat": spec(
        "LftZ",
        "c",
        long=_HELP
        | _long("--dereference", "--file-system", "--terse")
        | {"--format": V, "--printf": V, "--cached": V},
    ),
    # file: -C compiles a magic file (writes); -m loads one (a read, whose
    # lines it echoes in warnings); -z/-Z/--uncompress run decompressors
    # found on PATH.
    "file": spec(
        "bcdEhiklLNnprsSv0",
        "eFP",
        reads="m",
        long=_HELP
        | _long(
            "--brief",
            "--mime",
            "--mime-type",
            "--mime-encoding",
            "--dereference",
            "--no-dereference",
            "--keep-going",
            "--special-files",
            "--raw",
            "--extension",
            "--apple",
            "--print0",
            "--no-pad",
            "--no-sandbox",
            "--preserve-date",
        )
        | {"--magic-file": R, "--exclude": V, "--separator": V},
    ),
    "realpath": spec(
        "eEmLPqsz",
        long=_HELP
        | _long(
            "--canonicalize-existing",
            "--canonicalize-missing",
            "--logical",
            "--physical",
            "--quiet",
            "--strip",
            "--no-symlinks",
            "--zero",
        )
        | {"--relative-to": R, "--relative-base": R},
    ),
    "readlink": spec(
        "efmnqsvz",
        long=_HELP
        | _long(
            "--canonicalize",
            "--canonicalize-existing",
            "--canonicalize-missing",
            "--no-newline",
            "--quiet",
            "--silent",
            "--verbose",
            "--zero",
        ),
    ),
    "basename": spec(
        "az", "s", paths="none", long=_HELP | _long("--multiple", "--zero") | {"--suffix": V}
    ),
    "dirname": spec("z", paths="none", long=_HELP | _long("--zero")),
    "pwd": spec("LP", paths="none", max_positional=0, long=_HELP),
    # -- environment-free system facts ---------------------------------------
    "whoami": spec(paths="none", max_positional=0, long=_HELP),
    "id": spec(
        "gGnruzZa",
        paths="none",
        long=_HELP
        | _long("--group", "--groups", "--name", "--real", "--user", "--zero", "--context"),
    ),
    "groups": spec(paths="none", long=_HELP),
    "uname": spec(
        "asnrvmpio",
        paths="none",
        max_positional=0,
        long=_HELP
        | _long(
            "--all",
            "--kernel-name",
            "--nodename",
            "--kernel-release",
            "--kernel-version",
            "--machine",
            "--processor",
            "--hardware-platform",
            "--operating-system",
        ),
    ),
    # hostname NAME sets the host name.
    "hostname": spec(
        "adfisAIy",
        paths="none",
        max_positional=0,
        long=_HELP | _long("--fqdn", "--short", "--domain", "--ip-address", "--all-ip-addresses"),
    ),
    "nproc": spec(paths="none", max_positional=0, long=_HELP | _long("--all") | {"--ignore": NUM}),
    "uptime": spec("ps", paths="none", max_positional=0, long=_HELP | _long("--pretty", "--since")),
    "free": spec(
        "bkmghltwv",
        "cs",
        paths="none",
        max_positional=0,
        long=_HELP
        | _long(
            "--bytes",
            "--kilo",
            "--mega",
            "--giga",
            "--human",
            "--si",
            "--total",
            "--wide",
            "--lohi",
        ),
    ),
    "arch": spec(paths="none", max_positional=0, long=_HELP),
    "tty": spec("s", paths="none", max_positional=0, long=_HELP | _long("--silent", "--quiet")),
    # no -m/--charmaps: it runs gzip over compressed charmaps (execution oracle)
    "locale": spec("akcv", paths="none", long=_HELP),
    "date": spec(
        "uRI",
        "d",
        reads="r",
        paths="none",
        check=_date_check,
        long=_HELP
        | _long("--utc", "--universal", "--rfc-email", "--debug")
        | {"--date": V, "--iso-8601": OPT, "--rfc-3339": V, "--reference": R},
    ),
    "cal": spec("13ymjSw", paths="none", long=_HELP),
    "sleep": spec(paths="none", long=_HELP),
    "seq": spec(
        "w", "sf", paths="none", long=_HELP | {"--separator": V, "--format": V, "--equal-width": N}
    ),
    "which": spec(
        "as",
        paths="none",
        long=_HELP
        | _long("--all", "--skip-alias", "--skip-functions", "--read-alias", "--read-functions"),
    ),
    "whereis": spec("bmsulf", "BMS", paths="none", long=_HELP),
    "type": spec("afptP", paths="none"),
    "true": Spec(flags={}, paths="none"),
    "false": Spec(flags={}, paths="none"),
    ":": Spec(flags={}, paths="none"),
    "cd": Spec(flags={"-L": N, "-P": N, "-e": N, "-@": N}, max_positional=1, paths="none"),
}
for _alias, _target in (
    ("sha1sum", "md5sum"),
    ("sha224sum", "md5sum"),
    ("sha256sum", "md5sum"),
    ("sha384sum", "md5sum"),
    ("sha512sum", "md5sum"),
    ("b2sum", "md5sum"),
    ("shasum", "md5sum"),
):
    READERS[_alias] = READERS[_target]

READERS["diff"] = Spec(
    flags={**READERS["diff"].flags, "-X": R},
    max_positional=2,
)

#: Commands whose every argument is data, never a path or an option that
#: changes what they do.
ARGUMENT_AGNOSTIC = frozenset({"echo", "true", "false", ":"})
