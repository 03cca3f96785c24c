"""What must hold of the analyzer for every command: the properties
`shellgate fuzz` checks (fuzz/runner.py) and the test suite replays
(tests/fuzz/).

Each property has a generator (its examples are small JSON objects, so a
finding can be saved and replayed) and a check that returns a
:class:`Failure` or ``None``. The checks:

* ``total``        never raises, answers in bounded time, result serializable
                   (tree-sitter and the legacy splitter alike);
* ``deterministic`` the same command gets the same analysis twice;
* ``containment``  if X is not allowed, nothing that runs X is (`ls; X`,
                   `X &`, `echo $(X)`, `bash -c 'X'`, `timeout 5 X`, …);
* ``quoting``      re-quoting the words of a command never turns a
                   not-allowed command into an allowed one;
* ``legacy``       the legacy splitter (tree-sitter absent) is never more
                   permissive than the tree-sitter analysis;
* ``bash_syntax``  a command `bash -n` rejects is never allowed;
* ``oracle``       an allowed command does nothing the execution oracle sees
                   (fuzz/oracle.py): no write, no program of its own, no
                   connection, no secret read.
"""

from __future__ import annotations

import shlex
import string
import subprocess
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

from analyzers import BashAnalysis, Verdict, WorkspaceFacts, analyze_bash
from regexes import regex
from values import valueclass

from . import grammar as g
from .mutate import mutated
from .oracle import Oracle
from .pieces import S, requote, shell_word
from .strategies import Tools, command, dangerous, likely_allowed

Example = dict[str, Any]

#: where the analyzer is told the oracle's fixture project and fake HOME lie
PROJECT, HOME = "/oracle/project", "/oracle/home"
_RANK = {Verdict.ALLOW: 0, Verdict.ASK: 1, Verdict.DENY: 2}


@valueclass
class Failure:
    """A property that did not hold: what was analyzed and what went wrong."""

    property: str
    example: Example
    command: str
    verdict: str
    trace: str
    #: what makes two failures one bug (the worker stops looking for a
    #: signature it has found: a deep run found `env -i rg X` 42 times, one
    #: file X at a time); the command itself when nothing better is known
    signature: str = ""

    def key(self) -> tuple[str, str]:
        return self.property, self.signature or self.command


@valueclass(frozen=False, slots=False)
class Context:
    """What the properties share in one process: the installed tools'
    options, the mutator's seeds, the oracle (``None`` without --oracle)."""

    mode: str
    tools: Tools
    attacks: tuple[str, ...]
    benign: tuple[str, ...]
    oracle: Oracle | None = None
    workspace: WorkspaceFacts | None = None
    oracle_runs: int = 0
    #: analyses done (what the display calls examples per second)
    analyses: int = 0

    def analyze(self, cmd: str, *, ts: bool = True) -> BashAnalysis:
        self.analyses += 1
        return analyze_bash(cmd, PROJECT, home=HOME, use_tree_sitter=ts,
                            workspace=self.workspace)


@valueclass
class Property:
    name: str
    summary: str
    examples: Callable[[Context], S[Example]]
    check: Callable[[Context, Example], Failure | None]
    oracle: bool = False


def _fail(prop: str, example: Example, cmd: str, verdict: Verdict | str, trace: str,
          signature: str = "") -> Failure:
    value = verdict.value if isinstance(verdict, Verdict) else verdict
    return Failure(prop, example, cmd, value, trace[:2000], signature)


def _commands(ctx: Context) -> S[Example]:
    raw = st.text(max_size=200 if ctx.mode == "ci" else 5000)
    return st.one_of(command(ctx.mode, ctx.tools), command(ctx.mode, ctx.tools),
                     mutated(ctx.attacks), raw).map(lambda c: {"command": c})


# -- total: never raises, bounded time --------------------------------------------------------


def time_budget(cmd: str) -> float:
    """Seconds an analysis may take: generous (a loaded machine must not
    make findings) but linear, so quadratic behaviour on long input shows."""
    return 3.0 + len(cmd) / 10_000


