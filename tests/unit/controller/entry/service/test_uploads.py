"""Uploaded targets: a statement PDF (+ result.csv, target.toml) in a multipart body, every byte
hostile: bounded size and parts, client file names ignored, nothing left behind when refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.runner.dispatch.workers import RunWorkers
from tests.conftest import ICICI
from tests.unit.controller.entry.service.conftest import Service, make_service
from tests.unit.controller.entry.service.test_app import assert_problem

PDF = next(ICICI.glob("*.pdf")).read_bytes()
CSV = (ICICI / "result.csv").read_bytes()


@pytest.fixture
def service(tmp_path: Path) -> Service:
    return make_service(tmp_path, upload_bytes=len(PDF) + len(CSV) + 64 * 1024, quota_per_token=1)


def uploads(service: Service) -> list[str]:
    """Everything under runs/uploads, relative."""
    root = service.runs_dir / "uploads"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


def test_an_uploaded_statement_is_queued_with_its_own_data_folder(service: Service):
    response = service.client.post(
        "/v1/runs", data={"target": "mybank", "max_attempts": "2"},
        files={"statement": ("../../../../etc/cron.d/evil.pdf", PDF, "application/pdf"),
               "result": ("x/../../result.csv", CSV, "text/csv")})
    assert response.status_code == 202, response.text
    run = response.json()
    assert (run["target"], run["options"]) == ("mybank", {"max_attempts": 2, "upload": run["id"]})
    assert uploads(service) == [run["id"], f"{run['id']}/mybank", f"{run['id']}/mybank/result.csv",
                                f"{run['id']}/mybank/statement.pdf"]
    assert (service.runs_dir / "uploads" / run["id"] / "mybank" / "statement.pdf").read_bytes() == PDF
    row = service.store.get(run["id"])
    env = RunWorkers(service.state.settings, service.store, env={}).env_for(row)
    assert env["SBX_DATA_DIR"] == str(service.runs_dir / "uploads" / run["id"])


def test_the_default_target_name(service: Service):
    response = service.client.post("/v1/runs", files={"statement": ("s.pdf", PDF, "application/pdf")})
    assert response.status_code == 202 and response.json()["target"] == "upload"


@pytest.mark.parametrize(("data", "files", "status", "detail"), [
    ({}, {"statement": ("s.pdf", b"MZ not a pdf at all", "application/pdf")}, 422, ""),
    ({}, {"result": ("r.csv", CSV, "text/csv")}, 422, "a multipart submission needs the statement PDF"),
    ({}, {"statement": ("s.pdf", PDF, "application/pdf"), "script": ("x.sh", b"rm -rf /", "text/x-sh")}, 422,
     "unexpected part 'script'"),
    ({"target": "../../etc"}, {"statement": ("s.pdf", PDF, "application/pdf")}, 422, ""),
    ({"max_attempts": "0"}, {"statement": ("s.pdf", PDF, "application/pdf")}, 422, "invalid max_attempts"),
    ({"coder": "shell"}, {"statement": ("s.pdf", PDF, "application/pdf")}, 422, "invalid coder"),
    ({}, {"statement": ("s.pdf", PDF, "application/pdf"), "target_toml": ("t.toml", b"agent = [[[", "text/plain")},
     422, "target.toml is not valid TOML"),
])
def test_a_refused_upload_leaves_nothing_behind(service: Service, data, files, status, detail):
    body = assert_problem(service.client.post("/v1/runs", data=data, files=files), status)
    assert body["detail"].startswith(detail) or detail in body["detail"]
    assert "staging" not in body["detail"] and str(service.runs_dir) not in body["detail"]
    assert uploads(service) == [] and service.store.counts() == {}


def test_an_oversized_upload_is_413(service: Service):
    big = PDF + b"\0" * (service.state.settings.service.upload_bytes + 1)
    assert_problem(service.client.post("/v1/runs", files={"statement": ("s.pdf", big, "application/pdf")}), 413)
    assert uploads(service) == []


def test_ten_thousand_parts_are_refused(service: Service):
    boundary = "b0undary"
    parts = "".join(f'--{boundary}\r\nContent-Disposition: form-data; name="f{i}"\r\n\r\nx\r\n' for i in range(10_000))
    body = (parts + f"--{boundary}--\r\n").encode()
    small = make_service(service.runs_dir.parent / "big", upload_bytes=len(body) + 1024)
    response = small.client.post("/v1/runs", content=body,
                                 headers={"content-type": f"multipart/form-data; boundary={boundary}"})
    assert_problem(response, 400)
    assert uploads(small) == []


def test_quota_refusal_removes_the_upload(service: Service):
    files = {"statement": ("s.pdf", PDF, "application/pdf")}
    assert service.client.post("/v1/runs", files=files).status_code == 202
    before = uploads(service)
    assert_problem(service.client.post("/v1/runs", files=files), 429)
    assert uploads(service) == before


def test_other_content_types_are_415(service: Service):
    assert_problem(service.client.post("/v1/runs", content=b"target=icici",
                                       headers={"content-type": "application/x-www-form-urlencoded"}), 415)


@pytest.mark.parametrize("name", ["../../escape", "../escape", "a/b", ".."])
def test_a_target_name_that_is_a_path_writes_nothing_anywhere(service: Service, name: str):
    """The uploaded target's name is checked before anything is written under it (it once made
    ``runs/escape`` beside the staging folder, left behind after the 422)."""
    response = service.client.post("/v1/runs", data={"target": name},
                                    files={"statement": ("s.pdf", PDF, "application/pdf")})
    assert_problem(response, 422)
    assert not (service.runs_dir / "escape").exists() and not (service.runs_dir / "uploads" / "escape").exists()
    assert (not [p for p in (service.runs_dir / "uploads").glob("*")]
            if (service.runs_dir / "uploads").exists() else True)


class TestIdempotentUploads:
    def test_a_repeated_upload_gets_the_first_run_and_keeps_no_second_copy(self, service: Service):
        """Issue 31: three POSTs with one key made three runs; now one run, one upload."""
        files = {"statement": ("s.pdf", PDF, "application/pdf")}
        key = {"Idempotency-Key": "retry-1"}
        first = service.client.post("/v1/runs", data={"target": "mybank"}, files=files, headers=key)
        again = service.client.post("/v1/runs", data={"target": "mybank"}, files=files, headers=key)
        assert (first.status_code, again.status_code) == (202, 200)
        assert again.json()["id"] == first.json()["id"] and again.headers["idempotent-replayed"] == "true"
        assert [p for p in uploads(service) if "/" not in p] == [first.json()["id"]]
        other = service.client.post("/v1/runs", data={"target": "other"}, files=files, headers=key)
        assert_problem(other, 422)
        assert service.store.counts() == {"queued": 1}

    def test_an_upload_counts_its_bytes_until_it_is_removed(self, tmp_path: Path):
        service = make_service(tmp_path, upload_bytes=len(PDF) + 64 * 1024, upload_quota_bytes=len(PDF) + 1024)
        files = {"statement": ("s.pdf", PDF, "application/pdf")}
        first = service.client.post("/v1/runs", files=files).json()
        assert service.store.get(first["id"]).upload_bytes == len(PDF)
        body = assert_problem(service.client.post("/v1/runs", files=files), 429)
        assert "uploads would hold" in body["detail"]
        would, _, limit = body["detail"].partition("uploads would hold ")[2].partition(
            " on the service, more than its ")
        assert would != limit, body["detail"]  # issue 42: "0.1 MiB … more than its 0.1 MiB"
        service.client.post(f"/v1/runs/{first['id']}/cancel")
        assert uploads(service) == [] and service.client.post("/v1/runs", files=files).status_code == 202

    def test_a_disk_below_its_reserve_takes_no_upload(self, tmp_path: Path):
        service = make_service(tmp_path, upload_bytes=len(PDF) + 64 * 1024, min_free_bytes=1024**4)
        body = assert_problem(service.client.post("/v1/runs", files={"statement": ("s.pdf", PDF, "application/pdf")}),
                              507)
        assert "disk is nearly full" in body["detail"] and uploads(service) == []


class TestIdempotentRuns:
    def test_the_same_key_and_body_give_the_same_run(self, service: Service):
        key = {"Idempotency-Key": "k-1"}
        first = service.client.post("/v1/runs", json={"target": "icici", "max_attempts": 2}, headers=key)
        again = service.client.post("/v1/runs", json={"max_attempts": 2, "target": "icici"}, headers=key)
        assert (first.status_code, again.status_code) == (202, 200) and again.json()["id"] == first.json()["id"]

    def test_a_duplicate_that_passed_the_check_before_the_first_committed_is_a_replay(
            self, service: Service, monkeypatch: pytest.MonkeyPatch):
        """Issue 42: of concurrent duplicates, those that passed the pre-check while the first was
        still in its transaction got 202 without ``Idempotent-Replayed``. Here every request misses
        the pre-check (as a loser of that race does) and meets the first one inside the store."""
        monkeypatch.setattr("controller.entry.service.routes.replayed", lambda *args: None)
        key = {"Idempotency-Key": "race-1"}
        first = service.client.post("/v1/runs", json={"target": "icici"}, headers=key)
        again = service.client.post("/v1/runs", json={"target": "icici"}, headers=key)
        assert (first.status_code, again.status_code) == (202, 200)
        assert again.json()["id"] == first.json()["id"] and again.headers["idempotent-replayed"] == "true"
        assert "idempotent-replayed" not in first.headers and service.store.counts() == {"queued": 1}

    def test_the_same_key_with_another_body_is_422(self, service: Service):
        key = {"Idempotency-Key": "k-1"}
        service.client.post("/v1/runs", json={"target": "icici"}, headers=key)
        body = assert_problem(service.client.post("/v1/runs", json={"target": "sbi"}, headers=key), 422)
        assert "different request" in body["detail"]

    @pytest.mark.parametrize("key", ["", "x" * 256, "has space", "caf\u00e9"])
    def test_a_malformed_key_is_400(self, service: Service, key):
        assert_problem(service.client.post("/v1/runs", json={"target": "icici"},
                                           headers={"Idempotency-Key": key.encode()}), 400)


@pytest.mark.parametrize(("attempts", "status"), [("2", 202), ("2.0", 422), ("true", 422), ("0", 422)])
def test_a_forms_max_attempts_is_a_plain_whole_number(service: Service, attempts: str, status: int):
    """Issue 42: the form's text field is a number only when written as one (JSON is strict)."""
    reply = service.client.post("/v1/runs", data={"target": "mybank", "max_attempts": attempts},
                                files={"statement": ("s.pdf", PDF, "application/pdf")})
    assert reply.status_code == status, reply.text
    if status == 202:
        assert service.store.get(reply.json()["id"]).options["max_attempts"] == 2
