"""The progress lines a live page renders itself, from the run's journal, and the id its stream
starts after.

The store journals a run's events numbered without gaps (``line``, ``node_started``, ``node``,
``status``, …; :mod:`controller.entry.service.events`). A page of a run that is still going reads
the journal up to its newest event N, renders its ``line`` events (the last :data:`WINDOW`, each
numbered by its place among the lines, which is its line in ``console.txt``), and names its
stream ``?after=N``: the stream sends exactly the events after N, so nothing is lost or shown
twice, and a browser that reconnects sends ``Last-Event-ID`` for the same. A run that has ended
reads ``console.txt`` instead (:mod:`controller.entry.console.views.lines`), paged.
"""

from __future__ import annotations

from controller.entry.console.views.lines import NODE_OF, WINDOW, Line, Window
from controller.entry.service.events import BATCH
from controller.platform.store import RunStore

#: A journal holds at most this many events (the worker's bound), so reading it whole is bounded.
MAX_READ = 25_000


def journal_lines(store: RunStore, run_id: str, upto: int) -> list[str]:
    """The texts of the run's ``line`` events numbered up to ``upto``."""
    texts: list[str] = []
    after = 0
    while after < upto and after < MAX_READ:
        batch = store.events(run_id, after=after, limit=BATCH)
        if not batch:
            break
        texts += [str(e.data.get("text", "")) for e in batch if e.kind == "line" and e.seq <= upto]
        after = batch[-1].seq
    return texts


def backlog(store: RunStore, run_id: str, upto: int, size: int = WINDOW) -> Window:
    """The last ``size`` lines of the journal up to event ``upto``, as a window of the run's lines."""
    texts = journal_lines(store, run_id, upto)
    first = max(1, len(texts) - size + 1)
    lines = tuple(Line(first + i, text, m.group(1) if (m := NODE_OF.match(text)) else "")
                  for i, text in enumerate(texts[first - 1:]))
    return Window(lines, first, len(texts), size)
