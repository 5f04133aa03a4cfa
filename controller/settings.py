"""Configuration: one pydantic-settings object, built once at the entry point and passed down.

Every field can be set from the environment with the ``SBX_`` prefix (nested groups with
``__``, e.g. ``SBX_SANDBOX__MEMORY_MB=1024``) or from a ``.env`` file in the working
directory. Library code never reads the environment itself; it receives a ``Settings``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: The folder that holds ``controller/``, ``agents/`` and ``sandbox_images/``.
PROJECT_ROOT = Path(__file__).resolve().parent.parent


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


class Settings(BaseSettings):
    """Everything the controller can be told, with the defaults a new user gets."""

    model_config = SettingsConfigDict(
        env_prefix="SBX_",
        env_nested_delimiter="__",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        nested_model_default_partial_update=True,
    )

    data_dir: Path = Field(Path("data"), description="Folder of targets, one sub-folder each.")
    runs_dir: Path = Field(Path("runs"), description="Where each run keeps its artefacts.")
    parsers_dir: Path = Field(
        Path("custom_parsers"), description="Where a passing parser is published."
    )
    images_dir: Path = Field(
        PROJECT_ROOT / "sandbox_images", description="Build contexts of the sandbox images."
    )
    cache_dir: Path = Field(
        Path(".cache"), description="Wheelhouses and the bootstrapped base root filesystem."
    )

    max_attempts: int = Field(3, ge=1, le=50, description="Attempts before the loop gives up.")
    coder: Literal["offline"] = Field("offline", description="Which coder writes the code.")

    sandbox: SandboxLimits = Field(default_factory=SandboxLimits)
    sandbox_user: str = Field(
        "10001:10001", description="uid:gid the sandboxed code runs as (never root)."
    )
    sandbox_network: Literal["none"] = Field(
        "none", description="Network of sandbox containers; only 'none' is supported."
    )

    image_prefix: str = Field("sandloop", description="Repository prefix of built images.")
    base_image: str = Field(
        "debian:bookworm-slim", description="Base of every sandbox image; bootstrapped if absent."
    )
    debian_mirror: str = Field(
        "http://deb.debian.org/debian", description="Mirror debootstrap uses for the base image."
    )
    build_timeout_seconds: int = Field(1800, ge=60, description="Limit for one image build.")

    log_format: Literal["auto", "json", "console"] = Field(
        "auto", description="auto: console lines on a terminal, JSON lines otherwise."
    )

    @field_validator("sandbox_user")
    @classmethod
    def _not_root(cls, value: str) -> str:
        uid, _, gid = value.partition(":")
        if not (uid.isdigit() and gid.isdigit()) or int(uid) == 0 or int(gid) == 0:
            raise ValueError("sandbox_user must be numeric uid:gid, neither of them 0 (root)")
        return value


def load_settings(**overrides: object) -> Settings:
    """Build the settings from defaults, ``.env``, the environment and ``overrides``."""
    return Settings(**overrides)  # type: ignore[arg-type]
