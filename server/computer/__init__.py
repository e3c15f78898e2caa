"""The computer: where its moves are searched, away from the event loop (one name for the idea:
the ``Computer*`` classes, the ``--computer-*`` options and this package).

``moves`` is what the hub asks (the job, the ``ComputerMoves`` interface, its error);
``decide`` the one function that finds a move; ``local`` the process pool that runs it (the
embedded server's, and each ``qubic worker``'s); ``fleet`` the cluster's engine fleet on Redis
(node side and worker side); ``lifeline`` and ``forkserver_preload`` tie the pool's processes
to the server's life.
"""
