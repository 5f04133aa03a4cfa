"""Observability: structured logs, the durable run history, Prometheus metrics derived from
it, and the optional Pushgateway push of a one-shot run's result.

    logs.py       one structlog + stdlib logging pipeline (JSON or console), secret redaction,
                  the per-run ``events.jsonl`` file
    spans.py      node start/end events with run context (contextvars)
    history.py    SQLite run history (``runs/history.sqlite``): what every run ended with
    recorder.py   collects a run's node and sandbox records and writes them at its end
    metrics.py    metric names, buckets, label sets; the collector that derives them from history
    exporter.py   ``python -m controller serve``: /metrics and /healthz
    push.py       Pushgateway push of the last run's gauges (batch-job style)
    exporter_image.py  the exporter image's build context for ``make stack`` (host wheelhouse)

See docs/observability.md for the metrics table and when to use the exporter or the push.
"""
