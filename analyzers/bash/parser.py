"""tree-sitter-bash -> IR.

The walk is an allowlist of node types: anything it does not know makes the
parse ``too-complex`` (fail closed) while the walk still descends to collect
the commands inside, so hard limits are found even in ``$(...)`` or ``if``.

Known differentials between tree-sitter and bash, each handled here:

* backslash-newline is a line continuation in bash everywhere except inside
  single quotes, comments and quoted here-documents; tree-sitter treats it as
  a word break, so ``r\\<newline>m -rf /`` looks like ``r`` ``m``. We remove
  the continuations (using tree-sitter's own idea of where quotes are) and
  parse again.
* ``;;`` outside ``case`` is a syntax error in bash, accepted by tree-sitter.
* ``$"..."`` (translated string) comes out as an anonymous ``$`` sibling of a
  string; adjacent argument nodes are grouped into one word by byte position.
* ``>&- word``: tree-sitter makes ``word`` the target; bash closes stdout and
  passes ``word`` as an argument.
* NUL bytes: bash drops them from its input, so we do too before parsing
  (``r\\0m -rf /`` is ``rm -rf /``); the NUL itself is a finding elsewhere.
"""

from __future__ import annotations

from _thread import _local

from regexes import regex
from values import field, replace, valueclass

from .braces import expand_braces
from .grammar import bash_language, tree_sitter_module
from .ir import Assignment, ParseResult, ParseStatus, Redirect, SimpleCommand, Word
from .nodewords import WORDISH, WordEvaluator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# patterns the functions below use (module constants: see regexes/)
_ESCAPED_NEWLINE_RE = regex(rb"(\\+)\n")


try:  # tree-sitter is a hard dependency, but a broken install must not crash us
    tree_sitter = tree_sitter_module()
    _LANGUAGE: Any = tree_sitter.Language(bash_language())
except Exception:  # pragma: no cover - exercised by the legacy tests via flag
    _LANGUAGE = None

#: Deeper ASTs than this are not walked further (``$($($(...)))`` bombs).
MAX_AST_DEPTH = 256
#: Stop collecting commands after this many (the analyzer caps at 50 anyway).
MAX_COLLECTED_COMMANDS = 1000

_local_state = _local()
_SURROGATE_RE = regex("[\ud800-\udfff]")

_STATEMENT_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&"})
_GROUPING_TOKENS = frozenset({"(", ")", "{", "}"})
_CONTROL_FLOW = frozenset(
    {
        "if_statement",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "function_definition",
    }
)
# Builtins that can assign arbitrary variables: after one of them nothing we
# knew statically about the shell's variables can be trusted.
_SCOPE_CLOBBERING = frozenset(
    "read mapfile readarray printf getopts declare typeset local let eval source . set shift "
    "export readonly builtin command exec".split()
)
#: Builtins that change only the directory variables.
_DIRECTORY_BUILTINS = frozenset({"cd", "pushd", "popd"})
#: commands that only print their arguments: a non-secret variable of
#: unknown value may be among them (`echo $PATH`)
_PRINTERS = frozenset({"echo"})


def tree_sitter_available() -> bool:
    """True when the tree-sitter-bash grammar loaded."""
    return _LANGUAGE is not None


def _parser() -> Any:
    parser = getattr(_local_state, "parser", None)
    if parser is None:
        parser = tree_sitter.Parser(_LANGUAGE)
        _local_state.parser = parser
    return parser


