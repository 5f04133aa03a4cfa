"""A conversation with a subject over the service: ``"subject"`` is checked when the run is accepted
(a safe name, an agent that keeps a graph memory) and reaches the worker's child as ``--subject``."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.entry.service import child
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
    assert command[command.index("--subject") + 1] == "Maria Silva"


@pytest.mark.parametrize(("body", "says"), [
    ({"target": "intake-day1", "subject": "../../etc"}, "is not a subject name"),
    ({"target": "intake-day1", "subject": "-rf"}, "is not a subject name"),
    ({"target": "acme-research", "subject": "Maria"}, "keeps no graph memory"),
])
def test_a_bad_subject_is_refused(service: Service, body, says):
    response = service.client.post("/v1/runs", headers=service.token("ana"), json=body)
    assert response.status_code == 422 and says in response.json()["detail"]
