"""What every run store must do (the RunStore contract), as test classes run against each store.

A store's test module subclasses these with fixtures ``store`` (a fresh store on a clock the
test moves), ``clock`` and ``reopen`` (another store on the same database, as a second
worker or process would open it) and ``opener`` (a picklable (kind, location) pair).
"""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest

from agents.ports.errors import ConfigError
from controller.platform.store import (
    DuplicateRunId,
    Idempotency,
    IdempotencyConflict,
    NewRun,
    QueueFull,
    QuotaExceeded,
)
from controller.platform.store.sqlite import SqliteStore
from controller.platform.store.tokens import check_token_name, new_token, token_hash


class Clock:
    """A clock the test moves by hand (leases without sleeping)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def new_run(number: int, owner: str = "alice", target: str = "icici") -> NewRun:
    return NewRun(id=f"run-{number:04d}", owner=owner, agent="bank_parser", target=target,
                  options={"max_attempts": 2})


def open_again(kind: str, location: str) -> object:
    """A store of ``kind`` on ``location`` (in a fresh process, too)."""
    if kind == "sqlite":
        return SqliteStore(Path(location))
    from controller.platform.store.postgres import PostgresStore

    return PostgresStore(location)


def _claim_many(kind: str, location: str, worker: str, out: multiprocessing.Queue[list[str]]) -> None:
    store = open_again(kind, location)
    taken: list[str] = []
    while (row := store.claim(worker, 30.0)) is not None:
        taken.append(row.id)
    out.put(taken)


class ContractSubmit:
    def test_a_submitted_run_is_queued_and_read_back(self, store, reopen):
        """What was submitted is what a later reader (a fresh connection) gets."""
        row = store.submit(new_run(1), quota=5, queue_limit=5)
        again = reopen().get(row.id)
        assert again == row
        assert (row.status, row.owner, row.options, row.worker) == ("queued", "alice", {"max_attempts": 2}, None)

    def test_quota_counts_queued_and_running_runs_of_the_owner(self, store):
        store.submit(new_run(1), quota=2, queue_limit=10)
        store.claim("w", 30.0)
        store.submit(new_run(2), quota=2, queue_limit=10)
        with pytest.raises(QuotaExceeded, match="alice has 2 queued or running"):
            store.submit(new_run(3), quota=2, queue_limit=10)
        store.submit(new_run(4, owner="bob"), quota=2, queue_limit=10)  # another owner is not counted
        assert store.get("run-0003") is None

    def test_a_duplicate_id_is_refused_and_nothing_written(self, store):
        store.submit(new_run(1), quota=9, queue_limit=9)
        with pytest.raises(DuplicateRunId):
            store.submit(new_run(1, owner="bob"), quota=9, queue_limit=9)
        assert store.counts() == {"queued": 1} and store.get("run-0001").owner == "alice"

    def test_queue_limit(self, store):
        store.submit(new_run(1, owner="a"), quota=9, queue_limit=2)
        store.submit(new_run(2, owner="b"), quota=9, queue_limit=2)
        with pytest.raises(QueueFull):
            store.submit(new_run(3, owner="c"), quota=9, queue_limit=2)


class ContractClaim:
    def test_oldest_first_and_never_twice(self, store):
        for n in range(3):
            store.submit(new_run(n), quota=9, queue_limit=9)
        claimed = [store.claim("w", 30.0) for _ in range(4)]
        assert [c.id if c else None for c in claimed] == ["run-0000", "run-0001", "run-0002", None]
        assert all(c.status == "running" and c.worker == "w" for c in claimed if c)

    def test_threads_claiming_at_once_each_get_distinct_runs(self, store, reopen):
        """8 threads race for 60 runs: every run is claimed exactly once."""
        for n in range(60):
            store.submit(new_run(n, owner=f"o{n}"), quota=9, queue_limit=100)
        taken: list[str] = []
        lock = threading.Lock()

        def worker(name: str) -> None:
            mine = reopen()
            while (row := mine.claim(name, 30.0)) is not None:
                with lock:
                    taken.append(row.id)

        threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(taken) == [f"run-{n:04d}" for n in range(60)]

    def test_processes_claiming_at_once_each_get_distinct_runs(self, store, opener):
        """Three processes on one file: no run claimed twice, none left queued."""
        for n in range(45):
            store.submit(new_run(n, owner=f"o{n}"), quota=9, queue_limit=100)
        ctx = multiprocessing.get_context("spawn")
        out: multiprocessing.Queue[list[str]] = ctx.Queue()
        procs = [ctx.Process(target=_claim_many, args=(*opener, f"p{i}", out)) for i in range(3)]
        for p in procs:
            p.start()
        results = [out.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        taken = [run_id for result in results for run_id in result]
        assert sorted(taken) == [f"run-{n:04d}" for n in range(45)]
        assert store.counts() == {"running": 45}


class ContractLeases:
    def test_a_renewed_lease_does_not_expire(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w1", 30.0)
        clock.now += 25
        assert store.renew("w1", 30.0, ["run-0001"]) == 1
        assert store.renew("w2", 30.0, ["run-0001"]) == 0  # not w2's
        clock.now += 25
        assert store.expired() == []

    def test_only_the_named_runs_are_renewed(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.submit(new_run(2), quota=9, queue_limit=9)
        store.claim("w1", 30.0)
        store.claim("w1", 30.0)
        clock.now += 25
        assert store.renew("w1", 30.0, ["run-0002"]) == 1
        assert store.renew("w1", 30.0, []) == 0
        clock.now += 10
        assert [r.id for r in store.expired()] == ["run-0001"]

    def test_an_expired_lease_is_taken_over_once(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("dead", 30.0)
        clock.now += 31
        (row,) = store.expired()
        assert row.worker == "dead"
        assert store.take_over(row.id, "dead", requeue=True) is True
        assert store.take_over(row.id, "dead", requeue=True) is False  # another worker got there first
        again = store.get(row.id)
        assert (again.status, again.worker, again.takeovers) == ("queued", None, 1)
        claimed = store.claim("alive", 30.0)
        assert claimed is not None and claimed.id == row.id

    def test_a_run_without_checkpoint_ends_in_error_with_the_reason(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("dead", 30.0)
        clock.now += 31
        assert store.take_over("run-0001", "dead", requeue=False, error="nothing to resume")
        row = store.get("run-0001")
        assert (row.status, row.error, row.finished_at) == ("error", "nothing to resume", clock.now)

    def test_a_live_lease_cannot_be_taken_over(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w1", 30.0)
        clock.now += 5
        assert store.take_over("run-0001", "w1", requeue=True) is False
        assert store.get("run-0001").status == "running"

    def test_finish_needs_the_lease_holder(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w1", 30.0)
        assert store.finish("run-0001", "w2", "passed", exit_code=0, summary=None) is False
        assert store.finish("run-0001", "w1", "passed", exit_code=0, summary={"status": "passed"}) is True
        row = store.get("run-0001")
        assert (row.status, row.exit_code, row.summary, row.worker) == ("passed", 0, {"status": "passed"}, None)
        assert row.ended

    def test_release_puts_a_run_back_in_the_queue(self, store):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w1", 30.0)
        assert store.release("run-0001", "w1") is True
        assert store.get("run-0001").status == "queued"


class ContractCancel:
    def test_a_queued_run_is_cancelled_at_once(self, store):
        store.submit(new_run(1), quota=9, queue_limit=9)
        row = store.cancel("run-0001")
        assert row is not None and row.status == "cancelled" and row.ended
        assert store.claim("w", 30.0) is None

    def test_a_running_run_is_flagged_for_its_worker(self, store):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w1", 30.0)
        row = store.cancel("run-0001")
        assert row is not None and (row.status, row.cancel_requested) == ("running", True)
        assert store.cancel_requested("w1") == ["run-0001"]
        assert store.cancel_requested("w2") == []


class ContractList:
    def test_pages_newest_first_with_filters(self, store):
        for n in range(5):
            store.submit(new_run(n, owner="alice" if n % 2 else "bob", target="icici" if n < 3 else "sbi"),
                         quota=9, queue_limit=9)
        first = store.list_runs(owner=None, target=None, status=None, limit=2, cursor=None)
        assert [r.id for r in first.runs] == ["run-0004", "run-0003"]
        second = store.list_runs(owner=None, target=None, status=None, limit=2, cursor=first.cursor)
        assert [r.id for r in second.runs] == ["run-0002", "run-0001"]
        last = store.list_runs(owner=None, target=None, status=None, limit=2, cursor=second.cursor)
        assert ([r.id for r in last.runs], last.cursor) == (["run-0000"], None)
        mine = store.list_runs(owner="alice", target="icici", status="queued", limit=10, cursor=None)
        assert [r.id for r in mine.runs] == ["run-0001"]

    def test_stats_count_runs_per_owner_and_not_checks(self, store):
        store.submit(new_run(0), quota=9, queue_limit=9)
        store.submit(new_run(1, owner="bob"), quota=9, queue_limit=9)
        store.submit(NewRun("check-1", "alice", "bank_parser", "icici", {"kind": "check", "paths": ["x"]}),
                     quota=9, queue_limit=9)
        assert store.stats(None) == {("bank_parser", "icici", "queued"): 2}
        assert store.stats("alice") == {("bank_parser", "icici", "queued"): 1}

    def test_agent_and_text_filters(self, store):
        """The console's filters: an agent, and a case-insensitive substring of id, target, owner or error,
        where % and _ are plain characters, not patterns."""
        store.submit(new_run(0, target="ICICI_bank"), quota=9, queue_limit=9)
        store.submit(NewRun("run-0001", "bob", "intake", "intake-x", {}), quota=9, queue_limit=9)
        store.submit(new_run(2, owner="carol", target="sbi%"), quota=9, queue_limit=9)

        def ids(**filters: str) -> list[str]:
            page = store.list_runs(owner=None, target=None, status=None, limit=9, cursor=None, **filters)
            return [r.id for r in page.runs]

        assert ids(agent="intake") == ["run-0001"]
        assert ids(text="icici_") == ["run-0000"]
        assert ids(text="Bob") == ["run-0001"]
        assert ids(text="i%") == ["run-0002"]
        assert ids(text="r_n") == []
        assert ids(text="run-000", agent="bank_parser") == ["run-0002", "run-0000"]

    @pytest.mark.parametrize("cursor", ["1; DROP TABLE runs", "\u00b2", "\u0661\u0662", "-1", ""])
    def test_a_bad_cursor_is_a_config_error(self, store, cursor):
        """Not ASCII digits: refused in one line ("²" and Arabic-Indic digits pass str.isdigit but
        not int(); schemathesis found "²" as a 500)."""
        with pytest.raises(ConfigError, match="is not a cursor"):
            store.list_runs(owner=None, target=None, status=None, limit=2, cursor=cursor)


class ContractTokens:
    def test_added_tokens_are_found_by_hash_only(self, store):
        token = new_token()
        store.add_token("alice", token_hash(token), admin=False)
        assert store.has_tokens()
        found = store.token_by_hash(token_hash(token))
        assert found is not None and (found.name, found.admin) == ("alice", False)
        assert store.token_by_hash(token_hash(token + "x")) is None

    def test_a_name_is_unique_and_removable(self, store):
        store.add_token("alice", token_hash("a"), admin=True)
        with pytest.raises(ConfigError, match="exists already"):
            store.add_token("alice", token_hash("b"), admin=False)
        assert [t.name for t in store.tokens()] == ["alice"]
        assert store.remove_token("alice") is True
        assert store.remove_token("alice") is False
        assert not store.has_tokens()

    def test_a_name_differing_only_in_case_is_refused(self, store):
        """Issue 42: tokens ``Local`` and ``local`` were two tenants."""
        store.add_token("local", token_hash("a"), admin=False)
        with pytest.raises(ConfigError, match="compared without case"):
            store.add_token("Local", token_hash("b"), admin=False)
        assert [t.name for t in store.tokens()] == ["local"]

    def test_tokens_are_long_and_distinct(self):
        tokens = {new_token() for _ in range(50)}
        assert len(tokens) == 50 and all(len(t) >= 40 for t in tokens)

    @pytest.mark.parametrize("name", ["", "../x", "a b", "x" * 65, "-lead", "a\nb"])
    def test_bad_token_names(self, name):
        with pytest.raises(ConfigError):
            check_token_name(name)


class ContractSessions:
    def test_a_session_names_its_token_until_it_expires(self, store, clock):
        """A console session is found by its hash, as its token, until its expiry."""
        store.add_token("alice", token_hash("t"), admin=True)
        store.add_session(token_hash("s"), "alice", clock.now + 60)
        found = store.session_token(token_hash("s"))
        assert found is not None and (found.name, found.admin) == ("alice", True)
        assert store.session_token(token_hash("other")) is None
        clock.now += 61
        assert store.session_token(token_hash("s")) is None

    def test_signing_out_and_removing_the_token_end_sessions(self, store, clock, reopen):
        """Sign-out ends one session; removing a token ends all of its sessions, for every replica."""
        store.add_token("alice", token_hash("t"), admin=False)
        later = clock.now + 10**10  # the reopened store reads the real clock
        store.add_session(token_hash("s1"), "alice", later)
        store.add_session(token_hash("s2"), "alice", later)
        store.remove_session(token_hash("s1"))
        assert reopen().session_token(token_hash("s1")) is None
        assert reopen().session_token(token_hash("s2")) is not None
        store.remove_token("alice")
        store.add_token("alice", token_hash("t2"), admin=False)  # the same name again: not the same token
        assert reopen().session_token(token_hash("s2")) is None

    def test_expired_sessions_are_removed_when_one_is_added(self, store, clock):
        store.add_token("alice", token_hash("t"), admin=False)
        store.add_session(token_hash("old"), "alice", clock.now + 1)
        clock.now += 2
        store.add_session(token_hash("new"), "alice", clock.now + 60)
        clock.now -= 2  # even if the clock went back, the old one is gone
        assert store.session_token(token_hash("old")) is None


class ContractWaiting:
    def test_a_running_run_waits_without_worker_or_lease_and_an_answer_queues_it(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w1", 30.0)
        assert store.wait("run-0001", "w2") is False  # only the holder parks it
        assert store.wait("run-0001", "w1") is True
        row = store.get("run-0001")
        assert (row.status, row.worker, row.lease_until, row.ended) == ("waiting", None, None, False)
        clock.now += 3600
        assert store.expired() == [] and store.claim("w1", 30.0) is None  # nothing expires, nothing to claim
        again = store.answer("run-0001")
        assert again is not None and again.status == "queued"
        assert store.answer("run-0001") is None  # a second reply finds it no longer waiting
        claimed = store.claim("w3", 30.0)
        assert claimed is not None and claimed.id == "run-0001"

    def test_a_waiting_run_counts_against_the_quota(self, store):
        store.submit(new_run(1), quota=1, queue_limit=9)
        store.claim("w", 30.0)
        store.wait("run-0001", "w")
        with pytest.raises(QuotaExceeded, match="waiting for a reply"):
            store.submit(new_run(2), quota=1, queue_limit=9)

    def test_a_waiting_run_is_cancelled_at_once(self, store):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w", 30.0)
        store.wait("run-0001", "w")
        row = store.cancel("run-0001")
        assert (row.status, row.error) == ("cancelled", "cancelled while it waited for a reply")
        assert store.answer("run-0001") is None


class ContractHistory:
    def _ended(self, store, number: int, owner: str, target: str, status: str) -> None:
        store.submit(new_run(number, owner=owner, target=target), quota=99, queue_limit=99)
        store.claim("w", 30.0)
        store.finish(f"run-{number:04d}", "w", status, exit_code=0, summary={"status": status, "attempts": 1})

    def test_history_lists_ended_runs_only_newest_first_paged_and_filtered(self, store):
        self._ended(store, 1, "alice", "icici", "passed")
        self._ended(store, 2, "bob", "icici", "failed")
        self._ended(store, 3, "alice", "sbi", "error")
        store.submit(new_run(4, owner="alice"), quota=99, queue_limit=99)  # queued: not history yet
        first = store.history(owner=None, agent=None, target=None, limit=2, cursor=None)
        assert [r.id for r in first.runs] == ["run-0003", "run-0002"]
        rest = store.history(owner=None, agent=None, target=None, limit=2, cursor=first.cursor)
        assert ([r.id for r in rest.runs], rest.cursor) == (["run-0001"], None)
        mine = store.history(owner="alice", agent="bank_parser", target="icici", limit=9, cursor=None)
        assert [r.id for r in mine.runs] == ["run-0001"]
        assert store.history(owner=None, agent="intake", target=None, limit=9, cursor=None).runs == []

    def test_forget_deletes_the_targets_ended_runs_and_keeps_open_ones(self, store):
        self._ended(store, 1, "alice", "icici", "passed")
        self._ended(store, 2, "bob", "sbi", "failed")
        store.submit(new_run(3, owner="alice"), quota=99, queue_limit=99)
        assert store.forget(target="icici", agent="intake") == []
        assert store.forget(target="icici", agent=None) == ["run-0001"]
        assert store.get("run-0001") is None and store.get("run-0003").status == "queued"
        assert store.get("run-0002") is not None


def kinds(store, run_id: str) -> list[tuple[int, str, str]]:
    """The run's journal as (number, kind, status or text)."""
    return [(e.seq, e.kind, str(e.data.get("status", e.data.get("text", ""))))
            for e in store.events(run_id, after=0, limit=1000)]


