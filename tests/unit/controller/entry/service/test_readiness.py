"""/readyz's images check: cached a few seconds (a probe every few seconds must not hammer the
engine), shared by concurrent probes, 503 with the one-line reason when an image is missing,
and not made on the Kubernetes backend (nodes pull images themselves)."""

from __future__ import annotations

import threading
from pathlib import Path

from controller.entry.service.readiness import (
    IMAGES_TTL_SECONDS,
    CachedCheck,
    images_probe,
    no_images_check,
)
from controller.platform.images.presence import ImagesMissing
from controller.platform.settings import Settings
from tests.unit.controller.entry.service.conftest import make_service


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class CountingCheck:
    """A check that fails while ``missing`` is set, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.missing: str | None = None

    def __call__(self) -> None:
        self.calls += 1
        if self.missing:
            raise ImagesMissing(f"sandbox image is not in the engine: {self.missing}",
                                hint="build it with: python -m controller images")


class TestCachedCheck:
    def test_the_answer_is_reused_until_it_is_ttl_old(self) -> None:
        """Within the TTL the engine is asked once; after it, again."""
        check, clock = CountingCheck(), Clock()
        cached = CachedCheck(check, 5.0, clock)
        for _ in range(10):
            cached()
        assert check.calls == 1
        clock.now += 4.9
        cached()
        assert check.calls == 1
        clock.now += 0.2
        cached()
        assert check.calls == 2

    def test_a_missing_image_is_cached_too_and_its_fix_is_seen_after_the_ttl(self) -> None:
        """The error is raised again from the cache; once built, the next check after the TTL passes."""
        check, clock = CountingCheck(), Clock()
        check.missing = "sandloop/python-parser:abc"
        cached = CachedCheck(check, 5.0, clock)
        for _ in range(3):
            try:
                cached()
                raise AssertionError("the missing image was not reported")
            except ImagesMissing as exc:
                assert "sandloop/python-parser:abc" in exc.one_line()
        assert check.calls == 1
        check.missing = None
        clock.now += 5.0
        cached()
        assert check.calls == 2

    def test_concurrent_probes_share_one_engine_question(self) -> None:
        """Twenty probes at once (a slow engine) cause one check, not twenty."""
        started, release = threading.Event(), threading.Event()
        calls = []

        def slow() -> None:
            calls.append(1)
            started.set()
            release.wait(5)

        cached = CachedCheck(slow, 5.0)
        threads = [threading.Thread(target=cached) for _ in range(20)]
        for thread in threads:
            thread.start()
        started.wait(5)
        release.set()
        for thread in threads:
            thread.join(5)
        assert len(calls) == 1


class TestImagesProbe:
    def test_kubernetes_makes_no_engine_check(self) -> None:
        """SBX_SANDBOX_BACKEND=kubernetes: no Docker engine to ask."""
        settings = Settings(_env_file=None, sandbox_backend="kubernetes")  # type: ignore[call-arg]
        assert images_probe(settings) is no_images_check

    def test_docker_gets_a_cached_check(self) -> None:
        """On Docker the probe is cached for IMAGES_TTL_SECONDS, a few seconds."""
        probe = images_probe(Settings(_env_file=None))  # type: ignore[call-arg]
        assert isinstance(probe, CachedCheck) and 1 <= IMAGES_TTL_SECONDS <= 10


class TestReadyz:
    def test_a_missing_image_makes_the_service_not_ready_with_the_reason(self, tmp_path: Path) -> None:
        """503; checks.images is the one line naming the image and the command; the rest stay ok."""
        service = make_service(tmp_path)
        check = CountingCheck()
        check.missing = "sandloop/python-parser:0123456789ab"
        service.state.images_probe = CachedCheck(check, 5.0)
        response = service.client.get("/readyz")
        assert response.status_code == 503
        body = response.json()
        assert body["status"] == "not ready"
        assert body["checks"]["images"] == ("sandbox image is not in the engine: sandloop/python-parser:0123456789ab"
                                            " (build it with: python -m controller images)")
        assert body["checks"]["store"] == body["checks"]["engine"] == body["checks"]["accepting"] == "ok"
        check.missing = None
        assert service.client.get("/readyz").status_code == 503  # still the cached answer
        assert check.calls == 1
