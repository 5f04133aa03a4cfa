"""The sandbox spec refuses what must never reach a sandbox."""

from __future__ import annotations

import pytest

from agents.ports.sandbox import (
    CapturedStream,
    SandboxLimits,
    SandboxResult,
    SandboxSpec,
    byte_size,
    limits_hit,
    naming_limits,
)


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


class TestLimitsHit:
    LIMITS = SandboxLimits(timeout_seconds=30, memory_mb=512, pids=128, output_bytes=1 << 20, collect_bytes=8 << 20)

    def _result(self, **kw):
        base = dict(exit_code=0, stdout=CapturedStream(b"", 0), stderr=CapturedStream(b"", 0),
                    timed_out=False, oom_killed=False, wall_seconds=1.0, files={})
        return SandboxResult(**{**base, **kw})

    def test_an_execution_within_its_limits_names_none(self):
        """No limit hit: nothing to name."""
        assert limits_hit(self._result(stdout=CapturedStream(b"ab", 2)), self.LIMITS) == {}

    def test_every_limit_hit_is_named_with_its_size_in_order(self):
        """Time, memory, processes, output (the cut streams and what they wrote), files."""
        hit = limits_hit(self._result(
            timed_out=True, oom_killed=True, pids_limited=True, truncated_files=("result.json",),
            stdout=CapturedStream(b"x", 2 << 30), stderr=CapturedStream(b"y", 1)), self.LIMITS)
        assert list(hit) == ["time", "memory", "processes", "output", "files"]
        assert hit["time"] == "time limit (30 s)" and hit["memory"] == "memory limit (512 MiB)"
        assert hit["processes"] == "process limit (128 processes)"
        assert hit["output"] == "output cut at 1 MiB (stdout 2 GiB written)"
        assert hit["files"] == "result.json over the 8 MiB collection cap"

    def test_a_message_ends_with_the_limits_it_does_not_name_already(self):
        """The timeout's message keeps its own words; the other limits hit are added, none twice."""
        result = self._result(timed_out=True, stderr=CapturedStream(b"y", 3 << 20))
        message = naming_limits("killed at the 30 s timeout", result, self.LIMITS, named="time")
        assert message == "killed at the 30 s timeout; limits hit: output cut at 1 MiB (stderr 3 MiB written)"
        assert naming_limits("ok", self._result(), self.LIMITS) == "ok"

    def test_sizes_read_as_people_write_them(self):
        """Whole units without decimals, others with one."""
        assert [byte_size(n) for n in (0, 900, 1536, 1 << 20, 2 << 30, (2 << 30) + (1 << 29))] == [
            "0 B", "900 B", "1.5 KiB", "1 MiB", "2 GiB", "2.5 GiB"]
