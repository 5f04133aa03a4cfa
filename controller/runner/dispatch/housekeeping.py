"""Uploads bounded for good: removed when their run ends, counted until they are gone, swept.

An uploaded target or a check's parsers live under ``runs/uploads/<id>/`` while the run needs
them. Whoever ends a run removes its upload at once (the worker when the run finishes, the API
when it cancels a queued run); the store counts it against its owner's quotas until
:func:`remove_upload` has removed it and said so (``upload_removed``). Before removing it,
:func:`keep` copies what the run's pages read after its end into ``runs/<id>/kept/`` (same
layout): an uploaded target's expected ``result.csv`` and the ``.py`` files a check checked
(its parsers, every submission of a class zip); the store counts those bytes against the
owner's upload quota until Forget removes the run (:func:`remove_kept`). The sweeper, every
``SBX_SERVICE__SWEEP_SECONDS`` on every replica, removes what a crash left behind: the uploads
of ended runs, folders no run holds (older than :data:`ORPHAN_SECONDS`, so a submission being
accepted right now keeps its folder), and idempotency keys past their time.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import structlog

from controller.platform.settings import Settings
from controller.platform.store import RunStore, StoreError
from controller.platform.uploads import KEPT, UPLOADS, kept_dir, regular_size, tree_bytes, upload_dir
from controller.runner.dispatch.child import SUBMISSIONS

log = structlog.get_logger("sandloop.service")
#: A folder under uploads/ that no run holds is an orphan once it is this old.
ORPHAN_SECONDS = 600.0
#: The expected frame of an uploaded target, kept for the attempt pages' diff.
EXPECTED = "result.csv"
#: Folders never kept from a check's upload (caches, environments, version control).
_SKIPPED = {"__pycache__", "node_modules", "site-packages", "venv", "env"}


def remove_upload(settings: Settings, store: RunStore, run_id: str) -> bool:
    """Remove the run's upload and tell the store; False if it could not be removed (tried again later)."""
    folder = upload_dir(settings, run_id)
    kept = keep(folder, settings.runs_dir / run_id, _kept_bound(settings))
    shutil.rmtree(folder, ignore_errors=True)
    if folder.exists():
        log.warning("service.upload_not_removed", run_id=run_id)
        return False
    try:
        store.upload_removed(run_id, kept_bytes=kept)
    except StoreError as exc:
        log.error("service.upload_release_failed", run_id=run_id, error=exc.one_line())
        return False
    return True


def keep(upload: Path, run_dir: Path, bound: int) -> int:
    """Copy what the run's pages read after its end from ``upload`` into ``run_dir/kept/``; its bytes.

    Nothing is kept for a run that never started (no run folder) or from an upload that is gone;
    a kept folder made already (a removal tried again) is kept as it is. Regular files only (no
    link is followed), at most ``bound`` bytes in all: the upload was within the same bounds.
    """
    target = run_dir / KEPT
    if not target.is_dir() and run_dir.is_dir() and upload.is_dir():
        staging = run_dir / f".{KEPT}.partial"
        try:
            _copy_wanted(upload, staging, bound)
            if staging.is_dir():
                staging.rename(target)
        except OSError as exc:  # another replica keeping it at once, a full disk: the pages say so
            log.warning("service.upload_not_kept", run_id=run_dir.name, error=type(exc).__name__)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return tree_bytes(target)


def _copy_wanted(upload: Path, staging: Path, bound: int) -> None:
    shutil.rmtree(staging, ignore_errors=True)
    left = bound
    for path in _wanted(upload):
        size = regular_size(path)
        if size is None or size > left:
            continue
        copy = staging / path.relative_to(upload)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy, follow_symlinks=False)
        left -= size


def remove_kept(settings: Settings, run_ids: list[str]) -> None:
    """Remove what the (forgotten) runs kept of their uploads."""
    for run_id in run_ids:
        shutil.rmtree(kept_dir(settings, run_id), ignore_errors=True)


def _kept_bound(settings: Settings) -> int:
    service = settings.service
    return service.upload_bytes + service.zip_total_bytes


def _wanted(upload: Path) -> Iterator[Path]:
    """``<target>/result.csv`` of an uploaded target; every ``.py`` file under ``_submissions/``."""
    for entry in sorted(upload.iterdir()):
        if entry.name == SUBMISSIONS:
            yield from _python_files(entry)
        elif not entry.name.startswith(".") and entry.is_dir() and not entry.is_symlink():
            yield entry / EXPECTED


def _python_files(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED)
        yield from (Path(folder) / name for name in sorted(files) if name.endswith(".py"))


def sweep(settings: Settings, store: RunStore, now: float | None = None) -> int:
    """Remove ended runs' uploads, orphaned upload folders and old idempotency keys; how many uploads."""
    now = time.time() if now is None else now
    removed = sum(remove_upload(settings, store, run_id) for run_id in store.held_uploads(ended_only=True))
    removed += _orphans(settings, set(store.held_uploads(ended_only=False)), now)
    store.forget_keys(older_than=now - settings.service.idempotency_seconds)
    if removed:
        log.info("service.uploads_swept", removed=removed)
    return removed


def _orphans(settings: Settings, held: set[str], now: float) -> int:
    root = settings.runs_dir / UPLOADS
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0
    removed = 0
    for entry in entries:
        if entry.name in held or not _older(entry, now - ORPHAN_SECONDS):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += not os.path.lexists(entry.path)
    return removed


def _older(entry: os.DirEntry[str], than: float) -> bool:
    try:
        return entry.stat(follow_symlinks=False).st_mtime < than
    except OSError:
        return False
