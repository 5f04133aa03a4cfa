"""``POST /v1/checks`` and ``GET /v1/checks/{id}`` without an engine: what is accepted, where it is
put, what the worker's child is told, and that every refusal is one problem line with nothing
left on disk or in the store."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from controller.entry.service.check_submit import safe_name
from controller.runner.dispatch import child
from controller.runner.dispatch.workers import RunWorkers
from tests.conftest import ICICI
from tests.unit.controller.entry.service.conftest import Service, make_service
from tests.unit.controller.entry.service.test_app import assert_problem

PDF = next(ICICI.glob("*.pdf")).read_bytes()
PARSER = b"def parse(pdf_path):\n    return None\n"


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def bomb(size: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, archive.open("zeros.py", "w") as member:
        for _ in range(size // (1 << 20)):
            member.write(bytes(1 << 20))
    return buffer.getvalue()


@pytest.fixture
def service(tmp_path: Path) -> Service:
    return make_service(tmp_path, upload_bytes=4 * 1024 * 1024, quota_per_token=5, check_files=3,
                        zip_member_bytes=2 * 1024 * 1024)


def uploads(service: Service) -> list[str]:
    root = service.runs_dir / "uploads"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


def post(service: Service, data: dict[str, str], files: list, **headers: str):
    return service.client.post("/v1/checks", data=data, files=files, headers=headers)


class TestAccepted:
    def test_parsers_against_a_named_target(self, service: Service):
        """Client file names are reduced to safe ones; the check is a queued run row of kind check."""
        response = post(service, {"target": "icici", "jobs": "2"},
                        [("parser", ("../../etc/good.py", PARSER, "text/x-python")),
                         ("parser", ("good.py", PARSER, "text/x-python"))])
        assert response.status_code == 202, response.text
        check = response.json()
        assert response.headers["location"] == f"/v1/checks/{check['id']}" == check["links"]["self"]
        assert check["links"]["events"] == f"/v1/runs/{check['id']}/events"
        assert (check["status"], check["agent"], check["target"], check["summary"]) == \
            ("queued", "bank_parser", "icici", None)
        assert check["options"] == {"kind": "check", "jobs": 2,
                                    "paths": ["_submissions/good.py", "_submissions/good-2.py"]}
        assert uploads(service) == [check["id"], f"{check['id']}/_submissions",
                                    f"{check['id']}/_submissions/good-2.py", f"{check['id']}/_submissions/good.py"]
        command = child.command(service.store.get(check["id"]), service.runs_dir / check["id"])
        upload = service.runs_dir / "uploads" / check["id"]
        assert command[1:] == ["-m", "controller", "check", "--watch-stdin", "--run-id", check["id"],
                               "--target", "icici", "--jobs", "2", "--parser",
                               str(upload / "_submissions/good.py"), str(upload / "_submissions/good-2.py")]
        assert service.client.get(f"/v1/checks/{check['id']}").json()["status"] == "queued"
        assert service.client.get(f"/v1/runs/{check['id']}").status_code == 200  # a run of another kind

    def test_a_zipped_submission_on_an_uploaded_target(self, service: Service):
        """The zip is extracted under its own (safe) name; the worker's child reads the uploaded target."""
        submission = zipped({"requirements.txt": b"pandas\n", "custom_parsers/mybank_parser.py": PARSER})
        response = post(service, {"target": "mybank", "as_of": "2025-01-31"},
                        [("statement", ("s.pdf", PDF, "application/pdf")),
                         ("submission", ("alice's work.zip", submission, "application/zip"))])
        assert response.status_code == 202, response.text
        check = response.json()
        assert check["options"] == {"kind": "check", "as_of": "2025-01-31", "upload": check["id"],
                                    "paths": ["_submissions/alice_s_work"]}
        folder = service.runs_dir / "uploads" / check["id"]
        assert (folder / "_submissions/alice_s_work/custom_parsers/mybank_parser.py").read_bytes() == PARSER
        assert (folder / "mybank" / "statement.pdf").read_bytes() == PDF
        env = RunWorkers(service.state.settings, service.store, env={}).env_for(service.store.get(check["id"]))
        assert env["SBX_DATA_DIR"] == str(folder)

    def test_a_check_summary_is_served_with_its_verdicts(self, service: Service):
        check = post(service, {"target": "icici"}, [("parser", ("p.py", PARSER, "text/x-python"))]).json()
        summary = {"schema_version": 1, "kind": "check", "status": "failed", "passed": 0, "failed": 1,
                   "unverified": 0, "verdicts": [{"name": "p.py", "status": "fail", "rows": None, "seconds": 0.4,
                                                  "first_difference": "type_error: parse returned None"}]}
        service.store.claim("w", 30.0)
        service.store.finish(check["id"], "w", "failed", exit_code=1, summary=summary)
        body = service.client.get(f"/v1/checks/{check['id']}").json()
        assert (body["status"], body["exit_code"]) == ("failed", 1)
        assert body["summary"]["verdicts"][0]["first_difference"] == "type_error: parse returned None"


    def test_a_queued_check_is_cancelled_and_counts_against_the_quota(self, service: Service):
        """A check is a run row: the run endpoints cancel it (its upload removed at once, which frees its
        place), and it takes a place in the token's quota."""
        files = [("parser", ("p.py", PARSER, "text/x-python"))]
        first = post(service, {"target": "icici"}, files).json()
        assert service.client.post(f"/v1/runs/{first['id']}/cancel").status_code == 202
        assert service.client.get(f"/v1/checks/{first['id']}").json()["status"] == "cancelled"
        assert not any(path.startswith(first["id"]) for path in uploads(service))
        for _ in range(5):
            assert post(service, {"target": "icici"}, files).status_code == 202
        assert_problem(post(service, {"target": "icici"}, files), 429)
        assert len(uploads(service)) == 5 * 3  # the refused one left nothing


