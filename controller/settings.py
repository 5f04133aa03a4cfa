"""Configuration: one pydantic-settings object, built once at the entry point and passed down.

Every field can be set from the environment with the ``SBX_`` prefix (nested groups with
``__``, e.g. ``SBX_SANDBOX__MEMORY_MB=1024``) or from a ``.env`` file in the working
directory. Library code never reads the environment itself; it receives a ``Settings``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from controller.sandbox.kubernetes.config import KubernetesSettings
from controller.output_schema import OutputSchema

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
    output_area_mb: int = Field(
        32, ge=1, le=4096,
        description="Size of the tmpfs at /work (inputs + everything written to /work/out), kernel-enforced.",
    )


#: Coders that call a language model; ``offline`` needs none of the ``llm`` settings.
LLM_CODERS = ("gemini", "openai", "ollama")


class LLMSettings(BaseModel):
    """The model behind an LLM coder (``SBX_LLM__*``); unset values take the provider's default.

    The API key is a secret: read from ``SBX_LLM__API_KEY`` or, when that is unset, from the
    provider's own variable (``GOOGLE_API_KEY``/``GEMINI_API_KEY``, ``OPENAI_API_KEY``,
    ``OLLAMA_API_KEY``); it is never logged, written to a run folder or passed to a sandbox.
    """

    model: str | None = Field(
        None, description="Model name; default gemini-2.5-flash / gpt-4o-mini / qwen2.5-coder:7b."
    )
    base_url: str | None = Field(
        None, description="Endpoint; default the provider's (OpenAI-compatible: .../v1)."
    )
    temperature: float = Field(0.2, ge=0, le=2, description="Sampling temperature.")
    timeout_seconds: float = Field(120.0, gt=0, le=3600, description="Limit for one request.")
    max_retries: int = Field(
        3, ge=0, le=10, description="Retries of a transient error (429, 5xx, timeout, connection)."
    )
    backoff_seconds: float = Field(
        2.0, ge=0, le=60, description="First retry delay; doubles per retry (jittered, max 60 s)."
    )
    api_key: SecretStr | None = Field(None, description="API key (secret).")

    @field_validator("base_url")
    @classmethod
    def _llm_http_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("llm.base_url must be an http(s) URL such as http://localhost:11434")
        if parts.username or parts.password:
            raise ValueError("llm.base_url must not carry credentials; set SBX_LLM__API_KEY")
        return value.strip().rstrip("/")

    @field_validator("api_key")
    @classmethod
    def _blank_key_is_none(cls, value: SecretStr | None) -> SecretStr | None:
        return value if value is not None and value.get_secret_value().strip() else None


class ObservabilitySettings(BaseModel):
    """Logs, the durable run history, the exporter (``serve``) and the optional Pushgateway."""

    log_level: Literal["debug", "info", "warning", "error"] | None = Field(
        None, description="Lowest level logged to stderr and events.jsonl; unset: info, but "
        "warning for console lines on a terminal (the progress display says the rest)."
    )
    history_path: Path | None = Field(
        None, description="SQLite run history the exporter reads; default <runs_dir>/history.sqlite."
    )
    serve_host: str = Field(
        "127.0.0.1", description="Address `serve` listens on (0.0.0.0 inside a container)."
    )
    serve_port: int = Field(9466, ge=1, le=65535, description="Port of `serve` (/metrics, /healthz).")
    pushgateway_url: str | None = Field(
        None, description="Pushgateway base URL, e.g. http://localhost:9091; unset: no push."
    )
    push_timeout_seconds: float = Field(
        5.0, gt=0, le=60, description="Give up pushing after this long; the run's result stands."
    )

    @field_validator("pushgateway_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("pushgateway_url must be an http(s) URL such as http://localhost:9091")
        if parts.username or parts.password:
            raise ValueError("pushgateway_url must not carry credentials (they would be logged)")
        return value.strip().rstrip("/")


class WarmPoolSettings(BaseModel):
    """The Docker backend's pool of pre-started, single-use containers."""

    enabled: bool = Field(True, description="Keep warm containers; off runs every execution cold.")
    size: int = Field(
        1, ge=1, le=16, description="Idle warm containers kept per kind of execution."
    )
    max_idle_seconds: float = Field(
        120.0, gt=0, le=3600, description="A warm container idle this long is removed."
    )


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
    idris_dir: Path = Field(
        Path("idris"), description="Where the Idris agent publishes Domains/<Project>.idr and its analysis."
    )
    images_dir: Path = Field(
        PROJECT_ROOT / "sandbox_images", description="Build contexts of the sandbox images."
    )
    cache_dir: Path = Field(
        Path(".cache"), description="Wheelhouses and the bootstrapped base root filesystem."
    )

    max_attempts: int = Field(3, ge=1, le=50, description="Attempts before the loop gives up.")
    output: OutputSchema = Field(  # issue 15: the frame to aim for when a target has no result.csv
        default_factory=OutputSchema, description="Bank parser output without a result.csv."
    )
    coder: Literal["offline", "gemini", "openai", "ollama"] = Field(
        "offline", description="Which coder writes the code: offline rules or an LLM provider."
    )
    llm: LLMSettings = Field(default_factory=LLMSettings, description="The LLM coders' model.")
    # Provider-standard key variables, read without the SBX_ prefix; ``llm.api_key`` wins.
    google_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("GOOGLE_API_KEY", "GEMINI_API_KEY"), exclude=True, repr=False
    )
    openai_api_key: SecretStr | None = Field(
        None, validation_alias="OPENAI_API_KEY", exclude=True, repr=False
    )
    ollama_api_key: SecretStr | None = Field(
        None, validation_alias="OLLAMA_API_KEY", exclude=True, repr=False
    )

    sandbox: SandboxLimits = Field(default_factory=SandboxLimits)
    pool: WarmPoolSettings = Field(default_factory=WarmPoolSettings)
    parallel_checks: int = Field(
        2, ge=1, le=32, description="Parsers `check` runs at once (each in its own sandbox)."
    )
    parallel_runs: int = Field(
        2, ge=1, le=32,
        description="Targets `run --all` runs at once (each its own process, run folder and sandboxes).",
    )
    sandbox_user: str = Field(
        "10001:10001", description="uid:gid the sandboxed code runs as (never root)."
    )
    sandbox_network: Literal["none"] = Field(
        "none", description="Network of sandbox containers; only 'none' is supported."
    )
    sandbox_backend: Literal["docker", "kubernetes"] = Field(
        "docker", description="Where sandboxes run: containers on a Docker engine, or Pods in a cluster (docs/kubernetes.md)."
    )
    kubernetes: KubernetesSettings = Field(
        default_factory=KubernetesSettings, description="The Kubernetes backend (SBX_KUBERNETES__*)."
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
    observability: ObservabilitySettings = Field(
        default_factory=ObservabilitySettings, description="Logs, run history, exporter, Pushgateway."
    )

    @field_validator("sandbox_user")
    @classmethod
    def _not_root(cls, value: str) -> str:
        uid, _, gid = value.partition(":")
        if not (uid.isdigit() and gid.isdigit()) or int(uid) == 0 or int(gid) == 0:
            raise ValueError("sandbox_user must be numeric uid:gid, neither of them 0 (root)")
        return value

    @model_validator(mode="after")
    def _provider_key(self) -> Settings:
        """Fill ``llm.api_key`` from the chosen provider's own variable when it is unset."""
        if self.llm.api_key is None and self.coder in LLM_CODERS:
            key = {"gemini": self.google_api_key, "openai": self.openai_api_key,
                   "ollama": self.ollama_api_key}[self.coder]
            if key is not None and key.get_secret_value().strip():
                self.llm = self.llm.model_copy(update={"api_key": key})
        return self


def load_settings(**overrides: object) -> Settings:
    """Build the settings from defaults, ``.env``, the environment and ``overrides``."""
    return Settings(**overrides)  # type: ignore[arg-type]
