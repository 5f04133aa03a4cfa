"""The idris2 image preflight: refuse in seconds, with one line, when the source is not at hand.

The build itself (20-40 minutes, needs the source) is not run by any test; the CLI's refusal
through the real engine is in tests/integration/agents/test_idris_loop.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import docker.errors
import pytest

from agents.ports.errors import ImageSourceMissing
from controller.platform.images.idris import (
    SOURCE_ARCHIVE,
    _source_note,
    ensure_idris_image,
    idris_image_spec,
    source_url,
)
from controller.platform.settings import PROJECT_ROOT, Settings

IMAGE_DIR = PROJECT_ROOT / "sandbox_images" / "idris2"


class NoImages:
    """TEST DOUBLE of a Docker client whose engine has no images (and must not be asked to build)."""

    class images:  # noqa: N801 - mirrors docker.DockerClient.images
        @staticmethod
        def get(tag: str) -> None:
            raise docker.errors.ImageNotFound(tag)


@pytest.fixture
def images_dir(tmp_path: Path) -> Path:
    """A copy of sandbox_images/idris2 without any archive."""
    shutil.copytree(IMAGE_DIR, tmp_path / "idris2", ignore=shutil.ignore_patterns("idris2-*.tar.gz"))
    return tmp_path


class TestPreflight:
    def test_no_archive_and_no_answer_is_one_clear_line(self, images_dir):
        """Exit 2; the line names the archive's place, the URL and `make images`."""
        settings = Settings(_env_file=None, images_dir=images_dir)  # type: ignore[call-arg]
        with pytest.raises(ImageSourceMissing) as caught:
            ensure_idris_image(NoImages(), settings, print, probe=lambda url: False)  # type: ignore[arg-type]
        line = caught.value.one_line()
        assert caught.value.exit_code == 2 and "\n" not in line
        assert f"idris2/{SOURCE_ARCHIVE}" in line and "make images" in line and "cannot be" in line
        assert "https://github.com/idris-lang/Idris2/archive/refs/tags/v0.8.0.tar.gz" in line

    def test_a_local_archive_is_used_without_probing(self, images_dir):
        """A gzip file next to the Dockerfile: build from it, no network question asked."""
        (images_dir / "idris2" / SOURCE_ARCHIVE).write_bytes(b"\x1f\x8b\x08\x00rest")
        note = _source_note(images_dir / "idris2", probe=lambda url: pytest.fail("probed the network"))
        assert "building it from" in note

    def test_an_archive_that_is_not_gzip_is_refused(self, images_dir):
        """A wrong file in the archive's place is named, not built from."""
        (images_dir / "idris2" / SOURCE_ARCHIVE).write_text("<html>404</html>")
        with pytest.raises(ImageSourceMissing, match="not a gzip archive"):
            _source_note(images_dir / "idris2", probe=lambda url: True)

    def test_a_reachable_url_builds_by_download(self, images_dir):
        """No archive but the URL answers: the build downloads it."""
        assert "downloading" in _source_note(images_dir / "idris2", probe=lambda url: True)


class TestTag:
    def test_the_archive_is_not_part_of_the_tag(self, images_dir):
        """Adding or removing the archive does not change the image's tag."""
        settings = Settings(_env_file=None, images_dir=images_dir)  # type: ignore[call-arg]
        before = idris_image_spec(settings).tag
        (images_dir / "idris2" / SOURCE_ARCHIVE).write_bytes(b"\x1f\x8b")
        assert idris_image_spec(settings).tag == before

    def test_the_dockerfile_is_part_of_the_tag(self, images_dir):
        """Editing the Dockerfile gives a new tag (and so a rebuild)."""
        settings = Settings(_env_file=None, images_dir=images_dir)  # type: ignore[call-arg]
        before = idris_image_spec(settings).tag
        dockerfile = images_dir / "idris2" / "Dockerfile"
        dockerfile.write_text(dockerfile.read_text() + "\n# edited\n")
        assert idris_image_spec(settings).tag != before and before.startswith("sandloop/idris2:")

    def test_the_url_is_read_from_the_dockerfile(self):
        """One source of truth: the preflight probes what the build would download."""
        assert source_url(IMAGE_DIR) == "https://github.com/idris-lang/Idris2/archive/refs/tags/v0.8.0.tar.gz"
