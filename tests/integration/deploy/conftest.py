"""The throwaway PostgreSQL server of tests/integration/store, for the deployment's commands."""

from tests.integration.store.conftest import postgres_dsn, postgres_server

__all__ = ["postgres_dsn", "postgres_server"]
