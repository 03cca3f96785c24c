"""The values :func:`~analyzers.analyze_bash` returns: the verdict, each
subcommand as it will run, and the whole analysis with its JSON form."""

from __future__ import annotations

from values import valueclass

from .checks import Finding
from .classify import Classification
from .destructive import HardLimit
from .ir import ParseStatus
from .paths import Access, PathAccess
from .semantics import ExitMeaning, interpret_exit_code
from .workspace import TreeRead

# the enum module costs a cold start 3.5 ms (values/choices.py); type
# checkers see it
TYPE_CHECKING = False
if TYPE_CHECKING:
    from enum import StrEnum
else:
    from values import StrEnum


class Verdict(StrEnum):
    """The analyzer's opinion of a command. What runs is the gateway's
    permission decision, which weighs this beside rules, modes and hooks
    (the ``decision`` field of ``check --json`` carries this verdict)."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@valueclass
class Subcommand:
    """One simple command as it will run (wrappers and safe env stripped)."""

    text: str
    argv: tuple[str, ...]
    raw_argv: tuple[str, ...]
    read_only: bool
    reason: str | None
    classification: Classification
    paths: tuple[PathAccess, ...] = ()
    warnings: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    wrappers: tuple[str, ...] = ()
    nested: bool = False
    via: str | None = None
    op: str | None = None
    #: where a ``cd`` goes (``None`` for every other command)
    cd: str | None = None
    #: only scheduling/timing wrappers and safe env: a prefix rule is fair
    transparent: bool = True
    #: directories below which it reads files it finds itself (``grep -r``):
    #: whether a dotenv file lies there is a fact of the workspace
    trees: tuple[TreeRead, ...] = ()
    #: a reader but for its output redirections (``grep x f > out``): what
    #: it writes is only the redirections' targets (``redirect`` paths)
    writes_by_redirection_only: bool = False
    #: what it shows on the host that the sandbox hides (``ps``: every
    #: process): read-only only where it runs sandboxed
    sandbox_view: str | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "text": self.text,
            "argv": list(self.argv),
            "read_only": self.read_only,
            "classification": self.classification.value,
            "paths": [p.to_dict() for p in self.paths],
            "warnings": list(self.warnings),
        }
        if self.reason:
            out["reason"] = self.reason
        if self.wrappers:
            out["wrappers"] = list(self.wrappers)
        if self.env:
            out["env"] = [f"{k}={v}" for k, v in self.env]
        if self.trees:
            out["reads_below"] = [t.root for t in self.trees]
        if self.nested:
            out["nested"] = True
        if self.via:
            out["via"] = self.via
        if self.sandbox_view:
            out["sandbox_view"] = self.sandbox_view
        return out


@valueclass
class BashAnalysis:
    """The analyzer's verdict on one command line, with every fact behind it."""

    command: str
    cwd: str
    parse: ParseStatus
    verdict: Verdict
    reason: str
    hint: str
    parse_reasons: tuple[str, ...] = ()
    subcommands: tuple[Subcommand, ...] = ()
    findings: tuple[Finding, ...] = ()
    hard_limits: tuple[HardLimit, ...] = ()
    classification: Classification = Classification.OTHER
    suggested_rules: tuple[str, ...] = ()
    #: may permission rules (``Bash(npm test:*)``) auto-allow this command?
    #: False for hard limits, sensitive paths, fired checks, unanalyzable parses.
    rules_apply: bool = False

    @property
    def hard_limit(self) -> bool:
        return bool(self.hard_limits)

    @property
    def allowed(self) -> bool:
        """The analyzer's verdict is allow (what the gateway decides is its own)."""
        return self.verdict is Verdict.ALLOW

    @property
    def paths(self) -> tuple[PathAccess, ...]:
        """Every distinct (path, access) touched, in order of appearance."""
        seen: dict[tuple[str, Access], PathAccess] = {}
        for s in self.subcommands:
            for p in s.paths:
                seen.setdefault((p.path, p.access), p)
        return tuple(seen.values())

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(w for s in self.subcommands for w in s.warnings))

    @property
    def is_destructive(self) -> bool:
        return self.hard_limit or bool(self.warnings)

    def exit_meaning(self, exit_code: int) -> ExitMeaning:
        """What ``exit_code`` means for this command (the last subcommand of
        the top level decides, as in bash)."""
        # A `bash -c` payload's commands come before the (empty) wrapper entry.
        ran = [s for s in self.subcommands if not s.nested and s.argv]
        return interpret_exit_code(ran[-1].argv if ran else (), exit_code)

    def to_dict(self) -> dict[str, object]:
        return {
            "decision": self.verdict.value,
            "reason": self.reason,
            "hint": self.hint,
            "hard_limit": self.hard_limit,
            "hard_limits": [str(h) for h in self.hard_limits],
            "parse": self.parse.value,
            "parse_reasons": list(self.parse_reasons),
            "findings": [{"id": f.id, "name": f.name, "message": f.message} for f in self.findings],
            "subcommands": [s.to_dict() for s in self.subcommands],
            "paths": [p.to_dict() for p in self.paths],
            "warnings": list(self.warnings),
            "classification": self.classification.value,
            "suggested_rules": list(self.suggested_rules),
            "rules_apply": self.rules_apply,
            "command": self.command,
            "cwd": self.cwd,
        }