def parse_tree_sitter(
    command: str,
    *,
    home: str | None = None,
    cwd: str | None = None,
    variables: dict[str, str] | None = None,
) -> ParseResult:
    """Parse ``command`` into the IR. Requires :func:`tree_sitter_available`.

    ``variables`` are known before the line runs (``$1`` of a ``bash -c``
    payload); ``home`` is ``$HOME`` and ``~``."""
    reasons: list[str] = []
    text = command
    if "\0" in text:
        text = text.replace("\0", "")
        reasons.append("NUL byte in command")
    if _SURROGATE_RE.search(text):
        # Invalid UTF-8 (surrogate-escaped bytes) or lone surrogates: parse a
        # valid stand-in; the command is never analyzable as written.
        text = _SURROGATE_RE.sub("\ufffd", text)
        reasons.append("invalid UTF-8 in command")
    src = text.encode("utf-8")
    tree = _parser().parse(src)
    joined = _join_continuations(src, tree.root_node)
    if joined is not None:
        src = joined
        text = src.decode("utf-8", "replace")
        tree = _parser().parse(src)
    root = tree.root_node
    if root.has_error:
        reasons.append(_syntax_error_reason(root, src))
    walker = _Walker(src, home, cwd, reasons)
    walker.scope.update(variables or {})
    walker.sequence(root, depth=0, nested=False)
    status = ParseStatus.TOO_COMPLEX if reasons else ParseStatus.SIMPLE
    return ParseResult(
        status, tuple(walker.commands), tuple(dict.fromkeys(reasons)), text, walker.input_pipes
    )


def _join_continuations(src: bytes, root: Any) -> bytes | None:
    """Remove backslash-newline pairs outside single quotes, comments and
    quoted here-document bodies; ``None`` when there are none."""
    if b"\\\n" not in src:
        return None
    protected: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        t = node.type
        if t in ("raw_string", "comment", "ansi_c_string"):
            protected.append((node.start_byte, node.end_byte))
            continue
        if t == "heredoc_redirect" and _heredoc_is_quoted(node):
            protected.append((node.start_byte, node.end_byte))
            continue
        stack.extend(node.children)
    out = bytearray()
    i = 0
    for m in _ESCAPED_NEWLINE_RE.finditer(src):
        if len(m.group(1)) % 2 == 0:  # `\\` + newline: an escaped backslash
            continue
        pos = m.end() - 2
        if any(s <= pos < e for s, e in protected):
            continue
        out += src[i:pos]
        i = pos + 2
    if i == 0:
        return None
    out += src[i:]
    return bytes(out)


def heredoc_delimiter(start: str) -> str | None:
    """The line that ends a here-document for bash: the delimiter word after
    quote removal (``E'O'F``, ``E"O"F``, ``EOF''`` and ``\\EOF`` all end at
    ``EOF``), or None for a form this does not model (``$'...'``)."""
    out: list[str] = []
    i, quote = 0, ""
    while i < len(start):
        c = start[i]
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                out.append(c)
        elif quote == '"':
            if c == '"':
                quote = ""
            elif c == "\\" and i + 1 < len(start) and start[i + 1] in '"\\$`':
                i += 1
                out.append(start[i])
            elif c in "$`":
                return None
            else:
                out.append(c)
        elif c in "'\"":
            quote = c
        elif c == "\\":
            i += 1
            if i < len(start):
                out.append(start[i])
        elif c in "$`":
            return None
        else:
            out.append(c)
        i += 1
    return None if quote else "".join(out)


def _heredoc_is_quoted(node: Any) -> bool:
    for child in node.children:
        if child.type == "heredoc_start":
            return any(q in child.text for q in (b"'", b'"', b"\\"))
    return False


def _syntax_error_reason(root: Any, src: bytes) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            return f"syntax error: missing {node.type!r} at byte {node.start_byte}"
        if node.type == "ERROR":
            snippet = src[node.start_byte : node.start_byte + 20].decode("utf-8", "replace")
            return f"syntax error near {snippet!r}"
        if node.has_error:
            stack.extend(reversed(node.children))
    return "syntax error"


