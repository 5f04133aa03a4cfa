"""Dates for --as-of and the environment image's content tag."""

from __future__ import annotations

import pytest

from agents.ports.environments import parse_as_of
from controller.platform.environments.image import EnvImageSpec, dockerfile


class TestAsOf:
    def test_a_date_is_passed_as_a_date(self):
        """YYYY-MM-DD goes to uv unchanged."""
        assert parse_as_of("2025-08-31") == "2025-08-31"

    def test_a_timestamp_becomes_utc(self):
        """A git commit date with an offset becomes a UTC timestamp."""
        assert parse_as_of("2025-08-31T10:00:00+05:30") == "2025-08-31T04:30:00Z"

    def test_garbage_is_refused(self):
        """Not a date: ValueError with the expected form."""
        with pytest.raises(ValueError, match="2025-08-31"):
            parse_as_of("last summer")


class TestEnvImageSpec:
    def test_equal_sets_share_a_tag(self):
        """The same base, pins and Debian packages give the same tag."""
        one = EnvImageSpec("sandloop/python-parser:abc", ("pandas==2.2.3",), (), "sandloop")
        two = EnvImageSpec("sandloop/python-parser:abc", ("pandas==2.2.3",), (), "sandloop")
        assert one.tag == two.tag and one.tag.startswith("sandloop/python-parser-env:")

    def test_any_difference_changes_the_tag(self):
        """A different pin, Debian package or base is a different image."""
        base = EnvImageSpec("sandloop/python-parser:abc", ("pandas==2.2.3",), (), "sandloop")
        others = [
            EnvImageSpec("sandloop/python-parser:abc", ("pandas==2.2.2",), (), "sandloop"),
            EnvImageSpec("sandloop/python-parser:abc", ("pandas==2.2.3",), ("ghostscript",), "sandloop"),
            EnvImageSpec("sandloop/python-parser:def", ("pandas==2.2.3",), (), "sandloop"),
        ]
        assert len({base.tag, *(o.tag for o in others)}) == 4

    def test_apt_only_when_debian_packages_are_declared(self):
        """No Debian packages, no apt-get (builds stay offline)."""
        assert "apt-get" not in dockerfile(())
        assert "install -y --no-install-recommends ghostscript" in dockerfile(("ghostscript",))

    def test_the_sandbox_user_is_restored(self):
        """The image ends as the unprivileged user, like its base."""
        assert dockerfile(()).rstrip().endswith("USER 10001:10001")
