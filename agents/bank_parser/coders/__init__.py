"""Coders: what writes parser code. ``make_coder`` picks one from the settings.

``offline`` (the default, no model) or an LLM coder: ``gemini``, ``openai`` (any
OpenAI-compatible endpoint) or ``ollama``. ``check_coder`` verifies an LLM coder's key,
endpoint and model before a run starts.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from agents.bank_parser.coders.base import (
    Coder,
    CoderExhausted,
    CoderFailed,
    FailureKind,
    Feedback,
    GeneratedCode,
)
from agents.lessons import Lesson
from agents.ports.config import LLM_CODERS, AgentConfig
from agents.ports.errors import ConfigError, first_line

__all__ = ["Coder", "CoderExhausted", "CoderFailed", "FailureKind", "Feedback", "GeneratedCode",
           "check_coder", "make_coder"]


def make_coder(settings: AgentConfig, *, lessons: Sequence[Lesson] = ()) -> Coder:
    """The coder named by ``settings.coder``; an LLM coder gets ``lessons`` for its prompts.

    Raises:
        ConfigError: an unknown coder, a missing API key, or model settings its client refuses.
    """
    if settings.coder == "offline":
        from agents.bank_parser.coders.offline import OfflineCoder  # lazy: the planner, only when it codes

        return OfflineCoder()
    if settings.coder in LLM_CODERS:
        return _llm_coder(settings, lessons)
    raise ConfigError(f"unknown coder {settings.coder!r}", hint=f"use one of offline, {', '.join(LLM_CODERS)}")


def _llm_coder(settings: AgentConfig, lessons: Sequence[Lesson]) -> Coder:
    # lazy: the LLM client libraries take 0.7-0.9 s to import; offline runs never load them
    from agents.bank_parser.coders.llm import LLMCoder
    from agents.llm.client import ChatClient
    from agents.llm.config import LLMConfig
    from agents.llm.providers import build_chat_model

    config = LLMConfig.from_settings(settings)
    config.require_key()
    try:
        model = build_chat_model(config)
    except (ValidationError, ValueError) as exc:
        raise ConfigError(f"the {config.provider} client refused the llm settings: {first_line(exc)}",
                          hint="see SBX_LLM__* in docs/llm.md") from None
    return LLMCoder(ChatClient(config, model), lessons=lessons)


def check_coder(coder: Coder) -> str:
    """Check an LLM coder's endpoint before the loop starts; '' for coders that need none.

    Raises:
        ConfigError: the key is missing or rejected, or the model is not served.
        LLMUnavailable: the endpoint does not answer.
    """
    if coder.name == "offline":
        return ""  # and no LLM client library is imported: a second of start-up saved
    # lazy: the LLM client libraries (0.7-0.9 s of start-up), only for an LLM coder
    from agents.bank_parser.coders.llm import LLMCoder
    from agents.llm.preflight import preflight

    if not isinstance(coder, LLMCoder):
        return ""
    lessons = f"; {len(coder.lessons)} lesson(s) from earlier runs" if coder.lessons else ""
    return f"coder {preflight(coder.client.config)}{lessons}"
