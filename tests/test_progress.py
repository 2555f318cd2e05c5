"""Progress off a terminal: a few plain lines, no carriage returns or escape codes (a demo's log was
562 KB of redrawn bars); on a terminal, tqdm."""
from __future__ import annotations

import io
import threading

from se_gym.progress import LineBar, bar


class Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_a_line_every_tenth_and_nothing_else(monkeypatch):
    monkeypatch.delenv("SE_GYM_PROGRESS", raising=False)
    out = Pipe()
    b = bar(total=10_000, desc="sft", unit="step", stream=out)
    assert isinstance(b, LineBar)
    for _ in range(10_000):
        b.update(1)
    b.close()
    text = out.getvalue()
    lines = text.splitlines()
    assert len(lines) == 11 and lines[0].startswith("sft: 0/10000 step (0%)") and "10000/10000" in lines[-1]
    assert "\r" not in text and "\x1b" not in text and len(text) < 1000


def test_iterating_and_threads_and_disable_none(monkeypatch):
    monkeypatch.delenv("SE_GYM_PROGRESS", raising=False)
    out = Pipe()
    assert sum(bar(range(50), desc="it", stream=out)) == sum(range(50))
    assert out.getvalue().splitlines()[-1].startswith("it: 50/50")
    b = bar(total=400, desc="t", stream=out)
    threads = [threading.Thread(target=lambda: [b.update(1) for _ in range(100)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    b.close()
    assert b.n == 400
    quiet = Pipe()
    bar(total=5, desc="x", stream=quiet, disable=None).close()  # tqdm's None: only on a terminal
    assert quiet.getvalue() == ""


def test_a_terminal_gets_tqdm(monkeypatch):
    monkeypatch.delenv("SE_GYM_PROGRESS", raising=False)
    b = bar(total=3, desc="x", stream=Tty())
    assert type(b).__name__ != "LineBar" and hasattr(b, "update")
    b.close()
