"""Progress: the lines a person sees, and what happens when nobody reads them any more."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from typing import TextIO

import pytest

from controller.platform.progress import OutputClosed, Progress


@contextlib.contextmanager
def reader_gone() -> Iterator[TextIO]:
    """A real pipe's writing end whose reader has already closed (a service killed with -9)."""
    read, write = os.pipe()
    os.close(read)
    stream = os.fdopen(write, "w")
    try:
        yield stream
    finally:
        with contextlib.suppress(BrokenPipeError):  # the line still buffered cannot be flushed either
            stream.close()


def test_lines_are_written_and_flushed():
    out = io.StringIO()
    progress = Progress(out)
    progress.say("run r1: icici")
    progress.step(1, "execute", "ok", 0.5, "exit 0")
    assert out.getvalue().splitlines() == ["==> run r1: icici",
                                           "  [attempt 1] execute   ok                 0.50s  exit 0"]


def test_a_pipe_whose_reader_went_away_raises_output_closed_not_an_exception():
    with reader_gone() as stream, pytest.raises(OutputClosed) as raised:
        Progress(stream).say("nobody reads this")
    assert not isinstance(raised.value, Exception)  # no `except Exception` may take it for a failure
    assert "--resume" not in raised.value.one_line()
    assert "--resume r1" in OutputClosed("r1").one_line()
