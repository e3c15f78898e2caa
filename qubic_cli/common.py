"""What the subcommands share: argument types and the one-line error exit."""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Callable
from typing import TypeVar

USAGE_ERROR = 2

T = TypeVar("T", int, float)


def fail(command: str, message: str) -> int:
    """Print ``qubic <command>: error: <message>`` on stderr; returns the exit code 2."""
    print(f"qubic {command}: error: {message}", file=sys.stderr)
    return USAGE_ERROR


def missing_extra(module: str, extra: str = "cluster") -> str | None:
    """Why ``module`` cannot be used (it comes with an extra that is not installed), or None."""
    import importlib.util

    try:
        if importlib.util.find_spec(module) is not None:
            return None
    except ImportError:  # a finder that refuses it
        pass
    from server.version import install_extra

    return f"{module} is not installed: {install_extra(extra)}"


def variant_name(text: str) -> str:
    """An argparse type: a variant such as ``4x4x4`` or ``3x3``, normalised."""
    from engine import NotationError, variant

    try:
        return variant(text).name
    except NotationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _number(text: str, kind: Callable[[str], T], what: str) -> T:
    """``text`` read by ``kind`` (``int`` or ``float``); an ``ArgumentTypeError`` naming
    ``what`` was expected if it is not a number."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0-65535 (0: any free port)."""
    value = _number(text, int, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port (0-65535)")
    return value


def seconds(text: str) -> float:
    """An argparse type: a positive number of seconds."""
    value = _number(text, float, "a number of seconds")
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


def plies(text: str) -> int:
    """An argparse type: a search depth of at least one ply."""
    value = _number(text, int, "a whole number of plies")
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1 ply")
    return value


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """``--time`` and ``--depth``: the limit every decision is given."""
    parser.add_argument("--time", type=seconds, metavar="S",
                        help="seconds per move (searchers deepen iteratively within it)")
    parser.add_argument("--depth", type=plies, metavar="D",
                        help="plies of search, overriding the player's own depth option")


def players_help() -> str:
    """The registered players, their summaries and options, for a command's --help."""
    from engine.players import REGISTRY

    lines = ["players (a spec is name or name:key=value,key=value):"]
    for name in sorted(REGISTRY.players):
        cls = REGISTRY.players[name]
        lines.append(f"  {name:<12} {cls.summary}")
        for key, option in cls.options.items():
            default = option.default
            if isinstance(default, bool):
                default = "on" if default else "off"
            lines.append(f"  {'':<12}   {key + '=':<7} {option.help} (default {default})")
    for alias, spec in sorted(REGISTRY.aliases.items()):
        lines.append(f"  {alias:<12} = {spec}")
    return "\n".join(lines)


def actor() -> str:
    """Who pulls a lever from the command line, as the audit log names them."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def add_log_arguments(parser: argparse.ArgumentParser) -> None:
    """``--log-level`` and ``--log-format``, as a long-running command takes them."""
    parser.add_argument("--log-level", default="info",
                        choices=["debug", "info", "warning", "error"])
    parser.add_argument("--log-format", default="text", choices=["text", "json"],
                        help="text lines, or one JSON object a line")
