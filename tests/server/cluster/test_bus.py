"""The bus: the same behaviour on the in-process bus and on Redis pub/sub between two nodes,
and on Redis a restart of the real server in the middle."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable

import pytest

from server.cluster.bus import RedisBus
from server.errors import BusError
from server.node.bus import Bus, LocalBus
from tests.eventually import eventually
from tests.services import RedisServer

TIMEOUT = 10.0


class Inbox:
    """A handler that keeps what it is given, to wait for."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()

    def __call__(self, topic: str, message: bytes) -> None:
        self.queue.put_nowait((topic, message))

    async def next(self) -> tuple[str, bytes]:
        return await asyncio.wait_for(self.queue.get(), TIMEOUT)

    async def messages(self, count: int) -> list[bytes]:
        return [(await self.next())[1] for _ in range(count)]


@pytest.fixture(params=["local", "redis"])
async def nodes(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Bus, Bus]]:
    """Two nodes' buses: on Redis two connections to one server; in process one bus twice."""
    if request.param == "local":
        bus = LocalBus()
        yield bus, bus
        await bus.close()
        return
    url = request.getfixturevalue("redis_url")
    a, b = await RedisBus.open(url), await RedisBus.open(url)
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


async def barrier(publisher: Bus, subscriber: Bus, topic: str = "barrier") -> None:
    """Returns once everything ``publisher`` sent before has reached ``subscriber``."""
    arrived = asyncio.Event()
    subscription = await subscriber.subscribe(topic, lambda _topic, _message: arrived.set())
    await publisher.publish(topic, b"")
    await asyncio.wait_for(arrived.wait(), TIMEOUT)
    await subscription.cancel()


async def games_and_lobby(bus: Bus) -> tuple[Inbox, Inbox]:
    """Two inboxes on ``bus``, subscribed to ``game:1`` and ``lobby``."""
    games, lobby = Inbox(), Inbox()
    await bus.subscribe("game:1", games)
    await bus.subscribe("lobby", lobby)
    return games, lobby


async def test_a_subscriber_gets_each_message_of_its_topic_in_order(
    nodes: tuple[Bus, Bus],
) -> None:
    a, b = nodes
    games, lobby = await games_and_lobby(b)
    await a.publish("nobody-listens", b"lost")
    for i in range(100):
        await a.publish("game:1", f"move {i}".encode())
    await a.publish("lobby", b"\x00\xffbinary")
    assert await games.messages(100) == [f"move {i}".encode() for i in range(100)]
    assert await lobby.next() == ("lobby", b"\x00\xffbinary")
    await barrier(a, b)
    assert games.queue.empty() and lobby.queue.empty()


async def test_messages_published_together_arrive_in_their_order(
    nodes: tuple[Bus, Bus],
) -> None:
    a, b = nodes
    games, lobby = await games_and_lobby(b)
    together = [("game:1" if i % 3 else "lobby", f"m{i}".encode()) for i in range(300)]
    await a.publish_many([("nobody-listens", b"lost"), *together[:150]])
    await a.publish("game:1", b"between")
    await a.publish_many(together[150:])
    expected = [m for t, m in together[:150] if t == "game:1"] + [b"between"] + [
        m for t, m in together[150:] if t == "game:1"]
    assert await games.messages(len(expected)) == expected
    assert await lobby.messages(100) == [m for t, m in together if t == "lobby"]
    await barrier(a, b)
    assert games.queue.empty() and lobby.queue.empty()


async def test_every_subscriber_of_a_topic_gets_it_until_it_cancels(
    nodes: tuple[Bus, Bus],
) -> None:
    a, b = nodes
    first, second, on_a = Inbox(), Inbox(), Inbox()
    cancelled = await b.subscribe("t", first)
    await b.subscribe("t", second)
    await a.subscribe("t", on_a)
    await a.publish("t", b"one")
    for inbox in (first, second, on_a):
        assert await inbox.next() == ("t", b"one")
    await cancelled.cancel()
    await cancelled.cancel()
    await b.publish("t", b"two")
    assert await second.next() == ("t", b"two") == await on_a.next()
    await barrier(b, a)
    await barrier(a, b)
    assert first.queue.empty()


async def test_a_handler_that_fails_does_not_stop_the_others(nodes: tuple[Bus, Bus]) -> None:
    a, b = nodes
    calls: list[bytes] = []

    def broken(topic: str, message: bytes) -> None:
        calls.append(message)
        raise RuntimeError("a bug in a handler")

    kept = Inbox()
    await b.subscribe("t", broken)
    await b.subscribe("t", kept)
    await a.publish("t", b"1")
    await a.publish("t", b"2")
    assert await kept.messages(2) == [b"1", b"2"]
    assert calls == [b"1", b"2"]


