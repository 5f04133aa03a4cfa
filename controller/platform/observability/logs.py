"""One logging pipeline for the whole program: structlog and standard-library logging alike.

Every record, whether it comes from structlog (``log.info("run.started", ...)``) or from a
library that uses :mod:`logging` (docker SDK, LangGraph, httpx), gets the same processors:
the run context bound with contextvars, level, logger name, an ISO-8601 UTC timestamp,
exceptions as data, secret redaction, and then one renderer: JSON lines for machines,
readable console lines for a person at a terminal. Logs go to stderr, so that stdout stays
the progress display and the closing summary. A run additionally writes its records to
``runs/<run_id>/events.jsonl`` through a second handler with the JSON formatter.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

import structlog
from pydantic import BaseModel, SecretStr
from structlog.processors import ExceptionRenderer
from structlog.tracebacks import ExceptionDictTransformer
from structlog.typing import EventDict, Processor, WrappedLogger

LogFormat = Literal["auto", "json", "console"]
REDACTED = "[REDACTED]"
#: Key names whose string values are never logged; the same words the sandbox spec refuses.
SECRET_KEY_HINTS = ("key", "token", "secret", "password", "passwd", "credential", "authorization", "cookie")
#: Shortest environment value treated as a secret to scrub (shorter ones match too much text).
MIN_SECRET_LENGTH = 6
#: ``api_key=...``, ``token: ...``, ``Authorization: Bearer ...`` and URL query keys in free text.
_INLINE_SECRET = re.compile(
    r"(?i)(\b(?:api[-_]?key|access[-_]?token|token|password|secret|authorization)\b[\"']?\s*[:=]\s*"
    r"[\"']?(?:bearer\s+|basic\s+)?)([^\s\"',;&]+)"
)
_QUERY_SECRET = re.compile(r"(?i)([?&](?:key|api_key|apikey|token|access_token|sig|signature)=)([^&\s\"']+)")
_OWN_HANDLER = "_sandloop_handler"


def secret_values(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of environment variables whose names look like secrets (API keys, tokens).

    Called at the entry point with ``os.environ``: every such value is scrubbed from every log
    line, whatever key or message it turns up in.
    """
    return tuple(
        value for name, value in environ.items()
        if _looks_secret(name) and len(value) >= MIN_SECRET_LENGTH
    )


def settings_secrets(model: BaseModel) -> tuple[str, ...]:
    """Every :class:`~pydantic.SecretStr` value in a settings model, nested groups included.

    Secrets may come from ``.env`` rather than the environment; this finds them wherever
    they were read from.
    """
    found: list[str] = []
    for name in type(model).model_fields:
        value = getattr(model, name, None)
        if isinstance(value, SecretStr):
            found.append(value.get_secret_value())
        elif isinstance(value, BaseModel):
            found.extend(settings_secrets(value))
    return tuple(v for v in found if len(v) >= MIN_SECRET_LENGTH)


def _looks_secret(name: str) -> bool:
    lowered = name.lower()
    return any(hint in lowered for hint in SECRET_KEY_HINTS)


class Redactor:
    """A processor that removes secrets from an event before it is rendered.

    Three nets: values of keys that look secret (``api_key=...``) are masked; known secret
    values (from the environment) are replaced wherever they occur in any string; and
    ``key=value`` / ``Authorization: Bearer ...`` patterns in free text are masked.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)

    def __call__(self, logger: WrappedLogger, method: str, event_dict: EventDict) -> EventDict:
        return {key: self._field(key, value) for key, value in event_dict.items()}

    def _field(self, key: object, value: Any) -> Any:
        if isinstance(key, str) and isinstance(value, str) and _looks_secret(key):
            return REDACTED
        return self._scrub(value)

    def _scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, Mapping):
            return {k: self._field(k, v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._scrub(v) for v in value]
        return value

    def _text(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        text = _INLINE_SECRET.sub(lambda m: m.group(1) + REDACTED, text)
        return _QUERY_SECRET.sub(lambda m: m.group(1) + REDACTED, text)


def _shared_processors() -> list[Processor]:
    """What every record gets first, structlog's own and foreign (stdlib) ones alike."""
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.ExtraAdder(),
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]


