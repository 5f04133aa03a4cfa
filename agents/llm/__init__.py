"""The provider-neutral LLM layer that coders use: settings → chat client → reply → code.

    config.py      LLMConfig: provider, model, endpoint, limits, the key (a SecretStr)
    providers.py   the LangChain chat model of each provider (Gemini, OpenAI-compatible, Ollama)
    errors.py      LLMError (typed by ErrorKind) and LLMUnavailable (exit 2)
    classify.py    any provider's exception → LLMError, with the key redacted
    client.py      ChatClient: one completion, retried with backoff, measured and logged
    accounting.py  CallRecord/CallLedger, Prometheus metrics, the structured log line
    extract.py     code out of a reply (fenced or not), checked with ast.parse, never run
    prompts.py     prompt templates kept in files, ``${name}`` placeholders, strict
    preflight.py   before a run: key present, endpoint reachable, model served

Nothing here runs generated code; the sandbox does that.
"""

from __future__ import annotations

from agents.llm.client import ChatClient, ChatMessage, ChatReply
from agents.llm.config import LLMConfig
from agents.llm.errors import ErrorKind, LLMError, LLMUnavailable

__all__ = ["ChatClient", "ChatMessage", "ChatReply", "ErrorKind", "LLMConfig", "LLMError", "LLMUnavailable"]