class ContractJournal:
    def test_every_status_change_is_numbered_without_gaps(self, store, clock):
        """submit, claim, a line, release, claim, finish: 1..6, each once, in order."""
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w1", 30.0)
        assert store.append_events("run-0001", [("line", {"text": "hello"})]) == 3
        store.release("run-0001", "w1")
        store.claim("w2", 30.0)
        store.finish("run-0001", "w2", "passed", exit_code=0, summary=None)
        assert kinds(store, "run-0001") == [(1, "status", "queued"), (2, "status", "running"), (3, "line", "hello"),
                                            (4, "status", "queued"), (5, "status", "running"), (6, "end", "passed")]
        assert store.get("run-0001").last_event == 6

    def test_reading_after_a_number_resumes_exactly_there(self, store):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.append_events("run-0001", [("line", {"text": str(n)}) for n in range(10)])
        assert [e.seq for e in store.events("run-0001", after=4, limit=3)] == [5, 6, 7]
        assert store.events("run-0001", after=11, limit=3) == []

    def test_a_refused_change_journals_nothing(self, store, clock):
        """A worker that lost its run cannot finish it, nor write its end."""
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w1", 30.0)
        clock.now += 31
        store.take_over("run-0001", "w1", requeue=True)
        assert store.finish("run-0001", "w1", "passed", exit_code=0, summary=None) is False
        assert [k for _, k, _ in kinds(store, "run-0001")] == ["status", "status", "status"]

    def test_appending_to_no_run_writes_nothing(self, store):
        assert store.append_events("nope", [("line", {"text": "x"})]) == 0
        assert store.events("nope", after=0, limit=9) == []

    def test_writers_racing_on_one_run_never_share_a_number(self, store, reopen):
        """4 threads append 25 lines each: numbers 1..101 (the submission is 1), none twice."""
        store.submit(new_run(1), quota=9, queue_limit=9)

        def append(tag: str) -> None:
            mine = reopen()
            for n in range(25):
                mine.append_events("run-0001", [("line", {"text": f"{tag}{n}"})])

        threads = [threading.Thread(target=append, args=(t,)) for t in "abcd"]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        events = store.events("run-0001", after=0, limit=1000)
        assert [e.seq for e in events] == list(range(1, 102))
        assert len({e.data.get("text") for e in events[1:]}) == 100

    def test_a_question_is_journaled_with_the_wait(self, store):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w", 30.0)
        store.wait("run-0001", "w", {"turn": 1, "question": "How old are you?"})
        (question,) = [e for e in store.events("run-0001", after=0, limit=9) if e.kind == "question"]
        assert question.data == {"turn": 1, "question": "How old are you?"}

    def test_forgetting_a_run_forgets_its_journal(self, store):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("w", 30.0)
        store.finish("run-0001", "w", "passed", exit_code=0, summary=None)
        store.forget(target="icici", agent=None)
        assert store.events("run-0001", after=0, limit=9) == []


