"""The terminal's questioner for AskUserQuestion, driven through rich's own
console and input: the console writes to a StringIO, the person's typing
comes from a text stream handed to ``Console.input`` (the seam rich itself
offers in place of standard input). What the model wrote is shown, never
obeyed; what the person typed becomes the answer."""

from __future__ import annotations

import asyncio
import functools
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from gateway.cli.questions import MAX_TRIES, ask_on_terminal, parse_choice
from gateway.messages import ToolUse
from gateway.session import Session
from gateway.tools.ask_user import ASK_USER_QUESTION


def question(text: str = "Which checks should run?", header: str = "Checks",
             labels: Sequence[str] = ("lint", "types", "tests"),
             multi: bool = False) -> dict[str, Any]:
    return {"question": text, "header": header, "multiSelect": multi,
            "options": [{"label": label, "description": f"run {label}"} for label in labels]}


def at_terminal(questions: Sequence[Mapping[str, Any]], typed: str) -> tuple[dict[str, str], str]:
    """The answers, and everything the screen showed."""
    screen = io.StringIO()
    console = Console(file=screen, width=200, color_system=None, highlight=False)
    answers = asyncio.run(ask_on_terminal(questions, console=console, stream=io.StringIO(typed)))
    return answers, screen.getvalue()


@pytest.mark.parametrize(("multi", "typed", "answer"), [
    (False, "2\n", "types"),
    (False, " 3 \n", "tests"),
    (True, "1,3\n", "lint, tests"),
    (True, "3 1 3\n", "tests, lint"),
    (False, "other\nonly the fast ones\n", "only the fast ones"),
    (False, "4\nnone today\n", "none today"),  # "Other" is listed as number 4
    (False, "9\n1, 2\nlint\n1\n", "lint"),  # asked again until one choice is given
    (False, "o\n\no\nmy own\n", "my own"),  # an empty own answer: the choice again
])
def test_the_person_picks_by_number_or_answers_in_their_own_words(
        multi: bool, typed: str, answer: str) -> None:
    answers, _ = at_terminal([question(multi=multi)], typed)
    assert answers == {"Which checks should run?": answer}


def test_each_question_is_asked_in_turn_with_numbered_options() -> None:
    answers, screen = at_terminal(
        [question(), question("Which library?", "Library", ("arrow", "pendulum"))], "1\n2\n")
    assert answers == {"Which checks should run?": "lint", "Which library?": "pendulum"}
    assert "Checks (1/2)" in screen and "Library (2/2)" in screen
    assert "  1. lint — run lint" in screen and "  4. Other (answer in your own words)" in screen
    assert "  3. Other" in screen.split("Library (2/2)")[1]


def test_what_the_model_wrote_is_shown_as_text_never_obeyed() -> None:
    hostile = question(text="Proceed?\x1b[2K\x1b[1A all tests passed\u202e",
                       header="[bold red]", labels=("[/]yes", "no[link=http://x]"))
    answers, screen = at_terminal([hostile], "1\n")
    assert answers == {"Proceed?\x1b[2K\x1b[1A all tests passed\u202e": "[/]yes"}
    assert "\x1b" not in screen and "\u202e" not in screen
    assert "\\x1b[2K\\x1b[1A all tests passed\\u202e" in screen
    assert "[bold red]" in screen and "1. [/]yes" in screen and "no[link=http://x]" in screen


def test_a_wall_of_text_cannot_scroll_the_options_away() -> None:
    long = "Which one?" + "\n" * 60 + "\n".join(f"line {i}" for i in range(40))
    _, screen = at_terminal([question(text=long)], "1\n")
    assert "\n\n\n" not in screen.split("Checks")[1]  # blank runs made one
    assert "line 17" in screen and "line 18" not in screen and "(22 more lines)" in screen


def test_the_input_ending_and_endless_nonsense_both_stop_the_questions() -> None:
    with pytest.raises(EOFError):
        at_terminal([question()], "")
    with pytest.raises(EOFError):
        at_terminal([question()], "other\n")
    with pytest.raises(ValueError, match="no usable answer"):
        at_terminal([question()], "x\n" * MAX_TRIES)


@pytest.mark.parametrize(("text", "multi", "choice"), [
    ("2", False, [2]), ("1,2", False, None), ("1,2", True, [1, 2]), ("0", False, None),
    ("4", False, "other"), ("5", True, None), ("OTHER", True, "other"), ("", False, None),
    ("1,other", True, None), ("-1", False, None), ("２", False, None),
])
def test_a_typed_answer_is_numbers_or_other(text: str, multi: bool,
                                            choice: list[int] | str | None) -> None:
    assert parse_choice(text, 3, multi) == choice


def test_ask_user_question_answered_at_the_terminal(workspace: Path, tmp_path: Path) -> None:
    screen = io.StringIO()
    console = Console(file=screen, width=200, color_system=None)
    (tmp_path / "home").mkdir()
    session = Session.open(str(workspace), extra_tools=[ASK_USER_QUESTION],
                           home=str(tmp_path / "home"), results_dir=str(tmp_path))
    session.context.questioner = functools.partial(ask_on_terminal, console=console,
                                                   stream=io.StringIO("2,3\n"))
    use = ToolUse("toolu_q", "AskUserQuestion", {"questions": [question(multi=True)]})
    result = asyncio.run(session.run(use))
    assert not result.is_error
    assert '"Which checks should run?"="types, tests"' in result.text
    assert "Pick one or more" in screen.getvalue()


def test_headers_and_labels_are_shown_on_one_line_whoever_passed_them() -> None:
    # reproducer: a label of `pytest`, forty newlines and `Bash needs
    # approval:` printed a fake prompt at the margin, the question off screen
    forged = "pytest" + "\n" * 40 + "Bash needs approval:\n  command: rm -rf ~"
    answers, screen = at_terminal([question(header="Runner\n\n", labels=(forged, "unittest"))],
                                  "1\n")
    assert answers == {"Which checks should run?": forged}
    assert "\n\n\n" not in screen and "\nBash needs approval" not in screen
    assert "  1. pytest Bash needs approval: command: rm -rf ~ — run" in screen


@pytest.mark.parametrize("spot", ["question", "description"])
def test_model_text_that_wraps_never_reaches_the_margin(spot: str) -> None:
    # reproducer: `Which runner?`, 200 spaces, then `Bash needs approval:`
    # wrapped onto a line of its own at the margin
    forged = "Which runner?" + " " * 200 + "y" * 60 + " Bash needs approval: rm -rf ~"
    asked = question()
    if spot == "question":
        asked["question"] = forged
    else:
        asked["options"][0]["description"] = forged
    screen = io.StringIO()
    console = Console(file=screen, width=80, color_system=None, highlight=False)
    asyncio.run(ask_on_terminal([asked], console=console, stream=io.StringIO("1\n")))
    at_margin = [line for line in screen.getvalue().splitlines()
                 if line.strip() and not line.startswith("  ")]
    assert at_margin == ["Checks", "Pick one (1-3, or 'other'): "], at_margin
