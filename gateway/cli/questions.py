"""AskUserQuestion at a terminal: each question with its numbered options;
the person types a number (several for a multiple choice, ``1,3``) or
``other`` to answer in their own words.

Everything the model wrote — headers, questions, labels, descriptions — is
shown as text, never obeyed: escaped for rich's markup (a label ``[/]``
would crash the prompt, ``[link=…]`` would hide a link), and every control
or invisible format character made visible by the approval prompt's own
:func:`gateway.cli.tool.shown` (``\\x1b[2K`` would rewrite the line above,
a bidirectional override would make an option read as another)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TextIO

from regexes import regex

if TYPE_CHECKING:
    from rich.console import Console

#: how many unusable answers a question takes before it gives up
MAX_TRIES = 5
#: lines of one question's text shown at most (a model's wall of text
#: must not scroll its own options off the screen)
MAX_QUESTION_LINES = 20
_WORDS_FOR_OTHER = frozenset({"o", "other"})
_SEPARATORS = regex(r"[\s,]+")

Choice = list[int] | Literal["other"]


def parse_choice(text: str, options: int, multi: bool) -> Choice | None:
    """A typed answer: option numbers (1-based), ``"other"``, or ``None``
    when it is neither (the question is asked again). ``options + 1`` is
    "Other" too: it is listed under that number."""
    words = [w for w in _SEPARATORS.split(text.strip().lower()) if w]
    if len(words) == 1 and (words[0] in _WORDS_FOR_OTHER or words[0] == str(options + 1)):
        return "other"
    if not words or (len(words) > 1 and not multi):
        return None
    picked: list[int] = []
    for word in words:
        if not (word.isascii() and word.isdigit()) or not 1 <= int(word) <= options:
            return None
        if int(word) not in picked:
            picked.append(int(word))
    return picked


def _lines(text: str, shown: Callable[[str], str]) -> list[str]:
    """A question's text for the screen: runs of blank lines made one,
    at most :data:`MAX_QUESTION_LINES` lines."""
    out: list[str] = []
    for line in text.splitlines() or [""]:
        if line.strip() or (out and out[-1]):
            out.append(shown(line.rstrip()) if line.strip() else "")
    if len(out) > MAX_QUESTION_LINES:
        out = [*out[:MAX_QUESTION_LINES], f"… ({len(out) - MAX_QUESTION_LINES} more lines)"]
    return out


def _one_line(text: str, shown: Callable[[str], str]) -> str:
    """A header or a label on one line. Reproducer: a label of `pytest`,
    forty newlines and `Bash needs approval:\n  command: rm -rf ~` pushed
    the question off the screen and printed a line at the margin that
    reads like the approval prompt."""
    return shown(" ".join(text.split()))


def _indented(console: Console, text: str) -> None:
    """Model-written text two columns in, its wrapped lines too, and never
    read as markup. Reproducer: a question of 200 spaces, then `Bash needs
    approval:` wrapped onto a line of its own at the margin."""
    from rich.padding import Padding  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    console.print(Padding(Text(text), (0, 0, 0, 2)))


def _read(console: Console, prompt: str, stream: TextIO | None) -> str:
    line = console.input(prompt, stream=stream)
    if stream is not None and line == "":
        raise EOFError("the input ended before the question was answered")
    return line.rstrip("\n")


def _ask_one(console: Console, question: Mapping[str, Any], index: int, total: int,
             stream: TextIO | None) -> str:
    from rich.markup import escape  # noqa: PLC0415

    from .tool import shown  # noqa: PLC0415 -- tool.py may import this module

    options = [o for o in question.get("options", ()) if isinstance(o, Mapping)]
    labels = [str(o.get("label", "")) for o in options]
    multi = bool(question.get("multiSelect", False))
    count = f" ({index}/{total})" if total > 1 else ""
    console.print(f"\n[bold]{escape(_one_line(str(question.get('header', '')), shown))}[/bold]"
                  f"{count}")
    for line in _lines(str(question.get("question", "")), shown):
        _indented(console, line)
    for number, option in enumerate(options, 1):
        about = _one_line(str(option.get("description", "")), shown)
        _indented(console, f"{number}. {_one_line(labels[number - 1], shown)}"
                  + (f" — {about}" if about else ""))
    console.print(f"  {len(options) + 1}. Other (answer in your own words)")
    prompt = (f"Pick one or more, e.g. 1,3 (1-{len(options)}, or 'other'): " if multi
              else f"Pick one (1-{len(options)}, or 'other'): ")
    for _ in range(MAX_TRIES):
        choice = parse_choice(_read(console, prompt, stream), len(options), multi)
        if choice == "other":
            own = _read(console, "Your answer: ", stream).strip()
            if own:
                return own
            console.print("  (an empty answer: pick again)")
        elif choice is not None:
            return ", ".join(labels[n - 1] for n in choice)
        else:
            console.print("  (not one of the choices: type "
                          + ("numbers such as 1,3" if multi else "one number")
                          + " or 'other')")
    raise ValueError(f"no usable answer after {MAX_TRIES} tries")


async def ask_on_terminal(questions: Sequence[Mapping[str, Any]], *,
                          console: Console | None = None,
                          stream: TextIO | None = None) -> dict[str, str]:
    """The session's questioner at a terminal: each question asked in turn
    on ``console`` (standard error by default), answers read from
    ``stream`` (standard input by default), off the event loop. Returns
    one answer per question text: an option's label, labels joined by
    ", ", or the person's own words. Raises ``EOFError`` when the input
    ends, ``ValueError`` after :data:`MAX_TRIES` unusable answers."""
    if console is None:
        from rich.console import Console  # noqa: PLC0415

        console = Console(stderr=True, highlight=False)
    answers: dict[str, str] = {}
    for index, question in enumerate(questions, 1):
        answers[str(question.get("question", ""))] = await asyncio.to_thread(
            _ask_one, console, question, index, len(questions), stream)
    return answers
