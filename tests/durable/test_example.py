"""examples/durable.py runs without setup and books its room once."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("dbos")

from examples import durable


async def test_the_durable_example_books_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(durable, "bookings", [])
    assert await durable.main(tmp_path) == [
        "user: Book me a room",
        "concierge: booked the blue room",
        "concierge: The blue room is yours.",
        "the same run again: 0 events; bookings: ['blue']",
    ]
