"""Which node runs a tournament, in a cluster: the one holding its lease.

A tournament is one more owned thing, as a game or the lobby is: its director
(``server.node.tournaments``) runs on the node holding the lease ``tournament:{id}``
(``server.cluster.lease``), renewed by the director's rounds (once a second), so when that node
dies the lease expires (``ttl``) and the next node to look takes the tournament over, rebuilding
it from the database (its players, games and results are all there). A node that cannot reach
Redis holds nothing: it stops pairing until it can renew, rather than risk two directors.
"""

from __future__ import annotations

import asyncio
import logging

from server.cluster.lease import Lease, LeaseError, Leases

log = logging.getLogger(__name__)


class LeaseHolding:
    """``server.node.tournaments.Holding`` over the cluster's leases."""

    def __init__(self, leases: Leases) -> None:
        self.leases = leases
        self.held: dict[str, Lease] = {}

    @staticmethod
    def key(tournament_id: str) -> str:
        return f"tournament:{tournament_id}"

    async def hold(self, tournament_id: str) -> bool:
        """Take the tournament's lease, or renew it when half its time has gone; False if
        another node holds it (or Redis cannot be reached)."""
        now = asyncio.get_running_loop().time()
        lease = self.held.get(tournament_id)
        try:
            if lease is not None:
                if lease.expires - now > self.leases.ttl / 2:
                    return True
                renewed = await self.leases.renew(lease)
                if renewed is not None:
                    self.held[tournament_id] = renewed
                    return True
                del self.held[tournament_id]
                log.warning("tournament %s: its lease was lost", tournament_id)
            taken = await self.leases.acquire(self.key(tournament_id))
        except LeaseError as error:
            self.held.pop(tournament_id, None)
            log.warning("tournament %s: not held (%s)", tournament_id, error)
            return False
        if taken is None:
            return False
        self.held[tournament_id] = taken
        return True

    async def release(self, tournament_id: str) -> None:
        lease = self.held.pop(tournament_id, None)
        if lease is not None:
            try:
                await self.leases.release(lease)
            except LeaseError as error:  # it expires by itself
                log.warning("tournament %s: its lease was not released: %s", tournament_id,
                            error)

    async def close(self) -> None:
        for tournament_id in list(self.held):
            await self.release(tournament_id)
