"""The tagged results: frozen, slotted, generic values that compare by value and match by shape."""

from __future__ import annotations

import dataclasses
import pickle
from typing import assert_never

import pytest

from adk.callbacks import Cont, Fallback, Halt, Raise, Retry

ERROR = ValueError("boom")
ALL = [Cont("c"), Halt("h"), Retry("r"), Retry("r", delay=1.5), Fallback("f"), Raise(ERROR)]


@pytest.mark.parametrize("result", ALL, ids=repr)
def test_results_are_frozen_and_slotted(result: object) -> None:
    field = dataclasses.fields(result)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(result, field, "changed")
    assert not hasattr(result, "__dict__")


@pytest.mark.parametrize("result", ALL, ids=repr)
def test_results_compare_and_hash_by_value_and_survive_pickling(result: object) -> None:
    copy = dataclasses.replace(result)  # type: ignore[type-var]
    assert copy == result
    assert copy is not result
    assert hash(copy) == hash(result)
    # Exceptions compare by identity, so compare a pickled Raise by its repr.
    assert repr(pickle.loads(pickle.dumps(result))) == repr(result)


def test_results_of_different_kinds_or_values_differ() -> None:
    distinct: list[object] = [Cont(1), Halt(1), Retry(1), Fallback(1), Cont(2), Retry(1, delay=0)]
    assert len(set(distinct)) == len(distinct)
    assert Raise(ERROR) != Raise(ValueError("boom"))  # exceptions compare by identity


def test_fields_and_defaults() -> None:
    assert Cont(ctx=1).ctx == 1
    assert Halt(value=2).value == 2
    assert Retry(3).delay is None
    assert Retry(ctx=3, delay=0.5) == Retry(3, 0.5)
    assert Fallback(value=4).value == 4
    assert Raise(error=ERROR).error is ERROR
    assert repr(Retry("x", delay=1.0)) == "Retry(ctx='x', delay=1.0)"


def test_results_are_generic_at_run_time() -> None:
    assert Cont[int](1) == Cont(1)
    assert Halt[str]("x") == Halt("x")
    assert Retry[str]("x", delay=1) == Retry("x", 1)
    assert Fallback[int](1) == Fallback(1)


@pytest.mark.parametrize("result", ALL, ids=repr)
def test_results_refuse_other_attributes(result: object) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"^cannot assign to field 'other'$"):
        result.other = 1  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del result.other  # type: ignore[attr-defined]


def describe(result: Cont[str] | Halt[int] | Retry[str] | Fallback[int] | Raise) -> str:
    match result:
        case Cont(ctx):
            return f"cont {ctx}"
        case Halt(value):
            return f"halt {value}"
        case Retry(ctx, delay):
            return f"retry {ctx} after {delay}"
        case Fallback(value):
            return f"fallback {value}"
        case Raise(error):
            return f"raise {error!r}"
        case _:
            assert_never(result)


def test_results_match_positionally() -> None:
    assert [describe(r) for r in (Cont("a"), Halt(1), Retry("b", 2.0), Fallback(3), Raise(ERROR))] == [
        "cont a",
        "halt 1",
        "retry b after 2.0",
        "fallback 3",
        "raise ValueError('boom')",
    ]