def _timed(ctx: Context, cmd: str, ts: bool) -> tuple[BashAnalysis, float]:
    start = time.perf_counter()
    result = ctx.analyze(cmd, ts=ts)
    result.to_dict()
    return result, time.perf_counter() - start


def check_total(ctx: Context, ex: Example) -> Failure | None:
    cmd = ex["command"]
    for ts in (True, False):
        try:
            _, took = _timed(ctx, cmd, ts)
            if took > time_budget(cmd):
                _, took = _timed(ctx, cmd, ts)  # once more: a busy machine is no finding
                if took > time_budget(cmd):
                    return _fail("total", ex, cmd, "slow", f"{'tree-sitter' if ts else 'legacy'}"
                                 f" analysis took {took:.1f} s of {len(cmd)} characters")
        except Exception as exc:  # the property: nothing escapes
            tb = "".join(traceback.format_exception(exc, limit=-6))
            where = traceback.extract_tb(exc.__traceback__)[-1:]
            return _fail("total", ex, cmd, "raised",
                         f"{'tree-sitter' if ts else 'legacy'}: {type(exc).__name__}: {tb}",
                         f"{type(exc).__name__} at "
                         + "".join(f"{f.filename}:{f.lineno}" for f in where))
    return None


# -- deterministic ----------------------------------------------------------------------------


def check_deterministic(ctx: Context, ex: Example) -> Failure | None:
    cmd = ex["command"]
    first, second = ctx.analyze(cmd).to_dict(), ctx.analyze(cmd).to_dict()
    if first == second:
        return None
    keys = sorted(k for k in first.keys() | second.keys() if first.get(k) != second.get(k))
    return _fail("deterministic", ex, cmd, str(first.get("decision")),
                 f"two analyses differ in {keys}")


# -- containment ------------------------------------------------------------------------------

_SIMPLE_OK = frozenset(string.ascii_letters + string.digits + "_./-=~ '\",:%@+")


def _is_simple(cmd: str) -> bool:
    """Plainly one simple command (the word-taking contexts need one)."""
    return bool(cmd) and cmd[0].isalpha() and set(cmd) <= _SIMPLE_OK


def _one_pipeline(cmd: str) -> bool:
    """Plainly no list in it (no `;`, `&`, `&&`, `||` or line break anywhere)."""
    return not any(c in cmd for c in ";&\n") and "||" not in cmd


def _fits(form: str, inner: str) -> bool:
    """Whether ``form`` runs ``inner`` as it stands (see grammar.py)."""
    if form in g.SIMPLE_CONTAINERS:
        return _is_simple(inner)
    if form in g.PIPELINE_CONTAINERS:
        return _one_pipeline(inner)
    return True


def _containment_examples(ctx: Context) -> S[Example]:
    def pair(inner: str) -> S[Example]:
        forms = [f for f in (*g.CONTAINERS, *g.PIPELINE_CONTAINERS, *g.SIMPLE_CONTAINERS)
                 if _fits(f, inner)]
        return st.sampled_from(forms).map(lambda f: {"inner": inner, "form": f})
    return dangerous(ctx.tools, ctx.attacks).flatmap(pair)


def contain(inner: str, form: str) -> str:
    return form.format(X=inner, Q=shlex.quote(inner))


def check_containment(ctx: Context, ex: Example) -> Failure | None:
    inner, composed = ex["inner"], contain(ex["inner"], ex["form"])
    if not _fits(ex["form"], inner) or ctx.analyze(inner).verdict is Verdict.ALLOW:
        return None  # X does not run as it is there, or there is nothing to contain
    outer = ctx.analyze(composed)
    if outer.verdict is Verdict.ALLOW:
        return _fail("containment", ex, composed, outer.verdict,
                     f"{inner!r} is not allowed, but {composed!r} is")
    return None


# -- quoting ----------------------------------------------------------------------------------


