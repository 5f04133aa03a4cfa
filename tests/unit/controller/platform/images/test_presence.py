"""Which sandbox images readiness waits for, and how a missing one is reported.

The engine is a test double here (``images.get`` answering from a set of tags); the real
engine is asked in tests/integration/service/test_readiness.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import docker.errors
import pytest
import requests

from agents.ports.errors import EngineUnavailable
from controller.platform.images.builder import image_spec
from controller.platform.images.idris import SOURCE_ARCHIVE, idris_image_spec
from controller.platform.images.presence import (
    BUILD_COMMAND,
    ImagesMissing,
    check_present,
    required_tags,
)
from controller.platform.settings import PROJECT_ROOT, Settings


class FakeImages:
    """``client.images`` of an engine holding ``tags`` (or failing with ``error``)."""

    def __init__(self, tags: set[str], error: Exception | None = None) -> None:
        self.tags, self.error, self.asked = tags, error, []

    def get(self, tag: str) -> object:
        self.asked.append(tag)
        if self.error is not None:
            raise self.error
        if tag not in self.tags:
            raise docker.errors.ImageNotFound(f"No such image: {tag}")
        return object()


class FakeClient:
    def __init__(self, tags: set[str], error: Exception | None = None) -> None:
        self.images = FakeImages(tags, error)


def settings_with_images(tmp_path: Path, *, idris_archive: bool) -> Settings:
    images = tmp_path / "sandbox_images"
    shutil.copytree(PROJECT_ROOT / "sandbox_images", images,
                    ignore=shutil.ignore_patterns("*.tar.gz", "__pycache__"))
    if idris_archive:
        (images / "idris2" / SOURCE_ARCHIVE).write_bytes(b"\x1f\x8b fake")
    return Settings(_env_file=None, images_dir=images)  # type: ignore[call-arg]


class TestRequiredTags:
    def test_content_tags_of_the_named_images_without_repeats(self, tmp_path: Path) -> None:
        """Each named image once, by its content tag."""
        settings = settings_with_images(tmp_path, idris_archive=False)
        tags = required_tags(["python-parser", "python-parser"], settings)
        assert tags == [image_spec("python-parser", settings).tag]

    def test_idris2_counts_only_with_its_source_archive_at_hand(self, tmp_path: Path) -> None:
        """Without the archive `images` cannot build idris2 here, so readiness does not wait for it;
        with it, idris2's own tag (which leaves the archive out) is required."""
        without = settings_with_images(tmp_path / "a", idris_archive=False)
        assert required_tags(["idris2", "python-parser"], without) == [image_spec("python-parser", without).tag]
        with_archive = settings_with_images(tmp_path / "b", idris_archive=True)
        assert required_tags(["idris2"], with_archive) == [idris_image_spec(with_archive).tag]
        assert idris_image_spec(with_archive).tag == idris_image_spec(without).tag


class TestCheckPresent:
    def test_every_image_present_passes(self) -> None:
        """All tags in the engine: no error, each asked once."""
        client = FakeClient({"sandloop/a:1", "sandloop/b:2"})
        check_present(client, ["sandloop/a:1", "sandloop/b:2"])  # type: ignore[arg-type]
        assert client.images.asked == ["sandloop/a:1", "sandloop/b:2"]

    def test_a_missing_image_is_named_with_the_command_that_builds_it(self) -> None:
        """One line: the missing tag (not the present one) and `python -m controller images`."""
        with pytest.raises(ImagesMissing) as caught:
            check_present(FakeClient({"sandloop/a:1"}), ["sandloop/a:1", "sandloop/b:2"])  # type: ignore[arg-type]
        line = caught.value.one_line()
        assert "sandloop/b:2" in line and "sandloop/a:1" not in line and BUILD_COMMAND in line
        assert "\n" not in line

    def test_an_engine_that_stops_answering_is_unavailable_not_a_crash(self) -> None:
        """A connection error while asking becomes EngineUnavailable (a PlatformError: /readyz says it)."""
        with pytest.raises(EngineUnavailable):
            check_present(FakeClient(set(), requests.exceptions.ConnectionError("gone")), ["x/y:1"])  # type: ignore[arg-type]
