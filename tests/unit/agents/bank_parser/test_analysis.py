"""PDF analysis of malformed PDFs: a readable analysis or a TargetError, never another exception."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.fuzz.decoders import PDF_INPUTS, check_pdf


class TestMalformedPdfs:
    @settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(PDF_INPUTS)
    def test_broken_pdfs_are_a_target_error_at_worst(self, raw):
        """Truncated, byte-flipped, padded or random PDFs: analysis or TargetError only."""
        check_pdf(raw)
