"""Issue 34: an intake run's conversation log in the store, for runs on PostgreSQL.

``memory_log``: the table of a run folder's ``conversation.sqlite`` (``entries``) with the
run's id in front. Used when runs are given SBX_STATE_DSN; the files are used otherwise.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("memory_log",
                    sa.Column("run_id", sa.Text, primary_key=True), sa.Column("kind", sa.Text, primary_key=True),
                    sa.Column("step", sa.Integer, primary_key=True, autoincrement=False),
                    sa.Column("name", sa.Text, primary_key=True),
                    sa.Column("data", sa.Text, nullable=False), sa.Column("at", sa.Text, nullable=False))


def downgrade() -> None:
    op.drop_table("memory_log")
