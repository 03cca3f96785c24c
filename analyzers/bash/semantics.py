"""Exit-code semantics: not every non-zero exit is a failure.

``grep`` exiting 1 means "no match", ``diff`` exiting 1 means "the files
differ": reporting those as errors makes a model retry a command that worked.
The last command of a pipeline decides the exit status, so it decides the
meaning.
"""

from __future__ import annotations

from values import valueclass


@valueclass
class ExitMeaning:
    is_error: bool
    message: str | None = None


# command -> {exit code: message}; codes not listed follow the usual rule
# (0 success, anything else an error).
_TABLE: dict[str, dict[int, str]] = {
    "grep": {1: "no matches found"},
    "egrep": {1: "no matches found"},
    "fgrep": {1: "no matches found"},
    "rg": {1: "no matches found"},
    "git-grep": {1: "no matches found"},
    "diff": {1: "files differ"},
    "cmp": {1: "files differ"},
    "test": {1: "condition is false"},
    "[": {1: "condition is false"},
    "[[": {1: "condition is false"},
    "find": {1: "some paths could not be read (partial results)"},
}


def interpret_exit_code(argv: tuple[str, ...], exit_code: int) -> ExitMeaning:
    """Meaning of ``exit_code`` for the command whose effective argv is
    ``argv`` (wrappers already stripped)."""
    if exit_code == 0:
        return ExitMeaning(False)
    name = argv[0] if argv else ""
    if name == "git":
        sub = next((a for a in argv[1:] if not a.startswith("-")), "")
        if sub == "grep":
            name = "git-grep"
        elif sub == "diff" and ("--exit-code" in argv or "--quiet" in argv):
            name = "diff"  # --quiet implies --exit-code: 1 means "differences"
    meaning = _TABLE.get(name, {}).get(exit_code)
    if meaning is not None:
        return ExitMeaning(False, meaning)
    return ExitMeaning(True, f"exit code {exit_code}")
