"""Statement summaries kept by content, so that a run of a statement already read skips the
sandbox that reads it (issue 23: the warm run of the same target stays as fast as before).

The key is a hash of everything the summary depends on: the PDF's bytes, the probe's and the
OCR module's source, the caps and the image tag. The value is the raw ``result.json`` the
sandbox returned, bounded as it was; a hit is decoded again with the same bounded decoder, so
caching grants no trust. Only summaries that decoded are kept (never a refusal); the newest
:data:`KEEP` are kept, and any failure to read or write the cache just means reading again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from agents.ports.artefacts import write_atomic

KEEP = 64


@dataclass(frozen=True)
class ScanCache:
    """A folder of summaries, ``<key>.json`` each."""

    folder: Path
    max_bytes: int

    @staticmethod
    def key(*parts: bytes) -> str:
        digest = hashlib.sha256()
        for part in parts:
            digest.update(len(part).to_bytes(8, "big") + part)
        return digest.hexdigest()

    def get(self, key: str) -> bytes | None:
        """The summary kept under ``key``, or None (absent, too big, unreadable)."""
        path = self.folder / f"{key}.json"
        try:
            if path.stat().st_size > self.max_bytes:
                return None
            return path.read_bytes()
        except OSError:
            return None

    def put(self, key: str, raw: bytes) -> None:
        """Keep ``raw`` under ``key`` and drop the oldest beyond :data:`KEEP`."""
        try:
            write_atomic(self.folder / f"{key}.json", raw)
            kept = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in kept[KEEP:]:
                old.unlink(missing_ok=True)
        except OSError:
            return
