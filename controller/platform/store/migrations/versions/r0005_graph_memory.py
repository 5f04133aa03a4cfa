"""Issue 34: the intake agents' graph memories in the store, for runs on PostgreSQL.

``memory_subjects``, ``memory_fields``, ``memory_history``, ``memory_conflicts``,
``memory_commits`` and ``memory_conversations``: the tables of a memory file
(controller/platform/memory_store.py) with the memory's key in front (``subject:<key>`` or
``run:<id>``). Used when runs are given SBX_STATE_DSN; the files are used otherwise, so these
stay empty there.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

Serial = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _required(kind: Any, *names: str) -> list[sa.Column[Any]]:
    return [sa.Column(name, kind, nullable=False) for name in names]


def _keyed(*names: str) -> list[sa.Column[Any]]:
    return [sa.Column(name, sa.Text, primary_key=True) for name in names]


def _where() -> list[sa.Column[Any]]:
    """Which write a row came from."""
    return [*_required(sa.Text, "run_id"), *_required(sa.Integer, "turn"), *_required(sa.Text, "at")]


def upgrade() -> None:
    op.create_table("memory_subjects", *_keyed("key"), *_required(sa.Text, "name"))
    op.create_table("memory_fields", *_keyed("key", "node", "field"), sa.Column("value", sa.Text),
                    *_required(sa.Integer, "skipped"), *_required(sa.Text, "updated_at"))
    op.create_table("memory_history", sa.Column("id", Serial, primary_key=True, autoincrement=True),
                    *_required(sa.Text, "key", "node", "field"),
                    *(sa.Column(name, sa.Text) for name in ("value", "previous", "temporal", "source", "reasoning")),
                    *_required(sa.Integer, "applied", "correction"), *_where(), sqlite_autoincrement=True)
    op.create_index("memory_history_by_key", "memory_history", ["key", "id"])
    op.create_table("memory_conflicts", sa.Column("id", Serial, primary_key=True, autoincrement=True),
                    *_required(sa.Text, "key", "node", "field"), sa.Column("old", sa.Text), sa.Column("new", sa.Text),
                    *_where(), *_required(sa.Integer, "resolved"), sa.Column("resolution", sa.Text),
                    sqlite_autoincrement=True)
    op.create_index("memory_conflicts_by_key", "memory_conflicts", ["key", "id"])
    op.create_table("memory_commits", *_keyed("key", "run_id"),
                    sa.Column("turn", sa.Integer, primary_key=True, autoincrement=False),
                    *_required(sa.Text, "at"))
    op.create_table("memory_conversations", *_keyed("key", "run_id"), *_required(sa.Text, "target", "at"))


def downgrade() -> None:
    op.drop_index("memory_conflicts_by_key", "memory_conflicts")
    op.drop_index("memory_history_by_key", "memory_history")
    for name in ("memory_conversations", "memory_commits", "memory_conflicts", "memory_history", "memory_fields",
                 "memory_subjects"):
        op.drop_table(name)
