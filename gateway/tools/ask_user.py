"""AskUserQuestion: the model asks the person one to four multiple-choice
questions and gets their answers.

The question is its own permission prompt: nothing is asked about the
call itself, and plan mode lets it run (nothing outside the session
changes). It needs the terminal alone, so it is not concurrency-safe. The
answers come from the session's questioner (``SessionContext.questioner``:
the terminal's, the MCP client's elicitation); a session with none — a
headless run, a one-shot ``shellgate tool`` without a terminal — refuses
the call before anything is asked. The person may always answer in their
own words ("Other"): the model does not offer that option itself."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from regexes import regex

from ..context import ToolContext
from ..decisions import VALID, Validation, invalid
from ..messages import ProgressCallback, ToolResult
from .base import build_tool
from .session_tools import SessionTool

MAX_QUESTIONS = 4
MAX_HEADER = 12
#: the option every question has without the model giving it
OTHER = "Other"
NO_ANSWER = "(no answer)"


class QuestionOption(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1, max_length=100, description=(
        "The choice as the user sees and picks it: concise (1-5 words)"))
    description: str = Field(max_length=1_000, description=(
        "What the choice means or what follows from it (its trade-offs)"))


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    question: str = Field(min_length=1, max_length=2_000, description=(
        'The complete question, clear and specific, ending with a question mark (e.g. '
        '"Which library should we use for date formatting?")'))
    header: str = Field(min_length=1, max_length=MAX_HEADER, description=(
        f'A very short label shown beside the question (at most {MAX_HEADER} characters, '
        'e.g. "Library", "Approach")'))
    options: list[QuestionOption] = Field(min_length=2, max_length=4, description=(
        'The 2-4 distinct choices. Do not add an "Other" option: the user can always '
        "answer in their own words"))
    multi_select: bool = Field(default=False, alias="multiSelect", description=(
        "true lets the user pick several options (choices that do not exclude each other)"))


class AskUserQuestionInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[Question] = Field(min_length=1, max_length=MAX_QUESTIONS, description=(
        f"The questions to ask the user (1-{MAX_QUESTIONS})"))


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


#: what a header or a label may not hold: line breaks and other controls,
#: and the invisible characters that make text read otherwise than it is
_NOT_ONE_LINE = regex("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e"
                           "\u2066-\u2069\ufeff]")


def check_questions(questions: list[Question]) -> str | None:
    """What makes the questions unanswerable as given (``None``: nothing):
    answers are keyed by question text, a label picks one option, and a
    header or a label is one line of plain text (a label of forty newlines
    and `Bash needs approval:` would draw a fake prompt on the screen)."""
    seen: set[str] = set()
    for q in questions:
        for what, text in (("header", q.header), *(("label", o.label) for o in q.options)):
            if _NOT_ONE_LINE.search(text):
                return (f"the {what} {text[:40]!r} holds a line break or a control character; "
                        "a header or a label is one line of plain text")
        if _key(q.question) in seen:
            return f"the question {q.question[:80]!r} is asked twice; question texts must be unique"
        seen.add(_key(q.question))
        labels: set[str] = set()
        for option in q.options:
            label = _key(option.label)
            if label == _key(OTHER):
                return (f'{q.header!r}: do not offer "{OTHER}"; the user can always answer in '
                        "their own words")
            if label in labels:
                return (f"{q.header!r}: the option {option.label!r} is given twice; labels "
                        "must be unique")
            labels.add(label)
    return None


def render_answers(questions: list[Question], answers: Mapping[str, Any]) -> str:
    """The reference's text: each question with its answer."""
    pairs = []
    for q in questions:
        answer = answers.get(q.question)
        text = answer if isinstance(answer, str) and answer.strip() else NO_ANSWER
        pairs.append(f'"{q.question}"="{text}"')
    return (f"User has answered your questions: {', '.join(pairs)}. You can now continue with "
            "the user's answers in mind.")


class AskUserQuestionTool(SessionTool[AskUserQuestionInput]):
    name: ClassVar[str] = "AskUserQuestion"
    input_model = AskUserQuestionInput
    search_hint: ClassVar[str] = "ask user question choice clarify preference decision"

    def description(self, data: AskUserQuestionInput | None = None) -> str:
        return ("Ask the user 1-4 multiple-choice questions while working: to learn their "
                "preferences, clarify an ambiguous instruction, or settle an implementation "
                "decision. The user can always answer in their own words instead of an "
                'option ("Other"); multiSelect lets them pick several. Put a recommended '
                'option first and end its label with "(Recommended)". In plan mode, ask to '
                "clarify the requirements before the plan is final — not whether the plan "
                "is ready (that is ExitPlanMode).")

    def summary(self, data: AskUserQuestionInput, cwd: str = "") -> str:
        return ", ".join(q.header for q in data.questions)

    def activity_description(self, data: AskUserQuestionInput, cwd: str = "") -> str:
        return "Asking the user"

    async def validate_input(self, data: AskUserQuestionInput, ctx: ToolContext) -> Validation:
        if ctx.session.questioner is None:
            return invalid("AskUserQuestion: no one can answer questions in this session (it "
                           "runs without a terminal or a client that asks); decide with what "
                           "you know, and say what you assumed", code=3)
        problem = check_questions(data.questions)
        return invalid(f"AskUserQuestion: {problem}", code=2) if problem else VALID

    async def call(self, data: AskUserQuestionInput, ctx: ToolContext,
                   on_progress: ProgressCallback) -> ToolResult:
        questioner = ctx.session.questioner
        if questioner is None:
            return ToolResult("AskUserQuestion: no one can answer questions in this session",
                              is_error=True)
        asked = [q.model_dump(by_alias=True) for q in data.questions]
        try:
            answers = await questioner(asked)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the call itself is being stopped: the pipeline says so
            return ToolResult("AskUserQuestion: the user dismissed the questions without "
                              "answering", is_error=True)
        except Exception as exc:
            return ToolResult(f"AskUserQuestion: the questions could not be asked "
                              f"({type(exc).__name__}); nothing was answered", is_error=True)
        if not isinstance(answers, Mapping):
            return ToolResult("AskUserQuestion: the questions got no answers", is_error=True)
        return ToolResult(render_answers(data.questions, answers))


ASK_USER_QUESTION = build_tool(AskUserQuestionTool())
