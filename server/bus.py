"""The message bus between the parts of a server, and between the nodes of a cluster.

A ``Bus`` carries opaque byte messages on named topics: ``publish`` to a topic, ``subscribe`` a
handler to it, ``close`` at shutdown. Delivery is at most once and in publish order per
publisher and topic; a message published while nobody listens is gone. That is what Redis
pub/sub gives, so the in-process bus promises no more: code written against ``LocalBus`` (the
embedded server) behaves the same on ``RedisBus`` (a cluster), as Colyseus's ``LocalPresence``
and ``RedisPresence`` do. Anything that must not be lost goes to the store first; the bus only
says that something happened.

Handlers are plain functions called on the event loop, one message at a time, never from
inside ``publish``; one that raises is logged and the others still run. A handler that must
await starts a task.

``RedisBus`` keeps two connections of its own (``server.resp``): one publishes, one is
subscribed and is read as its bytes arrive. If Redis goes away (restart, network) it
reconnects by itself with backoff, subscribes again to every topic, and then calls the
``on_resume`` callbacks: messages published during the gap are lost, so a listener that
mirrors state (a room's spectators, the lobby) resynchronises from the record. While Redis is
unreachable ``publish`` raises ``BusError``; a silent connection (no FIN, a cut network) is
found by a PING after ``ping_interval`` seconds of quiet. When the bus loses Redis it drops
its publishing connection and the idle connections of the clients given to ``watch_over``:
after a restart each of them would fail its next command once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any, Protocol

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server.errors import ServerError
from server.resp import RespConnection, RespReplyError, is_error, open_connection

log = logging.getLogger(__name__)

Handler = Callable[[str, bytes], None]
"""Called with the topic and the message."""


class BusError(ServerError, ConnectionError):
    """The bus cannot carry a message now (Redis unreachable) or has been closed."""

    code = "unavailable"  # ErrorCode.UNAVAILABLE, should a client be told


class Subscription:
    """One handler on one topic; ``cancel()`` stops its deliveries (idempotent)."""

    def __init__(self, bus: _Topics, topic: str, handler: Handler) -> None:
        self.topic = topic
        self.handler = handler
        self._bus = bus
        self.active = True

    async def cancel(self) -> None:
        if self.active:
            self.active = False
            await self._bus._remove(self)


class Bus(Protocol):
    """Topics of byte messages between the parts of a server or the nodes of a cluster."""

    async def publish(self, topic: str, message: bytes) -> None:
        """Send ``message`` to every handler subscribed to ``topic`` now, on any node.

        Returns once the bus has taken it; raises ``BusError`` if it cannot.
        """
        ...

    async def publish_many(self, messages: list[tuple[str, bytes]]) -> None:
        """``publish`` each ``(topic, message)`` in order, in one round trip where the bus
        has them; raises ``BusError`` if it cannot (then any of them may be lost)."""
        ...

    async def subscribe(self, topic: str, handler: Handler) -> Subscription:
        """Call ``handler`` for every message published on ``topic`` from the moment this
        returns."""
        ...

    def on_resume(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` after the bus was cut off and is back: messages may have been
        lost meanwhile. (The in-process bus is never cut off.)"""
        ...

    async def close(self) -> None:
        """Stop every delivery; later calls raise ``BusError``. Idempotent."""
        ...


class _Topics:
    """Handlers by topic, and their calling: what both buses share."""

    def __init__(self) -> None:
        self._handlers: defaultdict[str, list[Subscription]] = defaultdict(list)
        self._resume_callbacks: list[Callable[[], None]] = []
        self.closed = False
        self.delivered = 0  # handler calls made, for metrics

    def _check_open(self) -> None:
        if self.closed:
            raise BusError("the bus is closed")

    def _add(self, topic: str, handler: Handler) -> tuple[Subscription, bool]:
        """A new subscription, and whether it is the topic's first."""
        self._check_open()
        subscription = Subscription(self, topic, handler)
        first = not self._handlers[topic]
        self._handlers[topic].append(subscription)
        return subscription, first

    async def _remove(self, subscription: Subscription) -> None:
        handlers = self._handlers.get(subscription.topic, [])
        with contextlib.suppress(ValueError):
            handlers.remove(subscription)
        if not handlers:
            self._handlers.pop(subscription.topic, None)
            await self._last_handler_gone(subscription.topic)

    async def _last_handler_gone(self, topic: str) -> None:
        pass

    def _deliver(self, topic: str, message: bytes) -> None:
        for subscription in list(self._handlers.get(topic, ())):
            if not subscription.active:
                continue
            self.delivered += 1
            try:
                subscription.handler(topic, message)
            except Exception:
                log.exception("a handler of bus topic %s failed", topic)

    def on_resume(self, callback: Callable[[], None]) -> None:
        self._resume_callbacks.append(callback)

    def _resumed(self) -> None:
        for callback in list(self._resume_callbacks):
            try:
                callback()
            except Exception:
                log.exception("a bus resume callback failed")


