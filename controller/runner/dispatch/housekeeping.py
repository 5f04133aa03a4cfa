"""Uploads bounded for good: removed when their run ends, counted until they are gone, swept.

An uploaded target or a check's parsers live under ``runs/uploads/<id>/`` while the run needs
them. Whoever ends a run removes its upload at once (the worker when the run finishes, the API
when it cancels a queued run); the store counts it against its owner's quotas until
:func:`remove_upload` has removed it and said so (``upload_removed``). The sweeper, every
``SBX_SERVICE__SWEEP_SECONDS`` on every replica, removes what a crash left behind: the uploads
of ended runs, folders no run holds (older than :data:`ORPHAN_SECONDS`, so a submission being
accepted right now keeps its folder), and idempotency keys past their time.
"""

from __future__ import annotations

import os
import shutil
import time

import structlog

from controller.platform.uploads import UPLOADS, upload_dir
from controller.platform.settings import Settings
from controller.platform.store import RunStore, StoreError

log = structlog.get_logger("sandloop.service")
#: A folder under uploads/ that no run holds is an orphan once it is this old.
ORPHAN_SECONDS = 600.0


def remove_upload(settings: Settings, store: RunStore, run_id: str) -> bool:
    """Remove the run's upload and tell the store; False if it could not be removed (tried again later)."""
    folder = upload_dir(settings, run_id)
    shutil.rmtree(folder, ignore_errors=True)
    if folder.exists():
        log.warning("service.upload_not_removed", run_id=run_id)
        return False
    try:
        store.upload_removed(run_id)
    except StoreError as exc:
        log.error("service.upload_release_failed", run_id=run_id, error=exc.one_line())
        return False
    return True


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
