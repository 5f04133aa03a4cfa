"""Blueprint runs over the API (issue 33): ``POST /v1/runs`` takes a blueprint with its data and code
files, as JSON or as a multipart upload, with no folder on the server. The service writes the
target folder itself, checks it as ``run`` would, and leaves nothing behind when it refuses; the
client sends a blueprint file and the files it names."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from agents.ports.errors import TargetError
from controller.entry.cli import main
from controller.entry.service.client_blueprint import blueprint_body, named_files
from controller.platform.settings import PROJECT_ROOT
from controller.runner.dispatch.workers import RunWorkers
from tests.unit.controller.entry.service.conftest import Service, make_service
from tests.unit.controller.entry.service.test_app import assert_problem

CANDIDATE = PROJECT_ROOT / "data" / "candidate-brief"
ACME = PROJECT_ROOT / "data" / "acme-research"


@pytest.fixture
def service(tmp_path: Path) -> Service:
    return make_service(tmp_path, upload_bytes=2 * 1024 * 1024, quota_per_token=4)


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def uploads(service: Service) -> list[str]:
    root = service.runs_dir / "uploads"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


class TestMultipart:
    def test_a_blueprint_with_its_files_is_queued_with_its_own_folder(self, service: Service):
        bundle = zipped({name: (CANDIDATE / name).read_bytes() for name in ("candidate.json", "job.json")})
        response = service.client.post(
            "/v1/runs", headers=service.token("ana"), data={"max_attempts": "2"},
            files=[("blueprint", ("blueprint.json", (CANDIDATE / "blueprint.json").read_bytes(), "application/json")),
                   ("bundle", ("files.zip", bundle, "application/zip"))])
        assert response.status_code == 202, response.text
        run = response.json()
        assert (run["agent"], run["target"]) == ("blueprint", "candidate-brief")
        assert run["options"] == {"max_attempts": 2, "upload": run["id"], "blueprint": True}
        folder = service.runs_dir / "uploads" / run["id"] / "candidate-brief"
        assert sorted(p.name for p in folder.iterdir()) == ["blueprint.json", "candidate.json", "job.json",
                                                             "target.toml"]
        assert (folder / "target.toml").read_text() == 'agent = "blueprint"\n'
        row = service.store.get(run["id"])
        env = RunWorkers(service.state.settings, service.store, env={}).env_for(row)
        assert env["SBX_DATA_DIR"] == str(service.runs_dir / "uploads" / run["id"])

    def test_a_code_tool_can_come_as_a_file(self, service: Service):
        """A tool's code_file names an uploaded .py; the plan reads it into the tool (text only)."""
        document = json.loads((CANDIDATE / "blueprint.json").read_text())
        source = document["tools"][1].pop("code")
        document["tools"][1]["code_file"] = "match.py"
        response = service.client.post(
            "/v1/runs", headers=service.token("ana"),
            files=[("blueprint", ("b.json", json.dumps(document).encode(), "application/json")),
                   ("data", ("candidate.json", (CANDIDATE / "candidate.json").read_bytes(), "application/json")),
                   ("data", ("job.json", (CANDIDATE / "job.json").read_bytes(), "application/json")),
                   ("data", ("match.py", source.encode(), "text/x-python"))])
        assert response.status_code == 202, response.text
        folder = service.runs_dir / "uploads" / response.json()["id"] / "candidate-brief"
        assert (folder / "match.py").read_text() == source

    @pytest.mark.parametrize(("parts", "says"), [
        ([("data", ("candidate.json", b"{}", "application/json"))], "a blueprint run needs the blueprint"),
        ([("blueprint", ("b.json", b"[1]", "application/json"))], "is not a JSON object"),
        ([("blueprint", ("b.json", b"{nope", "application/json"))], "is not JSON"),
        ([("blueprint", ("b.json", (CANDIDATE / "blueprint.json").read_bytes(), "application/json"))],
         "names data file 'candidate.json', which is not a file"),
        ([("blueprint", ("b.json", (CANDIDATE / "blueprint.json").read_bytes(), "application/json")),
          ("data", ("../../etc/passwd", b"x", "text/plain"))], "needs a plain file name"),
        ([("blueprint", ("b.json", (CANDIDATE / "blueprint.json").read_bytes(), "application/json")),
          ("data", ("target.toml", b'agent = "idris"', "text/plain"))], "needs a plain file name"),
        ([("blueprint", ("b.json", (CANDIDATE / "blueprint.json").read_bytes(), "application/json")),
          ("bundle", ("z.zip", zipped({"deep/candidate.json": b"{}"}), "application/zip"))], "at its top level"),
        ([("blueprint", ("b.json", b'{"name": "x", "scenario": "nope", "title": "T", "subject": "S"}',
                         "application/json"))], "unknown scenario 'nope'"),
        ([("blueprint", ("b.json", (CANDIDATE / "blueprint.json").read_bytes(), "application/json")),
          ("bundle", ("z.zip", b"PK\x03\x04 not a zip", "application/zip"))], "zip"),
    ], ids=["no-blueprint", "not-object", "not-json", "missing-file", "path", "reserved", "folder", "scenario",
            "bad-zip"])
    def test_refused_with_one_line_and_nothing_left(self, service: Service, parts, says):
        response = service.client.post("/v1/runs", headers=service.token("ana"), files=parts)
        assert response.status_code in (413, 422), response.text
        assert says in response.json()["detail"] and "staging" not in response.json()["detail"]
        assert uploads(service) == [] and service.store.list_runs(owner=None, target=None, status=None, limit=10,
                                                                  cursor=None).runs == []


