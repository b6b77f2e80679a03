"""A run shown in a terminal (`Display`), its text with control characters shown, never obeyed.

`Display` reads everything it shows from the run's events: streamed text, tool calls and their
results, and what callbacks decided. Every text it shows goes through `visible` first, as `less`
and `git` show such text.

What a model, a tool, an event or an error says may hold escape sequences a terminal would obey:
OSC 52 writes the clipboard, OSC 0 sets the window title, CSI sequences clear the screen and move
the cursor, a carriage return or a backspace overwrites what is shown. `visible` shows each
control character instead: the C0 ones and DEL in caret notation (ESC is `^[`, CR `^M`, DEL
`^?`); the C1 ones (U+0080 to U+009F, which some terminals obey as escape sequences) and the
bidirectional-text controls (which reorder what is shown) as `<U+XXXX>`. Newlines and tabs stay.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Iterable
from typing import TextIO, assert_never

from adk.callbacks.decisions import (
    Approved,
    BudgetExceeded,
    BudgetWarning,
    Compacted,
    Decision,
    Deferred,
    FellBack,
    Halted,
    Paced,
    Refused,
    Rejected,
    Replaced,
    Retried,
)
from adk.events import Event, ObjectType

__all__ = ["Display", "VisibleFormatter", "visible"]

_SHOWN = {c: f"^{chr(c ^ 0x40)}" for c in (*range(0x20), 0x7F) if chr(c) not in "\n\t"}
_SHOWN.update(
    {
        c: f"<U+{c:04X}>"
        for c in (*range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
    }
)
_CONTROL = re.compile("[" + "".join(re.escape(chr(c)) for c in _SHOWN) + "]")


def visible(text: str) -> str:
    """`text` with its control characters shown (`^[`, `<U+009B>`); the same object if it has none."""
    return text.translate(_SHOWN) if _CONTROL.search(text) else text


class VisibleFormatter(logging.Formatter):
    """Formats log records for a terminal: what they quote of a model or tool shown, not obeyed."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


