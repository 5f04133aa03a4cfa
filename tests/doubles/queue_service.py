"""TEST DOUBLE: ``python -m controller serve`` whose runs are a shell one-liner, not an agent.

Everything else is the real service: its settings from the environment, the SQLite store,
the FastAPI app on uvicorn, the worker pool with its leases, takeovers and drain. Only each
run's child (``python -m controller run``, a second or more of CPU per run) is replaced by a
line of shell, so a load test of hundreds of runs on two cores measures the queue. The child
behaves like a run with a checkpoint: a fresh run writes ``run.json`` (what ``--resume``
needs) before it "works"; a run found with one is resumed. Each logs ``start ID`` or
``resume ID`` to ``$SBX_TEST_RAN_LOG``, so the test can tell a run done twice from a run
resumed once.

    python -m tests.doubles.queue_service PORT
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from controller.entry.service.server import run_service
from controller.platform.settings import load_settings
from controller.platform.store import RunRow, open_store
from controller.runner.dispatch import child

#: How long a fresh run "works", so that a kill in the middle of a load finds some running.
WORK_SECONDS = "0.3"


def command(row: RunRow, run_dir: Path) -> list[str]:
    """A shell line standing for the run (or its resume) of ``row``."""
    ran = os.environ["SBX_TEST_RAN_LOG"]
    if child.resumable(run_dir):
        return ["/bin/sh", "-c", 'echo "resume $0" >> "$1"; echo "==> resumed $0"', row.id, ran]
    script = f'echo "{{}}" > "$2/{child.RUN_RECORD}"; echo "start $0" >> "$1"; sleep {WORK_SECONDS}; echo "==> run $0"'
    return ["/bin/sh", "-c", script, row.id, ran, str(run_dir)]


def main() -> None:
    settings = load_settings()
    run_service(settings, open_store(settings), None, "127.0.0.1", int(sys.argv[1]), command=command)


if __name__ == "__main__":
    main()
