"""What an ended run keeps of its upload (issue 43): the pages of an ended check or uploaded-target
run read its code and expected frame after the upload is removed, and the store counts those bytes
against the owner's upload quota until Forget.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.platform.settings import Settings
from controller.platform.store import NewRun, QuotaExceeded, open_store
from controller.platform.uploads import kept_dir, upload_dir
from controller.runner.dispatch.housekeeping import keep, remove_kept, remove_upload

PARSER = "def parse(pdf_path):\n    return None\n"


def class_upload(upload: Path) -> None:
    """A check against an uploaded target of a class zip (two students) and one parser file."""
    for student in ("alice", "bob"):
        folder = upload / "_submissions" / "class" / student
        folder.mkdir(parents=True)
        (folder / "icici_parser.py").write_text(PARSER + f"# {student}\n")
        (folder / "notes.txt").write_text("not code")
    (upload / "_submissions" / "class" / "alice" / "__pycache__").mkdir()
    (upload / "_submissions" / "class" / "alice" / "__pycache__" / "x.py").write_text("cache")
    (upload / "_submissions" / "one_parser.py").write_text(PARSER)
    (upload / "mine").mkdir()
    (upload / "mine" / "statement.pdf").write_bytes(b"%PDF-1.4 big")
    (upload / "mine" / "result.csv").write_text("Date,Balance\n01-01-2024,1.0\n")


def files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


class TestKeep:
    def test_the_code_checked_and_the_expected_frame_are_kept_and_nothing_else(self, tmp_path: Path):
        """Every .py file a check was given (not caches) and result.csv; not the statement or other files."""
        upload, run_dir = tmp_path / "uploads" / "r1", tmp_path / "r1"
        class_upload(upload)
        run_dir.mkdir()
        kept = keep(upload, run_dir, 1 << 20)
        assert files(run_dir / "kept") == ["_submissions/class/alice/icici_parser.py",
                                           "_submissions/class/bob/icici_parser.py",
                                           "_submissions/one_parser.py", "mine/result.csv"]
        assert kept == sum(p.stat().st_size for p in (run_dir / "kept").rglob("*") if p.is_file())
        assert keep(upload, run_dir, 1 << 20) == kept  # again (a removal tried again): the same

    def test_a_link_is_never_followed_and_the_bound_holds(self, tmp_path: Path):
        upload, run_dir = tmp_path / "uploads" / "r1", tmp_path / "r1"
        (upload / "_submissions").mkdir(parents=True)
        secret = tmp_path / "secret.py"
        secret.write_text("SECRET = 1\n")
        os.symlink(secret, upload / "_submissions" / "link.py")
        os.symlink(tmp_path, upload / "_submissions" / "folder")
        (upload / "_submissions" / "big.py").write_text("x" * 500)
        (upload / "_submissions" / "small.py").write_text("y" * 10)
        run_dir.mkdir()
        assert keep(upload, run_dir, 100) == 10
        assert files(run_dir / "kept") == ["_submissions/small.py"]

    def test_a_copy_that_fails_keeps_nothing_and_raises_nothing(self, tmp_path: Path):
        """The upload is removed all the same (the pages then say it was not kept)."""
        upload, run_dir = tmp_path / "uploads" / "r1", tmp_path / "r1"
        class_upload(upload)
        run_dir.mkdir()
        (run_dir / "kept").write_text("in the way")  # the rename onto it fails
        assert keep(upload, run_dir, 1 << 20) == 0
        assert sorted(p.name for p in run_dir.iterdir()) == ["kept"]  # no partial copy left

    def test_a_run_that_never_started_keeps_nothing(self, tmp_path: Path):
        upload = tmp_path / "uploads" / "r1"
        class_upload(upload)
        assert keep(upload, tmp_path / "r1", 1 << 20) == 0 and not (tmp_path / "r1").exists()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, runs_dir=tmp_path / "runs")  # type: ignore[call-arg]


class TestRemoveUpload:
    def test_the_kept_bytes_count_against_the_quota_until_forgotten(self, settings: Settings):
        """The upload goes, its kept files stay and are counted; Forget removes both row and files."""
        store = open_store(settings)
        store.submit(NewRun("r1", "alice", "bank_parser", "mine", upload_bytes=10), quota=9, queue_limit=9)
        class_upload(upload_dir(settings, "r1"))
        (settings.runs_dir / "r1").mkdir()
        store.cancel("r1")
        assert remove_upload(settings, store, "r1")
        assert not upload_dir(settings, "r1").exists()
        kept = sum(p.stat().st_size for p in kept_dir(settings, "r1").rglob("*") if p.is_file())
        assert kept > 0
        with pytest.raises(QuotaExceeded, match="uploads would hold"):
            store.submit(NewRun("r2", "alice", "bank_parser", "mine", upload_bytes=1), quota=9, queue_limit=9,
                         upload_quota_bytes=kept)
        remove_kept(settings, store.forget(target="mine", agent=None))
        assert not kept_dir(settings, "r1").exists() and (settings.runs_dir / "r1").is_dir()
        store.submit(NewRun("r2", "alice", "bank_parser", "mine", upload_bytes=1), quota=9, queue_limit=9,
                     upload_quota_bytes=kept)
