"""The ``qubic`` command: one subcommand per module of this package.

Each subcommand module defines ``NAME``, ``HELP`` (one line), ``configure(parser)`` to add its
arguments and ``run(args) -> int`` (the exit code). Registering a subcommand is one line in
``SUBCOMMANDS``; a module's ``NAME`` is its own name. Only the subcommand named on the command
line is imported and configured, and modules import the engine inside ``run``, so parsing a
quick command such as ``qubic admin`` imports no engine (docs/benchmarks.md, *The admin CLI*).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

SUBCOMMANDS = (
    "qubic_cli.admin",
    "qubic_cli.arena",
    "qubic_cli.bot",
    "qubic_cli.analyse",
    "qubic_cli.config",
    "qubic_cli.db",
    "qubic_cli.play",
    "qubic_cli.prove",
    "qubic_cli.puzzles",
    "qubic_cli.serve",
    "qubic_cli.worker",
)

DESCRIPTION = """\
Qubic: 3D tic-tac-toe (4x4x4 by default; also 3x3x3, 5x5x5 and 2-D boards).
Cells are written <level><column><row>, e.g. 1a1 (cell 0) to 4d4 (cell 63).
"""

EPILOG = """\
Computer players are named by a spec: name or name:key=value,... such as
rubinoff:eval=eval2,depth=3,ab=off. `qubic <command> --help` lists a command's flags and the
players with their options.
"""


class _Version(argparse.Action):
    """``--version``: the installed build's version, read (from the package's metadata, a
    tenth of a second) only when asked for, not by every command."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0,
                         help=help or "show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from server.version import VERSION

        print(f"qubic {VERSION}")  # on stdout, as argparse's own version action does
        parser.exit()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every registered subcommand, or with ``only`` that one when it is one
    (another word, a typo, gets them all, so argparse lists the choices)."""
    parser = argparse.ArgumentParser(
        prog="qubic", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", metavar="command", required=True)
    names = {module_name.rpartition(".")[2]: module_name for module_name in SUBCOMMANDS}
    for module_name in [names[only]] if only in names else SUBCOMMANDS:
        module = importlib.import_module(module_name)
        sub = commands.add_parser(
            module.NAME, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.configure(sub)
        sub.set_defaults(run=module.run, parser=sub)
    return parser


def chosen(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option), or None."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run the chosen subcommand."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(only=chosen(argv)).parse_args(argv)
    args.argv = argv  # where a command layers its flags over the environment and a file
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        print("qubic: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
