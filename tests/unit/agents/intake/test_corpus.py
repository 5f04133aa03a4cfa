"""The conversation corpus (tests/intake_corpus): every scripted conversation of every class
passes, and the corpus is what the issue asks of it (at least 40 conversations, each class with
several). ``make eval-intake`` prints the same as rates per class."""

from __future__ import annotations

import pytest

from tests.intake_corpus.corpus import load, rates, run

CONVERSATIONS = load()


class TestCorpus:
    @pytest.mark.parametrize("conversation", CONVERSATIONS, ids=[c.id for c in CONVERSATIONS])
    def test_each_conversation_passes(self, conversation):
        """The conversation ends with exactly the expected facts (and said what it must)."""
        outcome = run(conversation)
        assert outcome.passed, outcome.problems

    def test_the_corpus_has_its_classes(self):
        """At least 40 conversations in at least 10 classes, three or more each."""
        per_class = {klass: total for klass, (_, total) in rates([_counted(c) for c in CONVERSATIONS]).items()}
        assert len(CONVERSATIONS) >= 40 and len(per_class) >= 10
        assert min(per_class.values()) >= 3, per_class


def _counted(conversation):  # noqa: ANN001, ANN202
    from tests.intake_corpus.corpus import Outcome

    return Outcome(conversation, True, ())
