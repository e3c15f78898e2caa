"""Fixtures for every test package: real Redis and PostgreSQL servers (see tests/services.py)."""

from services import (  # noqa: F401
    postgres_server,
    postgres_url,
    redis_factory,
    redis_server,
    redis_url,
)
