"""``qubic bot``: play an outside engine on a Qubic server as a bot account (docs/bots.md).

The bridge follows the account's event stream: it accepts the challenges it may play
(``--variants``, and rated ones with ``--accept-rated``) and declines the others, then follows
each game's stream and, on its turn, asks the engine (``position <variant> <millis> <moves>``)
and posts the answer. A stream that drops is opened again (after 1 s, then longer, up to 30 s);
a game's stream that drops while the game is on is followed again from its full state.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from typing import Any

from qubic_cli.common import add_log_arguments, fail
from qubic_cli.settings import Setting, SettingsError, settle

NAME = "bot"
HELP = "play an outside engine on a server as a bot account (the bot API)"
DESCRIPTION = """\
Bridge a program that reads a position line and writes a move line (docs/bots.md) to a
Qubic server, as the bot account whose token is given: it accepts challenges, follows each
game and posts the engine's moves. The account must be a bot (`qubic admin grant NAME bot`,
or POST /api/bot/account/upgrade with its token). Ctrl-C stops it.
"""

SETTINGS = (  # also from the environment and the file (qubic_cli/settings.py)
    Setting("server", "server", "QUBIC_SERVER"),
    Setting("token", "token", "QUBIC_BOT_TOKEN", secret=True),
    Setting("log_level", "log_level", "QUBIC_LOG_LEVEL"),
    Setting("log_format", "log_format", "QUBIC_LOG_FORMAT"),
)

RECONNECT_FIRST, RECONNECT_MOST = 1.0, 30.0  # seconds before opening a dropped stream again
UNTIMED_MILLIS = 1000  # the engine's time a move in an untimed game
MOVES_TO_GO = 20  # a timed game: the engine gets its time left over this, plus the increment

log = logging.getLogger("qubic.bot")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="a TOML file of options (default: $QUBIC_CONFIG; docs/operations.md)")
    parser.add_argument("--engine", required=True, metavar="CMD",
                        help='the engine\'s command line, e.g. "./my-engine --hash 64"')
    parser.add_argument("--server", default=None, metavar="URL",
                        help="the server, e.g. http://127.0.0.1:8765 (or QUBIC_SERVER)")
    parser.add_argument("--token", default=None, metavar="TOKEN",
                        help="the bot account's token (better: QUBIC_BOT_TOKEN or "
                             "QUBIC_BOT_TOKEN_FILE, kept off the command line)")
    parser.add_argument("--accept-rated", action="store_true",
                        help="accept rated challenges too (default: casual ones only)")
    parser.add_argument("--variants", default="4x4x4", metavar="LIST",
                        help="the variants to accept, comma-separated (default 4x4x4)")
    add_log_arguments(parser)


def checked(args: argparse.Namespace) -> dict[str, Any]:
    """What ``args`` (already layered) ask of the bridge; ``SettingsError`` says what is
    missing."""
    if not args.server or not args.token:
        raise SettingsError("give --server URL and the bot's token (--token, QUBIC_BOT_TOKEN "
                            "or QUBIC_BOT_TOKEN_FILE, or in the file)")
    variants = {v.strip() for v in args.variants.split(",") if v.strip()}
    return {"server": args.server, "token": args.token, "variants": variants}


def engine_millis(state: dict[str, Any], color: str, clock: dict[str, Any] | None) -> int:
    """The engine's time for this move: untimed, ``UNTIMED_MILLIS``; else its time left over
    ``MOVES_TO_GO`` plus the increment, never more than half the time left."""
    left = state.get(f"{color}_time")
    if clock is None or left is None:
        return UNTIMED_MILLIS
    share = left // MOVES_TO_GO + 1000 * int(clock.get("increment", 0))
    return max(10, min(share, left // 2))


class Bridge:
    """One bot account's games: see the module docstring."""

    def __init__(self, client: Any, engine: Any, variants: set[str],
                 accept_rated: bool) -> None:
        self.client = client  # qubic_cli.bot_client.BotClient
        self.engine = engine  # qubic_cli.bot_client.LineEngine
        self.variants = variants
        self.accept_rated = accept_rated
        self.games: dict[str, asyncio.Task[None]] = {}
        self.played: list[str] = []  # the games followed to their end, in order

    def acceptable(self, challenge: dict[str, Any]) -> bool:
        return challenge["variant"] in self.variants and (
            self.accept_rated or not challenge["rated"])

    async def serve(self) -> None:
        """Follow the event stream for ever, opening it again when it drops."""
        from qubic_cli.bot_client import ApiRefused

        wait = RECONNECT_FIRST
        while True:
            try:
                async for event in self.client.events():
                    wait = RECONNECT_FIRST
                    await self.on_event(event)
                log.warning("the event stream ended; opening it again")
            except ApiRefused as refused:
                if refused.status in (401, 403):
                    raise  # a token refused, a ban, not a bot: trying again changes nothing
                log.warning("the event stream was refused: %s", refused)
            except (OSError, TimeoutError, ValueError) as error:  # aiohttp's errors are OSErrors
                log.warning("the event stream dropped: %r", error)
            await asyncio.sleep(wait)
            wait = min(RECONNECT_MOST, wait * 2)

    async def on_event(self, event: dict[str, Any]) -> None:
        from qubic_cli.bot_client import ApiRefused

        kind = event.get("type")
        if kind == "challenge":
            challenge = event["challenge"]
            try:
                if self.acceptable(challenge):
                    await self.client.accept(challenge["id"])
                else:
                    await self.client.decline(challenge["id"])
            except ApiRefused as refused:  # withdrawn meanwhile, or the like
                log.info("challenge %s: %s", challenge["id"], refused)
        elif kind == "gameStart":
            game = event["game"]
            task = self.games.get(game["id"])
            if task is None or task.done():
                self.games[game["id"]] = asyncio.get_running_loop().create_task(
                    self.play(game["id"], game["color"]), name=f"bot-game-{game['id']}")

    async def play(self, game_id: str, color: str) -> None:
        """Follow the game to its end, moving on each turn; opened again if it drops."""
        from qubic_cli.bot_client import ApiRefused, EngineFailed

        wait = RECONNECT_FIRST
        while True:
            try:
                full: dict[str, Any] | None = None
                async for event in self.client.game(game_id):
                    if event["type"] == "gameFull":
                        full, state = event, event["state"]
                    elif event["type"] == "gameState":
                        state = event
                    else:
                        continue
                    assert full is not None
                    if state["status"] != "playing":
                        self.played.append(game_id)
                        return
                    if len(state["cells"]) % 2 == (0 if color == "x" else 1):
                        await self.move(game_id, full, state, color)
                log.warning("game %s: its stream ended; opening it again", game_id)
            except ApiRefused as refused:
                if refused.status in (401, 403, 404):
                    log.warning("game %s: %s", game_id, refused)
                    return
                log.warning("game %s: %s", game_id, refused)
            except EngineFailed as failed:
                log.error("game %s: %s", game_id, failed)
                return
            except (OSError, TimeoutError, ValueError) as error:
                log.warning("game %s: the stream dropped: %r", game_id, error)
            await asyncio.sleep(wait)
            wait = min(RECONNECT_MOST, wait * 2)

    async def move(self, game_id: str, full: dict[str, Any], state: dict[str, Any],
                   color: str) -> None:
        from qubic_cli.bot_client import ApiRefused

        millis = engine_millis(state, color, full["clock"])
        cell = await self.engine.ask(full["variant"], millis, state["moves"])
        try:
            await self.client.move(game_id, cell, len(state["cells"]))
        except ApiRefused as refused:  # the game moved on (over, flagged): its stream says
            log.warning("game %s: the move %s was refused: %s", game_id, cell, refused)

    async def close(self) -> None:
        for task in self.games.values():
            task.cancel()
        await asyncio.gather(*self.games.values(), return_exceptions=True)


async def bridge(url: str, token: str, command: str, variants: set[str],
                 accept_rated: bool) -> None:
    """Run the bridge until cancelled (or its token is refused)."""
    import aiohttp

    from qubic_cli.bot_client import BotClient, LineEngine

    engine = LineEngine(command)
    async with aiohttp.ClientSession() as http:
        bot = Bridge(BotClient(url, token, http), engine, variants, accept_rated)
        try:
            await bot.serve()
        finally:
            await bot.close()
            await engine.close()


def run(args: argparse.Namespace) -> int:
    try:
        config = settle(args, SETTINGS, NAME, checked)
    except SettingsError as error:
        return fail(NAME, str(error))
    from qubic_cli.bot_client import ApiRefused

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, task.cancel)
        await bridge(config["server"], config["token"], args.engine, config["variants"],
                     args.accept_rated)

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        return 0
    except ApiRefused as refused:
        return fail(NAME, f"the server refused the bot: {refused}")
    return 0
