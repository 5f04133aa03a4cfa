"""Issue 31: every event of a run numbered in the store, idempotency keys, held uploads, the
reserved owner of runs made before any token existed.

- ``run_events`` (and ``runs.last_event``, the newest event's number): the event stream's
  journal. Runs made before this revision have no events; their stream is their end document.
- ``idempotency_keys``: a submission's ``Idempotency-Key`` per owner, kept at least 24 hours.
- ``runs.kind``: ``run`` or ``check`` as a column (it was only inside ``options``).
- ``runs.upload_bytes`` / ``upload_held``: an upload's size and whether it is still on disk, so
  that quotas count uploads until they are removed, not until their run is cancelled. Open runs
  with an upload hold it; ended runs' uploads are orphans for the sweeper.
- Runs submitted while no token existed belonged to ``local``, a name a token could take; they
  now belong to ``~local``, which no token name can be (a token name starts with a letter or
  digit). Runs of ``local`` made after the oldest existing token are that token's and stay.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

runs = sa.table("runs", sa.column("owner", sa.Text), sa.column("created_at", sa.Double),
                sa.column("options", sa.Text), sa.column("kind", sa.Text), sa.column("status", sa.Text),
                sa.column("upload_held", sa.Integer))
tokens = sa.table("tokens", sa.column("created_at", sa.Double))


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("kind", sa.Text, nullable=False, server_default="run"))
        batch.add_column(sa.Column("last_event", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("upload_bytes", sa.BigInteger, nullable=False, server_default="0"))
        batch.add_column(sa.Column("upload_held", sa.Integer, nullable=False, server_default="0"))
    op.create_index("runs_by_upload", "runs", ["upload_held", "status"])
    op.create_table(
        "run_events",
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("at", sa.Double, nullable=False),
    )
    op.create_table(
        "idempotency_keys",
        sa.Column("owner", sa.Text, primary_key=True),
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("request_hash", sa.Text, nullable=False),
        sa.Column("run_id", sa.Text, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False),
    )
    op.create_index("idempotency_by_age", "idempotency_keys", ["created_at"])
    _checks_get_their_kind()
    _open_uploads_are_held()
    _pre_token_runs_get_the_reserved_owner()


def _checks_get_their_kind() -> None:
    # options is JSON text written by json.dumps: '"kind": "check"' is how a check's options read.
    op.execute(runs.update().where(runs.c.options.like('%"kind": "check"%')).values(kind="check"))


def _open_uploads_are_held() -> None:
    # An open run with an upload still needs it (an ended one's is swept as an orphan). Sizes are
    # not known here: 0 until the run ends, which it will.
    has_upload = sa.or_(runs.c.kind == "check", runs.c.options.like('%"upload": %'))
    op.execute(runs.update().where(runs.c.status.in_(("queued", "running", "waiting")), has_upload)
               .values(upload_held=1))


def _pre_token_runs_get_the_reserved_owner() -> None:
    first_token = sa.select(sa.func.min(tokens.c.created_at)).scalar_subquery()
    before_tokens = sa.or_(first_token.is_(None), runs.c.created_at < first_token)
    op.execute(runs.update().where(runs.c.owner == "local", before_tokens).values(owner="~local"))