class LocalBus(_Topics):
    """The bus inside one process: a publish schedules each delivery on the event loop."""

    async def publish(self, topic: str, message: bytes) -> None:
        self._check_open()
        if topic in self._handlers:
            asyncio.get_running_loop().call_soon(self._deliver, topic, message)

    async def publish_many(self, messages: list[tuple[str, bytes]]) -> None:
        for topic, message in messages:
            await self.publish(topic, message)

    async def subscribe(self, topic: str, handler: Handler) -> Subscription:
        return self._add(topic, handler)[0]

    async def close(self) -> None:
        self.closed = True
        self._handlers.clear()


MAX_AT_ONCE = 256  # messages a publisher sends in one round trip (publish_many)


async def drain(outbox: asyncio.Queue[Any]) -> list[Any]:
    """The next item of ``outbox`` (waiting for one), and every item queued behind it up to
    ``MAX_AT_ONCE``: what one ordered publisher sends with one ``publish_many``."""
    items = [await outbox.get()]
    while len(items) < MAX_AT_ONCE and not outbox.empty():
        items.append(outbox.get_nowait())
    return items


POOL_SIZE = 64  # connections a node's client opens to Redis at most; more callers wait
POOL_WAIT = 10.0  # seconds a caller waits for one of them before it fails


def client_for(url: str, timeout: float = 5.0) -> aioredis.Redis:
    """A client for Redis at ``url`` whose callers wait for a free connection (up to
    ``POOL_WAIT``) when ``POOL_SIZE`` are busy: a burst of calls (a dead node's games taken
    over at once) queues instead of failing on redis-py's plain pool (``Too many
    connections`` past 100)."""
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=POOL_SIZE, timeout=POOL_WAIT, socket_connect_timeout=timeout,
        socket_keepalive=True)
    return aioredis.Redis.from_pool(pool)


async def connect(url: str, timeout: float = 5.0) -> aioredis.Redis:
    """A client for Redis at ``url`` (``client_for``) that has answered a PING; raises
    ``BusError`` if Redis cannot be reached within ``timeout`` seconds."""
    client = client_for(url, timeout)
    try:
        await asyncio.wait_for(client.ping(), timeout)
    except (RedisError, OSError, TimeoutError) as exc:
        await client.aclose()
        raise BusError(f"cannot reach Redis at {url}: {exc}") from None
    return client


