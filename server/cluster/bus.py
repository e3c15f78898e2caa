"""The bus between the nodes of a cluster: Redis pub/sub on connections of its own.

See ``server.node.bus`` for what a bus promises; this is its Redis implementation.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server.errors import BusError
from server.node.bus import Handler, Subscription, TopicTable
from server.redis_io.resp import RespConnection, RespReplyError, is_error, open_connection

log = logging.getLogger(__name__)


class RedisBus(TopicTable):
    """The bus between nodes on Redis pub/sub; open one with ``await RedisBus.open(url)``.

    Topics are Redis channels named ``prefix + topic``, so several Qubic installations (or
    tests) can share one Redis. Two connections of its own (``server.redis_io.resp``, not redis-py:
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
        answer_timeout: float = 1.0,
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
        self.answer_timeout = answer_timeout
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
        answer_timeout: float = 1.0,
    ) -> RedisBus:
        """Connect to Redis at ``url`` (``redis://host:6379/0``); raises ``BusError`` if it
        cannot be reached within ``timeout`` seconds. A publish or a PING that Redis does
        not answer within ``answer_timeout`` seconds counts as a lost connection (a Redis
        paused or cut off without a reset): the bus is down until it reconnects, so the
        node refuses game requests at once instead of holding them."""
        try:
            publisher = await open_connection(url, timeout)
        except (ConnectionError, OSError, TimeoutError, RespReplyError) as exc:
            raise BusError(f"cannot reach Redis at {url}: {exc}") from None
        bus = cls(url, publisher, prefix=prefix, ping_interval=ping_interval,
                  max_backoff=max_backoff, timeout=timeout, answer_timeout=answer_timeout)
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
            publisher = self._publisher
            try:
                await asyncio.wait_for(publisher.send(commands), self.answer_timeout)
            except TimeoutError:
                self._silent(publisher, f"no answer to a publish in {self.answer_timeout} s")
                raise
        except (ConnectionError, OSError, TimeoutError, RespReplyError) as exc:
            raise BusError(f"cannot publish on Redis: {exc}") from exc

    def _silent(self, publisher: RespConnection, why: str) -> None:
        """Redis stopped answering (paused, or the network dropped it silently): both
        connections are given up at once, so the bus is down (``connected`` False) until
        the reader connects again."""
        publisher.abort(why)
        subscriber = self._subscriber
        if subscriber is not None:
            subscriber.abort(why)

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
        and give the connection up if it goes unanswered for ``answer_timeout`` (a Redis
        paused, or a silent network)."""
        loop = asyncio.get_running_loop()
        while True:
            checked = loop.time()
            await asyncio.wait([subscriber.lost], timeout=self.ping_interval)
            if subscriber.lost.done():
                raise subscriber.lost.result()
            if subscriber.last_heard >= checked:
                continue
            pinged = loop.time()
            subscriber.write("PING")
            await asyncio.wait([subscriber.lost], timeout=self.answer_timeout)
            if subscriber.lost.done():
                raise subscriber.lost.result()
            if subscriber.last_heard < pinged:
                raise ConnectionError(
                    f"Redis did not answer a PING in {self.answer_timeout} s")

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
