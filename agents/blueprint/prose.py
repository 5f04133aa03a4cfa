"""A natural-language blueprint, turned into a JSON one by the configured LLM (seed 003's NL parser).

The model's reply is untrusted text: the blueprint is taken from its ```json block, decoded with
the bounded decoder and validated like a blueprint.json (:func:`agents.blueprint.loading.parse_blueprint`);
anything wrong is one line, exit 2. The result is kept under ``<runs_dir>/blueprints/`` keyed by
the prose and the model, so a resumed run (which plans again) and later runs of the same request
get the very same workflow and the model is asked once.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from agents.blueprint.loading import parse_blueprint
from agents.blueprint.model import Blueprint
from agents.llm.client import ChatClient, ChatMessage
from agents.llm.errors import LLMError
from agents.llm.extract import extract_fenced
from agents.llm.prompts import PromptFolder
from agents.ports.artefacts import write_atomic
from agents.ports.errors import ConfigError

PROMPTS = PromptFolder(Path(__file__).resolve().parent / "prompts")
CACHE_FOLDER = "blueprints"
MAX_PROSE_CHARS = 20_000
EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "acme-research" / "blueprint.json"
_EXAMPLE_FALLBACK = ('{"name": "acme-research", "title": "Acme Corp", "subject": "Acme Corp", '
                     '"sections": [{"title": "Overview"}]}')


class ProseParser:
    """Turns prose into a blueprint with one model call, cached per (model, prose)."""

    def __init__(self, client: ChatClient, cache_dir: Path) -> None:
        self.client = client
        self.cache_dir = cache_dir

    def parse(self, prose: str, files: list[str], source: Path) -> Blueprint:
        """The blueprint ``prose`` asks for (``files``: the data files the target holds).

        Raises:
            ConfigError: the prose is too long, the model failed or gave no valid blueprint.
        """
        if len(prose) > MAX_PROSE_CHARS:
            raise ConfigError(f"{source} has {len(prose)} characters; a blueprint request may have {MAX_PROSE_CHARS}")
        cached = self.cache_dir / f"{self._key(prose, files)}.json"
        if cached.is_file():
            return parse_blueprint(cached.read_bytes(), cached)
        blueprint = parse_blueprint(self._ask(prose, files, source).encode("utf-8"), source)
        write_atomic(cached, blueprint.model_dump_json(indent=2) + "\n")
        return blueprint

    def _key(self, prose: str, files: list[str]) -> str:
        material = "\n".join((self.client.config.label, prose, *files))
        return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]

    def _ask(self, prose: str, files: list[str], source: Path) -> str:
        user = PROMPTS.template("parse").render({"request": prose.strip(), "files": ", ".join(files) or "(none)",
                                                 "example": _example()})
        messages = [ChatMessage("system", PROMPTS.template("system").render({})), ChatMessage("user", user)]
        try:
            reply = self.client.complete(messages, purpose="blueprint")
        except LLMError as exc:
            raise ConfigError(f"{self.client.config.label} could not turn {source} into a blueprint: "
                              f"{exc.kind.value}: {exc.message}", hint="write blueprint.json instead") from None
        found = extract_fenced(reply.text, frozenset({"json"}), '"sections"')
        if found.code is None:
            raise ConfigError(f"{self.client.config.label} gave no blueprint for {source} ({found.problem})",
                              hint="write blueprint.json instead")
        return found.code


def _example() -> str:
    try:
        return EXAMPLE.read_text(encoding="utf-8").strip()
    except OSError:  # an installed package without the data folder
        return _EXAMPLE_FALLBACK
