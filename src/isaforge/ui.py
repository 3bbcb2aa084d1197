"""What every command draws: the live status line and the tables (plain text, or GitHub markdown for reports).

Output stays plain when it is not a terminal (CI logs, pipes): no escape codes, and the status line becomes one
printed line per step instead of a line rewritten in place.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

CLEAR_LINE = "\r\033[K"
REDRAW_SECONDS = 0.1  # a terminal line redrawn faster only flickers


def duration(seconds: float) -> str:
    """`4.2s`, `1m10s`, `2h03m00s`."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m{secs:02d}s"


class StatusLine:
    """What each running task (a matrix cell, a bench stage) is doing, on one line rewritten in place on a terminal.
    Without a terminal only new steps and finished tasks print, one line each, so a CI log stays short. Thread-safe:
    the matrix runs cells in parallel."""

    def __init__(
        self,
        stream: TextIO | None = None,
        live: bool | None = None,
        head: Callable[[], str] = lambda: "",
        quiet: bool = False,
    ) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.head = head
        self.quiet = quiet
        self.running: dict[str, str] = {}
        self.lock = threading.Lock()
        self._last_draw = 0.0

    def _line(self) -> str:
        body = " | ".join(f"{key}: {state}" for key, state in self.running.items())
        width = shutil.get_terminal_size((120, 20)).columns - 1
        line = f"{self.head()} {body}".strip()
        return line if len(line) <= width else line[: width - 1] + "…"

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.live and not self.quiet and (force or now - self._last_draw > REDRAW_SECONDS):
            self.stream.write(CLEAR_LINE + self._line())
            self.stream.flush()
            self._last_draw = now

    def _print(self, text: str) -> None:
        if self.quiet:
            return
        if self.live:
            self.stream.write(CLEAR_LINE)
        self.stream.write(text + "\n")
        self.stream.flush()

    def step(self, key: str, state: str) -> None:
        """A new phase of a task: a line of its own without a terminal."""
        with self.lock:
            self.running[key] = state
            if not self.live:
                self._print(f"{key}: {state}")
            self._draw(force=True)

    def update(self, key: str, state: str) -> None:
        """A refresh within a phase (counts, the item at hand): only a terminal shows it."""
        with self.lock:
            self.running[key] = state
            self._draw()

    def finish(self, key: str, text: str) -> None:
        """The task is over: `text` stays printed, and the task leaves the live line."""
        with self.lock:
            self.running.pop(key, None)
            self._print(text)
            self._draw(force=True)

    def close(self) -> None:
        if self.live and not self.quiet:
            self.stream.write(CLEAR_LINE)
            self.stream.flush()


def _cells(rows: Sequence[Sequence[object]]) -> list[list[str]]:
    return [[str(c) for c in row] for row in rows]


def text_table(
    rows: Sequence[Sequence[object]], align: str = "", indent: str = "", overflow: Mapping[int, int] | None = None
) -> str:
    """Columns padded to their widest cell, two spaces apart; `align` is one letter per column (l, r), default left.
    `overflow` maps a column to the longest cell that still sets its width: a longer one (an error, a reason) runs
    past its column instead of widening the whole table."""
    cells = _cells(rows)
    limits = overflow or {}
    columns = max((len(r) for r in cells), default=0)
    widths = [
        max((len(r[i]) for r in cells if i < len(r) and len(r[i]) <= limits.get(i, len(r[i]))), default=0)
        for i in range(columns)
    ]
    lines = []
    for row in cells:
        padded = [c.rjust(widths[i]) if align[i : i + 1] == "r" else c.ljust(widths[i]) for i, c in enumerate(row)]
        lines.append((indent + "  ".join(padded)).rstrip())
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]], align: str = "") -> str:
    """A GitHub markdown table; `align` is one letter per column (l, r), default left."""
    marks = ["---:" if align[i : i + 1] == "r" else ":---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in _cells(rows)]
    return "\n".join(lines)
