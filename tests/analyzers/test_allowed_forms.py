"""Forms the review found over-asked are allowed, and each one's near
misses — the same shape carrying an attack — are not.

Every allowed command here also runs through the execution oracle
(tests/fuzz/test_oracle.py, FAMILIES), which watches what it really does.
"""

from __future__ import annotations

import pytest

from analyzers import Verdict, WorkspaceFacts, analyze_bash

CWD, HOME = "/home/user/project", "/home/user"
#: a project searched for dotenv files and found free of them (the
#: facts around dotenv files: tests/analyzers/test_workspace_facts.py)
NO_DOTENV = WorkspaceFacts(searched=(CWD,))


def decide(command: str) -> Verdict:
    return analyze_bash(command, CWD, home=HOME, workspace=NO_DOTENV).verdict


ALLOWED = [
    # find hands readers the paths it found
    "find . -name '*.py' -exec grep -l TODO {} +",
    "find . -name '*.py' -exec grep -l TODO {} \\;",
    "find src -type f -exec wc -l {} +",
    "find . -name '*.py' -print0 | xargs -0 grep -n TODO",
    "find . -type f -print0 | xargs -0 -r wc -l",
    "{ find . -print0; } | xargs -0 cat",
    # awk programs that only read and print
    "awk '{print $1}' data.txt",
    "awk -F: '$3 > 100 {print $1}' data.txt",
    "awk '{ if ($1 > 5) print $2 }' data.txt",
    "awk '/a|b/ {n++} END {print n}' data.txt",
    "awk -v OFS=, '{print $1, $2}' data.txt",
    "awk '{ print $1 \"|\" $2 }' data.txt",
    "awk '{print $1/1024, $2/1024}' data.txt", "awk '{ s += $3 } END { print s / NR }' data.txt",
    "awk '{print $NF/2, 1.5e3/2}' data.txt",
    "ps aux | awk '{print $2}'",
    # brace expansion of plain words
    "echo {1..3}", "ls src/{a,b}.py", "cat notes{1..3}.txt",
    # non-secret variables printed
    "echo $PATH", "echo $HOME $PWD", "echo \"$SHELL\"",
    # exit statuses
    "grep foo f; echo $?",
    # process substitution into a reader: the commands inside judged on their own
    "diff <(ls a) <(ls b)", "diff <(sort a.txt) <(sort b.txt)", "cat < <(git log --oneline)",
    "cat <(echo a; echo b)",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_a_read_only_form_people_type_every_day_is_allowed(command: str) -> None:
    assert decide(command) is Verdict.ALLOW


NOT_ALLOWED = [
    # find: only readers of files, only {} alone, -exec ended as find ends it
    "find . -exec sed {} \\;",  # a planted name is a sed script
    "find . -exec jq {} \\;",
    "find . -exec sh -c 'cat {}' \\;",
    "find . -exec {} \\;",  # runs every file found
    "find . -exec cat {}/../../x \\;",
    "find . -exec grep x + -name -f/etc/shadow -exec cat {} \\;",
    "find . -exec grep x {} \\; \\; rm -rf ~",
    "find . -execdir grep x {} +",
    "find /etc -exec cat {} +",
    # find | xargs: only NUL-separated names and xargs that appends them as is
    "find . | xargs grep foo",  # `x -f/root/.ssh/id_rsa` splits into an option
    "find . -print | xargs -0 grep foo",
    "find . -printf '%p\\0' | xargs -0 grep foo",
    "find . -print0 -print | xargs -0 grep foo",
    "find . -print0 | xargs -0 -I{} grep foo {}",
    "find . -print0 | xargs -0 -d x grep foo",
    "find . -print0 | xargs -0 sed -n p",
    "find . -print0 | xargs -0 sh -c 'cat \"$@\"' _",
    "{ printf x; find . -print0; } | xargs -0 grep foo",
    "find . -print0 | tee list | xargs -0 grep foo",
    "find . -print0 | xargs -0 grep foo | xargs -0 cat",
    # awk programs that run, write, read beyond the input or the environment
    "awk '{print > \"out\"}' f", "awk '{print $1 >> \"/tmp/x\"}' f",
    "awk '{print | \"sh\"}' f", "awk 'BEGIN{system(\"id\")}'",
    "awk 'BEGIN{while((\"ls\"|getline l)>0) print l}'",
    "awk 'BEGIN{getline l < \"/etc/shadow\"; print l}'",
    "awk 'BEGIN{print ENVIRON[\"AWS_SECRET_ACCESS_KEY\"]}'",
    "awk 'BEGIN{x = SYMTAB[\"ENV\" \"IRON\"]}'",
    "awk 'BEGIN{ARGV[1]=\"/etc/shadow\"; ARGC=2} 1'",
    "awk '@load \"filefuncs\"; BEGIN{}'",
    "awk '/[/\"]/ {print > \"x\"}' f",
    "awk '{print a / 2 | \"sh\"; b / 3}' f",
    "awk -f prog.awk f", "awk -W exec prog.awk", "gawk -o out.txt '1' f",
    "awk '{print}' /etc/shadow", "awk '{print}' .env",
    # brace words that hide options or paths, or are not emulated
    "cat {/etc/shadow,x}", "cat {..,x}/secret", "git diff {HEAD,--output=/tmp/x}",
    "sort {-o,out.txt} in.txt", "git diff {@'{'0},--output=/tmp/pwned}",
    "echo {a,{b,c}}", "echo {01..3}",
    # variables: only non-secret ones, only printed by echo
    "echo $AWS_SECRET_ACCESS_KEY", "cat $PATH", "x=$PATH; echo $x", "/bin/echo $PATH",
    "echo $PATH > f", "echo $(cat $HOME/.ssh/id_rsa)",
    # process substitution: what runs inside is judged; only <(…) alone as a word
    "cat <(cat ~/.ssh/id_rsa)", "cat <(rm -rf x)", "bash <(echo ls)", ". <(echo ls)",
    "tee >(cat) < f", "cat x<(ls)", "diff <(ls) \"<(\"", "cat <(cd /etc && cat passwd)",
    "cat <(echo $(id))", "xargs -a <(echo /etc/shadow) cat", "jq -f <(echo env) -n",
    "diff <(ls) <(ls) --from-file=<(ls)", "diff <(ls a) <(ls b) > out",
    # from the red-team review of these forms
    "cat < {.env,}",
    "head -5 < .en{v..v}",
    "cat < {$HOME/.ssh/id_rsa,}",
    "cat < {/dev/tcp/127.0.0.1/9,}",
    "awk '{ print /\"/ | \"cat .env; touch owned\"; print /\"/ }' README.md",
    "awk '{ x = 2 * /\"/ } { system(\"id\") } { y = 2 * /\"/ }' README.md",
    "awk 'BEGIN { x = 1 ? /\"/ : 0; printf \"hi\" > \"written\"; y = 1 ? /\"/ : 0 }'",
    "awk '{ if (1) /#/ ; system(\"id\") }' README.md",
    "find . -name '*.py' -print0 | xargs -0 cat < notes.txt",
    "find . -name '*.py' -print0 2>&1 | xargs -0 cat",
    "git show :0:.env",
    "git show HEAD@{12:00}:.env",
    "echo HEAD:.env | git cat-file --batch",
    "echo $HOME/.ssh/*",
    "cat .envs/.production/.django",
    # from the second red-team review
    "[[ a =~ <(touch PWNED) ]]",
    "cat <<'EOF'\nit's\nEOF\n[[ a =~ <(touch PWNED_F1) ]]; echo \\'",
    "{ printf -- '/etc/hostname\\0.env\\0'; } 2< <(find . -name '*.txt' -print0) "
    "| ( xargs -0 cat )",
    "awk 'BEGIN { x = length /x+/; system(\"touch PWNED\"); y = 1 / 2 }'",
    # from the third red-team review
    "awk 'BEGIN { x = $length /x+/; system(\"touch PWNED\"); y = 1 / 2 }'",
    "awk 'BEGIN { x = 1length /x+/; system(\"touch PWNED\"); y = 1 / 2 }'",
    "awk 'BEGIN { x = length /[\"/]/; system(\"touch PWNED\") } # \"'",
    "awk 'BEGIN { x++ /[/; system(\"touch PWNED\"); y = 1 / 2 }'",
    "echo $PWD/../.ssh/*",
    "cat .envrc",
    # from the fourth red-team review
    "awk 'BEGIN { x = case / 2; system(\"touch PWNED\"); y = 1 / 1 }'",
    "awk '{ d = default / 1; print ENVIRON[\"SHELLGATE_CANARY_KEY\"]; z = 1 / 1 }' notes.txt",
    "TZ+='/tmp/*'; echo $TZ",
    "true && LANG='/*'; echo $LANG",
    "read PATH; echo $PATH",
    # from the fifth red-team review
    "echo .\"$TZ\"./.ssh/*",
    "echo \"$PWD\"/../.ssh/*",
    # git operands are paths wherever they point
    "git diff sub/../../outside f", "git log -p -- sub/../../outside",
    "git show HEAD:.env", "git grep -e x .env",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_the_same_form_carrying_an_attack_is_not_allowed(command: str) -> None:
    assert decide(command) is not Verdict.ALLOW
