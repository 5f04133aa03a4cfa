"""The three roles with a language model (``SBX_CODER`` = gemini, openai or ollama).

Each role renders its prompt (``prompts/``) from its narrow input only, so the decision
role's prompt holds no reply and no question. A reply is hostile text: its one JSON object
is decoded within bounds (:mod:`agents.bounded_json`), validated with pydantic, then
checked against the schemas and the rules a model may not break (an existing node and
field, a value of the field's type, a question not asked before, a next node with
questions left). Anything else (a failed call, no JSON, a broken rule) falls back to the
deterministic role for that call, as the seed's fallbacks do, and says so in the output.
Conflict confirmations use the rules (they carry the conflict's id, which a model never sees).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal, TypeVar

import structlog
from pydantic import BaseModel, Field, ValidationError

from agents.bounded_json import BoundedJSONError, JSONBounds, loads_bounded
from agents.intake.decision import decide
from agents.intake.info import InfoInput, next_question, open_questions
from agents.intake.models import (
    Decision,
    DecisionInput,
    FactUpdate,
    Proposal,
    Question,
    Resolution,
    Scalar,
)
from agents.intake.patterns import EVENT_NAMES, MAX_REPLY_CHARS, keyword_at, temporal
from agents.intake.resolver import (
    ResolverInput,
    confirmation,
    has_answer,
    reasoning,
    resolve,
    with_conflicts,
)
from agents.intake.values import check
from agents.llm.client import ChatClient, ChatMessage
from agents.llm.errors import LLMError
from agents.llm.preflight import checked_client
from agents.llm.prompts import PromptFolder
from agents.ports.config import AgentConfig
from agents.untrusted_text import one_line

log = structlog.get_logger("sandloop.intake")
PROMPTS = PromptFolder(Path(__file__).resolve().parent / "prompts")
REPLY_BOUNDS = JSONBounds(max_bytes=64 * 1024, max_depth=4, max_values=2000)
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n\s*```", re.DOTALL)
Model = TypeVar("Model", bound=BaseModel)


class Unusable(ValueError):
    """The model's reply cannot be used; the rules answer instead."""


class _Update(BaseModel):
    node_name: str = Field(max_length=40)
    field_name: str = Field(max_length=40)
    value: Scalar | None = None
    confidence: float = Field(0.8, ge=0, le=1)
    temporal_context: Literal["past", "present", "future"] = "present"
    is_correction: bool = False
    skipped: bool = False
    reasoning: str = Field("", max_length=500)


class _ResolverReply(BaseModel):
    updates: list[_Update] = Field(default_factory=list, max_length=30)
    answer_consumed_for_current_node: bool = False
    priority_shift: str | None = None
    reasoning: str = Field("", max_length=1000)


class _InfoReply(BaseModel):
    complete: bool
    field: str | None = Field(None, max_length=40)
    question: str | None = Field(None, min_length=3, max_length=300)


class _DecisionReply(BaseModel):
    next_node: str | None = Field(None, max_length=40)
    reason: str = Field("", max_length=500)
    visited_all: bool = False


class LLMRoles:
    """State resolver, info and decision roles asking ``client``'s model, with the rules as fallback."""

    def __init__(self, client: ChatClient, prompts: PromptFolder = PROMPTS) -> None:
        self.client = client
        self.prompts = prompts
        self.name = client.config.label

    def resolve(self, inp: ResolverInput) -> Resolution:
        """Every fact of the reply, as the model reads it (rules for confirmations and on failure)."""
        if inp.question.kind in ("confirm", "propose", "changes"):
            return resolve(inp)  # these carry what the rules must compare with (a conflict, a value, the held facts)
        values = {"schemas": _dump({n: s.model_dump(by_alias=True, exclude_none=True) for n, s in inp.schemas.items()}),
                  "values": _dump(inp.values), "events": ", ".join(EVENT_NAMES),
                  "question": _dump({"node": inp.question.node, "field": inp.question.field,
                                     "text": inp.question.text}),
                  "reply": inp.reply[:MAX_REPLY_CHARS]}
        try:
            reply = self._call("resolve", values, _ResolverReply)
            return _resolution(reply, inp)
        except Unusable as exc:
            fallback = resolve(inp)
            return Resolution(fallback.updates, fallback.answered, fallback.priority_shift, fallback.keep_conflict,
                              f"{fallback.reasoning} (rules: the model's reply was unusable: {exc})")

    def ask(self, inp: InfoInput) -> Question | None:
        """The model phrases the next question and picks its field among those still open."""
        left = [q for q in open_questions(inp) if q.kind != "confirm"]
        if inp.open_conflicts or not left:
            return next_question(inp)
        values = {"node": inp.node, "schema": _dump(inp.schema.model_dump(by_alias=True, exclude_none=True)),
                  "values": _dump(inp.values), "skipped": ", ".join(sorted(inp.skipped)) or "none",
                  "conflicts": "[]", "asked": ", ".join(sorted(inp.asked)) or "none",
                  "open": ", ".join(q.field for q in left),
                  "conversation": _dump([{"question": t["question"].get("text", ""),
                                          "reply": t["reply"][:MAX_REPLY_CHARS],
                                          "refused": [r.get("reason", "") for r in t.get("rejected", [])]}
                                         for t in inp.conversation[-8:]])}
        try:
            reply = self._call("ask", values, _InfoReply)
        except Unusable:
            return next_question(inp)
        chosen = next((q for q in left if q.field == reply.field), None)
        if reply.complete or chosen is None or reply.question is None:
            return left[0]  # a field is still open: the rules' question, never a premature "complete"
        return Question(chosen.node, chosen.field, one_line(reply.question, 300), chosen.kind)

    def decide(self, inp: DecisionInput) -> Decision:
        """The model's next node, if it is a node with questions left (else the rules')."""
        values = {"goal": inp.goal, "previous": inp.previous, "events": ", ".join(inp.priority_events) or "none",
                  "nodes": _dump([{"name": n.name, "pending": n.pending, "missing_required": list(n.missing_required),
                                   "open_conflicts": n.open_conflicts, "priority_on": list(n.priority_on),
                                   "priority": n.priority, "goal_terms": list(n.goal_terms), "always": n.always}
                                  for n in inp.nodes]),
                  "data": _dump(inp.data)}
        try:
            reply = self._call("decide", values, _DecisionReply)
        except Unusable:
            return decide(inp)
        reason = one_line(reply.reason, 500)
        if reply.visited_all:
            return Decision(None, reason or "the model found every necessary fact collected", True)
        if reply.next_node not in {n.name for n in inp.nodes if n.pending > 0}:
            rules = decide(inp)
            return Decision(rules.next_node, f"{rules.reason} (rules: the model chose {str(reply.next_node)[:40]!r})",
                            rules.visited_all)
        return Decision(reply.next_node, reason or "the model's choice")

    def _call(self, role: str, values: dict[str, str], model: type[Model]) -> Model:
        messages = [ChatMessage("system", self.prompts.template("system").render({})),
                    ChatMessage("user", self.prompts.template(role).render(values))]
        try:
            text = self.client.complete(messages, purpose=f"intake-{role}", schema=model.model_json_schema()).text
            return model.model_validate(_json_object(text))
        except LLMError as exc:
            raise self._unusable(role, f"{exc.kind.value}: {exc.message}") from None
        except (BoundedJSONError, ValidationError) as exc:
            raise self._unusable(role, str(exc).splitlines()[0][:200]) from None

    def _unusable(self, role: str, why: str) -> Unusable:
        log.warning("intake.llm_fallback", role=role, reason=why)
        return Unusable(why)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _json_object(text: str) -> Any:
    """The reply's one JSON object: a fenced block's, else from the first ``{`` to the last ``}``."""
    fenced = _FENCE.search(text[: REPLY_BOUNDS.max_bytes * 2])
    body = fenced.group(1) if fenced else text[text.find("{"): text.rfind("}") + 1]
    document = loads_bounded(body.encode("utf-8", errors="replace"), REPLY_BOUNDS)
    if not isinstance(document, dict):
        raise BoundedJSONError("not a JSON object")
    return document