class RedisBus(_Topics):
    """The bus between nodes on Redis pub/sub; open one with ``await RedisBus.open(url)``.

    Topics are Redis channels named ``prefix + topic``, so several Qubic installations (or
    tests) can share one Redis. Two connections of its own (``server.resp``, not redis-py:
    they are the hot path): one publishes, one is subscribed.
    """

    def __init__(
        self,
        url: str,
        publisher: RespConnection,
        *,
        prefix: str,
        ping_interval: float,
        max_backoff: float,
        timeout: float,
    ) -> None:
        super().__init__()
        self.url = url
        self._publisher = publisher  # made again on the next publish once lost
        self._connecting: asyncio.Lock = asyncio.Lock()
        self._subscriber: RespConnection | None = None  # the reader task's, when connected
        self.prefix = prefix
        self.ping_interval = ping_interval
        self.max_backoff = max_backoff
        self.timeout = timeout
        self._confirmed: set[str] = set()  # channels Redis has confirmed on this connection
        self._waiting: defaultdict[str, list[asyncio.Future[None]]] = defaultdict(list)
        self._connected = asyncio.Event()
        self._companions: list[aioredis.Redis] = []
        self.reconnects = 0  # times the connection was lost and made again, for metrics
        self._reader = asyncio.create_task(self._read_forever(), name="qubic-bus-reader")

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        prefix: str = "qubic:",
        ping_interval: float = 5.0,
        max_backoff: float = 2.0,
        timeout: float = 5.0,
    ) -> RedisBus:
        """Connect to Redis at ``url`` (``redis://host:6379/0``); raises ``BusError`` if it
        cannot be reached within ``timeout`` seconds."""
        try:
            publisher = await open_connection(url, timeout)
        except (ConnectionError, OSError, TimeoutError, RespReplyError) as exc:
            raise BusError(f"cannot reach Redis at {url}: {exc}") from None
        bus = cls(url, publisher, prefix=prefix, ping_interval=ping_interval,
                  max_backoff=max_backoff, timeout=timeout)
        try:
            await asyncio.wait_for(bus._connected.wait(), timeout)
        except TimeoutError:
            await bus.close()
            raise BusError(f"cannot subscribe on Redis at {url}") from None
        return bus

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def watch_over(self, client: aioredis.Redis) -> None:
        """Drop ``client``'s idle connections whenever the bus loses Redis: after a restart
        each would fail its next command once."""
        self._companions.append(client)

    async def _drop_idle_connections(self) -> None:
        self._publisher.close()  # (made again on the next publish)
        for client in self._companions:
            with contextlib.suppress(RedisError, OSError):
                await client.connection_pool.disconnect(inuse_connections=False)

    async def publish(self, topic: str, message: bytes) -> None:
        await self.publish_many([(topic, message)])

    async def publish_many(self, messages: list[tuple[str, bytes]]) -> None:
        """The messages go in one write, in order, and their answers come back in one read
        (a pipeline), where one ``publish`` each waited a round trip."""
        self._check_open()
        commands = [(b"PUBLISH", self.prefix + topic, message) for topic, message in messages]
        try:
            if not self._publisher.is_open:
                async with self._connecting:
                    if not self._publisher.is_open:
                        self._publisher = await open_connection(self.url, self.timeout)
            await self._publisher.send(commands)
        except (ConnectionError, OSError, TimeoutError, RespReplyError) as exc:
            raise BusError(f"cannot publish on Redis: {exc}") from exc

    async def subscribe(self, topic: str, handler: Handler) -> Subscription:
        """Subscribe; if Redis is unreachable this waits until it is back."""
        subscription, first = self._add(topic, handler)
        channel = self.prefix + topic
        if channel in self._confirmed:
            return subscription
        confirmed = asyncio.get_running_loop().create_future()
        self._waiting[channel].append(confirmed)
        if first:
            self._send("SUBSCRIBE", channel)
        try:
            await confirmed
        except BaseException:
            await subscription.cancel()
            raise
        return subscription

    async def _last_handler_gone(self, topic: str) -> None:
        channel = self.prefix + topic
        self._confirmed.discard(channel)
        if not self.closed:
            self._send("UNSUBSCRIBE", channel)

    def _send(self, command: str, *channels: str) -> None:
        """Send (UN)SUBSCRIBE on the subscribed connection; if it is down, the reader will
        subscribe again to whatever has handlers when it reconnects."""
        if self._subscriber is not None and self._subscriber.is_open:
            self._subscriber.write(command, *channels)

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        for futures in self._waiting.values():
            for future in futures:
                if not future.done():
                    future.set_exception(BusError("the bus is closed"))
        self._waiting.clear()
        self._handlers.clear()
        self._publisher.close()

    # The reader task.

    async def _read_forever(self) -> None:
        backoff = 0.05
        ever_connected = False
        while True:
            subscriber = None
            try:
                subscriber = await open_connection(self.url, self.timeout)
                subscriber.subscribe_mode(self._pushed)
                self._subscriber = subscriber
                channels = [self.prefix + topic for topic in self._handlers]
                if channels:
                    subscriber.write("SUBSCRIBE", *channels)
                self._connected.set()
                if ever_connected:
                    self.reconnects += 1
                    log.warning("reconnected to Redis; resubscribed to %d topics", len(channels))
                    self._resume_when_confirmed(channels)
                ever_connected = True
                backoff = 0.05
                await self._watch(subscriber)
            except (ConnectionError, OSError, TimeoutError, RespReplyError) as exc:
                if self._connected.is_set():
                    log.warning("lost the connection to Redis: %s", exc)
                    await self._drop_idle_connections()
            finally:
                self._connected.clear()
                self._subscriber = None
                self._confirmed.clear()
                if subscriber is not None:
                    subscriber.close()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.max_backoff)

    async def _watch(self, subscriber: RespConnection) -> None:
        """Return when the connection is lost; after ``ping_interval`` of quiet send a PING,
        and give the connection up if two go unanswered (a silent network)."""
        unanswered = 0
        while True:
            checked = asyncio.get_running_loop().time()
            await asyncio.wait([subscriber.lost], timeout=self.ping_interval)
            if subscriber.lost.done():
                raise subscriber.lost.result()
            if subscriber.last_heard >= checked:
                unanswered = 0
                continue
            if unanswered >= 2:
                raise ConnectionError("Redis did not answer two PINGs")
            unanswered += 1
            subscriber.write("PING")

    def _pushed(self, reply: Any) -> None:
        """What Redis sent on the subscribed connection."""
        if is_error(reply):  # an error object, not a list
            log.warning("Redis refused a command on the bus's subscribed connection: %s", reply)
            return
        kind = reply[0]
        if kind == b"message":
            self._deliver(reply[1].decode()[len(self.prefix) :], reply[2])
        elif kind == b"subscribe":
            name = reply[1].decode()
            self._confirmed.add(name)
            for future in self._waiting.pop(name, []):
                if not future.done():
                    future.set_result(None)

    def _resume_when_confirmed(self, channels: list[str]) -> None:
        """Tell listeners that the bus is back once Redis confirms every subscription."""
        pending = [self._future(channel) for channel in channels]

        async def resume() -> None:
            with contextlib.suppress(BusError):
                await asyncio.gather(*pending)
                self._resumed()

        if pending:
            asyncio.get_running_loop().create_task(resume())
        else:
            self._resumed()

    def _future(self, channel: str) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[channel].append(future)
        return future
