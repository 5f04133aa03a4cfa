"""Structured output per provider (issue 40): the schema each provider is given, references inlined."""

from __future__ import annotations

from pydantic import BaseModel, SecretStr

from agents.llm.config import LLMConfig
from agents.llm.providers import build_chat_model, inline_refs, structured


class _Item(BaseModel):
    name: str


class _Reply(BaseModel):
    items: list[_Item]


def test_references_are_inlined_and_titles_dropped():
    schema = inline_refs(_Reply.model_json_schema())
    assert schema["properties"]["items"]["items"] == {"properties": {"name": {"type": "string"}},
                                                      "required": ["name"], "type": "object"}
    assert "$defs" not in schema and "title" not in schema


def test_a_recursive_reference_is_cut():
    schema = {"$defs": {"n": {"properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}
    assert "$ref" not in str(inline_refs(schema, depth=3))


def test_each_provider_gets_its_own_form():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    ollama = structured(build_chat_model(LLMConfig("ollama", "m", "http://127.0.0.1:1")), "ollama", schema, "p")
    assert ollama.format == schema  # type: ignore[attr-defined]
    gemini = structured(build_chat_model(LLMConfig("gemini", "m", None, api_key=SecretStr("k" * 39))), "gemini",
                        schema, "p")
    assert gemini.response_schema == schema and gemini.response_mime_type == "application/json"  # type: ignore[attr-defined]
    openai = structured(build_chat_model(LLMConfig("openai", "m", "http://127.0.0.1:1", api_key=SecretStr("k" * 12))),
                        "openai", schema, "p")
    assert openai.kwargs["response_format"]["json_schema"]["schema"] == schema  # type: ignore[attr-defined]