def _quoting_examples(ctx: Context) -> S[Example]:
    def words_of(cmd: str) -> list[str] | None:
        try:
            return shlex.split(cmd)
        except ValueError:
            return None

    def requoted(words: list[str]) -> S[Example]:
        return st.tuples(*(requote(w) for w in words)).map(
            lambda parts: {"words": words, "command": " ".join(parts)})

    simple = dangerous(ctx.tools, ()).map(words_of).filter(bool)
    return simple.flatmap(lambda w: requoted(w or []))


def check_quoting(ctx: Context, ex: Example) -> Failure | None:
    plain = " ".join(shell_word(w) for w in ex["words"])
    if ctx.analyze(plain).verdict is Verdict.ALLOW:
        return None
    result = ctx.analyze(ex["command"])
    if result.verdict is Verdict.ALLOW:
        return _fail("quoting", ex, ex["command"], result.verdict,
                     f"{plain!r} is not allowed, but its re-quoting is")
    return None


# -- the legacy splitter ----------------------------------------------------------------------


def check_legacy(ctx: Context, ex: Example) -> Failure | None:
    cmd = ex["command"]
    ts, legacy = ctx.analyze(cmd), ctx.analyze(cmd, ts=False)
    if _RANK[legacy.verdict] < _RANK[ts.verdict] and legacy.verdict is Verdict.ALLOW:
        return _fail("legacy", ex, cmd, legacy.verdict,
                     f"the legacy splitter allows what tree-sitter answers {ts.verdict.value} "
                     f"({ts.reason})", ts.reason)
    return None


# -- bash -n ----------------------------------------------------------------------------------


def bash_rejects(cmd: str) -> bool:
    """Whether bash's own parser rejects ``cmd`` (`bash -n`, script on stdin)."""
    proc = subprocess.run(["bash", "-n"], input=cmd.encode("utf-8", "surrogateescape"),
                          capture_output=True, timeout=10, check=False)
    return proc.returncode != 0


def check_bash_syntax(ctx: Context, ex: Example) -> Failure | None:
    cmd = ex["command"]
    result = ctx.analyze(cmd)
    if result.verdict is Verdict.ALLOW and bash_rejects(cmd):
        return _fail("bash_syntax", ex, cmd, result.verdict, "bash -n rejects it")
    return None


def _broken_commands(ctx: Context) -> S[Example]:
    """Commands, some of them broken by one cut or one stray character."""
    breakers = st.sampled_from(("'", '"', "(", ")", "{", "}", "`", "$(", "<<", "|", "&&", ";;",
                                "fi", "done", "then", "\\", "[[", "]]", "esac", "}}"))

    def broken(t: tuple[str, int, str, bool]) -> str:
        text, at, piece, cut = t
        at %= len(text) + 1
        return text[:at] + ("" if cut else piece) + text[at + (1 if cut else 0):]

    base = st.one_of(likely_allowed(ctx.mode, ctx.tools), command(ctx.mode, ctx.tools))
    return st.tuples(base, st.integers(0, 1 << 12), breakers, st.booleans()).map(
        lambda t: {"command": broken(t)})


# -- the execution oracle ---------------------------------------------------------------------


#: programs that are scripts running another: what they run is theirs
_SCRIPT_RUNS = {"egrep": ("grep",), "fgrep": ("grep",), "zcat": ("gzip",), "zgrep": ("grep",)}


def own_programs(analysis: BashAnalysis) -> tuple[str, ...]:
    """The programs a command names (the oracle flags any other it runs)."""
    own = tuple(w for s in analysis.subcommands for w in (*s.wrappers, *s.argv[:1]))
    own += tuple(run for name in own for run in _SCRIPT_RUNS.get(name, ()))
    # the readers a find runs on what it found are named in the command too
    return own + tuple(s.argv[i + 1] for s in analysis.subcommands if s.argv[:1] == ("find",)
                       for i, w in enumerate(s.argv[:-1]) if w == "-exec")


