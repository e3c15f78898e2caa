"""The fault suite's short run (issue 37): three ``qubic serve`` nodes, Redis and a durable
PostgreSQL of their own, a few games played by clients that record everything, and
``bench.faults.SHORT``'s faults injected by PID at a small scale: the owner paused, a node
killed with SIGKILL and replaced, Redis paused, PostgreSQL restarted, and the targeted run
that holds the end of games unwritable while an owner is killed. Every check holds: each
acknowledged move stored at its ply and heard by the opponent, nothing after a game's end, no
decided board left active, no write under a stale fence, versions never backwards. The full
table is ``python -m bench.faults`` (docs/cluster.md, "Faults tried")."""

from __future__ import annotations

import pytest

from bench.faults import HEADER, SHORT, run


@pytest.mark.slow
@pytest.mark.timeout(400)
async def test_the_short_fault_run_keeps_every_promise() -> None:
    # (in a short folder of /tmp of its own, removed after: PostgreSQL's unix socket lives in
    # its data folder, and pytest's tmp_path is too long a path for one)
    outcomes = await run(list(SHORT), games=3, warmup=1.5, think=(0.05, 0.15), scale=0.2,
                         ttl=1.0, seed=37, timeout=60.0)
    table = "\n".join([HEADER, *(outcome.row() for outcome in outcomes)])
    for outcome in outcomes:
        assert outcome.ok, table
        assert outcome.acked > 0, table
    assert sum(outcome.finished for outcome in outcomes) >= len(outcomes), table
    kill = next(outcome for outcome in outcomes if outcome.fault == "kill-restart")
    assert kill.max_refusal <= 4 * 1.0, table  # 2-2 1/3 x ttl, not 6 x ttl (issue 37)
