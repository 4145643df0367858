"""The database, model and server fixtures live in tests/db_fixtures.py, a plugin loaded by
tests/conftest.py so that every test group (integration, reliability, security, e2e) shares
one embedded Postgres and one model. The helpers are re-exported for older imports."""

from tests.db_fixtures import free_port, serving

__all__ = ["free_port", "serving"]