class Display:
    """Shows a run readably, from its events: text, tool calls and results, and callback decisions.

    What callbacks decided is read from the events (`Event.decisions`): a model call's recoveries
    as they happen (`attempt.failed`), a halt or a replaced output on the event it shaped.
    """

    def __init__(
        self,
        out: TextIO | None = None,
        err: TextIO | None = None,
        *,
        color: bool | None = None,
        verbose: bool = False,
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.color = _wants_color(self.out) if color is None else color
        self.verbose = verbose
        """Whether every complete event (and every decision it records) gets a line of its own too."""
        self.failed = False
        """Whether an error event was shown."""
        self._open: tuple[str, str] | None = None
        """The (branch, author) whose streamed text is on the current line."""

    def show(self, event: Event) -> None:
        """Show one event of the run (and, when verbose, a line of what it records)."""
        if event.author != "user":
            self._show(event)
        if self.verbose and (not event.is_partial or event.decisions):
            self._trace(event)

    def _show(self, event: Event) -> None:
        match event.object:
            case ObjectType.CHAT_COMPLETION_CHUNK:
                if event.content:
                    self._stream(event)
            case ObjectType.CHAT_COMPLETION:
                self._response(event)
            case ObjectType.TOOL_RESPONSE:
                self._tool_result(event)
            case ObjectType.TOOL_PROGRESS if event.delta is not None:
                self._close()
                self._note("⋯", f"{event.delta.name}: {_clip(event.delta.content)}", "2")
            case ObjectType.ATTEMPT_FAILED | ObjectType.COMPACTION:
                self._close()
                self._decisions(event.decisions)
            case ObjectType.ATTEMPT_DISCARDED:
                self._close()
                note = event.error.message if event.error else "a streamed attempt failed"
                self._note("⟲", f"discarded: {note}", "33")
            case ObjectType.ERROR:
                self._close()
                self.failed = True
                info = event.error
                text = f"{info.type}: {info.message}" if info else "unknown error"
                where = f" [{info.where}]" if info and info.where else ""
                self.err.write(self._style(f"✗ error: {text}{where}", "31") + "\n")
                self.err.flush()

    def user(self, message: str) -> None:
        """Echo what the user said (the demo types it for them)."""
        self._close()
        self._write(self._style("you:", "1") + f" {visible(message)}\n")

    def heading(self, text: str) -> None:
        self._close()
        self._write(self._style(f"\n── {text}", "2") + "\n")

    def prompt(self) -> str:
        return self._style("you:", "1") + " "

    def info(self, text: str) -> None:
        self.err.write(self._style(text, "2") + "\n")
        self.err.flush()

    def _decisions(self, decisions: Iterable[Decision]) -> None:
        for decision in decisions:
            self._note(*_told(decision))

    def _trace(self, event: Event) -> None:
        """One line for the event: who, where, what, the model's usage, the state it changed, and
        each decision it records (`by → kind`), repeats included."""
        self._close()
        parts = [event.author, f"[{event.branch}]" if event.branch else "", event.object]
        if event.model:
            parts.append(f"model {event.model}")
        if event.usage is not None:
            parts.append(f"{event.usage.prompt_tokens} in / {event.usage.completion_tokens} out tokens")
        if event.actions.state_delta:
            parts.append(f"Δ {json.dumps(event.actions.state_delta, ensure_ascii=False, default=str)}")
        parts += (f"{d.by.removeprefix('callback:')} → {d.kind}" for d in event.decisions)
        self._write(self._style(f"  · {' '.join(p for p in parts if p)}", "2") + "\n")

    def _response(self, event: Event) -> None:
        key = (event.branch, event.author)
        decisions = event.fresh_decisions()
        if decisions:
            self._close()
            self._decisions(decisions)
        message = event.message
        if message is None:
            return
        if self._open == key:
            self._close()
        elif message.content:
            self._close()
            self._write(self._speaker(event.author) + visible(message.content) + "\n")
        for call in message.tool_calls:
            self._note("⚙", f"{call.function.name}({_arguments(call.function.arguments)})", "36")

    def _stream(self, event: Event) -> None:
        key = (event.branch, event.author)
        if self._open != key:
            self._close()
            self._write(self._speaker(event.author))
            self._open = key
        self._write(visible(event.content))

    def _tool_result(self, event: Event) -> None:
        self._close()
        self._decisions(event.fresh_decisions())
        message = event.message
        if message is None:
            return
        text = _clip(message.content)
        if event.error is not None:
            self._note("✗", f"{message.name}: {text}", "31")
        else:
            self._note("↳", text, "2")

    def _speaker(self, author: str) -> str:
        return self._style(f"{author}:", "1;36") + " "

    def _note(self, mark: str, text: str, code: str) -> None:
        self._write(self._style(f"  {mark} {text}", code) + "\n")

    def _close(self) -> None:
        if self._open is not None:
            self._open = None
            self._write("\n")

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def _style(self, text: str, code: str) -> str:
        """`text`, its control characters shown (`visible`), in colour on a terminal."""
        text = visible(text)
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text


def _wants_color(stream: TextIO) -> bool:
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def _arguments(raw: str) -> str:
    try:
        args = json.loads(raw or "{}")
    except ValueError:
        return _clip(raw)
    if not isinstance(args, dict):
        return _clip(raw)
    return _clip(", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items()))


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _told(decision: Decision) -> tuple[str, str, str]:
    """A decision as the display notes it: its mark, its line and the line's colour."""
    who = decision.by.removeprefix("callback:")
    kind, _, name = decision.target.partition(":")
    target = f"{kind} {name}"
    match decision:
        case Halted():
            what = "the model was not called" if kind == "model" else "it did not run"
            return "⛔", f"{who} halted {target}; {what}", "35"
        case Replaced():
            return "✎", f"{who} replaced the output of {target}", "35"
        case Retried(wait=wait, attempt=attempt):
            failed = f"{target} failed ({decision.error}: {decision.message})"
            return "↻", f"{failed}; {who} retries in {wait:.2f} s (attempt {attempt})", "33"
        case FellBack(to=to):
            failed = f"{target} failed ({decision.error}: {decision.message})"
            instead = "a fallback result" if to is None else to.replace(":", " ", 1)
            return "⇄", f"{failed}; {who} falls back to {instead}", "33"
        case Deferred(reason=reason):
            return "⏸", f"{who} deferred {target} for approval: {reason}", "35"
        case Approved(call_id=call_id):
            return "✔", f"{target} approved ({call_id}); it runs", "32"
        case Rejected(call_id=call_id, reason=reason):
            because = f": {reason}" if reason else ""
            return "⊘", f"{target} rejected ({call_id}){because}; it does not run", "35"
        case _:
            return _told_of_limits(decision, who, target)


def _told_of_limits(
    decision: Compacted | Refused | Paced | BudgetWarning | BudgetExceeded, who: str, target: str
) -> tuple[str, str, str]:
    """The decisions of the limits and context callbacks, as `_told` gives the others."""
    match decision:
        case Compacted(folded=folded, tokens_saved=saved):
            return "⇊", f"{who} folded {folded} message(s) before {target}, {saved} tokens saved", "2"
        case Refused(reason=reason):
            return "⊘", f"{who} refused the answer of {target}: {reason}", "35"
        case Paced(wait=wait):
            return "⏳", f"{who} held {target} back {wait:.2f} s for capacity", "33"
        case BudgetWarning(limit=limit, allowed=allowed, spent=spent, note=note):
            return (
                "$",
                f"budget {decision.budget}: {limit} {spent:g} of {allowed:g} spent {note}".rstrip(),
                "33",
            )
        case BudgetExceeded(limit=limit, allowed=allowed, spent=spent):
            return "$", f"budget {decision.budget} refused {target}: {limit} {spent:g} of {allowed:g}", "31"
        case unreachable:
            assert_never(unreachable)
