"""The generated references (tools/docs_gen.py): committed files equal what the code produces."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import BaseModel

from controller.entry.cli import build_parser
from controller.entry.service.app import create_app
from controller.entry.service.state import ServiceState
from controller.platform.settings import PROJECT_ROOT, Settings
from controller.platform.store.sqlite import SqliteStore
from tools import docs_gen

REFERENCE = PROJECT_ROOT / "docs" / "reference"


@pytest.fixture(scope="module")
def produced():
    """Every generated file's text as the code produces it today (the app is built once)."""
    return {path.name: produce() for path, produce in docs_gen.pages().items()}


class TestCommittedReferences:
    @pytest.mark.parametrize("name", ["settings.md", "cli.md", "openapi.json", "api.md"])
    def test_committed_file_is_what_the_code_produces(self, produced, name):
        """docs/reference/<name> is exactly what `python -m tools.docs_gen` writes today."""
        committed = (REFERENCE / name).read_text(encoding="utf-8")
        assert committed == produced[name], f"docs/reference/{name} drifted: run `python -m tools.docs_gen`"

    def test_openapi_document_is_the_apps(self, tmp_path):
        """The committed openapi.json equals app.openapi() of an app built here, apart from the generator."""
        settings = Settings(_env_file=None, data_dir=PROJECT_ROOT / "data", runs_dir=tmp_path / "runs",  # type: ignore[call-arg]
                            parsers_dir=tmp_path / "custom_parsers")
        app = create_app(ServiceState(settings, SqliteStore(tmp_path / "service.sqlite"), engine_probe=lambda: None))
        assert json.loads((REFERENCE / "openapi.json").read_text(encoding="utf-8")) == app.openapi()


class TestSettingsPage:
    def test_every_field_has_its_variable(self, produced):
        """Each top-level field, and each field of a nested group, is a row named by its SBX_ variable."""
        page = produced["settings.md"]
        for name in ("data_dir", "max_attempts", "parallel_runs", "sandbox_backend"):
            assert f"`SBX_{name.upper()}`" in page
        for name in Settings.model_fields["service"].annotation.model_fields:  # type: ignore[union-attr]
            assert f"`SBX_SERVICE__{name.upper()}`" in page

    def test_no_machine_path_in_a_default(self, produced):
        """A default inside the project is shown relative to it, never as this machine's path."""
        assert str(PROJECT_ROOT) not in produced["settings.md"]
        assert "| `SBX_IMAGES_DIR` | `Path` | `sandbox_images` |" in produced["settings.md"]


class TestCliPage:
    def test_every_command_has_a_section(self, produced):
        """Each sub-command (and nested one, e.g. tokens add) has its heading."""
        commands = docs_gen._subcommands(build_parser())
        assert len(commands) >= 9
        for name, _, _ in commands:
            assert f"## `python -m controller {name}`" in produced["cli.md"]
        assert "### `python -m controller tokens add`" in produced["cli.md"]

    def test_hidden_options_stay_hidden(self, produced):
        """Options the service passes its children (help=SUPPRESS) are not documented."""
        assert "--watch-stdin" not in produced["cli.md"] and "--run-id" not in produced["cli.md"]


class TestApiPage:
    def test_every_operation_has_a_heading(self, produced):
        """Each method and path of the OpenAPI document is a heading of the page."""
        document = json.loads(produced["openapi.json"])
        for path, methods in document["paths"].items():
            for method in methods:
                assert f"### {method.upper()} `{path}`" in produced["api.md"]


    @pytest.mark.parametrize("schema, expected", [
        ({"type": "integer", "minimum": 1, "maximum": 100, "default": 20}, "integer 1-100 (default 20)"),
        ({"anyOf": [{"enum": ["queued", "running"], "type": "string"}, {"type": "null"}]}, "queued \\| running"),
        ({"anyOf": [{"type": "string", "maxLength": 128}, {"type": "null"}]}, "string"),
    ])
    def test_a_parameter_type_reads_in_a_few_words(self, schema, expected):
        """A parameter's schema becomes its type, bounds, enum values and default; null drops out."""
        assert docs_gen._schema_type(schema) == expected


class TestCheckMode:
    def test_check_names_stale_files_and_writes_nothing(self, tmp_path, monkeypatch, capsys):
        """`--check` against a folder missing the references exits 1, names them and writes nothing."""
        monkeypatch.setattr(docs_gen, "REFERENCE", tmp_path)
        assert docs_gen.main(["--check"]) == 1
        assert "settings.md" in capsys.readouterr().out
        assert list(tmp_path.iterdir()) == []

    def test_check_passes_on_the_committed_files(self, capsys):
        """`--check` on the repository's own references exits 0."""
        assert docs_gen.main(["--check"]) == 0
        assert capsys.readouterr().out.strip() == "references up to date"


#: A row of a hand-written table whose first column is one setting and whose second is its default.
DEFAULT_ROW = re.compile(r"^\| `(SBX_[A-Z0-9_]+)` \| `?([^|`]+?)`? \|", re.MULTILINE)


def model_default(variable: str) -> object:
    """The default the settings model gives ``SBX_A__B`` (nested groups followed by ``__``)."""
    model: type[BaseModel] = Settings
    *groups, leaf = variable.removeprefix("SBX_").lower().split("__")
    for group in groups:
        model = model.model_fields[group].annotation  # type: ignore[assignment]
    info = model.model_fields[leaf]
    return info.default_factory() if info.default_factory is not None else info.default  # type: ignore[call-arg]


def same_default(written: str, value: object) -> bool:
    """Whether a table's text states ``value`` (numbers compared as numbers, booleans in lower case).

    An unset or empty default is written in words ("unset", "per provider", "<runs_dir>/..."): any
    text that is not a number stands for it.
    """
    if value is None or value == "":
        return not re.fullmatch(r"[-+]?[0-9.]+", written)
    if isinstance(value, bool):
        return written == str(value).lower()
    if isinstance(value, int | float):
        return float(written) == float(value)
    return written == str(value)


class TestHandWrittenDefaults:
    @pytest.mark.parametrize("page", sorted(p.name for p in (PROJECT_ROOT / "docs").glob("*.md")))
    def test_a_default_in_a_table_is_the_models(self, page):
        """A hand-written docs/ table row `SBX_X | default` states the default the model has today."""
        text = (PROJECT_ROOT / "docs" / page).read_text(encoding="utf-8")
        wrong = [(name, written, model_default(name)) for name, written in DEFAULT_ROW.findall(text)
                 if not same_default(written.strip(), model_default(name))]
        assert wrong == []

    def test_a_changed_default_is_caught(self):
        """A row whose default differs from the model's (512 MiB sandboxes written as 256) is reported."""
        name, written = DEFAULT_ROW.findall("| `SBX_SANDBOX__MEMORY_MB` | 256 | memory |")[0]
        assert (name, written) == ("SBX_SANDBOX__MEMORY_MB", "256")
        assert not same_default(written, model_default(name)) and same_default("512", model_default(name))
