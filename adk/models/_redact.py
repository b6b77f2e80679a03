"""Secrets kept out of text: a `Redactor` for the adapter's errors and answers, and one for log records.

A secret is hidden whole and by any piece of it at least `PIECE` characters long, so that a
server quoting the key's tail ("...7b2dQWERTY") gives nothing away either. Log records of the
loggers that can see a request (adk's, the openai SDK's, httpx's, httpcore's) are redacted when
they are made: a record factory, not a logger filter, since a filter on `httpx` never sees the
records of `httpcore.http11`, and loggers made later would be missed.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["PIECE", "Redactor", "StreamMask", "redact_logs"]

PIECE = 8
"""The shortest piece of a secret that is hidden; shorter secrets are hidden whole only."""
MASK = "***"


class Redactor:
    """Replaces every secret, and every piece of one at least `PIECE` long, with `***`.

    `whole` secrets are replaced only whole: a form like `user:password@` whose pieces would
    include the user's name, an ordinary word.
    """

    __slots__ = ("_longest", "_parts", "_pattern", "_probes", "_shortest", "_texts", "secrets", "wholes")

    def __init__(self, secrets: Iterable[str] = (), whole: Iterable[str] = ()) -> None:
        self.secrets = tuple(dict.fromkeys(s for s in secrets if s))
        self.wholes = tuple(dict.fromkeys(s for s in whole if s and s not in self.secrets))
        pieces: set[str] = set(self.wholes)
        probes: set[str] = set(self.wholes)
        for secret in self.secrets:
            if len(secret) < PIECE:
                pieces.add(secret)
                probes.add(secret)
                continue
            pieces.update(secret[i : i + PIECE] for i in range(len(secret) - PIECE + 1))
            # Every piece of PIECE or more characters holds one of these aligned quarters whole.
            quarter = PIECE // 2
            probes.update(secret[i : i + quarter] for i in range(0, len(secret) - quarter + 1, quarter))
        self._texts = self.secrets + self.wholes
        # The secrets' short substrings, for `open_tail` to test most ends of texts by hashing alone.
        self._parts = frozenset(
            t[i : i + n] for t in self._texts for n in range(1, PIECE + 1) for i in range(len(t))
        )
        self._shortest = min((len(p) for p in pieces), default=sys.maxsize)
        self._longest = max((len(s) for s in self._texts), default=0)
        self._probes = tuple(probes)
        alternatives = "|".join(re.escape(p) for p in sorted(pieces, key=len, reverse=True))
        # A lookahead finds the pieces at every position, overlapping ones included.
        self._pattern = re.compile(f"(?=({alternatives}))" if pieces else "(?!)")

    def __bool__(self) -> bool:
        return bool(self._texts)

    def __call__(self, text: str) -> str:
        """`text` with the secrets masked; the very same object when it holds none.

        A server's value that is not text (a malformed answer) is refused without being quoted.
        """
        return _masked(text, self.spans(text))

    def spans(self, text: str) -> list[list[int]]:
        """Where `text` holds secrets: [start, end) spans, in order, overlapping and touching ones joined."""
        if type(text) is not str:
            raise TypeError(f"expected text, got {type(text).__name__}")
        spans: list[list[int]] = []
        if len(text) < self._shortest or not any(p in text for p in self._probes):
            return spans
        for match in self._pattern.finditer(text):
            start, end = match.start(), match.start() + len(match[1])
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        return spans

    def open_tail(self, text: str) -> int:
        """How many of the last characters of `text` could begin a secret that more text completes."""
        n, limit, parts = 0, min(len(text), self._longest - 1), self._parts
        while n < limit and text[-n - 1 :] in parts:
            n += 1
        if n < PIECE:
            return n
        while n < limit and any(text[-n - 1 :] in s for s in self._texts):
            n += 1
        return n


class StreamMask:
    """Masks a text that arrives in pieces, as the whole text would be masked.

    A piece is released only up to where no later piece can change its masking: the end of the
    text, held back while it could be the start of a secret (usually a few characters; none when
    there are no secrets), or the start of a secret that reaches it. The released pieces and
    `flush()` join to exactly `redact(whole text)`.
    """

    __slots__ = ("_held", "_redact")

    def __init__(self, redact: Redactor) -> None:
        self._redact = redact
        self._held = ""

    def add(self, text: str) -> str:
        """The part of the text so far that is final, masked; the rest is held for the next piece."""
        if type(text) is not str:
            raise TypeError(f"expected text, got {type(text).__name__}")
        redact = self._redact
        if not redact:
            return text
        held = self._held + text if self._held else text
        spans = redact.spans(held)
        cut = len(held) - redact.open_tail(held)
        for index, (start, end) in enumerate(spans):
            if end >= cut:  # a secret that more text could extend: held from its start
                cut = min(cut, start)
                spans = spans[:index]
                break
        self._held = held[cut:]
        return _masked(held[:cut], spans)

    def flush(self) -> str:
        """What is held, masked: the text has ended."""
        held, self._held = self._held, ""
        return self._redact(held) if held else held


def _masked(text: str, spans: list[list[int]]) -> str:
    """`text` with each span replaced by the mask."""
    if not spans:
        return text
    parts: list[str] = []
    done = 0
    for start, end in spans:
        parts += (text[done:start], MASK)
        done = end
    parts.append(text[done:])
    return "".join(parts)


_LOGGERS = frozenset({"adk", "openai", "httpx", "httpx2", "httpcore", "httpcore2"})
"""Top-level names of the loggers whose records are redacted."""
_logs = Redactor()
_owners: dict[tuple[str, bool], int] = {}
"""How many live owners (models) each secret hidden from the logs has, by (secret, hidden only whole)."""
_released: list[tuple[tuple[str, bool], ...]] = []
"""Secrets whose owner was collected; its finalizer only appends here, taking no lock."""
_lock = threading.Lock()


def redact_logs(owner: object, redact: Redactor) -> None:
    """Hide the secrets of `redact` from the records of adk's and the HTTP stack's loggers while
    `owner` lives.

    A secret is forgotten after its last owner: a process that makes a model per tenant's key
    does not keep every key it ever saw.
    """
    global _logs
    secrets = tuple((s, False) for s in redact.secrets) + tuple((s, True) for s in redact.wholes)
    with _lock:
        while _released:
            for secret in _released.pop():
                _owners[secret] -= 1
                if not _owners[secret]:
                    del _owners[secret]
        for secret in secrets:
            _owners[secret] = _owners.get(secret, 0) + 1
        _logs = Redactor((s for s, whole in _owners if not whole), (s for s, whole in _owners if whole))
        factory = logging.getLogRecordFactory()
        if not getattr(factory, "_adk_redacts", False):
            logging.setLogRecordFactory(_redacting(factory))
    weakref.finalize(owner, _released.append, secrets)


def _redacting(factory: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        redact = _logs
        if redact and record.name.partition(".")[0] in _LOGGERS:
            _redact_record(record, redact)
        return record

    make._adk_redacts = True  # type: ignore[attr-defined]  # marks the factory as installed
    return make


def _redact_record(record: logging.LogRecord, redact: Redactor) -> None:
    """Mask secrets in the record's message, traceback and stack, formatting them now if need be."""
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: the handler reports it, and nothing was formatted
        return
    clean = redact(message)
    if clean is not message:
        record.msg, record.args = clean, None
    if record.exc_info and record.exc_info[1] is not None:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        clean = redact(text)
        if clean is not text:  # formatters print exc_text when there is no exc_info
            record.exc_info, record.exc_text = None, clean
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
