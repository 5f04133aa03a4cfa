"""Image tags follow their build context; wheelhouses pin the controller's own versions."""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path

from agents.ports.images import pin_requirements
from controller.platform.images.builder import ImageSpec, available_images, image_spec
from controller.platform.images.wheelhouse import WheelhouseSpec, engine_arch
from controller.platform.settings import PROJECT_ROOT, Settings


def spec_for(folder: Path) -> ImageSpec:
    return ImageSpec("python-parser", folder, "debian:bookworm-slim", "sandloop", ("pandas==3",))


class TestImageSpec:
    def test_tag_changes_with_the_dockerfile(self, tmp_path):
        """Editing the Dockerfile yields a new tag, so the image is rebuilt."""
        folder = tmp_path / "python-parser"
        shutil.copytree(PROJECT_ROOT / "sandbox_images" / "python-parser", folder)
        before = spec_for(folder).tag
        (folder / "Dockerfile").write_text((folder / "Dockerfile").read_text() + "\n# changed\n")
        assert spec_for(folder).tag != before
        assert before.startswith("sandloop/python-parser:")

    def test_tag_is_stable_for_the_same_content(self, tmp_path):
        """The same context gives the same tag (an existing image is reused)."""
        folder = tmp_path / "python-parser"
        shutil.copytree(PROJECT_ROOT / "sandbox_images" / "python-parser", folder)
        assert spec_for(folder).tag == spec_for(folder).tag

    def test_tag_changes_with_the_requirements(self, tmp_path):
        """Upgrading the controller's pandas changes the image tag too."""
        folder = PROJECT_ROOT / "sandbox_images" / "python-parser"
        other = ImageSpec("python-parser", folder, "debian:bookworm-slim", "sandloop", ("pandas==2",))
        assert other.tag != spec_for(folder).tag

    def test_the_repository_has_the_parser_image(self):
        """sandbox_images/python-parser is discovered as an image."""
        assert "python-parser" in available_images(Settings(_env_file=None))


class TestWheelhouse:
    def test_pandas_is_pinned_to_the_controllers_version(self):
        """The image gets exactly the pandas the controller compares with."""
        pins = pin_requirements(PROJECT_ROOT / "sandbox_images" / "python-parser" / "requirements.in")
        assert f"pandas=={metadata.version('pandas')}" in pins
        assert f"pdfplumber=={metadata.version('pdfplumber')}" in pins

    def test_image_spec_carries_the_pins(self):
        """image_spec reads requirements.in and pins it."""
        spec = image_spec("python-parser", Settings(_env_file=None))
        assert any(r.startswith("pandas==") for r in spec.requirements)

    def test_wheelhouse_key_depends_on_platform(self):
        """Different CPU architectures get different wheelhouses."""
        assert WheelhouseSpec(("pandas==3",), "x86_64").key != WheelhouseSpec(("pandas==3",), "aarch64").key
        assert engine_arch("amd64") == "x86_64" and engine_arch("arm64") == "aarch64"