class TestJSON:
    def test_a_blueprint_with_its_files_as_text(self, service: Service):
        files = {name: (ACME / name).read_text() for name in ("company.json", "financials.csv", "news.json")}
        body = {"blueprint": json.loads((ACME / "blueprint.json").read_text()), "files": files, "target": "acme"}
        response = service.client.post("/v1/runs", headers=service.token("ana"), json=body)
        assert response.status_code == 202, response.text
        assert response.json()["target"] == "acme"
        assert (service.runs_dir / "uploads" / response.json()["id"] / "acme" / "financials.csv").read_text() == \
            files["financials.csv"]

    @pytest.mark.parametrize("name", ["", ".", "../x", "a/b", "target.toml"])
    def test_a_file_name_that_is_not_plain_is_refused(self, service: Service, name):
        """schemathesis found {"files": {"": ""}} writing the target folder itself (500)."""
        body = {"blueprint": json.loads((ACME / "blueprint.json").read_text()), "files": {name: "x"}}
        response = service.client.post("/v1/runs", headers=service.token("ana"), json=body)
        assert_problem(response, 422)
        assert "needs a plain file name" in response.json()["detail"] and uploads(service) == []

    def test_an_invalid_blueprint_names_the_field(self, service: Service):
        body = {"blueprint": {"name": "x", "title": "T", "subject": "S", "sections": [{"title": "A", "tools": ["t"]}]}}
        response = service.client.post("/v1/runs", headers=service.token("ana"), json=body)
        assert_problem(response, 422)
        assert "uses unknown tool(s): t" in response.json()["detail"] and uploads(service) == []

    def test_a_named_target_run_is_unchanged(self, service: Service):
        """JSON without a blueprint is the named-target run it always was."""
        response = service.client.post("/v1/runs", headers=service.token("ana"), json={"target": "icici"})
        assert response.status_code == 202 and response.json()["agent"] == "bank_parser"


class TestClient:
    def test_it_sends_the_blueprint_and_the_files_it_names(self):
        body = blueprint_body(CANDIDATE / "blueprint.json", {"max_attempts": 2, "coder": None})
        (blueprint, bundle) = body["files"]
        assert blueprint[0] == "blueprint" and bundle[0] == "bundle" and body["data"] == {"max_attempts": "2"}
        assert sorted(zipfile.ZipFile(io.BytesIO(bundle[1][1])).namelist()) == ["candidate.json", "job.json"]

    def test_code_files_are_sent_too(self):
        assert named_files({"tools": [{"name": "t", "files": ["a.csv"], "code_file": "t.py"}],
                            "qa": {"validators": [{"name": "v", "code_file": "v.py", "files": ["../x"]}]}}) == [
            "a.csv", "t.py", "v.py"]

    def test_a_missing_file_is_one_line_before_anything_is_sent(self, tmp_path: Path):
        (tmp_path / "blueprint.json").write_text((CANDIDATE / "blueprint.json").read_text())
        with pytest.raises(TargetError, match="no file .*candidate.json"):
            blueprint_body(tmp_path / "blueprint.json", {})

    def test_locally_it_says_to_add_a_server(self, capsys):
        assert main(["run", "--blueprint", str(CANDIDATE / "blueprint.json")]) == 2
        assert "--blueprint sends a blueprint to a service: add --server URL" in capsys.readouterr().err
