"""The sandbox spec refuses what must never reach a sandbox."""

from __future__ import annotations

import pytest

from agents.ports.sandbox import CapturedStream, SandboxResult, SandboxSpec


class TestSandboxSpec:
    @pytest.mark.parametrize("name", ["../x", "a/b", "/etc/passwd", "..", ""])
    def test_input_names_must_be_plain(self, name):
        """Inputs are plain file names, so nothing lands outside /work/in."""
        with pytest.raises(ValueError):
            SandboxSpec(image="i", command=("true",), inputs={name: b""})

    @pytest.mark.parametrize("key", ["OPENAI_API_KEY", "GITHUB_TOKEN", "db_password", "MY_SECRET"])
    def test_secret_looking_environment_is_refused(self, key):
        """Names that look like credentials never enter a sandbox."""
        with pytest.raises(ValueError, match="secret"):
            SandboxSpec(image="i", command=("true",), env={key: "x"})

    def test_a_command_is_required(self):
        """An empty command is a programming error."""
        with pytest.raises(ValueError):
            SandboxSpec(image="i", command=())


class TestSandboxResult:
    def _result(self, **kw):
        base = dict(exit_code=0, stdout=CapturedStream(b"", 0), stderr=CapturedStream(b"", 0),
                    timed_out=False, oom_killed=False, wall_seconds=1.0, files={})
        return SandboxResult(**{**base, **kw})

    def test_outcome_labels(self):
        """Timeout wins over OOM, which wins over the exit code."""
        assert self._result().outcome == "ok"
        assert self._result(exit_code=1).outcome == "nonzero_exit"
        assert self._result(oom_killed=True, exit_code=137).outcome == "oom"
        assert self._result(timed_out=True, oom_killed=True, exit_code=None).outcome == "timeout"

    def test_truncation_flag(self):
        """A stream that kept fewer bytes than were written says so."""
        assert CapturedStream(b"ab", 10).truncated
        assert not CapturedStream(b"ab", 2).truncated
