"""Issue 43: what an ended run kept of its upload, counted against its owner's upload quota.

``runs.kept_bytes``: the bytes of ``runs/<id>/kept/`` (the expected result.csv of an uploaded
target, the code a check checked), which its pages read after the upload is removed. Counted
with the held uploads until Forget removes the row and the folder.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("kept_bytes", sa.BigInteger, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("kept_bytes")
