"""Computer moves on an engine fleet: jobs on Redis streams, answered by ``qubic worker``s.

As lichess spreads analysis over its fishnet workers, a node does not search: it puts each
computer move as a job on a Redis stream, and ``qubic worker`` processes on any machine pull
jobs through a consumer group (they need no open port), search with the same ``ComputerPool`` the
embedded server uses (whose processes run ``server.engine_pool.decide.decide_move``), and put
the answer on the asking node's own answer stream.

Redis keys (under a prefix, ``qubic:`` by default)::

    fleet:jobs:<spec>       a stream per player spec (level1 … level8); group "workers"
    fleet:answers:<node>    one node's answers, read only by that node
    fleet:workers           sorted set: worker id -> last heartbeat (unix seconds)
    fleet:worker:<id>       hash: processes, levels, host, pid (expires with the worker)
    fleet:cancel:<job>      set when the asking node no longer wants the answer

What holds:
- A job carries everything the search needs (variant, moves, spec, seed, time, depth) and
  when it expires. A job read by a worker that then dies stays pending in the group; once it
  has been pending past its own time plus ``RECLAIM_GRACE`` another worker claims it.
- Each job is answered once: the node keeps the first answer for a job it still waits for
  and drops any other (a presumed-dead worker's late answer). The hub drops an answer for a
  position that has moved on, as it does for the local pool.
- A job whose game ended or was resigned is cancelled: its worker stops searching, and a
  worker that reads it later (or would take it over) drops it unplayed.
- A busy worker makes one round trip between two searches: a Lua script posts the answer,
  acknowledges and deletes the job, and reads the next one (``SETTLE_AND_TAKE``). A worker
  that stops gives the jobs it holds back to their streams, for another to take at once.
- With no live worker, ``ready`` is false and the hub tells a computer game's players so;
  jobs wait in the stream and go on when a worker joins.

The package in three modules: ``jobs`` (the wire: a job, an answer, the key names and the
timings both sides keep), ``node`` (``Fleet``: the hub's ``ComputerMoves`` on a node, which
queues jobs and reads answers) and ``worker`` (``FleetWorker``: what ``qubic worker`` runs,
which takes jobs, searches them in its own ``ComputerPool`` and answers). Cluster only: the
embedded server never imports it. The names the server's start-up and the fleet benchmark
use are gathered here too.
"""

from server.engine_pool.fleet.jobs import EXPIRES, GROUP, Job, Keys, open_redis
from server.engine_pool.fleet.node import Fleet

# what server.http.app and bench/fleet.py import from the package
__all__ = ["EXPIRES", "GROUP", "Fleet", "Job", "Keys", "open_redis"]
