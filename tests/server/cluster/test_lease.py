"""Game leases on a real Redis: acquire, renew, expiry and takeover, a stale holder refused by
Redis and, through its fencing token, by the PostgreSQL store."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import pytest

from server.cluster.lease import Lease, LeaseError, Leases
from server.errors import StoreError
from server.game.records import MoveRecord, Seat
from server.store.factory import open_store
from tests.eventually import eventually
from tests.services import RedisServer

TIMEOUT = 10.0
SHORT = 0.2  # seconds: a lease ttl short enough to wait out


@pytest.fixture
async def node_a(redis_url: str) -> AsyncIterator[Leases]:
    leases = await Leases.open(redis_url, "node-a")
    yield leases
    await leases.close()


@pytest.fixture
async def node_b(redis_url: str) -> AsyncIterator[Leases]:
    leases = await Leases.open(redis_url, "node-b")
    yield leases
    await leases.close()


async def expire(leases: Leases, game_id: str) -> None:
    """Wait until Redis has let the game's lease expire."""

    async def expired() -> bool:
        return await leases.holder(game_id) is None

    await eventually(expired, "Redis let the lease expire", timeout=TIMEOUT, every=SHORT / 4)


async def test_one_node_holds_a_game_and_the_other_is_refused(
    node_a: Leases, node_b: Leases
) -> None:
    lease = await node_a.acquire("g1")
    assert lease is not None and lease.node == "node-a" and lease.token >= 1 and lease.valid()
    assert await node_b.acquire("g1") is None
    assert await node_b.holder("g1") == ("node-a", lease.token)
    # the holder asking again takes the game up afresh under a new token (issue 37: a node
    # reloading its own game under the same token restarted its batches silently)
    again = await node_a.acquire("g1")
    assert again is not None and again.token > lease.token
    assert await node_a.renew(lease) is None  # the old token is stale from then on
    assert await node_b.holder("g1") == ("node-a", again.token)
    other = await node_b.acquire("g2")
    assert other is not None and other.token > again.token  # one counter: tokens only grow


async def test_a_burst_of_claims_waits_for_connections_rather_than_failing(
    node_a: Leases, node_b: Leases
) -> None:
    # A dead node's games are claimed at once, each claim a Redis call of its own: more at a
    # time than a node's client keeps connections (redis-py's plain pool failed the 101st
    # with "Too many connections", and those takeovers waited for the next sweep).
    games = [f"g{i}" for i in range(300)]
    leases = await asyncio.gather(*(node_a.acquire(game) for game in games))
    assert all(lease is not None and lease.node == "node-a" for lease in leases)
    holders = await asyncio.gather(*(node_b.holder(game) for game in games))
    assert holders == [("node-a", lease.token) for lease in leases if lease is not None]


async def test_renewing_keeps_the_lease_past_its_first_expiry(
    node_a: Leases, node_b: Leases
) -> None:
    node_a.ttl = SHORT
    lease = await node_a.acquire("g1")
    assert lease is not None
    for _ in range(6):  # 0.3 s in all: longer than the ttl, renewed every 0.05 s
        await asyncio.sleep(SHORT / 4)
        renewed = await node_a.renew(lease)
        assert renewed is not None and renewed.token == lease.token
        assert renewed.expires >= lease.expires
        lease = renewed
    assert await node_b.acquire("g1") is None


async def test_an_expired_lease_is_taken_over_and_the_old_holder_is_refused(
    node_a: Leases, node_b: Leases
) -> None:
    node_a.ttl = SHORT
    old = await node_a.acquire("g1")
    assert old is not None
    await expire(node_a, "g1")
    assert not old.valid()  # the holder's own clock says so too: it stopped by itself
    new = await node_b.acquire("g1")
    assert new is not None and new.token > old.token
    assert await node_a.renew(old) is None
    assert await node_a.release(old) is False
    assert await node_a.acquire("g1") is None
    assert await node_b.holder("g1") == ("node-b", new.token)


async def test_releasing_hands_the_game_over_at_once(node_a: Leases, node_b: Leases) -> None:
    lease = await node_a.acquire("g1")
    assert lease is not None and await node_b.acquire("g1") is None
    assert await node_a.release(lease) is True
    assert await node_a.holder("g1") is None
    taken = await node_b.acquire("g1")
    assert taken is not None and taken.token > lease.token


async def test_renewing_many_leases_in_one_round_trip(node_a: Leases, node_b: Leases) -> None:
    leases = [await node_a.acquire(f"g{i}") for i in range(50)]
    assert all(lease is not None for lease in leases)
    held = [lease for lease in leases if lease is not None]
    await node_a.release(held[7])
    stolen = await node_b.acquire("g7")
    assert stolen is not None
    renewed = await node_a.renew_all(held)
    assert [lease is None for lease in renewed] == [i == 7 for i in range(50)]
    assert await node_a.renew_all([]) == []


async def test_tokens_stay_above_the_stores_after_redis_loses_everything(
    redis_factory: Callable[[], RedisServer],
) -> None:
    server = redis_factory()
    leases = await Leases.open(server.url, "node-a")
    try:
        first = await leases.acquire("g1")
        assert first is not None
        server.restart()  # no persistence: the counter and the lease are gone

        async def acquired() -> Lease | None:
            with contextlib.suppress(LeaseError):
                return await leases.acquire("g1", floor=41)  # the store has seen 41
            return None

        again = await eventually(acquired, "the lease acquired again", timeout=TIMEOUT)
        assert again.token == 42
        other = await leases.acquire("g2")
        assert other is not None and other.token == 43
    finally:
        await leases.close()


async def test_a_node_that_lost_its_lease_cannot_write_a_move(
    node_a: Leases, node_b: Leases, postgres_url: str
) -> None:
    """The whole fence: A owns the game, stalls past its lease, B takes over and writes; A's
    late write carries A's older token and PostgreSQL refuses it."""
    store_a, store_b = await open_store(postgres_url), await open_store(postgres_url)
    try:
        game = await store_a.create_game(
            variant="4x4x4", x=Seat.human("Alice"), o=Seat.human("Bob"), clock=None,
            rated=False, now=0.0,
        )  # fmt: skip
        node_a.ttl = SHORT
        lease_a = await node_a.acquire(game.id, floor=game.fence)
        assert lease_a is not None
        await store_a.record_move(game.id, MoveRecord(1, 0, None, None, 1.0), fence=lease_a.token)

        await expire(node_a, game.id)  # node A stalls
        record = await store_b.get_game(game.id)
        assert record is not None and record.fence == lease_a.token
        lease_b = await node_b.acquire(game.id, floor=record.fence)
        assert isinstance(lease_b, Lease) and lease_b.token > lease_a.token
        await store_b.record_move(game.id, MoveRecord(2, 5, None, None, 2.0), fence=lease_b.token)

        with pytest.raises(StoreError) as refused:  # A wakes up and tries its next move
            await store_a.record_move(
                game.id, MoveRecord(3, 9, None, None, 3.0), fence=lease_a.token
            )
        assert refused.value.code == "fenced"
        assert await node_a.renew(lease_a) is None
        final = await store_a.get_game(game.id)
        assert final is not None and final.cells == [0, 5] and final.fence == lease_b.token
    finally:
        await store_a.close()
        await store_b.close()


def test_a_node_name_cannot_hold_the_separator() -> None:
    with pytest.raises(ValueError, match="':'"):
        Leases(None, "a:b")  # type: ignore[arg-type]
