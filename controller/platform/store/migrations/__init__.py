"""Alembic migrations of the run store (``versions/``: one per schema change, oldest first)."""
