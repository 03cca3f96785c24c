"""Evaluating tree-sitter word nodes: quote removal, ANSI-C strings, tilde,
``$NAME`` resolution from variables known earlier in the line, glob and
brace detection. A mixin of the statement walker in :mod:`.parser`.

Any piece whose value cannot be known statically (``$(...)``, ``${x@P}``, an
unassigned ``$VAR``, an unquoted expansion that word splitting would break
apart) makes the whole word dynamic and records why; the walker then
reports the parse as ``too-complex``.
"""

from __future__ import annotations

from values import valueclass

from .ir import Word
from .words import (
    NON_SECRET_VARS,
    decode_ansi_c,
    expand_tilde,
    has_brace,
    has_glob,
    unescape_double,
    unescape_unquoted,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SUBSTITUTIONS = {
    "command_substitution": "command substitution",
    "process_substitution": "process substitution",
    "arithmetic_expansion": "arithmetic expansion",
}
WORDISH = frozenset(
    {
        "word",
        "string",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "concatenation",
        "number",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
        "$",
    }
)
_IFS_CHARS = frozenset(" \t\n")
#: node types whose text is one unquoted piece (see :meth:`WordEvaluator.piece`)
_PLAIN_TYPES = frozenset({"word", "number"})
#: what quote removal (``\\``), pathname expansion (``* ? [``) and brace
#: expansion (``{``) act on in an unquoted piece
_WORD_SPECIALS = frozenset("\\*?[{")
#: special parameters that always expand to one decimal number
_NUMERIC_SPECIALS = frozenset({"?", "#"})


@valueclass(frozen=False)
class _Piece:
    value: str | None
    mask: str
    quoted: bool
    pipe: bool = False
    #: the name of a non-secret variable whose value is not known
    #: (printing mode: `echo $PATH`)
    opaque: bool = False


#: what a `<(…)` word is to the command reading it (bash: /dev/fd/63, 62 …)
PIPE_PATH = "/dev/fd/63"


class WordEvaluator:
    """Word evaluation for the walker; needs its source bytes, variable
    scope, working directory and failure list."""

    src: bytes
    cwd: str | None
    scope: dict[str, str]
    reasons: list[str]
    #: `<(…)` words accepted as pipes (see :meth:`input_pipe`)
    input_pipes: int
    #: variables the command line assigns anywhere, and whether something
    #: in it may have set any (``read``, ``declare -x``, ``source``)
    assigned: set[str]
    env_unknown: bool
    #: set while the arguments of a command that only prints them are
    #: evaluated (see :meth:`_resolve`)
    printing: bool = False

    def text(self, node: Any) -> str:
        return str(self.src[node.start_byte : node.end_byte].decode("utf-8", "replace"))

    def fail(self, reason: str) -> None:
        self.reasons.append(reason)

    def descend(self, node: Any, depth: int, nested: bool) -> None:
        """Collect the commands below ``node`` (the walker provides it)."""

    def input_pipe(self, node: Any, depth: int, nested: bool) -> None:
        """Analyze the commands of ``<(…)`` (the walker provides it)."""

    def word(self, nodes: list[Any], depth: int, nested: bool) -> Word:
        """Evaluate adjacent nodes as one shell word."""
        if len(nodes) == 1 and nodes[0].type in _PLAIN_TYPES:
            # most words are one unquoted piece with nothing in it that
            # quote removal, globbing, brace or tilde expansion would touch
            # (`git`, `--oneline`, `src/main.py`): the general path below
            # gives exactly Word(text, text) for them, at a tenth of the cost
            text = self.text(nodes[0])
            if _WORD_SPECIALS.isdisjoint(text) and text[:1] != "~":
                return Word(text, text)
        pieces: list[_Piece] = []
        i = 0
        while i < len(nodes):
            n = nodes[i]
            if (
                n.type == "$"
                and i + 1 < len(nodes)
                and nodes[i + 1].type in ("string", "concatenation")
            ):
                i += 1  # `$"..."` translated string: the `$` is not literal
                continue
            pieces.extend(self.piece(n, depth, nested))
            i += 1
        raw = str(self.src[nodes[0].start_byte : nodes[-1].end_byte].decode("utf-8", "replace"))
        if any(p.pipe for p in pieces):
            if len(pieces) == 1:
                self.input_pipes += 1
                return Word(raw, PIPE_PATH, True, pipe=True)
            # `x<(cmd)` is one word `x/dev/fd/63` to bash: nothing reads it as a pipe
            self.fail("process substitution inside a word")
            return Word(raw, None, True)
        quoted = any(p.quoted for p in pieces)
        if any(p.value is None for p in pieces):
            return Word(raw, None, quoted)
        value = "".join(p.value for p in pieces if p.value is not None)
        mask = "".join(p.mask for p in pieces)
        glob = has_glob(mask)
        brace = has_brace(mask)
        if (glob or brace) and any(p.opaque for p in pieces):
            # `echo $PWD/../.ssh/*` lists a directory wherever the variable
            # points; the placeholder `$PWD` is no path (from a review)
            self.fail("a glob or brace expansion over a variable's value")
            return Word(raw, None, quoted)
        if mask.startswith("~"):
            value = expand_tilde(value, mask, self.scope.get("HOME"), self.cwd)
        return Word(raw, value, quoted, glob, brace)

    def piece(self, node: Any, depth: int, nested: bool) -> list[_Piece]:
        t = node.type
        if t in {"word", "number", "$"}:
            value, mask = unescape_unquoted(self.text(node))
            return [_Piece(value, mask, mask != value)]
        if t == "raw_string":
            body = self.text(node)[1:-1]
            return [_Piece(body, "\0" * len(body), True)]
        if t == "ansi_c_string":
            body = decode_ansi_c(self.text(node)[2:-1])
            return [_Piece(body, "\0" * len(body), True)]
        if t in ("string", "translated_string"):
            return [self.double_quoted(node, depth, nested)]
        if t == "concatenation":
            out: list[_Piece] = []
            children = node.children
            for i, child in enumerate(children):
                if child.type == "$" and i + 1 < len(children) and children[i + 1].type == "string":
                    continue
                out.extend(self.piece(child, depth + 1, nested))
            return out
        if t == "simple_expansion":
            return [self.expansion(node, quoted=False)]
        if t == "expansion":
            return [self.braced_expansion(node, quoted=False)]
        if t == "process_substitution" and self.text(node).startswith("<("):
            self.input_pipe(node, depth + 1, nested)
            return [_Piece(PIPE_PATH, "\0" * len(PIPE_PATH), True, pipe=True)]
        if t in SUBSTITUTIONS:
            self.fail(SUBSTITUTIONS[t])
            self.descend(node, depth + 1, nested=True)
            return [_Piece(None, "", False)]
        if t == "brace_expression":
            txt = self.text(node)
            return [_Piece(txt, txt, False)]
        self.fail(f"unsupported syntax {t!r} in word")
        self.descend(node, depth + 1, nested=True)
        return [_Piece(None, "", False)]

    def double_quoted(self, node: Any, depth: int, nested: bool) -> _Piece:
        parts: list[str] = []
        dynamic = False
        opaque = False
        pos = node.start_byte + 1
        end = node.end_byte - 1
        for child in node.children:
            if child.start_byte < pos or child.type == '"':
                continue
            if child.start_byte > pos:  # text tree-sitter left uncovered
                gap = self.src[pos : child.start_byte].decode("utf-8", "replace")
                parts.append(unescape_double(gap))
            t = child.type
            if t in {"string_content", "$"}:
                parts.append(unescape_double(self.text(child)))
            elif t == "simple_expansion":
                p = self.expansion(child, quoted=True)
                dynamic |= p.value is None
                opaque |= p.opaque
                parts.append(p.value or "")
            elif t == "expansion":
                p = self.braced_expansion(child, quoted=True)
                dynamic |= p.value is None
                opaque |= p.opaque
                parts.append(p.value or "")
            elif t in SUBSTITUTIONS:
                self.fail(SUBSTITUTIONS[t])
                self.descend(child, depth + 1, nested=True)
                dynamic = True
            else:
                self.fail(f"unsupported syntax {t!r} in string")
                dynamic = True
            pos = child.end_byte
        if pos < end:
            parts.append(unescape_double(self.src[pos:end].decode("utf-8", "replace")))
        if dynamic:
            return _Piece(None, "", True)
        value = "".join(parts)
        # `"$TZ"` keeps its variable unknown: `echo ."$TZ"./.ssh/*` is
        # `echo ../.ssh/*` when TZ is unset (from a review)
        return _Piece(value, "\0" * len(value), True, opaque=opaque)

    def expansion(self, node: Any, *, quoted: bool) -> _Piece:
        """``$NAME``: resolved from variables assigned earlier in the command.
        ``$?`` and ``$#`` always expand to one decimal number (an exit
        status, a count): a word with no space, glob or option in it, so
        `grep foo f; echo $?` is as static as `echo 1` (it asked before)."""
        name = self.text(node)[1:]
        if name in _NUMERIC_SPECIALS:
            return _Piece("0", "\0", True)
        return self._resolve(name, quoted, f"variable ${name}")

    def braced_expansion(self, node: Any, *, quoted: bool) -> _Piece:
        """``${NAME}`` resolves like ``$NAME``; any operator (``${x@P}``,
        ``${!x}``, ``${x:-...}``, ``${#x}``) is dynamic."""
        names = node.named_children
        kids = node.children
        if len(kids) == 3 and len(names) == 1 and names[0].type == "variable_name":
            return self._resolve(self.text(names[0]), quoted, f"expansion {self.text(node)}")
        self.fail(f"parameter expansion {self.text(node)[:40]}")
        for child in names:
            if child.type in SUBSTITUTIONS:
                self.descend(child, 0, nested=True)
        return _Piece(None, "", quoted)

    def _resolve(self, name: str, quoted: bool, what: str) -> _Piece:
        value = self.scope.get(name)
        if (value is None and self.printing and name in NON_SECRET_VARS
                and name not in self.assigned and not self.env_unknown):
            # `echo $PATH` asked: its value is unknown here, but echo only
            # prints its arguments and the variable holds no secret even
            # where the environment is not scrubbed. The word keeps the
            # variable's name; nothing reads it as a path. Only a value the
            # command line did not set: from a review, `TZ+='/x/.ssh/*';
            # echo $TZ` listed key names.
            return _Piece(f"${name}", "\0" * (len(name) + 1), True, opaque=True)
        if value is None:
            self.fail(f"unresolved {what}")
            return _Piece(None, "", quoted)
        if not quoted and (not value or not _IFS_CHARS.isdisjoint(value) or has_glob(value)):
            # Unquoted expansion is split and globbed: the word count is unknown.
            self.fail(f"{what} is split or globbed when unquoted")
            return _Piece(None, "", False)
        return _Piece(value, "\0" * len(value), True)
