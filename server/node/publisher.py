"""The rooms' publisher: each game's messages as numbered batches on its bus topic, in the
order they were decided, for every node's ``Delivery`` (``server.node.delivery``)."""

from __future__ import annotations

import asyncio
import logging

from server.errors import BusError
from server.game.room import GameRoom, Outbound
from server.node.bus import Bus, LocalBus, Outbox, next_batch
from server.node.delivery import EPOCH_BITS, GAME_TOPIC, Peer, pack
from server.protocol import ServerMessage
from server.tasks import stop_tasks

log = logging.getLogger(__name__)


class Publisher:
    """Numbers each game's batches (``published``: the last one's sequence) and publishes
    them in order: on the in-process bus at once (``LocalBus.publish_soon`` schedules each
    delivery in turn), on any other bus through one task, so the bus keeps their order."""

    def __init__(self, bus: Bus, node: str) -> None:
        self.bus = bus
        self.node = node
        self.published: dict[str, int] = {}  # game -> batches published (their sequence)
        self._outbox: Outbox[tuple[str, bytes]] = Outbox()
        self._task: asyncio.Task[None] | None = None
        self._local = bus if isinstance(bus, LocalBus) else None

    def number_from(self, game_id: str, seq: int) -> None:
        """Number the game's next batch ``seq + 1``."""
        self.published[game_id] = seq

    def first_of_epoch(self, game_id: str, epoch: int | None) -> int:
        """Number the batches of a game made here from the start of ``epoch`` (its
        ownership's token: none on the embedded server); returns that start."""
        seq = self.published[game_id] = (epoch or 0) << EPOCH_BITS
        return seq

    def deliver(
        self, room: GameRoom, events: list[Outbound], only: Peer | None = None,
        reply: ServerMessage | None = None, force: bool = False,
    ) -> None:
        """Publish ``events`` (and ``reply`` to ``only``) as the room's next batch (with
        ``force``, an empty one too)."""
        if not events and reply is None and not force:
            return
        published, game_id = self.published, room.id
        seq = published[game_id] = published.get(game_id, 0) + 1
        topic, batch = GAME_TOPIC + game_id, pack(seq, events, only, reply, self.node)
        if self._local is not None:
            try:
                self._local.publish_soon(topic, batch)
            except BusError:  # closed: the server stopped, its sessions with it; only a
                # session closing after the hub (a bot API stream leaving its game) gets here
                log.debug("events for %s not published: the server has stopped", topic)
            return
        self._outbox.put_nowait((topic, batch))
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._publish(),
                                                                name="rooms-publisher")

    def forget(self, game_id: str) -> None:
        self.published.pop(game_id, None)

    async def flush(self) -> None:
        """Wait until every batch made so far is published."""
        if self._task is not None:
            await self._outbox.join()

    async def close(self) -> None:
        """Publish what was decided (before the sessions close), then stop."""
        if self._task is not None:
            await self._outbox.join()
            await stop_tasks([self._task])  # it publishes: a cancel can be lost there
        await asyncio.sleep(0)  # the bus's own delivery turn

    async def _publish(self) -> None:
        """Publish the batches in the order they were made."""
        while True:
            batches = await next_batch(self._outbox)  # what queued meanwhile: one round trip
            try:
                await self.bus.publish_many(batches)
            except Exception:
                log.exception("events for %s were not published",
                              ", ".join(topic for topic, _ in batches))
            finally:
                for _ in batches:
                    self._outbox.task_done()