def json_formatter(redactor: Redactor) -> structlog.stdlib.ProcessorFormatter:
    """Renders any record as one JSON object per line, tracebacks as structured data."""
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared_processors(),
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            # show_locals=False: a frame's locals may hold secrets or hostile sandbox output.
            ExceptionRenderer(ExceptionDictTransformer(show_locals=False)),
            redactor,
            structlog.processors.JSONRenderer(default=str),
        ],
    )


def console_formatter(redactor: Redactor, colors: bool) -> structlog.stdlib.ProcessorFormatter:
    """Renders any record as a readable, aligned line for a person at a terminal."""
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared_processors(),
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            redactor,
            structlog.dev.ConsoleRenderer(colors=colors, exception_formatter=structlog.dev.plain_traceback),
        ],
    )


def resolve_format(log_format: LogFormat, stream: TextIO) -> Literal["json", "console"]:
    """``auto`` means console lines on a terminal and JSON lines otherwise."""
    if log_format != "auto":
        return log_format
    isatty = getattr(stream, "isatty", None)
    return "console" if isatty is not None and isatty() else "json"


@dataclass(frozen=True)
class LogSetup:
    """What :func:`configure_logging` decided, for the handlers added later (events.jsonl)."""

    format: Literal["json", "console"]
    stream_level: int
    file_level: int
    redactor: Redactor


_active: LogSetup | None = None


def configure_logging(
    log_format: LogFormat = "auto",
    level: str | None = None,
    *,
    stream: TextIO | None = None,
    secrets: Iterable[str] = (),
    cache_loggers: bool = True,
) -> LogSetup:
    """Configure structlog and the root logger once, at the entry point.

    Args:
        log_format: ``json``, ``console`` or ``auto`` (by whether ``stream`` is a terminal).
        level: Lowest level logged (debug, info, warning, error). ``None``: warning, except
            an explicit ``json`` format, which starts at info (a log collector asked for
            every event). The progress display on stdout already shows what the info events
            say, and ``events.jsonl`` in the run folder always gets them (``level`` or info),
            so by default stderr carries only warnings and errors: progress lines and JSON
            lines no longer interleave when both streams go to one file (issue 23).
        stream: Where log lines go; stderr by default (stdout is the progress display).
        secrets: Values to scrub from every line (see :func:`secret_values`).
        cache_loggers: Cache bound loggers (production); tests pass False so they can reconfigure.
    """
    global _active
    stream = stream if stream is not None else sys.stderr
    fmt = resolve_format(log_format, stream)
    file_level = _level(level or "info")
    stream_level = _level(level) if level else (logging.INFO if log_format == "json" else logging.WARNING)
    setup = LogSetup(fmt, stream_level, file_level, Redactor(secrets))
    structlog.configure(
        processors=[*_shared_processors(), structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(min(stream_level, file_level)),
        cache_logger_on_first_use=cache_loggers,
    )
    handler = logging.StreamHandler(stream)
    handler.setLevel(stream_level)
    handler.setFormatter(json_formatter(setup.redactor) if fmt == "json"
                         else console_formatter(setup.redactor, colors=True))
    _install_root_handler(handler, min(stream_level, file_level))
    _active = setup
    return setup


def _level(name: str) -> int:
    level = logging.getLevelName(name.upper())
    if not isinstance(level, int):
        raise ValueError(f"unknown log level {name!r}")
    return level


def _install_root_handler(handler: logging.Handler, level: int) -> None:
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _OWN_HANDLER, False)]:
        root.removeHandler(old)
        old.close()
    setattr(handler, _OWN_HANDLER, True)
    root.addHandler(handler)
    root.setLevel(level)


@contextmanager
def run_log_file(path: Path) -> Iterator[Path]:
    """Also write every record to ``path`` (JSON lines) while the block runs.

    The same pipeline feeds it, so the file gets the events stderr gets (at its own level:
    the configured one, or info), always as JSON whatever the terminal shows, with the same
    secrets scrubbed.
    """
    setup = _active or LogSetup("json", logging.INFO, logging.INFO, Redactor())
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setLevel(setup.file_level)
    handler.setFormatter(json_formatter(setup.redactor))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield path
    finally:
        root.removeHandler(handler)
        handler.close()


def reset_logging() -> None:
    """Undo :func:`configure_logging` (for tests): structlog defaults, no handler of ours, no context."""
    global _active
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, _OWN_HANDLER, False)]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(logging.WARNING)
    _active = None