def observe(ctx: Context, cmd: str) -> tuple[Verdict, tuple[str, ...]]:
    """The analyzer's verdict, and — when it allows — what the oracle saw."""
    analysis = ctx.analyze(cmd)
    if analysis.verdict is not Verdict.ALLOW or ctx.oracle is None:
        return analysis.verdict, ()
    ctx.oracle_runs += 1
    return analysis.verdict, ctx.oracle.observe(cmd, own_programs(analysis), timeout=5).findings


def observe_many(ctx: Context, cmds: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """:func:`observe` for several commands: those the analyzer allows run in
    one sandbox (:meth:`Oracle.observe_batch`); each with what was seen."""
    allowed = []
    for cmd in cmds:
        analysis = ctx.analyze(cmd)
        if analysis.verdict is Verdict.ALLOW:
            allowed.append((cmd, own_programs(analysis)))
    if ctx.oracle is None or not allowed:
        return []
    ctx.oracle_runs += len(allowed)
    seen = ctx.oracle.observe_batch(allowed, timeout=5)
    return [(obs.command, obs.findings) for obs in seen]


_TEMP_ROOT = regex(r"/[^ ]*?/shellgate-oracle-[^/ ]+")


def oracle_signature(findings: tuple[str, ...]) -> str:
    """What the oracle saw, with its throwaway directories left out."""
    return "; ".join(sorted({_TEMP_ROOT.sub("<tmp>", f) for f in findings}))


def check_oracle(ctx: Context, ex: Example) -> Failure | None:
    cmd = ex["command"]
    verdict, findings = observe(ctx, cmd)
    if findings:
        return _fail("oracle", ex, cmd, verdict, "allowed, but: " + "; ".join(findings),
                     oracle_signature(findings))
    return None


def _oracle_examples(ctx: Context) -> S[Example]:
    return st.one_of(likely_allowed(ctx.mode, ctx.tools), likely_allowed(ctx.mode, ctx.tools),
                     mutated(ctx.benign), command(ctx.mode, ctx.tools)).map(
        lambda c: {"command": c})


def _git_config_examples(ctx: Context) -> S[Example]:
    return st.integers(min_value=0, max_value=2**32 - 1).map(lambda n: {"seed": n})


def check_git_config(ctx: Context, ex: Example) -> Failure | None:
    """Whenever git status runs a program a configuration names, shellgate
    named it (fuzz/gitconfigs.py)."""
    from .gitconfigs import missed  # noqa: PLC0415

    config = missed(ex["seed"])
    if config is None:
        return None
    text = config.decode("utf-8", "replace")
    return _fail("git_config", ex, f"git status (configuration seed {ex['seed']})", "allow",
                 f"git ran the planted program; shellgate named none. Config: {text!r}")


def check_git_credentials(ctx: Context, ex: Example) -> Failure | None:
    """Whenever git reads a credential from a file, shellgate found it
    (fuzz/gitconfigs.py)."""
    from .gitconfigs import missed_secret  # noqa: PLC0415

    text = missed_secret(ex["seed"])
    if text is None:
        return None
    return _fail("git_credentials", ex, f"cat (credential seed {ex['seed']})", "allow",
                 f"git reads a credential from the file; shellgate found none. File: "
                 f"{text.decode('utf-8', 'replace')!r}")


PROPERTIES: Mapping[str, Property] = {p.name: p for p in (
    Property("total", "never raises, answers in bounded time", _commands, check_total),
    Property("deterministic", "the same command, the same analysis", _commands,
             check_deterministic),
    Property("containment", "if X is not allowed, nothing that runs X is",
             _containment_examples, check_containment),
    Property("quoting", "quoting never hides a danger", _quoting_examples, check_quoting),
    Property("legacy", "the legacy splitter is never more permissive", _commands, check_legacy),
    Property("bash_syntax", "what bash -n rejects is never allowed", _broken_commands,
             check_bash_syntax),
    Property("oracle", "an allowed command does nothing the oracle sees", _oracle_examples,
             check_oracle, oracle=True),
    Property("git_config", "what git status runs of a configuration, shellgate names",
             _git_config_examples, check_git_config),
    Property("git_credentials", "a credential git reads from a file, shellgate finds",
             _git_config_examples, check_git_credentials),
)}
