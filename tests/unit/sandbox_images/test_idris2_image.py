"""The idris2 image's build files, read as text (the image cannot be built here: no Idris2 source).

These pin what the issue asks of the Dockerfile: Idris2 0.8.0 from its release source with
Debian's chezscheme, a local archive accepted instead of the download, the archive's digest
checked, a non-root user, and the entrypoint's contract with the controller.
"""

from __future__ import annotations

import re

from agents.idris.typecheck import ENTRYPOINT, ENTRYPOINT_REFUSED
from controller.platform.settings import PROJECT_ROOT

IMAGE = PROJECT_ROOT / "sandbox_images" / "idris2"
DOCKERFILE = (IMAGE / "Dockerfile").read_text()
CHECK_MODULE = (IMAGE / "check-module").read_text()
STANDIN = PROJECT_ROOT / "tests" / "doubles" / "idris2_standin"


class TestDockerfile:
    def test_idris2_080_from_source_with_debians_chez(self):
        """The v0.8.0 tarball, its pinned SHA-256, bootstrapped with the chezscheme package."""
        assert "ARG IDRIS2_URL=https://github.com/idris-lang/Idris2/archive/refs/tags/v0.8.0.tar.gz" in DOCKERFILE
        assert re.search(r"^ARG IDRIS2_SHA256=[0-9a-f]{64}$", DOCKERFILE, re.M)
        assert "sha256sum -c" in DOCKERFILE
        assert "make bootstrap SCHEME=chezscheme" in DOCKERFILE and "chezscheme" in DOCKERFILE

    def test_a_local_archive_is_accepted(self):
        """The archive next to the Dockerfile is copied if present (optional wildcard) and used first."""
        assert "COPY Dockerfile idris2-0.8.0.tar.gz* /src/" in DOCKERFILE
        assert "if [ ! -f idris2-0.8.0.tar.gz ]" in DOCKERFILE

    def test_the_source_stage_comes_before_the_long_build(self):
        """Getting the source fails fast: its stage precedes the bootstrap."""
        assert DOCKERFILE.index("AS source") < DOCKERFILE.index("AS build") < DOCKERFILE.index("make bootstrap")

    def test_the_sandbox_runs_as_non_root_with_the_entrypoint(self):
        """User 10001, /work layout as every sandbox, the entrypoint at the path the controller uses."""
        final = DOCKERFILE.split("AS build")[1]
        assert "USER 10001:10001" in final and f"COPY check-module {ENTRYPOINT}" in final
        assert "chown 10001:10001 /work/out" in final

    def test_the_image_proves_itself_at_build_time(self):
        """A smoke test: a true proof must check, a false one must not."""
        assert "Domains/Smoke.idr" in DOCKERFILE and "a false proof type-checked" in DOCKERFILE


class TestEntrypoint:
    def test_it_checks_with_colour_off_and_stderr_folded(self):
        """`idris2 --no-color --check <Module/Path.idr> 2>&1`, from a staged source folder."""
        assert 'exec idris2 --no-color --check "$relative" 2>&1' in CHECK_MODULE
        assert "tr . /" in CHECK_MODULE and "/tmp/idris-src" in CHECK_MODULE

    def test_it_refuses_bad_arguments_with_the_agreed_status(self):
        """Bad arguments exit 125, which the controller reads as a broken image."""
        assert f"exit {ENTRYPOINT_REFUSED}" in CHECK_MODULE
        assert "^[A-Z][A-Za-z0-9_]*(\\.[A-Z][A-Za-z0-9_]*)*$" in CHECK_MODULE

    def test_the_stand_in_is_marked_as_a_test_double(self):
        """The stand-in says what it is, and replaces only idris2 (the entrypoint is the real one)."""
        assert "TEST DOUBLE" in (STANDIN / "Dockerfile").read_text()
        assert "TEST DOUBLE" in (STANDIN / "idris2").read_text()
        assert not (STANDIN / "check-module").exists()
