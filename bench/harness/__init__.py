"""What the benchmarks and the tests share to drive a real Qubic server from outside.

- :mod:`.procs`: the Linux /proc helpers (CPU time of a process tree, its descendants, RSS)
  and the open-files limit;
- :mod:`.server`: ``qubic serve`` as a subprocess (:class:`ServerProcess`);
- :mod:`.services`: real Redis and PostgreSQL servers from their wheels, on loopback;
- :mod:`.bot`: a websocket client of the game protocol that routes what arrives (:class:`Bot`);
- :mod:`.stats`: percentiles by one rule, the server's own (``server.metrics.percentile``);
- :mod:`.generators`: load-generator processes (shares, queues, the collector's hygiene);
- :mod:`.positions`: short random games that have not ended, to ask an engine about.

A benchmark imports it as ``harness`` (a script run as ``python bench/x.py`` has ``bench/``
on its path); the tests as ``bench.harness`` (pytest puts the checkout on the path). So the
modules here import each other relatively, and import nothing from ``tests``. The server
never imports this package.
"""

from .procs import descendants
from .server import ServerProcess

__all__ = ["ServerProcess", "descendants"]
