"""Issue 34: the run history and the lessons in the store, for a service on PostgreSQL.

- ``history_*``: what each run ended with, its failed attempts, nodes, sandbox executions and
  infrastructure retries (the tables of ``history.sqlite``), behind /metrics and the console.
- ``lesson_runs`` / ``lesson_failures``: the lessons the next run is given (``lessons.sqlite``).

A service on PostgreSQL keeps both here (no SQLite file under its runs folder); the CLI alone and
a service on SQLite keep the two files as before, so these tables stay empty there. A service
on PostgreSQL that finds the files of an earlier release in its runs folder copies their rows in
at start (controller/platform/shared_state.py, adopt_files): nothing is lost.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

Serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
#: Each table of a history run: its columns after ``run_id``.
HISTORY_CHILDREN: dict[str, Callable[[], list[sa.Column[Any]]]] = {
    "history_attempt_failures": lambda: [
        sa.Column("attempt", sa.Integer, nullable=False), sa.Column("reason", sa.Text, nullable=False),
        sa.Column("retried", sa.Integer, nullable=False)],
    "history_node_runs": lambda: [
        sa.Column("node", sa.Text, nullable=False), sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False), sa.Column("duration_seconds", sa.Double, nullable=False)],
    "history_sandbox_executions": lambda: [
        sa.Column("image", sa.Text, nullable=False), sa.Column("image_ref", sa.Text, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False), sa.Column("duration_seconds", sa.Double, nullable=False),
        sa.Column("exit_code", sa.Integer), sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("pool", sa.Text, nullable=False, server_default="none"), sa.Column("warmup_seconds", sa.Double)],
    "history_infra_retries": lambda: [
        sa.Column("image", sa.Text, nullable=False), sa.Column("reason", sa.Text, nullable=False)],
}


def upgrade() -> None:
    _history()
    _lessons()


def _history() -> None:
    op.create_table(
        "history_runs",
        sa.Column("run_id", sa.Text, primary_key=True),
        *(sa.Column(name, sa.Text, nullable=False) for name in ("agent", "target", "status")),
        *(sa.Column(name, sa.Integer, nullable=False) for name in ("attempts", "max_attempts")),
        *(sa.Column(name, sa.Double, nullable=False)
          for name in ("started_at", "finished_at", "duration_seconds", "sandbox_seconds")),
        sa.Column("coder", sa.Text, nullable=False),
        sa.Column("error", sa.Text, nullable=False, server_default=""),
    )
    op.create_index("history_runs_by_target", "history_runs", ["agent", "target", "status"])
    for name, columns in HISTORY_CHILDREN.items():
        op.create_table(name, sa.Column("run_id", sa.Text, sa.ForeignKey("history_runs.run_id", ondelete="CASCADE"),
                                        nullable=False), *columns())
        op.create_index(f"{name}_by_run", name, ["run_id"])


def _lessons() -> None:
    op.create_table(
        "lesson_runs",
        sa.Column("run_id", sa.Text, primary_key=True),
        *(sa.Column(name, sa.Text, nullable=False) for name in ("agent", "target", "coder", "status")),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("fixed_by", sa.Text, nullable=False),
        sa.Column("recorded_at", sa.Double, nullable=False),
    )
    op.create_table(
        "lesson_failures",
        sa.Column("id", Serial, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Text, sa.ForeignKey("lesson_runs.run_id", ondelete="CASCADE"), nullable=False),
        *(sa.Column(name, sa.Text, nullable=False) for name in ("agent", "target")),
        sa.Column("attempt", sa.Integer, nullable=False),
        *(sa.Column(name, sa.Text, nullable=False) for name in ("kind", "summary")),
        sa.Column("lesson", sa.Text),
        sa.Column("fixed", sa.Integer, nullable=False),
        sa.Column("recorded_at", sa.Double, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("lesson_failures_by_target", "lesson_failures", ["agent", "target", "recorded_at"])


def downgrade() -> None:
    op.drop_index("lesson_failures_by_target", "lesson_failures")
    op.drop_table("lesson_failures")
    op.drop_table("lesson_runs")
    for name in reversed(HISTORY_CHILDREN):
        op.drop_index(f"{name}_by_run", name)
        op.drop_table(name)
    op.drop_index("history_runs_by_target", "history_runs")
    op.drop_table("history_runs")
