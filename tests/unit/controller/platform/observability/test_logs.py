"""The log pipeline: JSON lines that parse and carry the run context, standard-library records
through the same processors, console lines on a terminal, and no secret in any line."""

from __future__ import annotations

import io
import json
import logging

import pytest
import structlog
from pydantic import BaseModel, SecretStr

from agents.spans import NodeSpan
from controller.platform.observability.logs import (
    REDACTED,
    Redactor,
    configure_logging,
    resolve_format,
    run_log_file,
    secret_values,
    settings_secrets,
)

SECRET = "sk-live-0123456789abcdef"


class Terminal(io.StringIO):
    """A test double for a terminal: a text stream whose isatty() is True."""

    def isatty(self) -> bool:
        return True


def json_lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def configure(stream: io.StringIO, fmt: str = "json", level: str | None = None, secrets=()) -> None:
    configure_logging(fmt, level, stream=stream, secrets=secrets, cache_loggers=False)


class TestJsonLines:
    def test_every_line_parses_and_carries_the_run_context(self):
        """Structlog events are JSON objects with the bound run id, agent, target, node and attempt."""
        stream = io.StringIO()
        configure(stream)
        structlog.contextvars.bind_contextvars(run_id="r-1", agent="bank_parser", target="icici")
        with NodeSpan("execute", 2) as span:
            structlog.get_logger("t").info("sandbox.executed", exit_code=0)
            span.end("ok", 2)
        events = json_lines(stream)
        assert [e["event"] for e in events] == ["node.started", "sandbox.executed", "node.finished"]
        for event in events:
            assert (event["run_id"], event["agent"], event["target"]) == ("r-1", "bank_parser", "icici")
            assert (event["node"], event["attempt"]) == ("execute", 2)
            assert event["level"] == "info" and event["timestamp"].endswith("Z")
        assert events[-1]["outcome"] == "ok" and events[-1]["duration_seconds"] >= 0

    def test_standard_library_records_use_the_same_pipeline(self):
        """A library's logging call becomes a JSON line with level, logger name and the run context."""
        stream = io.StringIO()
        configure(stream)
        structlog.contextvars.bind_contextvars(run_id="r-2")
        logging.getLogger("docker.api").warning("engine slow: %d ms", 900)
        (event,) = json_lines(stream)
        assert event == {**event, "event": "engine slow: 900 ms", "level": "warning",
                         "logger": "docker.api", "run_id": "r-2"}

    def test_exceptions_are_structured_without_locals(self):
        """log.exception renders the traceback as data, and never a frame's local variables."""
        stream = io.StringIO()
        configure(stream)
        try:
            api_token = SECRET  # noqa: F841 - a local that must not be logged
            raise RuntimeError("boom")
        except RuntimeError:
            structlog.get_logger("t").exception("failed")
        (event,) = json_lines(stream)
        assert event["exception"][0]["exc_type"] == "RuntimeError"
        assert SECRET not in stream.getvalue()

    def test_level_filters(self):
        """Below the configured level nothing is written, from structlog or from logging."""
        stream = io.StringIO()
        configure(stream, level="warning")
        structlog.get_logger("t").info("quiet")
        logging.getLogger("lib").info("quiet too")
        structlog.get_logger("t").warning("loud")
        assert [e["event"] for e in json_lines(stream)] == ["loud"]


