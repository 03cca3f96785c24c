"""The vocabulary the bash generators draw from, apart from the code that
draws (fuzz/strategies.py).

Each list is here for a reason the review gave: the words that name the
fixture project's files (so the oracle's runs read something real), the
canaries and the paths outside the project (what a command must not
reach), the commands that write, run or connect (what containment wraps),
the wrappers that run their argument, and the characters that make a
scanner and bash disagree.
"""

from __future__ import annotations

#: files and directories of the oracle's fixture project, and what lies
#: outside it: canaries in the fake HOME, system files, devices, globs
PATHS = (
    "README.md", "notes.txt", "CHANGELOG.md", "package.json", "src/main.py", "src",
    "docs/guide.md", "logs/app.log", "scripts/build.sh", "tests/test_x.py", ".",
    "..", "../..", "/", ".env.example", ".gitignore", ".git/config", ".git/HEAD", ".git",
    "~/.ssh/id_rsa", "~/.aws/credentials", "~/elsewhere/.env", "~", "$HOME/.ssh/id_rsa",
    "/etc/passwd", "/etc/hostname", "/etc/shadow", "/proc/self/environ", "/dev/null",
    "/dev/tcp/127.0.0.1/9", "/tmp/x", "pwned", "out.txt",  # noqa: S108 (a word, never opened)
    "*", "*.md", "src/*", "**/*.py",
    "-", "--", ".git/hooks/pre-commit", ".claude/settings.json", ".env",
)

#: other words: patterns, numbers, formats, option-looking words
WORDS = (
    "x", "a", "TODO", "1", "0", "-1", "10", "%s", "{}", "a,b", "^", "$", ".*", "\\n", "main",
    "HEAD", "HEAD~1", "--all", "-n", "-r", "-e", "-o", "--", "=", "key=value", "-x", "@",
)

#: a value for an option, by what its metavar says it is
VALUES_BY_KIND = {
    "path": PATHS,
    "program": ("sh", "bash", "id", "touch pwned", "sh -c 'touch pwned'", "cat", "true",
                "python3", "/bin/sh", "xargs", "env"),
    "number": ("0", "1", "3", "-1", "99999", "1k"),
    "other": ("x", "a,b", "%s", "always", "never", "auto", "HEAD", "main", "1", ".*",
              "pwned", "~/.ssh/id_rsa", "--output=pwned", "-o", "sh"),
}

#: metavar words that say which kind of value an option takes
METAVAR_KINDS = (
    ("program", ("PROG", "COMMAND", "CMD", "EXEC", "PROGRAM", "SHELL", "PAGER", "EDITOR",
                 "SCRIPT", "FILTER", "TOOL")),
    ("path", ("FILE", "PATH", "DIR", "OUT", "DEST", "SOURCE", "TARGET", "SOCKET", "LOG")),
    ("number", ("NUM", "N", "SIZE", "COUNT", "LINES", "BYTES", "DEPTH", "WIDTH", "COLS", "LEN")),
)

#: commands that write, run a program, connect or read a secret: what the
#: containment and quoting properties wrap and re-quote (each one the
#: analyzer must not allow, alone or inside anything)
DANGEROUS = (
    "touch pwned", "rm -rf src", "rm README.md", "sh -c 'touch pwned'", "bash -c id",
    "curl http://127.0.0.1:9/", "wget -q http://127.0.0.1:9/", "python3 -c 'print(1)'",
    "tee pwned", "cp README.md pwned", "mv README.md pwned", "chmod 777 README.md",
    "git commit -qm x", "git -c core.pager=id log", "git config user.name x",
    "sed -i s/a/b/ README.md", "sed 'e id' notes.txt", "sed 'w pwned' notes.txt",
    "find . -delete", "find . -exec id ';'", "find . -fprint pwned",
    "dd if=README.md of=pwned", "ln -s /etc pwned", "nc 127.0.0.1 9",
    "rg --pre=id x", "sort -o pwned notes.txt", "sort --compress-program=id notes.txt",
    "git log --output=pwned", "git diff --ext-diff", "tree -o pwned", "cat ~/.ssh/id_rsa",
    "cat .env", "awk 'BEGIN{system(\"id\")}'", "jq -n 'input_filename' --rawfile a /etc/passwd",
    "xargs rm", "env -i sh", "npm install", "make", "perl -e 1", "node -e 1", "truncate -s0 x",
    "mkdir pwned", "install -m 755 notes.txt pwned", "rsync -a src pwned", "tar cf pwned src",
    "date -s 2020-01-01", "kill -9 1", "chown root README.md", "shred notes.txt",
    "printenv SHELLGATE_CANARY_KEY", "git -c core.fsmonitor=id status", "uniq notes.txt pwned",
)