class ContractIdempotency:
    def test_the_same_key_and_request_give_the_same_run(self, store):
        first = store.submit(new_run(1), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h1"))
        again = store.submit(new_run(2), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h1"))
        assert again.id == first.id == "run-0001"
        assert store.get("run-0002") is None and store.counts() == {"queued": 1}

    def test_the_same_key_with_another_request_is_refused(self, store):
        store.submit(new_run(1), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h1"))
        with pytest.raises(IdempotencyConflict, match="different request"):
            store.submit(new_run(2), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h2"))
        assert store.get("run-0002") is None

    def test_keys_are_per_owner(self, store):
        store.submit(new_run(1), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h1"))
        other = store.submit(new_run(2, owner="bob"), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h1"))
        assert other.id == "run-0002"

    def test_a_replay_is_not_refused_by_a_full_quota(self, store):
        store.submit(new_run(1), quota=1, queue_limit=9, idempotency=Idempotency("k1", "h1"))
        assert store.submit(new_run(2), quota=1, queue_limit=9, idempotency=Idempotency("k1", "h1")).id == "run-0001"

    def test_a_key_is_kept_for_its_time_and_then_free(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h1"))
        clock.now += 86399
        assert store.submit(new_run(2), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h1")).id == "run-0001"
        clock.now += 2
        assert store.submit(new_run(3), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h2")).id == "run-0003"

    def test_old_keys_are_swept(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h1"))
        assert store.forget_keys(older_than=clock.now - 1) == 0
        assert store.forget_keys(older_than=clock.now + 1) == 1


class ContractUploads:
    def _upload(self, number: int, size: int, owner: str = "alice") -> NewRun:
        return NewRun(id=f"run-{number:04d}", owner=owner, agent="bank_parser", target="up",
                      options={"upload": f"run-{number:04d}"}, upload_bytes=size)

    def test_uploads_count_against_their_owners_bytes_until_removed(self, store):
        store.submit(self._upload(1, 60), quota=9, queue_limit=9, upload_quota_bytes=100)
        with pytest.raises(QuotaExceeded, match="uploads would hold"):
            store.submit(self._upload(2, 50), quota=9, queue_limit=9, upload_quota_bytes=100)
        store.submit(self._upload(3, 50, owner="bob"), quota=9, queue_limit=9, upload_quota_bytes=100)
        assert store.held_uploads(ended_only=False) == ["run-0001", "run-0003"]
        assert store.upload_removed("run-0001") is True and store.upload_removed("run-0001") is False
        store.submit(self._upload(2, 50), quota=9, queue_limit=9, upload_quota_bytes=100)

    def test_what_an_ended_run_kept_counts_against_its_owners_bytes_until_forgotten(self, store):
        """Issue 43: the files kept with a run after its upload is gone (kept/) count until Forget."""
        store.submit(self._upload(1, 60), quota=9, queue_limit=9, upload_quota_bytes=100)
        store.cancel("run-0001")
        assert store.upload_removed("run-0001", kept_bytes=45) is True
        with pytest.raises(QuotaExceeded, match="uploads would hold"):
            store.submit(self._upload(2, 60), quota=9, queue_limit=9, upload_quota_bytes=100)
        store.submit(self._upload(3, 60, owner="bob"), quota=9, queue_limit=9, upload_quota_bytes=100)
        assert store.forget(target="up", agent=None) == ["run-0001"]
        store.submit(self._upload(2, 60), quota=9, queue_limit=9, upload_quota_bytes=100)

    def test_a_cancelled_run_holds_its_place_until_its_upload_is_gone(self, store):
        """Cancelling does not free the quota while the upload is still on disk."""
        store.submit(self._upload(1, 10), quota=1, queue_limit=9)
        store.cancel("run-0001")
        assert store.held_uploads(ended_only=True) == ["run-0001"]
        with pytest.raises(QuotaExceeded, match="holding an upload"):
            store.submit(new_run(2), quota=1, queue_limit=9)
        store.upload_removed("run-0001")
        store.submit(new_run(2), quota=1, queue_limit=9)


class ContractTakeover:
    def test_a_known_dead_worker_is_taken_over_before_its_lease_ends(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("dead", 30.0)
        assert [r.id for r in store.running()] == ["run-0001"]
        assert store.take_over("run-0001", "dead", requeue=True) is False  # its lease still runs
        assert store.take_over("run-0001", "dead", requeue=True, force=True) is True
        row = store.get("run-0001")
        assert (row.status, row.takeovers) == ("queued", 1)
        taken = [e for e in store.events("run-0001", after=0, limit=9) if e.data.get("takeover")]
        assert len(taken) == 1 and "lease" in taken[0].data["reason"]

    def test_checks_are_a_kind_of_their_own(self, store):
        store.submit(NewRun("check-1", "alice", "bank_parser", "icici", {"kind": "check", "paths": ["x"]}),
                     quota=9, queue_limit=9)
        store.submit(new_run(1), quota=9, queue_limit=9)
        assert (store.get("check-1").kind, store.get("run-0001").kind) == ("check", "run")


class ContractReplay:
    def test_a_replay_is_found_before_anything_is_staged(self, store):
        assert store.replay("alice", Idempotency("k1", "h1")) is None
        store.submit(new_run(1), quota=9, queue_limit=9, idempotency=Idempotency("k1", "h1"))
        assert store.replay("alice", Idempotency("k1", "h1")).id == "run-0001"
        assert store.replay("bob", Idempotency("k1", "h1")) is None
        with pytest.raises(IdempotencyConflict):
            store.replay("alice", Idempotency("k1", "other"))


class ContractFencing:
    def test_a_worker_that_lost_its_run_journals_nothing_more(self, store, clock):
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.claim("old", 30.0)
        assert store.append_events("run-0001", [("line", {"text": "mine"})], holder="old") == 3
        clock.now += 31
        store.take_over("run-0001", "old", requeue=True)
        store.claim("new", 30.0)
        assert store.append_events("run-0001", [("line", {"text": "stale"})], holder="old") == 0
        assert store.append_events("run-0001", [("line", {"text": "fresh"})], holder="new") == 6
        texts = [e.data.get("text") for e in store.events("run-0001", after=0, limit=9)]
        assert "stale" not in texts and texts[-1] == "fresh"