class TestFormats:
    def test_auto_is_console_on_a_terminal_and_json_otherwise(self):
        """auto picks console lines for a terminal and JSON for anything else."""
        assert resolve_format("auto", Terminal()) == "console"
        assert resolve_format("auto", io.StringIO()) == "json"
        assert resolve_format("json", Terminal()) == "json"

    def test_console_lines_are_readable_not_json(self):
        """Console format writes key=value lines, not JSON; on a terminal it starts at warning by default."""
        stream = Terminal()
        configure_logging("auto", None, stream=stream, cache_loggers=False)
        structlog.get_logger("t").info("hidden")
        structlog.get_logger("t").warning("disk.low", free_mb=12)
        text = stream.getvalue()
        assert "hidden" not in text and "disk.low" in text and "free_mb" in text
        with pytest.raises(json.JSONDecodeError):
            json.loads(text.splitlines()[0])

    def test_auto_off_a_terminal_is_json_from_warning(self):
        """auto on a pipe: JSON lines, warnings and errors only (info is in events.jsonl), so they
        do not interleave with the progress lines when stdout and stderr share a file."""
        stream = io.StringIO()
        configure_logging("auto", None, stream=stream, cache_loggers=False)
        structlog.get_logger("t").info("node.finished")
        structlog.get_logger("t").warning("push.failed", job="j")
        lines = [json.loads(line) for line in stream.getvalue().splitlines()]
        assert [line["event"] for line in lines] == ["push.failed"]

    def test_explicit_json_starts_at_info(self):
        stream = io.StringIO()
        configure_logging("json", None, stream=stream, cache_loggers=False)
        structlog.get_logger("t").info("node.finished")
        assert json.loads(stream.getvalue().splitlines()[0])["event"] == "node.finished"

    def test_events_file_is_json_even_when_the_terminal_is_console(self, tmp_path):
        """runs/<id>/events.jsonl gets JSON lines at info, whatever the terminal shows."""
        configure_logging("console", None, stream=Terminal(), cache_loggers=False)
        path = tmp_path / "run" / "events.jsonl"
        with run_log_file(path):
            structlog.get_logger("t").info("run.started", run_id="r")
        structlog.get_logger("t").info("after the run")
        events = [json.loads(line) for line in path.read_text().splitlines()]
        assert [e["event"] for e in events] == ["run.started"]


class TestSecrets:
    def test_environment_secrets_never_appear(self):
        """A secret from the environment is scrubbed from messages, values and library records."""
        stream = io.StringIO()
        configure(stream, secrets=secret_values({"OPENAI_API_KEY": SECRET, "HOME": "/root"}))
        log = structlog.get_logger("t")
        log.info(f"calling with {SECRET}", header=f"Bearer {SECRET}", nested={"list": [SECRET]})
        logging.getLogger("httpx").info("HTTP Request: POST https://api.example/v1?x=%s", SECRET)
        text = stream.getvalue()
        assert SECRET not in text and text.count(REDACTED) >= 4
        assert len(json_lines(stream)) == 2

    def test_secret_looking_keys_are_masked(self):
        """Values of keys such as api_key, token or password are masked even when unknown."""
        stream = io.StringIO()
        configure(stream)
        structlog.get_logger("t").info("login", api_key="abc123xyz", password="hunter22", tokens_used=12)
        (event,) = json_lines(stream)
        assert event["api_key"] == REDACTED and event["password"] == REDACTED
        assert event["tokens_used"] == 12

    def test_inline_credentials_in_free_text_are_masked(self):
        """key=value and Authorization: Bearer patterns inside a message are masked."""
        redact = Redactor()
        event = redact(None, "info", {"event": "GET /x?key=AIzaSyXYZ&page=2 api_key=abc Authorization: Bearer tok"})
        assert event["event"] == f"GET /x?key={REDACTED}&page=2 api_key={REDACTED} Authorization: Bearer {REDACTED}"

    def test_settings_secrets_are_found_in_nested_groups(self):
        """SecretStr values anywhere in a settings model (e.g. read from .env) are collected."""

        class Group(BaseModel):
            api_key: SecretStr | None = None

        class Outer(BaseModel):
            name: str = "x"
            group: Group = Group()
            token: SecretStr = SecretStr("short")

        found = settings_secrets(Outer(group=Group(api_key=SecretStr(SECRET))))
        assert found == (SECRET,)

    def test_short_or_harmless_values_are_not_treated_as_secrets(self):
        """Only long enough values of secret-looking variables are scrubbed (not every 'x')."""
        assert secret_values({"GITHUB_TOKEN": "abc", "PATH": "/usr/bin:/bin", "MY_SECRET": "longenough"}) == (
            "longenough",)