@valueclass(frozen=False, slots=False)
class _Walker(WordEvaluator):
    src: bytes
    home: str | None
    cwd: str | None
    reasons: list[str]
    commands: list[SimpleCommand] = field(default_factory=list)
    scope: dict[str, str] = field(default_factory=dict)
    scope_path: tuple[int, ...] = ()
    starts: dict[int, int] = field(default_factory=dict)  # node id -> first command index
    input_pipes: int = 0
    substituting: int = 0
    assigned: set[str] = field(default_factory=set)
    env_unknown: bool = False
    _next_scope: int = 0

    def __post_init__(self) -> None:
        if self.home is not None:
            self.scope["HOME"] = self.home

    # -- helpers -----------------------------------------------------------
    def add(self, cmd: SimpleCommand) -> None:
        if self.substituting:
            cmd = replace(cmd, substituted=True)
        if len(self.commands) >= MAX_COLLECTED_COMMANDS:
            if len(self.commands) == MAX_COLLECTED_COMMANDS:
                self.fail(f"more than {MAX_COLLECTED_COMMANDS} commands")
                self.commands.append(cmd)
            return
        self.commands.append(cmd)

    def new_scope(self) -> tuple[int, ...]:
        self._next_scope += 1
        return (*self.scope_path, self._next_scope)

    # -- statements --------------------------------------------------------
    def sequence(self, node: Any, depth: int, nested: bool, first_op: str | None = None) -> None:
        """Walk the statements that are children of ``node``, joined by
        operators. Used for program, list, compound_statement, subshell and
        control-flow bodies."""
        if depth > MAX_AST_DEPTH:
            self.fail("command nested too deeply")
            return
        op = first_op
        for child in node.children:
            t = child.type
            if not child.is_named:
                if t in _STATEMENT_SEPARATORS:
                    op = t
                elif t not in _GROUPING_TOKENS:
                    self.fail(f"unexpected token {t!r}")
                    op = ";"
                continue
            if t == "comment":
                continue
            self.statement(child, depth + 1, nested, op)
            op = ";"

    def statement(self, node: Any, depth: int, nested: bool, op: str | None) -> None:
        if depth > MAX_AST_DEPTH:
            self.fail("command nested too deeply")
            return
        self.starts[node.id] = len(self.commands)
        t = node.type
        if t == "command":
            self.command(node, depth, nested, op)
        elif t == "list":
            self.sequence(node, depth, nested, op)
        elif t == "pipeline":
            self.pipeline(node, depth, nested, op)
        elif t == "redirected_statement":
            self.redirected(node, depth, nested, op)
        elif t == "subshell":
            saved_scope, saved_path = dict(self.scope), self.scope_path
            self.scope_path = self.new_scope()
            self.sequence(node, depth, nested, op)
            self.scope, self.scope_path = saved_scope, saved_path
        elif t == "compound_statement":
            self.sequence(node, depth, nested, op)
        elif t == "negated_command":
            for child in node.named_children:
                self.statement(child, depth + 1, nested, op)
        elif t in ("variable_assignment", "variable_assignments"):
            self.bare_assignments(node, depth, nested, op)
        elif t in ("declaration_command", "unset_command"):
            self.declaration(node, depth, nested, op)
        elif t == "test_command":
            self.test_command(node, depth, nested, op)
        elif t in _CONTROL_FLOW:
            self.fail(f"{t.replace('_', ' ')} is not analyzed")
            self.descend(node, depth, nested=True)
        else:
            self.fail(f"unsupported syntax {t!r}")
            self.descend(node, depth, nested=True)

    def input_pipe(self, node: Any, depth: int, nested: bool) -> None:
        """``diff <(ls a) <(ls b)``: the commands inside run in a subshell of
        their own, at the same time as the command reading their output
        (hence the operator ``&``); each is judged like any other command,
        and the word is a ``/dev/fd/N`` path to a pipe."""
        saved_scope, saved_path = dict(self.scope), self.scope_path
        self.scope_path = self.new_scope()
        printing, self.printing = self.printing, False
        self.substituting += 1
        try:
            op: str | None = "&"
            for child in node.children:
                if not child.is_named:
                    if child.type in _STATEMENT_SEPARATORS:
                        op = child.type
                    elif child.type not in ("<(", ")"):
                        self.fail(f"unexpected token {child.type!r}")
                    continue
                if child.type != "comment":
                    self.statement(child, depth + 1, nested, op)
                    op = ";"
        finally:
            self.scope, self.scope_path = saved_scope, saved_path
            self.printing = printing
            self.substituting -= 1

    def descend(self, node: Any, depth: int, nested: bool) -> None:
        """Best effort: collect every command found below ``node``."""
        if depth > MAX_AST_DEPTH:
            self.fail("command nested too deeply")
            return
        saved = dict(self.scope)
        for child in node.named_children:
            t = child.type
            if t in (
                "command",
                "list",
                "pipeline",
                "redirected_statement",
                "subshell",
                "compound_statement",
                "negated_command",
                "declaration_command",
                "unset_command",
                "test_command",
                "variable_assignment",
                "variable_assignments",
            ):
                self.statement(child, depth + 1, nested, ";")
            else:
                self.descend(child, depth + 1, nested)
        self.scope = saved

    def pipeline(self, node: Any, depth: int, nested: bool, op: str | None) -> None:
        # Every stage of a pipeline runs in its own subshell.
        pending = op
        stage = 0
        for child in node.children:
            if not child.is_named:
                if child.type in ("|", "|&"):
                    pending = child.type
                else:
                    self.fail(f"unexpected token {child.type!r} in pipeline")
                continue
            stage += 1
            if stage > 1 and child.type == "negated_command":
                # tree-sitter reads `a | ! b`; bash refuses it (a syntax
                # error): a place where the two disagree is not analyzed
                # (found by `shellgate fuzz`: `! jq … | ! jq …`)
                self.fail("'!' after '|' (bash reads it as a syntax error)")
            saved_scope, saved_path = dict(self.scope), self.scope_path
            self.scope_path = self.new_scope()
            self.statement(child, depth + 1, nested, pending)
            self.scope, self.scope_path = saved_scope, saved_path
            pending = "|"

    def redirected(self, node: Any, depth: int, nested: bool, op: str | None) -> None:
        start = len(self.commands)
        redirects: list[Redirect] = []
        trailing: list[Any] = []
        body: Any = None
        for child in node.named_children:
            t = child.type
            if t in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                redirects.extend(self.redirect(child, depth, nested, trailing))
            elif body is None:
                body = child
                self.statement(child, depth + 1, nested, op)
            else:
                self.fail(f"unsupported syntax {t!r} in redirection")
                self.descend(child, depth + 1, nested=True)
        if redirects:
            if len(self.commands) == start:  # a redirect with no command: `> file`
                self.add(
                    SimpleCommand(
                        (), (), tuple(redirects), self.text(node), op, self.scope_path, nested
                    )
                )
            else:
                # tree-sitter wraps `a && b | c > o` as (a && b | c) > o; in bash
                # the redirect belongs to the last element only (`c`, or the
                # whole `{ ...; }` group when that is the last element).
                last = body
                while last is not None and last.type in ("list", "pipeline"):
                    named = [c for c in last.named_children if c.type != "comment"]
                    last = named[-1] if named else None
                if last is not None:
                    start = self.starts.get(last.id, start)
                for i in range(start, len(self.commands)):
                    cmd = self.commands[i]
                    self.commands[i] = replace(cmd, redirects=cmd.redirects + tuple(redirects))
        for stmt in trailing:  # `cat <<EOF | grep x` puts the pipeline in the heredoc
            self.heredoc_continuation(stmt, depth, nested)

    def heredoc_continuation(self, node: Any, depth: int, nested: bool) -> None:
        first = node.children[0] if node.children else None
        if node.type == "pipeline" and first is not None and not first.is_named:
            op = first.type
            for child in node.named_children:
                self.statement(child, depth + 1, nested, op)
                op = ";"
            return
        self.statement(node, depth + 1, nested, ";")

    def bare_assignments(self, node: Any, depth: int, nested: bool, op: str | None) -> None:
        nodes = [node] if node.type == "variable_assignment" else node.named_children
        assignments = tuple(
            a for n in nodes if (a := self.assignment(n, depth, nested)) is not None
        )
        self.add(SimpleCommand((), assignments, (), self.text(node), op, self.scope_path, nested))
        conditional = op in ("&&", "||")
        for a in assignments:
            self.assigned.add(a.name)
            if a.value.value is not None and not a.append and not conditional:
                self.scope[a.name] = a.value.value
            else:
                self.scope.pop(a.name, None)

    def declaration(self, node: Any, depth: int, nested: bool, op: str | None) -> None:
        words: list[Word] = []
        keyword = ""
        flags = False
        for child in node.children:
            if not child.is_named:
                keyword = self.text(child)
                words.append(Word(keyword, keyword))
                continue
            t = child.type
            if t == "variable_assignment":
                a = self.assignment(child, depth, nested)
                if a is None:
                    continue
                self.assigned.add(a.name)
                raw = self.text(child)
                value = None if a.value.value is None else f"{a.name}={a.value.value}"
                words.append(Word(raw, value, a.value.quoted, a.value.glob, a.value.brace))
                if keyword in ("export", "declare", "typeset", "local", "readonly"):
                    if a.value.value is not None and not flags:
                        self.scope[a.name] = a.value.value
                    else:
                        self.scope.pop(a.name, None)
            elif t == "variable_name":
                name = self.text(child)
                self.assigned.add(name)
                words.append(Word(name, name))
                if keyword == "unset":
                    self.scope[name] = ""
            else:
                word = self.word([child], depth, nested)
                if word.value is not None and word.value.startswith("-"):
                    flags = True
                    self.scope.clear()
                    self.env_unknown = True
                words.append(word)
        self.add(SimpleCommand(tuple(words), (), (), self.text(node), op, self.scope_path, nested))

    def test_command(self, node: Any, depth: int, nested: bool, op: str | None) -> None:
        """``[[ ... ]]`` and ``[ ... ]`` become argv of their leaf tokens."""
        words: list[Word] = []
        stack = [node]
        leaves: list[Any] = []
        while stack:
            n = stack.pop()
            if not n.is_named or n.type in WORDISH or n.type in ("test_operator", "regex"):
                leaves.append(n)
                continue
            if n.type in ("binary_expression", "unary_expression", "parenthesized_expression"):
                stack.extend(reversed(n.children))
                continue
            if n.type == "test_command":
                stack.extend(reversed(n.children))
                continue
            self.fail(f"unsupported syntax {n.type!r} in test")
            self.descend(n, depth + 1, nested=True)
        leaves.sort(key=lambda n: n.start_byte)
        if self.text(node).startswith("[") and not self.text(node).startswith("[["):
            # In `[ ... ]`, bash reads `>` and `<` as redirections; tree-sitter
            # as comparisons. Attack (from a review): `[ a = b > FILE ]`
            # truncated FILE; `[ a > /dev/tcp/host/80 ]` opened a connection.
            for leaf in leaves:
                if self.text(leaf) in (">", "<", ">>", ">|", "<>", "&>", ">&", "<&"):
                    self.fail(f"{self.text(leaf)!r} inside [ ]: bash reads it as a redirection")
                    break
        glued = None
        for i, leaf in enumerate(leaves):
            if glued is not None:
                glued = None
                continue
            following = leaves[i + 1] if i + 1 < len(leaves) else None
            if following is not None and following.start_byte == leaf.end_byte:
                # tree-sitter splits `~/.ssh/id_rsa` in a test into `~` and
                # `/.ssh/id_rsa`; bash reads one word, the home's key. From a
                # review: `[ -e ~/.ssh/id_rsa ]` was judged a look at `~`.
                if self.text(leaf) == "~" and following.is_named and following.type == "word":
                    rest = self.word([following], depth, nested)
                    words.append(replace(rest, raw="~" + rest.raw, value=None if rest.value is None
                                         else "~" + rest.value))
                    glued = following
                    continue
                self.fail("words in a test that bash reads as one and the parser as two")
            if not leaf.is_named or leaf.type in ("test_operator", "regex"):
                tok = self.text(leaf)
                if leaf.type == "regex" and any(x in tok for x in ("$", "`", "<(", ">(")):
                    # tree-sitter keeps the right side of `=~` as text; bash
                    # expands it. Attack (from a review):
                    # `[[ a =~ <(touch PWNED) ]]` ran touch.
                    self.fail("an expansion in a [[ =~ ]] pattern")
                words.append(Word(tok, tok))
            else:
                words.append(self.word([leaf], depth, nested))
        self.add(SimpleCommand(tuple(words), (), (), self.text(node), op, self.scope_path, nested))

    def command(self, node: Any, depth: int, nested: bool, op: str | None) -> None:
        assignments: list[Assignment] = []
        redirects: list[Redirect] = []
        groups: list[list[Any]] = []
        trailing: list[Any] = []
        last_end = -1
        for child in node.children:
            t = child.type
            if t == "variable_assignment":
                a = self.assignment(child, depth, nested)
                if a is not None:
                    assignments.append(a)
                last_end = -1
            elif t in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                redirects.extend(self.redirect(child, depth, nested, trailing))
                last_end = -1
            elif t == "command_name":
                groups.append(list(child.children))
                last_end = child.end_byte
            elif t in WORDISH:
                if child.start_byte == last_end and groups:
                    groups[-1].append(child)
                else:
                    groups.append([child])
                last_end = child.end_byte
            elif t == "comment":
                continue
            else:
                self.fail(f"unsupported syntax {t!r} in command")
                self.descend(child, depth + 1, nested=True)
                last_end = -1
        evaluated: list[Word] = []
        try:
            for group in filter(None, groups):
                self.printing = bool(evaluated) and evaluated[0].value in _PRINTERS
                evaluated.extend(self.expanded(self.word(group, depth, nested)))
        finally:
            self.printing = False
        words = tuple(evaluated)
        self.add(
            SimpleCommand(
                words,
                tuple(assignments),
                tuple(redirects),
                self.text(node),
                op,
                self.scope_path,
                nested,
            )
        )
        name = words[0].value if words else None
        if name in _SCOPE_CLOBBERING:
            self.scope.clear()
            self.env_unknown = True
        elif name in _DIRECTORY_BUILTINS:
            self.scope.pop("PWD", None)
            self.scope.pop("OLDPWD", None)
        for stmt in trailing:
            self.heredoc_continuation(stmt, depth, nested)

    # -- parts of commands -------------------------------------------------
    def redirect_target(self, word: Word) -> Word:
        """bash brace-expands a redirection's word too: ``cat < {.env,}``
        reads ``.env`` (from a review: judged as a file named ``{.env,}``,
        it was allowed). One word is the target; several are an ambiguous
        redirect; a form not emulated is not analyzed."""
        if not word.brace:
            return word
        words = self.expanded(word)
        if len(words) == 1 and not words[0].brace:
            return words[0]
        self.fail(f"brace expansion in a redirection ({word.raw[:40]!r})")
        return Word(word.raw, None, word.quoted)

    @staticmethod
    def expanded(word: Word) -> tuple[Word, ...]:
        """A command word after brace expansion, where it is emulated
        exactly (:mod:`.braces`); otherwise the word, still marked."""
        if not word.brace or word.value != word.raw:
            return (word,)
        words = expand_braces(word.raw)
        if words is None:
            return (word,)
        return tuple(Word(w, w) for w in words)

    def assignment(self, node: Any, depth: int, nested: bool) -> Assignment | None:
        name = ""
        append = False
        value_nodes: list[Any] = []
        for child in node.children:
            t = child.type
            if t == "variable_name":
                name = self.text(child)
            elif t == "subscript":
                # `a[$(cmd)]=x`: subscripts are evaluated arithmetically.
                self.fail("array subscript in assignment")
                self.descend(child, depth + 1, nested=True)
                name = self.text(child)
            elif t in ("=", "+="):
                append = t == "+="
            elif t == "array":
                self.fail("array assignment")
                self.descend(child, depth + 1, nested=True)
                return Assignment(name, Word(self.text(child), None), append)
            else:
                value_nodes.append(child)
        if not value_nodes:
            return Assignment(name, Word("", ""), append)
        value = self.word(value_nodes, depth, nested)
        return Assignment(name, value, append)

    def redirect(
        self, node: Any, depth: int, nested: bool, trailing: list[Any]
    ) -> Iterable[Redirect]:
        t = node.type
        op = ""
        fd: int | None = None
        targets: list[Any] = []
        extra: list[Redirect] = []
        heredoc_body: str | None = None
        quoted = False
        delimiter: str | None = None
        for child in node.children:
            ct = child.type
            if ct == "file_descriptor":
                txt = self.text(child)
                fd = int(txt) if txt.isdigit() else None
                if fd is None:
                    self.fail(f"named file descriptor {txt!r}")
            elif not child.is_named:
                op = ct
                if ct == "<" and self.src[child.end_byte:child.end_byte + 1] == b">":
                    # `1<>rc` opens rc for reading and writing; tree-sitter
                    # reads `1<` and an error (from a review: through
                    # `rc -> ~/.bashrc` it was judged a read, not a write)
                    op = "<>"
            elif ct == "heredoc_start":
                quoted = _heredoc_is_quoted(child)
                delimiter = heredoc_delimiter(self.text(child))
            elif ct == "heredoc_body":
                heredoc_body = self.heredoc_body(child, quoted, depth, nested)
            elif ct == "heredoc_end":
                # bash ends the here-document at the delimiter after quote
                # removal; tree-sitter at the literal text. Attack (from a
                # review): `cat <<E'O'F`, a line `EOF`, then `touch x`, then
                # `E'O'F` — bash runs `touch x`, tree-sitter reads it as text.
                if delimiter is None or self.text(child) != delimiter:
                    self.fail(
                        "here-document delimiter that bash and the parser read "
                        f"differently ({self.text(child)!r})"
                    )
            elif ct in ("file_redirect", "herestring_redirect"):
                extra.extend(self.redirect(child, depth, nested, trailing))
            elif ct in ("pipeline", "list", "command", "redirected_statement"):
                trailing.append(child)
            elif ct in WORDISH:
                targets.append(child)
            else:
                self.fail(f"unsupported syntax {ct!r} in redirection")
                self.descend(child, depth + 1, nested=True)
        if t == "heredoc_redirect":
            yield Redirect(op or "<<", None, fd, heredoc_body or "", quoted)
        else:
            if op in (">&-", "<&-") and targets:
                # bash: `>&- word` closes the descriptor and `word` is an
                # argument; tree-sitter reads `word` as the target.
                self.fail(f"word after {op!r}")
            if any(targets[i].end_byte != targets[i + 1].start_byte
                   for i in range(len(targets) - 1)):
                # `cat < F X`: tree-sitter reads `F X` as the target; bash
                # reads X as an argument of cat. From a review: `cat <
                # a.txt ~/.ssh/id_rsa` was judged as a read of one file
                # named `a.txt/…` inside the project, allowed, and printed
                # the key.
                self.fail(f"words after the target of {op!r}, which bash reads as arguments")
            target = self.redirect_target(self.word(targets, depth, nested)) if targets else None
            yield Redirect(op, target, fd)
        yield from extra

    def heredoc_body(self, node: Any, quoted: bool, depth: int, nested: bool) -> str:
        if not quoted:
            for child in node.named_children:
                if child.type != "heredoc_content":
                    # Unquoted here-documents expand $x, $(...) and `...`.
                    self.fail("expansion in unquoted here-document")
                    self.descend(child, depth + 1, nested=True)
        return self.text(node)
