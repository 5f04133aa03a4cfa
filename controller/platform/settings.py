"""Configuration: one pydantic-settings object, built once at the entry point and passed down.

Every field can be set from the environment with the ``SBX_`` prefix (nested groups with
``__``, e.g. ``SBX_SANDBOX__MEMORY_MB=1024``) or from a ``.env`` file in the working
directory. Library code never reads the environment itself; it receives a ``Settings``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agents.ports.config import LLM_CODERS, AgentConfig, AnalysisLimits, LLMSettings
from agents.ports.sandbox import SandboxLimits
from controller.platform.sandbox.kubernetes.config import KubernetesSettings
from controller.platform.sandbox.retry import InfraRetrySettings

#: The folder that holds ``controller/``, ``agents/`` and ``sandbox_images/``.
PROJECT_ROOT = Path(__file__).resolve().parents[2]


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


class ServiceSettings(BaseModel):
    """The service (``serve``): its run store, queue limits, upload limits and worker leases.

    A worker holds a lease on each run it executes and renews it every ``renew_seconds``; a
    run whose lease is older than ``lease_seconds`` belongs to a dead worker and is taken
    over (resumed from its checkpoint, or failed with the reason) within
    ``lease_seconds + poll_seconds`` of that worker's last renewal.
    """

    store: Literal["sqlite", "postgres"] = Field(
        "sqlite", description="Run store and queue: sqlite (WAL, under runs_dir; one host) or postgres (replicas)."
    )
    store_path: Path | None = Field(
        None, description="SQLite file of runs and tokens; default <runs_dir>/service.sqlite."
    )
    postgres_dsn: SecretStr | None = Field(
        None, repr=False, description="PostgreSQL connection string when store is postgres (libpq form or URL)."
    )
    upload_bytes: int = Field(
        32 * 1024 * 1024, ge=1024, le=1024**3, description="Largest request body accepted (413 beyond)."
    )
    upload_parts: int = Field(8, ge=1, le=64, description="Most parts of a multipart request.")
    quota_per_token: int = Field(
        20, ge=1, le=10_000, description="Queued + running + waiting runs one token may have (429 beyond)."
    )
    queue_limit: int = Field(
        200, ge=1, le=100_000, description="Queued runs in all; 503 beyond (the service is overloaded)."
    )
    lease_seconds: float = Field(30.0, ge=2, le=3600, description="A worker's lease on a running run.")
    renew_seconds: float = Field(10.0, gt=0, le=1200, description="How often a worker renews its leases.")
    poll_seconds: float = Field(
        1.0, gt=0, le=60, description="How often an idle worker looks for queued runs and expired leases."
    )
    drain_seconds: float = Field(
        20.0, ge=0, le=3600, description="On SIGTERM, how long running children get to stop cleanly."
    )
    check_files: int = Field(
        50, ge=1, le=1000, description="Most parser (.py) and .zip parts of one check (400 beyond)."
    )
    zip_members: int = Field(
        2000, ge=1, le=65_000, description="Most members of an uploaded zip, and of a check's zips in all (413 beyond)."
    )
    zip_member_bytes: int = Field(
        8 * 1024 * 1024, ge=1024, le=1024**3, description="Largest member of an uploaded zip, inflated (413 beyond)."
    )
    zip_total_bytes: int = Field(
        64 * 1024 * 1024, ge=1024, le=8 * 1024**3,
        description="Most bytes a check's zips inflate to in all, counted while inflating (413 beyond).",
    )
    zip_ratio: int = Field(
        100, ge=2, le=100_000, description="Most a zip member may inflate per compressed byte, past 1 MiB (413 beyond)."
    )
    zip_depth: int = Field(16, ge=1, le=64, description="Deepest folder nesting in an uploaded zip (422 beyond).")
    session_hours: float = Field(
        12.0, gt=0, le=24 * 30, description="How long a web console sign-in lasts (its session cookie and row)."
    )
    warm_workers: bool = Field(
        True,
        description="Fork each run's process from a parent that imported the controller and the agents once "
                    "(false: a fresh python -m controller per run).",
    )
    warm_sandboxes: bool = Field(
        True,
        description="Workers keep, on one engine connection, warm sandbox containers for the kind of a run's "
                    "executions (learnt from earlier runs; SBX_PARALLEL_RUNS x a run's executions, at most 2) "
                    "and hand them to each run they start (Docker backend, SBX_POOL__ENABLED; false: each run "
                    "warms its own).",
    )
    max_takeovers: int = Field(
        3, ge=0, le=100,
        description="How often a run whose worker died goes back to the queue; the next death ends it as error.",
    )
    idempotency_seconds: float = Field(
        86400.0, ge=86400.0, le=30 * 86400.0, description="How long an Idempotency-Key is kept (at least 24 h).",
    )
    upload_quota_bytes: int = Field(
        512 * 1024**2, ge=1024, le=1024**4,
        description="Most bytes one token's uploads may hold on disk until their runs end (429 beyond).",
    )
    min_free_bytes: int = Field(
        512 * 1024**2, ge=0, le=1024**4,
        description="Free disk the runs folder keeps in reserve: no upload is accepted below it (507).",
    )
    sweep_seconds: float = Field(
        10.0, gt=0, le=3600,
        description="How often uploads of ended runs, orphaned uploads and old idempotency keys are removed.",
    )

    @model_validator(mode="after")
    def _renew_before_expiry(self) -> ServiceSettings:
        if self.renew_seconds * 2 > self.lease_seconds:
            raise ValueError("renew_seconds must be at most half of lease_seconds (a renewal may be late once)")
        if self.store == "postgres" and (self.postgres_dsn is None or not self.postgres_dsn.get_secret_value()):
            raise ValueError("store postgres needs postgres_dsn (SBX_SERVICE__POSTGRES_DSN)")
        return self


class Settings(BaseSettings):
    """Everything the controller can be told, with the defaults a new user gets."""

    model_config = SettingsConfigDict(
        env_prefix="SBX_",
        env_nested_delimiter="__",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        nested_model_default_partial_update=True,
        # Built once per process at the entry point and passed down: nothing rewrites it.
        frozen=True,
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
    interactive: bool = Field(False, description="Conversational agents (intake) read each reply from the terminal.")
    await_replies: bool = Field(False, description="Conversational agents (intake) read each reply from the run "
                                "folder (the service's POST /v1/runs/{id}/input); without one the run waits.")
    subject: str | None = Field(None, description="Conversational agents (intake): the person talked to, whose "
                                "graph memory persists across runs (run --subject NAME).")
    state_dsn: SecretStr | None = Field(None, description="PostgreSQL (libpq string or URL; the store's database) "
                                        "of the runs' graph checkpoints and graph memories, for replicas on "
                                        "several nodes; unset: SQLite files in the runs folder. A role that may "
                                        "use only those tables: every run's process gets it.")
    handoff_dir: Path | None = Field(None, description="Set by a service on PostgreSQL for its runs (issue 34): "
                                     "the run hands its history and lessons over in this folder (its own), "
                                     "and the service keeps them in the store; unset: the SQLite files.")
    # issue 15: the frame to aim for when a target has no result.csv. The bank-parser agent
    # validates it (its OutputSchema); the platform only carries it, so it names no agent.
    output: dict[str, str] = Field(
        default_factory=dict, description="Bank parser output without a result.csv (SBX_OUTPUT__*)."
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
    analysis: AnalysisLimits = Field(
        default_factory=AnalysisLimits, description="Reading users' PDFs and CSVs (SBX_ANALYSIS__*)."
    )
    pool: WarmPoolSettings = Field(default_factory=WarmPoolSettings)
    infra_retry: InfraRetrySettings = Field(
        default_factory=InfraRetrySettings,
        description="Executions the infrastructure lost, run again (SBX_INFRA_RETRY__*).",
    )
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
    sandbox_runtime: str = Field(
        "runc", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
        description="OCI runtime of every sandbox container on the Docker backend: runc (the host's kernel) "
                    "or runsc (gVisor, a user-space kernel; `make gvisor` registers it). The engine must "
                    "list it (docker info): checked at start. Kubernetes: SBX_KUBERNETES__RUNTIME_CLASS_NAME.",
    )
    sandbox_backend: Literal["docker", "kubernetes"] = Field(
        "docker",
        description="Where sandboxes run: containers on a Docker engine, or Pods in a cluster (docs/kubernetes.md).",
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
    token: SecretStr | None = Field(
        None, exclude=True, repr=False, description="Bearer token `run --server` sends to a service (SBX_TOKEN)."
    )
    service: ServiceSettings = Field(
        default_factory=ServiceSettings, description="The service: store, quotas, uploads, leases (SBX_SERVICE__*)."
    )

    @field_validator("sandbox_user")
    @classmethod
    def _not_root(cls, value: str) -> str:
        uid, _, gid = value.partition(":")
        if not (uid.isdigit() and gid.isdigit()) or int(uid) == 0 or int(gid) == 0:
            raise ValueError("sandbox_user must be numeric uid:gid, neither of them 0 (root)")
        return value

    @model_validator(mode="after")
    def _runtime_on_docker(self) -> Settings:
        if self.sandbox_backend == "kubernetes" and self.sandbox_runtime != "runc":
            raise ValueError("sandbox_runtime is the Docker backend's; on Kubernetes a sandbox Pod's runtime is "
                             "its RuntimeClass: set SBX_KUBERNETES__RUNTIME_CLASS_NAME (e.g. gvisor) instead")
        return self

    @model_validator(mode="after")
    def _provider_key(self) -> Settings:
        """Fill ``llm.api_key`` from the chosen provider's own variable when it is unset.

        Still inside validation, so the frozen model's field is set the one way pydantic allows.
        """
        if self.llm.api_key is None and self.coder in LLM_CODERS:
            key = {"gemini": self.google_api_key, "openai": self.openai_api_key,
                   "ollama": self.ollama_api_key}[self.coder]
            if key is not None and key.get_secret_value().strip():
                object.__setattr__(self, "llm", self.llm.model_copy(update={"api_key": key}))
        return self


def load_settings(**overrides: Any) -> Settings:
    """Build the settings from defaults, ``.env``, the environment and ``overrides``."""
    return Settings(**overrides)


def agent_config(settings: Settings) -> AgentConfig:
    """What every agent is told of the settings (the agents' typed config port)."""
    return AgentConfig(
        data_dir=settings.data_dir, runs_dir=settings.runs_dir, parsers_dir=settings.parsers_dir,
        idris_dir=settings.idris_dir, coder=settings.coder, llm=settings.llm, limits=settings.sandbox,
        analysis=settings.analysis, interactive=settings.interactive, await_replies=settings.await_replies,
        subject=settings.subject, handoff_dir=settings.handoff_dir,
        max_attempts=settings.max_attempts if "max_attempts" in settings.model_fields_set else None,
        parallel_checks=settings.parallel_checks, output=settings.output,
    )


def state_dsn(settings: Settings) -> str | None:
    """Where runs keep checkpoints and graph memories (SBX_STATE_DSN's value); None: SQLite files."""
    dsn = settings.state_dsn
    return dsn.get_secret_value() if dsn is not None and dsn.get_secret_value() else None


def child_env(settings: Settings) -> dict[str, str]:
    """The environment of a ``python -m controller`` child: ours, with the folders these settings resolved
    made explicit.

    Used by ``run --all`` and by the service's workers, so that a child builds the same settings.
    """
    return {
        **os.environ,
        "SBX_DATA_DIR": str(settings.data_dir),
        "SBX_RUNS_DIR": str(settings.runs_dir),
        "SBX_PARSERS_DIR": str(settings.parsers_dir),
        "SBX_CACHE_DIR": str(settings.cache_dir),
        "SBX_MAX_ATTEMPTS": str(settings.max_attempts),
    }
