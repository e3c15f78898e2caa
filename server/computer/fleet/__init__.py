"""Computer moves on an engine fleet: jobs on Redis streams, answered by ``qubic worker``s.

``jobs`` is the wire between the two sides (a job, an answer, the key names and timings),
``node`` the node's side (``Fleet``, the hub's ``ComputerMoves``), ``worker`` what ``qubic
worker`` runs (``FleetWorker``); the names the server's start-up and the fleet benchmark use are
gathered here. Cluster only: the embedded server never imports it. docs/cluster.md, "Computer
players on an engine fleet", has the keys, what holds when a worker dies, and the timings."""

from server.computer.fleet.jobs import EXPIRES, GROUP, Job, Keys, open_redis
from server.computer.fleet.node import Fleet

# what server.http.app and bench/fleet.py import from the package
__all__ = ["EXPIRES", "GROUP", "Fleet", "Job", "Keys", "open_redis"]