async def test_a_closed_bus_refuses_and_delivers_nothing(nodes: tuple[Bus, Bus]) -> None:
    a, b = nodes
    inbox = Inbox()
    await b.subscribe("t", inbox)
    await b.close()
    await b.close()
    with pytest.raises(BusError, match="closed"):
        await b.publish("t", b"x")
    with pytest.raises(BusError, match="closed"):
        await b.subscribe("t", inbox)
    if a is not b:
        await a.publish("t", b"after")
        await barrier(a, a)
    assert inbox.queue.empty()


async def test_publishing_never_calls_a_handler_from_inside_publish() -> None:
    bus = LocalBus()
    inbox = Inbox()
    await bus.subscribe("t", inbox)
    await bus.publish("t", b"x")
    assert inbox.queue.empty()  # delivered on a later turn of the event loop
    assert await inbox.next() == ("t", b"x")
    await bus.close()


async def test_the_redis_bus_comes_back_by_itself_after_redis_restarts(
    redis_factory: Callable[[], RedisServer],
) -> None:
    server = redis_factory()
    a = await RedisBus.open(server.url, ping_interval=0.5)
    b = await RedisBus.open(server.url, ping_interval=0.5)
    resumed = asyncio.Event()
    b.on_resume(resumed.set)
    try:
        inbox = Inbox()
        await b.subscribe("game:1", inbox)
        await a.publish("game:1", b"before")
        assert await inbox.next() == ("game:1", b"before")

        server.stop()
        with pytest.raises(BusError):
            await a.publish("game:1", b"while down")
        server.start()  # the same port, an empty Redis: the subscription is gone there

        await asyncio.wait_for(resumed.wait(), TIMEOUT)
        assert b.reconnects == 1 and b.connected
        late = Inbox()
        await b.subscribe("game:2", late)  # new subscriptions work on the new connection
        await a.publish("game:1", b"after")
        await a.publish("game:2", b"new topic")
        assert await inbox.next() == ("game:1", b"after")
        assert await late.next() == ("game:2", b"new topic")
        assert inbox.queue.empty()  # "while down" was refused, not delivered
    finally:
        await a.close()
        await b.close()


async def test_a_subscription_made_while_redis_is_down_waits_for_it(
    redis_factory: Callable[[], RedisServer],
) -> None:
    server = redis_factory()
    a = await RedisBus.open(server.url, ping_interval=0.5)
    b = await RedisBus.open(server.url, ping_interval=0.5)
    try:
        server.stop()
        inbox = Inbox()
        subscribing = asyncio.create_task(b.subscribe("t", inbox))
        await asyncio.sleep(0.2)
        assert not subscribing.done()
        server.start()
        await asyncio.wait_for(subscribing, TIMEOUT)

        async def published() -> bool:  # ``a`` may still be reconnecting its publishing side
            with contextlib.suppress(BusError):
                await a.publish("t", b"x")
                return True
            return False

        await eventually(published, "a publishes again")
        assert await inbox.next() == ("t", b"x")
    finally:
        await a.close()
        await b.close()


async def test_redis_that_cannot_be_reached_is_refused_with_a_reason() -> None:
    with pytest.raises(BusError, match="cannot reach Redis"):
        await RedisBus.open("redis://127.0.0.1:1/0", timeout=2)


async def test_a_silent_redis_is_given_up_and_found_again(
    redis_factory: Callable[[], RedisServer],
) -> None:
    """No FIN, no answer (the process stopped, as a cut network looks): two unanswered PINGs
    and the bus counts itself cut off; once Redis answers again it comes back by itself."""
    server = redis_factory()
    bus = await RedisBus.open(server.url, ping_interval=0.2, timeout=1)
    resumed = asyncio.Event()
    bus.on_resume(resumed.set)
    inbox = Inbox()
    await bus.subscribe("t", inbox)
    assert server.process is not None
    try:
        server.process.send_signal(signal.SIGSTOP)
        await eventually(lambda: not bus.connected, "the paused Redis given up",
                         timeout=TIMEOUT)
    finally:
        server.process.send_signal(signal.SIGCONT)
    try:
        await asyncio.wait_for(resumed.wait(), TIMEOUT)
        assert bus.reconnects >= 1
        await bus.publish("t", b"after")
        assert await inbox.next() == ("t", b"after")
    finally:
        await bus.close()


async def test_redis_that_refuses_the_password_is_refused_with_its_reason(
    redis_url: str,
) -> None:
    wrong = redis_url.replace("redis://", "redis://someone:wrong@")
    with pytest.raises(BusError, match="cannot reach Redis.*(WRONGPASS|AUTH)"):
        await RedisBus.open(wrong, timeout=2)


async def test_an_error_on_the_subscribed_connection_is_logged_not_fatal(redis_url: str) -> None:
    bus = await RedisBus.open(redis_url)
    try:
        inbox = Inbox()
        await bus.subscribe("t", inbox)
        bus._send("GET", "k")  # refused in subscribed mode: Redis answers with an error
        await bus.publish("t", b"still here")
        assert await inbox.next() == ("t", b"still here")
        assert bus.reconnects == 0 and bus.connected
    finally:
        await bus.close()
