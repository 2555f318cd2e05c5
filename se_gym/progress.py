"""Progress bars that suit where they are written.

On a terminal: a tqdm bar.  Anywhere else (a log file, a pipe, CI): no carriage returns and no
escape codes, just one plain line when the work starts, one every ``every_pct`` percent or
``every_s`` seconds (whichever comes first), and one at the end.  A long demo's log then stays a
few kilobytes instead of half a megabyte of redrawn bars.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

ENV_FORCE = "SE_GYM_PROGRESS"  # "tty": always tqdm, "lines": always plain lines, "off": nothing


def _mode(stream: TextIO) -> str:
    forced = os.environ.get(ENV_FORCE, "").strip().lower()
    if forced in ("tty", "lines", "off"):
        return forced
    try:
        return "tty" if stream.isatty() else "lines"
    except (AttributeError, ValueError):  # closed or odd streams
        return "lines"


class LineBar:
    """A tqdm-like bar (update/close/set_postfix/context manager) that writes plain lines.

    Args:
        total: the count at completion (None: unknown).
        desc: the text before the count.
        unit: what is counted.
        initial: the count to start from.
        stream: where lines go (default stderr).
        every_pct: write a line each time this much more of ``total`` is done.
        every_s: and at least this often, in seconds, while work goes on.
        disable: write nothing.
        iterable: what iterating the bar yields (each item counts one).
    """

    def __init__(self, total: int | None = None, desc: str = "", unit: str = "it", initial: int = 0,
                 stream: TextIO | None = None, every_pct: float = 10.0, every_s: float = 30.0, disable: bool = False,
                 iterable: Any = None):
        self.iterable = iterable
        self._lock = threading.Lock()  # update() may come from worker threads (done callbacks)
        self.total, self.desc, self.unit, self.n = total, desc, unit, initial
        self.stream = stream if stream is not None else sys.stderr
        self.every_pct, self.every_s, self.disable = every_pct, every_s, disable
        self.postfix = ""
        self._t0 = self._last_t = time.monotonic()
        self._last_pct = -1.0
        self._last_n = None
        self._closed = False
        if not disable:
            self._write(start=True)

    def _line(self) -> str:
        elapsed = time.monotonic() - self._t0
        if self.total:
            pct = 100.0 * self.n / self.total
            head = f"{self.desc}: {self.n}/{self.total} {self.unit} ({pct:.0f}%)"
        else:
            head = f"{self.desc}: {self.n} {self.unit}"
        tail = f" {elapsed:.0f}s"
        if self.n and elapsed > 0:
            tail += f", {self.n / elapsed:.3g} {self.unit}/s"
        return head + tail + (f" [{self.postfix}]" if self.postfix else "")

    def _write(self, start: bool = False) -> None:
        try:
            self.stream.write(self._line() + "\n")
            self.stream.flush()
        except (ValueError, OSError):  # the stream went away: progress is never worth a crash
            self.disable = True
        self._last_t = time.monotonic()
        self._last_n = self.n
        if self.total:
            self._last_pct = 100.0 * self.n / self.total

    def update(self, n: int = 1) -> None:
        """Count ``n`` more; write a line when a step of ``every_pct`` or ``every_s`` has passed.

        Args:
            n: how many more are done.
        """
        with self._lock:
            self.n += n
            if self.disable or self._closed:
                return
            now = time.monotonic()
            due_pct = bool(self.total) and 100.0 * self.n / self.total >= self._last_pct + self.every_pct
            if due_pct or now - self._last_t >= self.every_s:
                self._write()

    def set_postfix(self, ordered_dict: Any = None, refresh: bool = True, **kwargs: Any) -> None:
        """Show ``key=value`` pairs after the count, as tqdm does.

        Args:
            ordered_dict: pairs to show.
            refresh: ignored (tqdm's signature).
            kwargs: more pairs.
        """
        items = dict(ordered_dict or {}, **kwargs)
        self.postfix = ", ".join(f"{k}={v}" for k, v in items.items())

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Show ``s`` after the count.

        Args:
            s: the text.
            refresh: ignored (tqdm's signature).
        """
        self.postfix = s

    def set_description(self, desc: str, refresh: bool = True) -> None:
        """Change the text before the count.

        Args:
            desc: the new text.
            refresh: ignored (tqdm's signature).
        """
        self.desc = desc

    def refresh(self) -> None:
        """Nothing to redraw (tqdm's method; lines are written as they come)."""
        pass

    def close(self) -> None:
        """Write the last count (once) and stop; safe to call again."""
        if self._closed:
            return
        self._closed = True
        if not self.disable and self.n != self._last_n:
            self._write()

    def __enter__(self) -> "LineBar":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self):
        if self.iterable is None:
            raise TypeError("this bar has no iterable; drive it with update()")
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()


def bar(iterable: Any = None, desc: str = "", total: int | None = None, unit: str = "it", disable: bool | None = False,
        initial: int = 0, stream: TextIO | None = None, **tqdm_kwargs: Any):
    """A progress bar (tqdm's signature): tqdm on a terminal, :class:`LineBar` elsewhere.

    ``disable=None`` means what it means to tqdm: a bar only on a terminal.

    Args:
        iterable: what to iterate with progress (its length is the total when it has one).
        desc: the text before the count.
        total: the count at completion.
        unit: what is counted.
        disable: no bar (None: a bar only on a terminal).
        initial: the count to start from.
        stream: where the bar goes (default stderr).
        tqdm_kwargs: more of tqdm's options (used only on a terminal).

    Returns:
        A tqdm bar or a :class:`LineBar`.
    """
    stream = stream if stream is not None else sys.stderr
    mode = _mode(stream)
    if mode == "off" or (disable is None and mode != "tty"):
        disable = True
    if total is None and iterable is not None:
        try:
            total = len(iterable)
        except TypeError:
            total = None
    if mode == "tty":
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, unit=unit, disable=bool(disable), initial=initial, file=stream, **tqdm_kwargs)
    return LineBar(total=total, desc=desc, unit=unit, initial=initial, stream=stream, disable=bool(disable), iterable=iterable)


__all__ = ["bar", "LineBar", "ENV_FORCE"]
