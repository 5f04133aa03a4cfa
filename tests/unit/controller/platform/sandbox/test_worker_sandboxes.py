"""The workers' warm sandboxes without an engine: the pool follows the number of workers, keys are
learnt from runs' reports (bounded, validated, at most MAX_KEYS), containers are offered only to
runs of the same kind and agent and removed after the run, all closed at the end."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agents.ports.errors import EngineUnavailable
from agents.ports.sandbox import SandboxLimits, SandboxSpec
from controller.platform.sandbox import worker_sandboxes
from controller.platform.sandbox.pool import WarmContainer, WarmKey
from controller.platform.sandbox.warm_offer import (
    OFFER_ENV,
    REPORT_FILE,
    Report,
    WarmKeyModel,
    parse_offer,
    write_report,
)
from controller.platform.sandbox.worker_sandboxes import (
    MAX_HANDED_PER_RUN,
    MAX_KEYS,
    WorkerSandboxes,
    wanted,
)
from controller.platform.store import NewRun
from controller.platform.store.sqlite import SqliteStore
from controller.runner.dispatch.workers import RunWorkers
from tests.unit.controller.entry.service.conftest import make_settings
from tests.waiting import wait_for


def key(image: str = "sandloop/python-parser:abc", memory: int = 512) -> WarmKeyModel:
    spec = SandboxSpec(image=image, command=("python3", "p.py"), warm_command=("python3", "-m", "w"),
                       limits=SandboxLimits(memory_mb=memory), collect=("result.json",))
    made = WarmKeyModel.of(spec)
    assert made is not None
    return made


@dataclass
class Thing:
    id: str
    name: str = ""


@dataclass
class FakePool:
    wanted: list[WarmKey] = field(default_factory=list)
    forgotten: list[WarmKey] = field(default_factory=list)
    sizes: dict[WarmKey, int] = field(default_factory=dict)

    def want(self, spec: SandboxSpec, size: int | None = None) -> None:
        key = WarmKey.of(spec)
        assert key is not None and size is not None
        if key not in self.sizes:
            self.wanted.append(key)
        self.sizes[key] = size

    def forget(self, spec: SandboxSpec) -> None:
        self.forgotten.append(WarmKey.of(spec))  # type: ignore[arg-type]

    def idle_count(self) -> int:
        return len(self.wanted) - len(self.forgotten)


class FakeBackend:
    """Stands in for OfferingSandbox: hands out numbered containers."""

    made: list[FakeBackend] = []

    def __init__(self, client: Any, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.pool = FakePool()
        self.handed: list[str] = []
        self.closed = False
        FakeBackend.made.append(self)

    def hand_out(self, spec: SandboxSpec) -> WarmContainer | None:
        number = f"{len(self.handed):064x}"
        self.handed.append(number)
        return WarmContainer(Thing(number), Thing("", name=f"sandloop-{number[-12:]}"), ready_at=0, warmup_seconds=0.5)

    def close(self) -> None:
        self.closed = True


class FakeClient:
    def __init__(self, images: tuple[str, ...] = ("sandloop/python-parser:abc", "sandloop/python-parser:def")):
        self.images = self
        self.known = images
        self.closed = False

    def get(self, image: str) -> None:
        import docker.errors

        if image not in self.known:
            raise docker.errors.ImageNotFound(image)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    removed: list[tuple[Any, Any]] = []
    FakeBackend.made = []
    monkeypatch.setattr(worker_sandboxes, "OfferingSandbox", FakeBackend)
    monkeypatch.setattr(worker_sandboxes, "remove_now", lambda c, v: removed.append((c.id, v.name)))
    return removed


def sandboxes(tmp_path: Path, workers: int = 2, client: FakeClient | None = None) -> WorkerSandboxes:
    made = client or FakeClient()
    return WorkerSandboxes(make_settings(tmp_path), workers, connection=lambda: made)  # type: ignore[arg-type,return-value]


def test_no_engine_connection_until_a_key_is_learnt_and_then_the_pool_follows_the_workers(tmp_path, fakes):
    box = sandboxes(tmp_path, workers=3)
    offer = parse_offer(box.hand_to("r1", "run", "bank_parser", tmp_path))
    assert offer is not None and offer.offers == [] and offer.report == str(tmp_path / REPORT_FILE)
    assert FakeBackend.made == []
    box.learn("run", "bank_parser", key())
    (backend,) = FakeBackend.made
    assert backend.kwargs["pool_size"] == 3
    assert backend.pool.sizes == {key().warm_key(): 3}
    box.learn("run", "bank_parser", key(), executions=2)  # its runs make two executions of it
    assert backend.pool.sizes == {key().warm_key(): 6}
    box.learn("run", "bank_parser", key(), executions=40)  # a check's: at most MAX_HANDED_PER_RUN each
    assert backend.pool.sizes == {key().warm_key(): 3 * MAX_HANDED_PER_RUN}


def test_a_run_is_handed_as_many_as_its_predecessor_made_executions(tmp_path, fakes):
    box = sandboxes(tmp_path)
    box.learn("run", "bank_parser", key(), executions=2)
    offer = parse_offer(box.hand_to("r1", "run", "bank_parser", tmp_path))
    assert offer is not None and [o.expected for o in offer.offers] == [2, 2]
    assert len({o.container for o in offer.offers}) == 2
    box.learn("run", "bank_parser", key(), executions=7)
    offer = parse_offer(box.hand_to("r2", "run", "bank_parser", tmp_path))
    assert offer is not None and [o.expected for o in offer.offers] == [7] * MAX_HANDED_PER_RUN


def test_a_run_is_offered_a_container_of_its_kind_and_agent_only(tmp_path, fakes):
    box = sandboxes(tmp_path)
    box.learn("run", "bank_parser", key())
    other = parse_offer(box.hand_to("r0", "run", "idris", tmp_path))
    check = parse_offer(box.hand_to("r1", "check", "bank_parser", tmp_path))
    same = parse_offer(box.hand_to("r2", "run", "bank_parser", tmp_path))
    assert other is not None and check is not None and same is not None
    assert (other.offers, check.offers) == ([], [])
    assert [o.key for o in same.offers] == [key()] and same.offers[0].warmup_seconds == 0.5


def test_after_the_run_its_containers_are_removed_and_its_report_learnt(tmp_path, fakes):
    box = sandboxes(tmp_path)
    box.learn("run", "bank_parser", key())
    handed = parse_offer(box.hand_to("r1", "run", "bank_parser", tmp_path))
    assert handed is not None
    taken = handed.offers[0].container
    write_report(tmp_path / REPORT_FILE, Report(key=key(memory=300), executions=2, taken=[taken]))
    box.after_run("r1", "run", "bank_parser", tmp_path)
    assert fakes == [(taken, handed.offers[0].volume)]
    assert (box.handed, box.taken) == (1, 1)
    assert FakeBackend.made[0].pool.wanted == [key().warm_key(), key(memory=300).warm_key()]
    assert FakeBackend.made[0].pool.sizes[key(memory=300).warm_key()] == 2 * 2
    box.after_run("r1", "run", "bank_parser", tmp_path)  # again: nothing more to remove
    assert len(fakes) == 1


def test_a_report_of_an_earlier_attempt_is_not_read(tmp_path, fakes):
    box = sandboxes(tmp_path)
    write_report(tmp_path / REPORT_FILE, Report(key=key()))
    box.hand_to("r1", "run", "bank_parser", tmp_path)
    box.after_run("r1", "run", "bank_parser", tmp_path)
    assert FakeBackend.made == []


def test_a_bad_report_teaches_nothing(tmp_path, fakes):
    box = sandboxes(tmp_path)
    box.hand_to("r1", "run", "bank_parser", tmp_path)
    (tmp_path / REPORT_FILE).write_text('{"key": {"image": "x; rm -rf /"}}')
    box.after_run("r1", "run", "bank_parser", tmp_path)
    assert FakeBackend.made == []


def test_an_image_the_engine_lacks_is_not_kept_warm(tmp_path, fakes):
    box = sandboxes(tmp_path)
    box.learn("run", "bank_parser", key(image="sandloop/unknown:1"))
    assert FakeBackend.made[0].pool.wanted == []


def test_at_most_max_keys_the_least_recently_seen_dropped(tmp_path, fakes):
    box = sandboxes(tmp_path)
    keys = [key(memory=256 + n) for n in range(MAX_KEYS + 1)]
    for made in keys[:MAX_KEYS]:
        box.learn("run", "bank_parser", made)
    box.learn("run", "bank_parser", keys[0])  # seen again: the newest now
    box.learn("run", "bank_parser", keys[MAX_KEYS])
    pool = FakeBackend.made[0].pool
    assert pool.forgotten == [keys[1].warm_key()]
    assert pool.wanted == [k.warm_key() for k in keys]


def test_no_engine_means_no_warm_sandboxes_and_no_error(tmp_path, fakes):
    def down() -> Any:
        raise EngineUnavailable("no Docker engine is reachable (test)")

    box = WorkerSandboxes(make_settings(tmp_path), 2, connection=down)
    box.learn("run", "bank_parser", key())
    offer = parse_offer(box.hand_to("r1", "run", "bank_parser", tmp_path))
    assert FakeBackend.made == [] and offer is not None and offer.offers == []
    box.close()


def test_close_removes_what_is_still_handed_and_closes_the_connection(tmp_path, fakes):
    client = FakeClient()
    box = sandboxes(tmp_path, client=client)
    box.learn("run", "bank_parser", key())
    box.hand_to("r1", "run", "bank_parser", tmp_path)
    box.close()
    assert len(fakes) == 1 and FakeBackend.made[0].closed and client.closed
    box.learn("run", "bank_parser", key(memory=300))  # closed: learns nothing more
    assert FakeBackend.made[0].pool.wanted == [key().warm_key()]


def test_the_setting_the_backend_and_the_pool_decide(tmp_path):
    settings = make_settings(tmp_path)
    assert wanted(settings)
    assert not wanted(make_settings(tmp_path, warm_sandboxes=False))
    assert not wanted(settings.model_copy(update={"sandbox_backend": "kubernetes"}))
    assert not wanted(settings.model_copy(update={"pool": settings.pool.model_copy(update={"enabled": False})}))


CHILD = r"""
import os, pathlib, sys
pathlib.Path(sys.argv[2], "offer.txt").write_text(os.environ.get(sys.argv[1], "none"))
print("==> run", flush=True)
"""


def test_the_worker_hands_each_run_its_offer_and_cleans_up_after_it(tmp_path, fakes):
    """The run's process gets the offer in its environment; after it, the worker removes what it handed."""
    settings = make_settings(tmp_path, poll_seconds=0.05).model_copy(update={"parallel_runs": 1})
    store = SqliteStore(tmp_path / "runs" / "service.sqlite")
    box = sandboxes(tmp_path, workers=1)
    box.learn("run", "bank_parser", key())
    pool = RunWorkers(settings, store, worker_id="me", env={}, sandboxes=box,
                      command=lambda row, run_dir: [sys.executable, "-c", CHILD, OFFER_ENV, str(run_dir)])
    store.submit(NewRun("r1", "alice", "bank_parser", "icici"), quota=9, queue_limit=9)
    pool.start()
    try:
        wait_for(lambda: (row := store.get("r1")) is not None and row.ended, "the run to end")
    finally:
        pool.stop(5.0)
    offer = parse_offer((settings.runs_dir / "r1" / "offer.txt").read_text())
    assert offer is not None and len(offer.offers) == 1
    assert fakes == [(offer.offers[0].container, offer.offers[0].volume)]
    assert FakeBackend.made[0].closed  # the workers' stop closed the pool


def test_an_engine_failure_while_handing_costs_the_run_nothing(tmp_path, fakes, monkeypatch):
    """What was taken before the failure is still removed after the run; the run gets no offer."""
    box = sandboxes(tmp_path)
    box.learn("run", "bank_parser", key(), executions=2)
    backend = FakeBackend.made[0]
    handed_once = backend.hand_out

    def second_fails(spec: SandboxSpec) -> WarmContainer | None:
        if backend.handed:
            raise OSError("the engine went away")
        return handed_once(spec)

    monkeypatch.setattr(backend, "hand_out", second_fails)
    settings = make_settings(tmp_path).model_copy(update={"parallel_runs": 1})
    pool = RunWorkers(settings, SqliteStore(tmp_path / "runs" / "service.sqlite"), worker_id="me", env={},
                      sandboxes=box)
    store_row = type("Row", (), {"id": "r1", "kind": "run", "agent": "bank_parser"})()
    assert pool._offer(store_row, tmp_path) == {}  # type: ignore[arg-type]
    box.after_run("r1", "run", "bank_parser", tmp_path)
    assert [container for container, _ in fakes] == [backend.handed[0]]