#: prefixes that run what follows (each a different shape of "the next word
#: is a program"); `{}` is where the command goes when it is not at the end
WRAPPERS = (
    "timeout 5 ", "timeout -s KILL 5 ", "timeout --kill-after=1 5 ", "nice ", "nice -n 5 ",
    "nice -5 ", "env ", "env A=b ", "env -i ", "env -u HOME ", "env -- ", "nohup ",
    "command ", "command -p ", "builtin ", "exec ", "time ", "time -p ", "stdbuf -o0 ",
    "xargs ", "xargs -0 ", "xargs -n1 ", "xargs -I{} ", "xargs -i ", "xargs -r ",
    "xargs --no-run-if-empty ", "xargs -P2 ", "xargs -L 1 ", "xargs -E x ", "xargs -e ",
    "xargs -s 99 ", "xargs --max-args=1 ", "xargs -d '\\n' ", "xargs --null ", "A=b ",
    "LANG=C ", "ionice -c3 ", "setsid ", "chrt -i 0 ", "taskset 1 ", "sudo ", "doas ",
    "unbuffer ", "flock /tmp/l ", "watch -n1 ", "caffeinate ", "systemd-run --user ",
)

#: forms that run a command given as one quoted string
STRING_RUNNERS = ("bash -c ", "sh -c ", "eval ", "bash -lc ", "dash -c ", "bash -c -- ",
                  "sh -ec ", "su -c ", "script -qc ")

#: the contexts of the containment property: each runs its `X`
CONTAINERS = (
    "ls; {X}", "ls && {X}", "{X} &", "{X} & ls", "echo $({X})",
    "echo `{X}`", "({X})", "{{ {X}; }}", "bash -c {Q}", "sh -c {Q}", "eval {Q}",
    "cat <({X})", "echo \"$({X})\"", "ls\n{X}", "if true; then {X}; fi",
    "for i in 1; do {X}; done", "while {X}; do break; done", "f() {{ {X}; }}; f",
    "case a in a) {X};; esac", "! {X}", "x=$({X})", "echo ${{x:-$({X})}}", "[ -n \"$({X})\" ]",
    "ls > /dev/null; {X}", "time {X}",
)

#: contexts that bind tighter than a list: `ls | a && b` is `(ls | a) && b`,
#: so `X` must be one pipeline for them to run it as it is (a `cd` in `X`
#: would otherwise move into a pipeline's subshell: from the fuzzer,
#: `ls | cd evil && git log` runs git log where it was)
PIPELINE_CONTAINERS = ("ls || {X}", "ls | {X}", "true | {X} | cat")

#: contexts that take the command's words, not a command line: `X` must be
#: a simple command for them to run exactly it
SIMPLE_CONTAINERS = (
    "timeout 5 {X}", "env A=b {X}", "xargs {X}", "nice {X}", "nohup {X}", "command {X}",
    "exec {X}", "stdbuf -o0 {X}", "env -- {X}", "xargs -0 {X}", "timeout 1s {X}",
)

#: characters that look like spaces, letters or operators to a reader and
#: are none of them to bash, and control characters
UNICODE = ("\u00a0", "\u2000", "\u2003", "\u200b", "\u3000", "\ufeff", "\u202e", "\u2066",
           "\u0430", "\u0435", "\u043e", "\uff0d", "\u2212", "\u037e", "\uff1b", "\u2024",
           "\u02bc", "\u201c", "\u2018", "\u00ad", "\u0301", "\u0085", "\u2028")
CONTROL = ("\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\r", "\x1b", "\x7f", "\t")

#: embedded programs: pieces of jq, awk and sed, with comments and line
#: breaks (the scanner's hardest spots), and the doors each must see
JQ_PIECES = (".", ".a", "[.[]]", "keys", "length", "# c\n", "\n", " | ", "$ENV", "env",
             "input_filename", "$__loc__", "input", "inputs", "@sh", "@base64d", "\"x\"",
             "import \"a\" as a;", "include \"x\";", "def f: .;", "f", "debug", "stderr",
             "$__prog_args", "getpath([\"a\"])", "limit(1; .)", "try error catch .",
             "\"\\(1)\"", "ltrimstr(\"a\")", "splits(\"a\")", "halt_error", "input_line_number")
AWK_PIECES = ("{ print }", "{ print $1 }", "BEGIN { x = 1 }", "# c\n", "\n", "/x/", "/\"/",
              "NR==1", "{ print > \"pwned\" }", "{ print | \"id\" }", "BEGIN{system(\"id\")}",
              "{ getline < \"/etc/passwd\" }", "\"id\" | getline", "ENVIRON[\"HOME\"]",
              "{ printf \"%s\", $0 }", "length", "x = 1 / 2", ";", "{", "}", "(", ")",
              "{ print $0 >> \"/tmp/x\" }", "close(\"x\")", "fflush()", "-v x=1 ")
SED_PIECES = ("p", "s/a/b/", "s/a/b/g", "s/a/b/w pwned", "s/a/b/e", "e id", "w pwned",
              "r /etc/passwd", "R ~/.ssh/id_rsa", "W pwned", "1d", "$!N", "# c\n", "\n", ";",
              "y/ab/ba/", "/x/{p}", "1~2p", "a\\\ntext", "i x", "c x", "=", "l", "q", "Q",
              "s/a/b/I", "s/x/\\n/", "F", "z", "s/a/b/3", "s|a|b|", "0,/x/d", "v")
