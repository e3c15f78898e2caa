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

``RedisBus`` keeps two connections of its own (``server.redis_io.resp``): one publishes, one is
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
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar

from server.errors import BusError

log = logging.getLogger(__name__)

Handler = Callable[[str, bytes], None]
"""Called with the topic and the message."""


class Subscription:
    """One handler on one topic; ``cancel()`` stops its deliveries (idempotent)."""

    def __init__(self, bus: TopicTable, topic: str, handler: Handler) -> None:
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


class TopicTable:
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


class LocalBus(TopicTable):
    """The bus inside one process: a publish schedules each delivery on the event loop."""

    _loop: asyncio.AbstractEventLoop | None = None  # the loop it delivers on, once known

    async def publish(self, topic: str, message: bytes) -> None:
        self._check_open()
        if topic in self._handlers:
            asyncio.get_running_loop().call_soon(self._deliver, topic, message)

    async def publish_many(self, messages: list[tuple[str, bytes]]) -> None:
        if self.closed:
            self._check_open()  # raises
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        handlers, call_soon = self._handlers, loop.call_soon
        for topic, message in messages:
            if topic in handlers:
                call_soon(self._deliver, topic, message)

    def publish_soon(self, topic: str, message: bytes) -> None:
        """``publish`` with nothing to await: the delivery is scheduled at once (the
        embedded server's rooms publish every batch so, with no task between)."""
        if self.closed:
            self._check_open()  # raises
        if topic in self._handlers:
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            loop.call_soon(self._deliver, topic, message)

    async def subscribe(self, topic: str, handler: Handler) -> Subscription:
        return self._add(topic, handler)[0]

    async def close(self) -> None:
        self.closed = True
        self._handlers.clear()


MAX_AT_ONCE = 256  # messages a publisher sends in one round trip (publish_many)

T = TypeVar("T")


class Outbox(Generic[T]):
    """What one publisher task sends, in order: ``asyncio.Queue``'s ``put_nowait``,
    ``task_done`` and ``join`` for one consumer, which takes every item queued at once
    (``take``). A game's every batch passes through it, so it costs a handful of calls an
    item where ``asyncio.Queue`` and ``next_batch`` took about twenty."""

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._waiting: asyncio.Future[None] | None = None  # the consumer's, while empty
        self._unfinished = 0  # items put and not yet marked done
        self._finished: asyncio.Event | None = None  # made by ``join`` only when it waits
        self._loop: asyncio.AbstractEventLoop | None = None  # the consumer's, once it waits

    def put_nowait(self, item: T) -> None:
        self._items.append(item)
        self._unfinished += 1
        waiting = self._waiting
        if waiting is not None:
            self._waiting = None
            if not waiting.done():  # (its consumer was cancelled meanwhile)
                waiting.set_result(None)

    async def take(self, at_most: int = MAX_AT_ONCE) -> list[T]:
        """The items queued, oldest first, ``at_most`` of them, waiting for one if none is."""
        items = self._items
        while not items:
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            self._waiting = loop.create_future()
            await self._waiting
        if len(items) <= at_most:
            taken = list(items)
            items.clear()
            return taken
        return [items.popleft() for _ in range(at_most)]

    def empty(self) -> bool:
        return not self._items

    def task_done(self) -> None:
        """One item taken is dealt with (``join`` returns once every item put is)."""
        self._unfinished -= 1
        if not self._unfinished and self._finished is not None:
            self._finished.set()
            self._finished = None

    async def join(self) -> None:
        """Wait until every item put so far is marked done."""
        if self._unfinished:
            if self._finished is None:
                self._finished = asyncio.Event()
            await self._finished.wait()


def next_batch(outbox: asyncio.Queue[Any] | Outbox[Any]) -> Awaitable[list[Any]]:
    """The next item of ``outbox`` (waiting for one), and every item queued behind it up to
    ``MAX_AT_ONCE``: what one ordered publisher sends with one ``publish_many``."""
    if isinstance(outbox, Outbox):
        return outbox.take(MAX_AT_ONCE)
    return _drain_queue(outbox)


async def _drain_queue(outbox: asyncio.Queue[Any]) -> list[Any]:
    items = [await outbox.get()]
    while len(items) < MAX_AT_ONCE and not outbox.empty():
        items.append(outbox.get_nowait())
    return items
