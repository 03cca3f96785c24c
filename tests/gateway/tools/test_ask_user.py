"""AskUserQuestion through the real pipeline: the session's questioner
answers, the result gives each answer in the reference's words, a session
with nobody to answer refuses before asking, and a questioner that fails
or is dismissed is an error result, never a crash."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from kit import Answer

from gateway.context import Questioner
from gateway.messages import ToolResultMessage, ToolUse
from gateway.session import Session
from gateway.tools.ask_user import ASK_USER_QUESTION


def question(text: str = "Which library should we use?", header: str = "Library",
             labels: Sequence[str] = ("dateutil", "arrow"), multi: bool = False,
             ) -> dict[str, Any]:
    return {"question": text, "header": header, "multiSelect": multi,
            "options": [{"label": label, "description": f"use {label}"} for label in labels]}


class Person:
    """A questioner that answers from a table and records what it was asked."""

    def __init__(self, answers: Mapping[str, str]) -> None:
        self.answers = dict(answers)
        self.asked: list[list[Mapping[str, Any]]] = []

    async def __call__(self, questions: Sequence[Mapping[str, Any]]) -> Mapping[str, str]:
        self.asked.append(list(questions))
        return self.answers


def open_session(workspace: Path, tmp_path: Path, questioner: Questioner | None) -> Session:
    (tmp_path / "home").mkdir(exist_ok=True)
    session = Session.open(str(workspace), extra_tools=[ASK_USER_QUESTION],
                           home=str(tmp_path / "home"), results_dir=str(tmp_path))
    session.context.questioner = questioner
    return session


def ask(session: Session, questions: Any) -> ToolResultMessage:
    use = ToolUse("toolu_ask", "AskUserQuestion", {"questions": questions})
    return asyncio.run(session.run(use))


def test_the_answers_come_back_in_the_reference_words(workspace: Path, tmp_path: Path) -> None:
    person = Person({"Which library should we use?": "arrow",
                     "Which checks should run?": "lint, types",
                     "Anything else?": "keep it small"})
    session = open_session(workspace, tmp_path, person)
    result = ask(session, [question(), question("Which checks should run?", "Checks",
                                                ("lint", "types", "tests"), multi=True),
                           question("Anything else?", "Notes", ("no", "yes"))])
    assert not result.is_error, result.text
    assert result.text == (
        'User has answered your questions: "Which library should we use?"="arrow", '
        '"Which checks should run?"="lint, types", "Anything else?"="keep it small". '
        "You can now continue with the user's answers in mind.")
    asked = person.asked[0]
    assert [q["header"] for q in asked] == ["Library", "Checks", "Notes"]
    assert asked[1]["multiSelect"] is True and asked[0]["options"][1] == {
        "label": "arrow", "description": "use arrow"}


def test_a_question_left_unanswered_says_so(workspace: Path, tmp_path: Path) -> None:
    session = open_session(workspace, tmp_path, Person({}))
    result = ask(session, [question()])
    assert not result.is_error and '"Which library should we use?"="(no answer)"' in result.text


def test_without_a_questioner_the_call_is_refused_before_anything_is_asked(
        workspace: Path, tmp_path: Path) -> None:
    session = open_session(workspace, tmp_path, None)
    result = ask(session, [question()])
    assert result.is_error and "no one can answer questions in this session" in result.text
    events = getattr(session.context.audit, "events")  # noqa: B009
    assert not any(e["event"] == "permission.decided" for e in events)  # stopped at validation


class Broken:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def __call__(self, questions: Sequence[Mapping[str, Any]]) -> Mapping[str, str]:
        raise self.exc


@pytest.mark.parametrize(("exc", "expected"), [
    (EOFError("the input ended"), "could not be asked (EOFError)"),
    (RuntimeError("the terminal went away"), "could not be asked (RuntimeError)"),
    (asyncio.CancelledError(), "dismissed the questions"),
])
def test_a_questioner_that_fails_or_is_dismissed_gives_an_error_result(
        workspace: Path, tmp_path: Path, exc: BaseException, expected: str) -> None:
    session = open_session(workspace, tmp_path, Broken(exc))
    result = ask(session, [question()])
    assert result.is_error and expected in result.text, result.text


def test_a_call_stopped_while_the_person_thinks_is_interrupted_not_dismissed(
        workspace: Path, tmp_path: Path) -> None:
    waiting = asyncio.Event()

    async def slow(questions: Sequence[Mapping[str, Any]]) -> Mapping[str, str]:
        waiting.set()
        await asyncio.sleep(30)
        return {}

    session = open_session(workspace, tmp_path, slow)

    async def go() -> ToolResultMessage:
        task = asyncio.create_task(session.run(ToolUse("toolu_ask", "AskUserQuestion",
                                                       {"questions": [question()]})))
        await asyncio.wait_for(waiting.wait(), 10)
        task.cancel()
        return await task

    result = asyncio.run(go())
    assert result.is_error and "Interrupted" in result.text, result.text


@pytest.mark.parametrize(("questions", "expected"), [
    ([question(f"Q{i}?") for i in range(5)], "`questions`"),
    ([], "`questions`"),
    ([question(labels=("only",))], "questions.0.options"),
    ([question(labels=("a", "b", "c", "d", "e"))], "questions.0.options"),
    ([question(labels=("same", "Same"))], "'Same' is given twice"),
    ([question(), question()], "is asked twice"),
    ([question(header="Authentication")], "questions.0.header"),
    ([question(labels=("yes", "Other"))], 'do not offer "Other"'),
    ([{**question(), "answers": {}}], "unexpected parameter `questions.0.answers`"),
    ([{"question": "Which?", "header": "H", "options": [{"label": "a"}, {"label": "b"}]}],
     "questions.0.options.0.description"),
])
def test_malformed_questions_are_refused_and_nobody_is_asked(
        workspace: Path, tmp_path: Path, questions: Any, expected: str) -> None:
    person = Person({})
    session = open_session(workspace, tmp_path, person)
    result = ask(session, questions)
    assert result.is_error and expected in result.text, result.text
    assert not person.asked


def test_it_needs_no_approval_and_runs_in_plan_mode(workspace: Path, tmp_path: Path) -> None:
    person = Person({"Which library should we use?": "arrow"})
    session = open_session(workspace, tmp_path, person)
    session.context.approver = approver = Answer(False)
    session.context.mode = "plan"
    assert not ask(session, [question()]).is_error
    assert not approver.asked and len(person.asked) == 1


@pytest.mark.parametrize(("header", "labels"), [
    ("Runner", ("pytest\n\n\nBash needs approval:\n  command: rm -rf ~", "unittest")),
    ("Runner\n\n\n", ("pytest", "unittest")),
    ("Runner", ("pytest\r", "unittest")),
    ("Runner", ("\x1b[2Kpytest", "unittest")),
    ("Runner", ("pytest\u202e", "unittest")),
    ("Run\u2028ner", ("pytest", "unittest")),
])
def test_a_header_or_label_that_is_not_one_line_of_text_is_refused_and_nobody_is_asked(
        workspace: Path, tmp_path: Path, header: str, labels: Sequence[str]) -> None:
    # reproducer: a label of newlines and `Bash needs approval:` drew a fake
    # approval prompt at the margin, the question scrolled off above it
    person = Person({})
    result = ask(open_session(workspace, tmp_path, person), [question(header=header,
                                                                      labels=labels)])
    assert result.is_error and "one line of plain text" in result.text
    assert not person.asked