class TestRefused:
    @pytest.mark.parametrize(("data", "files", "detail"), [
        ({"target": "mybank"}, [("statement", ("s.pdf", PDF, "application/pdf"))], "a check needs parser files"),
        ({}, [("parser", ("p.py", PARSER, "text/x-python"))], "name a target"),
        ({"target": "nope"}, [("parser", ("p.py", PARSER, "text/x-python"))], "unknown target 'nope'"),
        ({"target": "service-contract"}, [("parser", ("p.py", PARSER, "text/x-python"))], "the service checks parsers"),
        ({"target": "icici", "as_of": "yesterday"}, [("parser", ("p.py", PARSER, "text/x-python"))], "invalid as_of"),
        ({"target": "icici", "as_of": "2025-13-45"}, [("parser", ("p.py", PARSER, "text/x-python"))], "invalid as_of"),
        ({"target": "icici", "jobs": "0"}, [("parser", ("p.py", PARSER, "text/x-python"))], "invalid jobs"),
        ({"target": "icici", "coder": "x"}, [("parser", ("p.py", PARSER, "text/x-python"))], "unexpected part 'coder'"),
        ({"target": "../x"}, [("statement", ("s.pdf", PDF, "application/pdf")),
                              ("parser", ("p.py", PARSER, "text/x-python"))], "invalid target"),
        ({"target": "icici"}, [("parser", ("p.py", PARSER, "text/x-python"))] * 4, "at most 3 parser and zip files"),
        ({"target": "icici"}, [("submission", ("s.zip", zipped({"README.md": b"hi"}), "application/zip"))],
         "s.zip holds no .py file"),
        ({"target": "icici"}, [("submission", ("s.zip", zipped({"../evil.py": PARSER}), "application/zip"))],
         "s.zip: the member '../evil.py' has an empty, '.' or '..' part"),
        ({"target": "icici"}, [("submission", ("s.zip", PDF[:5000], "application/zip"))], "s.zip is not a zip"),
        ({"target": "icici"}, [("submission", ("s.zip", zipped({"a/p.py": PARSER, "a/.git/config": b"[core]"}),
                                               "application/zip"))], "s.zip holds a .git folder"),
    ])
    def test_a_refused_check_leaves_nothing_behind(self, service: Service, data, files, detail):
        body = assert_problem(post(service, data, files), 422)
        assert detail in body["detail"]
        assert "staging" not in body["detail"] and str(service.runs_dir) not in body["detail"]
        assert uploads(service) == [] and service.store.counts() == {}

    def test_a_zip_bomb_is_413_with_nothing_left(self, service: Service):
        body = assert_problem(post(service, {"target": "icici"},
                                   [("parser", ("ok.py", PARSER, "text/x-python")),
                                    ("submission", ("bomb.zip", bomb(64 << 20), "application/zip"))]), 413)
        assert "bomb.zip: the member 'zeros.py' inflates to more than 2097152 bytes" in body["detail"]
        assert uploads(service) == [] and service.store.counts() == {}

    def test_not_multipart_is_415(self, service: Service):
        assert_problem(service.client.post("/v1/checks", json={"target": "icici"}), 415)

    def test_draining_is_503(self, service: Service):
        service.state.draining.set()
        assert_problem(post(service, {"target": "icici"}, [("parser", ("p.py", PARSER, "text/x-python"))]), 503)


