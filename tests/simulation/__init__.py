"""A seeded simulation of the whole server (issue 36): players, spectators, moderators and the
host on real sockets against a real server, embedded or a two-node cluster, with the invariants
of /work/shared/DESIGN.md checked after every step. See docs/simulation.md."""
