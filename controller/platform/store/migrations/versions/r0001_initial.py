"""The run store as issue 21 made it (release 1): runs and tokens.

A database made before migrations existed has exactly these tables and no ``alembic_version``;
it is stamped at this revision and upgraded from here.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

Serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("seq", Serial, primary_key=True, autoincrement=True),
        sa.Column("id", sa.Text, nullable=False, unique=True),
        sa.Column("owner", sa.Text, nullable=False),
        sa.Column("agent", sa.Text, nullable=False),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("options", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("worker", sa.Text),
        sa.Column("lease_until", sa.Double),
        sa.Column("cancel_requested", sa.Integer, nullable=False, server_default="0"),
        sa.Column("takeovers", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.Double, nullable=False),
        sa.Column("started_at", sa.Double),
        sa.Column("finished_at", sa.Double),
        sa.Column("exit_code", sa.Integer),
        sa.Column("summary", sa.Text),
        sa.Column("error", sa.Text, nullable=False, server_default=""),
        sqlite_autoincrement=True,
    )
    op.create_index("runs_by_status", "runs", ["status", "seq"])
    op.create_index("runs_by_owner", "runs", ["owner", "status"])
    op.create_table(
        "tokens",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("hash", sa.Text, nullable=False, unique=True),
        sa.Column("admin", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False),
    )
