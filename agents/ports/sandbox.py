"""What a sandbox is asked to do and what it reports back: the one interface of every backend.

A backend takes a :class:`SandboxSpec` and returns a :class:`SandboxResult`. Input files are
placed read-only under :data:`INPUT_DIR`; the program writes what it wants collected under
:data:`OUTPUT_DIR`. Results are plain bytes and strings: nothing that comes back is ever
unpickled, imported or executed by the controller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel, Field


class SandboxLimits(BaseModel):
    """Resource limits applied to every sandbox container."""

    timeout_seconds: float = Field(
        30.0, gt=0, le=3600, description="Wall-clock limit; the container is killed at it."
    )
    memory_mb: int = Field(
        512, ge=16, description="Memory limit in MiB; swap is set equal, so no extra swap."
    )
    cpus: float = Field(1.0, gt=0, le=64, description="CPU limit in cores (CFS quota).")
    pids: int = Field(
        128, ge=8, description="Maximum processes and threads in the container (fork bombs)."
    )
    tmpfs_mb: int = Field(64, ge=1, description="Size of the writable scratch tmpfs at /tmp.")
    output_bytes: int = Field(
        1 << 20, ge=1024, description="Bytes kept of stdout and of stderr each; the rest is counted, flagged, dropped."
    )
    file_size_mb: int = Field(
        64, ge=1, description="Largest file a sandboxed process may write (RLIMIT_FSIZE)."
    )
    collect_bytes: int = Field(
        32 << 20, ge=1024, description="Most bytes read back of the files collected from a run."
    )
    open_files: int = Field(256, ge=16, description="Open file descriptors (RLIMIT_NOFILE).")
    output_area_mb: int = Field(
        32, ge=1, le=4096,
        description="Size of the tmpfs at /work (inputs + everything written to /work/out), kernel-enforced.",
    )



#: Where inputs appear inside the sandbox (read-only for the sandboxed user).
INPUT_DIR = "/work/in"
#: Where the sandboxed program writes the files to collect.
OUTPUT_DIR = "/work/out"
#: The only writable scratch space besides OUTPUT_DIR (a size-limited tmpfs).
SCRATCH_DIR = "/tmp"
#: A warm container starts its work once this file appears (written after the inputs).
GO_FILE = f"{INPUT_DIR}/.go"

Outcome = Literal["ok", "nonzero_exit", "timeout", "oom", "engine_error"]

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
#: Environment names that must never reach a sandbox, whatever the caller passes.
_SECRET_HINTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


def check_file_name(name: str) -> str:
    """Return ``name`` if it is a plain file name (no folders, no ``..``), else raise ValueError."""
    if not _SAFE_NAME.match(name) or name in (".", ".."):
        raise ValueError(f"not a plain file name: {name!r}")
    return name


@dataclass(frozen=True)
class SandboxSpec:
    """One execution: image, command, files in, files out, limits and bookkeeping labels.

    Attributes:
        image: Image reference to run (already built).
        command: argv run inside the container (no shell unless the argv says so).
        inputs: File name to content, placed read-only under ``/work/in``.
        collect: File names to read back from ``/work/out`` after the run.
        limits: Time, memory, CPU, process and output bounds.
        labels: Bookkeeping labels (run id, agent, attempt); values must be short strings.
        env: Extra environment for the program; names that look like secrets are refused.
        warm_command: Optional argv that prepares (e.g. imports libraries), waits for
            :data:`GO_FILE`, then does what ``command`` does. A backend with a warm pool may
            start it before the inputs exist; without one, ``command`` runs cold.
    """

    image: str
    command: tuple[str, ...]
    inputs: Mapping[str, bytes] = field(default_factory=dict)
    collect: tuple[str, ...] = ()
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    labels: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    warm_command: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not self.command:
            raise ValueError("a sandbox needs a command")
        for name in (*self.inputs, *self.collect):
            check_file_name(name)
        for key in self.env:
            if any(hint in key.upper() for hint in _SECRET_HINTS):
                raise ValueError(f"refusing to pass {key!r} into a sandbox: it looks like a secret")


@dataclass(frozen=True)
class CapturedStream:
    """Up to ``limit`` bytes of one output stream, and how much there really was."""

    data: bytes
    total_bytes: int

    @property
    def truncated(self) -> bool:
        """Whether the program wrote more than was kept."""
        return self.total_bytes > len(self.data)

    @property
    def text(self) -> str:
        """The kept bytes as text; undecodable bytes are replaced, never trusted."""
        return self.data.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class SandboxResult:
    """What happened: exit status, bounded output, limits hit, timing, and collected files."""

    exit_code: int | None
    stdout: CapturedStream
    stderr: CapturedStream
    timed_out: bool
    oom_killed: bool
    wall_seconds: float
    files: Mapping[str, bytes]
    container_id: str = ""
    truncated_files: tuple[str, ...] = ()
    warm: bool = False
    warmup_seconds: float | None = None
    #: Collected names refused (a folder, a link, too big, a malformed archive), with why.
    refused_files: Mapping[str, str] = field(default_factory=dict)
    #: A fork or clone failed at the process limit (``pids``) while the program ran.
    pids_limited: bool = False
    #: Why each earlier try of this execution was lost by the infrastructure and run again
    #: (:data:`agents.ports.errors.INFRA_REASONS`), oldest first; empty when the first try served.
    infra_retries: tuple[str, ...] = ()

    def record(self) -> dict[str, object]:
        """The result's facts as plain JSON values (for a run's artefacts and logs)."""
        return {
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "oom_killed": self.oom_killed,
            "wall_seconds": round(self.wall_seconds, 3),
            "container_id": self.container_id,
            "warm": self.warm,
            "stdout_bytes": self.stdout.total_bytes,
            "stdout_truncated": self.stdout.truncated,
            "stderr_bytes": self.stderr.total_bytes,
            "stderr_truncated": self.stderr.truncated,
            "refused_files": dict(self.refused_files),
            "pids_limited": self.pids_limited,
            "infra_retries": list(self.infra_retries),
        }

    @property
    def outcome(self) -> Outcome:
        """One bounded label for metrics and routing."""
        if self.timed_out:
            return "timeout"
        if self.oom_killed:
            return "oom"
        return "ok" if self.exit_code == 0 else "nonzero_exit"


def limits_hit(result: SandboxResult, limits: SandboxLimits) -> dict[str, str]:
    """Every limit an execution hit, in a few words that name its size (for outcome lines).

    Keys, in this order: ``time``, ``memory``, ``processes`` (a fork failed at ``pids``),
    ``output`` (stdout or stderr cut at ``output_bytes``), ``files`` (a collected file over
    ``collect_bytes``). Empty when the execution stayed within all of them.
    """
    hit: dict[str, str] = {}
    if result.timed_out:
        hit["time"] = f"time limit ({limits.timeout_seconds:g} s)"
    if result.oom_killed:
        hit["memory"] = f"memory limit ({limits.memory_mb} MiB)"
    if result.pids_limited:
        hit["processes"] = f"process limit ({limits.pids} processes)"
    cut = [f"{name} {byte_size(stream.total_bytes)}" for name, stream in (("stdout", result.stdout),
                                                                           ("stderr", result.stderr))
           if stream.truncated]
    if cut:
        hit["output"] = f"output cut at {byte_size(limits.output_bytes)} ({', '.join(cut)} written)"
    if result.truncated_files:
        hit["files"] = f"{', '.join(result.truncated_files)} over the {byte_size(limits.collect_bytes)} collection cap"
    return hit


def naming_limits(message: str, result: SandboxResult, limits: SandboxLimits, *, named: str | None = None) -> str:
    """``message`` ending with every limit the execution hit (:func:`limits_hit`) but the one
    it already ``named`` (a key: e.g. ``time`` for a message about the timeout)."""
    others = "; ".join(text for key, text in limits_hit(result, limits).items() if key != named)
    return f"{message}; limits hit: {others}" if others else message


def byte_size(count: int) -> str:
    """``count`` bytes in the largest binary unit that keeps it at least 1 (``2.0 GiB``, ``1 MiB``)."""
    size, unit = float(count), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            break
        size /= 1024
    return f"{int(size)} {unit}" if size == int(size) else f"{size:.1f} {unit}"


class Sandbox(Protocol):
    """Runs one :class:`SandboxSpec` in a fresh, throwaway, locked-down environment."""

    def run(self, spec: SandboxSpec) -> SandboxResult:
        """Execute ``spec`` and return its result; raise ``SandboxError`` if the engine fails."""
        ...