def _resolution(reply: _ResolverReply, inp: ResolverInput) -> Resolution:
    """The model's updates, each checked against the schemas; conflicts found by the same rule as offline."""
    updates, unsure = gated([_checked(u, inp) for u in reply.updates], inp)
    shift = reply.priority_shift if reply.priority_shift in EVENT_NAMES else None
    checked, keep, refreshed = confirmation(inp.reply, inp.question, updates)
    checked = with_conflicts(checked, inp.values)
    answered = has_answer(checked, inp.question) or keep is not None or bool(refreshed)
    return Resolution(tuple(checked), answered, shift, keep,
                      reasoning(checked, shift, keep, refreshed=refreshed)
                      + (f" — {reply.reasoning[:200]}" if reply.reasoning else ""), refreshed=refreshed,
                      unsure=tuple(unsure))


def gated(updates: list[FactUpdate], inp: ResolverInput) -> tuple[list[FactUpdate], list[Proposal]]:
    """The rules' precision gate on the model's facts (issue 40): a value is stored for the field the
    question asked, or for a field the reply's words name (a keyword, a cue, an option's words, the
    unit); any other becomes a question, never a silent guess."""
    lower = inp.reply.lower()
    kept, unsure = [], []
    for update in updates:
        spec = inp.schemas[update.node].properties[update.field]
        asked = (update.node, update.field) == (inp.question.node, inp.question.field)
        words = [*spec.keywords, *spec.cues, *(spec.enum or []), *(w for ws in spec.synonyms.values() for w in ws)]
        named = any(keyword_at(lower, word) >= 0 for word in words) or bool(spec.unit and spec.unit in lower)
        if asked or named or update.skipped or update.value is None:
            kept.append(update)
        else:
            unsure.append(Proposal(update.node, update.field, update.value, inp.reply[:120],
                                   "the model read it, but no word of the reply names the field"))
    return kept, unsure


def _checked(update: _Update, inp: ResolverInput) -> FactUpdate:
    schema = inp.schemas.get(update.node_name)
    spec = schema.properties.get(update.field_name) if schema else None
    if spec is None:
        raise Unusable(f"no field {update.node_name}.{update.field_name}")
    if update.skipped:
        return FactUpdate(update.node_name, update.field_name, None, skipped=True, source="user_skip",
                          reasoning=update.reasoning)
    checked = check(update.field_name, spec, update.value) if update.value is not None else None
    if checked is None or not checked.ok or (isinstance(update.value, str) and len(update.value) > 200):
        why = checked.reason if checked is not None and checked.reason else "no value"
        raise Unusable(f"{update.node_name}.{update.field_name} cannot be {update.value!r}: {why}")
    frame = spec.temporal or temporal(schema.question(update.field_name).lower()) if schema else "present"
    return FactUpdate(update.node_name, update.field_name, checked.value, update.temporal_context, frame,
                      update.is_correction, confidence=update.confidence, source="user_input (llm)",
                      reasoning=update.reasoning)


def make_llm_roles(settings: AgentConfig) -> LLMRoles:
    """The roles with the model ``settings.coder`` names, checked against its endpoint first.

    Raises:
        ConfigError: no key where one is needed, a rejected key, a model not served.
        LLMUnavailable: the endpoint does not answer.
    """
    return LLMRoles(checked_client(settings))
