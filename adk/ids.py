"""Fresh random identifiers: events', invocations', leases'. A turn makes several, so each is a
C call (no Python frame) but once per 256."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from itertools import chain, repeat

__all__ = ["new_id"]


def _fill(size: int) -> list[str]:
    """`size` fresh ids, cut in C from one system call's random bytes: a call per id was a tenth
    of a turn's cost."""
    pool = os.urandom(16 * size).hex(" ", 16).split()
    _pools.append(pool)
    return pool


def _forget_pools() -> None:
    """In a forked child: empty the pools it inherited, so that it never hands out its parent's
    next ids; its iterator then fills a new one."""
    for pool in _pools:
        pool.clear()


_pools: deque[list[str]] = deque(maxlen=8)
"""The last pools filled: the one being handed out is among them (threads that fill at the same
time may finish in any order)."""
new_id: Callable[[], str] = chain.from_iterable(map(_fill, repeat(256))).__next__
"""A fresh random identifier: 32 hex digits (128 bits from `os.urandom`), from a pool filled 256
at a time; a C call, no Python frame, except once per 256."""
os.register_at_fork(after_in_child=_forget_pools)
