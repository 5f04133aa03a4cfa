"""The three roles as one object a run is given: deterministic rules, or a language model.

Each role is stateless: it is called with its narrow input and returns its output; nothing
of one call is kept for the next. :class:`OfflineRoles` is the deterministic rules
(:mod:`~agents.intake.resolver`, :mod:`~agents.intake.info`, :mod:`~agents.intake.decision`);
:class:`~agents.intake.llm_roles.LLMRoles` asks a model and falls back to these rules on
any failure, as the seed's fallbacks do.
"""

from __future__ import annotations

from typing import Protocol

from agents.intake.decision import decide
from agents.intake.info import InfoInput, next_question
from agents.intake.models import Decision, DecisionInput, Question, Resolution
from agents.intake.resolver import ResolverInput, resolve


class Roles(Protocol):
    """State resolver, info role and decision role; ``name`` is what summaries call them."""

    name: str

    def resolve(self, inp: ResolverInput) -> Resolution:
        """Every fact of one reply."""
        ...

    def ask(self, inp: InfoInput) -> Question | None:
        """The next question for one node, or None when it is complete."""
        ...

    def decide(self, inp: DecisionInput) -> Decision:
        """The next node with a reason, or done."""
        ...


class OfflineRoles:
    """The deterministic roles: patterns and rules, no model."""

    name = "offline"

    def resolve(self, inp: ResolverInput) -> Resolution:
        """See :func:`agents.intake.resolver.resolve`."""
        return resolve(inp)

    def ask(self, inp: InfoInput) -> Question | None:
        """See :func:`agents.intake.info.next_question`."""
        return next_question(inp)

    def decide(self, inp: DecisionInput) -> Decision:
        """See :func:`agents.intake.decision.decide`."""
        return decide(inp)
