"""The one rule the runner and AG-UI apply to a resume's answers: `adk.approvals.check_answers`."""

from __future__ import annotations

from adk.approvals import AnswerCheck, check_answers
from adk.events import ObjectType

WAITING = {
    "a1": (ObjectType.APPROVAL_REQUEST, "transfer"),
    "p1": (ObjectType.TOOL_PENDING, "job"),
    "c1": (ObjectType.CLIENT_PENDING, "pick_color"),
}


def test_answers_that_fit_every_waiting_call_leave_nothing_over() -> None:
    assert check_answers(WAITING, ["a1"], ["p1", "c1"]) == AnswerCheck((), (), ())


def test_a_client_answers_only_its_own_tools_calls() -> None:
    # The application gives a long-running tool's result; a client (AG-UI) cannot forge it.
    assert check_answers(WAITING, ["a1"], ["p1", "c1"], client=True) == AnswerCheck((), ("p1",), ())


def test_answers_of_the_wrong_kind_are_named_in_the_order_given() -> None:
    found = check_answers(WAITING, ["c1", "x9", "a1"], ["a1", "x8", "c1"])
    assert found == AnswerCheck(("c1", "x9"), ("a1", "x8"), ("p1",))


def test_every_waiting_call_needs_an_answer_named_in_the_order_it_waits() -> None:
    assert check_answers(WAITING, [], []) == AnswerCheck((), (), ("a1", "p1", "c1"))
    assert check_answers({}, ["a1"], ["c1"], client=True) == AnswerCheck(("a1",), ("c1",), ())
