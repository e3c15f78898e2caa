"""``qubic play``: the terminal client, offline against the computer or on a server."""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

from qubic_cli.common import fail

NAME = "play"
HELP = "play in the terminal: offline against the computer, or on a server with --server"
DESCRIPTION = """\
Open the Qubic terminal client. With no --server it starts a server inside the client
(the same code as `qubic serve`, its database in your data directory) so you can play the
computer offline: press c in the lobby. With --server it joins that host; the token the
server gives you is remembered per server, so the same name comes back as the same player.

examples:
  qubic play
  qubic play --server ws://example.org:8765/ws --name ann
  qubic play --server localhost:8765 --name bob
"""

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,24}$")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", metavar="URL",
                        help="the server's websocket URL, e.g. ws://HOST:PORT/ws "
                             "(default: play offline on this computer)")
    parser.add_argument("--name", help="your player name: 1-24 letters, digits, _ or - "
                                       "(default: the last one used on that server)")
    parser.add_argument("--db", type=Path, metavar="PATH",
                        help="the offline server's database (default: in your data directory)")


def run(args: argparse.Namespace) -> int:
    from client_tui.app import QubicApp
    from client_tui.connection import server_url
    from client_tui.embedded import default_db_path
    from qubic_cli.embedded import start_embedded

    url = None
    if args.server:
        try:
            url = server_url(args.server)
        except ValueError as error:
            return fail(NAME, str(error))
    if args.name is not None and not _NAME.match(args.name):
        return fail(NAME, f"{args.name!r} is not a name: use 1-24 letters, digits, _ or -")
    db_path = args.db or default_db_path()
    db_path.parent.mkdir(parents=True, exist_ok=True)
    # The terminal belongs to the client: the embedded server logs to a file instead.
    logging.basicConfig(filename=db_path.with_suffix(".log"), level=logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    QubicApp(url, args.name, db_path=db_path, start_local=start_embedded).run()
    return 0
