"""The warm-offer documents between the service's workers and a run's process (no Docker): offers and
reports parsed with bounds, anything else ignored; keys that match exactly what the pool matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.ports.sandbox import SandboxLimits, SandboxSpec
from controller.platform.sandbox import warm_offer
from controller.platform.sandbox.pool import WarmKey
from controller.platform.sandbox.warm_offer import (
    MAX_DOCUMENT_BYTES,
    OFFER_ENV,
    Offer,
    Report,
    WarmKeyModel,
    parse_offer,
    read_report,
    take_offer,
    write_report,
)

CONTAINER = "ab" * 32


def spec(**changes: object) -> SandboxSpec:
    base: dict[str, object] = {
        "image": "sandloop/python-parser:16f9896dd94a", "command": ("python3", "/work/in/parser.py"),
        "warm_command": ("python3", "-m", "entry", "--wait-for", "/work/in/.go"),
        "limits": SandboxLimits(timeout_seconds=30, cpus=1.5), "env": {"MPLBACKEND": "Agg"},
        "collect": ("result.json",), "inputs": {"statement.pdf": b"%PDF"}, "labels": {"run_id": "r1"},
    }
    return SandboxSpec(**{**base, **changes})  # type: ignore[arg-type]


def offer_json(**changes: object) -> str:
    key = WarmKeyModel.of(spec())
    assert key is not None
    document = {"report": "/runs/r1/sandbox-warm.json",
                "offers": [{"container": CONTAINER, "volume": "sandloop-0123456789ab", "warmup_seconds": 0.8,
                            "key": key.model_dump(mode="json")}]}
    document["offers"][0].update(changes)  # type: ignore[index]
    return json.dumps(document)


class TestKeys:
    def test_a_key_through_json_matches_the_pools_key_of_the_spec(self):
        """Inputs and labels are not part of it; limits, env and collect survive the round trip exactly."""
        key = WarmKeyModel.of(spec())
        assert key is not None
        again = WarmKeyModel.model_validate_json(key.model_dump_json())
        assert again.warm_key() == WarmKey.of(spec()) == WarmKey.of(spec(inputs={}, labels={}))
        assert WarmKey.of(again.spec()) == WarmKey.of(spec())
        assert again.spec().inputs == {}

    @pytest.mark.parametrize("change", [
        {"limits": SandboxLimits(timeout_seconds=30, cpus=1.0)}, {"env": {}}, {"collect": ()},
        {"image": "sandloop/python-parser:other"}, {"warm_command": ("python3", "-c", "pass")},
    ])
    def test_another_limit_env_output_image_or_command_is_another_key(self, change):
        key = WarmKeyModel.of(spec())
        assert key is not None and key.warm_key() != WarmKey.of(spec(**change))

    def test_a_spec_without_a_warm_command_has_no_key(self):
        assert WarmKeyModel.of(spec(warm_command=None)) is None

    def test_a_key_whose_spec_the_port_refuses_cannot_become_a_spec(self):
        key = WarmKeyModel.model_validate({**json.loads(WarmKeyModel.of(spec()).model_dump_json()),  # type: ignore[union-attr]
                                           "env": {"API_TOKEN": "x"}})
        with pytest.raises(ValueError, match="secret"):
            key.spec()


class TestOffer:
    def test_a_valid_offer_is_parsed(self):
        parsed = parse_offer(offer_json())
        assert parsed is not None and parsed.offers[0].container == CONTAINER
        assert parsed.offers[0].key.warm_key() == WarmKey.of(spec())

    @pytest.mark.parametrize("text", [
        "", "{", "[]", "null", json.dumps({"offers": "x"}), json.dumps({"report": None, "extra": 1}),
    ])
    def test_bad_json_or_another_shape_is_ignored(self, text):
        assert parse_offer(text) is None

    @pytest.mark.parametrize("change", [
        {"container": "not-an-id"}, {"container": "AB" * 32}, {"volume": "../../etc"}, {"volume": "other-0123"},
        {"warmup_seconds": -1}, {"key": {"image": "x"}}, {"surprise": True},
        {"key": {**json.loads(WarmKeyModel.of(spec()).model_dump_json()), "image": "a b; rm -rf /"}},  # type: ignore[union-attr]
        {"key": {**json.loads(WarmKeyModel.of(spec()).model_dump_json()), "collect": ["../x"]}},  # type: ignore[union-attr]
        {"key": {**json.loads(WarmKeyModel.of(spec()).model_dump_json()), "warm_command": []}},  # type: ignore[union-attr]
    ])
    def test_an_offer_out_of_its_bounds_is_ignored_whole(self, change):
        assert parse_offer(offer_json(**change)) is None

    def test_too_many_offers_or_too_many_bytes_are_ignored(self):
        one = json.loads(offer_json())["offers"][0]
        assert parse_offer(json.dumps({"offers": [one] * (warm_offer.MAX_OFFERS + 1)})) is None
        assert parse_offer(json.dumps({"report": "x" * MAX_DOCUMENT_BYTES})) is None

    def test_the_offer_is_taken_from_the_environment_once(self, monkeypatch):
        monkeypatch.setenv(OFFER_ENV, offer_json())
        assert take_offer() is not None
        assert take_offer() is None


class TestReport:
    def test_written_and_read_back(self, tmp_path: Path):
        key = WarmKeyModel.of(spec())
        write_report(tmp_path / "r.json", Report(key=key, taken=[CONTAINER]))
        assert read_report(tmp_path / "r.json") == Report(key=key, taken=[CONTAINER])
        assert [p.name for p in tmp_path.iterdir()] == ["r.json"]

    @pytest.mark.parametrize("content", [b"", b"{", b'{"key": 1}', b'{"taken": ["zz"]}', b'{"other": 1}',
                                         b"x" * (MAX_DOCUMENT_BYTES + 1)])
    def test_a_bad_report_is_ignored(self, tmp_path: Path, content: bytes):
        (tmp_path / "r.json").write_bytes(content)
        assert read_report(tmp_path / "r.json") is None

    def test_a_missing_report_is_none_and_an_unwritable_one_is_not_raised(self, tmp_path: Path):
        assert read_report(tmp_path / "none.json") is None
        write_report(tmp_path / "missing" / "r.json", Report())


def test_offers_carry_no_inputs():
    """Only the key's fields: the statement's bytes never reach the worker or the environment."""
    assert "statement.pdf" not in offer_json() and "%PDF" not in offer_json()
    assert set(Offer.model_fields) == {"container", "volume", "warmup_seconds", "key", "expected"}
