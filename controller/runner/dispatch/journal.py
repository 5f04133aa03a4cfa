"""What a worker writes to a run's journal while its process runs: its lines and its nodes.

The child's stdout is copied line by line, bounded, to ``console.txt`` (the run's transcript,
an artefact) and journaled as ``line`` events; its structured log, ``events.jsonl``, is read
as it grows (on every line and every :data:`TICK_SECONDS` in between, so that a node that
starts while nothing is printed shows at once) and each ``node.started`` / ``node.finished``
record is journaled as a ``node_started`` / ``node`` event. One lock orders the two, so a
node's end (logged before its progress line is printed) comes before that line.

Lines leave the service's own folders out (a server's paths are nobody's business: the
uploads folder goes, the runs, data and parsers folders become ``runs/``, ``data/`` and
``custom_parsers/``). A run journals at most :data:`MAX_EVENTS` events; after that one line
says the rest was left out (they are still in console.txt). A store that fails to take an
event is logged once and the run goes on: its lines are in console.txt either way.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import structlog

from agents.ports.replies import PendingQuestion
from controller.platform.observability.recorder import EVENTS_FILE
from controller.platform.settings import Settings
from controller.platform.store import RunStore, StoreError

log = structlog.get_logger("sandloop.service")
#: Most events one run journals (a check of many parsers prints a few lines each).
MAX_EVENTS = 20_000
TICK_SECONDS = 0.05
#: Most bytes of events.jsonl read per look.
READ_CHUNK = 1024 * 1024
Entry = tuple[str, dict[str, Any]]

CONSOLE_FILE = "console.txt"
#: Longest line kept; the rest of a longer one is dropped (a hostile parser's message).
MAX_LINE = 64 * 1024


def node_event(line: str) -> tuple[str, dict[str, Any]] | None:
    """The journal entry of one events.jsonl record, if it is a node's start or end."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("event") not in ("node.started", "node.finished"):
        return None
    node, attempt = str(record.get("node", ""))[:64], _int(record.get("attempt"))
    if record["event"] == "node.started":
        return "node_started", {"node": node, "attempt": attempt}
    return "node", {"node": node, "attempt": attempt, "outcome": str(record.get("outcome", ""))[:64],
                    "seconds": _float(record.get("duration_seconds")), "detail": str(record.get("detail", ""))[:500]}


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def question_event(run_id: str, pending: PendingQuestion) -> dict[str, Any]:
    """The ``question`` event: what a waiting run asks, and where the reply goes."""
    return {"id": run_id, "turn": pending.turn, "question": pending.question, "reply": f"/v1/runs/{run_id}/input"}


class Tail:
    """Complete lines appended to a file since the last read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self._partial = b""

    def read(self) -> list[str]:
        """The new complete lines (decoded, bounded)."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read(READ_CHUNK)
        except OSError:
            return []
        self.offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        if len(self._partial) > MAX_LINE:
            self._partial = self._partial[:MAX_LINE]
        return [line[:MAX_LINE].decode("utf-8", "replace") for line in lines]


class Scrubber:
    """Replace the service's own folders in text a client will see (issue 42: no server path in
    any event or artefact). A folder is replaced where it is followed by ``/`` and where it stands
    alone (``"data_dir": "/srv/runs/uploads/<id>"``), never inside a longer name."""

    def __init__(self, replacements: Sequence[tuple[str, str]]) -> None:
        # Longest first: the uploads folder lies inside the runs folder.
        self._pairs = sorted((pair for pair in replacements if pair[0]), key=lambda p: -len(p[0]))
        bare = [(old.rstrip("/"), new.rstrip("/")) for old, new in self._pairs if old.rstrip("/")]
        self._bare = dict(bare)
        self._bare_pattern = re.compile("|".join(re.escape(old) for old, _ in bare) + r"(?![\w.-])") if bare else None

    @classmethod
    def for_service(cls, settings: Settings, hidden: str | None = None, upload: Path | None = None) -> Scrubber:
        """The service's folders; ``hidden`` (a check's uploads prefix) left out entirely and
        ``upload`` (an uploaded run's target folder's parent) shown as ``data/``."""
        pairs = [(hidden or "", "")]
        if upload is not None:
            pairs += [(f"{upload.resolve()}/", "data/"), (f"{upload}/", "data/")]
        for folder, shown in ((settings.runs_dir, "runs/"), (settings.data_dir, "data/"),
                              (settings.parsers_dir, "custom_parsers/")):
            pairs += [(f"{folder.resolve()}/", shown), (f"{folder}/", shown)]
        return cls(pairs)

    def text(self, value: str) -> str:
        """``value`` without the service's folders."""
        for old, new in self._pairs:
            value = value.replace(old, new)
        if self._bare_pattern is not None:
            value = self._bare_pattern.sub(lambda found: self._bare[found.group(0)] or ".", value)
        return value

    def tree(self, value: Any) -> Any:
        """Every string in a JSON-like ``value`` scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.tree(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.tree(item) for item in value]
        return value


class RunJournal:
    """``with RunJournal(...) as journal: journal.copy(child.stdout)`` (see the module docstring)."""

    def __init__(self, store: RunStore, run_id: str, run_dir: Path, *, holder: str, journaled: int,
                 notify: Callable[[], None], scrub: Scrubber) -> None:
        self._store, self._run_id, self._holder, self._notify, self._scrub = store, run_id, holder, notify, scrub
        self._console = (run_dir / CONSOLE_FILE).open("a", encoding="utf-8")
        self._nodes = Tail(run_dir / EVENTS_FILE)
        self._lock = threading.Lock()
        self._room = MAX_EVENTS - journaled
        self._failed = False
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name=f"sandloop-journal-{run_id[-8:]}", daemon=True)

    def __enter__(self) -> RunJournal:
        self._nodes.offset = _size(self._nodes.path)  # a resumed run's earlier nodes are journaled already
        self._ticker.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._ticker.join(5.0)
        with self._lock:
            self._append(self._node_entries())
        self._console.close()

    def copy(self, stream: Iterable[str] | None) -> None:
        """Copy the child's stdout until it closes."""
        for line in stream or ():
            line = self._scrub.text(line if len(line) <= MAX_LINE else line[:MAX_LINE] + "\n")
            self._console.write(line)
            self._console.flush()
            with self._lock:
                self._append([*self._node_entries(), ("line", {"text": line.rstrip("\n")})])

    def _tick(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            with self._lock:
                self._append(self._node_entries())

    def _node_entries(self) -> list[Entry]:
        # A node's detail may name a file under the runs folder (``save``): scrubbed like the lines.
        return [(kind, self._scrub.tree(data)) for text in self._nodes.read()
                if (entry := node_event(text)) is not None for kind, data in (entry,)]

    def _append(self, entries: list[Entry]) -> None:
        if not entries or self._room <= 0:
            return
        if len(entries) >= self._room:
            entries = [*entries[:self._room - 1],
                       ("line", {"text": f"(a run journals at most {MAX_EVENTS} events: "
                                         f"the rest are in {CONSOLE_FILE})"})]
        self._room -= len(entries)
        try:
            self._store.append_events(self._run_id, entries, holder=self._holder)
        except StoreError as exc:
            if not self._failed:
                log.error("service.journal_failed", run_id=self._run_id, error=exc.one_line())
            self._failed = True
            return
        self._notify()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0

