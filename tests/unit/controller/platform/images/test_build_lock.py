"""One builder at a time (build_lock.py): the second waits, says so, and finds the work done."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from controller.platform.images import wheelhouse
from controller.platform.images.build_lock import building, lock_path
from controller.platform.images.wheelhouse import COMPLETE_MARKER, WheelhouseSpec, ensure_wheelhouse


def test_lock_names_stay_in_the_locks_folder(tmp_path: Path):
    path = lock_path(tmp_path, "../../etc/sandloop/python-parser:0123")
    assert path.parent == tmp_path / "locks" and "/" not in path.name


def test_the_second_builder_waits_for_the_first(tmp_path: Path):
    path, said, order = tmp_path / "locks" / "x.lock", [], []
    first_holds, release = threading.Event(), threading.Event()

    def first() -> None:
        with building(path, said.append, "x"):
            first_holds.set()
            release.wait(10)
            order.append("first done")

    worker = threading.Thread(target=first)
    worker.start()
    first_holds.wait(10)
    threading.Timer(0.3, release.set).start()
    with building(path, said.append, "x"):
        order.append("second in")
    worker.join(10)
    assert order == ["first done", "second in"]
    assert said == ["waiting for another process that is building x"]


def test_a_wheelhouse_is_downloaded_once_by_two_builders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    downloads: list[Path] = []

    def download(_spec: WheelhouseSpec, folder: Path, _constraints: Path | None) -> None:
        downloads.append(folder)
        folder.mkdir(parents=True, exist_ok=True)
        threading.Event().wait(0.3)  # long enough for the other builder to find the lock taken
        (folder / COMPLETE_MARKER).touch()

    monkeypatch.setattr(wheelhouse, "_download", download)
    spec = WheelhouseSpec(("pandas==2.2.3",), "x86_64")
    threads = [threading.Thread(target=ensure_wheelhouse, args=(spec, tmp_path, None)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(downloads) == 1
