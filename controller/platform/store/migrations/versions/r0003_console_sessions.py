"""Issue 30: the web console's sign-in sessions.

- ``sessions``: the SHA-256 of a signed-in browser's session id (never the id itself), the name of
  the token it signed in with and its expiry. Every replica verifies a session by this table; a
  session ends at sign-out (its row deleted), at its expiry, or when its token is removed.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("hash", sa.Text, primary_key=True),
        sa.Column("token", sa.Text, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False),
        sa.Column("expires_at", sa.Double, nullable=False),
    )
    op.create_index("sessions_by_token", "sessions", ["token"])


def downgrade() -> None:
    op.drop_index("sessions_by_token", "sessions")
    op.drop_table("sessions")