class TestTenancy:
    def test_another_tenants_check_is_404_and_a_run_is_not_a_check(self, service: Service):
        alice, bob = service.token("alice"), service.token("bob")
        check = service.client.post("/v1/checks", data={"target": "icici"}, headers=alice,
                                    files=[("parser", ("p.py", PARSER, "text/x-python"))]).json()
        assert service.client.get(f"/v1/checks/{check['id']}", headers=alice).status_code == 200
        assert_problem(service.client.get(f"/v1/checks/{check['id']}", headers=bob), 404)
        assert_problem(service.client.get(f"/v1/runs/{check['id']}/events", headers=bob), 404)
        assert_problem(service.client.get(f"/v1/checks/{check['id']}"), 401)
        run = service.run("r-1", "alice")
        assert_problem(service.client.get(f"/v1/checks/{run.id}", headers=alice), 404)


@pytest.mark.parametrize(("client", "suffix", "name"), [
    ("../../x/good.py", ".py", "good.py"), ("C:\\Users\\me\\p.py", ".py", "p.py"), (".env", ".py", ".py"),
    ("", ".py", "part7.py"), ("sub.zip", "", "sub"), ("a b$c.zip", "", "a_b_c"),
    ("x" * 300 + ".py", ".py", "x" * 64 + ".py"),
])
def test_safe_name(client: str, suffix: str, name: str):
    """The client's name reduced to a safe one, or a numbered one."""
    assert safe_name(client, suffix, set(), 7) == (name if name != ".py" else "env.py")


class TestIdempotentChecks:
    def test_a_repeated_check_gets_the_first_one(self, service: Service):
        files = [("parser", ("p.py", PARSER, "text/x-python"))]
        first = post(service, {"target": "icici"}, files, **{"Idempotency-Key": "c-1"})
        again = post(service, {"target": "icici"}, files, **{"Idempotency-Key": "c-1"})
        assert (first.status_code, again.status_code) == (202, 200) and first.json()["id"] == again.json()["id"]
        assert len(uploads(service)) == 3

    def test_another_parser_under_the_same_key_is_422(self, service: Service):
        post(service, {"target": "icici"}, [("parser", ("p.py", PARSER, "text/x-python"))],
             **{"Idempotency-Key": "c-1"})
        other = post(service, {"target": "icici"}, [("parser", ("p.py", PARSER + b"\n# changed\n", "text/x-python"))],
                     **{"Idempotency-Key": "c-1"})
        assert_problem(other, 422)
        assert len(uploads(service)) == 3
