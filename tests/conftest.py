"""Fixtures for every test package: real Redis and PostgreSQL servers (see tests/services.py)."""

from tests.services import (  # noqa: F401
    postgres_server,
    postgres_url,
    redis_factory,
    redis_server,
    redis_url,
)


def pytest_sessionstart(session: object) -> None:
    """Compile (or load) the engine's kernels once, before any test, so a clean clone's cold
    numba cache costs the run its ~17 s here and not inside some test's wait for a computer
    move. What a cold start looks like to a player is tested on its own
    (tests/server/computer/test_lifecycle.py holds the engine cold as long as it likes)."""
    from engine.warm import warm_up

    warm_up(sparring=True)
