"""The console's blueprint editor (issue 41): a scenario's template to start from, a blueprint
validated against its model with each mistake at its member, the files its tools read attached,
and a valid one accepted as a run (the service's own blueprint path)."""

from __future__ import annotations

import json
import re

from controller.platform.settings import PROJECT_ROOT
from tests.unit.controller.entry.console.conftest import Console

ACME = PROJECT_ROOT / "data" / "acme-research"
FILES = ("company.json", "financials.csv", "news.json")


def post(console: Console, text: str, files: tuple[str, ...] = (), **fields: str):  # noqa: ANN201
    data = {"csrf": console.csrf("/blueprints/new"), "blueprint": text, **fields}
    parts = [("data", (name, (ACME / name).read_bytes())) for name in files]
    return console.client.post("/blueprints/new", data=data, files=parts or None, follow_redirects=False)


def test_a_scenario_fills_the_templates_sections(console: Console):
    page = console.client.get("/blueprints/new?scenario=company_research").text
    text = re.search(r"<textarea[^>]*>(.*?)</textarea>", page, re.S).group(1)
    document = json.loads(text.replace("&#34;", '"').replace("&quot;", '"').replace("&#39;", "'").replace("&amp;", "&"))
    assert document["scenario"] == "company_research"
    assert [s["title"] for s in document["sections"]][:2] == ["Company overview", "Financial performance"]
    assert '<option value="company_research" selected>' in page


def test_bad_json_and_bad_members_are_said_at_the_field(console: Console):
    response = post(console, "{not json")
    assert response.status_code == 422 and "(the JSON)" in response.text and 'aria-invalid="true"' in response.text
    document = json.loads((ACME / "blueprint.json").read_text())
    del document["subject"]
    document["sections"][0]["title"] = "x" * 200
    response = post(console, json.dumps(document))
    assert response.status_code == 422
    assert "<code>subject</code>: Field required" in response.text
    assert "<code>sections[0].title</code>: String should have at most 80 characters" in response.text


def test_the_tools_files_must_be_attached(console: Console):
    response = post(console, (ACME / "blueprint.json").read_text(), FILES[:1])
    assert response.status_code == 422
    assert 'id="bp-data-error"' in response.text and "financials.csv, news.json" in response.text


def test_a_valid_blueprint_with_its_files_is_run(console: Console):
    response = post(console, (ACME / "blueprint.json").read_text(), FILES, target="my-acme")
    assert response.status_code == 303 and response.headers["location"].startswith("/runs/")
    run_id = response.headers["location"].removeprefix("/runs/")
    row = console.store.get(run_id)
    assert row is not None and (row.agent, row.target, row.status) == ("blueprint", "my-acme", "queued")


def test_hostile_text_stays_text_and_a_post_without_csrf_is_refused(console: Console):
    response = post(console, '</textarea><script>alert(1)</script>')
    assert "<script>alert(1)" not in response.text and "&lt;/textarea&gt;&lt;script&gt;" in response.text
    refused = console.client.post("/blueprints/new", data={"blueprint": "{}"}, follow_redirects=False)
    assert refused.status_code == 403


def test_the_schema_is_the_blueprints(console: Console):
    schema = console.client.get("/blueprints/schema.json").json()
    assert {"name", "sections", "decision"} <= set(schema["properties"])
