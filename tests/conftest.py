"""Fixtures shared by every test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adk.recovery import Testing
from adk.testing import set_testing


@pytest.fixture
def testing() -> Iterator[Testing]:
    """Retry waits off (and recorded in `.waits`) for the test; `usefixtures("testing")` for a module."""
    with set_testing(True) as switch:
        yield switch
