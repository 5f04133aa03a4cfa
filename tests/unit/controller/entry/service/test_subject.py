"""A conversation with a subject over the service: ``"subject"`` is checked when the run is accepted
(a safe name, an agent that keeps a graph memory) and reaches the worker's child as ``--subject``,
scoped to the tenant (issue 40); ``GET``/``DELETE /v1/subjects/{name}`` read and erase it, and another
tenant's subject is 404 like none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.intake.memory import GraphMemory
from agents.intake.models import FactUpdate, Question, Resolution
from controller.entry.service.subjects import AUDIT_FILE
from controller.platform.memory_sql import SqliteMemoryStores
from controller.runner.dispatch import child
from tests.unit.controller.entry.service.conftest import Service, make_service


@pytest.fixture
def service(tmp_path: Path) -> Service:
    return make_service(tmp_path, quota_per_token=4)


def test_a_subject_reaches_the_child(service: Service, tmp_path: Path):
    response = service.client.post("/v1/runs", headers=service.token("ana"),
                                   json={"target": "intake-day1", "subject": "Maria Silva"})
    assert response.status_code == 202, response.text
    row = service.store.get(response.json()["id"])
    command = child.command(row, tmp_path / "runs" / row.id)
    assert command[command.index("--subject") + 1] == "Maria Silva @ana"  # the tenant's own Maria Silva


@pytest.mark.parametrize(("body", "says"), [
    ({"target": "intake-day1", "subject": "../../etc"}, "is not a subject name"),
    ({"target": "intake-day1", "subject": "-rf"}, "is not a subject name"),
    ({"target": "acme-research", "subject": "Maria"}, "keeps no graph memory"),
])
def test_a_bad_subject_is_refused(service: Service, body, says):
    response = service.client.post("/v1/runs", headers=service.token("ana"), json=body)
    assert response.status_code == 422 and says in response.json()["detail"]


def _remember(runs_dir: Path, subject: str, city: str) -> None:
    """A fact in ``subject``'s memory, as a conversation leaves it."""
    memory = GraphMemory(SqliteMemoryStores(runs_dir).for_subject(subject), None, "r1")
    try:
        update = FactUpdate("Personal", "city", city, words=f"I live in {city}")
        memory.apply_updates(1, Question("Personal", "city", "?"), f"I live in {city}", Resolution((update,), True))
    finally:
        memory.close()


def test_a_tenant_reads_its_subject_and_another_tenant_gets_404(service: Service, tmp_path: Path):
    _remember(service.runs_dir, "Maria Silva @ana", "Porto")
    _remember(service.runs_dir, "Maria Silva @bo", "Leeds")
    ana, bo, cy = service.token("ana"), service.token("bo"), service.token("cy")
    mine = service.client.get("/v1/subjects/Maria Silva", headers=ana)
    assert mine.status_code == 200, mine.text
    body = mine.json()
    assert body["nodes"] == {"Personal": {"city": "Porto"}} and body["subject"] == "Maria Silva"
    assert body["history"]["Personal.city"][0]["value"] == "Porto" and body["conflicts"] == []
    assert service.client.get("/v1/subjects/Maria Silva", headers=bo).json()["nodes"]["Personal"]["city"] == "Leeds"
    other = service.client.get("/v1/subjects/Maria Silva", headers=cy)
    nobody = service.client.get("/v1/subjects/Nobody", headers=cy)
    assert other.status_code == nobody.status_code == 404
    assert other.headers["content-type"] == "application/problem+json"
    assert service.client.get("/v1/subjects/Maria Silva").status_code == 401


def test_erasing_a_subject_is_the_tenants_own_and_audited(service: Service):
    _remember(service.runs_dir, "Maria Silva @ana", "Porto")
    ana, cy = service.token("ana"), service.token("cy")
    assert service.client.delete("/v1/subjects/Maria Silva", headers=cy).status_code == 404
    assert service.client.get("/v1/subjects/Maria Silva", headers=ana).status_code == 200  # untouched by cy
    erased = service.client.delete("/v1/subjects/Maria Silva", headers=ana)
    assert erased.status_code == 200 and erased.json() == {"subject": "Maria Silva", "erased": True}
    assert service.client.get("/v1/subjects/Maria Silva", headers=ana).status_code == 404
    lines = [json.loads(line) for line in (service.runs_dir / AUDIT_FILE).read_text().splitlines()]
    assert [(e["action"], e["by"]) for e in lines] == [("subject.erase", "ana")]
    assert "Maria" not in (service.runs_dir / AUDIT_FILE).read_text()  # the erased person's name is not kept
    assert service.client.delete("/v1/subjects/Maria Silva", headers=ana).status_code == 404


def test_a_bad_subject_name_is_a_problem(service: Service):
    response = service.client.get("/v1/subjects/-rf", headers=service.token("ana"))
    assert response.status_code == 422 and "is not a subject name" in response.json()["detail"]
