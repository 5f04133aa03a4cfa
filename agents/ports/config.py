"""The config port: what an agent is told of the settings, as one frozen, typed object.

The controller builds :class:`~controller.platform.settings.Settings` once per process and
derives an :class:`AgentConfig` from it; an agent never sees the whole settings. Per-target
overrides (``target.toml``'s limits, ``--max-attempts``) live in the agent's plan, not in a
copy of the config.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from agents.ports.memory import check_subject
from agents.ports.sandbox import SandboxLimits

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
    max_output_tokens: int = Field(
        4096, ge=64, le=65536,
        description="Most tokens the model may generate in one reply (asked of the model, so a rambling "
                    "one stops there instead of running to the timeout).",
    )
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


class AnalysisLimits(BaseModel):
    """Bounds on reading a user's input files (SBX_ANALYSIS__*, issue 23).

    A statement PDF is parsed only in a sandbox, with these memory and time limits; the
    caps on size and pages are checked first, and each breach is one line naming its setting.
    """

    model_config = ConfigDict(frozen=True)

    memory_mb: int = Field(512, ge=64, le=65536, description="Memory of the sandbox that reads a PDF.")
    timeout_seconds: float = Field(30.0, gt=0, le=3600, description="Wall time to read a text PDF's pages.")
    ocr_timeout_seconds: float = Field(300.0, gt=0, le=7200, description="Wall time to OCR a scan's first pages.")
    max_pdf_mb: int = Field(20, ge=1, le=1024, description="Largest statement PDF accepted.")
    max_pages: int = Field(500, ge=1, le=100_000, description="Most pages a statement PDF may have.")
    analysed_pages: int = Field(3, ge=1, le=50, description="Pages analysed in depth (words, tables).")
    max_csv_mb: int = Field(16, ge=1, le=1024, description="Largest result.csv accepted.")
    max_csv_rows: int = Field(200_000, ge=1, le=10_000_000, description="Most rows result.csv may have.")
    max_csv_columns: int = Field(200, ge=1, le=10_000, description="Most columns result.csv may have.")


class AgentConfig(BaseModel):
    """The settings an agent may read: folders, coder and model, limits and attempts."""

    model_config = ConfigDict(frozen=True)

    data_dir: Path = Field(Path("data"), description="Folder of targets, one sub-folder each.")
    runs_dir: Path = Field(Path("runs"), description="Where each run keeps its artefacts.")
    parsers_dir: Path = Field(Path("custom_parsers"), description="Where a passing parser is published.")
    idris_dir: Path = Field(Path("idris"), description="Where the Idris agent publishes its module.")
    coder: str = Field("offline", description="offline, or an LLM provider (see LLM_CODERS).")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="The LLM coders' model.")
    limits: SandboxLimits = Field(default_factory=SandboxLimits, description="Every sandbox's limits.")
    analysis: AnalysisLimits = Field(default_factory=AnalysisLimits, description="Reading users' input files.")
    max_attempts: int | None = Field(None, ge=1, le=50, description="SBX_MAX_ATTEMPTS; None: the agent's default.")
    parallel_checks: int = Field(2, ge=1, le=32, description="Artefacts `check` runs at once.")
    output: dict[str, str] = Field(default_factory=dict, description="bank_parser: SBX_OUTPUT__* as given.")
    interactive: bool = Field(False, description="intake: each reply from the terminal (run --interactive).")
    await_replies: bool = Field(False, description="intake: each reply from the run folder's reply box (a "
                                "service's run): with none there, the run stops and waits (agents.ports.replies).")
    subject: str | None = Field(None, description="intake: the person talked to; their graph memory persists "
                                "across runs (agents.ports.memory).")
    handoff_dir: Path | None = Field(None, description="A service's run on PostgreSQL: the folder its lessons "
                                     "come from and go to (agents.lessons.HandoffLessons); None: lessons.sqlite.")

    @field_validator("subject")
    @classmethod
    def _subject_name(cls, value: str | None) -> str | None:
        return None if value is None else check_subject(value)
